"""Matchmaking on the real state machine (moto executes it), end to end.

Each queue ticket is an execution of ``services/matchmaking/flow.py``: its
TryMatch state sends its one task to the matchmaking queue, the dispatcher hands
it to ``services.matchmaking.handler:events``, and the task token is answered
when the ticket ends (seated, gone), or the task times out when the queue time
is up (moto waits for real). Every test ends with no execution still running
(queued players leave), so nothing outlives its test on the shared moto server.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from infra.manifest import GET
from services.common.identities import host_bot_id
from services.common.ledger import Ledger, Posting, escrow_account
from services.common.profiles import Profile, ProfileStore, Rating
from services.common.records import queue_of
from services.matchmaking.lobbies import CODE_ALPHABET, CODE_LENGTH
from shared_engine import apply, parse_action, start_round, unpack
from shared_engine.search import level_policy
from tests.integration.clients import choose, play_match
from tests.integration.harness import Harness
from tests.integration.machine import executions, local_harness, settle_until

pytestmark = pytest.mark.integration

QUICK = "one_round:twos-meld:0"


# --- fixtures and helpers ------------------------------------------------------------


@pytest.fixture
def mm(moto_url: str) -> Iterator[Harness]:
    with local_harness(moto_url) as harness:
        yield harness


@pytest.fixture
def mm_short_queue(moto_url: str) -> Iterator[Harness]:
    with local_harness(moto_url, CANASTA_QUEUE_SECONDS="10") as harness:
        yield harness


TIMEOUT = "States.Timeout"


def ticket_player(harness: Harness, execution_arn: str) -> str:
    return str(execution_ticket(harness, execution_arn)["player_id"])


def execution_ticket(harness: Harness, execution_arn: str) -> dict[str, Any]:
    described = harness.aws.client("stepfunctions").describe_execution(executionArn=execution_arn)
    return dict(json.loads(described["input"])["ticket"])


def ticket_of(harness: Harness, player_id: str) -> dict[str, Any]:
    """The ticket the player's (one) execution was started with."""
    (ticket,) = [
        t
        for e in executions(harness)
        if (t := execution_ticket(harness, e["executionArn"]))["player_id"] == player_id
    ]
    return ticket


def entered(harness: Harness, execution_arn: str) -> tuple[str, ...]:
    """The states the execution entered, in order: each one a transition Step Functions bills."""
    history = harness.aws.client("stepfunctions").get_execution_history(
        executionArn=execution_arn, maxResults=1000
    )["events"]
    return tuple(
        str(e["stateEnteredEventDetails"]["name"])
        for e in history
        if "stateEnteredEventDetails" in e
    )


def outcomes(harness: Harness) -> dict[str, list[tuple[str, str, tuple[str, ...]]]]:
    """player → [(execution status, the status it ended with, the states it entered)] for
    every ticket that player opened."""
    sfn = harness.aws.client("stepfunctions")
    found: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {}
    for execution in executions(harness):
        arn = execution["executionArn"]
        output = sfn.describe_execution(executionArn=arn).get("output")
        status = json.loads(output)["status"] if output else "-"
        outcome = (execution["status"], status, entered(harness, arn))
        found.setdefault(ticket_player(harness, arn), []).append(outcome)
    return found


SEATED = ("SUCCEEDED", "seated", ("TryMatch",))
"""A seated ticket's whole execution: one state, its task answered by the formation."""
GONE = ("SUCCEEDED", "gone", ("TryMatch",))
EXPIRED = ("SUCCEEDED", "abandoned", ("TryMatch", "Abandon"))
"""The task timed out with the queue time: Catch → Abandon, which tells the player."""


def all_executions_ended(harness: Harness) -> Callable[[], bool]:
    return lambda: all(e["status"] != "RUNNING" for e in executions(harness))


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


def queue_entries(harness: Harness, queue: str | None = None) -> list[dict[str, Any]]:
    """Every waiting entry (of one queue key, or of all queues), oldest first."""
    items = harness.aws.client("dynamodb").scan(
        TableName=harness.aws.settings.matchmaking_table, ConsistentRead=True
    )["Items"]
    prefix = f"QUEUE#{queue}#" if queue else "QUEUE#"
    found = [i for i in items if i["pk"]["S"].startswith(prefix)]
    return sorted(found, key=lambda i: (queue_of(i["pk"]["S"]), i["sk"]["S"]))


def lobby_item(harness: Harness, code: str) -> dict[str, Any]:
    return dict(
        harness.aws.client("dynamodb")
        .get_item(
            TableName=harness.aws.settings.matchmaking_table,
            Key={"pk": {"S": f"LOBBY#{code}"}, "sk": {"S": "LOBBY"}},
            ConsistentRead=True,
        )
        .get("Item", {})
    )


def ledger(harness: Harness) -> Ledger:
    return Ledger(harness.storage)


def fund(harness: Harness, player_id: str, points: int, jokers: int = 0) -> None:
    ledger(harness).book(
        [Posting(player_id, "welcome", "welcome", points=points, jokers=jokers)], time.time()
    )


def connect(harness: Harness, player_id: str) -> str:
    connection = harness.connect(player_id)
    assert connection is not None
    return connection


def errors(harness: Harness, connection: str) -> list[str]:
    return [m["code"] for m in harness.received(connection) if m["type"] == "error"]


def of_type(harness: Harness, connection: str, kind: str) -> list[dict[str, Any]]:
    return [m for m in harness.received(connection) if m["type"] == kind]


def queue(harness: Harness, connection: str, mode: str = "one_round", **extra: Any) -> None:
    harness.send(connection, {"action": "queue", "mode": mode, **extra})


def leave_all(harness: Harness, connections: list[str]) -> None:
    """Take still-queued players out, and wait for their tickets to end."""
    for connection in connections:
        harness.send(connection, {"action": "leave"})
    settle_until(harness, all_executions_ended(harness))


def seated_views(harness: Harness, connections: list[str]) -> Callable[[], bool]:
    return lambda: all(harness.last(c) is not None for c in connections)


def held_tasks(harness: Harness, count: int, seconds: float = 30) -> dict[str, str]:
    """Take the state machine's next ``count`` messages off the matchmaking queue before
    any is delivered: player → message body."""
    sqs, url = harness.aws.client("sqs"), harness.aws.resources.queues["matchmaking"]
    held: dict[str, str] = {}
    deadline = time.time() + seconds
    while len(held) < count:
        if time.time() > deadline:
            raise AssertionError(f"{len(held)} of {count} task messages within {seconds} s")
        for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
            held[json.loads(m["Body"])["ticket"]["player_id"]] = m["Body"]
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        time.sleep(0.05)
    return held


def deliver(harness: Harness, *bodies: str) -> None:
    """Messages sent to the matchmaking queue (again) and delivered to its consumer."""
    sqs, url = harness.aws.client("sqs"), harness.aws.resources.queues["matchmaking"]
    for body in bodies:
        sqs.send_message(QueueUrl=url, MessageBody=body)
    while harness.aws.dispatcher.pump_queue("matchmaking"):
        pass


def tokens_kept(harness: Harness) -> list[str]:
    """The waiting players whose item holds their ticket's task token."""
    waiting = [i["player_id"]["S"] for i in queue_entries(harness)]
    return [p for p in waiting if "task_token" in player_item(harness, p)]


# --- quick-start queues -----------------------------------------------------------------


def test_four_players_make_one_table_seated_in_arrival_order(mm: Harness) -> None:
    players = ["q1", "q2", "q3", "q4"]
    conns = [connect(mm, p) for p in players]
    before = time.time()
    for conn in conns:
        queue(mm, conn)
    for conn in conns:
        (queued,) = of_type(mm, conn, "queued")
        assert (queued["mode"], queued["variant"], queued["stake"]) == ("one_round", "twos-meld", 0)
        wait = mm.aws.settings.queue_seconds
        assert before + wait <= queued["expires_at"] <= time.time() + wait
    assert [i["player_id"]["S"] for i in queue_entries(mm, QUICK)] == players

    settle_until(mm, lambda: seated_views(mm, conns)() and all_executions_ended(mm)())

    views = [mm.last(c) for c in conns]
    assert all(v is not None for v in views)
    table_ids = {v["table_id"] for v in views if v}
    assert len(table_ids) == 1
    (table_id,) = table_ids
    # TABLE-1: seats in arrival order; seats 1 and 3 are team A, 2 and 4 team B.
    for seat, (player, view) in enumerate(zip(players, views, strict=True), start=1):
        assert view is not None
        assert view["seat"] == seat
        assert view["seats"][str(seat)]["player"]["player_id"] == player
        assert view["view"]["team"] == ("A" if seat in (1, 3) else "B")
        assert view["match"]["mode"] == "one_round"
        item = player_item(mm, player)
        assert item["table_id"]["S"] == table_id
        assert int(item["seat"]["N"]) == seat
        assert not {"queue_key", "queue_sk", "ticket", "task_token", "lobby"} & item.keys()
    table = mm.table(table_id)
    assert {s: p.player_id for s, p in table.seats.items()} == dict(enumerate(players, start=1))
    assert (table.mode.value, table.variant, table.stake) == ("one_round", "twos-meld", 0)
    assert queue_entries(mm) == []
    # One ticket per player, each seated in one state transition.
    assert outcomes(mm) == {p: [SEATED] for p in players}


def test_eight_players_make_two_tables_and_queues_never_mix(mm: Harness) -> None:
    quick = [f"a{i}" for i in range(1, 9)]
    classic = ["c1", "c2", "c3"]
    longer = ["t1"]
    conns = {p: connect(mm, p) for p in quick + classic + longer}
    arrival = ["a1", "c1", "a2", "t1", "a3", "a4", "c2", "a5", "a6", "c3", "a7", "a8"]
    for player in arrival:
        if player in classic:
            queue(mm, conns[player], variant="classic")
        elif player in longer:
            queue(mm, conns[player], mode="three_rounds")
        else:
            queue(mm, conns[player])

    quick_conns = [conns[p] for p in quick]
    waiting = classic + longer
    # The eight seated tickets end; the four others keep waiting.
    settle_until(
        mm,
        lambda: (
            seated_views(mm, quick_conns)()
            and [e["status"] for e in executions(mm)].count("RUNNING") == len(waiting)
        ),
    )
    first, second = mm.last(conns["a1"]), mm.last(conns["a5"])
    assert first is not None and second is not None
    assert first["table_id"] != second["table_id"]
    for table_id, members in ((first["table_id"], quick[:4]), (second["table_id"], quick[4:])):
        table = mm.table(table_id)
        assert {s: p.player_id for s, p in table.seats.items()} == dict(enumerate(members, 1))
        assert (table.mode.value, table.variant) == ("one_round", "twos-meld")
        for member in members:
            view = mm.last(conns[member])
            assert view is not None and view["table_id"] == table_id
    # Three classic players and one three-round player never fill a one-round table.
    for player in waiting:
        assert mm.last(conns[player]) is None
        item = player_item(mm, player)
        assert "table_id" not in item
        assert "queue_key" in item
    assert [i["player_id"]["S"] for i in queue_entries(mm, "one_round:classic:0")] == classic
    assert [i["player_id"]["S"] for i in queue_entries(mm, "three_rounds:twos-meld:0")] == longer
    assert queue_entries(mm, QUICK) == []

    leave_all(mm, [conns[p] for p in waiting])
    assert queue_entries(mm) == []
    found = outcomes(mm)
    assert {p: found[p] for p in quick} == {p: [SEATED] for p in quick}
    assert {p: found[p] for p in waiting} == {p: [GONE] for p in waiting}


def test_a_second_queue_while_waiting_is_refused_and_the_player_sits_once(mm: Harness) -> None:
    conns = {p: connect(mm, p) for p in ("d1", "d2", "d3", "d4")}
    queue(mm, conns["d1"])
    queue(mm, conns["d1"])  # the same queue again
    queue(mm, conns["d1"], mode="three_rounds")  # another queue
    assert errors(mm, conns["d1"]) == ["already_playing", "already_playing"]
    assert len(of_type(mm, conns["d1"], "queued")) == 1
    assert [i["player_id"]["S"] for i in queue_entries(mm)] == ["d1"]
    assert len(executions(mm)) == 1

    for player in ("d2", "d3", "d4"):
        queue(mm, conns[player])
    settle_until(
        mm, lambda: seated_views(mm, list(conns.values()))() and all_executions_ended(mm)()
    )
    view = mm.last(conns["d1"])
    assert view is not None
    table = mm.table(view["table_id"])
    assert [p.player_id for p in table.seats.values()].count("d1") == 1
    assert table.seat_of("d1") == 1

    # A seated player cannot queue (nor open a friends table).
    queue(mm, conns["d1"])
    mm.send(conns["d1"], {"action": "create_table", "mode": "one_round"})
    assert errors(mm, conns["d1"]) == ["already_playing"] * 4
    assert queue_entries(mm) == []
    assert player_item(mm, "d1")["table_id"]["S"] == table.table_id
    assert len(executions(mm)) == 4


def test_concurrent_queue_attempts_by_one_player_make_one_entry(mm: Harness) -> None:
    conn = connect(mm, "r1")  # six presses at once (older tabs are refused: opened_elsewhere)
    barrier = threading.Barrier(6)
    failures: list[BaseException] = []

    def attempt(conn: str) -> None:
        try:
            barrier.wait()
            queue(mm, conn)
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    threads = [threading.Thread(target=attempt, args=(conn,)) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []

    received = mm.received(conn)
    assert [m["type"] for m in received].count("queued") == 1
    assert (
        sorted(m.get("code", "") for m in received if m["type"] == "error")
        == ["already_playing"] * 5
    )
    entries = queue_entries(mm)
    assert [i["player_id"]["S"] for i in entries] == ["r1"]
    assert player_item(mm, "r1")["ticket"]["S"] == entries[0]["ticket"]["S"]
    assert [e["name"] for e in executions(mm)] == [entries[0]["ticket"]["S"]]

    mm.send(conn, {"action": "leave"})
    settle_until(mm, all_executions_ended(mm))


def play_until_the_round_is_over(harness: Harness, conns: dict[int, str], table_id: str) -> None:
    """Every seat plays from its own latest view until the round's last move is written,
    and nothing that follows that write has been delivered yet."""
    rng = random.Random(7)
    while not unpack(harness.table(table_id).state or b"").round_over:
        turns = [
            (conn, view)
            for seat, conn in conns.items()
            if (view := harness.last(conn)) is not None
            and view["view"]["turn"] == seat
            and view["view"]["legal_actions"]
        ]
        if not turns:
            harness.settle()
            continue
        conn, view = turns[-1]
        harness.play(conn, table_id, view["version"], choose(view, rng))


def test_the_players_may_queue_as_soon_as_the_match_result_arrives(mm: Harness) -> None:
    """The write that ends the match frees its seats: a ``queue`` sent the moment
    ``match_result`` arrives is accepted, before the platform has relayed ``MatchEnded``."""
    players = ["e1", "e2", "e3", "e4"]
    conns = mm.start_table("qe", players)
    dispatcher = mm.aws.dispatcher
    while mm.last(conns[1], "match_result") is None:
        play_until_the_round_is_over(mm, conns, "qe")
        dispatcher.pump_stream()  # RoundEnded, relayed to the score queue
        assert dispatcher.pump_queue("score") == 1
        if mm.last(conns[1], "match_result") is None:
            mm.settle()  # a tie: the tie-break round is dealt (MATCH-2)

    mm.send(conns[1], {"action": "queue", "mode": "one_round", "cid": "again"})
    (answer,) = [m for m in mm.received(conns[1]) if m.get("cid") == "again"]
    assert answer["type"] == "queued", answer
    for player in players[1:]:
        assert not {"table_id", "seat"} & player_item(mm, player).keys(), player
    leave_all(mm, [conns[1]])


def test_a_try_match_after_its_ticket_was_seated_answers_its_own_token(mm: Harness) -> None:
    """z4's task is delivered before z3's: it seats z3, whose token nobody holds yet, so
    z3's execution waits until its own try_match arrives and answers it."""
    conns = {p: connect(mm, p) for p in ("z1", "z2", "z3", "z4")}
    for player in ("z1", "z2"):
        queue(mm, conns[player])
    settle_until(mm, lambda: sorted(tokens_kept(mm)) == ["z1", "z2"])
    queue(mm, conns["z3"])
    queue(mm, conns["z4"])
    held = held_tasks(mm, 2)

    deliver(mm, held["z4"])
    assert "table_id" in player_item(mm, "z3")
    waiting = [
        ticket_player(mm, e["executionArn"]) for e in executions(mm) if e["status"] == "RUNNING"
    ]
    assert waiting == ["z3"]
    deliver(mm, held["z3"])
    settle_until(
        mm, lambda: seated_views(mm, list(conns.values()))() and all_executions_ended(mm)()
    )
    assert outcomes(mm) == {p: [SEATED] for p in conns}
    # Delivered once more (at least once): Step Functions refuses the second answer, and
    # the consumer takes the refusal as done (the harness fails on any failed delivery).
    deliver(mm, held["z3"])
    assert queue_entries(mm) == []
    assert outcomes(mm) == {p: [SEATED] for p in conns}


def test_a_repeated_try_match_keeps_one_token_and_answers_nothing(mm: Harness) -> None:
    conn = connect(mm, "u1")
    queue(mm, conn)
    (body,) = held_tasks(mm, 1).values()
    deliver(mm, body, body)
    assert tokens_kept(mm) == ["u1"]
    assert [e["status"] for e in executions(mm)] == ["RUNNING"]
    assert of_type(mm, conn, "queue_left") == []
    leave_all(mm, [conn])
    assert of_type(mm, conn, "queue_left") == [{"type": "queue_left", "reason": "left"}]
    assert outcomes(mm) == {"u1": [GONE]}


# --- leaving ---------------------------------------------------------------------------


def test_leave_takes_the_player_out_and_ends_the_ticket(mm: Harness) -> None:
    conn = connect(mm, "l1")
    queue(mm, conn)
    settle_until(mm, lambda: len(queue_entries(mm)) == 1)
    mm.send(conn, {"action": "leave"})
    assert mm.last(conn, "queue_left") == {"type": "queue_left", "reason": "left"}
    assert queue_entries(mm) == []
    assert not {"queue_key", "queue_sk", "ticket"} & player_item(mm, "l1").keys()
    settle_until(mm, all_executions_ended(mm))
    assert outcomes(mm) == {"l1": [GONE]}

    mm.send(conn, {"action": "leave"})
    assert errors(mm, conn) == ["not_queued"]
    assert len(of_type(mm, conn, "queue_left")) == 1

    # Free again: the player can queue anew (a new ticket).
    queue(mm, conn)
    assert len(of_type(mm, conn, "queued")) == 2
    mm.send(conn, {"action": "leave"})
    settle_until(mm, all_executions_ended(mm))
    assert outcomes(mm) == {"l1": [GONE] * 2}


def test_a_player_who_disconnects_while_queued_leaves_the_queue(mm: Harness) -> None:
    stays = connect(mm, "s1")
    goes = connect(mm, "g1")
    queue(mm, stays)
    queue(mm, goes)
    assert len(queue_entries(mm)) == 2
    mm.disconnect(goes)  # PlayerDisconnected → the matchmaking queue
    settle_until(mm, lambda: "queue_key" not in player_item(mm, "g1"))
    assert [i["player_id"]["S"] for i in queue_entries(mm)] == ["s1"]
    assert not {"queue_key", "queue_sk", "ticket"} & player_item(mm, "g1").keys()
    assert "queue_key" in player_item(mm, "s1")
    settle_until(mm, lambda: outcomes(mm)["g1"][0][0] == "SUCCEEDED")
    assert outcomes(mm)["g1"] == [GONE]
    leave_all(mm, [stays])


def test_a_lone_ticket_expires_after_the_queue_time(mm_short_queue: Harness) -> None:
    """e1's task times out with the queue time (Catch → Abandon); the four seated meanwhile
    outlive their queue time and are never told their ticket expired."""
    mm = mm_short_queue
    assert mm.aws.settings.queue_seconds == 10
    conn = connect(mm, "e1")
    queue(mm, conn, mode="three_rounds")  # alone in its queue
    (queued,) = of_type(mm, conn, "queued")
    seated = {p: connect(mm, p) for p in ("n1", "n2", "n3", "n4")}
    for other in seated.values():
        queue(mm, other)
    settle_until(mm, seated_views(mm, list(seated.values())))
    # As if n1's timeout had raced the formation that seated it: the abandon says nothing.
    deliver(mm, json.dumps({"kind": "abandon", "ticket": ticket_of(mm, "n1"), "error": TIMEOUT}))
    settle_until(mm, lambda: mm.last(conn, "queue_left") is not None)
    # Not before the queue time was up.
    assert time.time() >= queued["expires_at"]
    assert mm.last(conn, "queue_left") == {"type": "queue_left", "reason": "timeout"}
    assert not {"queue_key", "queue_sk", "ticket"} & player_item(mm, "e1").keys()
    assert queue_entries(mm) == []
    settle_until(mm, all_executions_ended(mm))
    assert outcomes(mm) == {"e1": [EXPIRED], **{p: [SEATED] for p in seated}}
    for player, other in seated.items():
        assert of_type(mm, other, "queue_left") == [], player
        assert "table_id" in player_item(mm, player)


# --- friends tables -----------------------------------------------------------------------


def create_lobby(harness: Harness, host: str) -> tuple[str, str]:
    conn = connect(harness, host)
    harness.send(conn, {"action": "create_table", "mode": "one_round"})
    lobby = harness.last(conn, "lobby")
    assert lobby is not None, harness.received(conn)
    return conn, lobby["code"]


def test_a_friends_table_forms_by_invite_code(mm: Harness) -> None:
    host, code = create_lobby(mm, "h1")
    lobby = mm.last(host, "lobby")
    assert lobby is not None
    assert len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET)
    assert lobby["host"] == "h1"
    assert lobby["seats"] == {
        "1": {"player_id": "h1", "name": "h1", "bot": False},
        "2": None,
        "3": None,
        "4": None,
    }
    assert player_item(mm, "h1")["lobby"]["S"] == code

    guests = {p: connect(mm, p) for p in ("f2", "f3", "f4", "f5")}
    wrong = next(c for c in ("AAAAAA", "BBBBBB") if c != code)
    mm.send(guests["f2"], {"action": "join_table", "code": wrong})
    assert errors(mm, guests["f2"]) == ["unknown_code"]

    mm.send(
        guests["f2"], {"action": "join_table", "code": code.lower()}
    )  # codes are not case-sensitive
    seen = mm.last(host, "lobby")
    assert seen is not None and seen["seats"]["2"]["player_id"] == "f2"
    guest_lobby = mm.last(guests["f2"], "lobby")
    assert guest_lobby is not None and guest_lobby["you"] == "f2"  # each member's own
    assert {**guest_lobby, "you": seen["you"]} == seen
    mm.send(guests["f3"], {"action": "join_table", "code": code})
    mm.send(guests["f4"], {"action": "join_table", "code": code})
    four = [host, guests["f2"], guests["f3"], guests["f4"]]
    settle_until(mm, seated_views(mm, four))

    table_ids = {v["table_id"] for v in (mm.last(c) for c in four) if v}
    assert len(table_ids) == 1
    (table_id,) = table_ids
    assert table_id.startswith(f"f-{code}-")
    table = mm.table(table_id)
    assert {s: p.player_id for s, p in table.seats.items()} == {1: "h1", 2: "f2", 3: "f3", 4: "f4"}
    assert not any(p.bot for p in table.seats.values())
    assert table.stake == 0
    for seat, player in table.seats.items():
        item = player_item(mm, player.player_id)
        assert (item["table_id"]["S"], int(item["seat"]["N"])) == (table_id, seat)
        assert "lobby" not in item
    stored = lobby_item(mm, code)
    assert (stored["status"]["S"], stored["table_id"]["S"]) == ("started", table_id)

    # A fifth player finds no table waiting: the lobby started, so the code is no longer open.
    mm.send(guests["f5"], {"action": "join_table", "code": code})
    assert errors(mm, guests["f5"]) == ["unknown_code"]
    assert "lobby" not in player_item(mm, "f5")
    assert executions(mm) == []  # friends tables use no ticket


def test_the_host_fills_a_lone_table_with_bots_who_play_their_turns(mm: Harness) -> None:
    host, code = create_lobby(mm, "b1")
    mm.send(host, {"action": "fill_bots"})
    settle_until(mm, lambda: mm.last(host) is not None)
    view = mm.last(host)
    assert view is not None
    table_id = view["table_id"]
    assert view["seat"] == 1
    seats = view["seats"]
    assert seats["1"]["player"] == {"player_id": "b1", "name": "b1", "bot": False}
    assert all(seats[s]["player"]["bot"] for s in ("2", "3", "4"))
    assert {seats[s]["player"]["player_id"] for s in ("2", "3", "4")} == {
        host_bot_id(code, s) for s in (2, 3, 4)
    }
    assert lobby_item(mm, code)["status"]["S"] == "started"

    # Seat 1 opens the round with a discard; the three bots then play their turns.
    assert (view["view"]["turn"], view["view"]["phase"]) == (1, "first_discard")
    discard = next(a for a in view["view"]["legal_actions"] if a["type"] == "discard")
    mm.play(host, table_id, view["version"], discard)
    settle_until(
        mm,
        lambda: (
            (mm.last(host) or {}).get("view", {}).get("turn") == 1
            and (mm.last(host) or {})["view"]["phase"] == "draw"
        ),
    )
    after = mm.last(host)
    assert after is not None
    table = mm.table(table_id)
    assert table.version == after["version"]
    logged = [i.seat for i in mm.logs(table_id, 1)]
    assert logged[0] == 1
    assert set(logged[1:]) == {2, 3, 4} and logged[1:] == sorted(logged[1:])
    # Each bot played a whole turn, ending with a discard, in seat order.
    actions = [(i.seat, i.action["type"]) for i in mm.logs(table_id, 1)]
    for bot in (2, 3, 4):
        turn = [kind for seat, kind in actions if seat == bot]
        assert turn[0] in ("draw", "take_pile") and turn[-1] == "discard", turn


def test_nobody_takes_a_bots_seat_by_the_spelling_of_its_id(mm: Harness) -> None:
    """A host's bot seat is the server's to play (MATCH-3). No token names its id, and a
    subject spelled as such ids were once spelled (``bot-<code>-<seat>``) is a player of
    their own, seated nowhere: they cannot speak or move for the bot."""
    host, code = create_lobby(mm, "b9")
    mm.send(host, {"action": "fill_bots"})
    settle_until(mm, lambda: mm.last(host) is not None)
    view = mm.last(host)
    assert view is not None
    table_id = view["table_id"]
    assert mm.connect(host_bot_id(code, 2)) is None, "refused by the authorizer"
    lookalike = connect(mm, f"bot-{code}-2")
    mm.send(lookalike, {"action": "say", "table_id": table_id, "phrase": "good_game"})
    mm.play(lookalike, table_id, view["version"], {"type": "draw"})
    assert errors(mm, lookalike) == ["not_seated", "not_seated"]
    assert of_type(mm, host, "said") == []
    assert mm.table(table_id).seats[2].player_id == host_bot_id(code, 2)


def test_fill_bots_is_the_hosts_and_starts_with_two_humans(mm: Harness) -> None:
    host, code = create_lobby(mm, "m1")
    guest = connect(mm, "m2")
    mm.send(guest, {"action": "join_table", "code": code})
    mm.send(guest, {"action": "fill_bots"})
    assert errors(mm, guest) == ["not_host"]
    assert lobby_item(mm, code)["status"]["S"] == "forming"

    mm.send(host, {"action": "fill_bots"})
    settle_until(mm, seated_views(mm, [host, guest]))
    view = mm.last(guest)
    assert view is not None
    table_id = view["table_id"]
    assert view["seat"] == 2
    assert [view["seats"][s]["player"]["bot"] for s in "1234"] == [False, False, True, True]
    table = mm.table(table_id)
    assert {s: p.bot for s, p in table.seats.items()} == {1: False, 2: False, 3: True, 4: True}

    # Only the humans play: seat 1 discards, seat 2 draws and discards, the bots follow.
    first = mm.last(host)
    assert first is not None
    mm.play(
        host,
        table_id,
        first["version"],
        next(a for a in first["view"]["legal_actions"] if a["type"] == "discard"),
    )
    mine = mm.last(guest)
    assert mine is not None and mine["view"]["turn"] == 2
    mm.play(guest, table_id, mine["version"], {"type": "draw"})
    mine = mm.last(guest)
    assert mine is not None and mine["view"]["phase"] == "play"
    mm.play(
        guest,
        table_id,
        mine["version"],
        next(a for a in mine["view"]["legal_actions"] if a["type"] == "discard"),
    )
    settle_until(mm, lambda: (mm.last(host) or {})["view"]["turn"] == 1)
    logged = [i.seat for i in mm.logs(table_id, 1)]
    assert logged[:3] == [1, 2, 2]
    assert set(logged[3:]) == {3, 4}
    assert mm.table(table_id).version == (mm.last(host) or {})["version"]


def test_a_friends_table_of_hard_bots_plays_a_round_as_the_search_bot_would(
    mm: Harness,
) -> None:
    """The host's level travels from ``fill_bots`` through TableFormed and the deal to the
    table's seats; every logged bot move is the hard search bot's for the table, round and
    ply, replayed from the round's seed and the log alone."""
    host, _code = create_lobby(mm, "hb1")
    mm.send(host, {"action": "fill_bots", "level": "hard"})
    settle_until(mm, lambda: mm.last(host) is not None)
    view = mm.last(host)
    assert view is not None
    table_id = view["table_id"]
    assert [view["seats"][s]["player"].get("level") for s in "1234"] == [None] + ["hard"] * 3
    assert {s: p.level for s, p in mm.table(table_id).seats.items()} == {
        1: None,
        2: "hard",
        3: "hard",
        4: "hard",
    }
    play_match(mm, {1: host}, table_id)
    assert mm.last(host, "match_result") is not None
    assert mm.table(table_id).status == "finished"

    history = mm.history(table_id)
    (round_item,) = [i for i in history if i["sk"]["S"].startswith("ROUND#")]
    state = start_round(round_item["seed"]["S"], dealer=int(round_item["dealer"]["N"]))
    bot_moves = 0
    for entry in mm.logs(table_id, 1):
        seat, action = entry.seat, parse_action(entry.action)
        if seat != 1:
            bot = level_policy("hard", f"{table_id}:1:{state.ply}")
            assert bot(state, seat) == action, (seat, state.ply)
            bot_moves += 1
        state, _ = apply(state, seat, action)
    assert state.round_over and bot_moves > 0


def test_the_host_leaving_closes_the_lobby(mm: Harness) -> None:
    host, code = create_lobby(mm, "k1")
    guests = {p: connect(mm, p) for p in ("k2", "k3")}
    for conn in guests.values():
        mm.send(conn, {"action": "join_table", "code": code})
    mm.send(host, {"action": "leave"})
    assert mm.last(host, "queue_left") == {"type": "queue_left", "reason": "left"}
    assert lobby_item(mm, code)["status"]["S"] == "closed"
    for player in ("k1", "k2", "k3"):
        assert "lobby" not in player_item(mm, player)

    # Nobody can join a closed lobby, and its members are free to play elsewhere.
    late = connect(mm, "k4")
    mm.send(late, {"action": "join_table", "code": code})
    assert errors(mm, late) == ["unknown_code"]
    mm.send(guests["k2"], {"action": "create_table", "mode": "three_rounds"})
    assert mm.last(guests["k2"], "lobby")["code"] != code  # type: ignore[index]
    mm.send(guests["k2"], {"action": "leave"})
    assert errors(mm, guests["k2"]) == []


def test_guests_are_told_when_the_host_closes_the_lobby(mm: Harness) -> None:
    """After the host leaves, a guest must not be left looking at a lobby that lists the host.

    The lobby is closed and the guest released (previous test); what the guest
    is sent should say so (a ``queue_left``), not show the old seating.
    """
    host, code = create_lobby(mm, "j1")
    guest = connect(mm, "j2")
    mm.send(guest, {"action": "join_table", "code": code})
    mm.send(host, {"action": "leave"})
    last = mm.received(guest)[-1]
    assert last["type"] == "queue_left", (
        f"the guest's last message after the host closed the lobby is {last}"
    )


# --- the arena ---------------------------------------------------------------------------


def test_arena_refuses_unknown_stakes_and_uncovered_ones(mm: Harness) -> None:
    fund(mm, "x1", 400)
    conn = connect(mm, "x1")
    queue(mm, conn, mode="arena", stake=250)
    queue(mm, conn, mode="arena", stake=500)  # allowed, but above the balance
    queue(mm, conn, mode="arena", stake=0)
    assert errors(mm, conn) == ["invalid_stake", "insufficient_balance", "invalid_stake"]
    assert of_type(mm, conn, "queued") == []
    assert queue_entries(mm) == []
    assert "queue_key" not in player_item(mm, "x1")
    assert executions(mm) == []
    assert ledger(mm).balance("x1").points == 400

    queue(mm, conn, mode="arena", stake=100)  # covered
    (queued,) = of_type(mm, conn, "queued")
    assert (queued["mode"], queued["stake"]) == ("arena", 100)
    assert [queue_of(i["pk"]["S"]) for i in queue_entries(mm)] == ["arena:twos-meld:100"]
    assert ledger(mm).balance("x1").points == 400  # nothing is held until the table forms
    leave_all(mm, [conn])


def test_an_arena_table_moves_every_stake_to_escrow(mm: Harness) -> None:
    players = ["v1", "v2", "v3", "v4"]
    for player in players:
        fund(mm, player, 1000)
    conns = [connect(mm, p) for p in players]
    for conn in conns:
        queue(mm, conn, mode="arena", stake=500)
    settle_until(mm, lambda: seated_views(mm, conns)() and all_executions_ended(mm)())
    view = mm.last(conns[0])
    assert view is not None
    table_id = view["table_id"]
    table = mm.table(table_id)
    assert (table.mode.value, table.stake) == ("arena", 500)
    assert view["match"]["stake"] == 500
    book = ledger(mm)
    for player in players:
        assert book.balance(player).points == 500
        held = [e for e in book.entries(player) if e["purpose"] == "escrow"]
        assert [(e["points"], e["match"]) for e in held] == [(-500, table_id)]
    escrow = escrow_account(table_id)
    assert book.balance(escrow).points == 2000
    assert len(book.entries(escrow)) == 4
    for account in [*players, escrow]:
        stored, summed = book.reconcile(account)
        assert stored == summed
    assert outcomes(mm) == {p: [SEATED] for p in players}


def drained_arena(harness: Harness) -> dict[str, str]:
    """Four funded players queue for the arena; then another mode spends most of w3's points."""
    players = ["w1", "w2", "w3", "w4"]
    for player in players:
        fund(harness, player, 300)
    conns = {p: connect(harness, p) for p in players}
    for player in players:
        queue(harness, conns[player], mode="arena", stake=100)
    assert len(queue_entries(harness)) == 4
    ledger(harness).book([Posting("w3", "external:rummy-1", "external", points=-250)], time.time())
    return conns


def pump_matchmaking_until(harness: Harness, done: Callable[[], Any], seconds: float = 60) -> None:
    """Deliver only the matchmaking queue (the tickets' tasks) until ``done``."""
    deadline = time.time() + seconds
    while not done():
        if time.time() > deadline:
            raise AssertionError(f"not reached within {seconds} s")
        harness.aws.dispatcher.pump_queue("matchmaking")
        time.sleep(0.05)


def test_a_player_drained_before_the_table_forms_is_dropped(mm: Harness) -> None:
    conns = drained_arena(mm)
    # The stream is first read after the failed formation: see the next test for why.
    pump_matchmaking_until(mm, lambda: errors(mm, conns["w3"]) != [])
    mm.settle()
    assert errors(mm, conns["w3"]) == ["insufficient_balance"]
    assert not {"queue_key", "ticket", "table_id"} & player_item(mm, "w3").keys()
    assert [i["player_id"]["S"] for i in queue_entries(mm)] == ["w1", "w2", "w4"]
    for player in ("w1", "w2", "w4"):
        assert "queue_key" in player_item(mm, player)
        assert "table_id" not in player_item(mm, player)
        assert mm.last(conns[player]) is None
        assert errors(mm, conns[player]) == []
        assert ledger(mm).balance(player).points == 300
    assert ledger(mm).balance("w3").points == 50
    assert [e["sk"] for e in ledger(mm).entries("w3")] == [
        "ENTRY#external:rummy-1",
        "ENTRY#welcome",
    ]
    settle_until(mm, lambda: outcomes(mm)["w3"][0][0] == "SUCCEEDED")
    assert outcomes(mm)["w3"] == [GONE]

    # The three still waiting make a table with the next funded player.
    fund(mm, "w5", 100)
    conns["w5"] = connect(mm, "w5")
    queue(mm, conns["w5"], mode="arena", stake=100)
    seated = [conns[p] for p in ("w1", "w2", "w4", "w5")]
    settle_until(mm, lambda: seated_views(mm, seated)() and all_executions_ended(mm)())
    view = mm.last(conns["w5"])
    assert view is not None
    table = mm.table(view["table_id"])
    assert [p.player_id for _, p in sorted(table.seats.items())] == ["w1", "w2", "w4", "w5"]
    assert ledger(mm).balance(escrow_account(table.table_id)).points == 400
    assert "table_id" not in player_item(mm, "w3")


def test_a_failed_formation_relays_nothing_and_later_tables_still_start(mm: Harness) -> None:
    """The local platform must not relay a rolled-back write, nor lose later ones.

    Same as the previous test, except that the dispatcher has read the games
    table's stream before the formation fails, as a running local stack always
    has. moto rolls a cancelled transaction back by swapping in a copy of the
    table: the dispatcher's shard iterator (local/dispatcher.py, pump_stream /
    _stream_records) still points at the discarded shard, so it relays the
    cancelled TableFormed (w3 gets seated at a table that does not exist) and
    never sees a later write (the next table's views never come).
    """
    mm.settle()  # the dispatcher now holds a stream iterator
    conns = drained_arena(mm)
    settle_until(mm, lambda: errors(mm, conns["w3"]) != [])
    assert errors(mm, conns["w3"]) == ["insufficient_balance"]
    problems = []
    phantom = player_item(mm, "w3").get("table_id", {}).get("S")
    if phantom is not None:
        problems.append(f"w3 was seated at {phantom}, from a cancelled transaction")
    fund(mm, "w5", 100)
    conns["w5"] = connect(mm, "w5")
    queue(mm, conns["w5"], mode="arena", stake=100)
    seated = [conns[p] for p in ("w1", "w2", "w4", "w5")]
    settle_until(mm, all_executions_ended(mm))
    try:
        settle_until(mm, seated_views(mm, seated), 3)
    except AssertionError:
        table_id = player_item(mm, "w5").get("table_id", {}).get("S")
        problems.append(f"table {table_id} formed but its players never got a view")
    assert problems == []


def test_a_second_tab_opened_and_closed_leaves_the_player_free_to_find_a_table(
    mm: Harness,
) -> None:
    """Tab A queues; tab B opens (A is told) and closes. A's old connection answers with a
    clear code instead of "not queued"; the player's next connection (A reloaded) queues,
    may always leave, and is seated, even if B's disconnect is handled after it queued."""
    tab_a = connect(mm, "w1")
    queue(mm, tab_a)
    tab_b = connect(mm, "w1")
    assert mm.received(tab_a)[-1] == {"type": "opened_elsewhere"}
    mm.send(tab_a, {"action": "leave"})
    assert errors(mm, tab_a) == ["opened_elsewhere"]
    assert "queue_key" in player_item(mm, "w1"), "a refused leave changes nothing"

    mm.disconnect(tab_b)
    again = connect(mm, "w1")  # "Play here" in tab A, before B's disconnect is handled
    mm.send(again, {"action": "leave"})
    assert of_type(mm, again, "queue_left")[-1]["reason"] == "left"
    queue(mm, again)
    assert [m["type"] for m in mm.received(again)][-1] == "queued", errors(mm, again)
    mm.settle()
    assert "queue_key" in player_item(mm, "w1"), "B's late disconnect took the new place"

    others = [connect(mm, p) for p in ("w2", "w3", "w4")]
    for conn in others:
        queue(mm, conn)
    settle_until(mm, lambda: seated_views(mm, [again, *others])() and all_executions_ended(mm)())
    view = mm.last(again)
    assert view is not None and view["seat"] == 1
    assert view["seats"]["1"]["connected"] is True
    assert errors(mm, again) == []


def test_the_arena_seats_by_skill_and_balances_the_teams(mm: Harness) -> None:
    """Arena ratings 10, 40, 11, 11.8 queue first: four wait, but 40 is out of every
    window, so no table forms (first-come would seat them); 10.5 arrives and the four
    near each other sit, teams as even as they allow (10 + 11.8 against 10.5 + 11)."""
    ratings = {"k1": 10.0, "k2": 40.0, "k3": 11.0, "k4": 11.8, "k5": 10.5}
    profiles = ProfileStore(mm.storage)
    for player, mu in ratings.items():
        rated = Profile(player, version=1, ratings={"arena": Rating(mu, 2.0)})
        assert profiles.add_match(f"setup-{player}", [], [(None, rated)], {}).ok
        fund(mm, player, 500)
    conns = {p: connect(mm, p) for p in ratings}
    for player in ratings:
        queue(mm, conns[player], mode="arena", stake=100)
        mm.settle()
        if player == "k4":
            assert len(queue_entries(mm)) == 4, "four wait: no table of them"
    seated = [conns[p] for p in ("k1", "k3", "k4", "k5")]
    settle_until(mm, seated_views(mm, seated))
    view = mm.last(conns["k1"])
    assert view is not None
    table = mm.table(view["table_id"])
    assert [p.player_id for _, p in sorted(table.seats.items())] == ["k1", "k5", "k4", "k3"]
    (waiting,) = queue_entries(mm)
    assert waiting["player_id"]["S"] == "k2" and waiting["rating"]["N"] == "40.0"
    profile_table = mm.aws.iam.arns.table(mm.aws.settings.profiles_table)
    assert ("matchmaking-ws", GET, profile_table) in mm.aws.iam.used
    leave_all(mm, [conns["k2"]])
