"""One Lambda function per ``manifest.FUNCTIONS`` entry, each with exactly what its spec says.

Its role holds the spec's grants (``infra.policies``) on this stage's resources
only, its environment names them (``Backbone.environment``), and its queue or
table stream triggers it. Every function shares the one code asset and the
dependency layer; only the handler differs.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs

from infra import policies
from infra.assets import Assets
from infra.components.backbone import Backbone
from infra.components.client_aliases import ClientAlias, client_aliases
from infra.components.common import RETENTION, function_name, pascal, removal_policy
from infra.components.runtime import ARCHITECTURE, RUNTIME, dependency_layer, latest_python
from infra.manifest import BATCH_SIZE, FUNCTIONS, STREAM_PARALLELIZATION, FunctionSpec
from infra.nag import acknowledge
from services.common.constants import TableSpec

STREAM_RETRY_ATTEMPTS = 10


class Functions:
    def __init__(self, backbone: Backbone, assets: Assets) -> None:
        self._backbone = backbone
        code = lambda_.Code.from_asset(str(assets.code))
        self._layer = dependency_layer(backbone.stack, assets)
        self.aliases: dict[str, ClientAlias] = {}
        """The ledger API's aliases, one per client of another mode (``client_aliases``)."""
        self.urls: dict[str, lambda_.FunctionUrl] = {}
        """The function URLs (AuthType ``AWS_IAM``) of the specs that have one."""
        self.by_key = {key: self._function(key, spec, code) for key, spec in FUNCTIONS.items()}

    def _function(self, key: str, spec: FunctionSpec, code: lambda_.Code) -> lambda_.Function:
        stack, config = self._backbone.stack, self._backbone.config
        name = function_name(config, key)
        role = iam.Role(
            stack,
            f"{pascal(key)}Role",
            description=f"Execution role of {name}",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
        )
        log_group = logs.LogGroup(
            stack,
            f"{pascal(key)}Logs",
            log_group_name=f"/aws/lambda/{name}",
            retention=RETENTION[config.log_retention_days],
            removal_policy=removal_policy(config),
        )
        log_group.grant_write(role)
        reserved = spec.reserved_concurrency if config.reserved_concurrency else None
        function = lambda_.Function(
            stack,
            pascal(key),
            function_name=name,
            description=spec.description,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler=spec.handler,
            code=code,
            layers=[self._layer],
            memory_size=spec.memory_mb,
            timeout=Duration.seconds(spec.timeout_seconds),
            role=role,
            log_group=log_group,
            environment=self._backbone.environment(spec),
            tracing=lambda_.Tracing.ACTIVE if config.tracing else lambda_.Tracing.DISABLED,
            reserved_concurrent_executions=reserved,
        )
        self._grant(role, spec)
        self._event_sources(function, spec)
        self._acknowledge_wildcards(role, spec)
        if spec.external_api:
            self.aliases.update(client_aliases(stack, config, key, function))
        if spec.function_url:
            self.urls[key] = function.add_function_url(
                auth_type=lambda_.FunctionUrlAuthType.AWS_IAM
            )
        if RUNTIME.name != latest_python().name:
            acknowledge(
                function,
                "AwsSolutions-L1",
                f"The runtime is pinned to {RUNTIME.name} on purpose: the dependency layer is "
                "built for that CPython (pydantic-core is compiled), so moving to a newer one "
                "is a reviewed change of RUNTIME together with the layer, not a side effect "
                "of upgrading aws-cdk-lib.",
            )
        return function

    def _grant(self, role: iam.Role, spec: FunctionSpec) -> None:
        """Exactly what the spec says the function does, on this stage's resources only."""
        for grant in policies.grants(spec):
            role.add_to_policy(
                iam.PolicyStatement(
                    actions=list(grant.actions),
                    resources=[self._backbone.resource_arn(grant.resource)],
                    conditions=grant.condition_block() or None,
                )
            )

    def _event_sources(self, function: lambda_.Function, spec: FunctionSpec) -> None:
        if spec.queue is not None:
            function.add_event_source(
                sources.SqsEventSource(
                    self._backbone.messaging.queues[spec.queue],
                    batch_size=BATCH_SIZE,
                    report_batch_item_failures=True,
                    max_concurrency=spec.max_concurrency,
                )
            )
        if spec.stream is not None:
            self._stream_source(function, spec.stream)

    def _stream_source(self, function: lambda_.Function, table_spec: TableSpec) -> None:
        """The outbox relay: only newly inserted items that carry an ``outbox`` attribute."""
        failures = self._backbone.messaging.dead_letter_queue(
            "relay", "RelayFailureQueue", "canasta-relay-failures"
        )
        acknowledge(
            failures,
            "AwsSolutions-SQS3",
            "This queue is itself a dead-letter queue: the relay's stream on-failure "
            "destination, which receives the batch records that exhausted their retries.",
        )
        function.add_event_source(
            sources.DynamoEventSource(
                self._backbone.tables[table_spec],
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=BATCH_SIZE,
                bisect_batch_on_error=True,
                retry_attempts=STREAM_RETRY_ATTEMPTS,
                report_batch_item_failures=True,
                parallelization_factor=STREAM_PARALLELIZATION,
                on_failure=sources.SqsDlq(failures),
                filters=[
                    lambda_.FilterCriteria.filter(
                        {
                            "eventName": lambda_.FilterRule.is_equal("INSERT"),
                            "dynamodb": {
                                "NewImage": {"outbox": {"S": lambda_.FilterRule.exists()}}
                            },
                        }
                    )
                ],
            )
        )

    def _acknowledge_wildcards(self, role: iam.Role, spec: FunctionSpec) -> None:
        """cdk-nag's findings of the grants that cannot name one resource, with their reasons
        (one acknowledgement per finding, its reasons joined)."""
        reasons: dict[str, list[str]] = {}
        for finding, reason in self._wildcards(spec):
            reasons.setdefault(finding, []).append(reason)
        for finding, texts in reasons.items():
            acknowledge(role, f"AwsSolutions-IAM5[{finding}]", " ".join(texts))

    def _wildcards(self, spec: FunctionSpec) -> list[tuple[str, str]]:
        wildcards: list[tuple[str, str]] = []
        if spec.pushes:
            wildcards.append(
                (
                    self._backbone.websocket.connections_finding("POST"),
                    "Posting to players needs every connection id of this API stage (they are "
                    "created at run time); the grant is POST on this stage's @connections only.",
                )
            )
        if spec.closes_connections:
            wildcards.append(
                (
                    self._backbone.websocket.connections_finding("DELETE"),
                    "Closing a player's connection (kick) names a connection id made at run "
                    "time; the grant is DELETE on this stage's @connections only.",
                )
            )
        if spec.schedules_timers:
            group = self._backbone.messaging.schedule_group_name
            wildcards.append(
                (
                    f"Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:"
                    f"schedule/{group}/*",
                    "Each turn gets its own one-time schedule, named at run time; the grant "
                    "is CreateSchedule in the turn timers' group only.",
                )
            )
        if spec.stream is not None:
            wildcards.append(
                (
                    "Resource::*",
                    "dynamodb:ListStreams has no resource-level permissions; the stream's "
                    "records are read on this table's stream ARN only.",
                )
            )
        if self._backbone.config.tracing:
            wildcards.append(
                (
                    "Resource::*",
                    "Tracing is on: X-Ray's PutTraceSegments and PutTelemetryRecords have no "
                    "resource-level permissions, so they can only be granted on *.",
                )
            )
        return wildcards
