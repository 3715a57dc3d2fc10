"""The outside world as the application code sees it: small ports and their AWS adapters.

Application code depends on the protocols; the composition root of each
service wires the AWS adapters, tests wire fakes or moto-backed clients.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from services.common.dynamo import error_code
from services.common.records import Outbound


class Clock(Protocol):
    def now(self) -> float: ...


class SystemClock:
    def now(self) -> float:
        return time.time()


class Entropy(Protocol):
    def new_seed(self, table_id: str, round_number: int) -> str: ...


class SecureEntropy:
    """DEAL-4: production seeds come from the operating system's secure source."""

    def new_seed(self, table_id: str, round_number: int) -> str:
        return secrets.token_hex(32)


class DerivedEntropy:
    """Seeds as HMAC-SHA256(secret, table and round): reproducible where the secret is known.

    For test and rehearsal environments that replay the same matches (fault
    injection, load runs); a deployment without ``CANASTA_SEED_SECRET`` never
    uses it.
    """

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def new_seed(self, table_id: str, round_number: int) -> str:
        message = f"{table_id}:{round_number}".encode()
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()


class Pusher(Protocol):
    def send(self, connection_id: str, message: dict[str, Any]) -> bool:
        """Deliver one message; False if the connection is gone."""
        ...


class Closer(Protocol):
    def close(self, connection_id: str) -> bool:
        """Close a connection as API Gateway drops one (``$disconnect`` runs); False if it
        was gone already."""
        ...


class ApiGatewayPusher:
    """Posts to the API Gateway management API (``@connections``), and closes connections."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def send(self, connection_id: str, message: dict[str, Any]) -> bool:
        data = json.dumps(message, separators=(",", ":")).encode()
        return self._gone_is_false(
            lambda: self._client.post_to_connection(ConnectionId=connection_id, Data=data)
        )

    def close(self, connection_id: str) -> bool:
        return self._gone_is_false(
            lambda: self._client.delete_connection(ConnectionId=connection_id)
        )

    @staticmethod
    def _gone_is_false(call: Callable[[], object]) -> bool:
        try:
            call()
        except Exception as exc:
            if error_code(exc) in ("GoneException", "410"):
                return False
            raise
        return True


class Publisher(Protocol):
    def publish(self, events: Sequence[Outbound]) -> None:
        """Put the events on the bus in order, or raise; ``Unpublished`` says how many of
        them, from the first, the bus took before it stopped."""
        ...


class Unpublished(RuntimeError):
    """The bus took only the first ``published`` of the events, in order: an entry it
    refused (its ``ErrorCode``), or a call that failed, stopped the rest. Entries after
    the refused one in the same call may have been taken too."""

    def __init__(self, published: int, reason: str) -> None:
        super().__init__(reason)
        self.published = published


PUT_EVENTS_ENTRIES = 10
"""The most entries one PutEvents call takes."""
PUT_EVENTS_BYTES = 256 * 1024
"""The most one PutEvents call's entries may add up to, each counted as EventBridge counts
it: its ``Source``, ``DetailType`` and ``Detail`` in UTF-8 (and ``Time`` and ``Resources``,
which these entries never set)."""


class EventBridgePublisher:
    """PutEvents in as few calls as the limits allow (``PUT_EVENTS_ENTRIES`` entries,
    ``PUT_EVENTS_BYTES``), in order; the first entry the bus does not take raises
    ``Unpublished``, so the caller retries from there."""

    def __init__(self, client: Any, bus: str) -> None:
        self._client = client
        self._bus = bus

    def publish(self, events: Sequence[Outbound]) -> None:
        published = 0
        for entries in _calls([self._entry(e) for e in events]):
            try:
                response = self._client.put_events(Entries=entries)
            except Exception as exc:
                raise Unpublished(published, f"PutEvents failed: {exc}") from exc
            failed = response.get("FailedEntryCount", 0)
            if failed:
                answers = response.get("Entries", [])
                # A failed count without an entry naming its error: trust none of the call.
                first = next((i for i, a in enumerate(answers) if a.get("ErrorCode")), 0)
                code = answers[first].get("ErrorCode") if first < len(answers) else None
                raise Unpublished(
                    published + first, f"EventBridge refused {failed} event(s), first: {code}"
                )
            published += len(entries)

    def _entry(self, event: Outbound) -> dict[str, str]:
        return {
            "EventBusName": self._bus,
            "Source": event.source,
            "DetailType": event.detail_type,
            "Detail": json.dumps(event.detail, separators=(",", ":")),
        }


def _size(entry: dict[str, str]) -> int:
    return sum(len(entry[key].encode()) for key in ("Source", "DetailType", "Detail"))


def _calls(entries: Sequence[dict[str, str]]) -> Iterator[list[dict[str, str]]]:
    """The entries in order, cut into PutEvents calls within both limits. An entry over the
    size limit on its own still goes, alone: the bus refuses it and says so."""
    call: list[dict[str, str]] = []
    size = 0
    for entry in entries:
        grown = size + _size(entry)
        if call and (len(call) == PUT_EVENTS_ENTRIES or grown > PUT_EVENTS_BYTES):
            yield call
            call, grown = [], _size(entry)
        call.append(entry)
        size = grown
    if call:
        yield call


class TurnTimers(Protocol):
    def schedule(self, table_id: str, turn_started: int, at: float) -> None: ...


SQS_MAX_DELAY = 900
"""The longest ``DelaySeconds`` SQS accepts."""
SCHEDULER_LEAD = 60
"""How long before a far deadline its schedule is set: Scheduler fires a one-time
schedule at any moment of its minute, so one set a minute early always fires early."""


class DeadlineTurnTimers:
    """TABLE-2 timers that deliver ``{"table_id", "turn_started"}`` to the timer queue at
    the turn's deadline, to the second, and never before it is safe to look.

    A deadline at most 15 minutes away (every turn the stages configure) is an SQS
    message delayed to it: SQS delays to the second. A farther one is a one-time
    EventBridge Scheduler schedule set ``SCHEDULER_LEAD`` before the deadline:
    Scheduler runs a target at any time within the minute of its schedule time,
    so it always arrives early, and the turn service then re-arms the timer for
    the seconds left (an SQS delay). A timer that arrives before the deadline
    never plays the turn. Both survive restarts; a second timer for the same turn
    is harmless (the turn service ignores a timer of a turn that is over). A
    schedule Scheduler cannot deliver (its retries spent, or the queue or role
    refusing it) goes to ``dead_letter_arn`` instead of vanishing: its turn would
    never be auto-played.
    """

    def __init__(
        self,
        sqs: Any,
        queue_url: str,
        *,
        scheduler: Any,
        group: str,
        queue_arn: str,
        role_arn: str,
        dead_letter_arn: str,
        clock: Clock | None = None,
    ) -> None:
        self._sqs = sqs
        self._queue_url = queue_url
        self._scheduler = scheduler
        self._group = group
        self._queue_arn = queue_arn
        self._role_arn = role_arn
        self._dead_letter_arn = dead_letter_arn
        self._clock = clock or SystemClock()

    def schedule(self, table_id: str, turn_started: int, at: float) -> None:
        body = json.dumps({"table_id": table_id, "turn_started": turn_started, "at": at})
        wait = at - self._clock.now()
        if wait <= SQS_MAX_DELAY:
            self._sqs.send_message(
                QueueUrl=self._queue_url, MessageBody=body, DelaySeconds=max(0, math.ceil(wait))
            )
            return
        when = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at - SCHEDULER_LEAD))
        try:
            self._scheduler.create_schedule(
                Name=f"turn-{table_id}-{turn_started}",
                GroupName=self._group,
                ScheduleExpression=f"at({when})",
                FlexibleTimeWindow={"Mode": "OFF"},
                ActionAfterCompletion="DELETE",
                Target={
                    "Arn": self._queue_arn,
                    "RoleArn": self._role_arn,
                    "Input": body,
                    "DeadLetterConfig": {"Arn": self._dead_letter_arn},
                },
            )
        except Exception as exc:
            if error_code(exc) != "ConflictException":
                raise


TASK_ANSWERED_BEFORE = frozenset({"TaskTimedOut", "InvalidToken", "TaskDoesNotExist"})


def send_task_success(machine: Any, task_token: str, output: dict[str, Any]) -> str | None:
    """Answer a Step Functions task; the reason it needs no answer any more (it timed out
    or was answered before), if so."""
    try:
        machine.send_task_success(taskToken=task_token, output=json.dumps(output))
    except Exception as exc:
        if error_code(exc) not in TASK_ANSWERED_BEFORE:
            raise
        return error_code(exc)
    return None
