"""The local stack wires every handler as the synthesized stack does.

Both are built from ``infra.manifest``; these tests read each side where it
ends up (the CloudFormation template; the local gateway's and dispatcher's
tables and the rules created on moto) and fail if a route, a queue's
consumer, the stream's consumer or a rule's pattern differs between them.
"""

from __future__ import annotations

from typing import Any

import pytest

from infra import manifest
from local import dispatcher, gateway
from tests.infra._support import HAVE_CDK, SKIP_REASON
from tests.infra.test_stack import logical_ids, of_type, props

pytestmark = [pytest.mark.infra, pytest.mark.skipif(not HAVE_CDK, reason=SKIP_REASON)]


def _handlers(template: dict[str, Any]) -> dict[str, str]:
    """Function logical id → the handler it runs."""
    return {k: props(v)["Handler"] for k, v in of_type(template, "AWS::Lambda::Function").items()}


def _function_of(template: dict[str, Any], value: Any) -> str:
    (handler,) = [h for k, h in _handlers(template).items() if k in logical_ids(value)]
    return handler


def _unstaged(name: str, stage: str) -> str:
    assert name.startswith(f"{stage}-"), name
    return name.removeprefix(f"{stage}-")


def _queue_names(template: dict[str, Any], stage: str) -> dict[str, str]:
    """Queue logical id → its name without the stage."""
    return {
        k: _unstaged(props(v)["QueueName"], stage)
        for k, v in of_type(template, "AWS::SQS::Queue").items()
    }


def deployed_routes(template: dict[str, Any]) -> dict[str, str]:
    integrations = of_type(template, "AWS::ApiGatewayV2::Integration")
    routes = {}
    for route in of_type(template, "AWS::ApiGatewayV2::Route").values():
        target = props(route)["Target"]["Fn::Join"][1][1]["Ref"]
        uri = props(integrations[target])["IntegrationUri"]
        routes[props(route)["RouteKey"]] = _function_of(template, uri)
    return routes


def local_routes() -> dict[str, str]:
    return {**gateway.ROUTES, "$connect": gateway.CONNECT, "$disconnect": gateway.DISCONNECT}


def deployed_queue_consumers(template: dict[str, Any], stage: str) -> dict[str, str]:
    """Queue name → the handler its event source mapping invokes."""
    queues = _queue_names(template, stage)
    consumers = {}
    for mapping in of_type(template, "AWS::Lambda::EventSourceMapping").values():
        (source,) = logical_ids(props(mapping)["EventSourceArn"])
        if source in queues:
            consumers[queues[source]] = _function_of(template, props(mapping)["FunctionName"])
    return consumers


def deployed_stream_consumers(template: dict[str, Any]) -> list[str]:
    tables = of_type(template, "AWS::DynamoDB::Table")
    return [
        _function_of(template, props(m)["FunctionName"])
        for m in of_type(template, "AWS::Lambda::EventSourceMapping").values()
        if logical_ids(props(m)["EventSourceArn"]) & set(tables)
    ]


def deployed_rules(template: dict[str, Any], stage: str) -> dict[str, Any]:
    """Queue name → the event pattern of the rule that feeds it."""
    queues = _queue_names(template, stage)
    rules = {}
    for rule in of_type(template, "AWS::Events::Rule").values():
        (target,) = props(rule)["Targets"]
        (queue,) = logical_ids(target["Arn"]) & set(queues)
        rules[queues[queue]] = props(rule)["EventPattern"]
    return rules


def local_rules() -> dict[str, Any]:
    """Queue name → the event pattern of its rule, as the local stack creates them on moto."""
    import json

    import boto3
    from moto import mock_aws

    from local.resources import create_resources
    from services.common.settings import Settings

    settings = Settings()
    with mock_aws():

        def client(name: str) -> Any:
            return boto3.client(name, region_name="eu-west-1")

        create_resources(settings, client)
        events = client("events")
        rules = {}
        for rule in events.list_rules(EventBusName=settings.event_bus)["Rules"]:
            (target,) = events.list_targets_by_rule(
                Rule=rule["Name"], EventBusName=settings.event_bus
            )["Targets"]
            rules[target["Arn"].rsplit(":", 1)[1]] = json.loads(rule["EventPattern"])
    return rules


def test_the_deployed_and_local_routes_invoke_the_same_handlers(
    template: dict[str, Any],
) -> None:
    assert deployed_routes(template) == local_routes()
    (authorizer,) = of_type(template, "AWS::ApiGatewayV2::Authorizer").values()
    assert _function_of(template, props(authorizer)["AuthorizerUri"]) == gateway.AUTHORIZER


def test_every_deployed_queue_feeds_the_local_consumer(
    template: dict[str, Any], stage: str
) -> None:
    local = {manifest.queue_names()[queue]: h for queue, h in dispatcher.ROUTES.items()}
    assert deployed_queue_consumers(template, stage) == local
    assert deployed_stream_consumers(template) == [dispatcher.RELAY]


def test_every_deployed_rule_is_the_local_rule(template: dict[str, Any], stage: str) -> None:
    assert deployed_rules(template, stage) == local_rules()
