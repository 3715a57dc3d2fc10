"""Profiles on the embedded AWS: history, stats and ratings added once per match (MATCH-3).

The table's records are written as the score service leaves them (``tests/scored.py``)
and ``MatchEnded`` is put on the bus as the relay does, twice, late and out of order:
the profile consumer, on its own queue with its own role, adds each match once, from
the records, whatever the event says. ``test_ledger_settlement`` plays a whole match
through the pipeline and checks its players' profiles too.
"""

from __future__ import annotations

import json
import time

import pytest

from infra.manifest import DELETE, GET, PUT, QUERY, UPDATE
from services.common.events import MatchEnded, SeatPlayer
from services.common.leaderboards import period_of
from services.common.profiles import ProfileStore
from services.common.protocol import LeaderboardMessage, ProfileMessage
from shared_engine import MatchMode
from tests.integration.harness import Harness
from tests.scored import scored_table

pytestmark = pytest.mark.integration

SCORE = "canasta.score"


def seats(players: list[str], bots: tuple[int, ...] = ()) -> dict[int, SeatPlayer]:
    return {
        seat: SeatPlayer(player_id=p, name=p.upper(), bot=seat in bots)
        for seat, p in enumerate(players, start=1)
    }


def end(
    hx: Harness,
    table_id: str,
    players: list[str],
    totals_by_round: list[tuple[int, int]],
    *,
    at: float,
    bots: tuple[int, ...] = (),
) -> None:
    scored_table(
        hx.store, table_id, MatchMode.ONE_ROUND, totals_by_round, seats(players, bots), at=at
    )


def publish_end(hx: Harness, table_id: str, players: list[str], winner: str = "A") -> None:
    detail = MatchEnded(
        table_id=table_id,
        mode=MatchMode.ONE_ROUND,
        stake=0,
        winner=winner,  # type: ignore[arg-type]
        totals={"A": 1, "B": 0},
        rounds_played=1,
        seats={str(s): p for s, p in seats(players).items()},  # type: ignore[misc]
    ).model_dump(mode="json")
    hx.publish("MatchEnded", detail, SCORE)


def test_matches_delivered_twice_late_and_out_of_order_are_each_added_once(
    harness: Harness,
) -> None:
    hx = harness
    players = ["r1", "r2", "r3", "r4"]
    profiles = ProfileStore(hx.storage)
    end(hx, "first", players, [(2500, 400)], at=1_800_000_000.0)
    end(hx, "second", players, [(100, 900)], at=1_800_000_900.0)
    publish_end(hx, "second", players)
    publish_end(hx, "first", players)
    publish_end(hx, "second", players)  # delivered twice
    hx.settle()
    once = {p: profiles.profile(p) for p in players}
    publish_end(hx, "first", players)  # redelivered later
    hx.settle()
    assert {p: profiles.profile(p) for p in players} == once

    r1 = once["r1"]
    assert r1 is not None and r1.rated == 2
    stats = r1.stats["one_round"]
    assert (stats.matches, stats.wins, stats.round_points) == (2, 1, 2600)
    history = profiles.history("r1")
    assert [(e.table_id, e.result, e.points) for e in history] == [
        ("second", "lost", -1000),
        ("first", "won", 1000),
    ], "newest first, whatever order the results arrived in"
    # Each rating update starts from the one added before it: here "second", which
    # arrived first (a rating follows the order results are added, not replayed).
    assert history[0].rating_before is None
    assert history[1].rating_before == history[0].rating_after
    assert history[1].rating_after == r1.ratings["one_round"]

    grants = hx.aws.iam.used
    tables = hx.aws.iam.arns.table
    profile_table = tables(hx.aws.settings.profiles_table)
    games = tables(hx.aws.settings.games_table)
    assert {
        ("profile-events", GET, profile_table),
        ("profile-events", PUT, profile_table),
        ("profile-events", UPDATE, profile_table),
        ("profile-events", DELETE, profile_table),
        ("profile-events", GET, games),
        ("profile-events", QUERY, games),
    } <= grants


def test_a_practice_match_is_listed_and_rates_nobody(harness: Harness) -> None:
    hx = harness
    players = ["q1", "q2", "q3", "bot:QQQQ-4"]
    profiles = ProfileStore(hx.storage)
    end(hx, "practice", players, [(2500, 400)], at=1_800_000_000.0, bots=(4,))
    publish_end(hx, "practice", players)
    hx.settle()
    assert [profiles.profile(p) for p in players] == [None] * 4
    (entry,) = profiles.history("q1")
    assert entry.practice and entry.rating_after is None and entry.points == 0


def test_a_forged_match_end_adds_nothing(harness: Harness) -> None:
    """The bus's ``MatchEnded`` names tables whose records end no match: one never
    played, one still playing."""
    hx = harness
    players = ["f1", "f2", "f3", "f4"]
    profiles = ProfileStore(hx.storage)
    publish_end(hx, "ghost", players)
    scored_table(
        hx.store, "live", MatchMode.ONE_ROUND, [(900, 100)], seats(players), status="playing"
    )
    publish_end(hx, "live", players)
    hx.settle()
    assert [profiles.profile(p) for p in players] == [None] * 4
    assert profiles.history("f1") == []


def test_a_player_asks_for_their_own_profile_and_gets_only_theirs(harness: Harness) -> None:
    hx = harness
    end(hx, "ours", ["o1", "o2", "o3", "o4"], [(2500, 400)], at=1_800_000_000.0)
    end(hx, "theirs", ["x1", "x2", "x3", "x4"], [(100, 900)], at=1_800_000_100.0)
    publish_end(hx, "ours", ["o1", "o2", "o3", "o4"])
    publish_end(hx, "theirs", ["x1", "x2", "x3", "x4"])
    hx.settle()
    conn = hx.connect("o2")
    assert conn is not None
    hx.send(conn, {"action": "profile", "cid": "me"})
    answer = hx.last(conn, "profile")
    assert answer is not None and answer["cid"] == "me"
    ProfileMessage.model_validate(answer)
    (match,) = answer["matches"]
    assert (match["table_id"], match["result"], match["partner"]) == ("ours", "lost", "O4")
    assert match["rounds"] == [[400, 2500]] and match["points"] == -1000
    assert answer["rated_matches"] == 1 and answer["stats"]["one_round"]["wins"] == 0
    assert answer["stats"]["one_round"]["rating"] == match["rating_after"]
    profiles = hx.aws.iam.arns.table(hx.aws.settings.profiles_table)
    assert {
        ("matchmaking-ws", GET, profiles),
        ("matchmaking-ws", QUERY, profiles),
    } <= hx.aws.iam.used


def test_a_player_reads_the_leaderboards_and_their_own_rank(harness: Harness) -> None:
    """Two matches ended just now: the all-time and this month's board hold the eight
    players, winners first; one who never played rated is on neither."""
    hx = harness
    now = time.time()
    end(hx, "l1", ["l1", "l2", "l3", "l4"], [(2500, 400)], at=now - 1)
    end(hx, "l2", ["l5", "l6", "l7", "l8"], [(2500, 400)], at=now)
    publish_end(hx, "l1", ["l1", "l2", "l3", "l4"])
    publish_end(hx, "l2", ["l5", "l6", "l7", "l8"])
    hx.settle()
    conn = hx.connect("l2")
    assert conn is not None
    hx.send(conn, {"action": "leaderboard", "mode": "one_round", "cid": "lb"})
    answer = hx.last(conn, "leaderboard")
    assert answer is not None and answer["cid"] == "lb"
    board = LeaderboardMessage.model_validate(answer)
    assert board.period == "all" and [s.rank for s in board.top] == list(range(1, 9))
    assert {s.name for s in board.top[:4]} == {"L1", "L3", "L5", "L7"}
    assert board.own is not None and board.own.you and board.own.rank >= 5
    assert [s.you for s in board.top].count(True) == 1
    assert "l2" not in json.dumps(answer["top"]), "players are named, never by id"

    newcomer = hx.connect("n1")
    assert newcomer is not None
    hx.send(newcomer, {"action": "leaderboard", "mode": "one_round", "period": "month"})
    month = LeaderboardMessage.model_validate(hx.last(newcomer, "leaderboard"))
    assert month.period == period_of(now) and len(month.top) == 8 and month.own is None
    profiles = hx.aws.iam.arns.table(hx.aws.settings.profiles_table)
    assert ("profile-events", UPDATE, profiles) in hx.aws.iam.used
