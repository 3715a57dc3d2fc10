"""What every WebSocket route does before its use case: check, parse, guard.

The identity comes from the connection (the ``$connect`` authorizer), the
size is bounded before parsing, the body is parsed by the route's pydantic
union, and whatever fails after that still answers the client.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from pydantic import TypeAdapter, ValidationError

from services.common.telemetry import Telemetry

M = TypeVar("M")


@dataclass(frozen=True)
class Refusal:
    code: str
    message: str


@dataclass(frozen=True)
class Incoming(Generic[M]):
    player_id: str
    name: str
    message: M


def read_message(
    adapter: TypeAdapter[M], player: tuple[str, str] | None, body: str | None, max_bytes: int
) -> Incoming[M] | Refusal:
    """The parsed message with its sender, or why it is refused (nothing has changed)."""
    if player is None:
        return Refusal("not_seated", "this connection has no player")
    if body is None or len(body.encode()) > max_bytes:
        return Refusal("message_too_large", f"messages are limited to {max_bytes} bytes")
    try:
        message = adapter.validate_json(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        unknown = first["type"] in ("union_tag_invalid", "union_tag_not_found")
        where = ".".join(str(p) for p in first["loc"]) or "message"
        code = "unknown_action" if unknown and not first["loc"] else "malformed"
        return Refusal(code, f"{where}: {first['msg']}")
    return Incoming(player[0], player[1], message)


def guarded(
    telemetry: Telemetry, refuse: Callable[[Refusal], None], handle: Callable[[], None]
) -> None:
    """Run a route's use case; an unexpected failure is logged, counted and answered."""
    try:
        handle()
    except Exception:
        telemetry.count("internal_errors")
        telemetry.exception("message failed")
        refuse(Refusal("internal", "the server could not handle this message"))
