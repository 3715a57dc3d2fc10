"""Round parameters, seeded random play and the invariants every position keeps."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from hypothesis import settings
from hypothesis import strategies as st

from shared_engine import (
    VARIANTS,
    Action,
    Meld,
    RoundState,
    TakePile,
    Variant,
    apply,
    legal_actions,
    start_round,
)
from shared_engine.events import Event
from shared_engine.tiles import FULL_SET, NAMES, TILE_KINDS

from ._model import BONUS_THREES, JOKER, meld_problem, rank, team_of

MAX_ACTIONS = 2000
"""No round may need more actions than this (no soft-lock, property 2)."""

FULL = Counter(FULL_SET)
ALL_NAMES = tuple(NAMES[t] for t in TILE_KINDS)
MATCH_TOTALS = (-500, -1, 0, 1499, 1500, 2999, 3000, 6999, 7000, 8000)
"""Team totals around every OPEN-2 boundary, so every threshold is played."""


def examples(n: int) -> int:
    """``n`` examples under the default profile (max_examples 100), scaled with the profile
    chosen by HYPOTHESIS_PROFILE (``deep``: 20 times as many)."""
    return max(1, n * settings.default.max_examples // 100)


@dataclass(frozen=True)
class RoundParams:
    """Everything that fixes a seeded round and the random choices made in it."""

    seed: str
    variant: Variant
    dealer: int
    match_scores: tuple[int, int]
    account_jokers: tuple[int, int, int, int]
    choices: int
    eagerness: float
    """How often the player picks a meld or pickup when one is listed."""

    def start(self) -> RoundState:
        return start_round(
            self.seed,
            variant=self.variant,
            dealer=self.dealer,
            match_scores=self.match_scores,
            account_jokers=self.account_jokers,
        )


SEED_PREFIX = "prop-seed-"
"""Seeds carry a prefix that cannot occur by chance in a view (property 6)."""

seeds = st.one_of(st.text(max_size=16), st.integers().map(str)).map(SEED_PREFIX.__add__)

round_params = st.builds(
    RoundParams,
    seed=seeds,
    variant=st.sampled_from(VARIANTS),
    dealer=st.integers(1, 4),
    match_scores=st.tuples(st.sampled_from(MATCH_TOTALS), st.sampled_from(MATCH_TOTALS)),
    account_jokers=st.tuples(*[st.integers(0, 2)] * 4),
    choices=st.integers(0, 2**32 - 1),
    eagerness=st.sampled_from([0.0, 0.5, 0.9]),
)


def choose(actions: list[Action], rng: random.Random, eagerness: float) -> Action:
    melds = [a for a in actions if isinstance(a, (Meld, TakePile))]
    if melds and rng.random() < eagerness:
        return rng.choice(melds)
    return rng.choice(actions)


@dataclass(frozen=True)
class Step:
    """One applied action: the position before, what was listed and chosen, what followed."""

    index: int
    state: RoundState
    seat: int
    legal: list[Action]
    action: Action
    after: RoundState
    events: list[Event]


def play(params: RoundParams) -> Iterator[Step]:
    """Play a round with seeded random choices among the legal actions, step by step."""
    return play_from(params.start(), random.Random(params.choices), params.eagerness)


def play_from(state: RoundState, rng: random.Random, eagerness: float) -> Iterator[Step]:
    """Random play from ``state`` to the end of the round."""
    for index in range(MAX_ACTIONS):
        if state.phase == "round_over":
            return
        seat = state.turn
        legal = legal_actions(state, seat)
        assert legal, f"soft-lock: seat {seat} has no legal action in {state!r}"
        action = choose(legal, rng, eagerness)
        after, events = apply(state, seat, action)
        yield Step(index, state, seat, legal, action, after, events)
        state = after
    raise AssertionError(f"the round did not end within {MAX_ACTIONS} actions")


def final_state(params: RoundParams) -> RoundState:
    state = params.start()
    for step in play(params):
        state = step.after
    return state


# --- invariants -------------------------------------------------------------------


def all_tiles(state: RoundState) -> Counter[int]:
    tiles: Counter[int] = Counter(state.stock)
    tiles.update(state.discard)
    for hand in state.hands:
        tiles.update(hand)
    for team in state.melds:
        for meld in team:
            tiles.update(meld)
    for threes in state.bonus_threes:
        tiles.update(threes)
    return tiles


def check_tiles(state: RoundState) -> None:
    """DEAL-1: all 106 tiles, each exactly where one copy can be; no bonus three in a hand."""
    assert state.tile_count() == 106
    assert all_tiles(state) == FULL
    for hand in state.hands:
        assert not BONUS_THREES & set(hand), "DEAL-3/TURN-2: a bonus three stayed in a hand"
    for team, threes in enumerate(state.bonus_threes):
        assert set(threes) <= BONUS_THREES, f"team {team} has a non-bonus tile among its threes"


def check_melds(state: RoundState) -> None:
    """MELD-1/2/3/4/6 on every meld, and a team is open exactly when it has melded."""
    for team, slots in enumerate(state.melds):
        assert len(slots) == 14
        for meld_rank, meld in enumerate(slots):
            if not meld:
                continue
            assert meld_rank not in (0, 3), f"a meld in slot {meld_rank}: {meld}"
            problem = meld_problem(meld_rank, meld, state.twos)
            assert problem is None, f"team {team} meld {[NAMES[t] for t in meld]}: {problem}"
            if meld_rank == 2:
                jokers = meld.count(JOKER)
                assert jokers <= 2 and jokers < len(meld) - jokers, "MELD-3"
            else:
                wilds = sum(1 for t in meld if t == JOKER or rank(t) == 2)
                assert wilds <= 3 and len(meld) - wilds > wilds, "MELD-2"
        # MELD-4: one meld per rank; the ranks of the melds are those of their slots.
        ranks = [r for r, m in enumerate(slots) if m]
        assert len(ranks) == len(set(ranks))
        assert state.opened[team] == bool(ranks), "OPEN-1: opened exactly when melded"


def check_meld_growth(before: RoundState, after: RoundState) -> None:
    """MELD-5: a meld only grows; melded tiles never leave, and nobody adds to the opponents'."""
    for team in (0, 1):
        for meld_rank in range(14):
            old = Counter(before.melds[team][meld_rank])
            new = Counter(after.melds[team][meld_rank])
            assert old <= new, f"team {team}'s meld of {meld_rank} lost tiles"
        if before.opened[team]:
            assert after.opened[team]


def check_position(state: RoundState) -> None:
    check_tiles(state)
    check_melds(state)


def check_transition(before: RoundState, seat: int, after: RoundState) -> None:
    check_position(after)
    check_meld_growth(before, after)
    other = 1 - team_of(seat)
    assert after.melds[other] == before.melds[other], "MELD-4: a seat changed opponents' melds"
    assert after.ply == before.ply + 1
