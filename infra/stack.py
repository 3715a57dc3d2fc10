"""The whole backend in one stack: tables, bus, queues, timers, the matchmaking state machine,
WebSocket API, functions, alarms, and the players' sign-in (a Cognito user pool, unless an
existing OpenID Connect issuer is configured).

Names and keys come from ``services.common.constants`` (the module the local
stack builds from too) and every function from ``infra.manifest.FUNCTIONS``.
Each physical name is prefixed with the stage (``dev-canasta-games``), so
several stages can live in one account.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import aws_cdk as cdk
import jsii
from aws_cdk import (
    ArnFormat,
    CfnOutput,
    Duration,
    RemovalPolicy,
    Stack,
)
from aws_cdk import aws_apigateway as apigateway
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_apigatewayv2_authorizers as authorizers
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra import manifest, policies
from infra.assets import PLACEHOLDER, Assets
from infra.config import Config
from infra.manifest import FUNCTIONS, TIMERS, FunctionSpec
from infra.nag import acknowledge
from services.common import constants
from services.common.constants import TableSpec
from services.common.runtime import UNKNOWN_EVENTS
from services.matchmaking import flow

RUNTIME = getattr(lambda_.Runtime, "PYTHON_3_13", None) or lambda_.Runtime.PYTHON_3_12
PYTHON_VERSION = RUNTIME.name.removeprefix("python")
ARCHITECTURE = lambda_.Architecture.ARM_64
METRICS_NAMESPACE = "Canasta"
TOKEN_QUERY = "route.request.querystring.token"
ROUTE_SELECTION = "$request.body.action"
MAX_RECEIVE_COUNT = 5
BATCH_SIZE = 10
STREAM_RETRY_ATTEMPTS = 10
EVENT_DELIVERY_RETRIES = 185
"""EventBridge's most retries of a delivery to a queue (within 24 h), then the dead letters."""
CONSUMER_VISIBILITY_FACTOR = 6
"""A queue's visibility timeout is this many times its consumer's timeout (AWS's advice)."""

RETENTION = {
    1: logs.RetentionDays.ONE_DAY,
    3: logs.RetentionDays.THREE_DAYS,
    5: logs.RetentionDays.FIVE_DAYS,
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    60: logs.RetentionDays.TWO_MONTHS,
    90: logs.RetentionDays.THREE_MONTHS,
    120: logs.RetentionDays.FOUR_MONTHS,
    150: logs.RetentionDays.FIVE_MONTHS,
    180: logs.RetentionDays.SIX_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
    400: logs.RetentionDays.THIRTEEN_MONTHS,
    545: logs.RetentionDays.EIGHTEEN_MONTHS,
    731: logs.RetentionDays.TWO_YEARS,
    1096: logs.RetentionDays.THREE_YEARS,
    1827: logs.RetentionDays.FIVE_YEARS,
    2192: logs.RetentionDays.SIX_YEARS,
    2557: logs.RetentionDays.SEVEN_YEARS,
    2922: logs.RetentionDays.EIGHT_YEARS,
    3288: logs.RetentionDays.NINE_YEARS,
    3653: logs.RetentionDays.TEN_YEARS,
}

ACCESS_LOG_FORMAT = {
    "requestId": "$context.requestId",
    "requestTime": "$context.requestTime",
    "eventType": "$context.eventType",
    "routeKey": "$context.routeKey",
    "connectionId": "$context.connectionId",
    "status": "$context.status",
    "sourceIp": "$context.identity.sourceIp",
    "playerId": "$context.authorizer.player_id",
    "authorizerError": "$context.authorizer.error",
    "integrationError": "$context.integrationErrorMessage",
    "error": "$context.error.message",
}
"""One JSON line per connect, message and disconnect (the token itself is never logged)."""

DASHBOARD_METRICS = (
    ("turn", "actions_applied"),
    ("turn", "auto_played_turns"),
    ("turn", "refused_stale_version"),
    ("deal", "rounds_dealt"),
    ("score", "rounds_scored"),
    ("score", "matches_ended"),
    ("connect", "tokens_refused"),
    ("relay", "events_published"),
)
"""(service, metric) of the custom metrics on the dashboard (namespace ``Canasta``)."""
MATCHMAKING_METRICS = ("tickets_opened", "tables_formed", "tickets_expired")
LEDGER_METRICS = ("ledger_settlements", "ledger_refunds")
"""The matchmaking and ledger widgets' custom metrics (dimension ``service``)."""
WEB_CONFIG_TEXT = (
    "Serve this as config.json beside the web client (web/README.md); "
    "its sign-in reads auth from it"
)
TICKETS = "matchmaking"
"""The consumer whose queue carries the state machine's ``try_match`` tasks."""


def _latest_python() -> lambda_.Runtime:
    """The newest Python runtime this aws-cdk-lib knows (what cdk-nag's L1 compares with)."""
    pythons = [r for r in lambda_.Runtime.ALL if r.name.startswith("python3.")]
    return max(pythons, key=lambda r: int(r.name.removeprefix("python3.")))


def pascal(name: str) -> str:
    """``turn-events`` → ``TurnEvents``: construct ids and output names."""
    return "".join(part.capitalize() for part in name.replace("_", "-").split("-") if part)


def short_name(spec: TableSpec) -> str:
    """``canasta-games`` → ``games``."""
    return spec.name.removeprefix(f"{constants.EVENT_SOURCE}-")


def table_variable(spec: TableSpec) -> str:
    """The settings variable that names a table: ``CANASTA_GAMES_TABLE``."""
    return f"CANASTA_{short_name(spec).replace('-', '_').upper()}_TABLE"


def function_name(config: Config, key: str) -> str:
    return config.name(f"canasta-{key}")


def service_count(service: str, name: str, *, labelled: bool = False) -> cloudwatch.Metric:
    """A service's custom count (namespace ``Canasta``, dimension ``service``), summed over
    five minutes; ``labelled`` for a graph (an alarm on a labelled metric becomes metric math)."""
    return cloudwatch.Metric(
        namespace=METRICS_NAMESPACE,
        metric_name=name,
        dimensions_map={"service": service},
        statistic="Sum",
        period=Duration.minutes(5),
        label=name if labelled else None,
    )


class CanastaStack(Stack):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: Config,
        assets: Assets,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            description=f"Team Canasta game backend ({config.stage})",
            **kwargs,
        )
        self.config = config
        # A failed first create rolls back without leaving retained resources behind (the
        # retry would fail on their names); once created, they outlive the stack.
        self._removal = (
            RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE
            if config.retain_data
            else RemovalPolicy.DESTROY
        )
        self.tables = {spec: self._table(spec) for spec in constants.TABLES}
        self.bus = self._event_bus()
        self.queues: dict[str, sqs.Queue] = {}
        self.dead_letter_queues: dict[str, sqs.Queue] = {}
        self._consumer_queues()
        self._timers()
        self._state_machine()
        self.issuer = self._sign_in()
        self._websocket_api()
        code = lambda_.Code.from_asset(str(assets.code))
        self.layer = self._layer(assets)
        self.invoke_policies: dict[str, tuple[lambda_.Alias, iam.ManagedPolicy]] = {}
        self.functions = {key: self._function(key, spec, code) for key, spec in FUNCTIONS.items()}
        self._routes()
        self._alarms()
        self._dashboard()
        self._operator_policies()
        self._outputs()

    # --- data -----------------------------------------------------------------------

    def _table(self, spec: TableSpec) -> dynamodb.Table:
        def key(name: str | None) -> dynamodb.Attribute | None:
            return (
                dynamodb.Attribute(name=name, type=dynamodb.AttributeType.STRING) if name else None
            )

        table = dynamodb.Table(
            self,
            f"{pascal(short_name(spec))}Table",
            table_name=self.config.name(spec.name),
            partition_key=key(spec.partition_key),
            sort_key=key(spec.sort_key),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            time_to_live_attribute=spec.ttl_attribute,
            stream=dynamodb.StreamViewType.NEW_IMAGE if spec.stream else None,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            deletion_protection=self.config.protect_tables,
            removal_policy=self._removal,
        )
        for index in spec.indexes:
            table.add_global_secondary_index(
                index_name=index.name,
                partition_key=key(index.partition_key),
                sort_key=key(index.sort_key),
                projection_type=(
                    dynamodb.ProjectionType.KEYS_ONLY
                    if index.keys_only
                    else dynamodb.ProjectionType.ALL
                ),
            )
        return table

    # --- sign-in ---------------------------------------------------------------------

    def _sign_in(self) -> TokenIssuer:
        """Whose tokens the authorizer accepts: the configured issuer, else a new user pool."""
        config = self.config
        if config.oidc_issuer is not None:
            assert config.oidc_audience is not None
            issuer = config.oidc_issuer.rstrip("/")
            return TokenIssuer(
                issuer=issuer,
                audience=config.oidc_audience,
                jwks_url=config.oidc_jwks_url or f"{issuer}/.well-known/jwks.json",
            )
        pool = cognito.UserPool(
            self,
            "UserPool",
            user_pool_name=config.name("canasta-players"),
            self_sign_up_enabled=True,
            sign_in_aliases=cognito.SignInAliases(username=True, email=True),
            sign_in_case_sensitive=False,
            auto_verify=cognito.AutoVerifiedAttrs(email=True),
            standard_attributes=cognito.StandardAttributes(
                email=cognito.StandardAttribute(required=True, mutable=True)
            ),
            password_policy=cognito.PasswordPolicy(
                min_length=12,
                require_lowercase=True,
                require_uppercase=True,
                require_digits=True,
                require_symbols=True,
            ),
            mfa=cognito.Mfa.OPTIONAL,
            mfa_second_factor=cognito.MfaSecondFactor(otp=True, sms=False),
            account_recovery=cognito.AccountRecovery.EMAIL_ONLY,
            feature_plan=cognito.FeaturePlan.ESSENTIALS,
            deletion_protection=config.protect_tables,
            removal_policy=self._removal,
        )
        acknowledge(
            pool,
            "AwsSolutions-COG2",
            "MFA is optional, not required: players sign in to play a card game, and a second "
            "factor on every account would keep most of them out; each may turn TOTP on.",
        )
        acknowledge(
            pool,
            "AwsSolutions-COG8",
            "Threat protection (advanced security) is a paid feature plan, billed per active "
            "user; the pool holds game accounts with no payment data, and sign-in abuse is "
            "bounded by Cognito's own quotas.",
        )
        client = pool.add_client(
            "WebClient",
            user_pool_client_name=config.name("canasta-web"),
            generate_secret=False,
            auth_flows=cognito.AuthFlow(user_srp=True),
            o_auth=cognito.OAuthSettings(
                flows=cognito.OAuthFlows(authorization_code_grant=True),
                scopes=[cognito.OAuthScope.OPENID, cognito.OAuthScope.PROFILE],
                callback_urls=list(config.web_urls),
                logout_urls=list(config.web_urls),
            ),
            supported_identity_providers=[cognito.UserPoolClientIdentityProvider.COGNITO],
            id_token_validity=Duration.hours(1),
            access_token_validity=Duration.hours(1),
            refresh_token_validity=Duration.days(30),
            enable_token_revocation=True,
            prevent_user_existence_errors=True,
        )
        prefix = config.auth_domain_prefix or f"{config.name('canasta')}-{self.account}"
        domain = pool.add_domain(
            "SignInDomain",
            cognito_domain=cognito.CognitoDomainOptions(domain_prefix=prefix),
        )
        self.user_pool, self.web_client, self.sign_in_domain = pool, client, domain
        issuer = pool.user_pool_provider_url
        return TokenIssuer(
            issuer=issuer,
            audience=client.user_pool_client_id,
            jwks_url=f"{issuer}/.well-known/jwks.json",
        )

    # --- events and queues ------------------------------------------------------------

    def _event_bus(self) -> events.EventBus:
        bus = events.EventBus(
            self, "EventBus", event_bus_name=self.config.name(constants.EVENT_BUS)
        )
        retention = self.config.archive_retention_days
        bus.archive(
            "Archive",
            archive_name=self.config.name("canasta-archive"),
            description="Every game event, for replay",
            event_pattern=events.EventPattern(source=events.Match.prefix(constants.EVENT_SOURCE)),
            retention=Duration.days(retention) if retention else None,
        )
        return bus

    def _queue(self, key: str, name: str, consumer_timeout: int) -> sqs.Queue:
        """A queue and its dead-letter queue (after ``MAX_RECEIVE_COUNT`` receives)."""
        dead = sqs.Queue(
            self,
            f"{pascal(key)}DeadLetterQueue",
            queue_name=self.config.name(f"{name}-dlq"),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        queue = sqs.Queue(
            self,
            f"{pascal(key)}Queue",
            queue_name=self.config.name(name),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            visibility_timeout=Duration.seconds(consumer_timeout * CONSUMER_VISIBILITY_FACTOR),
            dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=MAX_RECEIVE_COUNT, queue=dead),
        )
        self.queues[key] = queue
        self.dead_letter_queues[key] = dead
        return queue

    def _consumer_timeout(self, queue_key: str) -> int:
        timeouts = [s.timeout_seconds for s in FUNCTIONS.values() if s.queue == queue_key]
        return max(timeouts, default=30)

    def _consumer_queues(self) -> None:
        """One queue per consumer, fed by one rule on its detail-types and their sources
        (``manifest.consumer_pattern``, as the local stack)."""
        for consumer, detail_types in manifest.CONSUMERS.items():
            queue = self._queue(
                consumer, constants.queue_name(consumer), self._consumer_timeout(consumer)
            )
            rule = events.Rule(
                self,
                f"{pascal(consumer)}Rule",
                rule_name=self.config.name(f"canasta-to-{consumer}"),
                description=f"{', '.join(detail_types)} to the {consumer} queue",
                event_bus=self.bus,
                event_pattern=events.EventPattern(detail_type=list(detail_types)),
                targets=[
                    targets.SqsQueue(
                        queue,
                        # Events EventBridge cannot deliver land with the consumer's failures.
                        dead_letter_queue=self.dead_letter_queues[consumer],
                        retry_attempts=EVENT_DELIVERY_RETRIES,
                        max_event_age=Duration.hours(24),
                    )
                ],
            )
            # EventPattern cannot say "$or"; the rule's pattern is the shared one, verbatim.
            cfn_rule: events.CfnRule = rule.node.default_child  # type: ignore[assignment]
            cfn_rule.event_pattern = manifest.consumer_pattern(consumer)

    def _timers(self) -> None:
        """Turn timers: one-time schedules in a group that send to the timer queue."""
        self.timer_queue = self._queue(
            TIMERS, constants.TIMER_QUEUE, self._consumer_timeout(TIMERS)
        )
        self.schedule_group = scheduler.ScheduleGroup(
            self,
            "TurnTimerGroup",
            schedule_group_name=self.config.name(constants.SCHEDULE_GROUP),
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.scheduler_role = iam.Role(
            self,
            "SchedulerRole",
            description="Assumed by EventBridge Scheduler to deliver turn timers",
            assumed_by=iam.ServicePrincipal(
                "scheduler.amazonaws.com",
                conditions={
                    "StringEquals": {"aws:SourceAccount": self.account},
                    "ArnEquals": {"aws:SourceArn": self.schedule_group.schedule_group_arn},
                },
            ),
        )
        self.scheduler_role.add_to_policy(
            iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[self.timer_queue.queue_arn])
        )

    # --- matchmaking tickets ---------------------------------------------------------

    def _state_machine(self) -> None:
        """One execution per queue ticket, from the definition the local stack runs too.

        Each pass sends a ``try_match`` task to the matchmaking queue and waits for
        the answer (``.waitForTaskToken``); the role may do nothing else but log.
        """
        config = self.config
        name = config.name(constants.STATE_MACHINE)
        queue = self.queues[TICKETS]
        self.state_machine_logs = logs.LogGroup(
            self,
            "MatchmakingStateMachineLogs",
            # The vendedlogs prefix keeps the log group's resource policy small.
            log_group_name=f"/aws/vendedlogs/states/{name}",
            retention=RETENTION[config.log_retention_days],
            removal_policy=self._removal,
        )
        role = iam.Role(
            self,
            "MatchmakingStateMachineRole",
            description=f"Execution role of the state machine {name}",
            assumed_by=iam.ServicePrincipal(
                "states.amazonaws.com",
                conditions={
                    "StringEquals": {"aws:SourceAccount": self.account},
                    "ArnLike": {
                        "aws:SourceArn": self.format_arn(
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
            iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[queue.queue_arn])
        )
        self.state_machine = sfn.StateMachine(
            self,
            "MatchmakingStateMachine",
            state_machine_name=name,
            state_machine_type=sfn.StateMachineType.STANDARD,
            # CDK resolves the queue URL's token inside the string (an Fn::Join).
            definition_body=sfn.DefinitionBody.from_string(
                flow.definition_json(queue.queue_url, self.partition)
            ),
            role=role,
            logs=sfn.LogOptions(
                destination=self.state_machine_logs,
                level=sfn.LogLevel.ALL,
                # Tickets carry player names and task tokens; the execution history
                # keeps inputs and outputs (90 days) for whoever needs them.
                include_execution_data=False,
            ),
            tracing_enabled=config.tracing,
        )
        acknowledge(
            role,
            "AwsSolutions-IAM5[Resource::*]",
            "Step Functions delivers its logs through CloudWatch Logs' log-delivery API "
            "(logs:CreateLogDelivery, logs:PutResourcePolicy, ...), which has no "
            "resource-level permissions"
            + (
                ", and so have X-Ray's PutTraceSegments and PutTelemetryRecords"
                if config.tracing
                else ""
            )
            + "; the role's only data access is sqs:SendMessage to the matchmaking queue.",
        )
        if not config.tracing:
            acknowledge(
                self.state_machine,
                "AwsSolutions-SF2",
                "X-Ray follows the tracing context key: off in this stage, like every "
                "function's tracing; tickets are traced in the stages that turn it on.",
            )

    # --- WebSocket API ---------------------------------------------------------------

    def _websocket_api(self) -> None:
        config = self.config
        self.api = apigwv2.WebSocketApi(
            self,
            "WebSocketApi",
            api_name=config.name("canasta"),
            description="Team Canasta: players connect with a token and play by messages",
            route_selection_expression=ROUTE_SELECTION,
        )
        self.access_logs = logs.LogGroup(
            self,
            "WebSocketAccessLogs",
            retention=RETENTION[config.log_retention_days],
            removal_policy=self._removal,
        )
        self.stage = apigwv2.WebSocketStage(
            self,
            "WebSocketStage",
            web_socket_api=self.api,
            stage_name=config.stage,
            auto_deploy=True,
            throttle=apigwv2.ThrottleSettings(
                rate_limit=config.throttle_rate, burst_limit=config.throttle_burst
            ),
            access_log_settings=_AccessLogSettings(
                apigwv2.LogGroupLogDestination(self.access_logs),
                apigateway.AccessLogFormat.custom(
                    json.dumps(ACCESS_LOG_FORMAT, separators=(",", ":"))
                ),
            ),
        )
        if config.api_gateway_logs_role:
            self._api_gateway_logs_role()
        self.connections_arn = self.format_arn(
            service="execute-api",
            resource=self.api.api_id,
            resource_name=f"{config.stage}/POST/@connections/*",
            arn_format=ArnFormat.SLASH_RESOURCE_NAME,
        )

    def _api_gateway_logs_role(self) -> None:
        """WebSocket access logs need the account's API Gateway CloudWatch Logs role.

        It is a setting of the account and region, shared by every API there; the
        role is kept when the stack is deleted so that another stage's logs go on.
        """
        role = iam.Role(
            self,
            "ApiGatewayLogsRole",
            description="API Gateway account setting: writes API logs to CloudWatch Logs",
            assumed_by=iam.ServicePrincipal("apigateway.amazonaws.com"),
            managed_policies=[
                iam.ManagedPolicy.from_aws_managed_policy_name(
                    "service-role/AmazonAPIGatewayPushToCloudWatchLogs"
                )
            ],
        )
        role.apply_removal_policy(RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE)
        account = apigateway.CfnAccount(
            self, "ApiGatewayAccount", cloud_watch_role_arn=role.role_arn
        )
        account.apply_removal_policy(RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE)
        self.stage.node.add_dependency(account)
        acknowledge(
            role,
            "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
            "AmazonAPIGatewayPushToCloudWatchLogs]",
            "The account-level API Gateway logging role uses the AWS managed policy made for "
            "it: API Gateway names its own log groups (execution logs), so the role cannot be "
            "narrowed to ours; only apigateway.amazonaws.com can assume it.",
        )

    def _routes(self) -> None:
        (authorizer_key,) = [k for k, s in FUNCTIONS.items() if s.authorizer]
        authorizer = authorizers.WebSocketLambdaAuthorizer(
            "TokenAuthorizer",
            self.functions[authorizer_key],
            identity_source=[TOKEN_QUERY],
        )
        for key, spec in FUNCTIONS.items():
            for route in spec.routes:
                self.api.add_route(
                    route,
                    integration=integrations.WebSocketLambdaIntegration(
                        f"{pascal(route.lstrip('$'))}Integration", self.functions[key]
                    ),
                    authorizer=authorizer if route == "$connect" else None,
                )
        acknowledge(
            self.api,
            "AwsSolutions-APIG4",
            "A WebSocket API authorizes once, on $connect (the token authorizer); every later "
            "route runs on that connection, whose identity comes from the authorizer's context, "
            "never from the message. $disconnect cannot have an authorizer.",
        )

    # --- functions -------------------------------------------------------------------

    def _layer(self, assets: Assets) -> lambda_.LayerVersion:
        if not assets.bundled:
            cdk.Annotations.of(self).add_warning_v2(
                "canasta:placeholder-layer",
                f"The dependency layer is a placeholder ({PLACEHOLDER}): "
                "this template cannot be deployed; synthesize without bundle=false.",
            )
            # CloudFormation checks rules before it creates anything: such a stack is
            # refused at deploy, instead of deploying functions that fail on import.
            cdk.CfnRule(
                self,
                "LayerIsBundled",
                assertions=[
                    cdk.CfnRuleAssertion(
                        assert_=cdk.Fn.condition_equals("placeholder-layer", "bundled-layer"),
                        assert_description="Synthesized with bundle=false: the dependency "
                        "layer is a placeholder. Synthesize with bundle=true to deploy.",
                    )
                ],
            )
        return lambda_.LayerVersion(
            self,
            "Dependencies",
            code=lambda_.Code.from_asset(str(assets.layer)),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description="pydantic, aws-lambda-powertools, PyJWT, cryptography",
        )

    def _environment(self, spec: FunctionSpec) -> dict[str, str]:
        config = self.config
        env = {
            "POWERTOOLS_SERVICE_NAME": spec.service,
            "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
            "POWERTOOLS_TRACE_DISABLED": "false" if config.tracing else "true",
            # No pydantic plugins are used: skip their search through every installed
            # distribution's metadata on a cold start.
            "PYDANTIC_DISABLE_PLUGINS": "__all__",
            "CANASTA_EVENT_BUS": self.bus.event_bus_name,
        }
        # Every table name, so that a read the code adds fails on permissions, not on a name.
        env.update(
            {
                table_variable(s): table.table_name
                for s, table in self.tables.items()
                if s in constants.SERVICE_TABLES
            }
        )
        if spec.pushes:
            env["CANASTA_WEBSOCKET_ENDPOINT"] = self.stage.callback_url
        if spec.schedules_timers:
            env.update(
                {
                    "CANASTA_TIMER_QUEUE_URL": self.timer_queue.queue_url,
                    "CANASTA_TIMER_QUEUE_ARN": self.timer_queue.queue_arn,
                    "CANASTA_SCHEDULER_ROLE_ARN": self.scheduler_role.role_arn,
                    "CANASTA_SCHEDULE_GROUP": self.config.name(constants.SCHEDULE_GROUP),
                    "CANASTA_TURN_SECONDS": str(config.turn_seconds),
                }
            )
        if spec.verifies_tokens:
            env.update(
                {
                    "CANASTA_OIDC_ISSUER": self.issuer.issuer,
                    "CANASTA_OIDC_AUDIENCE": self.issuer.audience,
                    "CANASTA_OIDC_JWKS_URL": self.issuer.jwks_url,
                }
            )
        if spec.starts_tickets or spec.answers_tickets:
            env.update(
                {
                    "CANASTA_STATE_MACHINE_ARN": self.state_machine.state_machine_arn,
                    "CANASTA_MATCHMAKING_QUEUE_URL": self.queues[TICKETS].queue_url,
                    "CANASTA_QUEUE_SECONDS": str(config.queue_seconds),
                    "CANASTA_POLL_SECONDS": str(config.poll_seconds),
                    # The settings read a tuple as JSON (services/common/settings.py).
                    "CANASTA_ARENA_STAKES": json.dumps(
                        list(config.arena_stakes), separators=(",", ":")
                    ),
                }
            )
        if spec.external_api:
            # pydantic-settings reads a dict setting as JSON.
            env["CANASTA_LEDGER_CLIENTS"] = json.dumps(
                {c.name: c.limits.model_dump() for c in config.ledger_clients},
                separators=(",", ":"),
            )
        return env

    def _function(self, key: str, spec: FunctionSpec, code: lambda_.Code) -> lambda_.Function:
        config = self.config
        name = function_name(config, key)
        role = iam.Role(
            self,
            f"{pascal(key)}Role",
            description=f"Execution role of {name}",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
        )
        log_group = logs.LogGroup(
            self,
            f"{pascal(key)}Logs",
            log_group_name=f"/aws/lambda/{name}",
            retention=RETENTION[config.log_retention_days],
            removal_policy=self._removal,
        )
        log_group.grant_write(role)
        reserved = spec.reserved_concurrency if config.reserved_concurrency else None
        function = lambda_.Function(
            self,
            pascal(key),
            function_name=name,
            description=spec.description,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler=spec.handler,
            code=code,
            layers=[self.layer],
            memory_size=spec.memory_mb,
            timeout=Duration.seconds(spec.timeout_seconds),
            role=role,
            log_group=log_group,
            environment=self._environment(spec),
            tracing=lambda_.Tracing.ACTIVE if config.tracing else lambda_.Tracing.DISABLED,
            reserved_concurrent_executions=reserved,
        )
        self._grant(function, role, spec)
        if spec.external_api:
            self._invoke_policy(key, function)
        if RUNTIME.name != _latest_python().name:
            acknowledge(
                function,
                "AwsSolutions-L1",
                f"The runtime is pinned to {RUNTIME.name} on purpose: the dependency layer is "
                "built for that CPython (pydantic-core is compiled), so moving to a newer one "
                "is a reviewed change of RUNTIME together with the layer, not a side effect "
                "of upgrading aws-cdk-lib.",
            )
        return function

    def _grant(self, function: lambda_.Function, role: iam.Role, spec: FunctionSpec) -> None:
        """Exactly what the spec says the function does, on this stage's resources only."""
        for grant in policies.grants(spec):
            role.add_to_policy(
                iam.PolicyStatement(
                    actions=list(grant.actions),
                    resources=[self.resource_arn(grant.resource)],
                    conditions=dict(grant.conditions) or None,
                )
            )
        wildcards: list[tuple[str, str]] = []
        if spec.pushes:
            wildcards.append(
                (
                    f"Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:"
                    f"<{self.get_logical_id(self.api.node.default_child)}>/"  # type: ignore[arg-type]
                    f"{self.config.stage}/POST/@connections/*",
                    "Posting to players needs every connection id of this API stage (they are "
                    "created at run time); the grant is POST on this stage's @connections only.",
                )
            )
        if spec.schedules_timers:
            group = self.config.name(constants.SCHEDULE_GROUP)
            wildcards.append(
                (
                    f"Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:"
                    f"schedule/{group}/*",
                    "Each turn gets its own one-time schedule, named at run time; the grant "
                    "is CreateSchedule in the turn timers' group only.",
                )
            )
        if spec.queue is not None:
            function.add_event_source(
                sources.SqsEventSource(
                    self.queues[spec.queue],
                    batch_size=BATCH_SIZE,
                    report_batch_item_failures=True,
                    max_concurrency=spec.max_concurrency,
                )
            )
        if spec.stream is not None:
            self._stream_source(function, spec.stream)
            wildcards.append(
                (
                    "Resource::*",
                    "dynamodb:ListStreams has no resource-level permissions; the stream's "
                    "records are read on this table's stream ARN only.",
                )
            )
        if self.config.tracing:
            wildcards.append(
                (
                    "Resource::*",
                    "Tracing is on: X-Ray's PutTraceSegments and PutTelemetryRecords have no "
                    "resource-level permissions, so they can only be granted on *.",
                )
            )
        reasons: dict[str, list[str]] = {}
        for finding, reason in wildcards:
            reasons.setdefault(finding, []).append(reason)
        for finding, texts in reasons.items():
            acknowledge(role, f"AwsSolutions-IAM5[{finding}]", " ".join(texts))

    def resource_arn(self, resource: policies.Resource) -> str:
        """The ARN (a CloudFormation reference) of a resource a grant names."""
        kind = resource.kind
        if kind is policies.Kind.TABLE:
            assert resource.table is not None
            return self.tables[resource.table].table_arn
        if kind is policies.Kind.BUS:
            return self.bus.event_bus_arn
        if kind is policies.Kind.STATE_MACHINE:
            return self.state_machine.state_machine_arn
        if kind is policies.Kind.CONNECTIONS:
            return self.connections_arn
        if kind is policies.Kind.TIMER_QUEUE:
            return self.timer_queue.queue_arn
        if kind is policies.Kind.SCHEDULES:
            return self.format_arn(
                service="scheduler",
                resource="schedule",
                resource_name=f"{self.config.name(constants.SCHEDULE_GROUP)}/*",
                arn_format=ArnFormat.SLASH_RESOURCE_NAME,
            )
        return self.scheduler_role.role_arn

    def operator_resource_arns(self, resource: policies.Resource) -> list[str]:
        """The ARNs an operators' grant names (the kinds no function is granted)."""
        kind = resource.kind
        if kind is policies.Kind.TABLE_INDEXES:
            assert resource.table is not None
            return [f"{self.tables[resource.table].table_arn}/index/*"]
        if kind is policies.Kind.DEAD_LETTERS:
            return [queue.queue_arn for queue in self.dead_letter_queues.values()]
        if kind is policies.Kind.STACK:
            return [self.stack_id]
        if kind is policies.Kind.CLOSE_CONNECTIONS:
            return [
                self.format_arn(
                    service="execute-api",
                    resource=self.api.api_id,
                    resource_name=f"{self.config.stage}/DELETE/@connections/*",
                    arn_format=ArnFormat.SLASH_RESOURCE_NAME,
                )
            ]
        return [self.resource_arn(resource)]

    def _operator_policies(self) -> None:
        """The operators' console's two managed policies (infra/README.md): attach the
        first to support staff, both to those trusted with actions."""
        self.operator_policies: dict[str, iam.ManagedPolicy] = {}
        for key, actions, text in (
            ("read", False, "reads tables, indexes and dead letters (no writes)"),
            ("act", True, "void, close, credit and kick, each recorded in the audit table"),
        ):
            policy = iam.ManagedPolicy(
                self,
                f"Operator{pascal(key)}Policy",
                managed_policy_name=self.config.name(f"canasta-operator-{key}"),
                description=f"The operators' console (python -m ops) {text}",
                statements=[
                    iam.PolicyStatement(
                        actions=list(grant.actions),
                        resources=self.operator_resource_arns(grant.resource),
                    )
                    for grant in policies.operator_grants(actions=actions)
                ],
            )
            for finding in self._operator_wildcards(actions):
                acknowledge(
                    policy,
                    f"AwsSolutions-IAM5[{finding}]",
                    "An operator looks players up by any index entry and closes or posts "
                    "to any connection of this stage, all made at run time: the wildcard "
                    "is this stage's own indexes or @connections, nothing wider.",
                )
            self.operator_policies[key] = policy

    def _operator_wildcards(self, actions: bool) -> list[str]:
        """The cdk-nag findings of the operators' wildcards, as cdk-nag names them."""
        if actions:
            api = self.get_logical_id(self.api.node.default_child)  # type: ignore[arg-type]
            return [
                f"Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:"
                f"<{api}>/{self.config.stage}/{method}/@connections/*"
                for method in ("POST", "DELETE")
            ]
        return [
            f"Resource::<{self.get_logical_id(table.node.default_child)}.Arn>/index/*"  # type: ignore[arg-type]
            for spec, table in self.tables.items()
            if spec.indexes
        ]

    def _invoke_policy(self, key: str, function: lambda_.Function) -> None:
        """One alias per configured client of another mode, and what may invoke it.

        The function learns its caller from the alias it was invoked through
        (Lambda sets the invoked ARN): each client's managed policy allows
        ``lambda:InvokeFunction`` on its own alias only, and a configured
        principal (any account) gets a resource policy on that alias. The
        unqualified function answers every request ``unknown_client``.
        """
        for client in self.config.ledger_clients:
            alias = function.add_alias(client.name, description=f"The {client.name} mode's calls")
            if client.principal is not None:
                alias.add_permission(
                    f"{pascal(client.name)}Invoke",
                    principal=iam.ArnPrincipal(client.principal),
                    action="lambda:InvokeFunction",
                )
            self.invoke_policies[f"{key}-{client.name}"] = (
                alias,
                iam.ManagedPolicy(
                    self,
                    f"{pascal(key)}{pascal(client.name)}InvokePolicy",
                    managed_policy_name=self.config.name(f"canasta-{key}-{client.name}-invoke"),
                    description=f"Invoke {function_name(self.config, key)}:{client.name} "
                    "(the alias of one mode): attach to that mode's role",
                    statements=[
                        iam.PolicyStatement(
                            actions=["lambda:InvokeFunction"], resources=[alias.function_arn]
                        )
                    ],
                ),
            )

    def _stream_source(self, function: lambda_.Function, table_spec: TableSpec) -> None:
        """The outbox relay: only newly inserted items that carry an ``outbox`` attribute."""
        failures = sqs.Queue(
            self,
            "RelayFailureQueue",
            queue_name=self.config.name("canasta-relay-failures"),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        self.dead_letter_queues["relay"] = failures
        acknowledge(
            failures,
            "AwsSolutions-SQS3",
            "This queue is itself a dead-letter queue: the relay's stream on-failure "
            "destination, which receives the batch records that exhausted their retries.",
        )
        function.add_event_source(
            sources.DynamoEventSource(
                self.tables[table_spec],
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=BATCH_SIZE,
                bisect_batch_on_error=True,
                retry_attempts=STREAM_RETRY_ATTEMPTS,
                report_batch_item_failures=True,
                parallelization_factor=1,
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

    # --- monitoring ------------------------------------------------------------------

    def _alarm(
        self,
        construct_id: str,
        name: str,
        metric: cloudwatch.IMetric,
        threshold: float,
        description: str,
        *,
        comparison: cloudwatch.ComparisonOperator = (
            cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
        ),
        periods: int = 1,
        datapoints: int = 1,
    ) -> cloudwatch.Alarm:
        return cloudwatch.Alarm(
            self,
            construct_id,
            alarm_name=self.config.name(f"canasta-{name}"),
            alarm_description=description,
            metric=metric,
            threshold=threshold,
            comparison_operator=comparison,
            evaluation_periods=periods,
            datapoints_to_alarm=datapoints,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )

    def _alarms(self) -> None:
        five_minutes = Duration.minutes(5)
        for key, function in self.functions.items():
            self._alarm(
                f"{pascal(key)}ErrorsAlarm",
                f"{key}-errors",
                function.metric_errors(period=five_minutes, statistic="Sum"),
                1,
                f"{key} failed an invocation (an uncaught error or a timeout)",
            )
            self._alarm(
                f"{pascal(key)}ThrottlesAlarm",
                f"{key}-throttles",
                function.metric_throttles(period=five_minutes, statistic="Sum"),
                1,
                f"{key} was throttled",
            )
        for key, queue in self.dead_letter_queues.items():
            self._alarm(
                f"{pascal(key)}DeadLettersAlarm",
                f"{key}-dead-letters",
                queue.metric_approximate_number_of_messages_visible(
                    period=Duration.minutes(1), statistic="Maximum"
                ),
                0,
                f"Messages wait in {queue.node.id}: look at them, fix, redrive",
                comparison=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            )
        for service in sorted({spec.service for spec in FUNCTIONS.values() if spec.consumes}):
            self._alarm(
                f"{pascal(service)}UnknownEventsAlarm",
                f"{service}-unknown-events",
                service_count(service, UNKNOWN_EVENTS),
                1,
                f"The {service} service received events its routing table does not route "
                "(acknowledged and logged as 'unknown event'): its rule and its table differ",
            )
        self._alarm(
            "TurnWsDurationP99Alarm",
            "turn-ws-duration-p99",
            self.functions["turn-ws"].metric_duration(period=five_minutes, statistic="p99"),
            self.config.turn_p99_alarm_ms,
            f"p99 of a move's handling above {self.config.turn_p99_alarm_ms} ms",
            comparison=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            periods=3,
            datapoints=2,
        )
        self._alarm(
            "RelayIteratorAgeAlarm",
            "relay-iterator-age",
            self.functions["relay"].metric(
                "IteratorAge", period=Duration.minutes(1), statistic="Maximum"
            ),
            60_000,
            "The outbox relay is more than a minute behind the games table",
            comparison=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            periods=5,
            datapoints=3,
        )
        machine = self.state_machine
        self._alarm(
            "MatchmakingExecutionsFailedAlarm",
            "matchmaking-executions-failed",
            machine.metric_failed(period=five_minutes, statistic="Sum"),
            1,
            "A matchmaking ticket failed (a try_match task unanswered for 300 s, or an error): "
            "its player waits for nothing",
        )
        self._alarm(
            "MatchmakingExecutionsTimedOutAlarm",
            "matchmaking-executions-timed-out",
            machine.metric_timed_out(period=five_minutes, statistic="Sum"),
            1,
            "A matchmaking ticket's execution timed out",
        )

    def _dashboard(self) -> None:
        five_minutes = Duration.minutes(5)
        functions = self.functions.items()

        def graph(title: str, metrics: list[cloudwatch.IMetric]) -> cloudwatch.GraphWidget:
            return cloudwatch.GraphWidget(title=title, left=metrics, width=8, height=6)

        dashboard = cloudwatch.Dashboard(
            self, "Dashboard", dashboard_name=self.config.name("canasta")
        )
        dashboard.add_widgets(
            graph(
                "Invocations",
                [f.metric_invocations(period=five_minutes, label=k) for k, f in functions],
            ),
            graph("Errors", [f.metric_errors(period=five_minutes, label=k) for k, f in functions]),
            graph(
                "Duration p99 (ms)",
                [
                    f.metric_duration(period=five_minutes, statistic="p99", label=k)
                    for k, f in functions
                ],
            ),
        )
        dashboard.add_widgets(
            graph(
                "Game",
                [service_count(s, metric, labelled=True) for s, metric in DASHBOARD_METRICS],
            ),
            graph(
                "Dead letters",
                [
                    q.metric_approximate_number_of_messages_visible(
                        period=Duration.minutes(1), statistic="Maximum", label=k
                    )
                    for k, q in self.dead_letter_queues.items()
                ],
            ),
            graph(
                "Relay lag (ms)",
                [
                    self.functions["relay"].metric(
                        "IteratorAge", period=Duration.minutes(1), statistic="Maximum"
                    )
                ],
            ),
        )

        def counts(service: str, names: tuple[str, ...]) -> list[cloudwatch.IMetric]:
            return [service_count(service, name, labelled=True) for name in names]

        machine = self.state_machine
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Matchmaking",
                left=counts("matchmaking", MATCHMAKING_METRICS),
                right=[
                    machine.metric_failed(period=five_minutes, label="executions failed"),
                    machine.metric_timed_out(period=five_minutes, label="executions timed out"),
                ],
                width=8,
                height=6,
            ),
            graph("Ledger", counts("ledger", LEDGER_METRICS)),
        )

    def _outputs(self) -> None:
        CfnOutput(self, "WebSocketUrl", value=self.stage.url, description="wss:// URL of the stage")
        CfnOutput(
            self,
            "WebSocketManagementUrl",
            value=self.stage.callback_url,
            description="https:// URL of the @connections API",
        )
        for spec, table in self.tables.items():
            CfnOutput(self, f"{pascal(short_name(spec))}TableName", value=table.table_name)
        CfnOutput(self, "EventBusName", value=self.bus.event_bus_name)
        CfnOutput(
            self,
            "TokenIssuer",
            value=self.issuer.issuer,
            description="Whose JWTs the $connect authorizer accepts",
        )
        CfnOutput(self, "TokenAudience", value=self.issuer.audience)
        CfnOutput(self, "WebClientConfig", value=self._web_config(), description=WEB_CONFIG_TEXT)
        if self.config.own_user_pool:
            CfnOutput(self, "UserPoolId", value=self.user_pool.user_pool_id)
            CfnOutput(self, "UserPoolClientId", value=self.web_client.user_pool_client_id)
            CfnOutput(self, "SignInDomain", value=self.sign_in_domain.base_url())
        CfnOutput(
            self,
            "MatchmakingStateMachineArn",
            value=self.state_machine.state_machine_arn,
            description="One execution per matchmaking ticket",
        )
        for key, policy in self.operator_policies.items():
            CfnOutput(
                self,
                f"Operator{pascal(key)}PolicyArn",
                value=policy.managed_policy_arn,
                description=f"The operators' console: the {key} policy (infra/README.md)",
            )
        CfnOutput(
            self,
            "DeadLetterQueueUrls",
            value=Stack.of(self).to_json_string(
                {key: queue.queue_url for key, queue in self.dead_letter_queues.items()}
            ),
            description="Consumer -> its dead-letter queue (the console's `stuck` reads them)",
        )
        for key, (alias, policy) in self.invoke_policies.items():
            CfnOutput(
                self,
                f"{pascal(key)}Arn",
                value=alias.function_arn,
                description=f"{key}: that mode invokes this alias (lambda:InvokeFunction)",
                export_name=self.config.name(f"canasta-{key}-arn"),
            )
            CfnOutput(
                self,
                f"{pascal(key)}InvokePolicyArn",
                value=policy.managed_policy_arn,
                description=f"Attach to the role of the mode that invokes {key}",
                export_name=self.config.name(f"canasta-{key}-invoke-policy-arn"),
            )

    def _web_config(self) -> str:
        """The web client's ``config.json`` (``web/signin.js`` reads ``auth``), as JSON."""
        if self.config.own_user_pool:
            auth: dict[str, Any] = {
                "kind": "cognito",
                "region": self.region,
                "user_pool_id": self.user_pool.user_pool_id,
                "client_id": self.web_client.user_pool_client_id,
                "domain": self.sign_in_domain.base_url(),
            }
        else:
            auth = {
                "kind": "oidc",
                "issuer": self.issuer.issuer,
                "client_id": self.issuer.audience,
            }
        config = {
            "ws_url": self.stage.url,
            "stakes": list(self.config.arena_stakes),
            "turn_seconds": self.config.turn_seconds,
            "auth": auth,
        }
        return self.to_json_string(config)


@dataclass(frozen=True)
class TokenIssuer:
    """What the authorizer is configured with (CloudFormation references for a new pool)."""

    issuer: str
    audience: str
    jwks_url: str


@jsii.implements(apigwv2.IAccessLogSettings)
class _AccessLogSettings:
    """``IAccessLogSettings`` for a stage: a log group and a format."""

    def __init__(
        self, destination: apigwv2.IAccessLogDestination, log_format: apigateway.AccessLogFormat
    ) -> None:
        self._destination = destination
        self._format = log_format

    @property
    def destination(self) -> apigwv2.IAccessLogDestination:
        return self._destination

    @property
    def format(self) -> apigateway.AccessLogFormat:
        return self._format
