"""One settings model for every service, read from the environment.

The CDK stack sets these variables on each function; the local stack sets the
same ones pointing at moto and the local gateway. That is the only difference
between the two: configuration, never code.
"""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from services.common import constants


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CANASTA_", frozen=True)

    region: str = Field(default="eu-west-1", validation_alias="AWS_REGION")
    endpoint_url: str | None = None
    """Set only locally: every AWS client talks to this endpoint (moto)."""

    games_table: str = constants.GAMES.name
    connections_table: str = constants.CONNECTIONS.name
    players_table: str = constants.PLAYERS.name
    ledger_table: str = constants.LEDGER.name
    matchmaking_table: str = constants.MATCHMAKING.name
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
    timer_queue_url: str | None = None
    """Where turn timers are sent, delayed to their deadline (services/common/adapters.py)."""
    timer_queue_arn: str | None = None
    schedule_group: str = constants.SCHEDULE_GROUP
    scheduler_role_arn: str | None = None

    matchmaking_queue_url: str | None = None
    """Where the matchmaking state machine sends its ``try_match`` tasks."""
    state_machine_arn: str | None = None
    queue_seconds: int = Field(default=120, ge=10, le=3600)
    """How long a player waits in a queue before the ticket expires."""
    poll_seconds: int = Field(default=10, ge=1, le=60)
    """How often a waiting ticket looks again (tables form on arrival; this catches expiry)."""
    arena_stakes: tuple[int, ...] = (100, 500, 1000)
    welcome_points: int = 10_000
    welcome_jokers: int = 3
    """Granted once per account by the local sign-in; in production accounts exist already."""

    max_message_bytes: int = 8 * 1024
    connection_ttl_seconds: int = 3 * 3600
