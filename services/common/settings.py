"""One settings model for every service, read from the environment.

The CDK stack sets these variables on each function; the local stack sets the
same ones pointing at moto and the local gateway. That is the only difference
between the two: configuration, never code.

Read by a plain pydantic model rather than pydantic-settings: that package
brings asyncio, argparse and its every settings source into a cold start,
about a fifth of a handler's import, to read a dozen variables. The rules are
the ones it had: ``CANASTA_<FIELD>`` (any case), ``AWS_REGION`` for the
region, a tuple as JSON, arguments before the environment.
"""

from __future__ import annotations

import json
import os
from typing import Any, get_origin

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from services.common import constants

PREFIX = "CANASTA_"


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
            if get_origin(field.annotation) is tuple:
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
    event_bus: str = constants.EVENT_BUS

    websocket_endpoint: str | None = None
    """The API Gateway management endpoint (``https://id.execute-api.region.amazonaws.com/stage``)."""

    token_secret: SecretStr | None = None
    """The key that signs player tokens; in AWS read from ``token_secret_arn`` instead."""
    token_secret_arn: str | None = None
    token_ttl_seconds: int = 12 * 3600

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
