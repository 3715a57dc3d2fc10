"""What each function's role allows, derived from its ``FunctionSpec`` alone.

The stack renders every handler grant from ``grants`` (``CanastaStack._grant``),
and the local stack evaluates every AWS call a handler makes against the very
same grants (``local/iam.py``), so a permission a handler lacks in production
is denied in the tests too. Resources are named by kind here and turned into
ARNs by whoever renders them: CloudFormation references in the stack, the
embedded AWS's ARNs locally. ``tests/infra`` checks that the synthesized
template holds exactly these statements besides the ones the platform itself
needs (logs, the event source mappings, tracing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from infra.manifest import FunctionSpec
from services.common.constants import TableSpec


class Kind(Enum):
    TABLE = "table"
    BUS = "bus"
    STATE_MACHINE = "state-machine"
    CONNECTIONS = "connections"
    """``POST`` on every ``@connections`` of the stage (``.../<stage>/POST/@connections/*``)."""
    SCHEDULES = "schedules"
    """Every schedule of the stage's turn-timer group (``schedule/<group>/*``)."""
    SCHEDULER_ROLE = "scheduler-role"
    TIMER_QUEUE = "timer-queue"


@dataclass(frozen=True)
class Resource:
    kind: Kind
    table: TableSpec | None = None


@dataclass(frozen=True)
class Grant:
    actions: tuple[str, ...]
    resource: Resource
    conditions: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


TASK_RESPONSE = ("states:SendTaskSuccess", "states:SendTaskFailure", "states:SendTaskHeartbeat")
"""What CDK's ``grant_task_response`` grants; the service answers with success only."""


def grants(spec: FunctionSpec) -> list[Grant]:
    """Every statement of the function's role that its handler code relies on."""
    found = [
        Grant(tuple(actions), Resource(Kind.TABLE, table)) for table, actions in spec.tables.items()
    ]
    if spec.publishes:
        found.append(Grant(("events:PutEvents",), Resource(Kind.BUS)))
    if spec.starts_tickets:
        found.append(Grant(("states:StartExecution",), Resource(Kind.STATE_MACHINE)))
    if spec.answers_tickets:
        found.append(Grant(TASK_RESPONSE, Resource(Kind.STATE_MACHINE)))
    if spec.pushes:
        found.append(Grant(("execute-api:ManageConnections",), Resource(Kind.CONNECTIONS)))
    if spec.schedules_timers:
        # Near deadlines are delayed messages, far ones schedules (DeadlineTurnTimers).
        found.append(Grant(("sqs:SendMessage",), Resource(Kind.TIMER_QUEUE)))
        found.append(Grant(("scheduler:CreateSchedule",), Resource(Kind.SCHEDULES)))
        found.append(
            Grant(
                ("iam:PassRole",),
                Resource(Kind.SCHEDULER_ROLE),
                {"StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}},
            )
        )
    return found
