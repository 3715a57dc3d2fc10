"""The service manifest: every function, what triggers it, what it may touch, what it emits.

Everything that wires a handler is built from this one module, so a route, a
consumer or an event cannot be declared in one place and missing in another:

- the CDK stack (``infra/components/``): each function, its routes, its queue and
  that queue's rule, its stream, its IAM statements (``infra/policies.py``);
- the local stack: the gateway's route table (``local/gateway.py``), the
  dispatcher's queues and relay (``local/dispatcher.py``), the rules and queues
  on moto (``local/resources.py``), each handler's role (``local/iam.py``);
- the protocol and event documentation (``tools/schemas/``): which service a
  message's route reaches, who emits an event and who consumes it.

It imports no CDK and no handler (handlers are named, not imported), so the
local stack and the tools load it cheaply; it is not part of the Lambda asset,
and no runtime package imports it. Each service's handler keeps its own
event-routing table; ``tests/test_manifest.py`` holds both to this one.

Adding to it:

- a WebSocket route: ``routes=("queue", ...)`` (the stack adds the route, the
  local gateway routes it);
- a bus consumer: ``queue="<consumer>"`` and ``consumes=(detail-types...)``:
  its queue and the rule that feeds it follow, here and locally;
- an event: its emitting service in ``services.common.events.EMITTERS`` (read here);
  it leaves through an outbox (the relay puts it), or ``publishes=(detail-types...)``
  on the function that puts it itself: either way its role may put only that;
- table access: ``tables={constants.SOME_TABLE: (actions...)}``;
- a state machine or another resource: a new capability flag here, and the
  grant that goes with it in ``infra/policies.py``.

Table actions are the DynamoDB API calls each service makes (read from its
composition root and stores); ``TransactWriteItems`` is authorized per item,
as ``PutItem``/``UpdateItem``, so it has no action of its own here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from services.common import constants
from services.common.constants import TableSpec
from services.common.events import EMITTERS, OPERATOR_EMITS, source_of

GET = "dynamodb:GetItem"
PUT = "dynamodb:PutItem"
UPDATE = "dynamodb:UpdateItem"
DELETE = "dynamodb:DeleteItem"
QUERY = "dynamodb:Query"

TIMERS = "timers"
"""The ``queue`` of the turn timers (``constants.TIMER_QUEUE``), fed by EventBridge Scheduler."""

STREAM_PARALLELIZATION = 1
"""The relay's batches in flight per stream shard: one keeps each table's events in order."""
STREAM_SHARDS = 4
"""An allowance for the games stream's shards, each read by one relay invocation at a time.
A stream has a shard per table partition, and an on-demand table starts with about four
(its initial 4,000 write units, 1,000 a partition); more as it grows past that."""
WEBSOCKET_SECONDS = 0.1
"""A WebSocket message's mean time in its function: the cost model's 50 ms of ``turn-ws``
to 100 ms of ``connect`` (infra/README.md). By Little's law the stage's messages hold
``throttleRate`` × this many executions at once."""
DIRECT_ALLOWANCE = 2
"""Each directly invoked function (the ledger API, the operators' URL): a few calls at once;
past it a call is throttled (429) and its caller retries."""
UNRESERVED_MINIMUM = 100
"""Lambda refuses a reservation that would leave less than this of the account's concurrency
unreserved (``UnreservedConcurrentExecutions``): reserving 10 needs a total of 110."""
BATCH_SIZE = 10
"""Records per invocation of a queue consumer (and of the relay): a consumer's whole batch
need not fit its timeout, one record must (``FunctionSpec.record_seconds``)."""
VISIBILITY_FACTOR = 6
"""A queue's visibility timeout is this many times its consumer's timeout (AWS's advice for
a Lambda event source): a batch still running, or retried by the mapping, is not handed
to a second invocation meanwhile."""


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
    """The SQS queue that triggers it: a bus consumer's (``canasta-<queue>``) or ``TIMERS``."""
    consumes: tuple[str, ...] = ()
    """The detail-types a bus consumer's rule sends to its ``queue``: the handler's
    event-routing table routes exactly these."""
    stream: TableSpec | None = None
    """A table whose stream (outbox items only) triggers the function: the outbox relay,
    which puts every event an outbox carries on the bus (``relayed``)."""
    publishes: tuple[str, ...] = ()
    """The detail-types it puts on the stage's bus itself (events:PutEvents), each under
    its service's source only (``emitted``)."""
    pushes: bool = False
    """execute-api:ManageConnections on the stage's connections (post to clients)."""
    closes_connections: bool = False
    """execute-api:ManageConnections ``DELETE`` on the stage's connections (``kick``)."""
    schedules_timers: bool = False
    """Arms turn timers: delayed messages to the timer queue (sqs:SendMessage) and, for far
    deadlines, schedules (scheduler:CreateSchedule and iam:PassRole of the scheduler role)."""
    verifies_tokens: bool = False
    """Checks player tokens: the issuer, audience and JWKS URL in its environment (no grant:
    the issuer's keys are public)."""
    starts_tickets: bool = False
    """states:StartExecution on the matchmaking state machine (a ticket per queued player)."""
    answers_tickets: bool = False
    """Answers the tickets' tasks when they end (SendTaskSuccess): whoever seats a ticket or
    takes its player out of the queue (``leave``, a disconnect, a late ``try_match``)."""
    external_api: bool = False
    """Invoked directly by the platform's other modes: its ARN is a stack output and export,
    and a managed policy allows ``lambda:InvokeFunction`` on it."""
    function_url: bool = False
    """Invoked through its function URL (AuthType ``AWS_IAM``: each request signed by the
    caller, who is named to the handler as AWS authenticated them): the URL is a stack
    output, and the operators' act policy may invoke it (``policies.operator_grants``)."""
    memory_mb: int = 256
    timeout_seconds: int = 10
    max_concurrency: int | None = None
    """For a queue consumer: the most batches in flight (protects the tables and the API).
    SQS takes 2 to 1,000; it is a cap, not a reservation: the account's unreserved pool
    must hold it, or the consumer's invocations are throttled."""
    record_seconds: float | None = None
    """For a queue consumer: the most seconds one record takes at ``memory_mb``, its
    environment's ``CANASTA_RECORD_SECONDS``. The consumer starts a record only while this
    and the response's margin are left of its invocation, and hands the rest of the batch
    back (``services.common.runtime.process_batch``): so one record must fit the timeout,
    ``BATCH_SIZE`` of them need not."""
    reserved_concurrency: int | None = None
    """Concurrency set aside for the function (switchable with ``reservedConcurrency``)."""


TURN_MEMORY_MB = 1024
"""The turn functions play the bots' seats with the search bot (shared_engine/search.py).
Lambda gives CPU in proportion to memory (a full vCPU at 1,769 MB): at 1,024 MB, about
0.58 of one. A whole round played in one invocation (a friends table whose only person
left, three hard bots) measured at most 2.4 s CPU on one core (docs/performance.md),
so about 4 s here with the writes, inside the 10 s of ``turn-ws``; at the default 256 MB
it would be about 17 s."""

TURN_RECORD_SECONDS = 6.0
"""One record of a turn consumer at its worst: a whole round auto-played (about 4 s at
``TURN_MEMORY_MB``), with half as much again for slower calls. Ten of them (the humans of
ten tables dropping at once) are 60 s, twice the consumers' 30 s: they take what fits and
hand the others back."""
QUICK_RECORD_SECONDS = 2.0
"""One record of a consumer that plays no turn: a few reads, a transaction and the pushes
to four seats, about 60 ms in AWS (docs/performance.md); the rest is room for throttled
calls retried."""

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
        verifies_tokens=True,
    ),
    "connect": FunctionSpec(
        handler="services.connect.handler.connect",
        service="connect",
        description="$connect: records the connection, re-attaches a seat, tells an older tab",
        routes=("$connect",),
        tables={
            constants.CONNECTIONS: (PUT,),
            constants.PLAYERS: (UPDATE,),
            constants.GAMES: (GET, UPDATE),
        },
        publishes=("PlayerConnected",),
        # Tells the player's older connection (another tab) it was opened elsewhere.
        pushes=True,
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
        publishes=("PlayerDisconnected",),
    ),
    "turn-ws": FunctionSpec(
        handler="services.turn.handler.websocket",
        service="turn",
        description="play, sync, continue and quick messages from the players",
        routes=("play", "sync", "say", "continue", "$default"),
        tables={
            # ``sync`` restores the round's move log (MoveLog.of_round): a query.
            constants.GAMES: (*_TURN_TABLES[constants.GAMES], QUERY),
            # ``sync`` finds the player's table (PresenceStore.get_player).
            constants.PLAYERS: (GET,),
            # The joker button reads the account's jokers and debits one in the move's
            # transaction (an entry put and a balance update).
            constants.LEDGER: (GET, PUT, UPDATE),
        },
        memory_mb=TURN_MEMORY_MB,
        pushes=True,
        schedules_timers=True,
    ),
    "turn-events": FunctionSpec(
        handler="services.turn.handler.events",
        service="turn",
        description="RoundStarted and presence events: auto-play absent seats, push views",
        queue="turn-events",
        consumes=("RoundStarted", "PlayerConnected", "PlayerDisconnected"),
        tables={
            **_TURN_TABLES,
            # A presence change that leaves nobody to wait for between two rounds deals the
            # next: each player's spare jokers for it (Ledger.balance).
            constants.LEDGER: (GET,),
        },
        memory_mb=TURN_MEMORY_MB,
        pushes=True,
        schedules_timers=True,
        timeout_seconds=30,
        max_concurrency=10,
        record_seconds=TURN_RECORD_SECONDS,
    ),
    "turn-timers": FunctionSpec(
        handler="services.turn.handler.timers",
        service="turn",
        description="Expired timers: auto-play a turn still running, deal the round after "
        "an intermission",
        queue=TIMERS,
        tables={
            **_TURN_TABLES,
            # The intermission's timer deals the next round: each player's spare jokers.
            constants.LEDGER: (GET,),
        },
        memory_mb=TURN_MEMORY_MB,
        pushes=True,
        schedules_timers=True,
        timeout_seconds=30,
        max_concurrency=10,
        record_seconds=TURN_RECORD_SECONDS,
    ),
    "deal": FunctionSpec(
        handler="services.deal.handler.events",
        service="deal",
        description="TableFormed and RoundScored: create the table, deal the next round",
        queue="deal",
        consumes=("TableFormed", "RoundScored"),
        tables={
            constants.GAMES: (GET, PUT, UPDATE),
            # Reads each player's guard item (where they are) and seats the table's
            # players (PresenceStore.get_player, PresenceStore.seat_player).
            constants.PLAYERS: (GET, UPDATE),
            # Each player's spare jokers for the deal (Ledger.balance).
            constants.LEDGER: (GET,),
        },
        pushes=True,
        # Dealing starts the first turn, and with it the turn's timer.
        schedules_timers=True,
        timeout_seconds=30,
        max_concurrency=5,
        record_seconds=QUICK_RECORD_SECONDS,
    ),
    "score": FunctionSpec(
        handler="services.score.handler.events",
        service="score",
        description="RoundEnded: score the round, end the match when it is won",
        queue="score",
        consumes=("RoundEnded",),
        tables={
            # The match's score sheet in its result reads the scored rounds (GameStore.scores).
            constants.GAMES: (GET, PUT, UPDATE, QUERY),
            # The write that ends a match frees its players in the same transaction, so a
            # ``queue`` sent on ``match_result`` finds them free: it reads each player's
            # guard item and clears the seat it names (PresenceStore.leave_table).
            constants.PLAYERS: (GET, UPDATE),
        },
        pushes=True,
        # A round with another to follow starts the intermission, and with it its timer.
        schedules_timers=True,
        timeout_seconds=30,
        max_concurrency=5,
        record_seconds=QUICK_RECORD_SECONDS,
    ),
    "relay": FunctionSpec(
        handler="services.relay.handler.stream",
        service="relay",
        description="Outbox relay: publishes the events of newly written games items",
        stream=constants.GAMES,
        timeout_seconds=30,
        # Keeps capacity for the relay whatever the other functions do: every event
        # of the game loop passes through it.
        reserved_concurrency=10,
    ),
    "matchmaking-ws": FunctionSpec(
        handler="services.matchmaking.handler.websocket",
        service="matchmaking",
        description="Queues, friends tables and balances: the lobby's messages",
        routes=(
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
        ),
        tables={
            # Queue entries (put on queue, deleted on leave) and lobbies (put, seats
            # updated, read back for the lobby view).
            constants.MATCHMAKING: (GET, PUT, UPDATE, DELETE),
            # The guard item: where the player is (read), moved by conditional updates.
            constants.PLAYERS: (GET, UPDATE),
            # A full friends table or ``fill_bots`` creates the table item with its outbox;
            # ``rematch`` reads the ended table's seats and status; ``replay`` its rounds,
            # log and scores.
            constants.GAMES: (GET, PUT, QUERY),
            # ``balance`` and the arena's stake check read the account.
            constants.LEDGER: (GET,),
            # ``profile`` reads the player's own profile and last matches; ``leaderboard``
            # the top of each board shard and their bucket counts.
            constants.PROFILES: (GET, QUERY),
        },
        pushes=True,
        starts_tickets=True,
        # ``leave`` ends the ticket: it answers the task token its entry holds.
        answers_tickets=True,
    ),
    "matchmaking-events": FunctionSpec(
        handler="services.matchmaking.handler.events",
        service="matchmaking",
        description="try_match tasks of the tickets; MatchEnded, TableAborted, PlayerDisconnected",
        queue="matchmaking",
        # The queue also carries the state machine's ``try_match`` and ``abandon`` tasks.
        consumes=("MatchEnded", "TableAborted", "PlayerDisconnected"),
        tables={
            # Reads a queue's oldest entries, deletes them as tables form or tickets
            # expire, closes or frees lobby seats when a waiting player disconnects.
            constants.MATCHMAKING: (GET, UPDATE, DELETE, QUERY),
            # Seats players (conditional updates) and frees them when a match is over.
            constants.PLAYERS: (GET, UPDATE),
            # Forming a table creates its item with TableFormed in the outbox.
            constants.GAMES: (PUT,),
            # Arena stakes move to escrow in the same transaction (entries and balances).
            constants.LEDGER: (PUT, UPDATE),
        },
        pushes=True,
        answers_tickets=True,
        timeout_seconds=30,
        max_concurrency=10,
        record_seconds=QUICK_RECORD_SECONDS,
    ),
    "ledger-events": FunctionSpec(
        handler="services.ledger.handler.events",
        service="ledger",
        description="MatchEnded and TableAborted: settle the match or refund the stakes",
        queue="ledger",
        consumes=("MatchEnded", "TableAborted"),
        tables={
            # Bookings are transactions of create-only entries and balance updates.
            constants.LEDGER: (PUT, UPDATE),
            # What a match's end books is read from the table, never taken from the event:
            # its item (ended or aborted, who sat, mode and stake) and its scored rounds
            # (the totals after each, which the rules must end the match with).
            constants.GAMES: (GET, QUERY),
        },
        publishes=("LedgerSettled",),
        timeout_seconds=30,
        max_concurrency=5,
        record_seconds=QUICK_RECORD_SECONDS,
    ),
    "profile-events": FunctionSpec(
        handler="services.profile.handler.events",
        service="profile",
        description="MatchEnded: the match in its players' history, stats, rating and boards",
        queue="profile",
        consumes=("MatchEnded",),
        tables={
            # The profiles (read, then written at that version), the match's marker, its
            # history entries and the players' leaderboard standings (the old one deleted,
            # the new one put, the buckets' counts updated): one transaction.
            constants.PROFILES: (GET, PUT, UPDATE, DELETE),
            # Like the ledger, what a match adds is read from the table, never taken from
            # the event: its item (who sat, mode, stake) and its scored rounds.
            constants.GAMES: (GET, QUERY),
        },
        timeout_seconds=30,
        # One record a match, off every player's path: SQS's least is plenty.
        max_concurrency=2,
        record_seconds=QUICK_RECORD_SECONDS,
    ),
    "ledger-api": FunctionSpec(
        handler="services.ledger.handler.api",
        service="ledger",
        description="Balances and bookings for the platform's other modes (invoked directly)",
        tables={constants.LEDGER: (GET, PUT, UPDATE)},
        external_api=True,
    ),
    "ops": FunctionSpec(
        handler="services.ops.handler.url",
        service="ops",
        description="The operators' void, close, credit and kick: planned, done once, audited",
        tables={
            # ``close`` and a played match's ``void``: the table at the version read and
            # its create-only CLOSED item (TableAborted in its outbox), one transaction;
            # the seats found gone when they are shown the ended table.
            constants.GAMES: (GET, PUT, UPDATE),
            # ``void`` reads the match's entries, ``credit`` the player's; both book
            # create-only entries and their balances (with the close, for a played match).
            constants.LEDGER: (GET, QUERY, PUT, UPDATE),
            # ``credit`` books only for a player who exists.
            constants.PLAYERS: (GET,),
            # ``kick`` names whose connection it closes.
            constants.CONNECTIONS: (GET,),
            # The only writer of the audit: each record and its action id's marker,
            # create-only (no update, no delete); a repeated id reads what it recorded.
            constants.AUDIT: (GET, PUT),
        },
        # ``close`` shows the seats the ended table; ``kick`` closes a connection.
        pushes=True,
        closes_connections=True,
        function_url=True,
        timeout_seconds=30,
    ),
}
"""Function key → spec; the key names the function (``<stage>-canasta-<key>``)."""


CONSUMERS: dict[str, tuple[str, ...]] = {
    spec.queue: spec.consumes for spec in FUNCTIONS.values() if spec.queue and spec.consumes
}
"""Bus consumer (its queue, ``canasta-<consumer>``) → the detail-types its rule matches."""

OUTSIDE_READERS: dict[str, str] = {
    "LedgerSettled": "readers of the accounts the platform's other modes share (the points "
    "each match moved: the design's ledger announces every booking), one event a match",
}
"""Detail-types no rule of the stack routes, each published for readers outside it, and
why. Every event costs its PutEvents (and, from an outbox, a relay invocation), so an
event is either consumed here or listed here (``tests/test_manifest.py``)."""


def consumer_pattern(consumer: str) -> dict[str, Any]:
    """The rule's event pattern: each detail-type only from the service that emits it.

    So an event of a known type put on the bus by any other source (another
    service, a test tool, a mistake) triggers no consumer.
    """
    by_source: dict[str, list[str]] = {}
    for detail_type in CONSUMERS[consumer]:
        by_source.setdefault(source_of(detail_type), []).append(detail_type)
        if detail_type in OPERATOR_EMITS:
            operator = source_of(detail_type, OPERATOR_EMITS[detail_type])
            by_source.setdefault(operator, []).append(detail_type)
    branches = [{"source": [s], "detail-type": d} for s, d in by_source.items()]
    return branches[0] if len(branches) == 1 else {"$or": branches}


def _direct(spec: FunctionSpec) -> list[tuple[str, str]]:
    """(source, detail-type) of what the function puts itself: its service's own events."""
    return [(source_of(detail_type, spec.service), detail_type) for detail_type in spec.publishes]


def relayed() -> dict[str, tuple[str, ...]]:
    """Source → the detail-types that leave through an outbox (the relay puts them): every
    event of a service or of the operators' console (``OPERATOR_EMITS``) that no function
    puts itself, under its emitter's source."""
    direct = {pair for spec in FUNCTIONS.values() for pair in _direct(spec)}
    every = [(source_of(d), d) for d in EMITTERS]
    every += [(source_of(d, operator), d) for d, operator in OPERATOR_EMITS.items()]
    by_source: dict[str, tuple[str, ...]] = {}
    for source, detail_type in every:
        if (source, detail_type) not in direct:
            by_source[source] = (*by_source.get(source, ()), detail_type)
    return by_source


def emitted(spec: FunctionSpec) -> dict[str, tuple[str, ...]]:
    """Source → the detail-types the function may put on the bus, and nothing else: its
    own events under its service's source, or, for the outbox relay, every relayed one.

    The role's ``events:PutEvents`` grants say exactly this (``infra/policies.py``), one
    statement per source, so that no function puts an event under another's source.
    """
    if spec.stream is not None:
        return relayed()
    direct = _direct(spec)
    return {source: tuple(d for s, d in direct if s == source) for source, _ in direct}


def queue_names() -> dict[str, str]:
    """Every queue a function consumes (a consumer's, the timers') → its SQS name."""
    return {
        spec.queue: constants.TIMER_QUEUE
        if spec.queue == TIMERS
        else constants.queue_name(spec.queue)
        for spec in FUNCTIONS.values()
        if spec.queue
    }


def visibility_timeout_seconds(queue: str) -> int:
    """A queue's visibility timeout: ``VISIBILITY_FACTOR`` times its consumer's timeout."""
    (timeout,) = {spec.timeout_seconds for spec in FUNCTIONS.values() if spec.queue == queue}
    return timeout * VISIBILITY_FACTOR


def websocket_routes() -> dict[str, str]:
    """Route key → the handler it invokes (``$connect`` and ``$disconnect`` included)."""
    return {route: spec.handler for spec in FUNCTIONS.values() for route in spec.routes}


def authorizer() -> str:
    """The handler of the ``$connect`` authorizer."""
    (handler,) = [spec.handler for spec in FUNCTIONS.values() if spec.authorizer]
    return handler


def queue_handlers() -> dict[str, str]:
    """Queue (a consumer or ``TIMERS``) → the handler its event source mapping invokes."""
    return {spec.queue: spec.handler for spec in FUNCTIONS.values() if spec.queue}


def stream_handler() -> str:
    """The handler the games table's stream invokes (the outbox relay)."""
    (handler,) = [spec.handler for spec in FUNCTIONS.values() if spec.stream == constants.GAMES]
    return handler


def operator_function() -> str:
    """The key of the function the operators' console acts through (its function URL)."""
    (key,) = [key for key, spec in FUNCTIONS.items() if spec.function_url]
    return key


def handler_modules() -> tuple[str, ...]:
    """Every module that holds an entry point, each once."""
    return tuple(sorted({spec.handler.rpartition(".")[0] for spec in FUNCTIONS.values()}))


def service_of_route(route: str) -> str:
    """The service whose function a WebSocket route invokes."""
    (service,) = [spec.service for spec in FUNCTIONS.values() if route in spec.routes]
    return service


@dataclass(frozen=True)
class Concurrency:
    """The concurrent executions the stack's functions can claim, by kind of trigger.

    A new account's ``ConcurrentExecutions`` quota can be 10, below what the queue
    consumers alone may take: the preflight compares the account with ``account``.
    """

    consumers: int
    """The queue consumers' ``max_concurrency``, summed."""
    stream: int
    """The outbox relay: its reservation when reserving, else shards × parallelization."""
    websocket: int
    """Every WebSocket message's function (the routes and the ``$connect`` authorizer)."""
    direct: int
    """The directly invoked functions' allowance."""
    reserved: int
    """Of the above, what reservations set aside (``reservedConcurrency``)."""

    @property
    def claimed(self) -> int:
        return self.consumers + self.stream + self.websocket + self.direct

    @property
    def unreserved(self) -> int:
        """What must stay unreserved beside the reservations: the other claims, and when
        anything is reserved, at least Lambda's minimum."""
        others = self.claimed - self.reserved
        return max(others, UNRESERVED_MINIMUM) if self.reserved else others

    @property
    def account(self) -> int:
        """The account's ``ConcurrentExecutions`` this stage needs."""
        return self.reserved + self.unreserved


def concurrency_needed(reserved: bool, messages_per_second: int) -> Concurrency:
    """What the functions can claim at once, with or without their reservations.

    ``messages_per_second`` is the stage's WebSocket throttle rate (``throttleRate``):
    the messages it admits, each held ``WEBSOCKET_SECONDS`` in its function.
    """
    consumers = stream = direct = reservations = 0
    for spec in FUNCTIONS.values():
        # A reservation is both what the function may claim and what it takes from the pool.
        reservation = (spec.reserved_concurrency or 0) if reserved else 0
        reservations += reservation
        if spec.routes or spec.authorizer:
            continue
        if spec.max_concurrency is not None:
            consumers += reservation or spec.max_concurrency
        elif spec.stream is not None:
            stream += reservation or STREAM_SHARDS * STREAM_PARALLELIZATION
        else:
            direct += reservation or DIRECT_ALLOWANCE
    websocket = math.ceil(messages_per_second * WEBSOCKET_SECONDS)
    return Concurrency(consumers, stream, websocket, direct, reservations)
