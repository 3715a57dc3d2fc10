"""Every handler call to AWS checked against its own function's role, as AWS checks it.

moto can enforce IAM (``INITIAL_NO_AUTH_ACTION_COUNT``), but its evaluator
checks every DynamoDB, EventBridge, Scheduler, Step Functions and API Gateway
call against the resource ``*`` (only SQS, IAM and STS name a resource), so a
statement scoped to a table ARN, as every statement of the stack is, never
matches and a correct role is denied; it also authorizes a transaction as
``dynamodb:TransactWriteItems`` rather than item by item. So the local stack
evaluates the calls itself, before they are sent:

- the roles are ``infra.policies.grants`` of each ``FunctionSpec``, the very
  statements the CDK stack renders (``tests/infra`` proves it), with this
  embedded AWS's ARNs in place of the stack's references;
- each call becomes the (action, resource) pairs AWS authorizes: a
  transaction item by item (``Put`` as ``PutItem``, ``ConditionCheck`` as
  ``ConditionCheckItem``, ...), a query on an index as the index's ARN, a post
  to a connection as ``execute-api:ManageConnections`` on
  ``<api>/<stage>/POST/@connections/<id>``, a schedule's target role as
  ``iam:PassRole`` with ``iam:PassedToService``, a task answer on the state
  machine (a task token does not name it; there is only one), each entry of a
  ``PutEvents`` on its bus with its ``events:source`` and ``events:detail-type``;
- a call nothing allows raises ``AccessDeniedException``, as AWS answers, and
  is recorded in ``denials``; a call this module cannot map is denied too, so
  a new kind of call is modelled before it is trusted (AWS fails only the
  denied entries of a ``PutEvents``, ``NotAuthorizedForSourceException`` or
  ``…DetailTypeException`` in the answer's entries; the publisher raises at
  the first failed entry, so denying the whole call only makes the relay retry
  from an earlier record, and every harness fails on a denial anyway);
- a request to the operators' function URL (the local gateway's) is authorized
  for the operator's role its signature's access key names, as
  ``lambda:InvokeFunctionUrl`` and ``lambda:InvokeFunction`` with their
  conditions (``check_url``), before the function runs under its own role.

Handlers run in the test process, so the role is the function's for the
duration of its invocation: ``bind`` wraps each spec's entry point (the same
``module.function`` the stack deploys) so that it runs under its role. Calls
made outside any invocation (fixtures, the dispatcher standing in for event
source mappings, moto's own state machine) are the platform's, not checked.
"""

from __future__ import annotations

import functools
import importlib
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, NoReturn

from infra.manifest import FUNCTIONS, FunctionSpec
from infra.policies import (
    EVENT_DETAIL_TYPE,
    EVENT_SOURCE,
    URL_AUTH,
    VIA_URL,
    ConditionValues,
    Grant,
    Kind,
    Resource,
    grants,
    operator_grants,
)

ACCOUNT = "123456789012"
"""moto's default account: the one every local resource lives in."""
PARTITION = "aws"
API_ID = "local"
"""The local WebSocket API's id and stage, as the gateway puts them in its events."""
STAGE = "local"
PASSED_TO = "iam:PassedToService"


@dataclass(frozen=True)
class Call:
    """One authorization AWS makes for a request: an action on a resource, with context."""

    action: str
    resource: str
    context: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Statement:
    actions: tuple[str, ...]
    resource: str
    conditions: Mapping[str, Mapping[str, ConditionValues]]

    def allows(self, call: Call) -> bool:
        return (
            any(_matches(a, call.action, case=False) for a in self.actions)
            and _matches(self.resource, call.resource, case=True)
            and all(_condition(op, values, call.context) for op, values in self.conditions.items())
        )


def _matches(pattern: str, value: str, *, case: bool) -> bool:
    """IAM's wildcards: ``*`` any run of characters, ``?`` any one (actions ignore case)."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, value, 0 if case else re.IGNORECASE) is not None


def _condition(
    operator: str, values: Mapping[str, ConditionValues], context: Mapping[str, str]
) -> bool:
    """IAM's ``StringEquals`` and ``Bool``: each key the block names must be in the
    request's context and equal one of its values; a key the request lacks does not match
    (condition keys ignore case; ``Bool``'s values too, ``StringEquals``' do not)."""
    present = {key.lower(): value for key, value in context.items()}

    def wanted(value: ConditionValues) -> tuple[str, ...]:
        return (value,) if isinstance(value, str) else value

    if operator == "Bool":
        return all(
            present.get(key.lower(), "").lower() in {v.lower() for v in wanted(value)}
            for key, value in values.items()
        )
    if operator != "StringEquals":
        return False  # an operator this evaluator does not know never allows
    return all(present.get(key.lower()) in wanted(value) for key, value in values.items())


@dataclass(frozen=True)
class Role:
    function: str
    statements: tuple[Statement, ...]

    @property
    def arn(self) -> str:
        return f"arn:{PARTITION}:sts::{ACCOUNT}:assumed-role/{self.function}-role/{self.function}"

    def denied(self, calls: list[Call]) -> list[Call]:
        return [c for c in calls if not any(s.allows(c) for s in self.statements)]


@dataclass(frozen=True)
class LocalArns:
    """The ARN of each resource kind a grant names, on the embedded AWS."""

    region: str
    tables: Mapping[str, str]
    """``TableSpec.name`` → this stack's table name."""
    event_bus: str
    schedule_group: str
    state_machine: str
    scheduler_role: str
    timer_queue: str

    def _arn(self, service: str, resource: str) -> str:
        return f"arn:{PARTITION}:{service}:{self.region}:{ACCOUNT}:{resource}"

    def table(self, name: str) -> str:
        return self._arn("dynamodb", f"table/{name}")

    def bus(self, name: str) -> str:
        return name if name.startswith("arn:") else self._arn("events", f"event-bus/{name}")

    def connection(self, connection_id: str) -> str:
        return self._arn("execute-api", f"{API_ID}/{STAGE}/POST/@connections/{connection_id}")

    def function(self, key: str) -> str:
        """A function of the local stack, named by its manifest key."""
        return self._arn("lambda", f"function:{key}")

    def schedule(self, group: str, name: str) -> str:
        return self._arn("scheduler", f"schedule/{group}/{name}")

    def queue(self, url: str) -> str:
        """A queue's ARN from its URL (``.../<account>/<name>``)."""
        account, name = url.rstrip("/").split("/")[-2:]
        return f"arn:{PARTITION}:sqs:{self.region}:{account}:{name}"

    def of(self, resource: Resource) -> str:
        kind = resource.kind
        if kind is Kind.TABLE:
            assert resource.table is not None
            return self.table(self.tables[resource.table.name])
        if kind is Kind.BUS:
            return self.bus(self.event_bus)
        if kind is Kind.STATE_MACHINE:
            return self.state_machine
        if kind is Kind.CONNECTIONS:
            return self.connection("*")
        if kind is Kind.TIMER_QUEUE:
            return self.timer_queue
        if kind is Kind.SCHEDULES:
            return self.schedule(self.schedule_group, "*")
        if kind is Kind.TABLE_INDEXES:
            assert resource.table is not None
            return self.table(self.tables[resource.table.name]) + "/index/*"
        if kind is Kind.CLOSE_CONNECTIONS:
            return self.connection("*").replace("/POST/", "/DELETE/")
        if kind is Kind.DEAD_LETTERS:
            return self._arn("sqs", "canasta-*-dlq")
        if kind is Kind.STACK:
            return self._arn("cloudformation", "stack/canasta-local/*")
        if kind is Kind.FUNCTION:
            assert resource.function is not None
            return self.function(resource.function)
        return self.scheduler_role


def role(function: str, spec: FunctionSpec, arns: LocalArns) -> Role:
    def statement(grant: Grant) -> Statement:
        return Statement(grant.actions, arns.of(grant.resource), grant.conditions)

    return Role(function, tuple(statement(g) for g in grants(spec)))


# --- what each request asks AWS to authorize -------------------------------------------

_TRANSACT_ITEM = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
    "Get": "GetItem",
}
_ITEM_OPERATIONS = {"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan"}
_CONNECTION_METHOD = {"PostToConnection": "POST", "GetConnection": "GET"}
_CONNECTION_METHOD["DeleteConnection"] = "DELETE"
_TASK_ANSWERS = {"SendTaskSuccess", "SendTaskFailure", "SendTaskHeartbeat"}


READ_ROLE = "operator-read"
ACT_ROLE = "operator-act"
OPERATOR_ROLES = {READ_ROLE: False, ACT_ROLE: True}
"""The operators' roles by name, and whether each acts (the act role reads too). There is no
IAM authentication locally: a request's access key names the role it is made as."""


def operator_role(arns: LocalArns, *, actions: bool) -> Role:
    """The operators' console's role: the read policy, with the actions' one if asked."""
    found = operator_grants(actions=False) + (operator_grants(actions=True) if actions else [])
    (name,) = [name for name, acts in OPERATOR_ROLES.items() if acts is actions]
    return Role(name, tuple(Statement(g.actions, arns.of(g.resource), g.conditions) for g in found))


def url_calls(function: str, arns: LocalArns) -> list[Call]:
    """What AWS authorizes for a request to a function's URL (AuthType ``AWS_IAM``): the
    URL's own action and, since October 2025, the invocation through it."""
    arn = arns.function(function)
    return [
        Call("lambda:InvokeFunctionUrl", arn, {URL_AUTH: "AWS_IAM"}),
        Call("lambda:InvokeFunction", arn, {VIA_URL: "true"}),
    ]


@contextmanager
def acting_as(role: Role) -> Iterator[None]:
    """Every call of this context is checked against ``role``, as AWS checks an
    operator's own credentials (the console runs in the tests' process)."""
    token = _CURRENT.set(role)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def acting() -> Role | None:
    """The role the calls of this context are checked against, if any (``acting_as``)."""
    return _CURRENT.get()


class Unmodelled(Exception):
    """A call this evaluator has no authorization model for: denied until it has one."""


def calls(service: str, operation: str, params: Mapping[str, Any], arns: LocalArns) -> list[Call]:
    """The authorizations AWS makes for one request (``service`` is the IAM prefix)."""
    if service == "dynamodb":
        return _dynamodb(operation, params, arns)
    if service == "execute-api" and operation in _CONNECTION_METHOD:
        method = _CONNECTION_METHOD[operation]
        resource = arns.connection(params["ConnectionId"]).replace("/POST/", f"/{method}/")
        return [Call("execute-api:ManageConnections", resource)]
    if service == "events" and operation == "PutEvents":
        return [
            Call(
                "events:PutEvents",
                arns.bus(entry.get("EventBusName", "default")),
                {EVENT_SOURCE: entry["Source"], EVENT_DETAIL_TYPE: entry["DetailType"]},
            )
            for entry in params["Entries"]
        ]
    if service == "scheduler" and operation == "CreateSchedule":
        group = params.get("GroupName", "default")
        return [
            Call("scheduler:CreateSchedule", arns.schedule(group, params["Name"])),
            Call(
                "iam:PassRole",
                params["Target"]["RoleArn"],
                {PASSED_TO: "scheduler.amazonaws.com"},
            ),
        ]
    if service == "sqs" and operation in ("SendMessage", "ReceiveMessage", "GetQueueAttributes"):
        return [Call(f"sqs:{operation}", arns.queue(params["QueueUrl"]))]
    if service == "states" and operation == "StartExecution":
        return [Call("states:StartExecution", params["stateMachineArn"])]
    if service == "states" and operation in _TASK_ANSWERS:
        return [Call(f"states:{operation}", arns.state_machine)]
    raise Unmodelled(f"{service}:{operation}")


def _dynamodb(operation: str, params: Mapping[str, Any], arns: LocalArns) -> list[Call]:
    if operation in _ITEM_OPERATIONS:
        resource = arns.table(params["TableName"])
        if "IndexName" in params:
            resource += f"/index/{params['IndexName']}"
        return [Call(f"dynamodb:{operation}", resource)]
    if operation in ("TransactWriteItems", "TransactGetItems"):
        found: list[Call] = []
        for item in params["TransactItems"]:
            ((kind, body),) = item.items()
            found.append(Call(f"dynamodb:{_TRANSACT_ITEM[kind]}", arns.table(body["TableName"])))
        return found
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return [Call(f"dynamodb:{operation}", arns.table(t)) for t in params["RequestItems"]]
    raise Unmodelled(f"dynamodb:{operation}")


# --- enforcement -----------------------------------------------------------------------

_CURRENT: ContextVar[Role | None] = ContextVar("canasta_role", default=None)
_ENFORCER: IamEnforcer | None = None
BOUND = "__canasta_function__"
EVERY_USE: set[tuple[str, str, str]] = set()
"""(function, action, resource) allowed under every enforcer of this process."""


class IamEnforcer:
    """The roles of every function, and the denials of the calls made under them."""

    def __init__(self, arns: LocalArns, functions: Mapping[str, FunctionSpec] = FUNCTIONS) -> None:
        self.arns = arns
        self.roles = {key: role(key, spec, arns) for key, spec in functions.items()}
        self.denials: list[str] = []
        self.used: set[tuple[str, str, str]] = set()
        """(function, action, resource) of every allowed call: what the handlers rely on."""
        self._lock = threading.Lock()

    def check(self, service: str, operation: str, params: Mapping[str, Any]) -> None:
        current = _CURRENT.get()
        if current is None:
            return
        try:
            requested = calls(service, operation, params, self.arns)
        except Unmodelled as exc:
            self._deny(current, operation, f"{exc} has no IAM model in local/iam.py")
        self._authorize(current, operation, requested)

    def check_url(self, caller: str, function: str) -> Role:
        """A request to ``function``'s URL from ``caller`` (an operator role's name, as its
        access key says): the caller's role if it may invoke it, as AWS checks it before the
        function runs; an unknown caller is denied as AWS denies an unknown key."""
        if caller not in OPERATOR_ROLES:
            self._deny(
                Role(caller or "anonymous", ()),
                "InvokeFunctionUrl",
                "The security token included in the request is invalid.",
            )
        current = operator_role(self.arns, actions=OPERATOR_ROLES[caller])
        self._authorize(current, "InvokeFunctionUrl", url_calls(function, self.arns))
        return current

    def _authorize(self, current: Role, operation: str, requested: list[Call]) -> None:
        denied = current.denied(requested)
        if denied:
            self._deny(
                current,
                operation,
                "; ".join(
                    f"User: {current.arn} is not authorized to perform: {c.action} on "
                    f"resource: {c.resource} because no identity-based policy allows the "
                    f"{c.action} action"
                    for c in denied
                ),
            )
        uses = {(current.function, c.action, c.resource) for c in requested}
        with self._lock:
            self.used.update(uses)
            EVERY_USE.update(uses)

    def assert_none_denied(self) -> None:
        """Fail (a test) with every denial, each naming its function, action and resource."""
        assert not self.denials, "calls denied by IAM:\n" + "\n".join(self.denials)

    def _deny(self, current: Role, operation: str, message: str) -> NoReturn:
        from botocore.exceptions import ClientError  # noqa: PLC0415

        with self._lock:
            self.denials.append(f"{current.function}: {message}")
        raise ClientError(
            {
                "Error": {"Code": "AccessDeniedException", "Message": message},
                "ResponseMetadata": {"HTTPStatusCode": 400},
            },
            operation,
        )


def _before_call(params: dict[str, Any], model: Any, **_: Any) -> None:
    if _ENFORCER is not None:
        _ENFORCER.check(model.service_model.signing_name, model.name, params)


def install(enforcer: IamEnforcer) -> None:
    """Check every call of the clients created from now on (boto3's default session)."""
    global _ENFORCER  # noqa: PLW0603 - one embedded AWS per process
    import boto3  # noqa: PLC0415

    _ENFORCER = enforcer
    session = boto3._get_default_session()
    session.events.register("before-parameter-build", _before_call, unique_id="canasta-local-iam")
    bind()


def bind() -> None:
    """Make each function's entry point run under its role (once per entry point).

    The wrapper looks the role up at call time, in the enforcer installed then.
    """
    for key, spec in FUNCTIONS.items():
        module_name, name = spec.handler.rsplit(".", 1)
        module = importlib.import_module(module_name)
        entry = getattr(module, name)
        if getattr(entry, BOUND, None) is None:
            setattr(module, name, _under_role(key, entry))


_ENTRY: ContextVar[str | None] = ContextVar("canasta_entry_point", default=None)


def current_entry_point() -> str | None:
    """The handler invoked (``services.deal.handler.events``) in this context, if any.

    A context variable, not the call stack: work a handler hands to its own
    threads (the pushes to four seats) runs in a copy of its context.
    """
    return _ENTRY.get()


def _under_role(key: str, entry: Callable[..., Any]) -> Callable[..., Any]:
    path = f"{entry.__module__}.{entry.__name__}"

    @functools.wraps(entry)
    def invoke(event: Any, context: Any) -> Any:
        enforcer = _ENFORCER
        token = _CURRENT.set(None if enforcer is None else enforcer.roles[key])
        entered = _ENTRY.set(path)
        try:
            return entry(event, context)
        finally:
            _ENTRY.reset(entered)
            _CURRENT.reset(token)

    setattr(invoke, BOUND, key)
    return invoke
