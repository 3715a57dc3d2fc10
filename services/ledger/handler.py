"""Lambda entry points of the ledger: match settlement from its queue, and its API.

The API is invoked directly (``lambda:InvokeFunction``) by the platform's other
rummy modes, which share the account's points and spare jokers.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from services.common.events import EventEnvelope, MatchEnded, TableAborted
from services.common.observability import Observability
from services.common.runtime import Clients, process_batch
from services.common.settings import Settings
from services.ledger.app import LedgerService
from services.ledger.book import InsufficientFunds
from services.ledger.root import build

obs = Observability("ledger")


@cache
def service() -> LedgerService:
    settings = Settings()
    return build(settings, Clients(settings), obs.telemetry)


def _on_event(body: dict[str, Any]) -> None:
    detail = EventEnvelope.model_validate(body).parsed()
    if isinstance(detail, MatchEnded):
        service().match_ended(detail)
    elif isinstance(detail, TableAborted):
        service().table_aborted(detail)


@obs.handler
def events(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_batch(event, context, _on_event, obs.logger.exception)


class BalanceQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    op: Literal["balance"]
    account: str = Field(min_length=1, max_length=64)


class Booking(BaseModel):
    """A credit (positive) or debit (negative, must be covered), once per ``idempotency_key``."""

    model_config = ConfigDict(extra="forbid")

    op: Literal["post"]
    account: str = Field(min_length=1, max_length=64)
    idempotency_key: str = Field(min_length=8, max_length=128)
    points: int = 0
    jokers: int = 0


LedgerRequest = TypeAdapter(Annotated[BalanceQuery | Booking, Field(discriminator="op")])


@obs.handler
def api(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Answers every request; refusals are answers (``error``), not function errors."""
    try:
        request = LedgerRequest.validate_python(event)
    except ValidationError as exc:
        return {"error": "malformed", "message": str(exc.errors()[0]["msg"])}
    try:
        if isinstance(request, BalanceQuery):
            balance = service().balance(request.account)
        else:
            balance = service().post(
                request.account, request.idempotency_key, request.points, request.jokers
            )
    except InsufficientFunds:
        return {"account": request.account, "error": "insufficient_balance"}
    return {"account": request.account, "points": balance.points, "jokers": balance.jokers}
