"""The stack's outputs: what a deploy hands to the web client, the operators and other modes.

The operators' console reads them by name from the stack (``ops``), the web
client's ``config.json`` is one of them, the alarm topic is where operators
subscribe, and the ledger API's aliases and invoke policies are exported for the
other modes' stacks to import.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput
from aws_cdk import aws_sns as sns

from infra.components.backbone import Backbone
from infra.components.common import pascal, short_name
from infra.components.functions import Functions
from infra.components.operators import OperatorPolicies
from infra.manifest import operator_function

WEB_CONFIG_TEXT = (
    "Serve this as config.json beside the web client (web/README.md); "
    "its sign-in reads auth from it"
)


def add_outputs(
    backbone: Backbone,
    functions: Functions,
    operators: OperatorPolicies,
    alarm_topic: sns.ITopic,
) -> None:
    stack = backbone.stack
    stage = backbone.websocket.stage
    CfnOutput(stack, "WebSocketUrl", value=stage.url, description="wss:// URL of the stage")
    CfnOutput(
        stack,
        "WebSocketManagementUrl",
        value=stage.callback_url,
        description="https:// URL of the @connections API",
    )
    for spec, table in backbone.tables.items():
        CfnOutput(stack, f"{pascal(short_name(spec))}TableName", value=table.table_name)
    CfnOutput(stack, "EventBusName", value=backbone.messaging.bus.event_bus_name)
    _sign_in_outputs(backbone)
    CfnOutput(
        stack,
        "MatchmakingStateMachineArn",
        value=backbone.matchmaking.state_machine.state_machine_arn,
        description="One execution per matchmaking ticket",
    )
    CfnOutput(
        stack,
        "OperatorUrl",
        value=functions.urls[operator_function()].url,
        description="The operators' function URL (AWS_IAM): the console's actions, signed",
    )
    for key, policy in operators.by_key.items():
        CfnOutput(
            stack,
            f"Operator{pascal(key)}PolicyArn",
            value=policy.managed_policy_arn,
            description=f"The operators' console: the {key} policy (infra/README.md)",
        )
    CfnOutput(
        stack,
        "DeadLetterQueueUrls",
        value=stack.to_json_string(
            {key: queue.queue_url for key, queue in backbone.messaging.dead_letter_queues.items()}
        ),
        description="Consumer -> its dead-letter queue (the console's `stuck` reads them)",
    )
    CfnOutput(
        stack,
        "AlarmTopicArn",
        value=alarm_topic.topic_arn,
        description="Every alarm notifies this SNS topic (firing and back to OK): subscribe here",
    )
    _alias_outputs(backbone, functions)


def _alias_outputs(backbone: Backbone, functions: Functions) -> None:
    """Exported: another mode's stack imports its alias and the policy that may invoke it."""
    stack, config = backbone.stack, backbone.config
    for key, (alias, policy) in functions.aliases.items():
        CfnOutput(
            stack,
            f"{pascal(key)}Arn",
            value=alias.function_arn,
            description=f"{key}: that mode invokes this alias (lambda:InvokeFunction)",
            export_name=config.name(f"canasta-{key}-arn"),
        )
        CfnOutput(
            stack,
            f"{pascal(key)}InvokePolicyArn",
            value=policy.managed_policy_arn,
            description=f"Attach to the role of the mode that invokes {key}",
            export_name=config.name(f"canasta-{key}-invoke-policy-arn"),
        )


def _sign_in_outputs(backbone: Backbone) -> None:
    stack, sign_in = backbone.stack, backbone.sign_in
    CfnOutput(
        stack,
        "TokenIssuer",
        value=sign_in.issuer.issuer,
        description="Whose JWTs the $connect authorizer accepts",
    )
    CfnOutput(stack, "TokenAudience", value=sign_in.issuer.audience)
    CfnOutput(stack, "WebClientConfig", value=_web_config(backbone), description=WEB_CONFIG_TEXT)
    if sign_in.user_pool is not None:
        CfnOutput(stack, "UserPoolId", value=sign_in.user_pool.pool.user_pool_id)
        CfnOutput(stack, "UserPoolClientId", value=sign_in.user_pool.web_client.user_pool_client_id)
        CfnOutput(stack, "SignInDomain", value=sign_in.user_pool.domain.base_url())


def _web_config(backbone: Backbone) -> str:
    """The web client's ``config.json``, as JSON (CloudFormation references resolved)."""
    config = backbone.config
    web_config: dict[str, Any] = {
        "ws_url": backbone.websocket.stage.url,
        "stakes": list(config.arena_stakes),
        "turn_seconds": config.turn_seconds,
        "auth": backbone.sign_in.web_auth(),
    }
    return backbone.stack.to_json_string(web_config)
