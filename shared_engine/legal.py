"""``legal_actions``: a canonical, finite list of actions ``apply`` accepts.

Draws and discards are listed exhaustively. Melds are listed canonically: for
each rank, starting or extending with every natural of that rank held and each
allowed number of wilds (2s before jokers; in an opening, jokers first, since
they bring the threshold closer), plus, before the team has opened, one
greedy combined opening. Pickups are listed with the pair (all naturals of the
top's rank held), and before the opening with the wilds or extra melds needed
to reach the threshold. A seat to play always has at least one action, so
random play never locks.
"""

from __future__ import annotations

from shared_engine.actions import (
    DISCARDS,
    DRAW,
    JOKER_BUTTON,
    Action,
    Meld,
    MeldSpec,
    TakePile,
)
from shared_engine.errors import EngineError
from shared_engine.rules import CANASTA_SIZE, has_canasta, plan_melds
from shared_engine.state import RoundState, team_of
from shared_engine.tiles import JOKER, NATURAL_RANKS, VALUES

_TWOS_RANKS = (2, *NATURAL_RANKS)


def _groups(hand: tuple[int, ...]) -> list[list[int]]:
    groups: list[list[int]] = [[] for _ in range(14)]
    for t in hand:
        groups[t >> 2].append(t)
    return groups


def _wild_pool(groups: list[list[int]], rank: int) -> list[int]:
    """The wilds a meld of ``rank`` may take, cheapest first."""
    return groups[0] if rank == 2 else groups[2] + groups[0]


def _spec_options(
    rank: int, groups: list[list[int]], existing: tuple[int, ...]
) -> list[tuple[int, ...]]:
    """Tile sets for one rank that satisfy MELD-1..3 on their own."""
    naturals = groups[rank]
    wilds = _wild_pool(groups, rank)
    max_wilds = 2 if rank == 2 else 3
    options: list[tuple[int, ...]] = []
    if existing:
        e_nat = sum(1 for t in existing if t >> 2 == rank)
        e_wild = len(existing) - e_nat
        for k in (len(naturals), 0) if naturals else (0,):
            for j in range(len(wilds) + 1):
                if e_wild + j > max_wilds or e_wild + j >= e_nat + k:
                    break
                if k + j:
                    options.append((*naturals[:k], *wilds[:j]))
        return options
    k = len(naturals)
    if k < 2:
        return options
    for j in range(min(len(wilds), max_wilds, k - 1) + 1):
        if k + j >= 3:
            options.append((*naturals, *wilds[:j]))
    return options


def _greedy_opening(
    groups: list[list[int]], ranks: tuple[int, ...], value: int, threshold: int, skip: int
) -> list[MeldSpec]:
    """Extra new melds that bring an opening from ``value`` up to ``threshold``.

    Natural melds of three or more first (highest value first), then pairs
    with one wild, then more wilds on those melds. Returns [] if it cannot.
    """
    specs: list[list[int]] = []
    spec_ranks: list[int] = []
    starts = sorted(
        (r for r in ranks if r != skip and len(groups[r]) >= 3),
        key=lambda r: -sum(VALUES[t] for t in groups[r]),
    )
    for r in starts:
        if value >= threshold:
            break
        specs.append(list(groups[r]))
        spec_ranks.append(r)
        value += sum(VALUES[t] for t in groups[r])
    pool = sorted(
        groups[0] + ([] if 2 in spec_ranks or skip == 2 else groups[2]), key=lambda t: -VALUES[t]
    )
    pairs = [r for r in ranks if r not in (2, skip) and len(groups[r]) == 2]
    for r in pairs:
        if value >= threshold or not pool:
            break
        wild = pool.pop(0)
        specs.append([*groups[r], wild])
        spec_ranks.append(r)
        value += sum(VALUES[t] for t in groups[r]) + VALUES[wild]
    for spec, r in zip(specs, spec_ranks, strict=True):
        limit = 2 if r == 2 else 3
        while value < threshold and pool:
            naturals = sum(1 for t in spec if t >> 2 == r)
            if len(spec) - naturals >= min(limit, naturals - 1):
                break
            if r == 2 and pool[0] != JOKER:
                break
            wild = pool.pop(0)
            spec.append(wild)
            value += VALUES[wild]
    if value < threshold:
        return []
    return [MeldSpec(r, tuple(spec)) for r, spec in zip(spec_ranks, specs, strict=True)]


def _keeps_discard(left: int, canasta: bool) -> bool:
    return left >= 2 or (left == 1 and canasta)


def _meld_actions(state: RoundState, seat: int, hand: tuple[int, ...]) -> list[Action]:
    team = team_of(seat)
    melds = state.melds[team]
    groups = _groups(hand)
    ranks = _TWOS_RANKS if state.twos else NATURAL_RANKS
    canasta = has_canasta(melds)
    actions: list[Action] = []
    if state.opened[team]:
        for rank in ranks:
            existing = melds[rank]
            for tiles in _spec_options(rank, groups, existing):
                makes_canasta = canasta or len(existing) + len(tiles) >= CANASTA_SIZE
                if _keeps_discard(len(hand) - len(tiles), makes_canasta):
                    actions.append(Meld((MeldSpec(rank, tiles),)))
        return actions
    threshold = state.thresholds[team]
    for rank in ranks:
        for tiles in _spec_options(rank, groups, ()):
            if sum(VALUES[t] for t in tiles) >= threshold:
                _offer(actions, state, seat, Meld((MeldSpec(rank, tiles),)))
    combined = _greedy_opening(groups, ranks, 0, threshold, skip=-1)
    if len(combined) > 1:
        _offer(actions, state, seat, Meld(tuple(combined)))
    return actions


def _offer(actions: list[Action], state: RoundState, seat: int, action: Meld | TakePile) -> None:
    """Keep a candidate only if ``apply`` would accept it: one set of rules."""
    top = state.discard[-1] if isinstance(action, TakePile) else None
    if not isinstance(plan_melds(state, seat, action.melds, top), EngineError):
        actions.append(action)


def _pickups(state: RoundState, seat: int, hand: tuple[int, ...]) -> list[Action]:
    top = state.discard[-1]
    rank = top >> 2
    if top == JOKER or rank in (2, 3):
        return []
    groups = _groups(hand)
    naturals = groups[rank]
    if len(naturals) < 2:
        return []
    team = team_of(seat)
    actions: list[Action] = []
    _offer(actions, state, seat, TakePile((MeldSpec(rank, tuple(naturals)),)))
    if state.opened[team] or actions:
        return actions
    threshold = state.thresholds[team]
    wilds = _wild_pool(groups, rank)
    for j in range(1, min(len(wilds), 3, len(naturals)) + 1):
        _offer(actions, state, seat, TakePile((MeldSpec(rank, (*naturals, *wilds[-j:])),)))
    if not actions:
        base = sum(VALUES[t] for t in naturals) + VALUES[top]
        ranks = _TWOS_RANKS if state.twos else NATURAL_RANKS
        extra = _greedy_opening(groups, ranks, base, threshold, skip=rank)
        if extra:
            _offer(actions, state, seat, TakePile((MeldSpec(rank, tuple(naturals)), *extra)))
    return actions


def legal_actions(state: RoundState, seat: int) -> list[Action]:
    """Every draw and discard open to ``seat`` now, and the canonical melds and pickups."""
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
            and state.account_jokers[seat - 1] > 0
            and JOKER in state.stock
        ):
            actions.append(JOKER_BUTTON)
        if state.discard:
            actions.extend(_pickups(state, seat, hand))
        return actions
    actions = _meld_actions(state, seat, hand)
    if len(hand) > 1 or has_canasta(state.melds[team_of(seat)]):
        actions.extend(DISCARDS[t] for t in dict.fromkeys(hand))
    return actions
