"""Where every alarm goes: an existing SNS topic (``alarmTopicArn``), or the stack's own.

The stack's topic is encrypted with a customer managed key: CloudWatch cannot use
the AWS managed SNS key (``alias/aws/sns``), and a topic it cannot encrypt for
drops every notification while the stack deploys cleanly. The key's policy and
the topic's policy let CloudWatch in only for this account's alarms of this stage
(``aws:SourceAccount``, ``aws:SourceArn``), so no other account's alarm can be
made to publish here. An existing topic is its owner's: its policy, its key and
its subscribers are not changed from here (``alarmEmail`` needs the stack's topic).
"""

from __future__ import annotations

from aws_cdk import ArnFormat, Duration, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions

from infra.components.common import alarm_name
from infra.config import Config

CLOUDWATCH = "cloudwatch.amazonaws.com"
TOPIC = "canasta-alarms"


def alarm_topic(stack: Stack, config: Config) -> sns.ITopic:
    if config.alarm_topic_arn is not None:
        return sns.Topic.from_topic_arn(stack, "AlarmTopic", config.alarm_topic_arn)
    conditions = _from_this_stages_alarms(stack, config)
    key = kms.Key(
        stack,
        "AlarmTopicKey",
        description=f"Encrypts {config.name(TOPIC)}, the topic every alarm notifies",
        enable_key_rotation=True,
        # Nothing outlives delivery under this key: deleting the stack may delete it.
        removal_policy=RemovalPolicy.DESTROY,
        pending_window=Duration.days(7),
    )
    key.add_to_resource_policy(
        iam.PolicyStatement(
            principals=[iam.ServicePrincipal(CLOUDWATCH)],
            actions=["kms:Decrypt", "kms:GenerateDataKey*"],
            resources=["*"],
            conditions=conditions,
        )
    )
    topic = sns.Topic(
        stack,
        "AlarmTopic",
        topic_name=config.name(TOPIC),
        display_name=f"Canasta alarms ({config.stage})",
        master_key=key,
        enforce_ssl=True,
    )
    # The topic's policy replaces SNS's default one: CloudWatch is let in by name.
    topic.add_to_resource_policy(
        iam.PolicyStatement(
            principals=[iam.ServicePrincipal(CLOUDWATCH)],
            actions=["sns:Publish"],
            resources=[topic.topic_arn],
            conditions=conditions,
        )
    )
    if config.alarm_email is not None:
        topic.add_subscription(subscriptions.EmailSubscription(config.alarm_email))
    return topic


def _from_this_stages_alarms(stack: Stack, config: Config) -> dict[str, dict[str, str]]:
    """Every alarm of the stage, as ``Monitoring`` names them."""
    alarms = stack.format_arn(
        service="cloudwatch",
        resource="alarm",
        resource_name=alarm_name(config, "*"),
        arn_format=ArnFormat.COLON_RESOURCE_NAME,
    )
    return {
        "StringEquals": {"aws:SourceAccount": stack.account},
        "ArnLike": {"aws:SourceArn": alarms},
    }
