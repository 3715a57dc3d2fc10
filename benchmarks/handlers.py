"""Warm handler figures: whole matches through the real handler functions, in-process moto.

Four players connect (the authorizer, then ``$connect``), queue for a
three-round match (the matchmaking route, then each ticket's ``try_match``
task), and play it with the heuristic bot choosing each move;
every move is a ``play`` message to ``services.turn.handler.websocket`` in
API Gateway's event shape, with the authorizer's context. In between, a small
in-process platform does what AWS does between the functions, as production
is configured (``infra/``):

* the games table's stream feeds the relay, filtered to inserted items that
  carry an ``outbox`` (the event source mapping's filter);
* EventBridge delivers to the consumer queues (moto's rules and SQS targets,
  created by ``local.resources``), and each queue's messages go to its
  consumer in SQS-shaped batches;
* after the match each person asks for their profile and the mode's leaderboard;
* every turn's timer fires once, after its turn is over (schedules are never
  cancelled), and the turn service's ``timers`` handler gets it;
* each ticket the matchmaking route starts runs the state machine's definition
  (``benchmarks.tickets``): its task message goes to the matchmaking queue, and
  the execution goes on when a function answers its token; a ticket still
  waiting when the match is over runs out of queue time.

Every handler invocation is metered (``benchmarks.meter``): AWS calls by
type, capacity units from the real item sizes, pushes, events, and time
(wall and CPU, with the share spent inside AWS calls).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar

from benchmarks.tickets import Tickets
from infra import manifest
from local.dispatcher import LambdaContext, websocket_event
from local.issuer import LocalIssuer

REGION = "us-east-1"
ACCOUNT = "123456789012"
WEBSOCKET_ENDPOINT = "https://bench.execute-api.us-east-1.amazonaws.com/prod"
MODE = "three_rounds"

Handler = Callable[[dict[str, Any], Any], Any]


@cache
def issuer() -> LocalIssuer:
    """The players' token issuer, its keys served on 127.0.0.1 (the authorizer fetches them)."""
    return LocalIssuer().serve()


def environment() -> dict[str, str]:
    """What the CDK stack sets on each function, for in-process moto."""
    return {
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
        "CANASTA_WEBSOCKET_ENDPOINT": WEBSOCKET_ENDPOINT,
        **issuer().environment(),
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "Canasta",
        "POWERTOOLS_LOG_LEVEL": "ERROR",
    }


@contextlib.contextmanager
def patched_environment(values: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    for name in list(os.environ):
        if name.startswith(("CANASTA_", "AWS_ENDPOINT_URL", "AWS_PROFILE")):
            del os.environ[name]
    os.environ.update(values)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def stored_item(table: str, key: dict[str, Any]) -> dict[str, Any] | None:
    """An item as moto stores it, read from its backend (no AWS call, nothing metered)."""
    from moto.dynamodb.models import dynamodb_backends

    item = dynamodb_backends[ACCOUNT][REGION].get_item(table, key)
    return None if item is None else item.to_json()["Attributes"]


def stored_bytes() -> dict[str, int]:
    """Billable storage of every table: item sizes plus DynamoDB's 100 bytes per item."""
    from moto.dynamodb.models import dynamodb_backends

    from benchmarks.meter import item_size

    backend = dynamodb_backends[ACCOUNT][REGION]
    return {
        name: sum(item_size(i.to_json()["Attributes"]) + 100 for i in table.all_items())
        for name, table in backend.tables.items()
    }


def forget_pushed_data() -> None:
    """moto keeps every byte posted to a connection; drop it so a long match stays flat."""
    from moto.apigatewaymanagementapi.models import apigatewaymanagementapi_backends

    for backend in apigatewaymanagementapi_backends[ACCOUNT].values():
        backend.connections.clear()


def sqs_event(bodies: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "Records": [
            {"messageId": mid, "receiptHandle": mid, "body": body, "eventSource": "aws:sqs"}
            for mid, body in bodies
        ]
    }


@dataclass
class PlatformCounts:
    """What the platform did between the functions (billed, but by no function's call)."""

    sqs_messages: Counter[str] = field(default_factory=Counter)
    """Messages delivered to each queue (each: a send, a receive and a delete)."""
    timers_fired: int = 0
    """EventBridge Scheduler invocations: one per schedule, when it fires."""
    sfn_transitions: int = 0
    """States the tickets' executions entered (one for a ticket answered seated)."""
    inbound_messages: int = 0
    """Client messages through the WebSocket API (routes other than $connect/$disconnect)."""
    stream_records: int = 0


def label(handler: str) -> str:
    """A function's name in the figures: ``<service>.<entry point>`` (``deal.events``)."""
    parts = handler.split(".")
    return f"{parts[1]}.{parts[-1]}"


HANDLERS = {label(spec.handler): spec.handler for spec in manifest.FUNCTIONS.values()}
"""Function label → its entry point: each invocation gets its function's timeout and memory."""


class Platform:
    """In-process stand-in for the event source mappings, EventBridge and the Scheduler."""

    QUEUE_ROUTES: ClassVar[dict[str, tuple[str, str, str]]] = {
        queue: (label(handler), *handler.rsplit(".", 1))
        for queue, handler in manifest.queue_handlers().items()
    }
    """Queue key → (function label, module, attribute), as the manifest's event sources."""

    def __init__(self, meter: Any, resources: Any, client: Callable[[str], Any]) -> None:
        import importlib

        self.meter = meter
        self.resources = resources
        self.sqs = client("sqs")
        self.streams = client("dynamodbstreams")
        self.scheduler = client("scheduler")
        self.tickets = Tickets(
            resources.queues["matchmaking"],
            lambda url, body: self.sqs.send_message(QueueUrl=url, MessageBody=body),
        )
        self.counts = PlatformCounts()
        self.errors: list[str] = []
        self._iterators: dict[str, str] = {}
        self._dropped = 0
        self.handlers: dict[str, Handler] = {
            name: getattr(importlib.import_module(module), attribute)
            for name, module, attribute in self.QUEUE_ROUTES.values()
        }
        relay_module, relay = manifest.stream_handler().rsplit(".", 1)
        self.handlers[label(manifest.stream_handler())] = getattr(
            importlib.import_module(relay_module), relay
        )

    def invoke(self, function: str, kind: str, handler: Handler, event: dict[str, Any]) -> Any:
        """One metered Lambda invocation (stdout, where Powertools writes metrics, muted)."""
        with (
            self.meter.metering(function, kind) as invocation,
            contextlib.redirect_stdout(io.StringIO()),
        ):
            result = handler(event, LambdaContext.of(HANDLERS[function]))
        invocation.records = len(event.get("Records", ()))
        for started in invocation.captured.get("sfn.StartExecution", []):
            self.counts.sfn_transitions += self.tickets.start(started["input"])
        for answer in invocation.captured.get("sfn.SendTaskSuccess", []):
            self.counts.sfn_transitions += self.tickets.answered(answer["taskToken"])
        failures = result.get("batchItemFailures") if isinstance(result, dict) else None
        if failures:
            invocation.error = f"{len(failures)} failed record(s)"
            self.errors.append(f"{function} ({kind}): {failures}")
        forget_pushed_data()
        return result

    # --- the stream ---------------------------------------------------------------

    def _stream_records(self) -> list[dict[str, Any]]:
        arn = self.resources.stream_arn
        shards = self.streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
        records: list[dict[str, Any]] = []
        for shard in shards:
            shard_id = shard["ShardId"]
            iterator = (
                self._iterators.get(shard_id)
                or self.streams.get_shard_iterator(
                    StreamArn=arn, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON"
                )["ShardIterator"]
            )
            response = self.streams.get_records(ShardIterator=iterator)
            self._iterators[shard_id] = response.get("NextShardIterator") or iterator
            records.extend(response["Records"])
        return records

    def _drop_read_records(self) -> None:
        """Stand in for the stream's 24-hour retention: moto keeps every record (with copies
        of the items) and copies them all with the table at every transaction."""
        from moto.dynamodb.models import dynamodb_backends

        from services.common.constants import GAMES

        shard = dynamodb_backends[ACCOUNT][REGION].get_table(GAMES.name).stream_shard
        for index in range(self._dropped, len(shard.items)):
            shard.items[index] = None
        self._dropped = len(shard.items)

    def pump_stream(self) -> int:
        records = self._stream_records()
        self._drop_read_records()
        self.counts.stream_records += len(records)
        matching = [
            {**r, "eventSource": "aws:dynamodb", "eventSourceARN": self.resources.stream_arn}
            for r in records
            if r.get("eventName") == "INSERT" and "outbox" in r["dynamodb"].get("NewImage", {})
        ]
        for start in range(0, len(matching), 10):
            batch = matching[start : start + 10]
            kinds = sorted({r["dynamodb"]["Keys"]["sk"]["S"].split("#")[0] for r in batch})
            self.invoke(
                "relay.stream", "+".join(kinds), self.handlers["relay.stream"], {"Records": batch}
            )
        return len(matching)

    # --- queues ---------------------------------------------------------------------

    def pump_queue(self, key: str) -> int:
        url = self.resources.queues[key]
        messages = self.sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0
        ).get("Messages", [])
        if not messages:
            return 0
        function = self.QUEUE_ROUTES[key][0]
        kinds = sorted({_message_kind(m["Body"]) for m in messages})
        self.counts.sqs_messages[key] += len(messages)
        self.invoke(
            function,
            "+".join(kinds),
            self.handlers[function],
            sqs_event([(m["MessageId"], m["Body"]) for m in messages]),
        )
        for m in messages:
            self.sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        return len(messages)

    def expire_tickets(self) -> None:
        """The queue time of every ticket still waiting is over: its task times out."""
        self.counts.sfn_transitions += self.tickets.time_out()
        self.settle()

    # --- timers ---------------------------------------------------------------------

    def fire_timers(self, keep: set[str]) -> int:
        """Fire every schedule except those named in ``keep`` (the turns still running)."""
        from services.common.constants import SCHEDULE_GROUP

        group, fired = SCHEDULE_GROUP, 0
        for summary in self.scheduler.list_schedules(GroupName=group).get("Schedules", []):
            name = summary["Name"]
            if name in keep:
                continue
            schedule = self.scheduler.get_schedule(GroupName=group, Name=name)
            self.sqs.send_message(
                QueueUrl=self.resources.queues["timers"], MessageBody=schedule["Target"]["Input"]
            )
            self.scheduler.delete_schedule(GroupName=group, Name=name)
            fired += 1
        self.counts.timers_fired += fired
        return fired

    def settle(self, limit: int = 200) -> None:
        """Deliver until nothing is left to deliver."""
        for _ in range(limit):
            delivered = self.pump_stream()
            for key in self.QUEUE_ROUTES:
                delivered += self.pump_queue(key)
            if not delivered:
                return
        raise RuntimeError("the platform did not settle")


def _message_kind(body: str) -> str:
    raw = json.loads(body)
    if raw.get("kind") == "try_match":
        return "try_match"
    if "turn_started" in raw and "detail-type" not in raw:
        return "timer"
    return str(raw.get("detail-type", "?"))


@dataclass
class MatchRun:
    """One match played through the handlers: its invocations and what the platform did."""

    invocations: list[Any]
    counts: PlatformCounts
    rounds: int
    actions: int
    seconds: float
    errors: list[str]
    largest_items: dict[str, int]
    """The largest item written, by table and kind (``canasta-games:TABLE``, ...)."""
    stored_bytes: dict[str, int]
    """What the account stores once the match is over, by table (item bytes + 100 each)."""


class Match:
    """Plays matches through the handlers, each on a fresh in-process moto account.

    The handler modules, their services and their clients are created once and
    stay warm from one match to the next, as in a warm Lambda environment; the
    accounts are fresh so that moto's own costs (it copies a whole table for
    every transaction) do not grow from match to match.
    """

    def __init__(self) -> None:
        import boto3
        import moto  # noqa: F401 - registers its botocore stub, which sessions pick up when created

        from benchmarks.meter import Meter

        boto3.setup_default_session(region_name=REGION)
        self.meter = Meter(stored_item)
        self.meter.install(boto3.DEFAULT_SESSION.events)
        self._wired = False

    @staticmethod
    def client(name: str) -> Any:
        import boto3

        return boto3.client(name, region_name=REGION)

    @contextlib.contextmanager
    def account(self) -> Iterator[None]:
        """A fresh moto account with every resource; the handlers are wired on first use."""
        from moto import mock_aws

        from local.aws import reset_handlers
        from local.resources import create_resources
        from services.common.dynamo_storage import DynamoStorage
        from services.common.settings import Settings
        from services.common.store import GameStore

        # Keep boto3's default session: the meter's hooks are on it, the warm clients come from it.
        with mock_aws(config={"core": {"reset_boto3_session": False}}):
            self.resources = create_resources(Settings(), self.client)
            os.environ.update(self.resources.environment())
            if not self._wired:
                reset_handlers()
                self._wired = True
            self.settings = Settings()
            self.platform = Platform(self.meter, self.resources, self.client)
            self.storage = DynamoStorage.of(self.client("dynamodb"), self.settings)
            self.games = GameStore(self.storage)
            yield

    def play(
        self, number: int, mode: str = MODE, stake: int = 0, *, everyone_leaves: bool = False
    ) -> MatchRun:
        """One match of four connected players, each move chosen by the bot.

        An arena ``stake`` is covered by a starting balance booked outside any
        invocation (as the platform's sign-in would), so it is not metered.
        With ``everyone_leaves`` the four disconnect as soon as the table forms:
        the turn service auto-plays the whole first round (TABLE-2), and the
        table is abandoned when it is scored.
        """
        import services.connect.handler as connect
        import services.matchmaking.handler as matchmaking
        import services.turn.handler as turn
        from services.common.auth import Identity
        from shared_engine import unpack

        platform = self.platform
        platform.counts = PlatformCounts()
        platform.errors = []
        start_invocations = len(self.meter.invocations)
        start = time.perf_counter()
        players = [(f"m{number:03d}-player-{seat}", f"Player {seat}") for seat in (1, 2, 3, 4)]
        context = self._context = {}
        connection = self._connection = {}
        for player_id, name in players:
            token = issuer().issue(Identity(player_id, name))
            policy = platform.invoke(
                "connect.authorize",
                "$connect",
                connect.authorize,
                {
                    "type": "REQUEST",
                    "methodArn": f"arn:aws:execute-api:{REGION}:{ACCOUNT}:bench/prod/$connect",
                    "queryStringParameters": {"token": token},
                },
            )
            context[player_id] = {**policy["context"], "principalId": policy["principalId"]}
            connection[player_id] = f"conn-{player_id}"
            platform.invoke(
                "connect.connect",
                "$connect",
                connect.connect,
                websocket_event(connection[player_id], "$connect", None, context[player_id]),
            )
            platform.settle()

        # Quick start: each player queues, and their ticket's task arrives at once.
        if stake:
            self._fund([player_id for player_id, _ in players], 10 * stake)
        for player_id, _ in players:
            self._client_message(
                matchmaking.websocket,
                "matchmaking.websocket",
                player_id,
                {"action": "queue", "mode": mode, "stake": stake},
            )
            platform.settle()

        table_id = self._table_of(players[0][0])
        actions = 0
        if everyone_leaves:
            self._disconnect(players)
        for _ in range(2000):
            table = self.games.get_table(table_id)
            assert table is not None
            if table.status != "playing":
                break
            assert table.state is not None, "no round was dealt"
            state = unpack(table.state)
            if state.round_over and table.intermission_until is not None:
                # Between two rounds each person reads the result and continues, as the
                # web client's Continue sends it; the last one's deals the next round.
                for seat in sorted(table.awaited()):
                    self._client_message(
                        turn.websocket,
                        "turn.websocket",
                        table.seats[seat].player_id,
                        {"action": "continue", "table_id": table_id, "round": table.round},
                        kind="continue",
                    )
                    platform.settle()
                continue
            if state.round_over:
                raise RuntimeError(f"round {table.round} is over but was not scored or dealt")
            seat = state.turn
            player_id = table.seats[seat].player_id
            move, *then = person_moves(state, seat)
            self._client_message(
                turn.websocket,
                "turn.websocket",
                player_id,
                {
                    "action": "play",
                    "table_id": table_id,
                    "version": table.version,
                    "move": move,
                    **({"then": then} if then else {}),
                },
                kind=f"play:{(then or [move])[-1]['type']}",
            )
            actions += 1 + len(then)
            platform.settle()
            fresh = self.games.get_table(table_id)
            assert fresh is not None
            running = (
                {f"turn-{table_id}-{fresh.turn_started}"} if fresh.status == "playing" else set()
            )
            if platform.fire_timers(running):
                platform.settle()
        else:
            raise RuntimeError("the match did not end")
        final = self.games.get_table(table_id)
        assert final is not None
        if not everyone_leaves:
            # Each person looks at how it went, as the web client's result screen offers:
            # their profile and the mode's leaderboard.
            for player_id, _ in players:
                for body in ({"action": "profile"}, {"action": "leaderboard", "mode": mode}):
                    self._client_message(
                        matchmaking.websocket, "matchmaking.websocket", player_id, body
                    )
                    platform.settle()
            self._disconnect(players)
        platform.fire_timers(set())
        platform.settle()
        platform.expire_tickets()
        stored = stored_bytes()
        largest: dict[str, int] = {}
        invocations = self.meter.invocations[start_invocations:]
        for invocation in invocations:
            for table_name, kind, size in invocation.written:
                key = f"{table_name}:{kind}"
                largest[key] = max(largest.get(key, 0), size)
        return MatchRun(
            invocations=invocations,
            counts=platform.counts,
            rounds=final.round,
            actions=actions,
            seconds=time.perf_counter() - start,
            errors=list(platform.errors),
            largest_items=largest,
            stored_bytes=stored,
        )

    def _disconnect(self, players: list[tuple[str, str]]) -> None:
        import services.connect.handler as connect

        for player_id, _ in players:
            self.platform.invoke(
                "connect.disconnect",
                "$disconnect",
                connect.disconnect,
                websocket_event(
                    self._connection[player_id], "$disconnect", None, self._context[player_id]
                ),
            )
        self.platform.settle()

    def _fund(self, players: list[str], points: int) -> None:
        from services.common.dynamo_storage import DynamoStorage
        from services.common.ledger import Ledger, Posting

        ledger = Ledger(DynamoStorage.of(self.client("dynamodb"), self.settings))
        for player_id in players:
            ledger.book([Posting(player_id, "welcome", "welcome", points=points)], time.time())

    def _client_message(
        self, handler: Handler, function: str, player_id: str, body: dict[str, Any], kind: str = ""
    ) -> None:
        """A client's message through the WebSocket API, routed on its ``action``."""
        self.platform.counts.inbound_messages += 1
        route = str(body["action"])
        self.platform.invoke(
            function,
            kind or route,
            handler,
            websocket_event(
                self._connection[player_id], route, json.dumps(body), self._context[player_id]
            ),
        )

    def _table_of(self, player_id: str) -> str:
        from services.common.presence import PresenceStore

        presence = PresenceStore(self.storage)
        player = presence.get_player(player_id)
        if player is None or player.table_id is None:
            raise RuntimeError(f"{player_id} was not seated: {self.platform.errors}")
        return player.table_id


def person_moves(state: Any, seat: int) -> list[dict[str, object]]:
    """What a person sends in one ``play``, as the web client does: a draw (or pickup) alone;
    in the play phase, the melds the heuristic lays and the discard that ends the turn
    (``move`` then ``then``), at most the protocol's bound of them."""
    from services.common.protocol import MAX_THEN
    from shared_engine import action_to_wire, apply
    from shared_engine.actions import Meld
    from shared_engine.bots import heuristic_policy

    moves: list[dict[str, object]] = []
    while len(moves) <= MAX_THEN:
        action = heuristic_policy(state, seat)
        moves.append(action_to_wire(action))
        if not isinstance(action, Meld):
            break
        state = apply(state, seat, action)[0]
    return moves


def play_matches(
    count: int,
    *,
    warmup: bool = True,
    mode: str = MODE,
    stake: int = 0,
    everyone_leaves: bool = False,
) -> list[MatchRun]:
    """``count`` three-round matches, after a one-round match that warms the handlers up."""
    with patched_environment(environment()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        match = Match()
        if warmup:
            with match.account():
                match.play(0, "one_round")
        runs = []
        for number in range(1, count + 1):
            with match.account():
                runs.append(match.play(number, mode, stake, everyone_leaves=everyone_leaves))
        return runs
