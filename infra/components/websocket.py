"""The WebSocket API: its stage (throttled, access-logged where the account allows), its routes
and their authorizer.

Players connect with a token in the query string, checked once by the
``$connect`` authorizer; every message after that is routed by its ``action``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import jsii
from aws_cdk import Annotations, ArnFormat, RemovalPolicy, Stack
from aws_cdk import aws_apigateway as apigateway
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_apigatewayv2_authorizers as authorizers
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs

from infra.components.common import RETENTION, pascal, removal_policy
from infra.config import Config
from infra.manifest import FUNCTIONS
from infra.nag import acknowledge

TOKEN_QUERY = "route.request.querystring.token"
ROUTE_SELECTION = "$request.body.action"
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


class WebSocket:
    def __init__(self, stack: Stack, config: Config) -> None:
        self._stack = stack
        self._stage_name = config.stage
        self.api = apigwv2.WebSocketApi(
            stack,
            "WebSocketApi",
            api_name=config.name("canasta"),
            description="Team Canasta: players connect with a token and play by messages",
            route_selection_expression=ROUTE_SELECTION,
        )
        self.stage = apigwv2.WebSocketStage(
            stack,
            "WebSocketStage",
            web_socket_api=self.api,
            stage_name=config.stage,
            auto_deploy=True,
            throttle=apigwv2.ThrottleSettings(
                rate_limit=config.message_rate, burst_limit=config.message_burst
            ),
            access_log_settings=self._access_logs(config) if config.stage_access_logs else None,
        )
        if not config.stage_access_logs:
            Annotations.of(self.stage).add_info(
                "The WebSocket stage has no access logs: API Gateway refuses a logging stage "
                "on an account without its CloudWatch Logs role. Add -c accessLogs=true where "
                "that role is set (make preflight tells), or -c apiGatewayLogsRole=true to set it."
            )
            acknowledge(
                self.stage,
                "AwsSolutions-APIG1",
                "Access logs need the account's API Gateway CloudWatch Logs role, which a new "
                "account lacks and which the stage cannot create; they are on with accessLogs "
                "or apiGatewayLogsRole, and the functions log every connect and message.",
            )
        if config.api_gateway_logs_role:
            self._api_gateway_logs_role()

    def _access_logs(self, config: Config) -> apigwv2.IAccessLogSettings:
        group = logs.LogGroup(
            self._stack,
            "WebSocketAccessLogs",
            retention=RETENTION[config.log_retention_days],
            removal_policy=removal_policy(config),
        )
        return _AccessLogSettings(
            apigwv2.LogGroupLogDestination(group),
            apigateway.AccessLogFormat.custom(json.dumps(ACCESS_LOG_FORMAT, separators=(",", ":"))),
        )

    def connections_arn(self, method: str) -> str:
        """``method`` (``POST``: send, ``DELETE``: close) on every connection of the stage."""
        return self._stack.format_arn(
            service="execute-api",
            resource=self.api.api_id,
            resource_name=f"{self._stage_name}/{method}/@connections/*",
            arn_format=ArnFormat.SLASH_RESOURCE_NAME,
        )

    def connections_finding(self, method: str) -> str:
        """``connections_arn(method)`` as cdk-nag names the wildcard (``AwsSolutions-IAM5``)."""
        api = self._stack.get_logical_id(self.api.node.default_child)  # type: ignore[arg-type]
        return (
            f"Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:"
            f"<{api}>/{self._stage_name}/{method}/@connections/*"
        )

    def add_routes(self, functions: Mapping[str, lambda_.IFunction]) -> None:
        """Each function's routes (``FunctionSpec.routes``); ``$connect`` is authorized."""
        (authorizer_key,) = [k for k, s in FUNCTIONS.items() if s.authorizer]
        authorizer = authorizers.WebSocketLambdaAuthorizer(
            "TokenAuthorizer",
            functions[authorizer_key],
            identity_source=[TOKEN_QUERY],
        )
        for key, spec in FUNCTIONS.items():
            for route in spec.routes:
                self.api.add_route(
                    route,
                    integration=integrations.WebSocketLambdaIntegration(
                        f"{pascal(route.lstrip('$'))}Integration", functions[key]
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

    def _api_gateway_logs_role(self) -> None:
        """WebSocket access logs need the account's API Gateway CloudWatch Logs role.

        It is a setting of the account and region, shared by every API there; the
        role is kept when the stack is deleted so that another stage's logs go on.
        """
        role = iam.Role(
            self._stack,
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
            self._stack, "ApiGatewayAccount", cloud_watch_role_arn=role.role_arn
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
