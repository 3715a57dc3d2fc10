"""Delivers what AWS would deliver, to the very same handler functions.

In AWS, event source mappings feed the handlers: the games table's stream
feeds the relay, each SQS queue (fed by an EventBridge rule or by a turn
timer) feeds its consumer, and EventBridge Scheduler fires the schedules of
far turn deadlines. Locally this dispatcher does the same by polling moto:
same event shapes, same partial-batch failure contract, same retries, and
the same timing: a delayed SQS message (a near deadline) is delivered when
its delay is over (moto delays to the second, as SQS does), and a one-time
schedule fires at any moment of the minute of its schedule time, as
Scheduler fires it (``within_minute`` picks the moment; the clock is
injectable, so a test can deliver a timer early or late without waiting).
"""

from __future__ import annotations

import importlib
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from infra import manifest
from infra.manifest import FUNCTIONS, FunctionSpec

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]

ROUTES: dict[str, str] = manifest.queue_handlers()
"""Queue → its consumer's handler, as the stack's event source mappings (``infra.manifest``)."""
RELAY = manifest.stream_handler()
FUNCTION_OF: dict[str, str] = {spec.handler: key for key, spec in FUNCTIONS.items()}
"""Entry point → the key of the function that deploys it."""


def load(path: str) -> Handler:
    """The entry point a manifest handler names (``services.deal.handler.events``)."""
    module, _, name = path.rpartition(".")
    handler: Handler = getattr(importlib.import_module(module), name)
    return handler


@dataclass
class LambdaContext:
    """What Powertools and the queue consumers read from a Lambda context object.

    Its clock starts when it is made, as the invocation starts: the time left
    counts down from the function's timeout, so a batch locally stops starting
    records when it would in AWS (``services.common.runtime.process_batch``).
    """

    function_name: str
    memory_limit_in_mb: int = FunctionSpec.memory_mb
    timeout_seconds: float = FunctionSpec.timeout_seconds
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    alias: str | None = None
    """The alias the caller invoked, if any: Lambda names it in the invoked ARN."""
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def of(cls, handler: str, alias: str | None = None) -> LambdaContext:
        """The context of an invocation of the function that deploys entry point ``handler``:
        its name, memory and timeout as the manifest gives them."""
        key = FUNCTION_OF[handler]
        spec = FUNCTIONS[key]
        return cls(key, spec.memory_mb, spec.timeout_seconds, alias=alias)

    @property
    def invoked_function_arn(self) -> str:
        arn = f"arn:aws:lambda:local:000000000000:function:{self.function_name}"
        return f"{arn}:{self.alias}" if self.alias else arn

    def get_remaining_time_in_millis(self) -> int:
        elapsed = time.monotonic() - self.started
        return max(0, int((self.timeout_seconds - elapsed) * 1000))


def websocket_event(
    connection_id: str, route: str, body: str | None, authorizer: dict[str, Any] | None
) -> dict[str, Any]:
    """An API Gateway WebSocket event as a route's function receives it."""
    return {
        "requestContext": {
            "connectionId": connection_id,
            "routeKey": route,
            "eventType": "MESSAGE" if body is not None else route.strip("$").upper(),
            "authorizer": authorizer,
            "apiId": "local",
            "stage": "local",
            "requestTimeEpoch": int(time.time() * 1000),
        },
        "body": body,
        "isBase64Encoded": False,
    }


class Dispatcher:
    def __init__(
        self,
        *,
        client: Callable[[str], Any],
        queues: dict[str, str],
        stream_arn: str,
        schedule_group: str,
        timer_queue_url: str,
        routes: dict[str, str] | None = None,
        clock: Callable[[], float] = time.time,
        within_minute: Callable[[str], float] = lambda _name: random.uniform(0, 60),
    ) -> None:
        self._sqs = client("sqs")
        self._streams = client("dynamodbstreams")
        self._scheduler = client("scheduler")
        self._queues = queues
        self._stream_arn = stream_arn
        self._group = schedule_group
        self._timer_queue = timer_queue_url
        self._paths = routes or ROUTES
        self._routes = {name: load(path) for name, path in self._paths.items()}
        self._relay = load(RELAY)
        self._clock = clock
        self._within_minute = within_minute
        self._last_sequence: dict[str, str] = {}
        self._due: dict[str, tuple[float, str]] = {}
        self._pending: list[dict[str, Any]] = []
        self.errors: list[str] = []

    # --- the stream -------------------------------------------------------------

    def _stream_records(self) -> list[dict[str, Any]]:
        """New records of the games table's stream, read from a fresh iterator each time.

        A fresh iterator after the last sequence number seen, never a kept one:
        moto undoes a cancelled transaction by putting back a copy of the table,
        and an iterator kept from before would go on reading the discarded copy.
        """
        shards = self._streams.describe_stream(StreamArn=self._stream_arn)["StreamDescription"][
            "Shards"
        ]
        records: list[dict[str, Any]] = []
        for shard in shards:
            shard_id = shard["ShardId"]
            last = self._last_sequence.get(shard_id)
            position: dict[str, Any] = (
                {"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": last}
                if last
                else {"ShardIteratorType": "TRIM_HORIZON"}
            )
            iterator = self._streams.get_shard_iterator(
                StreamArn=self._stream_arn, ShardId=shard_id, **position
            )["ShardIterator"]
            found = self._streams.get_records(ShardIterator=iterator)["Records"]
            if found:
                self._last_sequence[shard_id] = max(
                    (r["dynamodb"]["SequenceNumber"] for r in found), key=int
                )
            records.extend(found)
        return records

    def read_up_to(self, shard_id: str) -> int | None:
        """The last sequence number read from a shard (records up to it may be forgotten)."""
        last = self._last_sequence.get(shard_id)
        return int(last) if last else None

    def pump_stream(self) -> int:
        """Relay the stream's new records (and earlier failed ones, first)."""
        records = self._pending + [
            {**r, "eventSource": "aws:dynamodb", "eventSourceARN": self._stream_arn}
            for r in self._stream_records()
        ]
        if not records:
            return 0
        result = self._relay({"Records": records}, LambdaContext.of(RELAY))
        failed = {f["itemIdentifier"] for f in result.get("batchItemFailures", [])}
        if failed:
            first = next(
                i for i, r in enumerate(records) if r["dynamodb"].get("SequenceNumber") in failed
            )
            self._pending = records[first:]
            self.errors.append(f"relay failed at record {first}")
            return first
        self._pending = []
        return len(records)

    # --- queues -----------------------------------------------------------------

    def pump_queue(self, name: str) -> int:
        url = self._queues[name]
        messages = self._sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=manifest.BATCH_SIZE, WaitTimeSeconds=0
        ).get("Messages", [])
        if not messages:
            return 0
        event = {
            "Records": [
                {
                    "messageId": m["MessageId"],
                    "receiptHandle": m["ReceiptHandle"],
                    "body": m["Body"],
                    "eventSource": "aws:sqs",
                }
                for m in messages
            ]
        }
        try:
            result = self._routes[name](event, LambdaContext.of(self._paths[name]))
            failed = {f["itemIdentifier"] for f in result.get("batchItemFailures", [])}
        except Exception:  # a failed invocation: the whole batch comes back, as from Lambda
            failed = {m["MessageId"] for m in messages}
        for m in messages:
            if m["MessageId"] in failed:
                self.errors.append(f"{name}: message {m['MessageId']} failed")
                self._sqs.change_message_visibility(
                    QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0
                )
            else:
                self._sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        return len(messages) - len(failed)

    # --- timers -----------------------------------------------------------------

    def fire_timers(self, *, all_due: bool = False) -> int:
        """Send due schedules' input to their queue and delete them (``all_due``: every one).

        A schedule for 12:00:30 is due at 12:00:00 plus ``within_minute(name)``
        seconds (0 up to 60): up to 30 s early or 29 s late, as Scheduler runs it.
        """
        fired = 0
        now = self._clock()
        for summary in self._scheduler.list_schedules(GroupName=self._group).get("Schedules", []):
            name = summary["Name"]
            if name not in self._due:
                schedule = self._scheduler.get_schedule(GroupName=self._group, Name=name)
                when = datetime.fromisoformat(schedule["ScheduleExpression"][3:-1]).replace(
                    tzinfo=UTC, second=0
                )
                fires = when.timestamp() + self._within_minute(name)
                self._due[name] = (fires, schedule["Target"]["Input"])
            due, body = self._due[name]
            if all_due or due <= now:
                self._sqs.send_message(QueueUrl=self._timer_queue, MessageBody=body)
                self._scheduler.delete_schedule(GroupName=self._group, Name=name)
                del self._due[name]
                fired += 1
        return fired

    # --- all of it --------------------------------------------------------------

    def pump(self) -> int:
        """One pass over every source; returns how many deliveries it made."""
        delivered = self.pump_stream()
        for name in self._queues:
            if name in self._routes:
                delivered += self.pump_queue(name)
        return delivered + self.fire_timers()

    def run_until(self, done: Callable[[], bool], timeout: float, poll: float = 0.2) -> None:
        """Deliver as the platform does until ``done()``: for delays that pass in real time."""
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError(f"not done after {timeout} s")
            if not self.pump():
                time.sleep(poll)

    def run_until_idle(self, limit: int = 1000) -> int:
        total = 0
        for _ in range(limit):
            delivered = self.pump()
            if not delivered:
                return total
            total += delivered
        raise RuntimeError("the dispatcher did not settle")
