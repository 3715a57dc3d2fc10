"""What a stage needs from its AWS account, and how the account's readings measure up.

A first deploy fails, or the stage throttles later, on settings no template can
hold: the account's Lambda concurrency, its API Gateway logging role, SES out of
the sandbox, Step Functions' quotas, the CDK bootstrap, names left over from an
earlier deploy. ``AccountNeeds`` derives them from the ``Config`` alone (the template
carries them as Metadata); ``verdicts`` compares them with what ``infra.preflight``
read, so every comparison is tested without an account. Nothing here calls AWS.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from infra.config import Config, stack_name
from infra.manifest import FUNCTIONS, UNRESERVED_MINIMUM, Concurrency, concurrency_needed
from services.common.constants import STATE_MACHINE, TABLES

BOOTSTRAP_VERSION = 6
"""The CDK bootstrap stack's version the templates need: their ``CheckBootstrapVersion``
rule refuses 1 to 5 (``/cdk-bootstrap/hnb659fds/version``, the default qualifier)."""
BOOTSTRAP_PARAMETER = "/cdk-bootstrap/hnb659fds/version"
SES_DAILY_EMAILS = 1_000
"""A day's sign-up codes and password resets, an estimate: the cost model's 10,000
matches a day seat 40,000 players; one email for one in forty. Five times the SES
sandbox's 200 a day, a fiftieth of a production account's first 50,000."""
LAMBDA_QUOTA = "L-B99A9384"
"""Service Quotas' code of Lambda's ``Concurrent executions``."""
ALIVE = ("CREATE_COMPLETE", "UPDATE_COMPLETE", "UPDATE_ROLLBACK_COMPLETE", "IMPORT_COMPLETE")
"""Stack statuses whose resources (tables, log groups) belong to a deployed stage."""
FIX_ROLE = (
    "-c apiGatewayLogsRole=true (once per account and region), or aws apigateway "
    "update-account --patch-operations op=replace,path=/cloudwatchRoleArn,value=<role ARN>"
)


class Verdict(StrEnum):
    OK = "OK"
    SHORT = "SHORT"
    """The deploy fails, or the stage throttles, until it is fixed."""
    UNKNOWN = "UNKNOWN"
    """Not read (access denied, the API not available): nobody knows."""


@dataclass(frozen=True)
class Check:
    name: str
    verdict: Verdict
    found: str
    needed: str
    fix: str = ""

    def line(self) -> str:
        text = f"{self.verdict.value:7} {self.name}: {self.found}; needs {self.needed}"
        return f"{text}; fix: {self.fix}" if self.fix and self.verdict != Verdict.OK else text


@dataclass(frozen=True)
class Unread:
    """A reading that failed: the error code and message AWS (or botocore) gave."""

    reason: str


@dataclass(frozen=True)
class LambdaLimits:
    total: int
    """``AccountLimit.ConcurrentExecutions``."""
    unreserved: int
    """``AccountLimit.UnreservedConcurrentExecutions``: the total less every reservation."""


@dataclass(frozen=True)
class SesAccount:
    production: bool
    """``ProductionAccessEnabled``: out of the sandbox (which sends to verified addresses only)."""
    sending: bool
    daily_quota: float
    """``SendQuota.Max24HourSend``."""


@dataclass(frozen=True)
class StatesQuotas:
    """Step Functions' quotas as Service Quotas lists them; None: no quota of that name."""

    start_rate: float | None
    open_executions: float | None


@dataclass(frozen=True)
class Readings:
    lambda_limits: LambdaLimits | Unread
    api_gateway_role: str | Unread | None
    """The account's ``cloudwatchRoleArn`` in this region; None: never set."""
    bootstrap_version: int | Unread | None
    """None: the region is not bootstrapped."""
    states: StatesQuotas | Unread
    stack_status: str | Unread | None
    """The stage's stack, None when it does not exist."""
    tables: Mapping[str, bool | Unread]
    """Each of the stage's table names → whether a table of that name exists."""
    log_groups: Mapping[str, bool | Unread]
    ses_account: SesAccount | Unread | None = None
    """None: not read (the stage sends no email through SES)."""
    ses_identity: bool | Unread | None = None
    """Verified for sending; None: no such identity, or not read."""


@dataclass(frozen=True)
class AccountNeeds:
    """What one stage needs from its account and region, from its configuration alone."""

    stack: str
    concurrency: Concurrency
    api_gateway_role: bool
    """The stage's access logs need the account's role, and the stack does not set it."""
    ses_identity: str | None
    ses_daily_emails: int
    start_execution_rate: int
    """Tickets started per second at the expected peak (``Config.ticket_rate``)."""
    open_executions: int
    """Tickets open at once: that rate for ``queueSeconds``, each ticket's longest wait."""
    bootstrap_version: int
    tables: tuple[str, ...]
    log_groups: tuple[str, ...]
    """The log groups the stack names (the functions', the state machine's): a production
    stage retains them when deleted, so deploying it again collides on them too."""

    @classmethod
    def of(cls, config: Config) -> AccountNeeds:
        return cls(
            stack=stack_name(config),
            concurrency=concurrency_needed(config.reserved_concurrency, config.message_rate),
            api_gateway_role=config.access_logs and not config.api_gateway_logs_role,
            ses_identity=config.ses_from_email,
            ses_daily_emails=SES_DAILY_EMAILS if config.ses_from_email else 0,
            start_execution_rate=config.ticket_rate,
            open_executions=config.ticket_rate * config.queue_seconds,
            bootstrap_version=BOOTSTRAP_VERSION,
            tables=tuple(config.name(spec.name) for spec in TABLES),
            log_groups=(
                *(f"/aws/lambda/{config.name(f'canasta-{key}')}" for key in FUNCTIONS),
                f"/aws/vendedlogs/states/{config.name(STATE_MACHINE)}",
            ),
        )


def needs_metadata(config: Config) -> dict[str, Any]:
    """The template's ``Canasta::AccountNeeds``: what ``make preflight`` checks, for a reader
    of the template (the console's template view, a change set review)."""
    needs = AccountNeeds.of(config)
    return {
        "lambdaConcurrency": needs.concurrency.account,
        "lambdaReserved": needs.concurrency.reserved,
        "unreservedMinimum": needs.concurrency.unreserved,
        "apiGatewayLogsRole": needs.api_gateway_role,
        "sesIdentity": needs.ses_identity or "",
        "sesDailyEmails": needs.ses_daily_emails,
        "statesStartExecutionRate": needs.start_execution_rate,
        "statesOpenExecutions": needs.open_executions,
        "cdkBootstrapVersion": needs.bootstrap_version,
        "tables": list(needs.tables),
        "logGroups": list(needs.log_groups),
    }


def states_quotas(quotas: Mapping[str, float]) -> StatesQuotas:
    """Pick Step Functions' quotas by name (``QuotaName`` → ``Value``), Standard workflows'.

    Matched by name, not code: the names are what the quotas page documents
    ("StartExecution throttle token refill rate per second", "Open executions").
    """

    def find(*words: str) -> float | None:
        for name, value in quotas.items():
            lowered = name.lower()
            if "express" not in lowered and all(word in lowered for word in words):
                return value
        return None

    return StatesQuotas(
        start_rate=find("startexecution", "refill"), open_executions=find("open executions")
    )


def _at_least(name: str, have: float, need: float, unit: str, fix: str) -> Check:
    verdict = Verdict.OK if have >= need else Verdict.SHORT
    return Check(name, verdict, f"{have:g} {unit}", f"≥ {need:g}", fix)


def _unknown(name: str, unread: Unread, needed: str) -> Check:
    return Check(name, Verdict.UNKNOWN, f"not read ({unread.reason})", needed)


def lambda_checks(needs: AccountNeeds, limits: LambdaLimits | Unread) -> list[Check]:
    c = needs.concurrency
    needed = (
        f"{c.account} ({c.reserved} reserved + {c.unreserved} unreserved, "
        f"Lambda's minimum {UNRESERVED_MINIMUM})"
        if c.reserved
        else f"{c.account} (queue consumers {c.consumers}, relay {c.stream}, "
        f"WebSocket {c.websocket}, direct {c.direct})"
    )
    if isinstance(limits, Unread):
        return [_unknown("lambda concurrency", limits, needed)]
    raise_quota = f"Service Quotas: Lambda 'Concurrent executions' ({LAMBDA_QUOTA}) ≥ {c.account}"
    if c.reserved:
        raise_quota += ", or -c reservedConcurrency=false"
    return [
        _at_least("lambda concurrency", limits.total, c.account, "in the account", raise_quota),
        _at_least(
            "lambda unreserved",
            limits.unreserved,
            c.account,
            "unreserved",
            "free other functions' reserved concurrency, or " + raise_quota,
        ),
    ]


def api_gateway_check(needs: AccountNeeds, role: str | Unread | None) -> Check:
    name = "api gateway logs role"
    if not needs.api_gateway_role:
        needed = "nothing (accessLogs off, or the stack sets it)"
        return Check(name, Verdict.OK, "not needed", needed)
    if isinstance(role, Unread):
        return _unknown(name, role, "the account's CloudWatch role (accessLogs)")
    verdict = Verdict.OK if role else Verdict.SHORT
    return Check(name, verdict, role or "none set", "one (accessLogs)", FIX_ROLE)


def ses_checks(needs: AccountNeeds, readings: Readings) -> list[Check]:
    if needs.ses_identity is None:
        return [
            Check(
                "ses",
                Verdict.OK,
                "not used: Cognito's built-in sender (a few dozen emails a day)",
                "nothing (-c sesFromEmail=… for production volume)",
            )
        ]
    identity = readings.ses_identity
    name = f"ses identity {needs.ses_identity}"
    if isinstance(identity, Unread):
        checks = [_unknown(name, identity, "verified for sending")]
    else:
        verified = Verdict.OK if identity else Verdict.SHORT
        found = {True: "verified", False: "not verified", None: "no such identity"}[identity]
        fix = f"aws sesv2 create-email-identity --email-identity {needs.ses_identity}, then "
        fix += "follow the link SES mails (same region)"
        checks = [Check(name, verified, found, "verified for sending", fix)]
    account = readings.ses_account
    if account is None or isinstance(account, Unread):
        unread = account or Unread("not read")
        return [*checks, _unknown("ses account", unread, "production access")]
    production = account.production and account.sending
    checks.append(
        Check(
            "ses production access",
            Verdict.OK if production else Verdict.SHORT,
            "production" if production else "sandbox or sending paused",
            "production access (the sandbox mails verified addresses only)",
            "SES console: Account dashboard → Request production access",
        )
    )
    checks.append(
        _at_least(
            "ses daily quota",
            account.daily_quota,
            needs.ses_daily_emails,
            "emails a day",
            "SES: request a higher sending quota (Service Quotas)",
        )
    )
    return checks


def states_checks(needs: AccountNeeds, quotas: StatesQuotas | Unread) -> list[Check]:
    wanted = (
        ("states start rate", "start_rate", needs.start_execution_rate, "per second"),
        ("states open executions", "open_executions", needs.open_executions, "open"),
    )
    checks = []
    for name, field, need, unit in wanted:
        have = None if isinstance(quotas, Unread) else getattr(quotas, field)
        if have is None:
            reason = quotas if isinstance(quotas, Unread) else Unread("no such quota listed")
            checks.append(_unknown(name, reason, f"≥ {need}"))
        else:
            fix = "Service Quotas: AWS Step Functions, request an increase, or lower throttleRate"
            checks.append(_at_least(name, have, need, unit, fix))
    return checks


def bootstrap_check(needs: AccountNeeds, version: int | Unread | None) -> Check:
    name, needed = "cdk bootstrap", f"version ≥ {needs.bootstrap_version}"
    if isinstance(version, Unread):
        return _unknown(name, version, needed)
    fix = "npx cdk bootstrap (once per account and region)"
    if version is None:
        return Check(name, Verdict.SHORT, "not bootstrapped", needed, fix)
    return _at_least(name, version, needs.bootstrap_version, "(version)", fix)


def name_checks(needs: AccountNeeds, readings: Readings) -> list[Check]:
    """The stage's fixed names: a table or log group left by an earlier deploy (retained, or
    a failed create's) makes the create collide, unless the stage's stack owns it."""
    status = readings.stack_status
    names = [
        *(("table", name, readings.tables) for name in needs.tables),
        *(("log group", name, readings.log_groups) for name in needs.log_groups),
    ]
    if isinstance(status, str) and status in ALIVE:
        found = f"the stack's own ({status})"
        return [
            Check(f"{kind} {name}", Verdict.OK, found, "the stack's own") for kind, name, _ in names
        ]
    if isinstance(status, Unread):
        stack = f"{needs.stack} not read ({status.reason})"
    else:
        stack = f"{needs.stack} {status or 'absent'}"
    checks = []
    for kind, name, existing in names:
        exists = existing.get(name, Unread("not read"))
        if isinstance(exists, Unread):
            checks.append(_unknown(f"{kind} {name}", exists, "the name free"))
            continue
        found = f"exists, the stack {stack}" if exists else "free"
        fix = "delete it (a table: deletion protection off first) once its data is not wanted"
        verdict = Verdict.SHORT if exists else Verdict.OK
        checks.append(Check(f"{kind} {name}", verdict, found, "the name free", fix))
    return checks


def verdicts(needs: AccountNeeds, readings: Readings) -> list[Check]:
    """One check per setting, in the order the deploy meets them."""
    return [
        bootstrap_check(needs, readings.bootstrap_version),
        *name_checks(needs, readings),
        *lambda_checks(needs, readings.lambda_limits),
        api_gateway_check(needs, readings.api_gateway_role),
        *states_checks(needs, readings.states),
        *ses_checks(needs, readings),
    ]
