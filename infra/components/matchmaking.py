"""The matchmaking state machine: one execution per queue ticket.

It runs the definition the local stack runs too (``services.matchmaking.flow``).
A ticket sends one ``try_match`` task to the matchmaking queue and waits for its
answer (``.waitForTaskToken``) until the ticket ends or its queue time is up,
then maybe one ``abandon`` message; the role may do nothing else but log.
"""

from __future__ import annotations

from aws_cdk import ArnFormat, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn

from infra.components.common import RETENTION, removal_policy
from infra.config import Config
from infra.nag import acknowledge
from services.common import constants
from services.matchmaking import flow

TICKETS = "matchmaking"
"""The consumer whose queue carries the state machine's ``try_match`` tasks."""


class Matchmaking:
    def __init__(self, stack: Stack, config: Config, queues: dict[str, sqs.Queue]) -> None:
        self.queue = queues[TICKETS]
        name = config.name(constants.STATE_MACHINE)
        log_group = logs.LogGroup(
            stack,
            "MatchmakingStateMachineLogs",
            # The vendedlogs prefix keeps the log group's resource policy small.
            log_group_name=f"/aws/vendedlogs/states/{name}",
            retention=RETENTION[config.log_retention_days],
            removal_policy=removal_policy(config),
        )
        role = self._role(stack, name)
        self.state_machine = sfn.StateMachine(
            stack,
            "MatchmakingStateMachine",
            state_machine_name=name,
            state_machine_type=sfn.StateMachineType.STANDARD,
            # CDK resolves the queue URL's token inside the string (an Fn::Join).
            definition_body=sfn.DefinitionBody.from_string(
                flow.definition_json(self.queue.queue_url, stack.partition)
            ),
            role=role,
            logs=sfn.LogOptions(
                destination=log_group,
                level=sfn.LogLevel.ALL,
                # Tickets carry player names and task tokens; the execution history
                # keeps inputs and outputs (90 days) for whoever needs them.
                include_execution_data=False,
            ),
            tracing_enabled=config.tracing,
        )
        self._acknowledge(role, config.tracing)

    def _role(self, stack: Stack, name: str) -> iam.Role:
        role = iam.Role(
            stack,
            "MatchmakingStateMachineRole",
            description=f"Execution role of the state machine {name}",
            assumed_by=iam.ServicePrincipal(
                "states.amazonaws.com",
                conditions={
                    "StringEquals": {"aws:SourceAccount": stack.account},
                    "ArnLike": {
                        "aws:SourceArn": stack.format_arn(
                            service="states",
                            resource="stateMachine",
                            resource_name=name,
                            arn_format=ArnFormat.COLON_RESOURCE_NAME,
                        )
                    },
                },
            ),
        )
        role.add_to_policy(
            iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[self.queue.queue_arn])
        )
        return role

    def _acknowledge(self, role: iam.Role, tracing: bool) -> None:
        acknowledge(
            role,
            "AwsSolutions-IAM5[Resource::*]",
            "Step Functions delivers its logs through CloudWatch Logs' log-delivery API "
            "(logs:CreateLogDelivery, logs:PutResourcePolicy, ...), which has no "
            "resource-level permissions"
            + (", and so have X-Ray's PutTraceSegments and PutTelemetryRecords" if tracing else "")
            + "; the role's only data access is sqs:SendMessage to the matchmaking queue.",
        )
        if not tracing:
            acknowledge(
                self.state_machine,
                "AwsSolutions-SF2",
                "X-Ray follows the tracing context key: off in this stage, like every "
                "function's tracing; tickets are traced in the stages that turn it on.",
            )
