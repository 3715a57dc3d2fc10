"""What each function's role allows, derived from its ``FunctionSpec`` alone.

The stack renders every handler grant from ``grants`` (``infra.components.functions``),
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

from infra.manifest import FunctionSpec, emitted, operator_function
from services.common import constants
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
    TABLE_INDEXES = "table-indexes"
    """Every index of a table (``<table ARN>/index/*``)."""
    DEAD_LETTERS = "dead-letters"
    """Every dead-letter queue of the stage."""
    STACK = "stack"
    """The stage's CloudFormation stack (its outputs name everything else)."""
    CLOSE_CONNECTIONS = "close-connections"
    """``DELETE`` on every ``@connections`` of the stage: closing a player's socket."""
    FUNCTION = "function"
    """One function of the stage (``Resource.function``: its manifest key)."""


@dataclass(frozen=True)
class Resource:
    kind: Kind
    table: TableSpec | None = None
    function: str | None = None


ConditionValues = str | tuple[str, ...]
"""One value of a condition key, or several (the key matches any of them)."""


@dataclass(frozen=True)
class Grant:
    actions: tuple[str, ...]
    resource: Resource
    conditions: Mapping[str, Mapping[str, ConditionValues]] = field(default_factory=dict)
    """Operator → condition key → value(s), as a statement's ``Condition`` has them."""

    def condition_block(self) -> dict[str, dict[str, str | list[str]]]:
        """The statement's ``Condition`` in IAM's JSON (several values as a list)."""
        return {
            operator: {
                key: list(value) if isinstance(value, tuple) else value
                for key, value in values.items()
            }
            for operator, values in self.conditions.items()
        }


EVENT_SOURCE = "events:source"
EVENT_DETAIL_TYPE = "events:detail-type"
"""The condition keys of each entry of a PutEvents call."""
TASK_ANSWER = ("states:SendTaskSuccess",)
"""A ticket's task is answered with success only (seated, gone): never a failure, and no
heartbeat (the task's timeout is the ticket's queue time)."""


def grants(spec: FunctionSpec) -> list[Grant]:
    """Every statement of the function's role that its handler code relies on."""
    found = [
        Grant(tuple(actions), Resource(Kind.TABLE, table)) for table, actions in spec.tables.items()
    ]
    # Each entry of a PutEvents call is authorized with its own source and detail-type
    # (both single-valued keys): one statement per source, so that a function may put
    # its own detail-types under its own source and no other pairing of the two.
    found += [
        Grant(
            ("events:PutEvents",),
            Resource(Kind.BUS),
            {"StringEquals": {EVENT_SOURCE: source, EVENT_DETAIL_TYPE: detail_types}},
        )
        for source, detail_types in emitted(spec).items()
    ]
    if spec.starts_tickets:
        found.append(Grant(("states:StartExecution",), Resource(Kind.STATE_MACHINE)))
    if spec.answers_tickets:
        found.append(Grant(TASK_ANSWER, Resource(Kind.STATE_MACHINE)))
    if spec.pushes:
        found.append(Grant(("execute-api:ManageConnections",), Resource(Kind.CONNECTIONS)))
    if spec.closes_connections:
        found.append(Grant(("execute-api:ManageConnections",), Resource(Kind.CLOSE_CONNECTIONS)))
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


OPERATOR_READS = ("dynamodb:GetItem", "dynamodb:Query", "dynamodb:Scan")
URL_AUTH = "lambda:FunctionUrlAuthType"
VIA_URL = "lambda:InvokedViaFunctionUrl"


def operator_grants(*, actions: bool) -> list[Grant]:
    """The operators' console (``python -m ops``): what it reads, or the function it acts through.

    Two managed policies, so that support staff read by default and only those trusted
    with ``void``, ``close``, ``credit`` and ``kick`` get the second. Neither writes a
    table: IAM cannot make a write create-only or capped, so the actions are the
    operators' function's (``manifest.operator_function``), which alone writes the audit
    and books through the ledger's rules; the act policy may only invoke it through its
    function URL, as the caller AWS authenticates.
    """
    if not actions:
        found = [Grant(OPERATOR_READS, Resource(Kind.TABLE, spec)) for spec in constants.TABLES]
        found += [
            Grant(("dynamodb:Query",), Resource(Kind.TABLE_INDEXES, spec))
            for spec in constants.TABLES
            if spec.indexes
        ]
        found.append(
            Grant(("sqs:GetQueueAttributes", "sqs:ReceiveMessage"), Resource(Kind.DEAD_LETTERS))
        )
        found.append(Grant(("cloudformation:DescribeStacks",), Resource(Kind.STACK)))
        return found
    function = Resource(Kind.FUNCTION, function=operator_function())
    return [
        # A function URL needs both since October 2025: the URL's own action, for an
        # AWS_IAM URL only, and the invocation, only when it comes through the URL.
        Grant(("lambda:InvokeFunctionUrl",), function, {"StringEquals": {URL_AUTH: "AWS_IAM"}}),
        Grant(("lambda:InvokeFunction",), function, {"Bool": {VIA_URL: "true"}}),
    ]
