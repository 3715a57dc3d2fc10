"""``legal_actions``: a canonical, finite list of actions ``apply`` accepts.

Colours never matter to a meld (MELD-1), so the list speaks in counts: for a
rank, a *shape* is how many of its naturals held, how many 2s and how many
jokers a spec takes, and each shape is listed once with the first tiles of
each kind in the hand. The list holds

- every draw, joker button and discard open now;
- once the team has opened, every one-spec meld: each rank, each shape that
  MELD-1..3 allow on the team's meld of that rank;
- before the team has opened, every *meld-minimal* opening: a set of new
  melds, of any shapes, that reaches the threshold and from which no meld can
  be dropped without falling below it (one meld or several at once);
- every pickup: each shape of the spec of the top's rank (at least the pair
  from the hand), and before the opening each meld-minimal set of further
  new melds that brings it to the threshold (PILE-3).

Before the opening these sets can run into hundreds (many pairs, many wilds,
a high threshold). Above ``MAX_COMBINATIONS`` only the *tile-minimal* ones
are listed, those from which no single tile can be taken with the rest still
valid.

Why these bounds lose nothing: an accepted meld or pickup stays accepted when
whole melds are dropped from it while the rest reaches the threshold (fewer
tiles only keep more in the hand), and what was dropped can be laid afterwards
in the same turn, one spec per action, each valid because the meld it builds
is valid when complete (MELD-2 holds at every moment). Tiles likewise: a valid
opening or pickup, reduced tile by tile and meld by meld while it stays valid,
ends at a listed tile-minimal one. So every kind that has an accepted action
has a listed one, and every way of going out this turn (melding all but one
tile, then discarding it) is reachable through listed actions alone
(tests/property/test_move_generation.py checks both against brute force, with
and without the bound).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Final

from shared_engine.actions import (
    DISCARDS,
    DRAW,
    JOKER_BUTTON,
    Action,
    Meld,
    MeldSpec,
    TakePile,
)
from shared_engine.rules import CANASTA_SIZE, JOKER_BUTTON_COST, has_canasta
from shared_engine.state import RoundState, team_of
from shared_engine.tiles import JOKER, NATURAL_RANKS, VALUES, blocks_pickup, count_rank, rank_of

_TWOS_RANKS = (2, *NATURAL_RANKS)
_TWO_VALUE = VALUES[2 * 4]
_JOKER_VALUE = VALUES[JOKER]

Shape = tuple[int, int, int]
"""(naturals from the hand, 2s, jokers) that one spec takes."""

MAX_COMBINATIONS: Final = 40
"""Above this many openings (or pickups) before the team has opened, only the
tile-minimal ones are listed: enough for every kind and every going out."""


def _groups(hand: tuple[int, ...]) -> list[list[int]]:
    groups: list[list[int]] = [[] for _ in range(14)]
    for t in hand:
        groups[rank_of(t)].append(t)
    return groups


def _shapes(
    rank: int,
    held: int,
    *,
    twos: int,
    jokers: int,
    existing: tuple[int, ...],
    top: int,
    least: int,
) -> tuple[Shape, ...]:
    """Every shape of a spec of ``rank`` that MELD-1..3 allow.

    ``held``, ``twos`` and ``jokers`` are what the hand can give; ``top`` is 1
    when the pile's top tile joins the spec (PILE-1), and ``least`` the fewest
    naturals the hand must give (2 for the pickup's pair).
    """
    e_nat = 0
    for t in existing:
        if rank_of(t) == rank:
            e_nat += 1
    if rank == 2:
        twos = 0
    return _shape_table(
        (rank == 2, held, twos, jokers, e_nat, len(existing) - e_nat, bool(existing), top, least)
    )


@cache
def _shape_table(key: tuple[bool, int, int, int, int, int, bool, int, int]) -> tuple[Shape, ...]:
    """``_shapes`` in counts alone: a few hundred distinct arguments recur all game long,
    so each is worked out once (listing melds is most of a random move's time)."""
    two_rank, held, twos, jokers, e_nat, e_wild, extends, top, least = key
    limit = 2 if two_rank else 3
    fewest = 1 if extends else 3
    shapes: list[Shape] = []
    for k in range(least, held + 1):
        naturals = e_nat + k + top
        room = (limit if naturals > limit else naturals - 1) - e_wild
        for a2 in range((twos if twos < room else room) + 1):
            free = room - a2
            for aj in range((jokers if jokers < free else free) + 1):
                if k + top + a2 + aj >= fewest:
                    shapes.append((k, a2, aj))
    return tuple(shapes)


def _value(rank: int, shape: Shape) -> int:
    k, a2, aj = shape
    return k * VALUES[rank * 4] + a2 * _TWO_VALUE + aj * _JOKER_VALUE


def _specs(shapes: list[tuple[int, Shape]], groups: list[list[int]]) -> tuple[MeldSpec, ...]:
    """The specs of one action, each taking the next 2s and jokers not yet taken."""
    twos = jokers = 0
    specs = []
    for rank, (k, a2, aj) in shapes:
        if rank == 2:
            naturals, twos = groups[2][twos : twos + k], twos + k
        else:
            naturals = groups[rank][:k]
        tiles = (*naturals, *groups[2][twos : twos + a2], *groups[0][jokers : jokers + aj])
        twos, jokers = twos + a2, jokers + aj
        specs.append(MeldSpec(rank, tiles))
    return tuple(specs)


def _keeps_discard(left: int, canasta: bool) -> bool:
    """OUT-1 and OUT-2: a tile stays to discard, and a last one only with a canasta."""
    return left >= 2 or (left == 1 and canasta)


def _openings(
    groups: list[list[int]],
    ranks: tuple[int, ...],
    *,
    threshold: int,
    value: int,
    twos: int,
    jokers: int,
) -> Iterator[list[tuple[int, Shape]]]:
    """Meld-minimal sets of new melds that bring ``value`` up to ``threshold``.

    Depth first over the ranks in order; a set is complete as soon as it
    reaches the threshold (adding to it would make it non-minimal), and kept
    if none of its melds could be dropped.
    """
    chosen: list[tuple[int, Shape, int]] = []
    # What the naturals of ranks[i:] could add at most (2s count with the wilds):
    # a branch that cannot reach the threshold even so is not walked.
    reach = [0] * (len(ranks) + 1)
    for i in range(len(ranks) - 1, -1, -1):
        tiles = groups[ranks[i]] if ranks[i] != 2 else ()
        reach[i] = reach[i + 1] + (sum(VALUES[t] for t in tiles) if len(tiles) >= 2 else 0)

    def walk(i: int, value: int, twos: int, jokers: int) -> Iterator[list[tuple[int, Shape]]]:
        if value >= threshold:
            if all(value - v < threshold for _, _, v in chosen):
                yield [(r, s) for r, s, _ in chosen]
            return
        if value + reach[i] + twos * _TWO_VALUE + jokers * _JOKER_VALUE < threshold:
            return
        for j in range(i, len(ranks)):
            rank = ranks[j]
            held = len(groups[rank]) if rank != 2 else twos
            if held < 2:
                continue
            for shape in _shapes(rank, held, twos=twos, jokers=jokers, existing=(), top=0, least=2):
                k, a2, aj = shape
                v = _value(rank, shape)
                chosen.append((rank, shape, v))
                left_twos = twos - (k if rank == 2 else a2)
                yield from walk(j + 1, value + v, left_twos, jokers - aj)
                chosen.pop()

    yield from walk(0, value, twos, jokers)


def _tile_minimal(combo: list[tuple[int, Shape]], threshold: int, top: int | None) -> bool:
    """No single tile can leave this opening (or pickup) with the rest still valid.

    Every valid opening holds a listed one: drop melds while it stays valid, then
    tiles, then melds again, until neither can go; what remains is meld-minimal
    (so ``_openings`` yields it) and tile-minimal. Laying the rest afterwards
    loses no way of going out (module docstring).
    """
    top_rank = -1 if top is None else rank_of(top)
    value = sum(_value(r, s) for r, s in combo) + (0 if top is None else VALUES[top])
    for rank, (k, a2, aj) in combo:
        pile = 1 if rank == top_rank else 0
        limit = 2 if rank == 2 else 3
        fewer = ((k - 1, a2, aj, VALUES[rank * 4]), (k, a2 - 1, aj, _TWO_VALUE))
        for k2, b2, bj, lost in (*fewer, (k, a2, aj - 1, _JOKER_VALUE)):
            naturals, wilds = k2 + pile, b2 + bj
            if min(k2, b2, bj) < 0 or (pile and k2 < 2):
                continue
            valid = naturals + wilds >= 3 and wilds < naturals and wilds <= limit
            if valid and value - lost >= threshold:
                return False
    return True


def _bounded(
    combos: list[list[tuple[int, Shape]]], threshold: int, top: int | None = None
) -> list[list[tuple[int, Shape]]]:
    if len(combos) <= MAX_COMBINATIONS:
        return combos
    return [c for c in combos if _tile_minimal(c, threshold, top)]


def _meld_actions(
    state: RoundState, seat: int, hand: tuple[int, ...], canasta: bool
) -> list[Action]:
    team = team_of(seat)
    melds = state.melds[team]
    groups = _groups(hand)
    ranks = _TWOS_RANKS if state.twos else NATURAL_RANKS
    twos, jokers = len(groups[2]), len(groups[0])
    size = len(hand)
    actions: list[Action] = []
    if state.opened[team]:
        wilds = twos + jokers
        for rank in ranks:
            existing = melds[rank]
            naturals = groups[rank]
            held = len(naturals)
            if (held < 2) if not existing else not (held or wilds):
                continue
            grown = len(existing)
            for k, a2, aj in _shapes(
                rank, held, twos=twos, jokers=jokers, existing=existing, top=0, least=0
            ):
                added = k + a2 + aj
                if _keeps_discard(size - added, canasta or grown + added >= CANASTA_SIZE):
                    if rank == 2:
                        tiles = (*naturals[:k], *groups[0][:aj])
                    else:
                        tiles = (*naturals[:k], *groups[2][:a2], *groups[0][:aj])
                    actions.append(Meld((MeldSpec(rank, tiles),)))
        return actions
    threshold = state.thresholds[team]
    openings = [
        opening
        for opening in _openings(
            groups, ranks, threshold=threshold, value=0, twos=twos, jokers=jokers
        )
        if _keeps_discard(
            size - sum(sum(shape) for _, shape in opening),
            any(sum(shape) >= CANASTA_SIZE for _, shape in opening),
        )
    ]
    return [Meld(_specs(opening, groups)) for opening in _bounded(openings, threshold)]


def _pickups(state: RoundState, seat: int, hand: tuple[int, ...]) -> list[Action]:
    top = state.discard[-1]
    rank = rank_of(top)
    if blocks_pickup(top) or count_rank(hand, rank) < 2:
        return []
    groups = _groups(hand)
    held = len(groups[rank])
    team = team_of(seat)
    melds = state.melds[team]
    existing = melds[rank]
    twos, jokers = len(groups[2]), len(groups[0])
    gained = len(state.discard) - 1
    canasta = has_canasta(melds)
    opened = state.opened[team]
    ranks = tuple(r for r in (_TWOS_RANKS if state.twos else NATURAL_RANKS) if r != rank)
    threshold = state.thresholds[team]
    combos: list[list[tuple[int, Shape]]] = []
    for shape in _shapes(rank, held, twos=twos, jokers=jokers, existing=existing, top=1, least=2):
        added = sum(shape)
        size = len(existing) + added + 1
        if opened:
            extras: Iterator[list[tuple[int, Shape]]] = iter(([],))
        else:
            _, a2, aj = shape
            base = _value(rank, shape) + VALUES[top]
            extras = _openings(
                groups, ranks, threshold=threshold, value=base, twos=twos - a2, jokers=jokers - aj
            )
        for extra in extras:
            more = sum(sum(s) for _, s in extra)
            makes = size >= CANASTA_SIZE or any(sum(s) >= CANASTA_SIZE for _, s in extra)
            if _keeps_discard(len(hand) - added - more + gained, canasta or makes):
                combos.append([(rank, shape), *extra])
    if not opened:
        combos = _bounded(combos, threshold, top)
    return [TakePile(_specs(combo, groups)) for combo in combos]


def legal_actions(state: RoundState, seat: int) -> list[Action]:
    """Every draw, joker button and discard open to ``seat`` now, and the canonical melds
    and pickups (see the module docstring for why they cover every legal one)."""
    if seat != state.turn or state.phase == "round_over":
        return []
    hand = state.hands[seat - 1]
    phase = state.phase
    if phase == "first_discard":
        return [DISCARDS[t] for t in dict.fromkeys(hand)]
    if phase == "draw":
        actions: list[Action] = [DRAW] if state.stock else []
        if (
            not state.joker_used[seat - 1]
            and state.account_jokers[seat - 1] >= JOKER_BUTTON_COST
            and JOKER in state.stock
        ):
            actions.append(JOKER_BUTTON)
        if state.discard:
            actions.extend(_pickups(state, seat, hand))
        return actions
    canasta = has_canasta(state.melds[team_of(seat)])
    actions = _meld_actions(state, seat, hand, canasta)
    if len(hand) > 1 or canasta:
        actions.extend(DISCARDS[t] for t in dict.fromkeys(hand))
    return actions
