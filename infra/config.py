"""The stack's configuration, read from CDK context (``cdk.json`` or ``-c key=value``).

Every key is optional; infra/README.md lists them with their defaults. Values
given on the command line arrive as strings (``-c turnSeconds=45``), values in
``cdk.json`` as JSON, so each is parsed here and checked before anything is built.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from infra.assets import REPO
from services.common.settings import LedgerClient, LedgerClientName

# The retention periods CloudWatch Logs accepts, in days.
LOG_RETENTION_DAYS = (
    1,
    3,
    5,
    7,
    14,
    30,
    60,
    90,
    120,
    150,
    180,
    365,
    400,
    545,
    731,
    1096,
    1827,
    2192,
    2557,
    2922,
    3288,
    3653,
)
STAGE_NAME = re.compile(r"[a-z][a-z0-9]{0,11}")
HTTPS_URL = re.compile(r"https://[A-Za-z0-9.-]+(:[0-9]+)?(/[^\s?#]*)?")
WEB_URL = re.compile(
    r"(https://[A-Za-z0-9.-]+|http://(localhost|127\.0\.0\.1))(:[0-9]+)?(/[^\s?#]*)?"
)
"""Where the web client may be served: HTTPS, or plain HTTP on this machine only (Cognito)."""
DOMAIN_PREFIX = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")
TOPIC_ARN = re.compile(r"arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}")
PRINCIPAL = re.compile(r"arn:aws[a-z-]*:iam::\d{12}:(root|role/[\w+=,.@/-]+|user/[\w+=,.@/-]+)")
"""A caller of the ledger API in any account: an account root, a role or a user."""
LEDGER_LIMITS = {
    "pointsPerBooking": "points_per_booking",
    "pointsPerDay": "points_per_day",
    "jokersPerBooking": "jokers_per_booking",
    "jokersPerDay": "jokers_per_day",
    "dayShards": "day_shards",
}
PRODUCTION = "prod"
MESSAGES_PER_MATCH = 350
"""Messages a three-round match sends to the stage (the cost model's ``turn-ws`` requests,
infra/README.md: the actions, retries and lobby messages of four players)."""
SECONDS_PER_DAY = 86_400
TICKETS_PER_MATCH = 4
PEAK_TO_AVERAGE = 3
"""A game's busiest hour against its daily average (evenings, weekends): the stage must take
the peak, not the mean."""
HEADROOM = 1.5
"""Above the expected peak, before players are refused (429) with the stage's throttle."""
MINIMUM_RATE = 50


STRINGS = (
    "stage",
    "oidc_issuer",
    "oidc_audience",
    "oidc_jwks_url",
    "auth_domain_prefix",
    "alarm_topic_arn",
    "alarm_email",
    "ses_from_email",
)
"""Config fields taken as text."""


class ConfigError(ValueError):
    """A context value is missing its form or out of range."""


def _bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ConfigError(f"context {key!r} must be true or false, not {value!r}")


def _list(key: str, value: Any, what: str) -> list[Any] | tuple[Any, ...]:
    """A list: JSON (``[100,500]``, cdk.json) or ``100,500`` on the command line."""
    items = value
    if isinstance(value, str):
        text = value.strip()
        try:
            items = json.loads(text) if text.startswith("[") else text.split(",")
        except ValueError:
            raise ConfigError(f"context {key!r} must be a list of {what}, not {value!r}") from None
    if not isinstance(items, list | tuple) or not items:
        raise ConfigError(f"context {key!r} must be a list of {what}, not {value!r}")
    return items


def _stakes(key: str, value: Any) -> tuple[int, ...]:
    """The arena's stakes: 1-10 different positive whole numbers."""
    items = _list(key, value, "stakes")
    stakes = tuple(_int(key, item, 1, 1_000_000_000) for item in items)
    if len(set(stakes)) != len(stakes) or len(stakes) > 10:
        raise ConfigError(f"context {key!r} must hold 1-10 different stakes, not {value!r}")
    return stakes


def _urls(key: str, value: Any) -> tuple[str, ...]:
    """Web client addresses: at most 10, each ``https://`` or ``http://localhost``."""
    items = _list(key, value, "URLs")
    if len(items) > 10:
        raise ConfigError(f"context {key!r} must be a list of 1-10 URLs, not {value!r}")
    urls = tuple(str(item).strip() for item in items)
    for url in urls:
        if not WEB_URL.fullmatch(url):
            raise ConfigError(
                f"context {key!r}: {url!r} is neither an https:// URL nor http://localhost"
            )
    return urls


@dataclass(frozen=True)
class LedgerClientConfig:
    """One of the platform's other modes: the alias it invokes, its limits, its principal."""

    name: str
    limits: LedgerClient
    principal: str | None = None
    """Given: a resource policy on the alias lets this principal invoke it (any account)."""


def _ledger_clients(key: str, value: Any) -> tuple[LedgerClientConfig, ...]:
    """``{"rummy": {"principal": ARN, "pointsPerBooking": n, "pointsPerDay": n, ...}}``."""
    items = value
    if isinstance(value, str):
        try:
            items = json.loads(value)
        except ValueError:
            raise ConfigError(f"context {key!r} must be a JSON object, not {value!r}") from None
    if not isinstance(items, dict) or len(items) > 20:
        raise ConfigError(f"context {key!r} must be an object of at most 20 clients")
    clients = []
    for name, spec in items.items():
        if not isinstance(spec, dict) or not set(spec) <= {"principal", *LEDGER_LIMITS}:
            raise ConfigError(
                f"context {key!r}: client {name!r} takes principal and {sorted(LEDGER_LIMITS)}"
            )
        principal = spec.get("principal")
        if principal is not None and not (
            isinstance(principal, str) and PRINCIPAL.fullmatch(principal)
        ):
            raise ConfigError(
                f"context {key!r}: {principal!r} is not an IAM role, user or root ARN"
            )
        try:
            TypeAdapter(LedgerClientName).validate_python(name)
            limits = LedgerClient(
                **{LEDGER_LIMITS[k]: v for k, v in spec.items() if k in LEDGER_LIMITS}
            )
        except ValidationError as exc:
            raise ConfigError(
                f"context {key!r}: client {name!r}: {exc.errors()[0]['msg']}"
            ) from None
        clients.append(LedgerClientConfig(name, limits, principal))
    return tuple(clients)


def _int(key: str, value: Any, low: int, high: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"context {key!r} must be a whole number, not {value!r}") from None
    if isinstance(value, bool) or not low <= number <= high:
        raise ConfigError(f"context {key!r} must be between {low} and {high}, not {value!r}")
    return number


@dataclass(frozen=True)
class Config:
    """What may differ between two deployments of the same code."""

    stage: str = "dev"
    """Prefixes every physical name (``dev-canasta-games``) and names the API stage."""
    turn_seconds: int = 60
    intermission_seconds: int = 20
    """Between two rounds: how long the round's result stays before the next is dealt."""
    log_retention_days: int = 30
    matches_per_day: int = 10_000
    """The expected volume: what the stage's throttle is sized from (``message_rate``)."""
    throttle_rate: int | None = None
    """Steady-state WebSocket messages per second across the stage; None: sized from
    ``matches_per_day`` (``message_rate``)."""
    throttle_burst: int | None = None
    """None: twice the steady-state rate."""
    deletion_protection: bool = False
    """Deletion protection on the tables and the user pool. Off for a stage's first deploy:
    CloudFormation cannot delete a protected table, so a first create that fails anywhere
    would end in ROLLBACK_FAILED with the names taken, and the retry would collide. A second
    deploy with ``-c deletionProtection=true`` turns it on (infra/README.md, production)."""
    archive_retention_days: int = 30
    """0 keeps archived events indefinitely."""
    tracing: bool = False
    turn_p99_alarm_ms: int = 1000
    bundle: bool = True
    """Build the dependency layer with pip; off (tests, quick synths): a placeholder layer,
    and a template that CloudFormation refuses to deploy (a failing rule)."""
    api_gateway_logs_role: bool = False
    """Set the account's API Gateway CloudWatch Logs role (needed for WebSocket access logs)."""
    access_logs: bool = False
    """The WebSocket stage's access logs: they need the account's API Gateway CloudWatch Logs
    role (``api_gateway_logs_role``, or set before: ``make preflight`` checks it)."""
    alarm_topic_arn: str | None = None
    """An existing SNS topic every alarm notifies; None: the stack makes one."""
    alarm_email: str | None = None
    """An address the stack's alarm topic mails (a subscription the recipient confirms);
    refused with ``alarm_topic_arn``, whose subscribers are that topic's owner's."""
    ses_from_email: str | None = None
    """The own user pool sends its email through SES from this verified address; None: through
    Cognito's built-in sender, whose daily quota is below a production stage's volume."""
    reserved_concurrency: bool = False
    queue_seconds: int = 120
    """How long a queued player waits before the ticket expires (``CANASTA_QUEUE_SECONDS``)."""
    arena_stakes: tuple[int, ...] = (100, 500, 1000)
    """The arena's stakes (``CANASTA_ARENA_STAKES``); the web client must offer the same."""
    oidc_issuer: str | None = None
    """An existing OpenID Connect issuer whose tokens sign players in (the platform's
    accounts); None: the stack creates a Cognito user pool and its web client."""
    oidc_audience: str | None = None
    """The audience the issuer's tokens carry for this game (required with ``oidc_issuer``)."""
    oidc_jwks_url: str | None = None
    """Default: ``<oidc_issuer>/.well-known/jwks.json``."""
    web_urls: tuple[str, ...] = ("http://localhost:8080/",)
    """Where the web client is served: the user pool client's callback and sign-out URLs."""
    auth_domain_prefix: str | None = None
    """The Cognito hosted sign-in's domain prefix (``<prefix>.auth.<region>.amazoncognito.com``);
    default ``<stage>-canasta-<account id>``, unique per region as Cognito requires."""
    ledger_clients: tuple[LedgerClientConfig, ...] = ()
    """The ledger API's callers (``CANASTA_LEDGER_CLIENTS``): none, and it books for no one."""

    def __post_init__(self) -> None:
        if not STAGE_NAME.fullmatch(self.stage):
            raise ConfigError(
                f"context 'stage' must be 1-12 lowercase letters or digits, not {self.stage!r}"
            )
        if self.log_retention_days not in LOG_RETENTION_DAYS:
            raise ConfigError(
                f"context 'logRetentionDays' must be one of {LOG_RETENTION_DAYS}, "
                f"not {self.log_retention_days}"
            )
        # The same bounds as the turn service's own setting (Settings.turn_seconds).
        _int("turnSeconds", self.turn_seconds, 5, 3600)
        _int("intermissionSeconds", self.intermission_seconds, 0, 600)
        _int("matchesPerDay", self.matches_per_day, 1, 100_000_000)
        # API Gateway's account-level throttle per region: 10,000 requests/s, burst 5,000.
        _int("throttleRate", self.message_rate, 1, 10_000)
        _int("throttleBurst", self.message_burst, 1, 5_000)
        _int("archiveRetentionDays", self.archive_retention_days, 0, 3650)
        _int("turnP99AlarmMs", self.turn_p99_alarm_ms, 10, 29_000)
        # The bounds of the matchmaking service's settings (Settings.queue_seconds, …).
        _int("queueSeconds", self.queue_seconds, 10, 3600)
        _stakes("arenaStakes", list(self.arena_stakes))
        _urls("webUrls", list(self.web_urls))
        self._check_issuer()
        self._check_domain_prefix()
        self._check_alarms_and_email()

    def _check_issuer(self) -> None:
        if self.oidc_issuer is None:
            if self.oidc_audience is not None or self.oidc_jwks_url is not None:
                raise ConfigError("context 'oidcAudience' and 'oidcJwksUrl' need 'oidcIssuer'")
            return
        for key, url in (("oidcIssuer", self.oidc_issuer), ("oidcJwksUrl", self.oidc_jwks_url)):
            if url is not None and not HTTPS_URL.fullmatch(url):
                raise ConfigError(f"context {key!r} must be an https:// URL, not {url!r}")
        if not self.oidc_audience:
            raise ConfigError("context 'oidcIssuer' needs 'oidcAudience' (the tokens' aud)")
        if self.auth_domain_prefix is not None:
            raise ConfigError("context 'authDomainPrefix' is for the stack's own user pool")

    def _check_domain_prefix(self) -> None:
        prefix = self.auth_domain_prefix
        if prefix is not None and (
            not DOMAIN_PREFIX.fullmatch(prefix)
            or any(word in prefix for word in ("aws", "amazon", "cognito"))
        ):
            raise ConfigError(
                "context 'authDomainPrefix' must be 1-63 lowercase letters, digits or hyphens, "
                f"without 'aws', 'amazon' or 'cognito', not {prefix!r}"
            )

    def _check_alarms_and_email(self) -> None:
        if self.alarm_topic_arn is not None and not TOPIC_ARN.fullmatch(self.alarm_topic_arn):
            raise ConfigError(
                f"context 'alarmTopicArn' must be an SNS topic ARN, not {self.alarm_topic_arn!r}"
            )
        for key, address in (
            ("alarmEmail", self.alarm_email),
            ("sesFromEmail", self.ses_from_email),
        ):
            if address is not None and not EMAIL.fullmatch(address):
                raise ConfigError(f"context {key!r} must be an email address, not {address!r}")
        if self.ses_from_email is not None and not self.own_user_pool:
            raise ConfigError("context 'sesFromEmail' is for the stack's own user pool")
        if self.production and self.own_user_pool and self.ses_from_email is None:
            raise ConfigError(
                "stage 'prod' sends its players' sign-up and recovery email through SES "
                "(Cognito's own sender stops at 50 a day): set -c sesFromEmail=<an address "
                "SES has verified in this region>; make preflight checks it"
            )
        if self.alarm_email is not None and self.alarm_topic_arn is not None:
            # An existing topic is its owner's: who it mails is decided where it is managed.
            raise ConfigError(
                "context 'alarmEmail' subscribes to the stack's own alarm topic; "
                "with 'alarmTopicArn', subscribe the address to that topic where it is managed"
            )

    @property
    def own_user_pool(self) -> bool:
        """The stack creates the Cognito user pool unless an existing issuer is configured."""
        return self.oidc_issuer is None

    @property
    def production(self) -> bool:
        return self.stage == PRODUCTION

    @property
    def protect_tables(self) -> bool:
        """Deletion protection: only when asked for, never on a stage's first create."""
        return self.deletion_protection

    @property
    def stage_access_logs(self) -> bool:
        """Access logs on the WebSocket stage: only where the account's API Gateway
        CloudWatch Logs role is set (by this stack, or already: ``accessLogs``), since
        without it API Gateway refuses to create the stage."""
        return self.access_logs or self.api_gateway_logs_role

    @property
    def message_rate(self) -> int:
        """The stage's steady-state limit of messages from players, per second: as given, or
        the expected peak with headroom (``PEAK_TO_AVERAGE`` × ``HEADROOM`` × the day's
        average of ``MESSAGES_PER_MATCH`` × ``matches_per_day``)."""
        if self.throttle_rate is not None:
            return self.throttle_rate
        average = self.matches_per_day * MESSAGES_PER_MATCH / SECONDS_PER_DAY
        return max(MINIMUM_RATE, math.ceil(average * PEAK_TO_AVERAGE * HEADROOM / 10) * 10)

    @property
    def ticket_rate(self) -> int:
        """Matchmaking tickets started per second at the expected peak: every match formed
        from a queue (an upper bound: friends tables start none), four tickets each."""
        average = self.matches_per_day * TICKETS_PER_MATCH / SECONDS_PER_DAY
        return math.ceil(average * PEAK_TO_AVERAGE * HEADROOM)

    @property
    def message_burst(self) -> int:
        return self.throttle_burst if self.throttle_burst is not None else 2 * self.message_rate

    @property
    def retain_data(self) -> bool:
        """Production keeps its tables, secret and logs when the stack is deleted."""
        return self.production

    def name(self, base: str) -> str:
        """The physical name of a resource in this stage: ``dev-canasta-games``."""
        return f"{self.stage}-{base}"

    @classmethod
    def from_context(cls, get: Callable[[str], Any]) -> Config:
        """Read every key with ``get`` (``node.try_get_context``); absent keys keep defaults."""
        values: dict[str, Any] = {}
        for field in fields(cls):
            key = CONTEXT_KEYS[field.name]
            raw = get(key)
            if raw is None:
                continue
            if field.name in STRINGS:
                values[field.name] = str(raw).strip()
            elif field.type == "bool":
                values[field.name] = _bool(key, raw)
            elif field.name == "arena_stakes":
                values[field.name] = _stakes(key, raw)
            elif field.name == "web_urls":
                values[field.name] = _urls(key, raw)
            elif field.name == "ledger_clients":
                values[field.name] = _ledger_clients(key, raw)
            else:
                values[field.name] = _int(key, raw, 0, 1_000_000)
        return cls(**values)


CONTEXT_KEYS = {
    "stage": "stage",
    "turn_seconds": "turnSeconds",
    "intermission_seconds": "intermissionSeconds",
    "log_retention_days": "logRetentionDays",
    "matches_per_day": "matchesPerDay",
    "throttle_rate": "throttleRate",
    "throttle_burst": "throttleBurst",
    "deletion_protection": "deletionProtection",
    "archive_retention_days": "archiveRetentionDays",
    "tracing": "tracing",
    "turn_p99_alarm_ms": "turnP99AlarmMs",
    "bundle": "bundle",
    "api_gateway_logs_role": "apiGatewayLogsRole",
    "access_logs": "accessLogs",
    "alarm_topic_arn": "alarmTopicArn",
    "alarm_email": "alarmEmail",
    "ses_from_email": "sesFromEmail",
    "reserved_concurrency": "reservedConcurrency",
    "queue_seconds": "queueSeconds",
    "arena_stakes": "arenaStakes",
    "oidc_issuer": "oidcIssuer",
    "oidc_audience": "oidcAudience",
    "oidc_jwks_url": "oidcJwksUrl",
    "web_urls": "webUrls",
    "auth_domain_prefix": "authDomainPrefix",
    "ledger_clients": "ledgerClients",
}
"""Config field → CDK context key (the names documented in infra/README.md)."""


def stack_name(config: Config) -> str:
    return f"canasta-{config.stage}"


def file_context(path: Path = REPO / "cdk.json") -> dict[str, Any]:
    """The ``context`` of cdk.json (the CLI passes it itself; direct runs read it here)."""
    if not path.exists():
        return {}
    context = json.loads(path.read_text(encoding="utf-8")).get("context", {})
    return dict(context)


def add_context_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-c",
        "--context",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a context value, as for cdk (repeatable)",
    )


def context_overrides(parser: argparse.ArgumentParser, items: Sequence[str]) -> dict[str, str]:
    """The ``-c KEY=VALUE`` arguments, which override cdk.json's context as the CLI's do."""
    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"-c takes KEY=VALUE, not {item!r}")
        pairs[key] = value
    return pairs
