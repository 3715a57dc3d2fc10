"""The synthesized stacks against the product's own constants, specs and settings.

Everything expected here is derived from ``services.common.constants``,
``infra.manifest.FUNCTIONS`` and ``services.common.settings.Settings``, so a
table, consumer or function added there is checked without a new test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from infra import manifest
from infra.config import Config
from infra.manifest import FUNCTIONS, TIMERS, FunctionSpec
from services.common import constants, events
from services.common.runtime import BATCH_RESPONSE_MARGIN_MS
from tests.infra._support import HAVE_CDK, SKIP_REASON, STAGES, Synthesis

pytestmark = [pytest.mark.infra, pytest.mark.skipif(not HAVE_CDK, reason=SKIP_REASON)]

LOBBY_ROUTES = {
    "queue",
    "leave",
    "create_table",
    "join_table",
    "fill_bots",
    "rematch",
    "balance",
    "profile",
    "leaderboard",
    "replay",
}
ROUTES = {"$connect", "$disconnect", "play", "sync", "say", "continue", "$default", *LOBBY_ROUTES}
GET, PUT, UPDATE, DELETE, QUERY = (
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:Query",
)
MATCHMAKING_AND_LEDGER = {
    # key: (handler, trigger: routes or queue, table → actions as read from the services' code)
    "matchmaking-ws": (
        "services.matchmaking.handler.websocket",
        LOBBY_ROUTES,
        {
            constants.MATCHMAKING: {GET, PUT, UPDATE, DELETE},
            constants.PLAYERS: {GET, UPDATE},
            constants.GAMES: {GET, PUT, QUERY},  # ``rematch``: the ended table; ``replay``
            constants.LEDGER: {GET},
            constants.PROFILES: {GET, QUERY},  # ``profile``: their own; ``leaderboard``
        },
    ),
    "matchmaking-events": (
        "services.matchmaking.handler.events",
        "matchmaking",
        {
            constants.MATCHMAKING: {GET, UPDATE, DELETE, QUERY},
            constants.PLAYERS: {GET, UPDATE},
            constants.GAMES: {PUT},
            constants.LEDGER: {PUT, UPDATE},
        },
    ),
    "ledger-events": (
        "services.ledger.handler.events",
        "ledger",
        # A match's end is booked from the ended table and its scores, never the event.
        {constants.LEDGER: {PUT, UPDATE}, constants.GAMES: {GET, QUERY}},
    ),
    "ledger-api": ("services.ledger.handler.api", None, {constants.LEDGER: {GET, PUT, UPDATE}}),
    "profile-events": (
        "services.profile.handler.events",
        "profile",
        # Like the ledger, from the ended table and its scores; profiles read, then put,
        # with the standings moved (old deleted, new put) and the buckets' counts updated.
        {constants.PROFILES: {GET, PUT, UPDATE, DELETE}, constants.GAMES: {GET, QUERY}},
    ),
}
"""The functions of matchmaking and the ledger, written out (not derived from the specs)."""
SETTINGS = {"dev": (120, (100, 500, 1000)), "prod": (90, (100, 250))}
"""stage → (queue seconds, poll seconds, arena stakes) as conftest configures them."""


# --- template helpers ------------------------------------------------------------------


def of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == kind}


def props(resource: dict[str, Any]) -> dict[str, Any]:
    return dict(resource.get("Properties", {}))


def logical_ids(value: Any) -> set[str]:
    """Every logical id a value refers to (Ref, Fn::GetAtt), pseudo parameters left out."""
    found: set[str] = set()
    if isinstance(value, dict):
        if "Ref" in value and not str(value["Ref"]).startswith("AWS::"):
            found.add(value["Ref"])
        if "Fn::GetAtt" in value:
            found.add(value["Fn::GetAtt"][0])
        for item in value.values():
            found |= logical_ids(item)
    elif isinstance(value, list):
        for item in value:
            found |= logical_ids(item)
    return found


def named(template: dict[str, Any], kind: str, key: str, name: str) -> str:
    """The logical id of the resource of ``kind`` whose property ``key`` is ``name``."""
    matches = [k for k, v in of_type(template, kind).items() if props(v).get(key) == name]
    assert len(matches) == 1, f"{kind} {key}={name}: {matches}"
    return matches[0]


def with_region(name: str) -> dict[str, Any]:
    """An account-wide name (an IAM managed policy's), as the template writes it."""
    return {"Fn::Join": ["", [f"{name}-", {"Ref": "AWS::Region"}]]}


def function_id(template: dict[str, Any], stage: str, key: str) -> str:
    return named(template, "AWS::Lambda::Function", "FunctionName", f"{stage}-canasta-{key}")


def table_id(template: dict[str, Any], stage: str, spec: constants.TableSpec) -> str:
    return named(template, "AWS::DynamoDB::Table", "TableName", f"{stage}-{spec.name}")


def queue_id(template: dict[str, Any], stage: str, name: str) -> str:
    return named(template, "AWS::SQS::Queue", "QueueName", f"{stage}-{name}")


def statements(policy: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from props(policy)["PolicyDocument"]["Statement"]


def actions(statement: dict[str, Any]) -> list[str]:
    action = statement.get("Action", [])
    return [action] if isinstance(action, str) else list(action)


def role_statements(template: dict[str, Any], role: str) -> list[dict[str, Any]]:
    return [
        statement
        for policy in of_type(template, "AWS::IAM::Policy").values()
        if {"Ref": role} in props(policy)["Roles"]
        for statement in statements(policy)
    ]


def function_statements(template: dict[str, Any], stage: str, key: str) -> list[dict[str, Any]]:
    function = template["Resources"][function_id(template, stage, key)]
    return role_statements(template, props(function)["Role"]["Fn::GetAtt"][0])


# --- synthesis, cdk-nag, cfn-lint ------------------------------------------------------


def test_the_app_synthesizes_with_every_nag_finding_acknowledged(synthesis: Synthesis) -> None:
    # The session fixture's app.synth() raises on any unacknowledged AwsSolutions finding.
    assert set(synthesis.templates) == {*STAGES, "oidc"}
    print(f"synth of {len(STAGES)} stacks with cdk-nag: {synthesis.seconds:.1f} s")


def test_every_acknowledgement_is_narrow_and_has_a_written_reason(synthesis: Synthesis) -> None:
    from infra.nag import MIN_REASON_WORDS

    for stage, stack in synthesis.stacks.items():
        metadata = json.loads((synthesis.outdir / f"{stack.stack_name}.metadata.json").read_text())
        acknowledged = [
            (path, entry["data"])
            for path, entries in metadata.items()
            for entry in entries
            if entry["type"] == "aws:cdk:acknowledged-rules"
        ]
        assert acknowledged, stage
        for path, rules in acknowledged:
            assert path != f"/{stack.stack_name}", "acknowledge on a resource, not the stack"
            for rule, reason in rules.items():
                assert "AwsSolutions-" in rule
                assert len(reason.split()) >= MIN_REASON_WORDS, (path, rule, reason)


def test_an_unacknowledged_finding_fails_the_synth(tmp_path: Path) -> None:
    import aws_cdk as cdk
    from aws_cdk import aws_sqs as sqs

    from infra.nag import add_checks

    app = cdk.App(outdir=str(tmp_path))
    sqs.Queue(cdk.Stack(app, "bad"), "Plain")  # no DLQ, no SSL enforcement
    add_checks(app)
    with pytest.raises(RuntimeError, match="ValidationFailed"):
        app.synth()
    report = json.loads((tmp_path / "validation-report.json").read_text())
    rules = {v["ruleName"] for r in report["pluginReports"] for v in r["violations"]}
    assert {"AwsSolutions-SQS3", "AwsSolutions-SQS4"} <= rules


def test_bad_context_stops_the_app_before_anything_is_built(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from infra.app import main

    assert main(["-c", "stage=Prod"]) == 2
    assert "stage" in capsys.readouterr().err


def test_acknowledging_needs_a_reason() -> None:
    import aws_cdk as cdk

    from infra.nag import acknowledge

    with pytest.raises(ValueError, match="reason"):
        acknowledge(cdk.App(), "AwsSolutions-SQS3", "because")


def test_cfn_lint_passes(synthesis: Synthesis, tmp_path: Path) -> None:
    from cfnlint.api import ManualArgs, lint_file

    for stage, template in synthesis.templates.items():
        path = tmp_path / f"{stage}.template.json"
        path.write_text(json.dumps(template), encoding="utf-8")
        matches = lint_file(
            path,
            # W3005: CDK adds a DependsOn on each function's role that its GetAtt already
            # implies (redundant, harmless). W8003: the placeholder layer's rule is false on
            # purpose (these templates are not deployable; make deploy-check lints the real
            # one with W8003 on). Every other rule applies.
            config=ManualArgs(regions=["us-east-1"], ignore_checks=["W3005", "W8003"]),
        )
        assert [str(m) for m in matches] == [], stage


# --- tables ------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", constants.TABLES, ids=lambda s: s.name)
def test_tables_are_built_from_the_constants(
    template: dict[str, Any], stage: str, spec: constants.TableSpec
) -> None:
    resource = template["Resources"][table_id(template, stage, spec)]
    table = props(resource)
    expected = constants.create_table_request(spec)
    assert table["KeySchema"] == expected["KeySchema"]
    assert (
        sorted(table["AttributeDefinitions"], key=lambda a: a["AttributeName"])
        == (expected["AttributeDefinitions"])
    )
    assert table.get("GlobalSecondaryIndexes", []) == expected.get("GlobalSecondaryIndexes", [])
    assert table["BillingMode"] == "PAY_PER_REQUEST"
    assert table["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    if spec.ttl_attribute:
        assert table["TimeToLiveSpecification"] == {
            "AttributeName": spec.ttl_attribute,
            "Enabled": True,
        }
    else:
        assert "TimeToLiveSpecification" not in table
    if spec.stream:
        assert table["StreamSpecification"] == {"StreamViewType": "NEW_IMAGE"}
    else:
        assert "StreamSpecification" not in table
    production = stage == "prod"
    # A first create, in every stage: unprotected, so that its rollback can delete it.
    assert table["DeletionProtectionEnabled"] is False
    # RETAIN_ON_UPDATE_OR_DELETE: a failed first create deletes it, so the retry can succeed.
    assert resource["DeletionPolicy"] == ("RetainExceptOnCreate" if production else "Delete")


def test_tables_deployed_again_with_deletion_protection_have_it(synthesis: Synthesis) -> None:
    template = synthesis.templates["oidc"]
    tables = of_type(template, "AWS::DynamoDB::Table").values()
    assert len(tables) == len(constants.TABLES)
    assert all(props(table)["DeletionProtectionEnabled"] is True for table in tables)


def test_every_stream_a_function_reads_is_on_in_the_template(
    template: dict[str, Any], stage: str
) -> None:
    """The relay's trigger needs its table's stream: the table test above checks a stream
    only where the spec asks for one, so a spec that lost it would pass there."""
    read = [spec.stream for spec in FUNCTIONS.values() if spec.stream is not None]
    assert read
    for spec in read:
        table = props(template["Resources"][table_id(template, stage, spec)])
        assert table["StreamSpecification"] == {"StreamViewType": "NEW_IMAGE"}


# --- functions ---------------------------------------------------------------------------


@pytest.mark.parametrize("key", FUNCTIONS)
def test_functions_runtime_architecture_handler_and_environment(
    template: dict[str, Any], stage: str, key: str
) -> None:
    spec = FUNCTIONS[key]
    function = props(template["Resources"][function_id(template, stage, key)])
    assert function["Runtime"] == "python3.13"
    assert function["Architectures"] == ["arm64"]
    assert function["Handler"] == spec.handler
    assert function["MemorySize"] == spec.memory_mb
    assert len(function["Layers"]) == 1
    assert "LogGroup" in function["LoggingConfig"]
    env = function["Environment"]["Variables"]
    assert env["POWERTOOLS_SERVICE_NAME"] == spec.service
    assert env["POWERTOOLS_METRICS_NAMESPACE"] == "Canasta"
    tracing = stage == "prod"
    assert env["POWERTOOLS_TRACE_DISABLED"] == ("false" if tracing else "true")
    assert function.get("TracingConfig") == ({"Mode": "Active"} if tracing else None)
    assert ("CANASTA_WEBSOCKET_ENDPOINT" in env) is spec.pushes
    oidc = {"CANASTA_OIDC_ISSUER", "CANASTA_OIDC_AUDIENCE", "CANASTA_OIDC_JWKS_URL"}
    assert (oidc <= env.keys()) is spec.verifies_tokens
    assert not (oidc & env.keys()) or spec.verifies_tokens
    timers = {
        "CANASTA_TIMER_QUEUE_ARN",
        "CANASTA_SCHEDULER_ROLE_ARN",
        "CANASTA_SCHEDULE_DEAD_LETTER_ARN",
        "CANASTA_SCHEDULE_GROUP",
        "CANASTA_TURN_SECONDS",
        "CANASTA_INTERMISSION_SECONDS",
    }
    assert (timers <= env.keys()) is spec.schedules_timers
    if spec.schedules_timers:
        assert env["CANASTA_SCHEDULE_GROUP"] == f"{stage}-{constants.SCHEDULE_GROUP}"
        assert logical_ids(env["CANASTA_SCHEDULE_DEAD_LETTER_ARN"]) == {
            queue_id(template, stage, constants.SCHEDULE_DEAD_LETTER_QUEUE)
        }
        assert env["CANASTA_TURN_SECONDS"] == ("45" if stage == "prod" else "60")
        assert env["CANASTA_INTERMISSION_SECONDS"] == "20"
    if spec.pushes:
        endpoint = json.dumps(env["CANASTA_WEBSOCKET_ENDPOINT"])
        assert '"https://"' in endpoint and f"/{stage}" in endpoint


def test_every_canasta_variable_is_a_setting(synthesis: Synthesis) -> None:
    from services.common.settings import Settings

    known = {f"CANASTA_{name.upper()}" for name in Settings.model_fields}
    for template in synthesis.templates.values():
        for function in of_type(template, "AWS::Lambda::Function").values():
            names = props(function)["Environment"]["Variables"].keys()
            assert {n for n in names if n.startswith("CANASTA_")} <= known


@pytest.mark.parametrize("key", FUNCTIONS)
def test_every_handler_exists(key: str) -> None:
    import importlib

    module, _, name = FUNCTIONS[key].handler.rpartition(".")
    assert callable(getattr(importlib.import_module(module), name))


def test_nothing_is_retained_when_a_first_create_fails(template: dict[str, Any]) -> None:
    """A plain Retain survives the rollback of a failed first deploy, and the retry fails."""
    policies = {r.get("DeletionPolicy") for r in template["Resources"].values()}
    assert "Retain" not in policies


def test_no_arn_is_written_for_one_partition(template: dict[str, Any]) -> None:
    """ARNs come from the partition (aws-cn, aws-us-gov), never an ``arn:aws:`` literal
    (but the principals an operator configured, written as given)."""
    text = json.dumps(template).replace('"arn:aws:iam::111122223333:role/rummy"', "")
    assert "arn:aws:" not in text


def test_a_stack_with_the_placeholder_layer_is_refused_at_deploy(
    template: dict[str, Any],
) -> None:
    """bundle=false: CloudFormation's rules fail before any resource is created."""
    (assertion,) = template["Rules"]["LayerIsBundled"]["Assertions"]
    assert assertion["Assert"] == {"Fn::Equals": ["placeholder-layer", "bundled-layer"]}
    assert "bundle=true" in assertion["AssertDescription"]


def test_the_code_asset_holds_the_sources_and_no_caches(synthesis: Synthesis) -> None:
    code = synthesis.build_dir / "dev" / "code"
    assert (code / "services" / "turn" / "handler.py").is_file()
    assert (code / "shared_engine" / "__init__.py").is_file()
    assert not list(code.rglob("__pycache__"))
    placeholder = synthesis.build_dir / "dev" / "layer-placeholder" / "python"
    assert [p.name for p in placeholder.iterdir()] == ["PLACEHOLDER.txt"]


def test_concurrency_is_reserved_only_when_asked(template: dict[str, Any], stage: str) -> None:
    """Off by default (a new account's quota can be 10); conftest turns it on for prod."""
    functions = of_type(template, "AWS::Lambda::Function").values()
    reserved = {
        props(f)["FunctionName"]: props(f).get("ReservedConcurrentExecutions") for f in functions
    }
    expected = FUNCTIONS["relay"].reserved_concurrency if stage == "prod" else None
    assert reserved.pop(f"{stage}-canasta-relay") == expected
    assert set(reserved.values()) == {None}


@pytest.mark.parametrize(("stage", "asked"), [("dev", False), ("prod", False), ("oidc", True)])
def test_the_api_gateway_account_role_is_set_only_when_asked(
    synthesis: Synthesis, stage: str, asked: bool
) -> None:
    accounts = of_type(synthesis.templates[stage], "AWS::ApiGateway::Account")
    assert len(accounts) == (1 if asked else 0)


def test_function_log_groups_have_the_configured_retention(
    template: dict[str, Any], stage: str
) -> None:
    for key in FUNCTIONS:
        group = props(
            template["Resources"][
                named(
                    template,
                    "AWS::Logs::LogGroup",
                    "LogGroupName",
                    f"/aws/lambda/{stage}-canasta-{key}",
                )
            ]
        )
        assert group["RetentionInDays"] == 30


# --- WebSocket API ---------------------------------------------------------------------


def test_websocket_routes_and_authorizer(template: dict[str, Any], stage: str) -> None:
    (api_id, api), *_ = of_type(template, "AWS::ApiGatewayV2::Api").items()
    assert props(api)["ProtocolType"] == "WEBSOCKET"
    assert props(api)["RouteSelectionExpression"] == "$request.body.action"
    routes = {
        props(r)["RouteKey"]: props(r)
        for r in of_type(template, "AWS::ApiGatewayV2::Route").values()
    }
    assert set(routes) == ROUTES
    integrations = of_type(template, "AWS::ApiGatewayV2::Integration")
    expected = {route: key for key, spec in FUNCTIONS.items() for route in spec.routes}
    for route_key, route in routes.items():
        integration = integrations[route["Target"]["Fn::Join"][1][1]["Ref"]]
        assert function_id(template, stage, expected[route_key]) in logical_ids(
            props(integration)["IntegrationUri"]
        )
        if route_key == "$connect":
            assert route["AuthorizationType"] == "CUSTOM"
        else:
            assert route.get("AuthorizationType", "NONE") == "NONE"
    (authorizer,) = of_type(template, "AWS::ApiGatewayV2::Authorizer").values()
    assert props(authorizer)["AuthorizerType"] == "REQUEST"
    assert props(authorizer)["IdentitySource"] == ["route.request.querystring.token"]
    assert function_id(template, stage, "connect-authorizer") in logical_ids(
        props(authorizer)["AuthorizerUri"]
    )
    assert routes["$connect"]["AuthorizerId"] == {
        "Ref": next(iter(of_type(template, "AWS::ApiGatewayV2::Authorizer")))
    }
    assert api_id in logical_ids(routes["play"]["ApiId"])


def test_websocket_stage_throttling_and_no_access_logs_by_default(
    template: dict[str, Any], stage: str
) -> None:
    """A new account has no API Gateway CloudWatch Logs role, and API Gateway refuses to
    create a stage that logs without it: the default stage does not log."""
    (ws_stage,) = of_type(template, "AWS::ApiGatewayV2::Stage").values()
    settings = props(ws_stage)
    assert settings["StageName"] == stage
    assert settings["AutoDeploy"] is True
    assert settings["DefaultRouteSettings"] == {
        "ThrottlingBurstLimit": Config().message_burst,
        "ThrottlingRateLimit": Config().message_rate,
    }
    assert "AccessLogSettings" not in settings
    assert not of_type(template, "AWS::ApiGateway::Account")


def test_the_stage_logs_where_this_stack_sets_the_accounts_role(synthesis: Synthesis) -> None:
    template = synthesis.templates["oidc"]
    (ws_stage,) = of_type(template, "AWS::ApiGatewayV2::Stage").values()
    log_format = json.loads(props(ws_stage)["AccessLogSettings"]["Format"])
    assert log_format["requestId"] == "$context.requestId"
    (account,) = of_type(template, "AWS::ApiGateway::Account")
    # The stage waits for the account's role.
    assert account in ws_stage["DependsOn"]


def test_pushers_may_post_to_this_stages_connections_only(
    template: dict[str, Any], stage: str
) -> None:
    """Posting to players and closing their connections (``kick``) are apart: each on this
    stage's ``@connections`` only, and only for the functions whose spec says so."""
    for key, spec in FUNCTIONS.items():
        grants = [
            s
            for s in function_statements(template, stage, key)
            if "execute-api:ManageConnections" in actions(s)
        ]
        methods = {"POST"} if spec.pushes else set()
        methods |= {"DELETE"} if spec.closes_connections else set()
        assert len(grants) == len(methods), key
        for grant in grants:
            assert actions(grant) == ["execute-api:ManageConnections"]
        assert {g["Resource"]["Fn::Join"][1][-1] for g in grants} == {
            f"/{stage}/{method}/@connections/*" for method in methods
        }


# --- events, queues, timers ------------------------------------------------------------


def test_the_bus_and_its_archive(template: dict[str, Any], stage: str) -> None:
    bus_id = named(template, "AWS::Events::EventBus", "Name", f"{stage}-{constants.EVENT_BUS}")
    (archive,) = of_type(template, "AWS::Events::Archive").values()
    assert bus_id in logical_ids(props(archive)["SourceArn"])
    assert props(archive)["RetentionDays"] == 30
    assert props(archive)["EventPattern"] == {"source": [{"prefix": constants.EVENT_SOURCE}]}


@pytest.mark.parametrize("consumer", manifest.CONSUMERS)
def test_every_consumer_rule_routes_its_detail_types_to_its_queue(
    template: dict[str, Any], stage: str, consumer: str
) -> None:
    queue = queue_id(template, stage, constants.queue_name(consumer))
    rules = [
        props(r)
        for r in of_type(template, "AWS::Events::Rule").values()
        if any(queue in logical_ids(t["Arn"]) for t in props(r)["Targets"])
    ]
    assert len(rules) == 1
    (rule,) = rules
    assert rule["EventPattern"] == manifest.consumer_pattern(consumer)
    patterns = rule["EventPattern"].get("$or", [rule["EventPattern"]])
    routed = {(s, d) for p in patterns for s in p["source"] for d in p["detail-type"]}
    assert routed == {
        (f"canasta.{events.EMITTERS[d]}", d) for d in manifest.CONSUMERS[consumer]
    } | {
        (f"canasta.{events.OPERATOR_EMITS[d]}", d)
        for d in manifest.CONSUMERS[consumer]
        if d in events.OPERATOR_EMITS
    }, "each detail-type only from the service that publishes it (and the operators')"
    assert logical_ids(rule["EventBusName"]) == {
        named(template, "AWS::Events::EventBus", "Name", f"{stage}-{constants.EVENT_BUS}")
    }
    (target,) = rule["Targets"]
    dead = queue_id(template, stage, f"{constants.queue_name(consumer)}-dlq")
    assert dead in logical_ids(target["DeadLetterConfig"])


@pytest.mark.parametrize(
    "name", [*map(constants.queue_name, manifest.CONSUMERS), constants.TIMER_QUEUE]
)
def test_every_queue_has_a_dead_letter_queue_sse_and_ssl(
    template: dict[str, Any], stage: str, name: str
) -> None:
    queue = queue_id(template, stage, name)
    dead = queue_id(template, stage, f"{name}-dlq")
    settings = props(template["Resources"][queue])
    assert settings["RedrivePolicy"]["maxReceiveCount"] == 5
    assert logical_ids(settings["RedrivePolicy"]["deadLetterTargetArn"]) == {dead}
    for logical in (queue, dead):
        assert_encrypted_and_ssl_only(template, logical)


def assert_encrypted_and_ssl_only(template: dict[str, Any], queue: str) -> None:
    assert props(template["Resources"][queue])["SqsManagedSseEnabled"] is True
    policies = [
        p
        for p in of_type(template, "AWS::SQS::QueuePolicy").values()
        if logical_ids(props(p)["Queues"]) == {queue}
    ]
    assert any(
        s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
        for p in policies
        for s in statements(p)
    ), queue


@pytest.mark.parametrize("key", [k for k, s in FUNCTIONS.items() if s.queue])
def test_queue_consumers_report_batch_item_failures(
    template: dict[str, Any], stage: str, key: str
) -> None:
    spec = FUNCTIONS[key]
    assert spec.queue is not None
    name = constants.TIMER_QUEUE if spec.queue == TIMERS else constants.queue_name(spec.queue)
    queue = queue_id(template, stage, name)
    (mapping,) = [
        props(m)
        for m in of_type(template, "AWS::Lambda::EventSourceMapping").values()
        if logical_ids(props(m)["EventSourceArn"]) == {queue}
    ]
    assert logical_ids(mapping["FunctionName"]) == {function_id(template, stage, key)}
    assert mapping["BatchSize"] == 10
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    # The queue outlasts its consumer's timeout.
    function = props(template["Resources"][function_id(template, stage, key)])
    assert props(template["Resources"][queue])["VisibilityTimeout"] >= 6 * function["Timeout"]
    # One record at its worst and the answer fit the timeout; the batch stops before it.
    budget = float(function["Environment"]["Variables"]["CANASTA_RECORD_SECONDS"])
    assert budget == spec.record_seconds
    assert budget * 1000 + BATCH_RESPONSE_MARGIN_MS <= function["Timeout"] * 1000


def test_the_relay_reads_only_outbox_inserts_from_the_games_stream(
    template: dict[str, Any], stage: str
) -> None:
    games = table_id(template, stage, constants.GAMES)
    (mapping,) = [
        props(m)
        for m in of_type(template, "AWS::Lambda::EventSourceMapping").values()
        if logical_ids(props(m)["EventSourceArn"]) == {games}
    ]
    assert logical_ids(mapping["FunctionName"]) == {function_id(template, stage, "relay")}
    assert mapping["EventSourceArn"]["Fn::GetAtt"][1] == "StreamArn"
    (pattern,) = [json.loads(f["Pattern"]) for f in mapping["FilterCriteria"]["Filters"]]
    assert pattern == {
        "eventName": ["INSERT"],
        "dynamodb": {"NewImage": {"outbox": {"S": [{"exists": True}]}}},
    }
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["BisectBatchOnFunctionError"] is True
    assert mapping["MaximumRetryAttempts"] > 0
    assert mapping["StartingPosition"] == "TRIM_HORIZON"
    failures = queue_id(template, stage, "canasta-relay-failures")
    assert logical_ids(mapping["DestinationConfig"]) == {failures}


def test_the_turn_timer_schedule_group_and_scheduler_role(
    template: dict[str, Any], stage: str
) -> None:
    group = named(
        template, "AWS::Scheduler::ScheduleGroup", "Name", f"{stage}-{constants.SCHEDULE_GROUP}"
    )
    timer_queue = queue_id(template, stage, constants.TIMER_QUEUE)
    dead_letters = queue_id(template, stage, constants.SCHEDULE_DEAD_LETTER_QUEUE)
    assert_encrypted_and_ssl_only(template, dead_letters)
    (role_id,) = [
        k
        for k, r in of_type(template, "AWS::IAM::Role").items()
        if any(
            s["Principal"].get("Service") == "scheduler.amazonaws.com"
            for s in props(r)["AssumeRolePolicyDocument"]["Statement"]
        )
    ]
    (trust,) = props(template["Resources"][role_id])["AssumeRolePolicyDocument"]["Statement"]
    assert group in logical_ids(trust["Condition"]["ArnEquals"]["aws:SourceArn"])
    assert "aws:SourceAccount" in trust["Condition"]["StringEquals"]
    (grant,) = role_statements(template, role_id)
    assert actions(grant) == ["sqs:SendMessage"]
    # A timer it cannot deliver, Scheduler sends to the dead-letter queue, as this role.
    assert logical_ids(grant["Resource"]) == {timer_queue, dead_letters}
    for key, spec in FUNCTIONS.items():
        granted = function_statements(template, stage, key)
        schedules = [s for s in granted if "scheduler:CreateSchedule" in actions(s)]
        passes = [s for s in granted if "iam:PassRole" in actions(s)]
        assert bool(schedules) is bool(passes) is spec.schedules_timers, key
        for statement in schedules:
            assert statement["Resource"]["Fn::Join"][1][-1] == (
                f":schedule/{stage}-{constants.SCHEDULE_GROUP}/*"
            )
        for statement in passes:
            assert logical_ids(statement["Resource"]) == {role_id}
            assert statement["Condition"] == {
                "StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}
            }


# --- IAM -------------------------------------------------------------------------------


def test_no_allow_statement_has_a_wildcard_action(template: dict[str, Any]) -> None:
    kinds = ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy", "AWS::SQS::QueuePolicy")
    for kind in kinds:
        for logical, policy in of_type(template, kind).items():
            for statement in statements(policy):
                if statement["Effect"] != "Allow":
                    continue  # the SSL-only Deny on sqs:* is a guard, not a grant
                for action in actions(statement):
                    assert action != "*" and not action.endswith(":*"), (logical, action)
    for role in of_type(template, "AWS::IAM::Role").values():
        assert "Policies" not in props(role)


def _table_grants(
    template: dict[str, Any], stage: str, key: str
) -> dict[constants.TableSpec, set[str]]:
    tables = {table_id(template, stage, spec): spec for spec in constants.TABLES}
    granted: dict[constants.TableSpec, set[str]] = {}
    for statement in function_statements(template, stage, key):
        for logical in logical_ids(statement.get("Resource")) & tables.keys():
            granted.setdefault(tables[logical], set()).update(actions(statement))
    return granted


@pytest.mark.parametrize("key", FUNCTIONS)
def test_each_function_may_touch_only_its_tables_with_its_actions(
    template: dict[str, Any], stage: str, key: str
) -> None:
    spec: FunctionSpec = FUNCTIONS[key]
    expected = {table: set(acts) for table, acts in spec.tables.items()}
    if spec.stream is not None:
        expected.setdefault(spec.stream, set()).update(
            {"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"}
        )
    assert _table_grants(template, stage, key) == expected
    for statement in function_statements(template, stage, key):
        if statement["Resource"] == "*":
            allowed = {"dynamodb:ListStreams"} if spec.stream else set()
            if stage == "prod":
                allowed |= {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}
            assert set(actions(statement)) <= allowed, (key, statement)


def test_no_function_reads_a_secret_and_only_publishers_put_events(
    template: dict[str, Any], stage: str
) -> None:
    """Tokens are checked with the issuer's public keys: the stack holds no signing secret."""
    assert of_type(template, "AWS::SecretsManager::Secret") == {}
    (bus,) = of_type(template, "AWS::Events::EventBus")
    for key, spec in FUNCTIONS.items():
        granted = function_statements(template, stage, key)
        assert not [a for s in granted for a in actions(s) if a.startswith("secretsmanager:")]
        puts = [s for s in granted if bus in logical_ids(s["Resource"])]
        assert [actions(s) for s in puts] == [["events:PutEvents"]] * len(manifest.emitted(spec))


def _put_conditions(template: dict[str, Any], stage: str, key: str) -> list[dict[str, Any]]:
    """The ``Condition`` of each statement of the function's role that allows PutEvents."""
    return [
        statement.get("Condition", {})
        for statement in function_statements(template, stage, key)
        if "events:PutEvents" in actions(statement)
    ]


@pytest.mark.parametrize("key", FUNCTIONS)
def test_each_role_puts_only_its_function_s_sources_and_detail_types(
    template: dict[str, Any], stage: str, key: str
) -> None:
    """One statement per source, naming its detail-types: a role that could put any event
    (as connect, disconnect, relay and ledger-events could) lets its function forge any
    service's, a ``MatchEnded`` of ``canasta.score`` included."""
    found = {}
    for condition in _put_conditions(template, stage, key):
        assert list(condition) == ["StringEquals"], (key, condition)
        keys = condition["StringEquals"]
        assert set(keys) == {"events:source", "events:detail-type"}, (key, condition)
        assert isinstance(keys["events:source"], str), "one source per statement"
        detail_types = keys["events:detail-type"]
        found[keys["events:source"]] = tuple(
            [detail_types] if isinstance(detail_types, str) else detail_types
        )
    assert found == manifest.emitted(FUNCTIONS[key])
    score = found.get(events.source_of("MatchEnded"), ())
    assert ("MatchEnded" in score) is (key == "relay"), "only the relay puts the score's events"


# --- monitoring and outputs ------------------------------------------------------------


def _alarms(template: dict[str, Any]) -> list[dict[str, Any]]:
    return [props(a) for a in of_type(template, "AWS::CloudWatch::Alarm").values()]


@pytest.mark.parametrize("metric", ["Errors", "Throttles"])
def test_every_function_has_error_and_throttle_alarms(
    template: dict[str, Any], stage: str, metric: str
) -> None:
    watched = {
        logical
        for alarm in _alarms(template)
        if alarm["MetricName"] == metric and alarm["Namespace"] == "AWS/Lambda"
        for logical in logical_ids(alarm["Dimensions"])
    }
    assert watched == {function_id(template, stage, key) for key in FUNCTIONS}


def test_every_dead_letter_queue_has_a_depth_alarm(template: dict[str, Any], stage: str) -> None:
    names = [*map(constants.queue_name, manifest.CONSUMERS), constants.TIMER_QUEUE]
    dead = {queue_id(template, stage, f"{n}-dlq") for n in names}
    dead.add(queue_id(template, stage, "canasta-relay-failures"))
    dead.add(queue_id(template, stage, constants.SCHEDULE_DEAD_LETTER_QUEUE))
    watched = {
        logical
        for alarm in _alarms(template)
        if alarm["MetricName"] == "ApproximateNumberOfMessagesVisible"
        and alarm["Threshold"] == 0
        and alarm["ComparisonOperator"] == "GreaterThanThreshold"
        for logical in logical_ids(alarm["Dimensions"])
    }
    assert watched == dead


def test_every_consumer_service_alarms_on_unknown_events(template: dict[str, Any]) -> None:
    watched = {
        alarm["Dimensions"][0]["Value"]
        for alarm in _alarms(template)
        if alarm["MetricName"] == "unknown_events" and alarm["Namespace"] == "Canasta"
    }
    assert watched == {spec.service for spec in FUNCTIONS.values() if spec.consumes}


def test_the_turn_p99_duration_alarm(template: dict[str, Any], stage: str) -> None:
    (alarm,) = [a for a in _alarms(template) if a.get("ExtendedStatistic") == "p99"]
    assert alarm["MetricName"] == "Duration"
    assert logical_ids(alarm["Dimensions"]) == {function_id(template, stage, "turn-ws")}
    assert alarm["Threshold"] == (800 if stage == "prod" else 1000)


def test_the_dashboard_shows_functions_game_metrics_and_dead_letters(
    template: dict[str, Any],
) -> None:
    (dashboard,) = of_type(template, "AWS::CloudWatch::Dashboard").values()
    body = json.dumps(props(dashboard)["DashboardBody"])
    for text in ("Invocations", "Duration p99", "actions_applied", "rounds_dealt", "Dead letters"):
        assert text in body


def test_outputs(template: dict[str, Any], stage: str) -> None:
    outputs = template["Outputs"]
    for name in (
        "WebSocketUrl",
        "GamesTableName",
        "ConnectionsTableName",
        "PlayersTableName",
        "LedgerTableName",
        "MatchmakingTableName",
        "EventBusName",
        "TokenIssuer",
        "TokenAudience",
        "WebClientConfig",
        "UserPoolId",
        "UserPoolClientId",
        "SignInDomain",
        "MatchmakingStateMachineArn",
        "AlarmTopicArn",
    ):
        assert name in outputs
    url = outputs["WebSocketUrl"]["Value"]["Fn::Join"][1]
    assert url[0] == "wss://" and url[-1] == f"/{stage}"
    assert logical_ids(outputs["GamesTableName"]["Value"]) == {
        table_id(template, stage, constants.GAMES)
    }


# --- matchmaking and the ledger ----------------------------------------------------------


def state_machine_id(template: dict[str, Any], stage: str) -> str:
    return named(
        template,
        "AWS::StepFunctions::StateMachine",
        "StateMachineName",
        f"{stage}-{constants.STATE_MACHINE}",
    )


@pytest.mark.parametrize("key", MATCHMAKING_AND_LEDGER)
def test_the_matchmaking_and_ledger_functions_and_their_triggers(
    template: dict[str, Any], stage: str, key: str
) -> None:
    handler, trigger, _ = MATCHMAKING_AND_LEDGER[key]
    logical = function_id(template, stage, key)
    function = props(template["Resources"][logical])
    assert (function["Runtime"], function["Architectures"]) == ("python3.13", ["arm64"])
    assert function["Handler"] == handler
    routes = {
        props(r)["RouteKey"]
        for r in of_type(template, "AWS::ApiGatewayV2::Route").values()
        for i in [template["Resources"][props(r)["Target"]["Fn::Join"][1][1]["Ref"]]]
        if logical in logical_ids(props(i)["IntegrationUri"])
    }
    mappings = [
        props(m)
        for m in of_type(template, "AWS::Lambda::EventSourceMapping").values()
        if logical_ids(props(m)["FunctionName"]) == {logical}
    ]
    if isinstance(trigger, set):
        assert routes == trigger and not mappings
    elif trigger is None:
        assert not routes and not mappings  # invoked directly
    else:
        (mapping,) = mappings
        assert not routes
        queue = queue_id(template, stage, constants.queue_name(trigger))
        assert logical_ids(mapping["EventSourceArn"]) == {queue}
        assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


@pytest.mark.parametrize("key", MATCHMAKING_AND_LEDGER)
def test_the_matchmaking_and_ledger_functions_touch_only_what_their_code_uses(
    template: dict[str, Any], stage: str, key: str
) -> None:
    *_, tables = MATCHMAKING_AND_LEDGER[key]
    assert _table_grants(template, stage, key) == tables
    machine = state_machine_id(template, stage)
    bus = next(iter(of_type(template, "AWS::Events::EventBus")))
    own_logs = named(
        template, "AWS::Logs::LogGroup", "LogGroupName", f"/aws/lambda/{stage}-canasta-{key}"
    )
    table_ids = {table_id(template, stage, spec) for spec in constants.TABLES}
    expected_other = {
        "matchmaking-ws": {
            ("states:StartExecution",): machine,
            ("states:SendTaskSuccess",): machine,
            ("execute-api:ManageConnections",): None,
        },
        "matchmaking-events": {
            ("states:SendTaskSuccess",): machine,
            ("execute-api:ManageConnections",): None,
        },
        "ledger-events": {("events:PutEvents",): bus},
        "ledger-api": {},
        "profile-events": {},  # it publishes nothing and pushes nothing
    }[key]
    seen: set[tuple[str, ...]] = set()
    for statement in function_statements(template, stage, key):
        granted = tuple(actions(statement))
        assert all("*" not in a for a in granted), granted
        refs = logical_ids(statement["Resource"])
        if refs & table_ids or refs == {own_logs}:
            continue
        if statement["Resource"] == "*":
            assert stage == "prod" and set(granted) == {
                "xray:PutTraceSegments",
                "xray:PutTelemetryRecords",
            }
            continue
        if granted[0].startswith("sqs:"):
            queue = queue_id(
                template, stage, constants.queue_name(str(MATCHMAKING_AND_LEDGER[key][1]))
            )
            assert refs == {queue} and not any(a.startswith("sqs:Send") for a in granted)
            continue
        assert granted in expected_other, (key, granted)
        resource = expected_other[granted]
        if resource is not None:
            assert refs == {resource}, (key, granted)
        seen.add(granted)
    assert seen == set(expected_other), key


def test_only_matchmaking_starts_and_answers_tickets(template: dict[str, Any], stage: str) -> None:
    for key in FUNCTIONS:
        states = {
            a
            for s in function_statements(template, stage, key)
            for a in actions(s)
            if a.startswith("states:")
        }
        expected = {
            "matchmaking-ws": {"states:StartExecution", "states:SendTaskSuccess"},
            "matchmaking-events": {"states:SendTaskSuccess"},
        }.get(key, set())
        assert states == expected, key


def test_the_state_machine_runs_the_flow_definition_on_the_matchmaking_queue(
    template: dict[str, Any], stage: str
) -> None:
    from services.matchmaking.flow import definition

    machine = props(template["Resources"][state_machine_id(template, stage)])
    queue = queue_id(template, stage, constants.queue_name("matchmaking"))
    sentinel = "https://queue.example/matchmaking"
    parts = machine["DefinitionString"]["Fn::Join"][1]
    tokens = [part for part in parts if not isinstance(part, str)]
    # Ref of a queue: its URL; the service integrations' ARNs in the stack's partition.
    assert {json.dumps(t) for t in tokens} == {
        json.dumps({"Ref": queue}),
        json.dumps({"Ref": "AWS::Partition"}),
    }
    stand_in = {json.dumps({"Ref": queue}): sentinel, json.dumps({"Ref": "AWS::Partition"}): "P"}
    deployed = json.loads(
        "".join(part if isinstance(part, str) else stand_in[json.dumps(part)] for part in parts)
    )
    expected = definition(sentinel, "P")
    assert deployed == expected
    task = deployed["States"]["TryMatch"]
    assert task["Resource"] == "arn:P:states:::sqs:sendMessage.waitForTaskToken"
    assert task["Parameters"]["QueueUrl"] == sentinel
    assert machine["StateMachineType"] == "STANDARD"
    assert machine["TracingConfiguration"] == {"Enabled": stage == "prod"}
    logging = machine["LoggingConfiguration"]
    assert logging["Level"] == "ALL"
    (destination,) = logging["Destinations"]
    log_group = named(
        template,
        "AWS::Logs::LogGroup",
        "LogGroupName",
        f"/aws/vendedlogs/states/{stage}-{constants.STATE_MACHINE}",
    )
    assert logical_ids(destination) == {log_group}
    assert props(template["Resources"][log_group])["RetentionInDays"] == 30


def test_the_state_machine_role_may_only_send_to_the_matchmaking_queue(
    template: dict[str, Any], stage: str
) -> None:
    machine = props(template["Resources"][state_machine_id(template, stage)])
    role = machine["RoleArn"]["Fn::GetAtt"][0]
    (trust,) = props(template["Resources"][role])["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "states.amazonaws.com"}
    assert "aws:SourceAccount" in trust["Condition"]["StringEquals"]
    source = trust["Condition"]["ArnLike"]["aws:SourceArn"]["Fn::Join"][1][-1]
    assert source == f":stateMachine:{stage}-{constants.STATE_MACHINE}"
    queue = queue_id(template, stage, constants.queue_name("matchmaking"))
    data = [s for s in role_statements(template, role) if s["Resource"] != "*"]
    assert [(actions(s), logical_ids(s["Resource"])) for s in data] == [
        (["sqs:SendMessage"], {queue})
    ]
    # What Step Functions needs on "*" to deliver logs (and traces): nothing that reads data.
    starred = {
        a for s in role_statements(template, role) if s["Resource"] == "*" for a in actions(s)
    }
    assert all(a.startswith(("logs:", "xray:")) for a in starred), starred
    assert any(a.startswith("xray:") for a in starred) is (stage == "prod")


@pytest.mark.parametrize("key", ["matchmaking-ws", "matchmaking-events"])
def test_matchmaking_functions_know_the_state_machine_queue_and_timings(
    template: dict[str, Any], stage: str, key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from services.common.settings import Settings

    env = props(template["Resources"][function_id(template, stage, key)])["Environment"][
        "Variables"
    ]
    assert env["CANASTA_STATE_MACHINE_ARN"] == {"Ref": state_machine_id(template, stage)}
    queue = queue_id(template, stage, constants.queue_name("matchmaking"))
    assert env["CANASTA_MATCHMAKING_QUEUE_URL"] == {"Ref": queue}
    plain = {k: v for k, v in env.items() if k.startswith("CANASTA_") and isinstance(v, str)}
    for name, value in plain.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    assert (settings.queue_seconds, settings.arena_stakes) == SETTINGS[stage]


def test_only_matchmaking_functions_get_the_ticket_settings(
    template: dict[str, Any], stage: str
) -> None:
    for key, spec in FUNCTIONS.items():
        env = props(template["Resources"][function_id(template, stage, key)])["Environment"][
            "Variables"
        ]
        tickets = {"CANASTA_STATE_MACHINE_ARN", "CANASTA_MATCHMAKING_QUEUE_URL"} & env.keys()
        assert bool(tickets) is (spec.starts_tickets or spec.answers_tickets), key


def test_the_ledger_api_is_granted_per_client_alias(template: dict[str, Any], stage: str) -> None:
    """Each configured mode invokes its own alias (its identity, read from the invoked ARN),
    with its limits in the function's environment; dev configures none, so books for no one."""
    api = function_id(template, stage, "ledger-api")
    env = props(template["Resources"][api])["Environment"]["Variables"]
    clients = json.loads(env["CANASTA_LEDGER_CLIENTS"])
    aliases = {
        props(r)["Name"]: (logical_id, r)
        for logical_id, r in of_type(template, "AWS::Lambda::Alias").items()
    }
    outputs = template["Outputs"]
    if stage == "dev":
        assert clients == {} and aliases == {}
        assert not [o for o in outputs if o.startswith("LedgerApi")]
        return
    assert clients == {
        "rummy": {
            "points_per_booking": 10000,
            "points_per_day": 1000000,
            "jokers_per_booking": 3,
            "jokers_per_day": 100,
            "day_shards": 8,
        },
        "poker": {
            "points_per_booking": 500,
            "points_per_day": 50000,
            "jokers_per_booking": 0,
            "jokers_per_day": 0,
            "day_shards": 1,
        },
    }
    assert set(aliases) == {"rummy", "poker"}
    for client, (alias_id, alias) in aliases.items():
        assert logical_ids(props(alias)["FunctionName"]) == {api}
        policy_id = named(
            template,
            "AWS::IAM::ManagedPolicy",
            "ManagedPolicyName",
            with_region(f"{stage}-canasta-ledger-api-{client}-invoke"),
        )
        (statement,) = statements(template["Resources"][policy_id])
        assert actions(statement) == ["lambda:InvokeFunction"]
        assert statement["Resource"] == {"Ref": alias_id}, "the alias only, never the function"
        assert not props(template["Resources"][policy_id]).get("Roles")
        name = f"LedgerApi{client.capitalize()}"
        assert outputs[f"{name}Arn"]["Value"] == {"Ref": alias_id}
        assert outputs[f"{name}Arn"]["Export"] == {
            "Name": f"{stage}-canasta-ledger-api-{client}-arn"
        }
        assert outputs[f"{name}InvokePolicyArn"]["Value"] == {"Ref": policy_id}
    permissions = [
        props(p)
        for p in of_type(template, "AWS::Lambda::Permission").values()
        if logical_ids(props(p)["FunctionName"]) & {i for i, _ in aliases.values()}
    ]
    assert permissions == [
        {
            "Action": "lambda:InvokeFunction",
            "FunctionName": {"Ref": aliases["rummy"][0]},
            "Principal": "arn:aws:iam::111122223333:role/rummy",
        }
    ]


def test_the_state_machine_alarms(template: dict[str, Any], stage: str) -> None:
    machine = state_machine_id(template, stage)
    watched = {
        alarm["MetricName"]
        for alarm in _alarms(template)
        if alarm["Namespace"] == "AWS/States" and logical_ids(alarm["Dimensions"]) == {machine}
    }
    assert watched == {"ExecutionsFailed", "ExecutionsTimedOut"}
    for alarm in _alarms(template):
        if alarm["Namespace"] == "AWS/States":
            assert alarm["Threshold"] == 1
            assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"


def test_the_dashboard_shows_matchmaking_and_the_ledger(template: dict[str, Any]) -> None:
    (dashboard,) = of_type(template, "AWS::CloudWatch::Dashboard").values()
    parts = props(dashboard)["DashboardBody"]["Fn::Join"][1]
    body = json.loads("".join(p if isinstance(p, str) else "token" for p in parts))
    widgets = {w["properties"]["title"]: w["properties"] for w in body["widgets"]}
    matchmaking = json.dumps(widgets["Matchmaking"]["metrics"])
    for text in (
        "tickets_opened",
        "tables_formed",
        "tickets_abandoned",
        "ExecutionsFailed",
        "ExecutionsTimedOut",
    ):
        assert text in matchmaking, text
    assert "ledger_settlements" in json.dumps(widgets["Ledger"]["metrics"])
