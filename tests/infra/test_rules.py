"""The deploy rules (infra/rules.py): each fires on a crafted template that breaks it, and
only there; the real templates keep every rule (those that break one today are marked)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from infra.config import Config
from infra.deploy_check import CheckFailed, check_rules
from infra.rules import RECORD_SECONDS, RULES, check
from tests.infra._support import HAVE_CDK, SKIP_REASON, STAGES, Synthesis

pytestmark = pytest.mark.infra

DEV = Config(bundle=False)
PROD = Config(stage="prod", bundle=False, ses_from_email="noreply@example.com")
Template = dict[str, Any]


def _template(**resources: dict[str, Any]) -> Template:
    return {"Resources": resources}


def _changed(template: Template, *changes: Callable[[dict[str, Any]], None]) -> Template:
    """A copy of ``template`` with ``changes`` applied to its resources."""
    changed = copy.deepcopy(template)
    for change in changes:
        change(changed["Resources"])
    return changed


def _stage(**props: Any) -> dict[str, Any]:
    return {"Type": "AWS::ApiGatewayV2::Stage", "Properties": {"ApiId": "api", **props}}


ACCESS_LOGS = {"AccessLogSettings": {"DestinationArn": "arn:aws:logs:eu-west-1:1:log-group:x"}}
ACCOUNT = {
    "Type": "AWS::ApiGateway::Account",
    "Properties": {"CloudWatchRoleArn": {"Fn::GetAtt": ["LogsRole", "Arn"]}},
}
LOGS_ROLE = {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {}}}
LOGGING = _template(
    Stage={**_stage(**ACCESS_LOGS), "DependsOn": ["Account"]}, Account=ACCOUNT, LogsRole=LOGS_ROLE
)
"""A stage that logs once the stack has set the account's role."""

CONSUMER = _template(
    Queue={"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": 180}},
    Consumer={
        "Type": "AWS::Lambda::Function",
        "Properties": {"Timeout": 30, "Environment": {"Variables": {RECORD_SECONDS: "29"}}},
    },
    Mapping={
        "Type": "AWS::Lambda::EventSourceMapping",
        "Properties": {
            "BatchSize": 10,
            "EventSourceArn": {"Fn::GetAtt": ["Queue", "Arn"]},
            "FunctionName": {"Ref": "Consumer"},
            "FunctionResponseTypes": ["ReportBatchItemFailures"],
        },
    },
)
"""A consumer at its bounds: 6 x 30 s of visibility, one record's 29 s + 1 s in its 30 s (the
rest of a batch is handed back unstarted)."""
ALIAS = {
    "Type": "AWS::Lambda::Alias",
    "Properties": {"FunctionName": {"Ref": "Consumer"}, "Name": "live"},
}


def _queue(**props: Any) -> Template:
    return _template(Queue={"Type": "AWS::SQS::Queue", "Properties": props})


def _alarm(kind: str = "Alarm", **props: Any) -> Template:
    return _template(Alarm={"Type": f"AWS::CloudWatch::{kind}", "Properties": props})


TABLE = {"Type": "AWS::DynamoDB::Table", "Properties": {"TableName": "prod-canasta-games"}}


def _table(policy: str | None = None, **props: Any) -> Template:
    table = copy.deepcopy(TABLE)
    table["Properties"].update(props)
    if policy is not None:
        table["DeletionPolicy"] = policy
    return _template(Table=table)


def _named(kind: str, name_property: str, name: Any) -> Template:
    return _template(Named={"Type": kind, "Properties": {name_property: name}})


REGIONAL_JOIN = {"Fn::Join": ["-", ["dev-canasta-operator-read", {"Ref": "AWS::Region"}]]}


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A change that sets ``Resource.Key.Key...`` (deleting it when ``value`` is None)."""

    def change(resources: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target = resources
        for key in parents:
            target = target.setdefault(key, {})
        if value is None:
            del target[last]
        else:
            target[last] = value

    return change


BREAKING: list[tuple[str, str, Template, Config]] = [
    # (rule, what breaks it, template, config)
    ("LOGS", "access logs, no role", _template(Stage=_stage(**ACCESS_LOGS)), DEV),
    (
        "LOGS",
        "execution logs, no role",
        _template(Stage=_stage(DefaultRouteSettings={"LoggingLevel": "INFO"})),
        DEV,
    ),
    (
        "LOGS",
        "data trace on a route, no role",
        _template(Stage=_stage(RouteSettings={"play": {"DataTraceEnabled": True}})),
        DEV,
    ),
    (
        "LOGS",
        "the role set, but not before the stage",
        _changed(LOGGING, _set("Stage.DependsOn", None)),
        PROD,
    ),
    (
        "LOGS",
        "an account resource without the role",
        _changed(LOGGING, _set("Account.Properties.CloudWatchRoleArn", None)),
        DEV,
    ),
    (
        "QUEUES",
        "visibility under 6 x the timeout",
        _changed(CONSUMER, _set("Queue.Properties.VisibilityTimeout", 179)),
        DEV,
    ),
    (
        "QUEUES",
        "the default visibility (30 s) under 6 x the timeout",
        _changed(CONSUMER, _set("Queue.Properties.VisibilityTimeout", None)),
        DEV,
    ),
    (
        "QUEUES",
        "no partial batch responses",
        _changed(CONSUMER, _set("Mapping.Properties.FunctionResponseTypes", None)),
        DEV,
    ),
    (
        "QUEUES",
        "no per-record budget",
        _changed(CONSUMER, _set("Consumer.Properties.Environment", None)),
        DEV,
    ),
    (
        "QUEUES",
        "one record and the answer outlast the timeout",
        _changed(
            CONSUMER, _set(f"Consumer.Properties.Environment.Variables.{RECORD_SECONDS}", "29.5")
        ),
        DEV,
    ),
    (
        "QUEUES",
        "one record takes the whole timeout (the default timeout, 3 s)",
        _changed(
            CONSUMER,
            _set("Consumer.Properties.Timeout", None),
            _set(f"Consumer.Properties.Environment.Variables.{RECORD_SECONDS}", "3"),
        ),
        DEV,
    ),
    (
        "QUEUES",
        "through an alias, visibility under 6 x the timeout",
        _changed(
            CONSUMER,
            _set("Queue.Properties.VisibilityTimeout", 60),
            _set("Live", ALIAS),
            _set("Mapping.Properties.FunctionName", {"Ref": "Live"}),
        ),
        DEV,
    ),
    (
        "QUEUES",
        "a consumer not in the template",
        _changed(CONSUMER, _set("Mapping.Properties.FunctionName", "arn:aws:lambda:x")),
        DEV,
    ),
    ("DELAY", "DelaySeconds past 900", _queue(DelaySeconds=901), DEV),
    ("DELAY", "DelaySeconds not a number", _queue(DelaySeconds={"Ref": "Delay"}), DEV),
    ("DELAY", "retention under a minute", _queue(MessageRetentionPeriod=59), DEV),
    ("DELAY", "retention past 14 days", _queue(MessageRetentionPeriod=1_209_601), DEV),
    ("DELAY", "visibility past 12 hours", _queue(VisibilityTimeout=43_201), DEV),
    ("ALARMS", "a production alarm without actions", _alarm(), PROD),
    ("ALARMS", "an empty list of actions", _alarm(AlarmActions=[]), PROD),
    ("ALARMS", "a composite alarm without actions", _alarm("CompositeAlarm"), PROD),
    (
        "RETRYABLE",
        "a table protected by default",
        _table("RetainExceptOnCreate", DeletionProtectionEnabled=True),
        PROD,
    ),
    (
        "RETRYABLE",
        "a table protected, the config not asking",
        _table(DeletionProtectionEnabled=True),
        Config(
            stage="prod",
            bundle=False,
            ses_from_email="noreply@example.com",
            deletion_protection=False,
        ),
    ),
    (
        "RETRYABLE",
        "a user pool protected by default",
        _template(
            Pool={"Type": "AWS::Cognito::UserPool", "Properties": {"DeletionProtection": "ACTIVE"}}
        ),
        PROD,
    ),
    ("RETRYABLE", "a named table retained", _table("Retain"), DEV),
    (
        "RETRYABLE",
        "a named log group retained",
        _changed(
            _named("AWS::Logs::LogGroup", "LogGroupName", "/aws/lambda/dev-canasta-deal"),
            _set("Named.DeletionPolicy", "Retain"),
        ),
        DEV,
    ),
    (
        "NAMES",
        "a managed policy named without the region",
        _named("AWS::IAM::ManagedPolicy", "ManagedPolicyName", "dev-canasta-operator-read"),
        DEV,
    ),
    (
        "NAMES",
        "a role named without the region, by intrinsic",
        _named(
            "AWS::IAM::Role", "RoleName", {"Fn::Join": ["-", ["dev", {"Ref": "AWS::StackName"}]]}
        ),
        DEV,
    ),
]

COMPLIANT: list[tuple[str, Template, Config]] = [
    ("a stage without logs", _template(Stage=_stage()), DEV),
    (
        "a stage whose logging is off",
        _template(Stage=_stage(DefaultRouteSettings={"LoggingLevel": "OFF"})),
        DEV,
    ),
    ("a stage that logs after the stack sets the role", LOGGING, DEV),
    (
        "a stage that logs after the role, through another resource",
        _changed(
            LOGGING,
            _set("Stage.DependsOn", "Deployment"),
            _set("Deployment", {"Type": "AWS::ApiGatewayV2::Deployment", "DependsOn": "Account"}),
        ),
        DEV,
    ),
    (
        "a stage that logs, the role set before (accessLogs)",
        _template(Stage=_stage(**ACCESS_LOGS)),
        Config(bundle=False, access_logs=True),
    ),
    ("a consumer at its bounds", CONSUMER, DEV),
    (
        "a consumer at its bounds, through an alias",
        _changed(
            CONSUMER, _set("Live", ALIAS), _set("Mapping.Properties.FunctionName", {"Ref": "Live"})
        ),
        DEV,
    ),
    (
        "a stream consumer (not a queue's)",
        _changed(
            CONSUMER,
            _set("Mapping.Properties.EventSourceArn", {"Fn::GetAtt": ["Table", "StreamArn"]}),
        ),
        DEV,
    ),
    ("a queue at its limits", _queue(DelaySeconds=900, MessageRetentionPeriod=60), DEV),
    (
        "a queue at its other limits, numbers as strings",
        _queue(DelaySeconds="0", MessageRetentionPeriod="1209600", VisibilityTimeout="43200"),
        DEV,
    ),
    ("an alarm without actions outside production", _alarm(), DEV),
    ("a production alarm with an action", _alarm(AlarmActions=[{"Ref": "Topic"}]), PROD),
    ("a table, not protected, retained except on create", _table("RetainExceptOnCreate"), PROD),
    (
        "a table protected when the config asks",
        _table("RetainExceptOnCreate", DeletionProtectionEnabled=True),
        Config(
            stage="prod",
            bundle=False,
            ses_from_email="noreply@example.com",
            deletion_protection=True,
        ),
    ),
    (
        "an unnamed log group retained",
        _changed(
            _template(Logs={"Type": "AWS::Logs::LogGroup", "Properties": {}}),
            _set("Logs.DeletionPolicy", "Retain"),
        ),
        DEV,
    ),
    (
        "a managed policy named with the region",
        _named("AWS::IAM::ManagedPolicy", "ManagedPolicyName", REGIONAL_JOIN),
        DEV,
    ),
    (
        "a role named with the region by Fn::Sub",
        _named("AWS::IAM::Role", "RoleName", {"Fn::Sub": "dev-canasta-logs-${AWS::Region}"}),
        DEV,
    ),
    (
        "a role named with a literal region",
        _named("AWS::IAM::Role", "RoleName", "dev-canasta-logs-ap-southeast-2"),
        DEV,
    ),
    ("a queue named without the region", _named("AWS::SQS::Queue", "QueueName", "dev-q"), DEV),
]


@pytest.mark.parametrize(
    ("rule", "template", "config"),
    [pytest.param(rule, t, c, id=f"{rule}: {what}") for rule, what, t, c in BREAKING],
)
def test_a_template_that_breaks_a_rule_makes_it_fire_alone(
    rule: str, template: Template, config: Config
) -> None:
    findings = check(template, config)
    assert [f.rule for f in findings] == [rule], [str(f) for f in findings]


@pytest.mark.parametrize(
    ("template", "config"), [pytest.param(t, c, id=what) for what, t, c in COMPLIANT]
)
def test_a_template_that_keeps_the_rules_has_no_finding(template: Template, config: Config) -> None:
    assert [str(f) for f in check(template, config)] == []


def test_every_rule_has_a_template_that_breaks_it() -> None:
    assert {rule for rule, *_ in BREAKING} == set(RULES)


def test_a_finding_names_its_rule_and_resource() -> None:
    (finding,) = check(_queue(DelaySeconds=901), DEV)
    assert (finding.rule, finding.resource) == ("DELAY", "Queue")
    assert str(finding).startswith("DELAY Queue: DelaySeconds 901")


@pytest.mark.skipif(not HAVE_CDK, reason=SKIP_REASON)
@pytest.mark.parametrize(
    ("real_stage", "rule"), [(stage, rule) for stage in (*STAGES, "oidc") for rule in RULES]
)
def test_the_real_template_keeps_the_rule(synthesis: Synthesis, real_stage: str, rule: str) -> None:
    config = synthesis.stacks[real_stage].backbone.config
    findings = check(synthesis.templates[real_stage], config)
    assert [str(f) for f in findings if f.rule == rule] == []


def test_the_deploy_rehearsal_fails_on_any_stage_s_finding() -> None:
    clean = _queue(DelaySeconds=900)
    assert check_rules({"prod": (clean, PROD), "dev": (clean, DEV)}) == [
        f"stage=prod: {len(RULES)} checked, 0 findings",
        f"stage=dev: {len(RULES)} checked, 0 findings",
    ]
    with pytest.raises(CheckFailed, match=r"1 deploy rule findings:\ndev: DELAY Queue: "):
        check_rules({"prod": (clean, PROD), "dev": (_queue(DelaySeconds=901), DEV)})
