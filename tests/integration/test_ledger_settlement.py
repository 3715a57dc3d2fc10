"""The ledger on the embedded AWS: settlement (MATCH-3, MATCH-4), refunds, the joker button
(JOKER-1) and the API of the platform's other modes.

One match is played to its end through the whole pipeline (queue, state
machine, deal, turns, score, ledger, release); the other cases write the table's
records as the score service leaves them (``tests/scored.py``), publish
``MatchEnded`` / ``TableAborted`` on the bus as the relay does, and let the
platform deliver them: what is booked is what the records say, whatever the
event says. Every test ends by reconciling every account.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from infra.manifest import GET, QUERY
from local.dispatcher import LambdaContext
from services.common.events import MatchEnded, SeatPlayer, TableAborted
from services.common.identities import host_bot_id, player_id_of
from services.common.ledger import Balance, Ledger, Posting, escrow, escrow_account
from services.common.profiles import ProfileStore
from services.common.records import Status, shard_of
from services.common.telemetry import RecordingTelemetry
from services.ledger import handler as ledger_handler
from services.ledger.app import LedgerService
from shared_engine import MatchMode, apply, parse_action, score_round, start_round, to_json, unpack
from shared_engine.tiles import JOKER
from shared_engine.view import player_view
from tests.integration.clients import choose, play_match
from tests.integration.harness import Harness
from tests.integration.machine import executions, local_harness, settle_until
from tests.scored import score_rounds, scored_table
from tests.services.fakes import FakeClock, RecordingPublisher

pytestmark = pytest.mark.integration

SCORE = "canasta.score"


# --- fixtures and helpers ------------------------------------------------------------


@pytest.fixture
def hx(moto_url: str) -> Iterator[Harness]:
    with local_harness(moto_url) as harness:
        yield harness
        assert_books_balance(harness)


def book_of(harness: Harness) -> Ledger:
    return Ledger(harness.storage)


def fund(harness: Harness, player_id: str, points: int = 0, jokers: int = 0) -> None:
    book_of(harness).book(
        [Posting(player_id, "welcome", "welcome", points=points, jokers=jokers)], time.time()
    )


def accounts(harness: Harness) -> list[str]:
    items = harness.aws.client("dynamodb").scan(
        TableName=harness.aws.settings.ledger_table, ConsistentRead=True
    )["Items"]
    return sorted(i["pk"]["S"].removeprefix("ACCOUNT#") for i in items if i["sk"]["S"] == "BALANCE")


def assert_books_balance(harness: Harness) -> None:
    """Every account's balance is the sum of its entries."""
    book = book_of(harness)
    for account in accounts(harness):
        stored, summed = book.reconcile(account)
        assert stored == summed, f"{account}: balance {stored} but entries sum to {summed}"


def match_entries(harness: Harness, table_id: str) -> list[tuple[str, str, int]]:
    """(account, entry key, points) of every entry booked for ``table_id``.

    Leaves out the match's closing marker (account ``match:<table>``, no points):
    ``test_the_end_of_a_match_is_marked_once`` looks at it.
    """
    book = book_of(harness)
    found = []
    for account in accounts(harness):
        if account.startswith("match:"):
            continue
        for entry in book.entries(account):
            if entry.get("match") == table_id:
                found.append((account, str(entry["sk"]), int(entry["points"])))
    return found


def points(harness: Harness, *players: str) -> dict[str, int]:
    book = book_of(harness)
    return {p: book.balance(p).points for p in players}


def seats_of(players: list[str], bots: tuple[int, ...] = ()) -> dict[str, SeatPlayer]:
    return {
        str(seat): SeatPlayer(player_id=p, name=p, bot=seat in bots)
        for seat, p in enumerate(players, start=1)
    }


def ended(
    table_id: str,
    players: list[str],
    *,
    mode: MatchMode = MatchMode.ONE_ROUND,
    winner: str = "A",
    rounds: int = 1,
    stake: int = 0,
    totals: tuple[int, int] | None = None,
    bots: tuple[int, ...] = (),
) -> dict[str, Any]:
    a, b = totals or ((1200, 300) if winner == "A" else (300, 1200))
    return MatchEnded(
        table_id=table_id,
        mode=mode,
        stake=stake,
        winner=winner,  # type: ignore[arg-type]
        totals={"A": a, "B": b},
        rounds_played=rounds,
        seats=seats_of(players, bots),  # type: ignore[arg-type]
    ).model_dump(mode="json")


def aborted(table_id: str, players: list[str], *, mode: MatchMode, stake: int) -> dict[str, Any]:
    return TableAborted(
        table_id=table_id,
        mode=mode,
        stake=stake,
        seats=seats_of(players),  # type: ignore[arg-type]
        reason="every player left",
    ).model_dump(mode="json")


def seated(players: list[str], bots: tuple[int, ...] = ()) -> dict[int, SeatPlayer]:
    return {int(seat): player for seat, player in seats_of(players, bots).items()}


def end_table(
    harness: Harness,
    table_id: str,
    players: list[str],
    totals_by_round: list[tuple[int, int]],
    *,
    mode: MatchMode = MatchMode.ONE_ROUND,
    stake: int = 0,
    status: Status = "finished",
    bots: tuple[int, ...] = (),
) -> None:
    """The table's records as the score service leaves them when its match ends (or is
    aborted, or goes on): the facts the ledger books from."""
    seats = seated(players, bots)
    scored_table(harness.store, table_id, mode, totals_by_round, seats, stake=stake, status=status)


def hold_stakes(harness: Harness, table_id: str, players: list[str], stake: int) -> None:
    """Fund the players and move their stakes to escrow, as forming an arena table does."""
    for player in players:
        fund(harness, player, 1000)
    seats = {i: SeatPlayer(player_id=p, name=p) for i, p in enumerate(players, start=1)}
    book_of(harness).book(escrow(table_id, seats, stake), time.time())


def connect(harness: Harness, player_id: str) -> str:
    connection = harness.connect(player_id)
    assert connection is not None
    return connection


def player_item(harness: Harness, player_id: str) -> dict[str, Any]:
    return dict(
        harness.aws.client("dynamodb")
        .get_item(
            TableName=harness.aws.settings.players_table,
            Key={"player_id": {"S": player_id}},
            ConsistentRead=True,
        )
        .get("Item", {})
    )


def queue_and_seat(
    harness: Harness, players: list[str], **queue: Any
) -> tuple[str, dict[int, str]]:
    """Queue four players, wait for their table and every ticket to end; (table, seat → conn)."""
    conns = [connect(harness, p) for p in players]
    for conn in conns:
        harness.send(conn, {"action": "queue", "mode": "one_round", **queue})
    settle_until(
        harness,
        lambda: (
            all(harness.last(c) for c in conns)
            and all(e["status"] != "RUNNING" for e in executions(harness))
        ),
    )
    views = [harness.last(c) for c in conns]
    assert len({v["table_id"] for v in views if v}) == 1
    table_id = views[0]["table_id"]  # type: ignore[index]
    return table_id, {v["seat"]: c for v, c in zip(views, conns, strict=True) if v}


# --- settlement through the whole pipeline -----------------------------------------------


def short_match_seed(most_moves: int = 40) -> str:
    """A seed whose round the scripted clients finish in few moves and without a tie.

    Found by playing the clients' policy on the engine alone; it only keeps the
    test short: any seed gives a correct (if longer) match.
    """
    for i in range(500):
        seed = f"short-{i}"
        state = start_round(seed)
        rng = random.Random(0)  # as play_match
        for _ in range(most_moves):
            if state.round_over:
                break
            view = {"view": player_view(state, state.turn).model_dump(mode="json")}
            state, _ = apply(state, state.turn, parse_action(choose(view, rng)))
        if state.round_over:
            a, b = score_round(state)
            if a.total != b.total:
                return seed
    raise AssertionError("no short seed")


@pytest.fixture
def short(hx: Harness, monkeypatch: pytest.MonkeyPatch) -> Harness:
    """``hx`` dealing a round the scripted clients finish in few moves."""
    from services.deal import handler as deal_handler

    monkeypatch.setattr(
        deal_handler.service()._dealer, "_entropy", FixedEntropy(short_match_seed())
    )
    return hx


def test_a_quick_match_played_to_its_end_is_settled_and_frees_its_players(short: Harness) -> None:
    hx = short
    players = ["p1", "p2", "p3", "p4"]
    table_id, conns = queue_and_seat(hx, players)
    capture = hx.capture()
    play_match(hx, conns, table_id)
    hx.settle()

    table = hx.table(table_id)
    assert table.status == "finished"
    rounds = table.round
    winner = "A" if table.totals[0] > table.totals[1] else "B"
    winners = {"p1", "p3"} if winner == "A" else {"p2", "p4"}
    amount = 1000 * rounds  # MATCH-3
    expected = {p: amount if p in winners else -amount for p in players}
    assert points(hx, *players) == expected
    booked = match_entries(hx, table_id)
    assert sorted(booked) == sorted(
        (p, f"ENTRY#{table_id}:settlement:{seat}", expected[p])
        for seat, p in enumerate(players, start=1)
    )
    assert sum(p for _, _, p in booked) == 0
    # What each client was told is what the ledger booked.
    for seat, conn in conns.items():
        result = hx.last(conn, "match_result")
        assert result is not None
        assert result["rewards"][str(seat)] == expected[players[seat - 1]]
    (settled,) = [e["detail"] for e in capture.of_type("LedgerSettled")]
    assert settled == {"table_id": table_id, "purpose": "settlement", "changes": expected}
    # And in each player's profile, rated once, with what the ledger booked.
    profiles = ProfileStore(hx.storage)
    for player in players:
        (entry,) = profiles.history(player)
        assert (entry.table_id, entry.points, entry.result) == (
            table_id,
            expected[player],
            "won" if player in winners else "lost",
        )
        profile = profiles.profile(player)
        assert profile is not None and profile.rated == 1
        assert profile.ratings[entry.mode] == entry.rating_after
        # Canastas by kind, replayed from the log, add up to the bonuses scored (CAN-1..3).
        stats = profile.stats[entry.mode]
        kinds = 500 * stats.clean + 300 * stats.dirty
        assert kinds + 700 * stats.twos <= stats.canasta_points <= kinds + 1000 * stats.twos
    mode = profiles.history(players[0])[0].mode
    stats = [profiles.profile(p).stats[mode] for p in players]  # type: ignore[union-attr]
    assert stats[0] == stats[2] and stats[1] == stats[3], "partners share their team's"
    assert sum(s.clean + s.dirty + s.twos for s in stats) > 0, "a whole match makes canastas"

    # Released: no live table any more, so each may queue again.
    for player in players:
        assert not {"table_id", "seat"} & player_item(hx, player).keys()
    again = conns[1]
    hx.send(again, {"action": "queue", "mode": "three_rounds"})
    assert hx.last(again, "queued") is not None
    assert [m.get("code") for m in hx.received(again) if m["type"] == "error"] == []
    hx.send(again, {"action": "leave"})
    settle_until(hx, lambda: all(e["status"] != "RUNNING" for e in executions(hx)))


def test_an_arena_match_pays_the_stake_net_and_empties_the_escrow(hx: Harness) -> None:
    players = ["a1", "a2", "a3", "a4"]
    for player in players:
        fund(hx, player, 1000)
    table_id, _ = queue_and_seat(hx, players, mode="arena", stake=500)
    assert points(hx, *players) == dict.fromkeys(players, 500)
    score_rounds(hx.store, hx.table(table_id), [(100, 0), (100, 200), (400, 900)])
    hx.publish(
        "MatchEnded",
        ended(table_id, players, mode=MatchMode.ARENA, stake=500, winner="B", rounds=3),
        SCORE,
    )
    hx.settle()
    # MATCH-4: winners (seats 2 and 4) +stake net, losers -stake net.
    assert points(hx, *players) == {"a1": 500, "a2": 1500, "a3": 500, "a4": 1500}
    assert book_of(hx).balance(escrow_account(table_id)).points == 0
    booked = match_entries(hx, table_id)
    assert sum(p for _, _, p in booked) == 0
    players_net = sum(p for account, _, p in booked if account in players)
    assert players_net == 0, "zero net of escrow"
    for player in players:
        assert "table_id" not in player_item(hx, player)


def test_arena_tie_break_rounds_do_not_change_the_payout(hx: Harness) -> None:
    for rounds in (4, 5):
        table_id = f"arena-t{rounds}"
        players = [f"b{rounds}{seat}" for seat in (1, 2, 3, 4)]
        hold_stakes(hx, table_id, players, 100)
        tied = [(100, 0), (100, 200), (300, 300)] + [(400, 400)] * (rounds - 4) + [(900, 400)]
        end_table(hx, table_id, players, tied, mode=MatchMode.ARENA, stake=100)
        hx.publish(
            "MatchEnded",
            ended(table_id, players, mode=MatchMode.ARENA, stake=100, winner="A", rounds=rounds),
            SCORE,
        )
        hx.settle()
        assert list(points(hx, *players).values()) == [1100, 900, 1100, 900], rounds
        assert book_of(hx).balance(escrow_account(table_id)).points == 0
        payouts = sorted(
            k for a, k, _ in match_entries(hx, table_id) if a in players and ":payout:" in k
        )
        assert payouts == [f"ENTRY#{table_id}:payout:1", f"ENTRY#{table_id}:payout:3"]


def test_a_match_with_bots_is_practice_and_books_nothing(hx: Harness) -> None:
    """MATCH-3: one bot seat from the start makes the match practice, whatever its mode."""
    players = ["h1", host_bot_id("X", 2), "h3", host_bot_id("X", 4)]
    for player in ("h1", "h3"):
        fund(hx, player, 500)
    capture = hx.capture()
    for table_id, mode, stake, status in (
        ("f-x", MatchMode.THREE_ROUNDS, 0, "finished"),
        ("f-y", MatchMode.ARENA, 100, "aborted"),
    ):
        rounds = [(100, 0), (100, 200), (400, 900)] if status == "finished" else [(100, 0)]
        end_table(hx, table_id, players, rounds, mode=mode, stake=stake, status=status, bots=(2, 4))
        for winner in ("A", "B"):
            hx.publish(
                "MatchEnded",
                ended(
                    table_id, players, mode=mode, winner=winner, rounds=3, stake=stake, bots=(2, 4)
                ),
                SCORE,
            )
        detail = aborted(table_id, players, mode=mode, stake=stake)
        detail["seats"]["2"]["bot"] = True
        hx.publish("TableAborted", detail, SCORE)
    hx.settle()
    assert points(hx, "h1", "h3") == {"h1": 500, "h3": 500}
    assert accounts(hx) == ["h1", "h3"], "no house, escrow or match account"
    assert match_entries(hx, "f-x") == [] and match_entries(hx, "f-y") == []
    assert capture.of_type("LedgerSettled") == []
    # Nor does forming such a table hold a stake.
    seats = {i: SeatPlayer(player_id=p, name=p, bot=i in (2, 4)) for i, p in enumerate(players, 1)}
    assert escrow("f-z", seats, 100) == []


def fill_with_bots(harness: Harness, host: str) -> tuple[str, str, dict[str, Any]]:
    """A friends table of ``host`` and three bots, started; (connection, table, lobby)."""
    conn = connect(harness, host)
    harness.send(conn, {"action": "create_table", "mode": "one_round"})
    forming = harness.last(conn, "lobby")
    assert forming is not None and forming["practice"] is False
    harness.send(conn, {"action": "fill_bots"})
    started = harness.last(conn, "lobby")
    assert started is not None and started["status"] == "started"
    return conn, started["table_id"], started


def test_a_table_filled_with_bots_plays_to_its_end_and_settles_nothing(short: Harness) -> None:
    hx = short
    fund(hx, "solo", 700, 1)
    capture = hx.capture()
    conn, table_id, lobby = fill_with_bots(hx, "solo")
    assert lobby["practice"] is True, "the lobby says so when the bots sit down"
    hx.settle()
    first = hx.last(conn)
    assert first is not None and first["match"]["practice"] is True
    play_match(hx, {1: conn}, table_id)
    hx.settle()

    assert hx.table(table_id).status == "finished"
    result = hx.last(conn, "match_result")
    assert result is not None
    assert result["practice"] is True
    assert result["rewards"] == dict.fromkeys("1234", 0)
    assert book_of(hx).balance("solo") == Balance(700, 1), "balances unchanged"
    assert [e["purpose"] for e in book_of(hx).entries("solo")] == ["welcome"]
    assert match_entries(hx, table_id) == []
    assert accounts(hx) == ["solo"]
    assert capture.of_type("LedgerSettled") == []
    assert "table_id" not in player_item(hx, "solo"), "released to play again"


def test_a_seat_auto_played_after_a_disconnect_is_no_bot_and_the_match_settles(
    short: Harness,
) -> None:
    """TABLE-2 auto-play of a player who left is not a bot seat (MATCH-3): it settles."""
    hx = short
    players = ["g1", "g2", "g3", "g4"]
    table_id, conns = queue_and_seat(hx, players)
    hx.disconnect(conns.pop(4))
    play_match(hx, conns, table_id)
    hx.settle()

    table = hx.table(table_id)
    assert table.status == "finished"
    seat_4 = [i.auto for i in hx.logs(table_id) if i.seat == 4]
    assert seat_4 and all(seat_4), "seat 4 was auto-played"
    assert not any(p.bot for p in table.seats.values())
    winners = {"g1", "g3"} if table.totals[0] > table.totals[1] else {"g2", "g4"}
    amount = 1000 * table.round
    expected = {p: amount if p in winners else -amount for p in players}
    assert points(hx, *players) == expected
    result = hx.last(conns[1], "match_result")
    assert result is not None and result["practice"] is False
    assert result["rewards"]["4"] == expected["g4"]


# --- refunds, duplicates, order ------------------------------------------------------------


def test_an_aborted_arena_table_refunds_every_stake(hx: Harness) -> None:
    players = ["r1", "r2", "r3", "r4"]
    hold_stakes(hx, "arena-r", players, 500)
    assert points(hx, *players) == dict.fromkeys(players, 500)
    end_table(hx, "arena-r", players, [(100, 0)], mode=MatchMode.ARENA, stake=500, status="aborted")
    detail = aborted("arena-r", players, mode=MatchMode.ARENA, stake=500)
    hx.publish("TableAborted", detail, SCORE)
    hx.publish("TableAborted", detail, SCORE)  # delivered twice
    hx.settle()
    assert points(hx, *players) == dict.fromkeys(players, 1000)
    assert book_of(hx).balance(escrow_account("arena-r")).points == 0
    refunds = [k for a, k, _ in match_entries(hx, "arena-r") if a in players and ":refund:" in k]
    assert len(refunds) == 4

    # A quick-start table has nothing held: aborting it books nothing.
    end_table(hx, "quick-r", players, [(400, 400)], status="aborted")
    hx.publish(
        "TableAborted", aborted("quick-r", players, mode=MatchMode.ONE_ROUND, stake=0), SCORE
    )
    hx.settle()
    assert match_entries(hx, "quick-r") == []


def test_a_repeated_match_ended_is_booked_once(hx: Harness) -> None:
    players = ["d1", "d2", "d3", "d4"]
    end_table(hx, "quick-d", players, [(0, 50), (50, 60), (70, 80)], mode=MatchMode.THREE_ROUNDS)
    first = ended("quick-d", players, mode=MatchMode.THREE_ROUNDS, winner="B", rounds=3)
    hx.publish("MatchEnded", first, SCORE)
    hx.publish("MatchEnded", first, SCORE)
    hx.settle()
    hx.publish("MatchEnded", first, SCORE)  # redelivered later
    # The same match again with other totals and rounds books nothing more.
    other = ended(
        "quick-d", players, mode=MatchMode.THREE_ROUNDS, winner="B", rounds=4, totals=(10, 20)
    )
    hx.publish("MatchEnded", other, SCORE)
    # A late TableAborted of a table that ended has nothing to refund.
    hx.publish(
        "TableAborted", aborted("quick-d", players, mode=MatchMode.THREE_ROUNDS, stake=0), SCORE
    )
    hx.settle()
    assert points(hx, *players) == {"d1": -3000, "d2": 3000, "d3": -3000, "d4": 3000}
    assert len(match_entries(hx, "quick-d")) == 4
    assert sum(p for _, _, p in match_entries(hx, "quick-d")) == 0


def test_an_arena_match_is_settled_once_whatever_arrives_after(hx: Harness) -> None:
    """Once an arena match is paid out (or refunded), a late TableAborted, a contradicting
    MatchEnded, or a MatchEnded after a refund must book nothing: the table's record says
    which of the two happened, and the escrow is empty."""
    stake = 100
    cases = {
        "ended, then aborted": ["MatchEnded A", "TableAborted"],
        "ended, then ended with the other winner": ["MatchEnded A", "MatchEnded B"],
        "aborted, then ended": ["TableAborted", "MatchEnded A"],
    }
    expected: dict[str, Any] = {}
    found: dict[str, Any] = {}
    for number, (case, arrivals) in enumerate(cases.items(), start=1):
        table_id = f"arena-o{number}"
        players = [f"o{number}{seat}" for seat in (1, 2, 3, 4)]
        hold_stakes(hx, table_id, players, stake)
        first = arrivals[0]
        refunded = first == "TableAborted"
        end_table(
            hx,
            table_id,
            players,
            [(100, 0)] if refunded else [(100, 0), (100, 200), (900, 100)],
            mode=MatchMode.ARENA,
            stake=stake,
            status="aborted" if refunded else "finished",
        )
        for arrival in arrivals:
            if arrival == "TableAborted":
                detail = aborted(table_id, players, mode=MatchMode.ARENA, stake=stake)
            else:
                winner = arrival[-1]
                totals = (900, 100) if winner == "A" else (100, 900)
                detail = ended(
                    table_id,
                    players,
                    mode=MatchMode.ARENA,
                    stake=stake,
                    winner=winner,
                    totals=totals,
                )
            hx.publish(arrival.split()[0], detail, SCORE)
            hx.settle()
        paid = [1000 + stake, 1000 - stake] * 2 if first == "MatchEnded A" else [1000] * 4
        expected[case] = {"escrow": 0, "players": paid}
        found[case] = {
            "escrow": book_of(hx).balance(escrow_account(table_id)).points,
            "players": list(points(hx, *players).values()),
        }
    assert found == expected


def test_a_forged_match_end_books_only_what_the_games_table_says(hx: Harness) -> None:
    """Put on the bus under the score service's source: a MatchEnded for a table that
    never existed (which once credited a billion to each "winner"), one for a table still
    in play, one for a real ended table claiming a million rounds, the other team and
    other seats, and a TableAborted refunding a stake never held. Only the real table's
    own settlement is booked (MATCH-3); the rest is acknowledged, not retried (the
    harness fails on any redelivery), and every read ran under the ledger's own role."""
    players = ["v1", "v2", "v3", "v4"]
    thieves = ["x1", "x2", "x3", "x4"]
    capture = hx.capture()
    hx.publish("MatchEnded", ended("ghost", thieves, rounds=10**9), SCORE)
    hx.publish("TableAborted", aborted("ghost", thieves, mode=MatchMode.ARENA, stake=10**9), SCORE)
    hx.start_table("live", players, MatchMode.THREE_ROUNDS)
    hx.publish("MatchEnded", ended("live", players, mode=MatchMode.THREE_ROUNDS), SCORE)
    end_table(hx, "real", players, [(300, 1200)])
    bloated = ended("real", thieves, mode=MatchMode.TO_10000, winner="A", rounds=10**6)
    hx.publish("MatchEnded", bloated, SCORE)
    hx.settle()

    expected = {"v1": -1000, "v2": 1000, "v3": -1000, "v4": 1000}
    assert points(hx, *players, *thieves) == {**expected, **dict.fromkeys(thieves, 0)}
    assert accounts(hx) == sorted([*players, "match:real"])
    assert match_entries(hx, "ghost") == [] and match_entries(hx, "live") == []
    assert [e["detail"]["changes"] for e in capture.of_type("LedgerSettled")] == [expected]
    games = hx.aws.iam.arns.table(hx.aws.settings.games_table)
    assert {("ledger-events", GET, games), ("ledger-events", QUERY, games)} <= hx.aws.iam.used


def test_ledger_settled_reports_what_was_booked(hx: Harness) -> None:
    """A duplicate MatchEnded that books nothing must not announce changes it did not make."""
    players = ["u1", "u2", "u3", "u4"]
    end_table(hx, "quick-u", players, [(900, 100)])
    capture = hx.capture()
    hx.publish("MatchEnded", ended("quick-u", players, winner="A"), SCORE)
    hx.settle()
    hx.publish("MatchEnded", ended("quick-u", players, winner="B", totals=(5, 10)), SCORE)
    hx.settle()
    assert points(hx, *players) == {"u1": 1000, "u2": -1000, "u3": 1000, "u4": -1000}
    announced = [e["detail"]["changes"] for e in capture.of_type("LedgerSettled")]
    assert announced[0] == {"u1": 1000, "u2": -1000, "u3": 1000, "u4": -1000}
    for changes in announced[1:]:
        assert changes == announced[0], (
            f"LedgerSettled announced {changes}, the ledger holds {announced[0]}"
        )


def test_concurrent_settlements_book_once(hx: Harness) -> None:
    players = ["c1", "c2", "c3", "c4"]
    end_table(hx, "quick-c", players, [(900, 100)])
    event = MatchEnded.model_validate(ended("quick-c", players, winner="A", rounds=1))
    telemetry = RecordingTelemetry()
    publisher = RecordingPublisher()
    services = [
        LedgerService(Ledger(hx.storage), hx.store, publisher, FakeClock(), telemetry)
        for _ in range(6)
    ]
    barrier = threading.Barrier(len(services))
    failures: list[BaseException] = []

    def settle(service: LedgerService) -> None:
        try:
            barrier.wait()
            service.match_ended(event)
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    threads = [threading.Thread(target=settle, args=(s,)) for s in services]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert telemetry.metrics.get("ledger_settlements") == 1
    assert points(hx, *players) == {"c1": 1000, "c2": -1000, "c3": 1000, "c4": -1000}
    assert len(match_entries(hx, "quick-c")) == 4


# --- the ledger API (other rummy modes) ---------------------------------------------------------

CLIENTS = {
    "rummy": {
        "points_per_booking": 10_000,
        "points_per_day": 25_000,
        "jokers_per_booking": 3,
        "jokers_per_day": 5,
    },
    "poker": {"points_per_booking": 500, "points_per_day": 1_000},
    "bridge": {"points_per_booking": 100, "points_per_day": 400, "day_shards": 4},
}
"""The ledger API's clients of these tests, configured as the stack configures them."""


@pytest.fixture
def lx(moto_url: str) -> Iterator[Harness]:
    """A stack whose ledger API has the two clients of ``CLIENTS``, and a settable clock."""
    import json

    with local_harness(moto_url, CANASTA_LEDGER_CLIENTS=json.dumps(CLIENTS)) as harness:
        ledger_handler.service()._clock = FakeClock()  # type: ignore[assignment]
        yield harness
        assert_books_balance(harness)


def api(request: dict[str, Any], client: str | None = "rummy") -> dict[str, Any]:
    """Invoke the API as ``client`` (the alias it invokes; None: the unqualified function)."""
    return ledger_handler.api(request, LambdaContext("ledger-api", alias=client))


def post(account: str, key: str, points: int = 0, jokers: int = 0) -> dict[str, Any]:
    return {
        "op": "post",
        "account": account,
        "idempotency_key": key,
        "points": points,
        "jokers": jokers,
    }


def refusal(answer: dict[str, Any]) -> str | None:
    assert ("error" in answer) is ("points" not in answer), answer
    return answer.get("error")


def test_the_api_reads_credits_and_debits_once_per_key(lx: Harness) -> None:
    assert api({"op": "balance", "account": "z1"}) == {"account": "z1", "points": 0, "jokers": 0}
    credit = post("z1", "rummy-0001", 700, 2)
    assert api(credit) == {"account": "z1", "points": 700, "jokers": 2}
    debit = post("z1", "rummy-0002", -300, -1)
    assert api(debit) == {"account": "z1", "points": 400, "jokers": 1}
    # A repeat answers what the booking answered then, not today's balance, and books nothing.
    assert api(credit) == {"account": "z1", "points": 700, "jokers": 2}
    assert api(debit) == {"account": "z1", "points": 400, "jokers": 1}
    assert api({"op": "balance", "account": "z1"}) == {"account": "z1", "points": 400, "jokers": 1}
    keys = [e["sk"] for e in book_of(lx).entries("z1")]
    assert keys == ["ENTRY#external:rummy:rummy-0001", "ENTRY#external:rummy:rummy-0002"]


def test_a_reused_key_with_another_body_is_an_idempotency_conflict(lx: Harness) -> None:
    assert api(post("z3", "rummy-0001", 700)) == {"account": "z3", "points": 700, "jokers": 0}
    for other in (
        post("z3", "rummy-0001", 9999),
        post("z3", "rummy-0001", 700, 1),
        post("z3", "rummy-0001", -700),
        post("z4", "rummy-0001", 700),  # the key is the client's, whatever the account
    ):
        assert refusal(api(other)) == "idempotency_conflict", other
    assert points(lx, "z3", "z4") == {"z3": 700, "z4": 0}
    assert len(book_of(lx).entries("z3")) == 1 and book_of(lx).entries("z4") == []
    # Keys are per client: another mode's same key is its own booking.
    assert api(post("z3", "rummy-0001", 100), "poker") == {
        "account": "z3",
        "points": 800,
        "jokers": 0,
    }


def test_the_api_refuses_an_uncovered_debit(lx: Harness) -> None:
    """An uncovered debit books nothing and is answered (not raised) as insufficient_balance."""
    assert api(post("z2", "rummy-fund", 400, 1)) == {"account": "z2", "points": 400, "jokers": 1}
    for number, (points_, jokers) in enumerate([(-401, 0), (0, -2), (-10, -2)]):
        answer = api(post("z2", f"rummy-over-{number}", points_, jokers))
        assert refusal(answer) == "insufficient_balance", answer
    assert api({"op": "balance", "account": "z2"}) == {"account": "z2", "points": 400, "jokers": 1}
    assert [e["sk"] for e in book_of(lx).entries("z2")] == ["ENTRY#external:rummy:rummy-fund"]
    # A key refused before is free: the same debit, once covered, goes through.
    api(post("z2", "rummy-more", 1))
    assert api(post("z2", "rummy-over-0", -401)) == {"account": "z2", "points": 0, "jokers": 1}
    # A credit to an account a lost match left below zero is no debit: it goes through.
    end_table(lx, "quick-z", ["z9", "y2", "y3", "y4"], [(100, 900)])
    lx.publish("MatchEnded", ended("quick-z", ["z9", "y2", "y3", "y4"], winner="B"), SCORE)
    lx.settle()
    assert api(post("z9", "rummy-back", 300)) == {"account": "z9", "points": -700, "jokers": 0}


def test_amounts_are_bounded_integers(lx: Harness) -> None:
    """10^15 or 10^40 points, floats, bools and strings are no amount: malformed, nothing booked
    (DynamoDB itself refuses more than 38 digits, and moto would keep them)."""
    for number, amount in enumerate(
        [10**15, -(10**15), 10**40, 1_000_000_001, 1.5, 500.0, True, "500", None, [500]]
    ):
        for field in ("points", "jokers"):
            request = {**post("z5", f"rummy-bad-{number}"), field: amount}
            answer = api(request)
            assert refusal(answer) == "malformed", request
    for bad in (
        {**post("z5", "short"), "points": 5},
        {**post("z5", "rummy-0009"), "points": 5, "extra": 1},
        {**post("z5", "rummy key"), "points": 5},
        {"op": "refund", "account": "z5"},
        {"op": "balance", "account": 5},
    ):
        assert refusal(api(bad)) == "malformed", bad
    assert accounts(lx) == []


def test_only_players_accounts_may_be_named(lx: Harness) -> None:
    fund(lx, "house:bots", 10)
    for account in (
        "house:bots",
        "escrow:t-1",
        "match:t-1",
        "bot:ABC-2",
        "a b",
        "-x",
        "x:y",
        "p-a\n",
    ):
        for request in (
            post(account, "rummy-internal", 100),
            {"op": "balance", "account": account},
        ):
            assert refusal(api(request)) == "not_a_player_account", request
    assert accounts(lx) == ["house:bots"]
    assert book_of(lx).balance("house:bots").points == 10


def test_each_client_posts_within_its_limits_per_booking_and_per_day(lx: Harness) -> None:
    clock = ledger_handler.service()._clock
    assert refusal(api(post("z6", "rummy-big", 10_001))) == "booking_limit"
    assert refusal(api(post("z6", "rummy-big", 0, 4))) == "booking_limit"
    assert refusal(api(post("z6", "poker-big", 501), "poker")) == "booking_limit"
    assert api(post("z6", "rummy-d1", 10_000, 3))["points"] == 10_000
    assert api(post("z7", "rummy-d2", 10_000))["points"] == 10_000
    # Debits count as much as credits: 25,000 a day in all, whichever the accounts.
    assert api(post("z6", "rummy-d3", -5_000))["points"] == 5_000
    assert refusal(api(post("z7", "rummy-d4", 1))) == "daily_limit"
    assert refusal(api(post("z6", "rummy-d5", 0, 3))) == "daily_limit"  # 3 + 3 > 5 jokers
    assert api(post("z6", "rummy-d6", 0, -2))["jokers"] == 1
    # Another client's day is its own.
    assert api(post("z7", "poker-d1", 500), "poker")["points"] == 10_500
    assert points(lx, "z6", "z7") == {"z6": 5_000, "z7": 10_500}
    # A refused key stays free; the next UTC day has room again.
    clock.advance(24 * 3600)  # type: ignore[attr-defined]
    assert api(post("z7", "rummy-d4", 1))["points"] == 10_501


def test_a_client_in_day_shards_books_each_shard_up_to_its_share(lx: Harness) -> None:
    """4 counters of 100 points each (400 a day): keys of 100 book once per counter, so
    exactly four of many book, one in each shard, and the day's total is the limit."""
    keys = [f"bridge-{n}" for n in range(24)]
    booked = [k for k in keys if "points" in api(post("zb", k, 100), "bridge")]
    assert points(lx, "zb") == {"zb": 400}
    assert sorted(shard_of(k, 4) for k in booked) == [0, 1, 2, 3]
    refused = [k for k in keys if k not in booked]
    assert {refusal(api(post("zb", k, 100), "bridge")) for k in refused} == {"daily_limit"}


def test_only_a_configured_client_may_call(lx: Harness) -> None:
    for client in (None, "blackjack", "$LATEST", "1"):
        for request in (post("z8", "rummy-anon", 100), {"op": "balance", "account": "z8"}):
            assert refusal(api(request, client)) == "unknown_client", (client, request)
    assert accounts(lx) == []


def test_concurrent_bookings_on_one_account_all_book_exactly(lx: Harness) -> None:
    """Each booking's answer is the balance it left: concurrent ones retry, none is lost."""
    answers: list[dict[str, Any]] = []
    barrier = threading.Barrier(6)

    def book(number: int) -> None:
        barrier.wait()
        answers.append(api(post("zc", f"rummy-c-{number}", 100 * (number + 1))))

    threads = [threading.Thread(target=book, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(refusal(a) is None for a in answers), answers
    assert sorted(a["points"] for a in answers)[-1] == 2_100
    assert len({a["points"] for a in answers}) == 6, "each answer is its own booking's result"
    assert book_of(lx).balance("zc").points == 2_100


@pytest.fixture
def everyone(moto_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    """The stack with the ledger API's clients, dealing rounds the scripted clients end fast."""
    import json

    from services.deal import handler as deal_handler

    with local_harness(moto_url, CANASTA_LEDGER_CLIENTS=json.dumps(CLIENTS)) as harness:
        monkeypatch.setattr(
            deal_handler.service()._dealer, "_entropy", FixedEntropy(short_match_seed())
        )
        yield harness
        assert_books_balance(harness)


SUBJECTS = ["bot-x", "auth0|abc", "user=42", "google-oauth2|" + "1" * 241]
"""Subjects other providers issue: a name like a bot's, Auth0's ``|``, a ``=``, 255 long."""


def test_every_subject_plays_books_and_settles_as_a_player(everyone: Harness) -> None:
    """Whatever a provider's ``sub`` looks like, its player is a player (MATCH-3, MATCH-4):
    seated as one, sent views, their moves their own, the other modes' credit their stake,
    paid at the end; the ledger API answers for the same account."""
    hx = everyone
    players = [player_id_of(s) or "" for s in SUBJECTS]
    for number, subject in enumerate(SUBJECTS):
        credit = api(post(subject, f"rummy-open-{number}", 1000))
        assert credit == {"account": subject, "points": 1000, "jokers": 0}
    table_id, conns = queue_and_seat(hx, SUBJECTS, mode="arena", stake=500)
    table = hx.table(table_id)
    assert [(p.player_id, p.bot) for p in table.seats.values()] == [(p, False) for p in players]
    assert points(hx, *players) == dict.fromkeys(players, 500), "stakes held in escrow"
    play_match(hx, conns, table_id)
    hx.settle()

    table = hx.table(table_id)
    assert table.status == "finished"
    assert not [i for i in hx.logs(table_id) if i.auto], "no move played for them"
    result = hx.last(conns[1], "match_result")
    assert result is not None and result["practice"] is False
    winners = (1, 3) if table.totals[0] > table.totals[1] else (2, 4)
    expected = {s: 1500 if seat in winners else 500 for seat, s in enumerate(SUBJECTS, 1)}
    for seat, subject in enumerate(SUBJECTS, start=1):
        assert result["rewards"][str(seat)] == expected[subject] - 1000
        answer = api({"op": "balance", "account": subject})
        assert answer == {"account": subject, "points": expected[subject], "jokers": 0}
    assert book_of(hx).balance(escrow_account(table_id)).points == 0


# --- the joker button (JOKER-1) ---------------------------------------------------------------


def joker_seed() -> str:
    """A seed whose stock keeps both jokers well away from its ends."""
    for i in range(1000):
        seed = f"joker-seed-{i}"
        stock = start_round(seed).stock
        at = [k for k, t in enumerate(stock) if t == JOKER]
        if len(at) == 2 and min(at) >= 10 and max(at) <= len(stock) - 10:
            return seed
    raise AssertionError("no seed")


class FixedEntropy:
    def __init__(self, seed: str) -> None:
        self.seed = seed

    def new_seed(self, *_: object) -> str:
        return self.seed


@pytest.fixture
def joker_table(hx: Harness, monkeypatch: pytest.MonkeyPatch) -> Callable[..., dict[int, str]]:
    """Deal a table with a known shuffle (jokers in the stock) after booking the players' jokers."""
    from services.deal import handler as deal_handler

    monkeypatch.setattr(deal_handler.service()._dealer, "_entropy", FixedEntropy(joker_seed()))

    def start(jokers: dict[str, int]) -> dict[int, str]:
        for player, count in jokers.items():
            fund(hx, player, 0, count)
        conns = hx.start_table("jk", ["k1", "k2", "k3", "k4"])
        first = hx.last(conns[1])
        assert first is not None and first["view"]["phase"] == "first_discard"
        discard = next(a for a in first["view"]["legal_actions"] if a["type"] == "discard")
        hx.play(conns[1], "jk", first["version"], discard)
        hx.settle()
        return conns

    return start


def state_of(harness: Harness) -> dict[str, Any]:
    table = harness.table("jk")
    assert table.state is not None
    return {"version": table.version, "state": to_json(unpack(table.state))}


def test_the_joker_button_takes_a_joker_and_debits_it_with_the_move(
    hx: Harness, joker_table: Callable[..., dict[int, str]]
) -> None:
    conns = joker_table({"k2": 1})
    view = hx.last(conns[2])
    assert view is not None
    assert (view["view"]["turn"], view["view"]["phase"]) == (2, "draw")
    assert view["view"]["account_jokers"] == 1
    assert {"type": "joker_button"} in view["view"]["legal_actions"]
    before = view["version"]
    jokers_in_hand = view["view"]["hand"].count("JK")

    hx.play(conns[2], "jk", before, {"type": "joker_button"})
    after = hx.last(conns[2])
    assert after is not None and after["version"] == before + 1
    assert after["last_action"]["type"] == "joker_button"
    assert after["view"]["hand"].count("JK") == jokers_in_hand + 1
    assert after["view"]["phase"] == "play"
    assert after["view"]["joker_button_used"] is True
    assert after["view"]["account_jokers"] == 0
    assert [m.get("code") for m in hx.received(conns[2]) if m["type"] == "error"] == []
    assert hx.table("jk").version == before + 1

    # The move's log entry and the ledger's entry: both written, in the move's transaction.
    (log,) = [i for i in hx.logs("jk", 1) if i.action == {"type": "joker_button"}]
    assert log.seat == 2
    assert book_of(hx).balance("k2").jokers == 0
    (entry,) = [e for e in book_of(hx).entries("k2") if e["purpose"] == "joker"]
    assert entry["sk"] == "ENTRY#jk:joker:1"
    assert (entry["jokers"], entry["points"]) == (-1, 0)
    assert entry["match"] == "jk"
    assert abs(float(entry["at"]) - log.at) < 1, "booked with the move"


def test_a_press_that_loses_the_race_to_the_same_press_is_stale_not_refused(
    hx: Harness, joker_table: Callable[..., dict[int, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The joker button pressed twice at once (a double press): the winner's whole press
    slips in while the loser reads the balance, before it reads the table. Its move is
    stale, not JOKER-1."""
    from services.turn import handler as turn_handler

    conns = joker_table({"k2": 1})
    view = hx.last(conns[2])
    assert view is not None
    before = view["version"]
    ledger = turn_handler.service()._ledger  # the read the rival slips before
    original = ledger.balance

    def rival_first(account: str) -> Any:
        monkeypatch.setattr(ledger, "balance", original)
        hx.play(conns[2], "jk", before, {"type": "joker_button"})
        return original(account)

    monkeypatch.setattr(ledger, "balance", rival_first)
    hx.send(
        conns[2],
        {
            "action": "play",
            "table_id": "jk",
            "version": before,
            "move": {"type": "joker_button"},
            "cid": "press-1",
        },
    )
    errors = [m for m in hx.received(conns[2]) if m["type"] == "error"]
    assert [e["code"] for e in errors] == ["stale_version"]
    assert errors[0].get("cid") == "press-1", "the answer names the press it answers"
    assert errors[0]["view"]["version"] == before + 1
    assert book_of(hx).balance("k2").jokers == 0, "one joker spent, once"


def test_the_joker_button_without_a_spare_joker_changes_nothing(
    hx: Harness, joker_table: Callable[..., dict[int, str]]
) -> None:
    conns = joker_table({"k3": 1})  # seat 2 has none
    before = state_of(hx)
    view = hx.last(conns[2])
    assert view is not None and {"type": "joker_button"} not in view["view"]["legal_actions"]
    hx.play(conns[2], "jk", before["version"], {"type": "joker_button"})
    error = hx.last(conns[2], "error")
    assert error is not None and error["code"] == "joker_button_unavailable"
    assert state_of(hx) == before
    assert book_of(hx).entries("k2") == []
    assert book_of(hx).balance("k2").jokers == 0


def test_a_joker_spent_elsewhere_before_the_move_is_refused(
    hx: Harness, joker_table: Callable[..., dict[int, str]]
) -> None:
    """Dealt with a joker on the account, which another mode spends before the button."""
    conns = joker_table({"k2": 1, "k3": 1})
    view = hx.last(conns[2])
    assert view is not None and view["view"]["account_jokers"] == 1
    # Spent before the move: the turn service reads the account and refuses.
    book_of(hx).book([Posting("k2", "external:spent-2", "external", jokers=-1)], time.time())
    before = state_of(hx)
    hx.play(conns[2], "jk", before["version"], {"type": "joker_button"})
    assert (hx.last(conns[2], "error") or {}).get("code") == "joker_button_unavailable"
    assert state_of(hx) == before
    assert [e["purpose"] for e in book_of(hx).entries("k2")] == ["external", "welcome"]

    # Seat 2 plays on; now seat 3's joker is spent between the read and the write:
    # the guarded debit in the move's transaction refuses it.
    hx.play(conns[2], "jk", before["version"], {"type": "draw"})
    mine = hx.last(conns[2])
    assert mine is not None
    hx.play(
        conns[2],
        "jk",
        mine["version"],
        next(a for a in mine["view"]["legal_actions"] if a["type"] == "discard"),
    )
    hx.settle()
    seat3 = hx.last(conns[3])
    assert seat3 is not None and (seat3["view"]["turn"], seat3["view"]["phase"]) == (3, "draw")

    from services.turn import handler as turn_handler

    service = turn_handler.service()
    real = service._ledger  # a race is staged by wrapping the service's ledger
    book = book_of(hx)

    class SpendsAfterReading:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def balance(self, account: str) -> Any:
            read = real.balance(account)
            book.book([Posting(account, "external:spent-3", "external", jokers=-1)], time.time())
            return read

    service._ledger = SpendsAfterReading()  # type: ignore[assignment]
    try:
        before = state_of(hx)
        hx.play(conns[3], "jk", before["version"], {"type": "joker_button"})
    finally:
        service._ledger = real
    assert (hx.last(conns[3], "error") or {}).get("code") == "joker_button_unavailable"
    assert state_of(hx) == before
    assert book.balance("k3").jokers == 0
    assert [e["purpose"] for e in book.entries("k3")] == ["external", "welcome"]


def test_the_end_of_a_match_is_marked_once(hx: Harness) -> None:
    """Settlement and refund share one create-only marker: whichever comes first wins."""
    players = ["m1", "m2", "m3", "m4"]
    end_table(hx, "t-mark", players, [(900, 100)])
    hx.publish("MatchEnded", ended("t-mark", players), "canasta.score")
    hx.publish("MatchEnded", ended("t-mark", players, winner="B"), "canasta.score")
    hx.settle()
    marks = book_of(hx).entries("match:t-mark")
    assert [(m["sk"], m["points"]) for m in marks] == [("ENTRY#t-mark:closed", 0)]
    assert points(hx, *players) == {"m1": 1000, "m2": -1000, "m3": 1000, "m4": -1000}
