"""Alarms reach someone: every alarm notifies one topic, the stack's own or an existing one.

The session's stages cover each way (``tests/infra/conftest.py``): dev makes its
topic, prod makes its topic and mails it to ``ALARM_EMAIL``, oidc notifies the
existing ``ALARM_TOPIC_ARN`` and makes no topic.
"""

from __future__ import annotations

import fnmatch
from typing import Any

import pytest

from services.common import constants
from tests.infra._support import ALARM_EMAIL, ALARM_TOPIC_ARN, HAVE_CDK, SKIP_REASON, Synthesis
from tests.infra.test_stack import logical_ids, named, of_type, props, queue_id, statements

pytestmark = [pytest.mark.infra, pytest.mark.skipif(not HAVE_CDK, reason=SKIP_REASON)]

CLOUDWATCH = {"Service": "cloudwatch.amazonaws.com"}


def _alarms(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Alarm name → its properties."""
    alarms = [props(a) for a in of_type(template, "AWS::CloudWatch::Alarm").values()]
    return {alarm["AlarmName"]: alarm for alarm in alarms}


def _topic(template: dict[str, Any], stage: str) -> str:
    return named(template, "AWS::SNS::Topic", "TopicName", f"{stage}-canasta-alarms")


def _alarm_pattern(condition: dict[str, Any]) -> str:
    """``aws:SourceArn``'s ARN pattern with the account and region left as ``*``."""
    parts = condition["ArnLike"]["aws:SourceArn"]["Fn::Join"][1]
    return "".join(p if isinstance(p, str) else "*" for p in parts)


@pytest.mark.parametrize("stage", ["dev", "prod", "oidc"])
def test_every_alarm_notifies_the_topic_when_it_fires_and_when_it_clears(
    synthesis: Synthesis, stage: str
) -> None:
    template = synthesis.templates[stage]
    topic = ALARM_TOPIC_ARN if stage == "oidc" else {"Ref": _topic(template, stage)}
    alarms = _alarms(template)
    assert len(alarms) >= 48
    for name, alarm in alarms.items():
        assert alarm.get("AlarmActions") == [topic], name
        assert alarm.get("OKActions") == [topic], name
    assert template["Outputs"]["AlarmTopicArn"]["Value"] == topic


def test_an_existing_topic_is_used_as_it_is(synthesis: Synthesis) -> None:
    """Its owner keeps its policy, key and subscribers: the stack makes none of them."""
    template = synthesis.templates["oidc"]
    for kind in ("AWS::SNS::Topic", "AWS::SNS::TopicPolicy", "AWS::SNS::Subscription"):
        assert of_type(template, kind) == {}, kind
    assert of_type(template, "AWS::KMS::Key") == {}


def test_the_stacks_topic_is_encrypted_with_a_key_cloudwatch_may_use(
    template: dict[str, Any], stage: str
) -> None:
    """Not the AWS managed key, which CloudWatch cannot use: its alarms would be dropped."""
    topic = _topic(template, stage)
    (key,) = of_type(template, "AWS::KMS::Key")
    assert props(template["Resources"][topic])["KmsMasterKeyId"] == {"Fn::GetAtt": [key, "Arn"]}
    assert props(template["Resources"][key])["EnableKeyRotation"] is True
    (use,) = [
        s
        for s in props(template["Resources"][key])["KeyPolicy"]["Statement"]
        if s.get("Principal") == CLOUDWATCH
    ]
    assert sorted(use["Action"]) == ["kms:Decrypt", "kms:GenerateDataKey*"]
    assert use["Condition"]["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
    # Only this stage's alarms, and every one of them.
    pattern = _alarm_pattern(use["Condition"])
    assert pattern.endswith(f":alarm:{stage}-canasta-*")
    for name in _alarms(template):
        assert fnmatch.fnmatchcase(f"arn:*:cloudwatch:*:*:alarm:{name}", pattern), name


def test_only_this_stages_alarms_may_publish_and_only_over_tls(
    template: dict[str, Any], stage: str
) -> None:
    topic = _topic(template, stage)
    (policy,) = [
        props(p)
        for p in of_type(template, "AWS::SNS::TopicPolicy").values()
        if props(p)["Topics"] == [{"Ref": topic}]
    ]
    found = list(statements({"Properties": policy}))
    assert any(
        s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
        for s in found
    )
    (publish,) = [s for s in found if s["Effect"] == "Allow"]
    assert (publish["Principal"], publish["Action"]) == (CLOUDWATCH, "sns:Publish")
    assert publish["Condition"]["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
    assert _alarm_pattern(publish["Condition"]).endswith(f":alarm:{stage}-canasta-*")


def test_alarm_email_subscribes_the_address_to_the_stacks_topic(
    template: dict[str, Any], stage: str
) -> None:
    subscriptions = [props(s) for s in of_type(template, "AWS::SNS::Subscription").values()]
    if stage == "dev":
        assert subscriptions == []
        return
    (subscription,) = subscriptions
    assert subscription["Protocol"] == "email"
    assert subscription["Endpoint"] == ALARM_EMAIL
    assert subscription["TopicArn"] == {"Ref": _topic(template, stage)}


def test_an_abandoned_ticket_raises_an_alarm(template: dict[str, Any], stage: str) -> None:
    """Its execution succeeds (Catch → Abandon → Expired): only the service's count shows it."""
    alarm = _alarms(template)[f"{stage}-canasta-matchmaking-tickets-abandoned"]
    assert (alarm["Namespace"], alarm["MetricName"]) == ("Canasta", "tickets_abandoned")
    assert alarm["Dimensions"] == [{"Name": "service", "Value": "matchmaking"}]
    assert (alarm["Statistic"], alarm["Period"], alarm["Threshold"]) == ("Sum", 300, 1)
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"


@pytest.mark.parametrize(
    "metric", ["InvocationDroppedCount", "InvocationsFailedToBeSentToDeadLetterCount"]
)
def test_a_turn_timer_scheduler_loses_raises_an_alarm(
    template: dict[str, Any], stage: str, metric: str
) -> None:
    (alarm,) = [a for a in _alarms(template).values() if a["MetricName"] == metric]
    assert alarm["Namespace"] == "AWS/Scheduler"
    group = f"{stage}-{constants.SCHEDULE_GROUP}"
    assert alarm["Dimensions"] == [{"Name": "ScheduleGroup", "Value": group}]
    assert (alarm["Statistic"], alarm["Threshold"]) == ("Sum", 1)
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"


def test_a_turn_timer_in_its_dead_letter_queue_raises_an_alarm(
    template: dict[str, Any], stage: str
) -> None:
    alarm = _alarms(template)[f"{stage}-canasta-turn-schedules-dead-letters"]
    assert alarm["MetricName"] == "ApproximateNumberOfMessagesVisible"
    assert logical_ids(alarm["Dimensions"]) == {
        queue_id(template, stage, constants.SCHEDULE_DEAD_LETTER_QUEUE)
    }
    assert (alarm["Threshold"], alarm["ComparisonOperator"]) == (0, "GreaterThanThreshold")
