"""What every WebSocket route does before its use case: check, parse, guard.

The identity comes from the connection (the ``$connect`` authorizer), the
size is bounded before parsing, the body is parsed by the route's pydantic
union, and whatever fails after that still answers the client. Every answer
to a message echoes its correlation id (``cid``), even a refusal of a message
that did not parse, as long as the ``cid`` itself is valid.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final, Generic, TypeVar

from pydantic import ConfigDict, TypeAdapter, ValidationError

from services.common.frozen import Frozen
from services.common.protocol import CorrelationId
from services.common.telemetry import Telemetry

CID: Final[TypeAdapter[str]] = TypeAdapter(CorrelationId, config=ConfigDict(defer_build=True))

M = TypeVar("M")


class Refusal(Frozen):
    code: str
    message: str
    cid: str | None = None


class Incoming(Frozen, Generic[M]):
    player_id: str
    name: str
    message: M


def read_message(
    adapter: TypeAdapter[M], player: tuple[str, str] | None, body: str | None, max_bytes: int
) -> Incoming[M] | Refusal:
    """The parsed message with its sender, or why it is refused (nothing has changed)."""
    fits = body is not None and len(body.encode()) <= max_bytes
    if player is None:
        cid = salvaged_cid(body) if body is not None and fits else None
        return Refusal("not_seated", "this connection has no player", cid)
    if body is None or not fits:
        return Refusal("message_too_large", f"messages are limited to {max_bytes} bytes")
    try:
        message = adapter.validate_json(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        unknown = first["type"] in ("union_tag_invalid", "union_tag_not_found")
        where = ".".join(str(p) for p in first["loc"]) or "message"
        code = "unknown_action" if unknown and not first["loc"] else "malformed"
        return Refusal(code, f"{where}: {first['msg']}", salvaged_cid(body))
    return Incoming(player[0], player[1], message)


def salvaged_cid(body: str) -> str | None:
    """The valid ``cid`` of a message refused before it parsed, so the refusal can echo it."""
    try:
        raw: Any = json.loads(body)
        return CID.validate_python(raw.get("cid")) if isinstance(raw, dict) else None
    except (ValueError, RecursionError, ValidationError):
        return None


def guarded(
    telemetry: Telemetry,
    refuse: Callable[[Refusal], None],
    handle: Callable[[], None],
    body: str | None = None,
) -> None:
    """Run a route's use case; an unexpected failure is logged, counted and answered
    (with the ``cid`` of ``body``, the message that failed)."""
    try:
        handle()
    except Exception:
        telemetry.count("internal_errors")
        telemetry.exception("message failed")
        cid = salvaged_cid(body) if body is not None else None
        refuse(Refusal("internal", "the server could not handle this message", cid))
