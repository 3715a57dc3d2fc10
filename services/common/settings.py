"""One settings model for every service, read from the environment.

The CDK stack sets these variables on each function; the local stack sets the
same ones pointing at moto and the local gateway. That is the only difference
between the two: configuration, never code.

Read by a plain pydantic model rather than pydantic-settings: that package
brings asyncio, argparse and its every settings source into a cold start,
about a fifth of a handler's import, to read a dozen variables. The rules are
the ones it had: ``CANASTA_<FIELD>`` (any case), ``AWS_REGION`` for the
region, a tuple or a mapping as JSON, arguments before the environment.
"""

from __future__ import annotations

import json
import os
from typing import Annotated, Any, Final, get_origin

from pydantic import BaseModel, ConfigDict, Field, SecretStr, StringConstraints, model_validator

from services.common import constants

PREFIX = "CANASTA_"

MAX_BOOKING_POINTS: Final = 1_000_000_000
"""The most points one booking of the ledger API may move, whoever the caller."""
MAX_BOOKING_JOKERS: Final = 1_000
MAX_DAY_POINTS: Final = 1_000_000_000_000
"""A day's bound: balances stay far below DynamoDB's 38 digits for ever."""
MAX_DAY_JOKERS: Final = 1_000_000
MAX_DAY_SHARDS: Final = 16

LedgerClientName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,31}$")]
"""A Lambda alias name (never a version number): the alias the client invokes."""


class LedgerClient(BaseModel):
    """What one of the platform's other modes may book through the ledger API.

    Per booking and per UTC day, as absolute amounts: a credit and a debit both
    count, so a client can neither mint nor drain more than this in a day.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    points_per_booking: int = Field(ge=0, le=MAX_BOOKING_POINTS)
    points_per_day: int = Field(ge=0, le=MAX_DAY_POINTS)
    jokers_per_booking: int = Field(default=0, ge=0, le=MAX_BOOKING_JOKERS)
    jokers_per_day: int = Field(default=0, ge=0, le=MAX_DAY_JOKERS)
    day_shards: int = Field(default=1, ge=1, le=MAX_DAY_SHARDS)
    """How many counters the day's usage is spread over, each allowed its share of the
    day's limits: 1 keeps the limit exact; a client booking more than about 60 times a
    second needs 8 (docs/capacity.md). Its keys hash evenly, so it reaches its limit at
    about the same time in every counter; change the count at a day's start (UTC), or
    the day's earlier usage is not counted against the new counters."""

    @model_validator(mode="after")
    def _one_booking_fits_a_share(self) -> LedgerClient:
        """Each booking must fit one counter's share, or some would always be refused."""
        points, jokers = self.shard_limits
        if self.day_shards > 1 and (
            self.points_per_booking > points or self.jokers_per_booking > jokers
        ):
            raise ValueError(
                f"with {self.day_shards} day shards a booking may be at most the day's"
                f" limits / {self.day_shards} ({points} points, {jokers} jokers)"
            )
        return self

    @property
    def shard_limits(self) -> tuple[int, int]:
        """The day's points and jokers one usage counter may take."""
        return self.points_per_day // self.day_shards, self.jokers_per_day // self.day_shards


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _environment(cls, data: Any) -> Any:
        """The environment's values under the arguments given."""
        if not isinstance(data, dict):
            return data
        environ = {k.upper(): v for k, v in os.environ.items()}
        found: dict[str, Any] = {}
        for name, field in cls.model_fields.items():
            key = field.validation_alias if isinstance(field.validation_alias, str) else None
            value = environ.get(key or f"{PREFIX}{name.upper()}")
            if value is None:
                continue
            if get_origin(field.annotation) in (tuple, dict):
                value = json.loads(value)
            found[key or name] = value
        return {**found, **data}

    region: str = Field(default="eu-west-1", validation_alias="AWS_REGION")
    endpoint_url: str | None = None
    """Set only locally: every AWS client talks to this endpoint (moto)."""

    games_table: str = constants.GAMES.name
    connections_table: str = constants.CONNECTIONS.name
    players_table: str = constants.PLAYERS.name
    ledger_table: str = constants.LEDGER.name
    matchmaking_table: str = constants.MATCHMAKING.name
    audit_table: str = constants.AUDIT.name
    profiles_table: str = constants.PROFILES.name
    event_bus: str = constants.EVENT_BUS

    websocket_endpoint: str | None = None
    """The API Gateway management endpoint (``https://id.execute-api.region.amazonaws.com/stage``)."""

    oidc_issuer: str | None = None
    """Whose JWTs open a connection: the stack's Cognito user pool
    (``https://cognito-idp.<region>.amazonaws.com/<pool id>``), the platform's OIDC issuer,
    or locally the local issuer. Only the ``$connect`` authorizer needs it."""
    oidc_audience: str | None = None
    """The audience the tokens must name: the Cognito app client id, or the platform's."""
    oidc_jwks_url: str | None = None
    """Where the issuer publishes its keys; default ``<issuer>/.well-known/jwks.json``."""
    token_ttl_seconds: int = 3600
    """How long the local issuer's tokens last (Cognito's ID tokens: an hour by default)."""

    seed_secret: SecretStr | None = None
    """Only for rehearsal environments: derive round seeds from it, so runs replay exactly."""

    turn_seconds: int = Field(default=60, ge=5, le=3600)
    """TABLE-2: how long a connected player has for a turn before auto-play."""
    intermission_seconds: int = Field(default=20, ge=0, le=600)
    """Between two rounds of a match: how long the round's result stays on the table before
    the next round is dealt, unless every connected player continues sooner."""
    timer_queue_url: str | None = None
    """Where turn timers are sent, delayed to their deadline (services/common/adapters.py)."""
    timer_queue_arn: str | None = None
    schedule_group: str = constants.SCHEDULE_GROUP
    scheduler_role_arn: str | None = None
    schedule_dead_letter_arn: str | None = None
    """Where Scheduler sends a far-deadline timer it gave up delivering (the turn would
    otherwise never be auto-played, silently)."""

    record_seconds: float = Field(default=6.0, gt=0, le=900)
    """A queue consumer's worst case for one record (the manifest's ``record_seconds``): a
    batch starts no record with less than this (and the response's margin) left. The
    default is the slowest consumer's, a whole round auto-played, so a function the
    stack did not give a value defers no later than that one would."""

    matchmaking_queue_url: str | None = None
    """Where the matchmaking state machine sends its ``try_match`` tasks."""
    state_machine_arn: str | None = None
    queue_seconds: int = Field(default=120, ge=10, le=3600)
    """How long a player waits in a queue before the ticket expires."""
    arena_stakes: tuple[int, ...] = (100, 500, 1000)
    welcome_points: int = 10_000
    welcome_jokers: int = 3
    """Granted once per account by the local sign-in; in production accounts exist already."""

    operator_credit_points: int = Field(default=10_000, ge=0, le=MAX_BOOKING_POINTS)
    """The most points an operator's ``credit`` may move, either way."""
    operator_credit_jokers: int = Field(default=5, ge=0, le=MAX_BOOKING_JOKERS)

    ledger_clients: dict[LedgerClientName, LedgerClient] = {}
    """The ledger API's callers by the alias each invokes (JSON): no other caller may book."""

    join_attempts: int = Field(default=12, ge=1, le=1000)
    """Invite codes a player may try (``join_table``) per ``join_window_seconds``."""
    join_window_seconds: int = Field(default=600, ge=10, le=86_400)

    max_message_bytes: int = 8 * 1024
    messages_per_second: float = Field(default=10.0, gt=0, le=1000)
    """Flood control: a connection's steady rate of messages, per warm container."""
    message_burst: int = Field(default=40, ge=1, le=1000)
    """Flood control: messages a connection may send at once (a reconnect's hello, sync…)."""
    flood_connections_kept: int = Field(default=10_000, ge=1, le=1_000_000)
    """Flood control: the connections a container keeps a bucket for (~270 bytes each)."""
    connection_ttl_seconds: int = 3 * 3600

    conflict_backoff_seconds: float = Field(default=0.01, ge=0, le=1)
    """The pause before a write that collided with another transaction is sent again
    (doubled before each further try, jittered; ``dynamo_storage.Backoff``). The local
    stack sets 0 when it injects conflicts (``local/conflicts.py``): no other writer holds
    the item there, and a pause per write would double the tests' time."""
