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
from typing import Any

from local.aws import LocalAws
from local.dispatcher import LambdaContext
from services.common.auth import Identity, issue_token
from services.common.events import SeatPlayer, TableFormed
from services.connect import handler as connect_handler
from services.turn import handler as turn_handler
from shared_engine import MatchMode

SECRET = "integration-secret"
API_ARN = "arn:aws:execute-api:eu-west-1:123456789012:abc123/local/$connect"


class Inbox:
    """Every message posted to each connection, in order; closed connections answer 410."""

    def __init__(self) -> None:
        self.messages: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.open: set[str] = set()
        self._lock = threading.Lock()

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

    # --- connections ------------------------------------------------------------

    def token(
        self, player_id: str, name: str | None = None, ttl: int = 3600, now: float | None = None
    ) -> str:
        import time

        return issue_token(
            SECRET.encode(), Identity(player_id, name or player_id), now or time.time(), ttl
        )

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

    def connect(self, player_id: str, token: str | None = None) -> str | None:
        """Authorize then connect, as API Gateway does; None when the token is refused."""
        policy = self.authorize(token if token is not None else self.token(player_id))
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
        return {
            "requestContext": {
                "connectionId": connection_id,
                "routeKey": route,
                "eventType": "MESSAGE" if body is not None else route.strip("$").upper(),
                "authorizer": self.authorized.get(connection_id),
                "apiId": "abc123",
                "stage": "local",
            },
            "body": body,
            "isBase64Encoded": False,
        }

    def send(self, connection_id: str, message: dict[str, Any] | str) -> None:
        body = message if isinstance(message, str) else json.dumps(message)
        route = message.get("action", "$default") if isinstance(message, dict) else "$default"
        turn_handler.websocket(self._event(connection_id, str(route), body), LambdaContext("turn"))

    # --- what clients saw ---------------------------------------------------------

    def received(self, connection_id: str) -> list[dict[str, Any]]:
        return self.inbox.messages[connection_id]

    def last(self, connection_id: str, kind: str = "view") -> dict[str, Any] | None:
        return next((m for m in reversed(self.received(connection_id)) if m["type"] == kind), None)

    # --- the platform -----------------------------------------------------------

    def settle(self) -> None:
        self.aws.dispatcher.run_until_idle()

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
