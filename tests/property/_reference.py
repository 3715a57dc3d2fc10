"""A brute-force enumerator of meld and pickup actions, independent of ``legal.py``.

Colours never matter to a meld, so an action is enumerated up to colour: for
every meldable rank, every count of its naturals in the hand, every count of
2s and every count of jokers, across all ranks at once (the hand's
sub-multisets with every way of placing its wilds). Each candidate is judged
with the reference model's ``meld_problem`` and the threshold, keep-a-discard
and canasta rules as RULES.md states them; ``apply`` then confirms what is
built. Nothing here is taken from ``shared_engine.legal``.
"""

from __future__ import annotations

from collections.abc import Iterator

from shared_engine import (
    Action,
    Discard,
    EngineError,
    Meld,
    MeldSpec,
    RoundState,
    TakePile,
    apply,
)
from shared_engine.actions import DRAW, JOKER_BUTTON

from ._model import CANASTA, JOKER, meld_problem, points, rank, team_of

Counts = dict[int, tuple[int, int, int]]
"""rank -> (naturals from the hand, 2s, jokers) in one action."""


def _by_rank(hand: tuple[int, ...]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for t in hand:
        out.setdefault(rank(t), []).append(t)
    return out


def _build(choice: Counts, groups: dict[int, list[int]]) -> tuple[MeldSpec, ...]:
    """Concrete tiles for a choice: the next unused 2s and jokers for each spec."""
    twos = list(groups.get(2, []))
    jokers = list(groups.get(JOKER, []))
    specs = []
    for r in sorted(choice):
        k, a2, aj = choice[r]
        if r == 2:
            naturals, twos = twos[:k], twos[k:]
        else:
            naturals = groups.get(r, [])[:k]
        wilds = twos[:a2] + jokers[:aj]
        twos, jokers = twos[a2:], jokers[aj:]
        specs.append(MeldSpec(r, tuple(naturals + wilds)))
    return tuple(specs)


def choices(
    state: RoundState, seat: int, top: int | None, spare: int | None = None
) -> Iterator[Counts]:
    """Every meld action (or pickup, when ``top`` is the pile's top) the rules accept.

    With ``spare``, only those that leave at most that many of the hand's
    tiles unmelded (a tile a rank leaves out can never be melded later in
    the walk, so the walk stops there).
    """
    hand = state.hands[seat - 1]
    team = team_of(seat)
    melds = state.melds[team]
    groups = _by_rank(hand)
    ranks = [r for r in (1, 2, *range(4, 14)) if state.twos or r != 2]
    opened = state.opened[team]
    gained = len(state.discard) - 1 if top is not None else 0
    top_rank = rank(top) if top is not None else -1
    n2, nj = len(groups.get(2, [])), len(groups.get(JOKER, []))
    chosen: Counts = {}

    def finish(used: int, value: int, canasta: bool) -> bool:
        if not chosen:
            return False
        if top is not None and chosen.get(top_rank, (0, 0, 0))[0] < 2:
            return False  # PILE-1: the pair from the hand
        if not opened and value < state.thresholds[team]:
            return False  # OPEN-1, PILE-3
        left = len(hand) - used + gained
        return left >= 2 or (left == 1 and (canasta or any(len(m) >= CANASTA for m in melds)))

    unmeldable = len(hand) - n2 - nj - sum(len(groups.get(r, [])) for r in ranks if r != 2)
    limit = len(hand) if spare is None else spare

    def walk(
        i: int, pools: tuple[int, int], tally: tuple[int, int], canasta: bool, left: int
    ) -> Iterator[Counts]:
        """Rank ``i`` onwards, with the 2s and jokers left and (tiles used, value) so far."""
        twos, jokers = pools
        used, value = tally
        if left > limit:
            return
        if i == len(ranks):
            if left + twos + jokers <= limit and finish(used, value, canasta):
                yield dict(chosen)
            return
        r = ranks[i]
        held = twos if r == 2 else len(groups.get(r, []))
        yield from walk(i + 1, pools, tally, canasta, left + (0 if r == 2 else held))
        for k in range(held + 1):
            for a2 in range(1 if r == 2 else twos + 1):
                for aj in range(jokers + 1):
                    if k + a2 + aj == 0:
                        continue
                    naturals = [r * 4] * k
                    wilds = [2 * 4] * a2 + [JOKER] * aj
                    extra = [top] if r == top_rank and top is not None else []
                    meld = list(melds[r]) + naturals + wilds + extra
                    if meld_problem(r, meld, state.twos):
                        continue
                    added = naturals + wilds + extra
                    chosen[r] = (k, a2, aj)
                    yield from walk(
                        i + 1,
                        (twos - (k if r == 2 else a2), jokers - aj),
                        (used + k + a2 + aj, value + sum(points(t) for t in added)),
                        canasta or len(meld) >= CANASTA,
                        left + (0 if r == 2 else held - k),
                    )
                    del chosen[r]

    yield from walk(0, (n2, nj), (0, 0), False, unmeldable)


def actions(
    state: RoundState, seat: int, top: int | None, spare: int | None = None
) -> Iterator[Action]:
    groups = _by_rank(state.hands[seat - 1])
    for choice in choices(state, seat, top, spare):
        specs = _build(choice, groups)
        yield TakePile(specs) if top is not None else Meld(specs)


def _accepted(state: RoundState, seat: int, action: Action) -> RoundState | None:
    try:
        return apply(state, seat, action)[0]
    except EngineError:
        return None


def kinds(state: RoundState, seat: int) -> set[str]:
    """The kinds of action the rules allow ``seat`` now, found without ``legal_actions``."""
    if state.phase == "round_over" or state.turn != seat:
        return set()
    found = set()
    for kind, action in (("draw", DRAW), ("joker_button", JOKER_BUTTON)):
        if _accepted(state, seat, action) is not None:
            found.add(kind)
    if any(_accepted(state, seat, Discard(t)) for t in set(state.hands[seat - 1])):
        found.add("discard")
    if state.phase == "play" and _first_accepted(state, seat, None):
        found.add("meld")
    top = _pickup_top(state) if state.phase == "draw" else None
    if top is not None and _first_accepted(state, seat, top):
        found.add("take_pile")
    return found


def _pickup_top(state: RoundState) -> int | None:
    """The pile's top when it can be taken at all: a natural (PILE-1, PILE-2)."""
    top = state.discard[-1] if state.discard else None
    return top if top is not None and top != JOKER and rank(top) not in (2, 3) else None


def _first_accepted(state: RoundState, seat: int, top: int | None) -> bool:
    first = next(actions(state, seat, top), None)
    if first is None:
        return False
    assert _accepted(state, seat, first) is not None, f"the reference built a refused {first}"
    return True


def goes_out_now(state: RoundState, seat: int) -> bool:
    """In ``play``: one meld action that leaves one tile, with a canasta, then its discard.

    Any turn's melds can be laid in one action instead (each meld is valid
    when complete, MELD-2; an opening only grows), and the enumeration below
    has every action, so this is every way of going out from here.
    """
    hand = state.hands[seat - 1]
    if len(hand) == 1:
        return any(len(m) >= CANASTA for m in state.melds[team_of(seat)])
    for action in actions(state, seat, None, spare=1):
        if sum(len(s.tiles) for s in action.melds) == len(hand) - 1:
            after = _accepted(state, seat, action)
            assert after is not None, f"the reference built a refused action {action}"
            return True
    return False


def can_go_out(state: RoundState, seat: int) -> bool:
    """Whether ``seat`` can go out within this turn, by any legal sequence."""
    if state.phase == "play":
        return goes_out_now(state, seat)
    if state.phase != "draw":
        return False
    starts: list[Action] = [DRAW, JOKER_BUTTON]
    top = _pickup_top(state)
    if top is not None:
        starts.extend(actions(state, seat, top))
    for action in starts:
        after = _accepted(state, seat, action)
        if after is not None and after.phase == "play" and goes_out_now(after, seat):
            return True
    return False
