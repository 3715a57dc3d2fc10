"""Lambda entry points of the connect service: the ``$connect`` authorizer, connect, disconnect."""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from services.common.auth import ExpiredToken, Identity, InvalidToken
from services.common.observability import Observability
from services.common.runtime import Clients, WebSocketEvent
from services.common.settings import Settings
from services.connect.app import ConnectService
from services.connect.root import build

obs = Observability("connect")
UNAUTHORIZED = "Unauthorized"
"""The error message API Gateway turns into 401 (the client should get a new token)."""


@cache
def service() -> ConnectService:
    settings = Settings()
    return build(settings, Clients(settings), obs.telemetry)


class AuthorizerEvent(BaseModel):
    """A REQUEST authorizer event; the token comes in the query string (browsers set no headers)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    method_arn: str = Field(alias="methodArn")
    query: dict[str, str] | None = Field(default=None, alias="queryStringParameters")


def _policy(principal: str, effect: str, resource: str, context: dict[str, str]) -> dict[str, Any]:
    return {
        "principalId": principal,
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [{"Action": "execute-api:Invoke", "Effect": effect, "Resource": resource}],
        },
        "context": context,
    }


@obs.handler
def authorize(event: dict[str, Any], context: Any) -> dict[str, Any]:
    request = AuthorizerEvent.model_validate(event)
    token = (request.query or {}).get("token", "")
    try:
        identity = service().authorize(token)
    except InvalidToken as exc:
        obs.telemetry.count("tokens_refused")
        obs.logger.info("token refused", extra={"reason": str(exc)})
        if isinstance(exc, ExpiredToken):
            # API Gateway answers this exact error with 401; a Deny policy gives 403.
            raise Exception(UNAUTHORIZED) from None
        return _policy("anonymous", "Deny", request.method_arn, {})
    return _policy(
        identity.player_id,
        "Allow",
        request.method_arn,
        {"player_id": identity.player_id, "name": identity.name},
    )


@obs.handler
def connect(event: dict[str, Any], context: Any) -> dict[str, Any]:
    request = WebSocketEvent.model_validate(event)
    player = request.player
    if player is None:
        return {"statusCode": 401}
    service().connect(request.request_context.connection_id, Identity(*player))
    return {"statusCode": 200}


@obs.handler
def disconnect(event: dict[str, Any], context: Any) -> dict[str, Any]:
    request = WebSocketEvent.model_validate(event)
    service().disconnect(request.request_context.connection_id)
    return {"statusCode": 200}
