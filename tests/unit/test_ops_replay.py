"""The console's replay (``ops/replay.py``): each stored fact it checks, and each lie it catches.

A round is played by the heuristic bot through the engine and stored as the services
store it (round item, log items, score item, live state); then one fact at a time is
falsified and the verdict must name it (DEAL-4: the seed behind the commitment; the log
behind every state and score).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ops.replay import rounds_of, seat_view, verify
from services.common.constants import log_sk, round_sk, score_sk
from shared_engine import (
    action_to_wire,
    apply,
    commitment,
    dumps,
    parse_action,
    score_round,
    shuffled,
    start_round,
)
from shared_engine.bots import heuristic_policy
from shared_engine.tiles import NAMES

pytestmark = pytest.mark.unit

SEED = "ops-replay-1"


def played(stop_after: int | None = None) -> tuple[list[dict[str, Any]], str, tuple[int, int]]:
    """The items of a one-round table played to its end (or ``stop_after`` moves)."""
    state = start_round(SEED, dealer=4)
    items: list[dict[str, Any]] = [
        {
            "sk": {"S": round_sk(1)},
            "seed": {"S": SEED},
            "commitment": {"S": commitment(SEED, shuffled(SEED))},
            "dealer": {"N": "4"},
        }
    ]
    version = 1
    while not state.round_over and (stop_after is None or version <= stop_after):
        seat = state.turn
        action = heuristic_policy(state, seat)
        state, _ = apply(state, seat, action)
        items.append(
            {
                "sk": {"S": log_sk(1, version)},
                "seat": {"N": str(seat)},
                "action": {"S": json.dumps(action_to_wire(action))},
                "auto": {"BOOL": False},
                "at": {"N": str(1_800_000_000 + version)},
            }
        )
        version += 1
    totals = (0, 0)
    if state.round_over:
        a, b = score_round(state)
        totals = (a.total, b.total)
        result = {
            "scores": {
                t: {**s.as_dict(), "total": s.total} for t, s in zip("AB", (a, b), strict=True)
            },
            "totals": {"A": totals[0], "B": totals[1]},
        }
        items.append({"sk": {"S": score_sk(1)}, "result": {"S": json.dumps(result)}})
    return items, dumps(state), totals


def verdict(items: list[dict[str, Any]], state: str, totals: tuple[int, int]) -> list[str]:
    return verify(
        rounds_of(items), twos=True, live_state=state, live_round=1, totals=totals
    ).mismatches


def test_an_honest_history_verifies() -> None:
    items, state, totals = played()
    found = verify(rounds_of(items), twos=True, live_state=state, live_round=1, totals=totals)
    assert found.verified and found.rounds == 1 and found.moves == len(items) - 2


def test_a_commitment_the_seed_does_not_produce_is_reported() -> None:
    items, state, totals = played()
    items[0] = {**items[0], "commitment": {"S": "f" * 64}}
    assert verdict(items, state, totals) == [
        "round 1: the seed does not produce the published commitment"
    ]


def test_an_action_the_engine_refuses_is_reported_with_its_place() -> None:
    items, state, totals = played()
    first = json.loads(items[1]["action"]["S"])
    items[1] = {
        **items[1],
        "action": {"S": json.dumps({**first, "tile": "JK"})},
        "seat": {"N": "2"},
    }
    line, *consequences = verdict(items, state, totals)
    assert line.startswith("round 1, move 1 (version 1, seat 2): the engine refuses")
    assert consequences == [f"the table's totals are {totals}, the rounds add up to (0, 0)"]


def test_a_stored_score_the_log_does_not_give_is_reported() -> None:
    items, state, totals = played()
    result = json.loads(items[-1]["result"]["S"])
    result["scores"]["A"]["melded"] += 5
    items[-1] = {**items[-1], "result": {"S": json.dumps(result)}}
    (line,) = verdict(items, state, totals)
    assert line.startswith("round 1: team A scored")


def test_totals_that_are_not_the_rounds_sum_are_reported() -> None:
    items, state, totals = played()
    assert verdict(items, state, (totals[0] + 100, totals[1])) == [
        f"the table's totals are {(totals[0] + 100, totals[1])}, the rounds add up to {totals}"
    ]


def test_a_live_state_the_log_does_not_replay_to_is_reported() -> None:
    items, _, _ = played(stop_after=9)
    _, other, _ = played(stop_after=8)
    assert verdict(items, other, (0, 0)) == [
        "round 1: the live state is not what its log replays to"
    ]
    items, state, _ = played(stop_after=9)
    assert verdict(items, state, (0, 0)) == []


def test_a_seats_view_after_n_moves_holds_its_own_tiles_only() -> None:
    items, _, _ = played(stop_after=6)
    rounds = rounds_of(items)
    state = start_round(SEED, dealer=4)
    for item in items[1:5]:
        state, _ = apply(
            state, int(item["seat"]["N"]), parse_action(json.loads(item["action"]["S"]))
        )
    for seat in (1, 2, 3, 4):
        view = seat_view(rounds, twos=True, round_number=1, moves=4, seat=seat)
        assert sorted(view.hand) == sorted(NAMES[t] for t in state.hands[seat - 1])
        assert view.hand_sizes == {str(s): len(state.hands[s - 1]) for s in (1, 2, 3, 4)}
        assert view.revealed is None
    with pytest.raises(ValueError, match="has 6 moves"):
        seat_view(rounds, twos=True, round_number=1, moves=7, seat=1)
