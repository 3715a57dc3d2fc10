"""The deploy rules: AWS constraints that neither cdk-nag nor cfn-lint knows, checked on the
synthesized template (``make deploy-check``, and the infra tier on the real templates).

Each one failed, or would fail, a deploy or a player on AWS while every local stand-in
accepted it (shared AWS notes). A rule is a function of the template, as CloudFormation
reads it, and the stage's Config; it yields (logical id, message) for each resource that
breaks it, and its docstring states the AWS fact behind it. The functions' environment
in the template is what the services run with, so rules about their settings read it
there. infra/README.md lists the rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from infra.config import Config
from services.common.runtime import BATCH_RESPONSE_MARGIN_MS

RECORD_SECONDS = "CANASTA_RECORD_SECONDS"
"""A queue consumer's budget for one record: it starts a record only while that much, and the
answer's margin, are left of its invocation (``services.common.runtime.process_batch``)."""
MARGIN_SECONDS = BATCH_RESPONSE_MARGIN_MS / 1000
"""What a batch leaves of its function's timeout: its answer and its metrics."""
VISIBILITY_FACTOR = 6
SQS_LIMITS = {
    "DelaySeconds": (0, 900),
    "MessageRetentionPeriod": (60, 1_209_600),
    "VisibilityTimeout": (0, 43_200),
}
"""SQS's bounds on a queue's attributes, in seconds."""
LAMBDA_TIMEOUT_DEFAULT = 3
SQS_VISIBILITY_DEFAULT = 30
ALIASES = ("AWS::Lambda::Alias", "AWS::Lambda::Version")
PROTECTION = {
    "AWS::DynamoDB::Table": ("DeletionProtectionEnabled", True),
    "AWS::Cognito::UserPool": ("DeletionProtection", "ACTIVE"),
}
"""A resource's deletion protection: the property and the value that turns it on."""
NAMES = {
    "AWS::DynamoDB::Table": "TableName",
    "AWS::SQS::Queue": "QueueName",
    "AWS::SNS::Topic": "TopicName",
    "AWS::Logs::LogGroup": "LogGroupName",
    "AWS::IAM::Role": "RoleName",
    "AWS::IAM::ManagedPolicy": "ManagedPolicyName",
    "AWS::Lambda::Function": "FunctionName",
    "AWS::StepFunctions::StateMachine": "StateMachineName",
    "AWS::Events::EventBus": "Name",
    "AWS::Events::Archive": "ArchiveName",
    "AWS::Scheduler::ScheduleGroup": "Name",
    "AWS::CloudWatch::Alarm": "AlarmName",
    "AWS::CloudWatch::Dashboard": "DashboardName",
    "AWS::Cognito::UserPoolDomain": "Domain",
    "AWS::SecretsManager::Secret": "Name",
}
"""Fixed physical names that must be free in the account and region (a user pool's name
need not be: Cognito tells pools by their ids)."""
ACCOUNT_WIDE = {"AWS::IAM::Role": "RoleName", "AWS::IAM::ManagedPolicy": "ManagedPolicyName"}
"""IAM names are global to the account: one stage deployed in two regions collides."""
REGION = re.compile(r"\b[a-z]{2}(-gov|-iso[a-z]?)?-(north|south|east|west|central)+-\d\b")


@dataclass(frozen=True)
class Finding:
    rule: str
    resource: str
    """The logical id of the resource that breaks the rule."""
    message: str

    def __str__(self) -> str:
        return f"{self.rule} {self.resource}: {self.message}"


class Resources:
    """The template's resources, with the references between them resolved to logical ids."""

    def __init__(self, template: Mapping[str, Any]) -> None:
        self._all: Mapping[str, Any] = template.get("Resources", {})

    def of_type(self, *types: str) -> Iterator[tuple[str, dict[str, Any]]]:
        for logical_id, resource in self._all.items():
            if resource["Type"] in types:
                yield logical_id, resource.get("Properties", {})

    def type_of(self, logical_id: str | None) -> str | None:
        resource = self._all.get(logical_id) if logical_id else None
        return None if resource is None else str(resource["Type"])

    def props(self, logical_id: str) -> dict[str, Any]:
        return dict(self._all[logical_id].get("Properties", {}))

    def attribute(self, logical_id: str, name: str) -> Any:
        return self._all[logical_id].get(name)

    def target(self, value: Any) -> str | None:
        """The resource a ``Ref`` or ``Fn::GetAtt`` names, if it is in this template."""
        if not isinstance(value, dict):
            return None
        if "Ref" in value:
            name = value["Ref"]
        elif "Fn::GetAtt" in value:
            att = value["Fn::GetAtt"]
            name = att.split(".", 1)[0] if isinstance(att, str) else att[0]
        else:
            return None
        return str(name) if name in self._all else None

    def dependencies(self, logical_id: str) -> set[str]:
        """Every resource CloudFormation creates before this one: its ``DependsOn`` and the
        resources its properties refer to, and theirs."""
        found: set[str] = set()
        todo = [logical_id]
        while todo:
            resource = self._all[todo.pop()]
            depends = resource.get("DependsOn", [])
            direct = {depends} if isinstance(depends, str) else set(depends)
            direct |= self._referred(resource.get("Properties", {}))
            todo.extend(direct - found)
            found |= direct
        return found

    def _referred(self, value: Any) -> set[str]:
        if isinstance(value, list):
            return {name for item in value for name in self._referred(item)}
        if not isinstance(value, dict):
            return set()
        here = self.target(value)
        inner = {name for item in value.values() for name in self._referred(item)}
        return inner | ({here} if here else set())


Rule = Callable[[Resources, Config], Iterator[tuple[str, str]]]


def _number(value: Any) -> float | None:
    """A literal number (CloudFormation takes them as strings too); None for anything else."""
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _environment(props: Mapping[str, Any]) -> dict[str, Any]:
    return dict(props.get("Environment", {}).get("Variables", {}))


def _logs(stage: Mapping[str, Any]) -> bool:
    routes = [stage.get("DefaultRouteSettings", {}), *stage.get("RouteSettings", {}).values()]
    return bool(stage.get("AccessLogSettings")) or any(
        r.get("LoggingLevel", "OFF") != "OFF" or r.get("DataTraceEnabled") for r in routes
    )


def stage_logging(resources: Resources, config: Config) -> Iterator[tuple[str, str]]:
    """LOGS: API Gateway writes a stage's access and execution logs with the account's
    CloudWatch Logs role (one per account and region). On an account where it was never
    set, creating a stage that logs fails: "CloudWatch Logs role ARN must be set in account
    settings to enable logging". So a stage logs only after the stack has set the role (an
    ``AWS::ApiGateway::Account`` it depends on) or when the operator says it is set
    (``accessLogs``)."""
    if config.access_logs:
        return
    accounts = {
        logical_id
        for logical_id, props in resources.of_type("AWS::ApiGateway::Account")
        if props.get("CloudWatchRoleArn")
    }
    for logical_id, props in resources.of_type("AWS::ApiGatewayV2::Stage"):
        if _logs(props) and not accounts & resources.dependencies(logical_id):
            message = (
                "the stage logs, but neither does it depend on an AWS::ApiGateway::Account "
                "that sets the CloudWatch Logs role, nor does the config say the role is set "
                "(accessLogs)"
            )
            yield logical_id, message


def _consumer(resources: Resources, function: Any) -> str | None:
    """The function a mapping invokes: named directly, or through its alias or version."""
    target = resources.target(function)
    if target is not None and resources.type_of(target) in ALIASES:
        target = resources.target(resources.props(target).get("FunctionName"))
    return target if resources.type_of(target) == "AWS::Lambda::Function" else None


def queue_consumers(resources: Resources, _config: Config) -> Iterator[tuple[str, str]]:
    """QUEUES: a message a consumer is working on reappears after the queue's visibility
    timeout; AWS's guidance for SQS event sources is a visibility timeout of at least six
    times the function's timeout, so retries of a throttled or failed batch do not hand
    its messages out twice. The whole batch must finish within the function's timeout, or
    every record is redelivered; partial batch responses (``ReportBatchItemFailures``)
    only spare the records a handler reports before it returns. So each consumer names
    its worst case for one record (``CANASTA_RECORD_SECONDS``), starts a record only
    while that and the answer's margin are left, and reports the rest unstarted
    (``services.common.runtime.process_batch``): its batch's worst case ends inside the
    timeout provided one record, with the margin, fits in it. A record that does not
    would be handed back by every invocation until it reached the dead-letter queue."""
    for logical_id, mapping in resources.of_type("AWS::Lambda::EventSourceMapping"):
        queue = resources.target(mapping.get("EventSourceArn"))
        if queue is None or resources.type_of(queue) != "AWS::SQS::Queue":
            continue
        function = _consumer(resources, mapping.get("FunctionName"))
        if function is None:
            yield logical_id, f"consumes {queue} with a function that is not in the template"
            continue
        props = resources.props(function)
        timeout = _number(props.get("Timeout", LAMBDA_TIMEOUT_DEFAULT))
        visibility = _number(
            resources.props(queue).get("VisibilityTimeout", SQS_VISIBILITY_DEFAULT)
        )
        record = _environment(props).get(RECORD_SECONDS)
        if timeout is None or visibility is None:
            yield logical_id, f"{function}'s timeout or {queue}'s visibility is not a number"
            continue
        if visibility < VISIBILITY_FACTOR * timeout:
            message = (
                f"{queue}'s visibility timeout {visibility:g} s is under {VISIBILITY_FACTOR} x "
                f"{function}'s timeout {timeout:g} s"
            )
            yield logical_id, message
        if "ReportBatchItemFailures" not in mapping.get("FunctionResponseTypes", []):
            yield logical_id, "reports no batch item failures: one bad record fails its batch"
        if record is None or (seconds := _number(record)) is None:
            yield logical_id, f"{function} names no per-record budget ({RECORD_SECONDS})"
        elif seconds + MARGIN_SECONDS > timeout:
            message = (
                f"one record at its worst ({seconds:g} s), with {MARGIN_SECONDS:g} s to answer, "
                f"outlasts {function}'s timeout of {timeout:g} s: it would never start"
            )
            yield logical_id, message


def queue_limits(resources: Resources, _config: Config) -> Iterator[tuple[str, str]]:
    """DELAY: SQS refuses a queue whose ``DelaySeconds`` passes 900 s (15 minutes: longer
    turn deadlines go through EventBridge Scheduler), whose ``MessageRetentionPeriod`` is
    outside 60 s..14 days, or whose ``VisibilityTimeout`` passes 12 hours."""
    for logical_id, props in resources.of_type("AWS::SQS::Queue"):
        for name, (low, high) in SQS_LIMITS.items():
            if name not in props:
                continue
            value = _number(props[name])
            if value is None or not low <= value <= high:
                yield logical_id, f"{name} {props[name]!r} is outside {low}..{high}"


def alarm_actions(resources: Resources, config: Config) -> Iterator[tuple[str, str]]:
    """ALARMS: a CloudWatch alarm without an action changes state and tells nobody; in
    production every alarm notifies (``AlarmActions``: the stage's topic)."""
    if not config.production:
        return
    for logical_id, props in resources.of_type(
        "AWS::CloudWatch::Alarm", "AWS::CloudWatch::CompositeAlarm"
    ):
        if not props.get("AlarmActions"):
            yield logical_id, "a production alarm without AlarmActions pages nobody"


def retryable_create(resources: Resources, config: Config) -> Iterator[tuple[str, str]]:
    """RETRYABLE: a first create that fails rolls back, and the retry must find nothing in
    its way. A table or user pool with deletion protection cannot be deleted by the
    rollback: even with ``RetainExceptOnCreate`` the stack ends in ROLLBACK_FAILED and the
    retry collides on its name. So protection is on only when the config asks for it
    (``deletionProtection=true``, on a stack that exists), never by default. And a named
    resource with ``DeletionPolicy: Retain`` outlives the rollback, so the retry fails with
    "already exists" (``RetainExceptOnCreate`` deletes what the failed create made)."""
    for logical_id, props in resources.of_type(*PROTECTION):
        name, on = PROTECTION[str(resources.type_of(logical_id))]
        if props.get(name) == on and config.deletion_protection is not True:
            message = (
                f"{name} is on by default: a failed first create cannot roll it back "
                "(set deletionProtection=true once the stack exists)"
            )
            yield logical_id, message
    for logical_id, props in resources.of_type(*NAMES):
        name = NAMES[str(resources.type_of(logical_id))]
        if name in props and resources.attribute(logical_id, "DeletionPolicy") == "Retain":
            message = (
                f"named ({name}) and retained: a failed first create leaves it, and the retry "
                "collides on the name (use RetainExceptOnCreate)"
            )
            yield logical_id, message


def _mentions_region(value: Any) -> bool:
    if isinstance(value, str):
        return "${AWS::Region}" in value or REGION.search(value) is not None
    if isinstance(value, dict):
        return value.get("Ref") == "AWS::Region" or any(map(_mentions_region, value.values()))
    if isinstance(value, list):
        return any(map(_mentions_region, value))
    return False


def account_wide_names(resources: Resources, _config: Config) -> Iterator[tuple[str, str]]:
    """NAMES: IAM is global: a role's or managed policy's name is unique in the account,
    not the region, so the same stage deployed in two regions collides on it unless the
    name holds the region (``Ref: AWS::Region``, or the literal region). Lambda, DynamoDB,
    SQS and the other regional services' names need not."""
    for logical_id, props in resources.of_type(*ACCOUNT_WIDE):
        name = ACCOUNT_WIDE[str(resources.type_of(logical_id))]
        if name in props and not _mentions_region(props[name]):
            yield logical_id, f"{name} {props[name]!r} is account-wide and names no region"


RULES: dict[str, Rule] = {
    "LOGS": stage_logging,
    "QUEUES": queue_consumers,
    "DELAY": queue_limits,
    "ALARMS": alarm_actions,
    "RETRYABLE": retryable_create,
    "NAMES": account_wide_names,
}


def check(template: Mapping[str, Any], config: Config) -> list[Finding]:
    """Every rule's findings on ``template``, synthesized for ``config``."""
    resources = Resources(template)
    return [
        Finding(rule, logical_id, message)
        for rule, broken in RULES.items()
        for logical_id, message in broken(resources, config)
    ]
