"""Lambda entry point of the relay: a DynamoDB stream batch of the games table."""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from services.common.dynamo_storage import from_item
from services.common.observability import Observability
from services.common.runtime import Clients
from services.common.settings import Settings
from services.relay.app import RelayService, StreamRecord
from services.relay.root import build

obs = Observability("relay")


@cache
def service() -> RelayService:
    settings = Settings()
    return build(settings, Clients(settings), obs.telemetry)


class StreamEvent(BaseModel):
    model_config = ConfigDict(extra="ignore")

    records: list[dict[str, Any]] = Field(alias="Records")

    def changes(self) -> list[StreamRecord]:
        """The records with their new images read from attribute maps into items."""
        changes = []
        for record in self.records:
            change = record.get("dynamodb", {})
            image = change.get("NewImage")
            changes.append(
                StreamRecord(
                    record.get("eventName", ""),
                    change.get("SequenceNumber", ""),
                    from_item(image) if image is not None else None,
                )
            )
        return changes


@obs.handler
def stream(event: dict[str, Any], context: Any) -> dict[str, Any]:
    failed = service().relay(StreamEvent.model_validate(event).changes())
    return {"batchItemFailures": [{"itemIdentifier": seq} for seq in failed[:1]]}
