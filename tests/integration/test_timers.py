"""Turn timers (TABLE-2): an idle connected seat is auto-played; old timers do nothing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from local.dispatcher import LambdaContext
from services.common import constants
from services.turn import handler as turn_handler
from shared_engine import MatchMode, unpack
from tests.integration.harness import Harness, sqs_event
from tests.integration.machine import fresh_harness

pytestmark = pytest.mark.integration

PLAYERS = ["w1", "w2", "w3", "w4"]


def _fire(table_id: str, turn_started: int, at: float | None = None) -> dict[str, Any]:
    """A timer's message, delivered straight to the timer handler (as the queue would);
    without ``at``, as sent before timers said when they were due."""
    body = {"table_id": table_id, "turn_started": turn_started, "at": at}
    return turn_handler.timers(sqs_event(body), LambdaContext("timers"))


def _deadline_in(harness: Harness, table_id: str, seconds: float) -> None:
    """Move the turn's deadline to ``seconds`` from now (as if time had passed)."""
    harness.aws.client("dynamodb").update_item(
        TableName=harness.aws.settings.games_table,
        Key={"pk": {"S": f"TABLE#{table_id}"}, "sk": {"S": "TABLE"}},
        UpdateExpression="SET turn_deadline = :d",
        ExpressionAttributeValues={":d": {"N": str(time.time() + seconds)}},
    )


def _deadline_passed(harness: Harness, table_id: str, seconds_ago: float = 1.0) -> None:
    """The turn's deadline is over: a timer may now play it."""
    _deadline_in(harness, table_id, -seconds_ago)


def _delayed_timers(harness: Harness) -> int:
    attributes = harness.aws.client("sqs").get_queue_attributes(
        QueueUrl=harness.aws.resources.queues["timers"],
        AttributeNames=["ApproximateNumberOfMessagesDelayed"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessagesDelayed"])


def _game(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The table's items but for its pending timer, which a timer handing on records."""
    return [
        {key: value for key, value in item.items() if key not in {"timer_at", "timer_from"}}
        for item in history
    ]


def _entries(harness: Harness, table_id: str) -> list[tuple[int, str, bool]]:
    return [(i.seat, i.action["type"], i.auto) for i in harness.logs(table_id)]


def test_an_idle_seat_is_auto_played_when_its_timer_fires_at_the_deadline(
    quick_turns: Harness,
) -> None:
    """The countdown a client sees ends when the server plays the turn (within 2 s)."""
    harness = quick_turns
    conns = harness.start_table("idle", PLAYERS, MatchMode.ONE_ROUND)
    table = harness.table("idle")
    assert table.turn_deadline is not None
    shown = harness.last(conns[1])
    assert shown is not None and shown["turn_deadline"] == table.turn_deadline
    # Deal and the RoundStarted consumer both arm it: a second timer of a turn is harmless.
    assert _delayed_timers(harness) >= 1, "a durable timer, delayed to the deadline"

    harness.aws.dispatcher.run_until(lambda: harness.table("idle").version > table.version, 10)
    acted = time.time()
    harness.settle()

    assert table.turn_deadline <= acted <= table.turn_deadline + 2
    (log,) = harness.logs("idle")
    assert log.at >= table.turn_deadline, "never before the deadline"
    after = harness.table("idle")
    assert after.version == table.version + 1
    assert _entries(harness, "idle") == [(1, "discard", True)]
    assert unpack(after.state or b"").turn == 2
    assert after.turn_started == after.version
    assert _delayed_timers(harness) >= 1, "the next turn is timed"
    for seat, conn in conns.items():
        view = harness.last(conn)
        assert view is not None and view["version"] == after.version, seat
        assert view["last_action"]["auto"] is True


def test_a_timer_before_the_deadline_is_set_again_and_plays_nothing(harness: Harness) -> None:
    harness.start_table("early", PLAYERS, MatchMode.ONE_ROUND)
    table = harness.table("early")
    before = harness.history("early")
    armed = _delayed_timers(harness)
    assert _fire("early", table.turn_started) == {"batchItemFailures": []}
    assert _delayed_timers(harness) == armed, "an older timer: the table's is on its way"
    assert _fire("early", table.turn_started, table.timer_at) == {"batchItemFailures": []}
    assert _game(harness.history("early")) == _game(before)
    assert _delayed_timers(harness) == armed + 1, "the table's own timer is set again"


@contextmanager
def _far_turn(moto_url: str, moment: float) -> Iterator[tuple[Harness, float, list[float]]]:
    """A table whose first turn has 30 minutes, so its timer is a schedule, and a
    platform clock (``[now]``) at which Scheduler runs it ``moment`` s into its minute.

    Yields the harness, the start of the schedule's minute, and the clock."""
    fake_now = [0.0]
    timing = {"clock": lambda: fake_now[0], "within_minute": lambda _name: moment}
    with fresh_harness(moto_url, turn_seconds=1800, timing=timing) as harness:
        harness.start_table("far", PLAYERS, MatchMode.ONE_ROUND)
        deadline = harness.table("far").turn_deadline
        assert deadline is not None
        yield harness, (deadline - 60) // 60 * 60, fake_now


def test_a_far_deadline_fires_early_from_its_schedule_then_at_the_deadline(
    moto_url: str,
) -> None:
    """Scheduler runs a schedule at any moment of its minute: early, never playing early."""
    with _far_turn(moto_url, moment=0.0) as (harness, minute, fake_now):
        deadline = harness.table("far").turn_deadline
        assert deadline is not None
        (name,) = harness.schedules()
        target = harness.aws.client("scheduler").get_schedule(
            GroupName=harness.aws.settings.schedule_group, Name=name
        )["Target"]
        # Undelivered, the timer waits in the schedules' dead-letter queue (alarmed on).
        assert target["DeadLetterConfig"] == {"Arn": harness.aws.resources.schedule_dead_letter_arn}
        assert target["DeadLetterConfig"]["Arn"].endswith(constants.SCHEDULE_DEAD_LETTER_QUEUE)
        fake_now[0] = minute - 0.5
        assert harness.aws.dispatcher.fire_timers() == 0, "not before the schedule's minute"
        fake_now[0] = minute
        assert harness.aws.dispatcher.fire_timers() == 1
        left = deadline - fake_now[0]
        assert 60 < left < 120, "a schedule set a minute early fires 1 to 2 minutes early"
        assert harness.schedules() == []
        # The services' clock is the real one: the deadline as far from it as from the fake.
        _deadline_in(harness, "far", left)
        armed = _delayed_timers(harness)
        before = harness.history("far")
        harness.settle()
        assert _game(harness.history("far")) == _game(before), "the turn is not played early"
        assert _delayed_timers(harness) == armed + 1, "set again, delayed to the deadline"
        assert harness.schedules() == [], f"{name} is not scheduled again"


def test_a_schedule_fires_up_to_59_seconds_after_its_minute_begins(moto_url: str) -> None:
    with _far_turn(moto_url, moment=59.0) as (harness, minute, fake_now):
        fake_now[0] = minute + 58.9
        assert harness.aws.dispatcher.fire_timers() == 0
        fake_now[0] = minute + 59
        assert harness.aws.dispatcher.fire_timers() == 1
        _deadline_passed(harness, "far", seconds_ago=59)
        fake_now[0] = time.time()  # back to the services' clock for the turns that follow
        harness.settle()
        assert _entries(harness, "far") == [(1, "discard", True)], "a late timer plays at once"


def test_a_timer_for_a_turn_already_played_does_nothing(harness: Harness) -> None:
    conns = harness.start_table("late", PLAYERS, MatchMode.ONE_ROUND)
    first = harness.table("late")
    view = harness.last(conns[1])
    assert view is not None
    harness.play(conns[1], "late", view["version"], view["view"]["legal_actions"][0])
    played = harness.table("late")
    assert played.version == first.version + 1
    received = {seat: len(harness.received(c)) for seat, c in conns.items()}
    before = harness.history("late")

    assert _fire("late", first.turn_started) == {"batchItemFailures": []}
    assert _fire("late", first.turn_started) == {"batchItemFailures": []}
    assert _fire("late", 999) == {"batchItemFailures": []}
    assert _fire("no-such-table", 1) == {"batchItemFailures": []}

    assert harness.history("late") == before
    assert {seat: len(harness.received(c)) for seat, c in conns.items()} == received


def test_a_timer_fired_twice_plays_the_turn_once(harness: Harness) -> None:
    harness.start_table("twice", PLAYERS, MatchMode.ONE_ROUND)
    table = harness.table("twice")
    _deadline_passed(harness, "twice")
    assert _fire("twice", table.turn_started) == {"batchItemFailures": []}
    assert _fire("twice", table.turn_started) == {"batchItemFailures": []}
    assert _entries(harness, "twice") == [(1, "discard", True)]
    assert harness.table("twice").version == table.version + 1


def test_a_timer_after_the_draw_plays_only_the_discard(harness: Harness) -> None:
    conns = harness.start_table("half", PLAYERS, MatchMode.ONE_ROUND)
    view = harness.last(conns[1])
    assert view is not None
    harness.play(conns[1], "half", view["version"], view["view"]["legal_actions"][0])
    view = harness.last(conns[2])
    assert view is not None
    harness.play(conns[2], "half", view["version"], {"type": "draw"})
    table = harness.table("half")
    assert unpack(table.state or b"").phase == "play"

    _deadline_passed(harness, "half")
    assert _fire("half", table.turn_started) == {"batchItemFailures": []}

    assert _entries(harness, "half") == [
        (1, "discard", False),
        (2, "draw", False),
        (2, "discard", True),
    ]
    assert unpack(harness.table("half").state or b"").turn == 3


def test_a_malformed_timer_message_is_reported_not_swallowed(harness: Harness) -> None:
    harness.start_table("junk", PLAYERS, MatchMode.ONE_ROUND)
    before = harness.history("junk")
    event = sqs_event({"table_id": "junk"}, {"table_id": "junk", "turn_started": 999})
    result = turn_handler.timers(event, LambdaContext("timers"))
    assert result == {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}
    assert harness.history("junk") == before
