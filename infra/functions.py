"""One spec per Lambda function: its entry point, what triggers it and what it may touch.

The stack builds every function, trigger and IAM statement from ``FUNCTIONS``,
so adding a service is adding specs here, not new wiring in the stack:

- a WebSocket route: ``routes=("queue", ...)`` (the stack adds the route);
- a bus consumer: ``queue="<consumer>"``, a key of ``constants.CONSUMERS`` (its
  rule and queue already exist for every consumer, with or without a function);
- table access: ``tables={constants.SOME_TABLE: (actions...)}``;
- a state machine or another resource: a new capability flag here, and the
  grant that goes with it in ``stack.py`` (``_grant``).

Matchmaking (routes ``queue``, ``leave``, ``create_table``, ``join_table``,
``fill_bots``, ``balance``; the ``matchmaking`` consumer; a Step Functions
state machine, ``constants.STATE_MACHINE``) and the ledger (the ``ledger``
consumer) are the next to be added this way; their queues and rules already exist.

Table actions are the DynamoDB API calls each service makes (read from its
composition root and stores); ``TransactWriteItems`` is authorized per item,
as ``PutItem``/``UpdateItem``, so it has no action of its own here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from services.common import constants
from services.common.constants import TableSpec

GET = "dynamodb:GetItem"
PUT = "dynamodb:PutItem"
UPDATE = "dynamodb:UpdateItem"
DELETE = "dynamodb:DeleteItem"
QUERY = "dynamodb:Query"

TIMERS = "timers"
"""The ``queue`` of the turn timers (``constants.TIMER_QUEUE``), fed by EventBridge Scheduler."""


@dataclass(frozen=True)
class FunctionSpec:
    handler: str
    """``module.function`` inside the code asset (``services.turn.handler.websocket``)."""
    service: str
    """POWERTOOLS_SERVICE_NAME: the ``service`` dimension of the function's metrics."""
    description: str
    tables: Mapping[TableSpec, tuple[str, ...]] = field(default_factory=dict)
    routes: tuple[str, ...] = ()
    """WebSocket route keys integrated with this function."""
    authorizer: bool = False
    """The ``$connect`` REQUEST authorizer."""
    queue: str | None = None
    """A consumer of ``constants.CONSUMERS`` or ``TIMERS``: an SQS event source."""
    stream: TableSpec | None = None
    """A table whose stream (outbox items only) triggers the function."""
    publishes: bool = False
    """events:PutEvents on the stage's bus."""
    pushes: bool = False
    """execute-api:ManageConnections on the stage's connections (post to clients)."""
    schedules_timers: bool = False
    """Creates turn-timer schedules (scheduler:CreateSchedule and iam:PassRole)."""
    reads_token_secret: bool = False
    memory_mb: int = 256
    timeout_seconds: int = 10
    max_concurrency: int | None = None
    """For a queue consumer: the most batches in flight (protects the tables and the API)."""
    reserved_concurrency: int | None = None
    """Concurrency set aside for the function (switchable with ``reservedConcurrency``)."""


_TURN_TABLES: Mapping[TableSpec, tuple[str, ...]] = {
    # Read a table, commit moves (a transaction: update the table, put log entries),
    # mark a seat (dis)connected when a push finds the connection gone.
    constants.GAMES: (GET, PUT, UPDATE),
}

FUNCTIONS: dict[str, FunctionSpec] = {
    "connect-authorizer": FunctionSpec(
        handler="services.connect.handler.authorize",
        service="connect",
        description="$connect REQUEST authorizer: checks the player token in the query string",
        authorizer=True,
        reads_token_secret=True,
    ),
    "connect": FunctionSpec(
        handler="services.connect.handler.connect",
        service="connect",
        description="$connect: records the connection and re-attaches a seated player",
        routes=("$connect",),
        tables={
            constants.CONNECTIONS: (PUT,),
            constants.PLAYERS: (UPDATE,),
            constants.GAMES: (GET, UPDATE),
        },
        publishes=True,
        reads_token_secret=True,
    ),
    "disconnect": FunctionSpec(
        handler="services.connect.handler.disconnect",
        service="connect",
        description="$disconnect: forgets the connection and frees the seat",
        routes=("$disconnect",),
        tables={
            constants.CONNECTIONS: (DELETE,),
            constants.PLAYERS: (UPDATE,),
            constants.GAMES: (UPDATE,),
        },
        publishes=True,
        # The connect service reads its signing key when it is built, on every path.
        reads_token_secret=True,
    ),
    "turn-ws": FunctionSpec(
        handler="services.turn.handler.websocket",
        service="turn",
        description="play and sync messages from the players",
        routes=("play", "sync", "$default"),
        tables={
            **_TURN_TABLES,
            # ``sync`` finds the player's table (PresenceStore.get_player).
            constants.PLAYERS: (GET,),
            # The joker button reads the account's jokers and debits one in the move's
            # transaction (an entry put and a balance update).
            constants.LEDGER: (GET, PUT, UPDATE),
        },
        pushes=True,
        schedules_timers=True,
    ),
    "turn-events": FunctionSpec(
        handler="services.turn.handler.events",
        service="turn",
        description="RoundStarted and presence events: auto-play absent seats, push views",
        queue="turn-events",
        tables=_TURN_TABLES,
        pushes=True,
        schedules_timers=True,
        timeout_seconds=30,
        max_concurrency=10,
    ),
    "turn-timers": FunctionSpec(
        handler="services.turn.handler.timers",
        service="turn",
        description="Expired turn timers: auto-play the turn if it is still running",
        queue=TIMERS,
        tables=_TURN_TABLES,
        pushes=True,
        schedules_timers=True,
        timeout_seconds=30,
        max_concurrency=10,
    ),
    "deal": FunctionSpec(
        handler="services.deal.handler.events",
        service="deal",
        description="TableFormed and RoundScored: create the table, deal the next round",
        queue="deal",
        tables={
            constants.GAMES: (GET, PUT, UPDATE),
            # Seats the table's players (PresenceStore.seat_player).
            constants.PLAYERS: (UPDATE,),
            # Each player's spare jokers for the deal (Ledger.balance).
            constants.LEDGER: (GET,),
        },
        pushes=True,
        # Dealing starts the first turn, and with it the turn's timer.
        schedules_timers=True,
        timeout_seconds=30,
        max_concurrency=5,
    ),
    "score": FunctionSpec(
        handler="services.score.handler.events",
        service="score",
        description="RoundEnded: score the round, end the match when it is won",
        queue="score",
        tables={constants.GAMES: (GET, PUT, UPDATE)},
        pushes=True,
        timeout_seconds=30,
        max_concurrency=5,
    ),
    "relay": FunctionSpec(
        handler="services.relay.handler.stream",
        service="relay",
        description="Outbox relay: publishes the events of newly written games items",
        stream=constants.GAMES,
        publishes=True,
        timeout_seconds=30,
        # Keeps capacity for the relay whatever the other functions do: every event
        # of the game loop passes through it.
        reserved_concurrency=10,
    ),
}
"""Function key → spec; the key names the function (``<stage>-canasta-<key>``)."""
