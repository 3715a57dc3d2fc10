"""The replay (``services/common/replay.py``): each stored fact it checks, each lie it catches.

A round is played by the heuristic bot through the engine and kept as the services
keep it (round, log and score records, the live state); then one fact at a time is
falsified and the verdict must name it (DEAL-4: the seed behind the commitment; the log
behind every state and score).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from services.common.frozen import replace
from services.common.records import LogEntry, LoggedTurn, RoundRecord, ScoreRecord, TableHistory
from services.common.replay import rounds_of, seat_view, verify
from shared_engine import (
    action_to_wire,
    apply,
    commitment,
    pack,
    parse_action,
    score_round,
    shuffled,
    start_round,
)
from shared_engine.bots import heuristic_policy
from shared_engine.tiles import NAMES

pytestmark = pytest.mark.unit

SEED = "ops-replay-1"


@dataclass
class History:
    """A table's records, to falsify one at a time before they become a ``TableHistory``."""

    rounds: list[RoundRecord]
    logs: list[LogEntry]
    scores: list[ScoreRecord]
    playing: bool = False
    """Whether the last seat's turn is still being played (its moves not logged yet)."""

    def frozen(self) -> TableHistory:
        """The moves logged a turn an item, as the turn service logs them; the turn being
        played, if any, kept apart as the table item keeps it."""
        turns: list[list[LogEntry]] = []
        for entry in self.logs:
            if not turns or turns[-1][-1].seat != entry.seat:
                turns.append([])
            turns[-1].append(entry)
        playing = turns.pop() if self.playing and turns else []
        return TableHistory(
            tuple(self.rounds),
            tuple(LoggedTurn(1, tuple(moves)) for moves in turns),
            tuple(self.scores),
            tuple(playing),
        )


def played(stop_after: int | None = None) -> tuple[History, bytes, tuple[int, int]]:
    """The records of a one-round table played to its end (or ``stop_after`` moves)."""
    state = start_round(SEED, dealer=4)
    dealt = RoundRecord("t1", 1, SEED, commitment(SEED, shuffled(SEED)), dealer=4, at=0.0)
    logs = []
    version = 1
    while not state.round_over and (stop_after is None or version <= stop_after):
        seat = state.turn
        action = heuristic_policy(state, seat)
        state, _ = apply(state, seat, action)
        logs.append(LogEntry(1, version, seat, action_to_wire(action), False, 1.8e9 + version))
        version += 1
    totals = (0, 0)
    scores = []
    if state.round_over:
        a, b = score_round(state)
        totals = (a.total, b.total)
        result = {
            "scores": {
                t: {**s.as_dict(), "total": s.total} for t, s in zip("AB", (a, b), strict=True)
            },
            "totals": {"A": totals[0], "B": totals[1]},
        }
        scores.append(ScoreRecord("t1", 1, result))
    playing = bool(logs) and not state.round_over and state.turn == logs[-1].seat
    return History([dealt], logs, scores, playing), pack(state), totals


def verdict(history: History, state: bytes, totals: tuple[int, int]) -> list[str]:
    found = verify(
        rounds_of(history.frozen()),
        variant="twos-meld",
        live_state=state,
        live_round=1,
        totals=totals,
    )
    return found.mismatches


def test_an_honest_history_verifies() -> None:
    history, state, totals = played()
    found = verify(
        rounds_of(history.frozen()),
        variant="twos-meld",
        live_state=state,
        live_round=1,
        totals=totals,
    )
    assert found.verified and found.rounds == 1 and found.moves == len(history.logs)


def test_a_commitment_the_seed_does_not_produce_is_reported() -> None:
    history, state, totals = played()
    history.rounds[0] = replace(history.rounds[0], commitment="f" * 64)
    assert verdict(history, state, totals) == [
        "round 1: the seed does not produce the published commitment"
    ]


def test_an_action_the_engine_refuses_is_reported_with_its_place() -> None:
    history, state, totals = played()
    first = history.logs[0]
    history.logs[0] = replace(first, seat=2, action={**first.action, "tile": "JK"})
    line, *consequences = verdict(history, state, totals)
    assert line.startswith("round 1, move 1 (version 1, seat 2): the engine refuses")
    assert consequences == [f"the table's totals are {totals}, the rounds add up to (0, 0)"]


def test_a_stored_score_the_log_does_not_give_is_reported() -> None:
    history, state, totals = played()
    result = json.loads(json.dumps(history.scores[0].result))
    result["scores"]["A"]["melded"] += 5
    history.scores[0] = replace(history.scores[0], result=result)
    (line,) = verdict(history, state, totals)
    assert line.startswith("round 1: team A scored")


def test_totals_that_are_not_the_rounds_sum_are_reported() -> None:
    history, state, totals = played()
    assert verdict(history, state, (totals[0] + 100, totals[1])) == [
        f"the table's totals are {(totals[0] + 100, totals[1])}, the rounds add up to {totals}"
    ]


def test_a_live_state_the_log_does_not_replay_to_is_reported() -> None:
    history, _, _ = played(stop_after=9)
    _, other, _ = played(stop_after=8)
    assert verdict(history, other, (0, 0)) == [
        "round 1: the live state is not what its log replays to"
    ]
    history, state, _ = played(stop_after=9)
    assert verdict(history, state, (0, 0)) == []


def test_the_live_state_replays_from_the_logged_turns_and_the_turn_being_played() -> None:
    """Mid-turn, the turn's moves so far are on the table item, not in a log item yet: the
    replay takes them after the logged turns and meets the live state."""
    mid_turn = 0
    for moves in range(1, 16):
        history, state, _ = played(stop_after=moves)
        assert verdict(history, state, (0, 0)) == [], moves
        mid_turn += bool(history.frozen().playing)
        if history.playing:
            logged_whole = History(history.rounds, history.logs, history.scores)
            assert verdict(logged_whole, state, (0, 0)) == []
            history.logs.pop()
            assert verdict(history, state, (0, 0)) != [], "the turn's moves count"
    assert mid_turn > 3


def test_a_seats_view_after_n_moves_holds_its_own_tiles_only() -> None:
    history, _, _ = played(stop_after=6)
    rounds = rounds_of(history.frozen())
    state = start_round(SEED, dealer=4)
    for entry in history.logs[:4]:
        state, _ = apply(state, entry.seat, parse_action(entry.action))
    for seat in (1, 2, 3, 4):
        view = seat_view(rounds, variant="twos-meld", round_number=1, moves=4, seat=seat)
        assert sorted(view.hand) == sorted(NAMES[t] for t in state.hands[seat - 1])
        assert view.hand_sizes == {str(s): len(state.hands[s - 1]) for s in (1, 2, 3, 4)}
        assert view.revealed is None
    with pytest.raises(ValueError, match="has 6 moves"):
        seat_view(rounds, variant="twos-meld", round_number=1, moves=7, seat=1)
