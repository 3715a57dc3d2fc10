"""The reliability tier's tools: a fresh account per run, fault injection through botocore's
public event system, scripted players that decide only from their own views, and the checks
every finished match must pass (replay, tiles, ledger).

Everything runs the real handlers on the embedded AWS (``local.aws``), driven the way API
Gateway and the event source mappings drive them (``tests.integration.harness``).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from botocore.exceptions import ClientError, ReadTimeoutError

from local.aws import HANDLER_MODULES, LocalAws, reset
from local.conflicts import answer, request_of
from local.iam import current_entry_point
from services.common.ledger import Ledger, Posting
from services.common.replay import rounds_of, verify
from shared_engine import (
    MatchMode,
    action_to_wire,
    apply,
    parse_action,
    score_round,
    start_round,
    unpack,
)
from shared_engine.actions import JokerButton
from shared_engine.bots import heuristic_policy
from shared_engine.observation import state_from_view
from shared_engine.state import RoundState, Variant, to_json, with_account_jokers
from shared_engine.tiles import FULL_SET
from shared_engine.view import PlayerView
from tests.integration.harness import Harness, Inbox, served_issuer
from tests.integration.history import moves_of

SEED_SECRET = "reliability-rehearsal-secret"
"""CANASTA_SEED_SECRET of every run: round seeds are HMAC(secret, table:round), so every
run of the same table deals the same tiles."""
TURN_SECONDS = 3600
"""No turn timer fires during a run, so no turn is ever auto-played behind a slow client."""
WELCOME_POINTS = 10_000
WELCOME_JOKERS = 1
"""Each player may press the joker button once (JOKER-1): the move's ledger debit runs too."""


# --- a fresh account ---------------------------------------------------------------------


@contextmanager
def fresh_stack(moto_url: str, **env: str) -> Iterator[Harness]:
    """Empty moto, every resource created again, handlers rewired from the environment."""
    reset(moto_url)
    saved = dict(os.environ)
    os.environ.update({"CANASTA_SEED_SECRET": SEED_SECRET, **env})
    inbox = Inbox()
    aws = LocalAws(moto_url, inbox.deliver, served_issuer(), turn_seconds=TURN_SECONDS)
    try:
        yield Harness(aws, inbox)
        aws.iam.assert_none_denied()
    finally:
        aws.close()
        os.environ.clear()
        os.environ.update(saved)


def ledger_of(harness: Harness) -> Ledger:
    return Ledger(harness.storage)


def fund(harness: Harness, players: list[str]) -> None:
    """The welcome booking each player gets at sign-in (points and one spare joker)."""
    book = ledger_of(harness)
    for player in players:
        book.book(
            [Posting(player, "welcome", "welcome", points=WELCOME_POINTS, jokers=WELCOME_JOKERS)],
            time.time(),
        )


def accounts(harness: Harness) -> list[str]:
    items = harness.aws.client("dynamodb").scan(
        TableName=harness.aws.settings.ledger_table, ConsistentRead=True
    )["Items"]
    return sorted(i["pk"]["S"].removeprefix("ACCOUNT#") for i in items if i["sk"]["S"] == "BALANCE")


# --- fault injection -----------------------------------------------------------------------

_HANDLER_FILES = {
    importlib.import_module(name).__file__: name.split(".")[1] for name in HANDLER_MODULES
}


def entry_point() -> str | None:
    """The Lambda entry point on the current stack (``turn.websocket``), None outside one.

    The outermost frame in a ``services/<name>/handler.py`` is the function the
    platform invoked; calls made by the dispatcher, the gateway or a test are
    not inside one. Off the handler's own thread, its context names it.
    """
    frame = sys._getframe(2)
    found = None
    while frame is not None:
        service = _HANDLER_FILES.get(frame.f_code.co_filename)
        if service is not None:
            found = f"{service}.{frame.f_code.co_name}"
        frame = frame.f_back  # type: ignore[assignment]
    if found is None and (entered := current_entry_point()) is not None:
        # A handler's own worker thread (its concurrent pushes) runs in a copy of its context.
        _, service, _, function = entered.split(".")
        found = f"{service}.{function}"
    return found


def _target(service: str, operation: str, params: dict[str, Any]) -> str:
    """What a call is about, for reading the recording: tables, event types, a schedule."""
    try:
        body = json.loads(params.get("body") or b"{}")
    except ValueError:
        body = {}
    if service == "dynamodb":
        if "TransactItems" in body:
            tables = [next(iter(i.values()))["TableName"] for i in body["TransactItems"]]
            return "+".join(dict.fromkeys(tables))
        return str(body.get("TableName", ""))
    if service == "eventbridge":
        return ",".join(e.get("DetailType", "") for e in body.get("Entries", []))
    if service == "apigatewaymanagementapi":
        return "@connections"
    if service in ("scheduler", "sqs"):
        return "turn timer"
    return ""


@dataclass(frozen=True)
class Call:
    """One AWS call a handler made: the ``occurrence``-th of its (path, service, operation)."""

    path: str
    service: str
    operation: str
    occurrence: int
    target: str

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.path, self.service, self.operation, self.occurrence)

    def __str__(self) -> str:
        return f"{self.path} {self.service}.{self.operation}#{self.occurrence} ({self.target})"


FaultKind = Literal["error", "timeout", "conflict"]
ERROR_CODES = {
    "dynamodb": "ProvisionedThroughputExceededException",
    "eventbridge": "InternalException",
    "scheduler": "ThrottlingException",
    "sqs": "RequestThrottled",
    "apigatewaymanagementapi": "LimitExceededException",
}


@dataclass(frozen=True)
class Fault:
    """Make one call fail: ``error`` raises before it is sent (nothing happened);
    ``timeout`` raises ``ReadTimeoutError`` after its response arrived (it happened,
    the caller cannot know); ``conflict`` (a DynamoDB write) answers before it is sent as
    DynamoDB does under a conflicting transaction (nothing happened, the storage may send
    it again)."""

    call: Call
    kind: FaultKind


class FaultInjector:
    """Hooks on a botocore session: records every handler's calls and fails one of them.

    Registered on boto3's default session before the handlers create their
    clients (each client copies its session's hooks when it is created).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[tuple[str, str, str]] = Counter()
        self.calls: list[Call] = []
        self.fault: Fault | None = None
        self.fired: list[str] = []
        self.active = False

    def install(self, events: Any) -> None:
        events.register("before-call", self._before, unique_id="reliability-before")
        events.register("after-call", self._after, unique_id="reliability-after")

    def uninstall(self, events: Any) -> None:
        events.unregister("before-call", unique_id="reliability-before")
        events.unregister("after-call", unique_id="reliability-after")

    def start(self, fault: Fault | None = None) -> None:
        with self._lock:
            self._counts.clear()
            self.calls = []
            self.fault = fault
            self.fired = []
            self.active = True

    def stop(self) -> None:
        self.active = False

    def _before(
        self, event_name: str, params: dict[str, Any], context: dict[str, Any], **_: Any
    ) -> None:
        if not self.active:
            return
        path = entry_point()
        if path is None:
            return
        _, service, operation = event_name.split(".", 2)
        with self._lock:
            self._counts[(path, service, operation)] += 1
            call = Call(
                path,
                service,
                operation,
                self._counts[(path, service, operation)],
                _target(service, operation, params),
            )
            self.calls.append(call)
            context["reliability_call"] = call
            fire = self._due(call, "error")
            conflict = self._due(call, "conflict")
        if conflict:
            raise ClientError(answer(operation, request_of(params))[1], operation)
        if fire:
            code = ERROR_CODES.get(service, "InternalServerError")
            raise ClientError(
                {
                    "Error": {"Code": code, "Message": "injected before the call"},
                    "ResponseMetadata": {"HTTPStatusCode": 500},
                },
                operation,
            )

    def _after(
        self, event_name: str, http_response: Any, context: dict[str, Any], **_: Any
    ) -> None:
        call = context.get("reliability_call")
        if call is None or not self.active:
            return
        with self._lock:
            fire = self._due(call, "timeout")
        if fire:
            status = getattr(http_response, "status_code", 0)
            self.fired[-1] += f" (the call had answered HTTP {status})"
            raise ReadTimeoutError(endpoint_url=f"injected: {call}")

    def _due(self, call: Call, kind: FaultKind) -> bool:
        fault = self.fault
        if fault is None or fault.kind != kind or self.fired or call.key != fault.call.key:
            return False
        self.fired.append(f"{kind} on {call}")
        return True


# --- scripted players --------------------------------------------------------------------


JOKER_BUTTON = {"type": "joker_button"}


def choose(view_message: dict[str, Any]) -> dict[str, Any]:
    """The same view, the same move: the joker button whenever the view offers it (so the
    move's ledger debit runs), else the engine's heuristic bot on the seat's own view."""
    if JOKER_BUTTON in view_message["view"]["legal_actions"]:
        return dict(JOKER_BUTTON)
    view = PlayerView.model_validate(view_message["view"])
    return action_to_wire(heuristic_policy(state_from_view(view), view.seat))


def views_in(message: dict[str, Any]) -> dict[str, Any] | None:
    """The view a message carries: a view, or the fresh view of a ``stale_version`` error."""
    if message.get("type") == "view":
        return message
    if message.get("type") == "error" and isinstance(message.get("view"), dict):
        return message["view"]  # type: ignore[no-any-return]
    return None


class Stalled(AssertionError):
    """Nobody could move and the platform had nothing left to deliver."""


@dataclass
class Played:
    """What the scripted players did and heard."""

    moves: int = 0
    resends: int = 0
    refusals: Counter[str] = field(default_factory=Counter)
    crashes: list[str] = field(default_factory=list)


class Seats:
    """Four scripted clients on the harness's connections, each with its latest view."""

    def __init__(self, harness: Harness, table_id: str, conns: dict[int, str]) -> None:
        self.harness = harness
        self.table_id = table_id
        self.conns = conns
        self._seen = dict.fromkeys(conns, 0)
        self.latest: dict[int, dict[str, Any] | None] = dict.fromkeys(conns)
        self.answered = dict.fromkeys(conns, -1)
        self.results: dict[int, dict[str, Any]] = {}
        self.played = Played()

    def read(self) -> None:
        """Take in what each connection received since last time."""
        for seat, conn in self.conns.items():
            received = self.harness.received(conn)
            for message in received[self._seen[seat] :]:
                view = views_in(message)
                latest = self.latest[seat]
                if view is not None and (latest is None or view["version"] > latest["version"]):
                    self.latest[seat] = view
                if message.get("type") == "match_result":
                    self.results[seat] = message
            self._seen[seat] = len(received)

    def mover(self) -> tuple[int, dict[str, Any]] | None:
        """The seat whose latest view says it is to play, on a version it has not answered."""
        for seat in self.conns:
            view = self.latest[seat]
            if (
                view is not None
                and view["match"]["status"] == "playing"
                and view["view"]["turn"] == seat
                and view["view"]["legal_actions"]
                and view["version"] > self.answered[seat]
            ):
                return seat, view
        return None

    def send(self, seat: int, message: dict[str, Any] | str) -> list[dict[str, Any]]:
        """Send as API Gateway would; the replies this connection got (a raise is recorded)."""
        conn = self.conns[seat]
        before = len(self.harness.received(conn))
        try:
            response = self.harness.send(conn, message)
            if response != {"statusCode": 200}:
                self.played.crashes.append(f"seat {seat}: handler answered {response}")
        except Exception as exc:
            self.played.crashes.append(f"seat {seat}: handler raised {exc!r}")
        return self.harness.received(conn)[before:]

    def play(self, seat: int, view: dict[str, Any], max_resends: int = 3) -> None:
        """One move; resent as it was while it fails with no answer or ``internal``."""
        message = {
            "action": "play",
            "table_id": self.table_id,
            "version": view["version"],
            "move": choose(view),
        }
        self.answered[seat] = view["version"]
        self.played.moves += 1
        for attempt in range(max_resends + 1):
            replies = self.send(seat, message)
            errors = [r["code"] for r in replies if r.get("type") == "error"]
            for code in errors:
                self.played.refusals[code] += 1
            if replies and "internal" not in errors:
                return
            if attempt < max_resends:
                self.played.resends += 1
        raise AssertionError(f"seat {seat}'s move {message} kept failing")

    def play_out(self, limit: int = 2000, on_idle: Callable[[], None] | None = None) -> Played:
        """Play until every seat has heard the match result; ``Stalled`` if nobody can."""
        idle = 0
        for _ in range(limit):
            self.read()
            if len(self.results) == len(self.conns):
                self.harness.settle()
                return self.played
            found = self.mover()
            if found is None:
                if idle >= 2:
                    raise Stalled(self.describe_stall())
                self.harness.settle()
                if on_idle is not None:
                    on_idle()
                idle += 1
                continue
            idle = 0
            self.play(*found)
        raise AssertionError(f"no end after {limit} steps")

    def describe_stall(self) -> str:
        table = self.harness.table(self.table_id)
        seen = {s: (v["version"] if v else None) for s, v in self.latest.items()}
        turn = unpack(table.state).turn if table.state else None
        timer = f"turn-{self.table_id}-{table.turn_started}"
        timed = "a turn timer" if timer in self.harness.schedules() else "no turn timer"
        where = f"turn of seat {turn}, {timed} for it" if table.status == "playing" else ""
        return (
            f"stalled: table at version {table.version} (status {table.status}"
            f"{', ' + where if where else ''}); each seat's latest view: {seen}; "
            f"seats that heard the match result: {sorted(self.results)}"
        )


CONNECT_ATTEMPTS = 3


def connect(harness: Harness, player: str) -> str:
    """Connect as a client does: a failed ``$connect`` (API Gateway answers 500) is retried."""
    for attempt in range(CONNECT_ATTEMPTS):
        try:
            connection = harness.connect(player)
        except Exception:
            if attempt == CONNECT_ATTEMPTS - 1:
                raise
            continue
        assert connection is not None
        return connection
    raise AssertionError("unreachable")


def start_match(harness: Harness, table_id: str, players: list[str]) -> Seats:
    """Fund and connect the players, form a one-round table, let the platform deal."""
    fund(harness, players)
    conns = {seat: connect(harness, p) for seat, p in enumerate(players, start=1)}
    harness.form_table(table_id, players, MatchMode.ONE_ROUND)
    seats = Seats(harness, table_id, conns)
    seats.read()
    return seats


# --- what a match leaves behind, and the checks on it ----------------------------------


@dataclass(frozen=True)
class Outcome:
    """Everything that must be identical between two runs of the same match."""

    status: str
    version: int
    rounds: int
    totals: tuple[int, int]
    log: tuple[tuple[str, int, str, bool], ...]
    deals: tuple[tuple[str, str, str, int], ...]
    scores: tuple[tuple[str, str], ...]
    ledger: tuple[tuple[str, str, int, int, str], ...]
    balances: tuple[tuple[str, int, int], ...]


def outcome(harness: Harness, table_id: str) -> Outcome:
    table = harness.table(table_id)
    items = harness.history(table_id)
    book = ledger_of(harness)
    entries: list[tuple[str, str, int, int, str]] = []
    balances: list[tuple[str, int, int]] = []
    for account in accounts(harness):
        for e in book.entries(account):
            entries.append(
                (
                    account,
                    str(e["sk"]),
                    int(e["points"]),
                    int(e["jokers"]),
                    str(e["purpose"]),
                )
            )
        balance = book.balance(account)
        balances.append((account, balance.points, balance.jokers))
    return Outcome(
        status=table.status,
        version=table.version,
        rounds=table.round,
        totals=table.totals,
        log=tuple(
            (f"{m.round}#{m.ply}", m.seat, json.dumps(m.action, sort_keys=True), m.auto)
            for m in moves_of(items)
        ),
        deals=tuple(
            (i["sk"]["S"], i["seed"]["S"], i["commitment"]["S"], int(i["dealer"]["N"]))
            for i in items
            if i["sk"]["S"].startswith("ROUND#")
        ),
        scores=tuple(
            (i["sk"]["S"], i["result"]["S"]) for i in items if i["sk"]["S"].startswith("SCORE#")
        ),
        ledger=tuple(sorted(entries)),
        balances=tuple(balances),
    )


def tiles_of(state: RoundState) -> Counter[int]:
    tiles: Counter[int] = Counter(state.stock)
    tiles.update(state.discard)
    for hand in state.hands:
        tiles.update(hand)
    for team in state.melds:
        for meld in team:
            tiles.update(meld)
    for team in state.bonus_threes:
        tiles.update(team)
    return tiles


def replayed_rounds(items: list[dict[str, Any]], *, variant: Variant) -> list[list[RoundState]]:
    """Every state of every round, rebuilt from the ROUND seeds and the LOG actions alone.

    A logged joker button proves the seat had a spare joker then: the replay
    grants it one before applying the press (the balance is the ledger's, not
    the log's).
    """
    by_key = {i["sk"]["S"]: i for i in items}
    rounds: list[list[RoundState]] = []
    totals = (0, 0)
    for key in sorted(k for k in by_key if k.startswith("ROUND#")):
        number = int(key.split("#")[1])
        state = start_round(
            by_key[key]["seed"]["S"],
            variant=variant,
            dealer=int(by_key[key]["dealer"]["N"]),
            match_scores=totals,
        )
        states = [state]
        for move in moves_of(items, number):
            action = parse_action(move.action)
            if isinstance(action, JokerButton):
                state = with_account_jokers(state, move.seat, 1)
            state, _ = apply(state, move.seat, action)
            states.append(state)
        if state.round_over:
            a, b = score_round(state)
            totals = (totals[0] + a.total, totals[1] + b.total)
        rounds.append(states)
    return rounds


def audit_problems(harness: Harness, table_id: str) -> list[str]:
    """What the replay (``services/common/replay.py``, ``python -m ops match``) finds wrong:
    every commitment, logged move, score, the live state and the totals are checked."""
    table = harness.table(table_id)
    played = rounds_of(harness.store.history.records(table_id))
    return verify(
        played,
        variant=table.variant,
        live_state=table.state,
        live_round=table.round,
        totals=table.totals,
    ).mismatches


def _comparable(state: RoundState) -> dict[str, Any]:
    """A state as JSON, without the account balances the deal copied in (the ledger's)."""
    data = to_json(state)
    data.pop("account_jokers", None)
    return data


def check_match(harness: Harness, table_id: str, players: list[str]) -> list[str]:
    """What is wrong with a finished match (empty when nothing is)."""
    problems: list[str] = []
    table = harness.table(table_id)
    items = harness.history(table_id)
    if table.status != "finished":
        problems.append(f"status {table.status}, not finished")

    # Every state of the round holds the 106 tiles, each exactly once.
    full = Counter(FULL_SET)
    rounds = replayed_rounds(items, variant=table.variant)
    states = [state for states_of_round in rounds for state in states_of_round]
    bad = [i for i, s in enumerate(states) if tiles_of(s) != full]
    if bad:
        problems.append(f"{len(bad)} replayed states do not hold the 106 tiles (first: #{bad[0]})")
    if (
        table.state is not None
        and states
        and _comparable(states[-1]) != _comparable(unpack(table.state))
    ):
        problems.append("the replayed final state differs from the stored one")

    # The replay's scores add up to the stored match totals.
    scored = [score_round(r[-1]) for r in rounds if r[-1].round_over]
    replayed_totals = (sum(a.total for a, _ in scored), sum(b.total for _, b in scored))
    if replayed_totals != table.totals:
        problems.append(f"replayed totals {replayed_totals} != stored {table.totals}")

    # Every logged move is one action; versions applied = moves (one write per player move,
    # several moves a write when turns are auto-played, which this tier never triggers).
    logs = moves_of(items)
    if any(m.auto for m in logs):
        problems.append("a turn was auto-played although every seat was connected")
    expected_version = len(logs) + 2 * table.round
    if table.version != expected_version:
        problems.append(
            f"version {table.version} != {len(logs)} moves + {table.round} deals + scores"
        )

    # The ledger: every booking exactly once, balances equal their entries, zero-sum.
    book = ledger_of(harness)
    for account in accounts(harness):
        stored, summed_entries = book.reconcile(account)
        if stored != summed_entries:
            problems.append(f"{account}: balance {stored} but entries sum to {summed_entries}")
    settlements: list[int] = []
    jokers_booked = 0
    for player in players:
        for entry in book.entries(player):
            key = str(entry["sk"])
            if key == f"ENTRY#{table_id}:settlement:{players.index(player) + 1}":
                settlements.append(int(entry["points"]))
            elif key.startswith(f"ENTRY#{table_id}:joker:"):
                jokers_booked += 1
    if len(settlements) != len(players):
        problems.append(f"{len(settlements)} settlement entries, not {len(players)}")
    if sum(settlements) != 0:
        problems.append(f"the settlement is not zero-sum: {settlements}")
    pressed = sum(1 for m in logs if m.action["type"] == "joker_button")
    if jokers_booked != pressed:
        problems.append(f"{pressed} joker buttons pressed but {jokers_booked} debits booked")
    return problems
