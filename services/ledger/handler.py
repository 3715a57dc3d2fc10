"""Lambda entry points of the ledger: match settlement from its queue, and its API.

The API is invoked directly (``lambda:InvokeFunction``) by the platform's other
rummy modes, which share the account's points and spare jokers.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, TypeAdapter, ValidationError

from services.common.events import MatchEnded, TableAborted
from services.common.identities import MAX_SUBJECT
from services.common.observability import Observability
from services.common.runtime import Clients, EventRoutes, process_batch
from services.common.settings import MAX_BOOKING_JOKERS, MAX_BOOKING_POINTS, Settings
from services.ledger.app import BookingRefused, LedgerService
from services.ledger.root import build

obs = Observability("ledger")


@cache
def service() -> LedgerService:
    settings = Settings()
    return build(settings, Clients(settings), obs.telemetry)


EVENTS = EventRoutes(
    obs.telemetry,
    {
        MatchEnded: lambda ended: service().match_ended(ended),
        TableAborted: lambda aborted: service().table_aborted(aborted),
    },
)


@obs.handler
def events(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_batch(event, context, EVENTS, obs.logger.exception, obs.telemetry)


Points = Annotated[StrictInt, Field(ge=-MAX_BOOKING_POINTS, le=MAX_BOOKING_POINTS)]
Jokers = Annotated[StrictInt, Field(ge=-MAX_BOOKING_JOKERS, le=MAX_BOOKING_JOKERS)]
Subject = Annotated[str, Field(min_length=1, max_length=MAX_SUBJECT)]
"""An account as the other modes know it: the player's ``sub``, exactly as in their token."""


class BalanceQuery(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    op: Literal["balance"]
    account: Subject


class Booking(BaseModel):
    """A credit (positive) or debit (negative, must be covered), once per ``idempotency_key``.

    Strict: ``"500"``, ``500.0`` or ``true`` is no amount; nor is anything beyond the
    bounds every client shares (the client's own limits are narrower)."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    op: Literal["post"]
    account: Subject
    idempotency_key: str = Field(min_length=8, max_length=128, pattern=r"^[\x21-\x7e]+$")
    points: Points = 0
    jokers: Jokers = 0


LedgerRequest = TypeAdapter(
    Annotated[BalanceQuery | Booking, Field(discriminator="op")],
    config=ConfigDict(defer_build=True),
)


def client_of(context: Any) -> str | None:
    """The alias the caller invoked (``arn:…:function:name:alias``): who the caller is.

    Each configured client may invoke only its own alias (the stack grants
    ``lambda:InvokeFunction`` per alias); Lambda, not the caller, sets this ARN.
    """
    parts = str(getattr(context, "invoked_function_arn", "")).split(":")
    return parts[7] if len(parts) == 8 else None


@obs.handler
def api(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Answers every request; refusals are answers (``error``), not function errors."""
    try:
        request = LedgerRequest.validate_python(event)
    except ValidationError as exc:
        return {"error": "malformed", "message": str(exc.errors()[0]["msg"])}
    client = client_of(context)
    try:
        if isinstance(request, BalanceQuery):
            balance = service().balance(client, request.account)
        else:
            balance = service().post(
                client, request.account, request.idempotency_key, request.points, request.jokers
            )
    except BookingRefused as refused:
        obs.telemetry.count(f"refused_{refused.code}")
        return {"account": request.account, "error": refused.code, "message": refused.message}
    return {"account": request.account, "points": balance.points, "jokers": balance.jokers}
