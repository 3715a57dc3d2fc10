"""A whole three-round match played by four scripted clients, audited from the stored history."""

from __future__ import annotations

import json

import pytest

from services.common.replay import replay, rounds_of
from shared_engine import MatchMode, commitment, shuffled, unpack
from tests.integration.clients import play_match
from tests.integration.harness import Harness
from tests.integration.history import events_of, moves_of, outbox, round_of

pytestmark = pytest.mark.integration

PLAYERS = ["p1", "p2", "p3", "p4"]


def test_a_three_round_match(harness: Harness) -> None:
    conns = harness.start_table("t1", PLAYERS, MatchMode.THREE_ROUNDS)
    moves = play_match(harness, conns, "t1")
    assert moves > 0

    table = harness.table("t1")
    history = harness.history("t1")
    assert table.status == "finished"
    assert table.state is not None
    rounds_played = table.round
    assert rounds_played >= 3, "MATCH-1: three rounds (more only after a tie, MATCH-2)"

    # The audit replay of seeds and logs gives back every score and the match totals.
    rounds = replay(rounds_of(harness.store.history.records("t1")), variant="twos-meld")
    assert [r.round.number for r in rounds] == list(range(1, rounds_played + 1))
    assert all(r.commitment_ok for r in rounds), "DEAL-4: every shuffle matches its commitment"
    assert all(r.refused is None and r.final.round_over for r in rounds)
    totals = (sum(r.totals[0] for r in rounds), sum(r.totals[1] for r in rounds))
    assert totals == table.totals
    assert rounds[-1].final.ply == unpack(table.state).ply

    # One SCORE item per round, each with the running totals.
    scores = [i for i in history if i["sk"]["S"].startswith("SCORE#")]
    assert [round_of(i["sk"]["S"]) for i in scores] == list(range(1, rounds_played + 1))
    running = (0, 0)
    for replayed, item in zip(rounds, scores, strict=True):
        result = json.loads(item["result"]["S"])
        running = (running[0] + replayed.totals[0], running[1] + replayed.totals[1])
        assert (result["scores"]["A"]["total"], result["scores"]["B"]["total"]) == replayed.totals
        assert (result["totals"]["A"], result["totals"]["B"]) == running

    # The log holds every applied action once, numbered 1..ply in each round, in one item
    # per turn keyed by its last move; only the round's last item publishes: RoundEnded.
    for replayed in rounds:
        number = replayed.round.number
        logs = [i for i in history if i["sk"]["S"].startswith(f"LOG#{number:04d}#")]
        moves = moves_of(history, number)
        assert [m.ply for m in moves] == list(range(1, replayed.final.ply + 1))
        turns = [json.loads(i["moves"]["S"]) for i in logs]
        assert [int(i["sk"]["S"].split("#")[2]) for i in logs] == [t[-1]["ply"] for t in turns]
        assert all(len({m["public"]["seat"] for m in turn}) == 1 for turn in turns), (
            "a turn an item"
        )
        assert [outbox(i) for i in logs[:-1]] == [[]] * (len(logs) - 1)
        (ended,) = outbox(logs[-1])
        assert (ended["detail-type"], ended["detail"]["round"]) == ("RoundEnded", number)

    # Every client got each round's result, whose revealed seed matches the commitment
    # published when the round started, and the same match result.
    started = {e["round"]: e["commitment"] for e in events_of(history, "RoundStarted")}
    winner = "A" if table.totals[0] > table.totals[1] else "B"
    for seat, conn in conns.items():
        results = [m for m in harness.received(conn) if m["type"] == "round_result"]
        assert [m["round"] for m in results] == list(range(1, rounds_played + 1))
        for message in results:
            seed = message["seed"]
            assert message["commitment"] == started[message["round"]]
            assert commitment(seed, shuffled(seed)) == message["commitment"]
        finals = [m for m in harness.received(conn) if m["type"] == "match_result"]
        assert len(finals) == 1, f"seat {seat} got {len(finals)} match results"
        final = finals[0]
        assert (final["totals"]["A"], final["totals"]["B"]) == totals
        assert final["winner"] == winner
        assert final["rounds_played"] == rounds_played
        # MATCH-3: winners gain and losers lose 1,000 per round played; zero-sum.
        rewards = final["rewards"]
        assert sum(rewards.values()) == 0
        amount = 1000 * rounds_played
        winners = ("1", "3") if winner == "A" else ("2", "4")
        assert rewards == {s: amount if s in winners else -amount for s in ("1", "2", "3", "4")}

    # The MatchEnded event agrees with what the clients were told.
    (ended_event,) = events_of(history, "MatchEnded")
    assert ended_event["winner"] == winner
    assert (ended_event["totals"]["A"], ended_event["totals"]["B"]) == totals
    assert ended_event["rounds_played"] == rounds_played
