"""The preflight: a stage's account needs, the verdicts on crafted readings, and the reading
shell end to end on moto, with botocore's Stubber for the APIs moto does not serve
(Lambda's account settings, SES's account, Step Functions' quotas)."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from infra import preflight
from infra.config import Config
from infra.manifest import FUNCTIONS, UNRESERVED_MINIMUM, concurrency_needed
from infra.needs import (
    AccountNeeds,
    LambdaLimits,
    Readings,
    SesAccount,
    StatesQuotas,
    Unread,
    Verdict,
    needs_metadata,
    states_quotas,
    verdicts,
)
from services.common import constants
from tests.infra._support import HAVE_CDK, SKIP_REASON, Synthesis

REGION = "eu-west-1"
SENDER = "games@canasta.example"
CONSUMERS = sum(spec.max_concurrency or 0 for spec in FUNCTIONS.values())
RESERVED = sum(spec.reserved_concurrency or 0 for spec in FUNCTIONS.values())
RELAY_LOGS = "/aws/lambda/prod-canasta-relay"
START_RATE = "StartExecution throttle token refill rate per second"
OPEN = "Open executions"


# --- what a stage needs -------------------------------------------------------------------


@pytest.mark.unit
def test_consumers_alone_claim_their_max_concurrency_and_reservations_add_the_minimum() -> None:
    plain = concurrency_needed(reserved=False, messages_per_second=100)
    assert plain.consumers == CONSUMERS == 47
    assert plain.reserved == 0
    assert plain.account == plain.claimed == CONSUMERS + plain.stream + 10 + plain.direct
    reserving = concurrency_needed(reserved=True, messages_per_second=100)
    assert reserving.reserved == RESERVED == 10
    # Reserving 10 needs the 100 Lambda keeps unreserved beside them.
    assert reserving.account == RESERVED + max(reserving.claimed - RESERVED, UNRESERVED_MINIMUM)
    assert reserving.account == 110
    # The WebSocket share follows the stage's throttle (Little's law).
    assert concurrency_needed(False, 1000).websocket == 100


@pytest.mark.unit
def test_every_queue_consumer_has_a_maximum_concurrency_sqs_accepts() -> None:
    for key, spec in FUNCTIONS.items():
        if spec.queue is not None:
            assert spec.max_concurrency is not None and 2 <= spec.max_concurrency <= 1000, key


@pytest.mark.unit
def test_needs_follow_the_configuration() -> None:
    dev = AccountNeeds.of(Config())
    assert dev.tables == tuple(f"dev-{spec.name}" for spec in constants.TABLES)
    assert dev.stack == "canasta-dev"
    assert not dev.api_gateway_role and dev.ses_identity is None and dev.ses_daily_emails == 0
    # 10,000 matches a day, four tickets each: 0.46 a second, three times that at the peak,
    # and half as much again above it.
    assert dev.start_execution_rate == 3 and dev.open_executions == 3 * 120
    busy = AccountNeeds.of(Config(matches_per_day=100_000, queue_seconds=60))
    assert busy.start_execution_rate == 21 and busy.open_executions == 21 * 60
    # Access logs need the account's role unless the stack sets it.
    assert AccountNeeds.of(Config(access_logs=True)).api_gateway_role
    assert not AccountNeeds.of(
        Config(access_logs=True, api_gateway_logs_role=True)
    ).api_gateway_role
    prod = AccountNeeds.of(Config(stage="prod", reserved_concurrency=True, ses_from_email=SENDER))
    assert prod.concurrency.account == 110
    assert prod.ses_identity == SENDER and prod.ses_daily_emails > 200
    meta = needs_metadata(Config(stage="prod", reserved_concurrency=True, ses_from_email=SENDER))
    assert meta["lambdaConcurrency"] == 110 and meta["unreservedMinimum"] == 100
    assert meta["tables"] == [f"prod-{spec.name}" for spec in constants.TABLES]


# --- the verdicts on crafted readings -----------------------------------------------------

PROD = Config(stage="prod", oidc_issuer="https://id.example", oidc_audience="canasta")
"""Production signing players in with the platform's issuer: no user pool, so no SES sender
(the SES checks have tests of their own)."""

NEEDS = AccountNeeds.of(
    Config(stage="prod", reserved_concurrency=True, access_logs=True, ses_from_email=SENDER)
)
ENOUGH = Readings(
    lambda_limits=LambdaLimits(total=1000, unreserved=1000),
    api_gateway_role="arn:aws:iam::123456789012:role/apigateway-logs",
    bootstrap_version=21,
    states=StatesQuotas(start_rate=150.0, open_executions=1_000_000.0),
    stack_status=None,
    tables=dict.fromkeys(NEEDS.tables, False),
    log_groups=dict.fromkeys(NEEDS.log_groups, False),
    ses_account=SesAccount(production=True, sending=True, daily_quota=50_000.0),
    ses_identity=True,
)
SHORTS: dict[str, dict[str, Any]] = {
    # A new account's quota: 10.
    "lambda concurrency": {"lambda_limits": LambdaLimits(total=10, unreserved=10)},
    "lambda unreserved": {"lambda_limits": LambdaLimits(total=1000, unreserved=105)},
    "api gateway logs role": {"api_gateway_role": None},
    "cdk bootstrap": {"bootstrap_version": None},
    "states start rate": {"states": StatesQuotas(start_rate=2.0, open_executions=1e6)},
    "states open executions": {"states": StatesQuotas(start_rate=150.0, open_executions=300.0)},
    f"ses identity {SENDER}": {"ses_identity": False},
    # Sending paused (a review of bounces): no email leaves, whatever the quota.
    "ses production access": {"ses_account": SesAccount(True, False, 50_000.0)},
    "ses daily quota": {"ses_account": SesAccount(True, True, 500.0)},
    "table prod-canasta-ledger": {
        "tables": {**dict.fromkeys(NEEDS.tables, False), "prod-canasta-ledger": True}
    },
    # A production stage deleted before keeps its log groups.
    "log group /aws/lambda/prod-canasta-relay": {
        "log_groups": {**dict.fromkeys(NEEDS.log_groups, False), RELAY_LOGS: True}
    },
}
ALSO_SHORT = {"lambda concurrency": {"lambda unreserved"}}
"""A total below the need leaves less unreserved than that too."""


def by_name(readings: Readings, needs: AccountNeeds = NEEDS) -> dict[str, Verdict]:
    return {check.name: check.verdict for check in verdicts(needs, readings)}


@pytest.mark.unit
def test_enough_of_everything_is_ok() -> None:
    found = by_name(ENOUGH)
    assert set(found) >= set(SHORTS)
    assert set(found.values()) == {Verdict.OK}


@pytest.mark.unit
@pytest.mark.parametrize("name", sorted(SHORTS))
def test_each_check_is_short_when_the_account_is(name: str) -> None:
    found = by_name(replace(ENOUGH, **SHORTS[name]))
    short = {check for check, verdict in found.items() if verdict == Verdict.SHORT}
    assert short == {name, *ALSO_SHORT.get(name, ())}
    (line,) = [c.line() for c in verdicts(NEEDS, replace(ENOUGH, **SHORTS[name])) if c.name == name]
    assert line.startswith("SHORT") and "fix:" in line


@pytest.mark.unit
def test_a_sandbox_quota_is_short_even_out_of_the_sandbox() -> None:
    found = by_name(replace(ENOUGH, ses_account=SesAccount(True, True, 200.0)))
    assert found["ses daily quota"] == Verdict.SHORT


@pytest.mark.unit
def test_unread_is_unknown_and_never_ok() -> None:
    unread = Unread("AccessDeniedException: not authorized")
    readings = replace(
        ENOUGH,
        lambda_limits=unread,
        api_gateway_role=unread,
        bootstrap_version=unread,
        states=unread,
        tables=dict.fromkeys(NEEDS.tables, unread),
        log_groups=dict.fromkeys(NEEDS.log_groups, unread),
        ses_account=unread,
        ses_identity=unread,
    )
    assert set(by_name(readings).values()) == {Verdict.UNKNOWN}
    # A quota Service Quotas does not list is unknown, not zero.
    missing = by_name(replace(ENOUGH, states=StatesQuotas(None, None)))
    assert missing["states start rate"] == missing["states open executions"] == Verdict.UNKNOWN


@pytest.mark.unit
def test_what_the_stage_does_not_use_is_not_asked_of_the_account() -> None:
    bare = replace(
        ENOUGH, api_gateway_role=None, ses_account=None, ses_identity=None, stack_status=None
    )
    found = by_name(bare, AccountNeeds.of(PROD))
    assert set(found.values()) == {Verdict.OK}
    assert "ses" in found and "lambda unreserved" in found


@pytest.mark.unit
def test_the_deployed_stacks_own_names_are_not_leftovers() -> None:
    taken = replace(
        ENOUGH,
        tables=dict.fromkeys(NEEDS.tables, True),
        log_groups=dict.fromkeys(NEEDS.log_groups, True),
    )
    names = [f"table {n}" for n in NEEDS.tables] + [f"log group {n}" for n in NEEDS.log_groups]
    deployed = by_name(replace(taken, stack_status="UPDATE_COMPLETE"))
    assert {deployed[name] for name in names} == {Verdict.OK}
    # A failed first create's stack owns nothing, whatever it left behind.
    failed = by_name(replace(taken, stack_status="ROLLBACK_COMPLETE"))
    assert {failed[name] for name in names} == {Verdict.SHORT}


@pytest.mark.unit
def test_step_functions_quotas_are_found_by_name_and_express_ones_ignored() -> None:
    quotas = states_quotas(
        {
            "Express StartExecution throttle token refill rate per second": 6000.0,
            START_RATE: 150.0,
            "StartExecution throttle token bucket size": 800.0,
            OPEN: 1_000_000.0,
        }
    )
    assert quotas == StatesQuotas(start_rate=150.0, open_executions=1_000_000.0)
    assert states_quotas({}) == StatesQuotas(None, None)


# --- the reading shell: moto, and recorded responses where moto serves nothing -----------

LAMBDA_SETTINGS = {
    # GetAccountSettings, as the Lambda API reference documents the response.
    "AccountLimit": {
        "TotalCodeSize": 80530636800,
        "CodeSizeUnzipped": 262144000,
        "CodeSizeZipped": 52428800,
        "ConcurrentExecutions": 1000,
        "UnreservedConcurrentExecutions": 1000,
    },
    "AccountUsage": {"TotalCodeSize": 9426, "FunctionCount": 4},
}
NEW_ACCOUNT = {
    **LAMBDA_SETTINGS,
    "AccountLimit": {
        **LAMBDA_SETTINGS["AccountLimit"],
        "ConcurrentExecutions": 10,
        "UnreservedConcurrentExecutions": 10,
    },
}
SES_PRODUCTION = {
    # SESv2 GetAccount.
    "DedicatedIpAutoWarmupEnabled": True,
    "EnforcementStatus": "HEALTHY",
    "ProductionAccessEnabled": True,
    "SendQuota": {"Max24HourSend": 50000.0, "MaxSendRate": 14.0, "SentLast24Hours": 0.0},
    "SendingEnabled": True,
    "SuppressionAttributes": {"SuppressedReasons": ["BOUNCE", "COMPLAINT"]},
}
SES_SANDBOX = {
    **SES_PRODUCTION,
    "ProductionAccessEnabled": False,
    "SendQuota": {"Max24HourSend": 200.0, "MaxSendRate": 1.0, "SentLast24Hours": 0.0},
}
SES_IDENTITY = {
    # SESv2 GetEmailIdentity of a verified address.
    "IdentityType": "EMAIL_ADDRESS",
    "FeedbackForwardingStatus": True,
    "VerifiedForSendingStatus": True,
    "DkimAttributes": {"SigningEnabled": False, "Status": "NOT_STARTED"},
    "Policies": {},
    "Tags": [],
    "VerificationStatus": "SUCCESS",
}


def quota(name: str, value: float, code: str) -> dict[str, Any]:
    """A ServiceQuota as ListServiceQuotas returns it (the codes here are the fixture's)."""
    return {
        "ServiceCode": "states",
        "ServiceName": "AWS Step Functions",
        "QuotaArn": f"arn:aws:servicequotas:{REGION}:123456789012:states/{code}",
        "QuotaCode": code,
        "QuotaName": name,
        "Value": value,
        "Unit": "None",
        "Adjustable": True,
        "GlobalQuota": False,
    }


DEFAULT_QUOTAS = [quota(START_RATE, 150.0, "L-START"), quota(OPEN, 1_000_000.0, "L-OPEN")]


STATES = {"ServiceCode": "states"}
Stub = Callable[[Stubber], None]
Run = Callable[..., tuple[int, str]]


@pytest.fixture
def account() -> Iterator[Run]:
    """Run the preflight on moto, the services moto does not serve answered by a Stubber."""
    with pytest.MonkeyPatch.context() as patch, mock_aws():
        patch.setenv("AWS_DEFAULT_REGION", REGION)

        def run(config: Config, stubs: dict[str, Stub], strict: bool = False) -> tuple[int, str]:
            stubbers = []

            def client(name: str) -> Any:
                made = boto3.client(name, region_name=REGION)
                if name in stubs:
                    stubber = Stubber(made)
                    stubs[name](stubber)
                    stubber.activate()
                    stubbers.append(stubber)
                return made

            out = io.StringIO()
            code = preflight.run(config, client, strict, out)
            for stubber in stubbers:
                stubber.assert_no_pending_responses()
            return code, out.getvalue()

        yield run


def lambda_answers(settings: dict[str, Any]) -> Stub:
    return lambda stub: stub.add_response("get_account_settings", settings, {})


def quotas_answer(defaults: list[dict[str, Any]], applied: list[dict[str, Any]]) -> Stub:
    def answer(stub: Stubber) -> None:
        stub.add_response("list_aws_default_service_quotas", {"Quotas": defaults}, STATES)
        stub.add_response("list_service_quotas", {"Quotas": applied}, STATES)

    return answer


ANSWERED = {
    "lambda": lambda_answers(LAMBDA_SETTINGS),
    "service-quotas": quotas_answer(DEFAULT_QUOTAS, []),
}


def bootstrap(version: str = "21") -> None:
    ssm = boto3.client("ssm", region_name=REGION)
    ssm.put_parameter(Name="/cdk-bootstrap/hnb659fds/version", Value=version, Type="String")


def verdict_of(out: str, name: str) -> str:
    (line,) = [line for line in out.splitlines() if line[8:].startswith(f"{name}:")]
    return line.split()[0]


@pytest.mark.integration
def test_a_fresh_bootstrapped_account_is_ok_where_read_and_unknown_where_not(account: Run) -> None:
    bootstrap()
    # Lambda's settings and Step Functions' quotas are not served by moto: unknown, loudly.
    code, out = account(PROD, {})
    assert code == 0, out
    assert verdict_of(out, "lambda concurrency") == "UNKNOWN"
    assert verdict_of(out, "states start rate") == "UNKNOWN"
    assert verdict_of(out, "table prod-canasta-games") == "OK"
    assert verdict_of(out, "cdk bootstrap") == "OK"
    assert "UNKNOWN: 3 not read" in out
    assert account(PROD, {}, strict=True)[0] == 1
    # With them answered, everything is OK.
    code, out = account(replace(PROD, reserved_concurrency=True), ANSWERED)
    assert code == 0, out
    assert {line.split()[0] for line in out.splitlines()} == {"OK"}


@pytest.mark.integration
def test_a_leftover_table_is_short(account: Run) -> None:
    bootstrap()
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    dynamodb.create_table(**constants.create_table_request(constants.LEDGER, "prod-canasta-ledger"))
    code, out = account(PROD, ANSWERED)
    assert code == 1, out
    assert verdict_of(out, "table prod-canasta-ledger") == "SHORT"
    assert verdict_of(out, "table prod-canasta-games") == "OK"
    assert "SHORT: 1 to fix before deploying canasta-prod" in out


@pytest.mark.integration
def test_a_retained_log_group_is_short(account: Run) -> None:
    bootstrap()
    logs = boto3.client("logs", region_name=REGION)
    logs.create_log_group(logGroupName=RELAY_LOGS)
    logs.create_log_group(logGroupName="/aws/lambda/prod-canasta-turn-ws-old")
    code, out = account(PROD, ANSWERED)
    assert code == 1, out
    assert verdict_of(out, f"log group {RELAY_LOGS}") == "SHORT"
    # Only the exact name collides, not one it prefixes.
    assert verdict_of(out, "log group /aws/lambda/prod-canasta-turn-ws") == "OK"


@pytest.mark.integration
def test_the_deployed_stacks_tables_pass(account: Run) -> None:
    bootstrap()
    template = '{"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}}}'
    boto3.client("cloudformation", region_name=REGION).create_stack(
        StackName="canasta-dev", TemplateBody=template
    )
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    dynamodb.create_table(**constants.create_table_request(constants.GAMES, "dev-canasta-games"))
    code, out = account(Config(), ANSWERED)
    assert code == 0, out
    assert "the stack's own (CREATE_COMPLETE)" in out


@pytest.mark.integration
def test_no_bootstrap_or_an_old_one_is_short(account: Run) -> None:
    code, out = account(Config(), ANSWERED)
    assert code == 1 and verdict_of(out, "cdk bootstrap") == "SHORT", out
    bootstrap("5")
    code, out = account(Config(), ANSWERED)
    assert code == 1 and verdict_of(out, "cdk bootstrap") == "SHORT", out


@pytest.mark.integration
def test_access_logs_need_the_api_gateway_role_set_before(account: Run) -> None:
    bootstrap()
    logs = Config(access_logs=True)
    code, out = account(logs, ANSWERED)
    assert code == 1 and verdict_of(out, "api gateway logs role") == "SHORT", out
    assert "apiGatewayLogsRole=true" in out
    # The stack setting it itself needs nothing of the account.
    assert account(Config(access_logs=True, api_gateway_logs_role=True), ANSWERED)[0] == 0
    role = "arn:aws:iam::123456789012:role/apigateway-logs"
    boto3.client("apigateway", region_name=REGION).update_account(
        patchOperations=[{"op": "replace", "path": "/cloudwatchRoleArn", "value": role}]
    )
    code, out = account(logs, ANSWERED)
    assert code == 0 and verdict_of(out, "api gateway logs role") == "OK", out


@pytest.mark.integration
def test_a_new_accounts_lambda_quota_is_short(account: Run) -> None:
    bootstrap()
    stubs = {**ANSWERED, "lambda": lambda_answers(NEW_ACCOUNT)}
    code, out = account(Config(), stubs)
    assert code == 1, out
    assert verdict_of(out, "lambda concurrency") == "SHORT"
    assert "L-B99A9384" in out


@pytest.mark.integration
def test_step_functions_applied_quotas_override_the_defaults(account: Run) -> None:
    bootstrap()
    lowered = [quota(START_RATE, 2.0, "L-START")]
    code, out = account(
        Config(), {**ANSWERED, "service-quotas": quotas_answer(DEFAULT_QUOTAS, lowered)}
    )
    assert code == 1, out
    assert verdict_of(out, "states start rate") == "SHORT"
    assert verdict_of(out, "states open executions") == "OK"


def ses_answers(account_response: dict[str, Any], identity: dict[str, Any] | None) -> Stub:
    def answer(stub: Stubber) -> None:
        stub.add_response("get_account", account_response, {})
        if identity is None:
            stub.add_client_error("get_email_identity", "NotFoundException", http_status_code=404)
        else:
            stub.add_response("get_email_identity", identity, {"EmailIdentity": SENDER})

    return answer


@pytest.mark.integration
def test_an_ses_sender_needs_production_access_and_a_verified_identity(account: Run) -> None:
    bootstrap()
    config = Config(ses_from_email=SENDER)
    code, out = account(config, {**ANSWERED, "sesv2": ses_answers(SES_PRODUCTION, SES_IDENTITY)})
    assert code == 0, out
    code, out = account(config, {**ANSWERED, "sesv2": ses_answers(SES_SANDBOX, SES_IDENTITY)})
    assert code == 1 and verdict_of(out, "ses production access") == "SHORT", out
    assert verdict_of(out, "ses daily quota") == "SHORT"
    code, out = account(config, {**ANSWERED, "sesv2": ses_answers(SES_PRODUCTION, None)})
    assert code == 1 and verdict_of(out, f"ses identity {SENDER}") == "SHORT", out


@pytest.mark.integration
def test_the_identity_as_moto_serves_it() -> None:
    with mock_aws():
        sesv2 = boto3.client("sesv2", region_name=REGION)
        assert preflight.ses_identity(sesv2, SENDER) is None
        sesv2.create_email_identity(EmailIdentity=SENDER)
        # moto leaves a new address unverified for sending (AWS waits for its link).
        assert preflight.ses_identity(sesv2, SENDER) is False


@pytest.mark.integration
def test_access_denied_is_unknown_not_short(account: Run) -> None:
    bootstrap()

    def denied(stub: Stubber) -> None:
        stub.add_client_error("get_account_settings", "AccessDeniedException", http_status_code=403)

    code, out = account(Config(), {**ANSWERED, "lambda": denied})
    assert code == 0, out
    assert verdict_of(out, "lambda concurrency") == "UNKNOWN"
    assert "AccessDeniedException" in out


# --- the template --------------------------------------------------------------------------


@pytest.mark.infra
@pytest.mark.skipif(not HAVE_CDK, reason=SKIP_REASON)
def test_the_template_carries_the_needs_the_preflight_checks(synthesis: Synthesis) -> None:
    for stage, stack in synthesis.stacks.items():
        expected = needs_metadata(stack.backbone.config)
        template = synthesis.templates[stage]
        assert template["Metadata"]["Canasta::AccountNeeds"] == expected
        # Every log group the stack names is one the preflight looks for.
        named = {
            resource["Properties"]["LogGroupName"]
            for resource in template["Resources"].values()
            if resource["Type"] == "AWS::Logs::LogGroup"
            and isinstance(resource["Properties"].get("LogGroupName"), str)
        }
        assert named == set(expected["logGroups"])
