"""``make preflight``: the account's quotas and settings a stage needs, read before a deploy.

``python -m infra.preflight --stage prod [-c key=value ...] [--strict]`` reads the
same context as cdk (cdk.json's, then ``-c``), derives the stage's needs
(``infra.needs``) and reads the account with boto3's default credentials and
region, read-only: Lambda's account settings, API Gateway's account, Step
Functions' quotas (Service Quotas), SES's account and identity, the CDK bootstrap
parameter, the stage's stack and its tables' and log groups' names. One line per check, ``OK``,
``SHORT`` or ``UNKNOWN``; exit 1 on any SHORT (with ``--strict``, on any UNKNOWN too),
2 on a bad context, no credentials or no region.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from infra.config import Config, ConfigError, add_context_option, context_overrides, file_context
from infra.needs import (
    BOOTSTRAP_PARAMETER,
    AccountNeeds,
    LambdaLimits,
    Readings,
    SesAccount,
    StatesQuotas,
    Unread,
    Verdict,
    states_quotas,
    verdicts,
)

Client = Any
"""A boto3 client (botocore builds their classes at run time)."""
Clients = Callable[[str], Client]

T = TypeVar("T")
STATES = "states"
"""Step Functions' service code in Service Quotas."""


def _read(call: Callable[[], T]) -> T | Unread:
    """The call's result, or ``Unread`` on a refusal (access denied, the API not served)
    or no answer at all (no credentials, no endpoint)."""
    try:
        return call()
    except ClientError as exc:
        error = exc.response.get("Error", {})
        return Unread(f"{error.get('Code', '?')}: {error.get('Message', exc)}")
    except BotoCoreError as exc:
        return Unread(type(exc).__name__)


def lambda_limits(client: Client) -> LambdaLimits:
    limit = client.get_account_settings()["AccountLimit"]
    return LambdaLimits(limit["ConcurrentExecutions"], limit["UnreservedConcurrentExecutions"])


def api_gateway_role(client: Client) -> str | None:
    return client.get_account().get("cloudwatchRoleArn") or None


def bootstrap_version(client: Client) -> int | None:
    try:
        parameter = client.get_parameter(Name=BOOTSTRAP_PARAMETER)["Parameter"]
    except client.exceptions.ParameterNotFound:
        return None
    return int(parameter["Value"])


def states(client: Client) -> StatesQuotas:
    """The account's applied values over the defaults: Service Quotas lists an applied value
    only for some quotas, the AWS defaults for all."""
    values: dict[str, float] = {}
    for operation in ("list_aws_default_service_quotas", "list_service_quotas"):
        for page in client.get_paginator(operation).paginate(ServiceCode=STATES):
            values |= {quota["QuotaName"]: quota["Value"] for quota in page["Quotas"]}
    return states_quotas(values)


def stack_status(client: Client, name: str) -> str | None:
    try:
        stacks = client.describe_stacks(StackName=name)["Stacks"]
    except ClientError as exc:
        # An absent stack is not a modeled error: "Stack with id ... does not exist".
        if exc.response["Error"]["Code"] == "ValidationError":
            return None
        raise
    return str(stacks[0]["StackStatus"])


def table_exists(client: Client, name: str) -> bool:
    try:
        client.describe_table(TableName=name)
    except client.exceptions.ResourceNotFoundException:
        return False
    return True


def log_group_exists(client: Client, name: str) -> bool:
    groups = client.describe_log_groups(logGroupNamePrefix=name)["logGroups"]
    return any(group["logGroupName"] == name for group in groups)


def ses_account(client: Client) -> SesAccount:
    account = client.get_account()
    return SesAccount(
        production=account["ProductionAccessEnabled"],
        sending=account["SendingEnabled"],
        daily_quota=account["SendQuota"]["Max24HourSend"],
    )


def ses_identity(client: Client, address: str) -> bool | None:
    try:
        identity = client.get_email_identity(EmailIdentity=address)
    except client.exceptions.NotFoundException:
        return None
    return bool(identity["VerifiedForSendingStatus"])


def read(needs: AccountNeeds, client: Clients) -> Readings:
    """Every reading the needs ask for, each failure kept as ``Unread``."""
    dynamodb, logs = client("dynamodb"), client("logs")
    found = Readings(
        lambda_limits=_read(lambda: lambda_limits(client("lambda"))),
        api_gateway_role=_read(lambda: api_gateway_role(client("apigateway"))),
        bootstrap_version=_read(lambda: bootstrap_version(client("ssm"))),
        states=_read(lambda: states(client("service-quotas"))),
        stack_status=_read(lambda: stack_status(client("cloudformation"), needs.stack)),
        tables={name: _read(partial(table_exists, dynamodb, name)) for name in needs.tables},
        log_groups={
            name: _read(partial(log_group_exists, logs, name)) for name in needs.log_groups
        },
    )
    address = needs.ses_identity
    if address is None:
        return found
    sesv2 = client("sesv2")
    return replace(
        found,
        ses_account=_read(lambda: ses_account(sesv2)),
        ses_identity=_read(lambda: ses_identity(sesv2, address)),
    )


def run(config: Config, client: Clients, strict: bool, out: Any = sys.stdout) -> int:
    """Print one line per check; 1 if any is SHORT (or UNKNOWN, when ``strict``)."""
    needs = AccountNeeds.of(config)
    checks = verdicts(needs, read(needs, client))
    for check in checks:
        print(check.line(), file=out)
    short = [c.name for c in checks if c.verdict == Verdict.SHORT]
    unknown = [c.name for c in checks if c.verdict == Verdict.UNKNOWN]
    if unknown:
        print(f"UNKNOWN: {len(unknown)} not read, check by hand: {', '.join(unknown)}", file=out)
    if short:
        print(f"SHORT: {len(short)} to fix before deploying {needs.stack}", file=out)
    return 1 if short or (strict and unknown) else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.preflight", description=__doc__)
    parser.add_argument("--stage", help="the stage (overrides the context's)")
    parser.add_argument("--strict", action="store_true", help="exit 1 on UNKNOWN too")
    add_context_option(parser)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    context = {**file_context(), **context_overrides(parser, args.context)}
    if args.stage:
        context["stage"] = args.stage
    try:
        config = Config.from_context(context.get)
    except ConfigError as exc:
        print(f"infra.preflight: {exc}", file=sys.stderr)
        return 2
    session = boto3.Session()
    if session.region_name is None or session.get_credentials() is None:
        print(
            "infra.preflight: no AWS credentials or no region (AWS_PROFILE, or the "
            "AWS_* variables with AWS_DEFAULT_REGION)",
            file=sys.stderr,
        )
        return 2
    print(f"preflight of stage {config.stage} in {session.region_name}")
    return run(config, session.client, args.strict)


if __name__ == "__main__":
    raise SystemExit(main())
