"""``legal_actions`` against brute force: no kind of move and no way of going out is lost.

Positions come from seeded random and heuristic play (both variants, every
threshold) and from a generator built to stress openings, pickups, wild
counts and the keep-a-discard rule. For each one: every listed action is
accepted by ``apply``; the kinds listed are exactly the kinds the brute-force
enumerator (``_reference``) finds; and going out this turn is reachable
through listed actions alone exactly when the enumerator finds a way. The
same holds with the bound for long lists (tile-minimal openings and pickups
only) applied to every list.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

import shared_engine.legal
from shared_engine.actions import Action, Discard, Meld, TakePile, action_to_wire
from shared_engine.bots import heuristic_policy
from shared_engine.deal import start_round
from shared_engine.legal import legal_actions
from shared_engine.rules import apply
from shared_engine.state import EMPTY_MELDS, VARIANTS, RoundState, Variant, has_twos_meld, new_state
from shared_engine.tiles import FULL_SET

from . import _reference as ref
from ._model import JOKER, meld_problem, rank, team_of
from ._support import MATCH_TOTALS, examples

pytestmark = pytest.mark.property

NATURALS = (1, *range(4, 14))


def kind(action: Action) -> str:
    return str(action_to_wire(action)["type"])


def _size(action: Action) -> int:
    return sum(len(s.tiles) for s in action.melds) if isinstance(action, (Meld, TakePile)) else 0


def listed_go_out(state: RoundState, seat: int, seen: set[object] | None = None) -> bool:
    """Going out this turn through listed actions only.

    The search follows only actions after which the enumerator still sees a
    way out (from any other position no listed path can exist either), so a
    "no" here means that some position with a way out lists no action that
    keeps one.
    """
    seen = set() if seen is None else seen
    hand = state.hands[seat - 1]
    for action in sorted(legal_actions(state, seat), key=_size, reverse=True):
        if isinstance(action, Discard):
            if len(hand) == 1:
                return True
            continue
        after = apply(state, seat, action)[0]
        if after.phase != "play" or not ref.goes_out_now(after, seat):
            continue
        team = team_of(seat)
        key = (after.hands[seat - 1], after.melds[team], after.opened[team])
        if key not in seen:
            seen.add(key)
            if listed_go_out(after, seat, seen):
                return True
    return False


# --- positions --------------------------------------------------------------------


def played(rounds: int, seed: int) -> Iterator[RoundState]:
    """Every position of seeded rounds, half heuristic and half random play."""
    rng = random.Random(seed)
    for i in range(rounds):
        state = start_round(
            f"movegen-{seed}-{i}",
            variant=VARIANTS[i % 2],
            dealer=rng.randint(1, 4),
            match_scores=(rng.choice(MATCH_TOTALS), rng.choice(MATCH_TOTALS)),
            account_jokers=tuple(rng.randint(0, 1) for _ in range(4)),
        )
        heuristic = rng.random() < 0.5
        while state.phase != "round_over":
            seat = state.turn
            yield state
            legal = legal_actions(state, seat)
            if heuristic or rng.random() < 0.3:
                action = heuristic_policy(state, seat)
            else:
                melds = [a for a in legal if isinstance(a, (Meld, TakePile))]
                action = rng.choice(melds if melds and rng.random() < 0.5 else legal)
            state = apply(state, seat, action)[0]


class _Pool:
    """The 106 tiles, handed out without replacement so no tile exists three times."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.tiles = list(FULL_SET)
        rng.shuffle(self.tiles)

    def take(self, wanted: int) -> int | None:
        """A tile of rank ``wanted`` (0 for a joker), or None if none is left."""
        for i, t in enumerate(self.tiles):
            if (t == JOKER) if wanted == 0 else (t != JOKER and rank(t) == wanted):
                return self.tiles.pop(i)
        return None

    def any(self) -> int:
        return self.tiles.pop()


def _team_meld(pool: _Pool, r: int, twos: bool, size: int, wild_share: float) -> tuple[int, ...]:
    while True:
        meld: list[int] = []
        for _ in range(size):
            wild = pool.rng.random() < wild_share
            got = pool.take(pool.rng.choice((0, 2)) if wild else r)
            if got is not None:
                meld.append(got)
        if len(meld) >= 3 and not meld_problem(r, meld, twos):
            return tuple(sorted(meld))
        pool.tiles.extend(meld)
        size, wild_share = max(3, size), wild_share / 2


def adversarial(rng: random.Random) -> RoundState:
    """A position built around a few ranks held in numbers, wilds, and a matching top."""
    pool = _Pool(rng)
    variant: Variant = "twos-meld" if rng.random() < 0.5 else "classic"
    twos = has_twos_meld(variant)
    focus = rng.sample(NATURALS, rng.randint(1, 4))
    team = rng.randint(0, 1)
    seat = rng.choice((1, 3) if team == 0 else (2, 4))
    opened = rng.random() < 0.45
    melds: list[tuple[int, ...]] = list(EMPTY_MELDS)
    if opened:
        for r in rng.sample([*focus, *NATURALS, *((2,) if twos else ())], rng.randint(1, 3)):
            if not melds[r]:
                size = rng.choice((3, 4, 5, 6, 6, 7, 8))
                melds[r] = _team_meld(pool, r, twos, size, 0.25 if r != 2 else 0.0)
    hand: list[int] = []
    for _ in range(rng.randint(1, 16)):
        roll = rng.random()
        wanted = rng.choice(focus) if roll < 0.55 else rng.choice((0, 2)) if roll < 0.75 else None
        got = pool.take(wanted) if wanted is not None else pool.any()
        hand.append(got if got is not None else pool.any())
    hand = [t for t in hand if t not in (12, 13)] or [pool.take(rng.choice(focus)) or pool.any()]
    phase = rng.choice(("draw", "draw", "play"))
    discard: list[int] = [pool.any() for _ in range(rng.randint(0, 6))]
    if phase == "draw" and rng.random() < 0.85:
        top = pool.take(rng.choice(focus)) if rng.random() < 0.8 else pool.any()
        discard.append(top if top is not None else pool.any())
    stock = tuple(pool.tiles[: rng.randint(1, 12)])
    if rng.random() < 0.3 and JOKER not in stock:
        joker = pool.take(0)
        stock = (*stock, joker) if joker is not None else stock
    thresholds = [rng.choice((15, 50, 90, 120, 150)) for _ in range(2)]
    hands: list[tuple[int, ...]] = [(), (), (), ()]
    hands[seat - 1] = tuple(hand)
    both = [EMPTY_MELDS, EMPTY_MELDS]
    both[team] = tuple(melds)
    opened_both = [False, False]
    opened_both[team] = opened
    return new_state(
        variant=variant,
        turn=seat,
        phase=phase,
        hands=tuple(hands),
        stock=stock,
        discard=tuple(discard),
        melds=(both[0], both[1]),
        opened=(opened_both[0], opened_both[1]),
        thresholds=(thresholds[0], thresholds[1]),
        account_jokers=tuple(rng.randint(0, 1) for _ in range(4)),
        joker_used=tuple(rng.random() < 0.2 for _ in range(4)),
    )


def built(count: int, seed: int) -> Iterator[RoundState]:
    rng = random.Random(seed)
    for _ in range(count):
        yield adversarial(rng)


# --- the comparison ---------------------------------------------------------------


def compare(state: RoundState) -> list[str]:
    """What ``legal_actions`` gets wrong in ``state``, as readable lines (none expected)."""
    seat = state.turn
    legal = legal_actions(state, seat)
    problems = []
    for action in legal:
        try:
            apply(state, seat, action)
        except Exception as exc:
            problems.append(f"listed but refused: {action} ({exc})")
    listed = {kind(a) for a in legal}
    expected = ref.kinds(state, seat)
    if listed != expected:
        problems.append(f"kinds listed {sorted(listed)}, legal {sorted(expected)}")
    # When the enumerator finds no way out, none exists, and the listed actions
    # (all accepted, checked above) cannot make one: only a "yes" needs a search.
    if not problems and ref.can_go_out(state, seat) and not listed_go_out(state, seat):
        problems.append("going out is possible but not through the listed actions")
    return [f"{p} in {state!r}" for p in problems]


def _check(states: Iterator[RoundState]) -> int:
    tried = 0
    for state in states:
        problems = compare(state)
        assert not problems, "\n".join(problems[:3])
        tried += 1
    return tried


def test_played_positions_list_every_kind_and_every_going_out() -> None:
    """TURN-1, OPEN-1, PILE-1..3, OUT-1/2 over positions of seeded play."""
    assert _check(played(examples(40), seed=12)) > 1000


def test_built_positions_list_every_kind_and_every_going_out() -> None:
    """Openings at 15..150, pickups, wilds and going out, in positions built to stress them."""
    assert _check(built(examples(3000), seed=12)) == examples(3000)


def test_the_tile_minimal_bound_alone_loses_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound that long lists fall back to, applied to every list: still every kind and
    every going out (OPEN-1, PILE-3, OUT-1)."""
    monkeypatch.setattr(shared_engine.legal, "MAX_COMBINATIONS", 0)
    assert _check(built(examples(1500), seed=13)) == examples(1500)
    assert _check(played(examples(15), seed=13)) > 300
