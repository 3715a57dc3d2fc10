"""The JSON Schema of each EventBridge event's ``detail``, naming who emits and who receives it.

The emitter comes from ``services.common.events``, the consumers from the manifest's
event rules, so a schema cannot name a route the deployment lacks.
"""

from __future__ import annotations

from typing import Any, Final

from infra import manifest
from services.common import constants, events
from services.common.events import EVENT_TYPES
from tools.schemas.common import describe_fields, models_by_name

JSON_SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"


def source_of(detail_type: str) -> str:
    if detail_type not in events.EMITTERS:
        raise ValueError(f"no emitting service for {detail_type}: add it to events.EMITTERS")
    return events.source_of(detail_type)


def consumers_of(detail_type: str) -> list[str]:
    """The consumers (``manifest.CONSUMERS``) whose rule matches this detail-type."""
    return sorted(name for name, types in manifest.CONSUMERS.items() if detail_type in types)


def _outside_readers(detail_type: str) -> str:
    if detail_type not in manifest.OUTSIDE_READERS:
        raise ValueError(f"nothing reads {detail_type}: add a consumer or manifest.OUTSIDE_READERS")
    return manifest.OUTSIDE_READERS[detail_type]


def _consumer_text(consumer: str) -> str:
    # A consumer is named after its queue: "turn-events" is the turn service's event queue.
    service = consumer.removesuffix("-events")
    return f"the {service} service (queue `{constants.queue_name(consumer)}`)"


def event_schema(detail_type: str) -> dict[str, Any]:
    """The JSON Schema of one event's ``detail``, with where it comes from and goes to."""
    model = EVENT_TYPES[detail_type]
    schema = model.model_json_schema()
    describe_fields(schema, model, models_by_name([model]))
    source = source_of(detail_type)
    consumers = consumers_of(detail_type)
    heard_by = (
        "Consumed by " + "; ".join(_consumer_text(c) for c in consumers) + "."
        if consumers
        else f"No consumer in the stack: published for {_outside_readers(detail_type)}."
    )
    summary = schema.pop("description", "")
    emitted = (
        f"Emitted by the {events.EMITTERS[detail_type]} service (source `{source}`). {heard_by}"
    )
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "$id": f"urn:canasta:events:{detail_type}",
        **schema,
        "title": f"{source}@{detail_type}",
        "description": f"{summary}\n\n{emitted}" if summary else emitted,
        "x-detail-type": detail_type,
        "x-source": source,
        "x-consumers": [constants.queue_name(c) for c in consumers],
    }
