"""The operators' actions as the console asks for them: plan, then apply what was confirmed.

The console shows a plan and the operator confirms it; the apply that follows
carries the plan's changes as confirmed and an action id of the console's. The
function plans again from what it reads at that moment and applies only a plan
equal to the confirmed one (a move, a settlement or a credit made meanwhile makes
the operator look again), then records the action in the audit under its id, with
the caller AWS authenticated as the operator, whatever came of it. A repeated id
is answered with what was recorded under it and does nothing again.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StringConstraints, TypeAdapter

from services.common.adapters import Clock
from services.common.records import AuditRecord
from services.common.telemetry import Telemetry
from services.ops.audit import AuditTrail
from services.ops.plans import ActionRefused, Plan, Planner

Id = Annotated[str, StringConstraints(min_length=1, max_length=128)]
Reason = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]
"""Every action says why: the audit keeps it."""
ActionId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9-]{16,64}$")]
Amount = Annotated[StrictInt, Field(ge=-1_000_000_000, le=1_000_000_000)]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)

    reason: Reason


class Void(_Request):
    action: Literal["void"]
    table_id: Id


class Close(_Request):
    action: Literal["close"]
    table_id: Id


class Credit(_Request):
    action: Literal["credit"]
    player_id: Id
    points: Amount = 0
    jokers: Amount = 0
    key: Annotated[str, StringConstraints(pattern=r"^[\x21-\x7e]{1,64}$")] | None = None


class Kick(_Request):
    action: Literal["kick"]
    connection_id: Id


ActionRequest = Annotated[Void | Close | Credit | Kick, Field(discriminator="action")]


class Apply(BaseModel):
    """A confirmed plan to carry out once, under the console's ``action_id``."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)

    request: ActionRequest
    action_id: ActionId
    confirmed: dict[str, Any]
    """The plan's changes as the operator saw them."""


PLAN = TypeAdapter(ActionRequest, config=ConfigDict(defer_build=True))


def shown(plan: Plan, reason: str) -> dict[str, Any]:
    """A plan as the console shows it to the operator."""
    return {
        "action": plan.action,
        "target": plan.target,
        "reason": reason,
        "changes": plan.changes,
        "done_before": plan.done_before,
    }


OUTCOME_FIELDS = ("outcome", "balance", "error", "message")
"""What an action's outcome adds to its plan's changes in the audit record."""


def answer(record: AuditRecord) -> dict[str, Any]:
    """What an applied action answers (the same for a repeat of its id)."""
    return {
        "action": record.action,
        "target": record.target,
        **{k: v for k, v in record.changes.items() if k in OUTCOME_FIELDS},
        "changes": {k: v for k, v in record.changes.items() if k not in OUTCOME_FIELDS},
    }


class OperatorService:
    def __init__(
        self, planner: Planner, audit: AuditTrail, clock: Clock, telemetry: Telemetry
    ) -> None:
        self._planner = planner
        self._audit = audit
        self._clock = clock
        self._telemetry = telemetry

    def plan(self, request: Void | Close | Credit | Kick) -> Plan:
        """What ``request`` would change now; nothing is written, nothing recorded."""
        if isinstance(request, Void):
            return self._planner.void(request.table_id, request.reason)
        if isinstance(request, Close):
            return self._planner.close(request.table_id, request.reason)
        if isinstance(request, Credit):
            return self._planner.credit(
                request.player_id, request.points, request.jokers, request.reason, request.key
            )
        return self._planner.kick(request.connection_id)

    def apply(self, confirmed: Apply, operator: str) -> AuditRecord:
        """Carry out the confirmed plan once and record it; a refusal is recorded too,
        and raised after, with nothing changed."""
        request = confirmed.request
        self._telemetry.annotate(action=request.action, action_id=confirmed.action_id)
        kept = self._audit.recorded(confirmed.action_id)
        if kept is not None:
            return self._repeated(kept, request, operator)
        try:
            plan = self.plan(request)
            if plan.done_before:
                outcome: dict[str, Any] = {"outcome": "done before"}
            elif _as_sent(plan.changes) != confirmed.confirmed:
                raise ActionRefused(
                    "plan_changed",
                    "the action would change something else than the plan confirmed: "
                    "look at the new plan and confirm it",
                )
            else:
                outcome = plan.carry_out(operator)
        except ActionRefused as refused:
            outcome = {"outcome": "refused", "error": refused.code, "message": refused.message}
        record = self._audit.record(
            AuditRecord(
                action_id=confirmed.action_id,
                at=self._clock.now(),
                operator=operator,
                action=request.action,
                target=_target(request),
                reason=request.reason,
                outcome=outcome["outcome"],
                # What the operator confirmed: applied only when it is what was done.
                changes={**confirmed.confirmed, **outcome},
            )
        )
        self._telemetry.count(f"operator_{request.action}_{record.outcome.replace(' ', '_')}")
        return _refusing(record)

    def _repeated(
        self, kept: AuditRecord, request: Void | Close | Credit | Kick, operator: str
    ) -> AuditRecord:
        """A repeat of an action id: what was recorded under it, if it is the same action."""
        asked = (request.action, _target(request), operator)
        if (kept.action, kept.target, kept.operator) != asked:
            raise ActionRefused(
                "idempotency_conflict", "this action id was used for another action before"
            )
        return _refusing(kept)


def _refusing(record: AuditRecord) -> AuditRecord:
    if record.outcome == "refused":
        raise ActionRefused(str(record.changes["error"]), str(record.changes["message"]))
    return record


def _target(request: Void | Close | Credit | Kick) -> str:
    if isinstance(request, (Void, Close)):
        return request.table_id
    if isinstance(request, Credit):
        return request.player_id
    return request.connection_id


def _as_sent(changes: dict[str, Any]) -> Any:
    """The changes as the console received them in the plan (JSON)."""
    return json.loads(json.dumps(changes))


__all__ = [
    "PLAN",
    "ActionRefused",
    "Apply",
    "Close",
    "Credit",
    "Kick",
    "OperatorService",
    "Void",
    "answer",
    "shown",
]
