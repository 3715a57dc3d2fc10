"""Drives the real handlers the way API Gateway and the platform would.

Clients connect through the real authorizer and ``$connect`` handler, send
API Gateway-shaped WebSocket events to the turn handler, and receive what the
services post to ``@connections``, recorded here message by message.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import defaultdict
from collections.abc import Callable
from functools import cache, cached_property
from typing import Any

from local.aws import LocalAws
from local.dispatcher import LambdaContext, load, websocket_event
from local.gateway import ROUTES
from local.issuer import LocalIssuer
from services.common import constants
from services.common.auth import Identity
from services.common.dynamo_storage import DynamoStorage, to_item
from services.common.events import SeatPlayer, TableFormed
from services.common.presence import PresenceStore
from services.common.records import TableRecord, table_key
from services.common.store import GameStore
from services.connect import handler as connect_handler
from shared_engine import MatchMode
from tests.integration.history import Move, moves_of

API_ARN = "arn:aws:execute-api:eu-west-1:123456789012:abc123/local/$connect"
CAPTURE_QUEUE = "canasta-test-capture"
_DEFAULT_TOKEN: Any = object()


@cache
def served_issuer() -> LocalIssuer:
    """The tests' token issuer: one key pair, its JWKS served on 127.0.0.1 for the session."""
    return LocalIssuer().serve()


class Inbox:
    """Every message posted to each connection, in order; closed connections answer 410."""

    def __init__(self) -> None:
        self.messages: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.open: set[str] = set()
        self._lock = threading.Lock()
        self.on_close: Callable[[str], None] | None = None
        """What closes a connection as API Gateway does (the harness's ``disconnect``)."""

    def close(self, connection_id: str) -> bool:
        """``DELETE @connections/{id}``: an open connection closes and ``$disconnect`` runs."""
        if connection_id not in self.open or self.on_close is None:
            return False
        self.on_close(connection_id)
        return True

    def deliver(self, connection_id: str, data: bytes) -> bool:
        with self._lock:
            if connection_id not in self.open:
                return False
            self.messages[connection_id].append(json.loads(data))
            return True


class Harness:
    def __init__(self, aws: LocalAws, inbox: Inbox) -> None:
        self.aws = aws
        self.inbox = inbox
        self.authorized: dict[str, dict[str, str]] = {}
        inbox.on_close = self.disconnect

    # --- connections ------------------------------------------------------------

    def token(
        self, player_id: str, name: str | None = None, ttl: int = 3600, now: float | None = None
    ) -> str:
        return self.aws.issuer.issue(Identity(player_id, name or player_id), now=now, ttl=ttl)

    def authorize(self, token: str | None) -> dict[str, Any]:
        event = {
            "type": "REQUEST",
            "methodArn": API_ARN,
            "queryStringParameters": {} if token is None else {"token": token},
            "requestContext": {
                "connectionId": "pending",
                "routeKey": "$connect",
                "eventType": "CONNECT",
            },
        }
        return connect_handler.authorize(event, LambdaContext("connect-authorizer"))

    def connect(self, player_id: str, token: str | None = _DEFAULT_TOKEN) -> str | None:
        """Authorize then connect, as API Gateway does; None when the token is refused.

        Without ``token`` a fresh valid token for ``player_id`` is used; ``None``
        connects with no token in the query string at all.
        """
        try:
            policy = self.authorize(self.token(player_id) if token is _DEFAULT_TOKEN else token)
        except Exception as exc:
            if str(exc) != connect_handler.UNAUTHORIZED:
                raise
            return None  # an expired token: API Gateway answers 401
        if policy["policyDocument"]["Statement"][0]["Effect"] != "Allow":
            return None
        connection_id = f"conn-{uuid.uuid4().hex[:12]}"
        self.authorized[connection_id] = policy["context"]
        self.inbox.open.add(connection_id)
        result = connect_handler.connect(
            self._event(connection_id, "$connect", None), LambdaContext("connect")
        )
        assert result["statusCode"] == 200
        return connection_id

    def disconnect(self, connection_id: str) -> None:
        self.inbox.open.discard(connection_id)
        connect_handler.disconnect(
            self._event(connection_id, "$disconnect", None), LambdaContext("disconnect")
        )

    def drop(self, connection_id: str) -> None:
        """The client vanished without API Gateway telling anyone: posts now get 410."""
        self.inbox.open.discard(connection_id)

    def _event(self, connection_id: str, route: str, body: str | None) -> dict[str, Any]:
        return websocket_event(connection_id, route, body, self.authorized.get(connection_id))

    def send(self, connection_id: str, message: dict[str, Any] | str) -> dict[str, Any]:
        """One WebSocket message, routed on ``action`` as API Gateway routes it
        (``$default`` when it names no route); returns the handler's response."""
        body = message if isinstance(message, str) else json.dumps(message)
        action = message.get("action") if isinstance(message, dict) else None
        route = action if isinstance(action, str) and action in ROUTES else "$default"
        return load(ROUTES[route])(self._event(connection_id, route, body), LambdaContext(route))

    def play(
        self, connection_id: str, table_id: str, version: int, move: dict[str, Any]
    ) -> dict[str, Any]:
        return self.send(
            connection_id,
            {"action": "play", "table_id": table_id, "version": version, "move": move},
        )

    # --- what clients saw ---------------------------------------------------------

    def received(self, connection_id: str) -> list[dict[str, Any]]:
        return self.inbox.messages[connection_id]

    def last(self, connection_id: str, kind: str = "view") -> dict[str, Any] | None:
        return next((m for m in reversed(self.received(connection_id)) if m["type"] == kind), None)

    # --- what the services stored -------------------------------------------------

    @cached_property
    def store(self) -> GameStore:
        return GameStore(self.storage)

    @cached_property
    def storage(self) -> DynamoStorage:
        return DynamoStorage.of(self.aws.client("dynamodb"), self.aws.settings)

    @cached_property
    def presence(self) -> PresenceStore:
        return PresenceStore(self.storage)

    def table(self, table_id: str) -> TableRecord:
        table = self.store.get_table(table_id)
        assert table is not None, f"no table {table_id}"
        return table

    def history(self, table_id: str) -> list[dict[str, Any]]:
        """Every item of a table as DynamoDB stores it, in key order: logs, rounds, scores,
        the table (what the stream and an auditor see, attribute maps and all)."""
        return [to_item(i) for i in self.storage.query("games", constants.table_pk(table_id))]

    def item(self, table_id: str, sk: str) -> dict[str, Any] | None:
        """One item of a table as DynamoDB stores it."""
        found = self.storage.get("games", table_key(table_id, sk))
        return to_item(found) if found else None

    def items(self, table_id: str, prefix: str = "") -> list[dict[str, Any]]:
        """The table's stored items whose sort key starts with ``prefix``, in key order."""
        return [i for i in self.history(table_id) if i["sk"]["S"].startswith(prefix)]

    def logs(self, table_id: str, round_number: int | None = None) -> list[Move]:
        """Every move played at the table (of one round, if given), in order, as its items
        hold them (``history.moves_of``)."""
        return moves_of(self.history(table_id), round_number)

    def connection_items(self) -> list[dict[str, Any]]:
        return self.aws.client("dynamodb").scan(
            TableName=self.aws.settings.connections_table, ConsistentRead=True
        )["Items"]

    def schedules(self) -> list[str]:
        group = self.aws.settings.schedule_group
        listed = self.aws.client("scheduler").list_schedules(GroupName=group)
        return [s["Name"] for s in listed.get("Schedules", [])]

    # --- the platform -----------------------------------------------------------

    def settle(self) -> None:
        self.aws.dispatcher.run_until_idle()

    def publish(self, detail_type: str, detail: dict[str, Any], source: str) -> None:
        """Put one event on the bus, as a producer (or EventBridge redelivering) would."""
        response = self.aws.client("events").put_events(
            Entries=[
                {
                    "EventBusName": self.aws.settings.event_bus,
                    "Source": source,
                    "DetailType": detail_type,
                    "Detail": json.dumps(detail),
                }
            ]
        )
        assert response["FailedEntryCount"] == 0, response

    def capture(self) -> EventCapture:
        """From now on, keep a copy of every event put on the bus (an extra rule and queue)."""
        return EventCapture(self.aws)

    def start_table(
        self, table_id: str, players: list[str], mode: MatchMode = MatchMode.ONE_ROUND
    ) -> dict[int, str]:
        """Connect the four players, form their table, and return seat → connection."""
        connections: dict[int, str] = {}
        for seat, player in enumerate(players, start=1):
            connection = self.connect(player)
            assert connection is not None
            connections[seat] = connection
        self.form_table(table_id, players, mode)
        return connections

    def form_table(
        self, table_id: str, players: list[str], mode: MatchMode = MatchMode.THREE_ROUNDS
    ) -> None:
        """Publish ``TableFormed`` as matchmaking does, then let the platform deliver it."""
        event = TableFormed(
            table_id=table_id,
            mode=mode,
            seats={str(i + 1): SeatPlayer(player_id=p, name=p) for i, p in enumerate(players)},  # type: ignore[misc]
        )
        self.aws.client("events").put_events(
            Entries=[
                {
                    "EventBusName": self.aws.settings.event_bus,
                    "Source": "canasta.matchmaking",
                    "DetailType": "TableFormed",
                    "Detail": event.model_dump_json(),
                }
            ]
        )
        self.settle()


def sqs_event(*bodies: dict[str, Any] | str) -> dict[str, Any]:
    """An SQS batch as Lambda's event source mapping delivers it."""
    return {
        "Records": [
            {
                "messageId": str(uuid.uuid4()),
                "receiptHandle": f"handle-{i}",
                "body": body if isinstance(body, str) else json.dumps(body),
                "eventSource": "aws:sqs",
            }
            for i, body in enumerate(bodies)
        ]
    }


class EventCapture:
    """A queue fed by a catch-all rule on the bus: every event as a consumer receives it."""

    def __init__(self, aws: LocalAws) -> None:
        sqs = aws.client("sqs")
        events = aws.client("events")
        self._sqs = sqs
        self._url = sqs.create_queue(QueueName=CAPTURE_QUEUE)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=self._url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        bus = aws.settings.event_bus
        events.put_rule(
            Name="test-capture",
            EventBusName=bus,
            EventPattern=json.dumps({"source": [{"prefix": "canasta"}]}),
        )
        events.put_targets(
            Rule="test-capture", EventBusName=bus, Targets=[{"Id": "capture", "Arn": arn}]
        )
        self.seen: list[dict[str, Any]] = []

    def drain(self) -> list[dict[str, Any]]:
        """Every event captured so far (bodies as the consumers' queues receive them)."""
        while True:
            messages = self._sqs.receive_message(
                QueueUrl=self._url, MaxNumberOfMessages=10, WaitTimeSeconds=0
            ).get("Messages", [])
            if not messages:
                return self.seen
            for message in messages:
                self.seen.append(json.loads(message["Body"]))
                self._sqs.delete_message(QueueUrl=self._url, ReceiptHandle=message["ReceiptHandle"])

    def of_type(self, detail_type: str) -> list[dict[str, Any]]:
        return [e for e in self.drain() if e["detail-type"] == detail_type]
