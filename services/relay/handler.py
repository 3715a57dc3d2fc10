"""Lambda entry point of the relay: a DynamoDB stream batch of the games table."""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from services.common.observability import Observability
from services.common.runtime import Clients
from services.common.settings import Settings
from services.relay.app import RelayService
from services.relay.root import build

obs = Observability("relay")


@cache
def service() -> RelayService:
    settings = Settings()
    return build(settings, Clients(settings), obs.telemetry)


class StreamEvent(BaseModel):
    model_config = ConfigDict(extra="ignore")

    records: list[dict[str, Any]] = Field(alias="Records")


@obs.handler
def stream(event: dict[str, Any], context: Any) -> dict[str, Any]:
    failed = service().relay(StreamEvent.model_validate(event).records)
    return {"batchItemFailures": [{"itemIdentifier": seq} for seq in failed[:1]]}
