"""One AWS call fails, and the match still ends exactly as it does when nothing fails.

The method (docs/reliability.md):

1. A fault-free one-round match is played by four scripted clients that decide
   only from their own views (the same view gives the same move), on a deal
   fixed by ``CANASTA_SEED_SECRET``. A ``before-call`` hook on boto3's default
   session records every AWS call the handlers make, as (entry point, service,
   operation, occurrence): ``turn.websocket dynamodb.TransactWriteItems#12``.
2. The same match is played again with one of those calls failing, once:
   ``error`` raises a ``ClientError`` (throttling, an internal error) before
   the call is sent, so nothing happened; ``timeout`` raises botocore's
   ``ReadTimeoutError`` from an ``after-call`` hook, after the response
   arrived, so it happened but the caller cannot know; ``conflict`` (a
   DynamoDB write) fails it as a conflicting transaction does, before it is
   sent. Every run also has the first attempt of each write fail as a
   conflict (``local/conflicts.py``, before the hook above sees it): the
   recorded calls are the attempts that reached the embedded AWS.
3. Only the platform and the clients recover: the dispatcher redelivers failed
   SQS messages and stream records (as the event source mappings do), and a
   client whose ``play`` was answered ``internal`` (or not at all) sends the
   same message again, adopting the fresh view that comes with
   ``stale_version``.
4. The match must end as the fault-free one did: the same totals, rounds,
   versions, action log, deal, score and ledger; the replay from the ROUND
   seeds and LOG actions gives the stored final state and totals back, and
   every replayed state holds the 106 tiles; every ledger entry exists once,
   balances reconcile and the settlement is zero-sum; and every seat hears the
   match result. (The operators' replay, ``services/common/replay.py``, is held
   to the same replay in its own test.)

The hooks are registered before the handlers create their clients (each
botocore client copies its session's hooks when it is created); creating the
stack rewires the handlers (``local.aws.reset_handlers``).
"""

from __future__ import annotations

import json
import os
import random
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

import boto3
import pytest

from local import conflicts
from local.aws import reset_handlers
from tests.reliability._support import (
    Call,
    Fault,
    FaultInjector,
    FaultKind,
    Outcome,
    Played,
    Stalled,
    audit_problems,
    check_match,
    fresh_stack,
    outcome,
    start_match,
)

pytestmark = pytest.mark.integration

TABLE = "fault-82"
"""Its seeded deal plays out in 28 moves with every kind of move (draw, take the pile, the
joker button, melds, discards, going out): 37 re-runs of it take about a minute."""
PLAYERS = ["fa", "fb", "fc", "fd"]
RECOVERABLE = {"internal", "stale_version"}
SAMPLE = 60
"""Faults drawn per run from every call of the match (``make fault-sweep``: all of them)."""
SEED = int(os.environ.get("CANASTA_FAULT_SEED") or secrets.randbelow(2**32))
"""Different on every run; a failure names it: ``CANASTA_FAULT_SEED=<seed>`` replays it."""
SWEEP = os.environ.get("CANASTA_FAULT_SWEEP") == "all"


@dataclass(frozen=True)
class Run:
    outcome: Outcome
    played: Played
    calls: list[Call]
    redelivered: list[str]
    heard: list[int]
    stalled: str | None
    problems: list[str]


@pytest.fixture(scope="module")
def injector() -> Iterator[FaultInjector]:
    boto3.setup_default_session()
    session = boto3.DEFAULT_SESSION
    assert session is not None
    hooks = FaultInjector()
    hooks.install(session.events)
    reset_handlers()
    try:
        yield hooks
    finally:
        hooks.stop()
        hooks.uninstall(session.events)
        boto3.setup_default_session()
        reset_handlers()


def play(
    moto_endpoint: str,
    injector: FaultInjector,
    fault: Fault | None = None,
    env: dict[str, str] | None = None,
) -> Run:
    """One run of the match on a fresh account, checked (``stalled`` if it could not end)."""
    with fresh_stack(moto_endpoint, **(env or {})) as harness:
        injector.start(fault)
        stalled = None
        try:
            seats = start_match(harness, TABLE, PLAYERS)
            try:
                played = seats.play_out()
            except Stalled as stall:
                stalled, played = str(stall), seats.played
        finally:
            injector.stop()
        harness.settle()
        return Run(
            outcome=outcome(harness, TABLE),
            played=played,
            calls=list(injector.calls),
            redelivered=list(harness.aws.dispatcher.errors),
            heard=sorted(seats.results),
            stalled=stalled,
            problems=check_match(harness, TABLE, PLAYERS),
        )


@pytest.fixture(scope="module")
def baseline(moto_endpoint: str, injector: FaultInjector) -> Run:
    run = play(moto_endpoint, injector)
    assert run.stalled is None and run.problems == [], (run.stalled, run.problems)
    assert run.redelivered == [], run.redelivered
    assert run.played.resends == 0 and not run.played.refusals, run.played
    return run


def test_the_fault_free_match_replays_exactly(
    moto_endpoint: str, injector: FaultInjector, baseline: Run
) -> None:
    """The yardstick itself: the same deal and the same clients give the same match,
    call for call, and it exercises every path under test."""
    again = play(moto_endpoint, injector)
    assert again.outcome == baseline.outcome
    assert [c.key for c in again.calls] == [c.key for c in baseline.calls]
    paths = {c.path for c in baseline.calls}
    assert {"deal.events", "turn.websocket", "turn.events", "relay.stream"} <= paths
    assert {"score.events", "ledger.events"} <= paths
    assert any("canasta-ledger" in c.target for c in baseline.calls if c.path == "turn.websocket")
    assert baseline.heard == [1, 2, 3, 4]
    kinds = {json.loads(entry[2])["type"] for entry in baseline.outcome.log}
    assert kinds == {"draw", "take_pile", "joker_button", "meld", "discard"}, kinds


def test_a_conflict_on_every_first_write_leaves_the_match_unchanged(
    moto_endpoint: str, injector: FaultInjector, baseline: Run
) -> None:
    """Every write path of the match meets a conflicting transaction on each request's first
    attempt and goes on as if it had not: no refusal, no resend, no redelivery, and the match
    ends exactly as it does without conflicts."""
    before = conflicts.INJECTOR.injected.copy()
    run = play(moto_endpoint, injector, env={conflicts.ENV: "first"})
    injected = conflicts.INJECTOR.injected - before
    without = play(moto_endpoint, injector, env={conflicts.ENV: "off"})
    writes = {
        (c.path, c.operation, c.target)
        for c in run.calls
        if c.service == DB and c.operation in conflicts.WRITES
    }
    assert sorted(writes - set(injected)) == [], "write paths that met no conflict"
    assert {path.split(".")[0] for path, _, _ in writes} >= {
        "connect",
        "deal",
        "turn",
        "score",
        "ledger",
        "matchmaking",
    }
    assert run.stalled is None and run.problems == [], (run.stalled, run.problems)
    assert run.redelivered == [], run.redelivered
    assert run.played.resends == 0 and not run.played.refusals, run.played
    assert [c.key for c in run.calls] == [c.key for c in without.calls]
    assert run.outcome == without.outcome == baseline.outcome


def test_the_audit_replays_a_match_with_the_joker_button(
    moto_endpoint: str, injector: FaultInjector
) -> None:
    """services/common/replay.py must replay every finished table, including rounds in
    which a player pressed the joker button (JOKER-1)."""
    with fresh_stack(moto_endpoint) as harness:
        start_match(harness, TABLE, PLAYERS).play_out()
        assert audit_problems(harness, TABLE) == []


# --- the faults ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    """Which call fails: the ``nth`` (from 0; -1 the last) call of ``path`` to
    ``service.operation`` whose target contains ``about``."""

    path: str
    service: str
    operation: str
    kind: FaultKind
    nth: int = 0
    about: str = ""
    exercises: str = ""

    @property
    def id(self) -> str:
        where = f"{self.about}" if self.about else ""
        return f"{self.kind}-{self.path}-{self.operation}{where}[{self.nth}]"

    def resolve(self, calls: list[Call]) -> Fault:
        matching = [
            c
            for c in calls
            if (c.path, c.service, c.operation) == (self.path, self.service, self.operation)
            and self.about in c.target
        ]
        assert matching, f"the fault-free match makes no call like {self}"
        return Fault(matching[self.nth], self.kind)


DB, EB, WS, SCHED = "dynamodb", "eventbridge", "apigatewaymanagementapi", "scheduler"
GAMES, LEDGER, PLAYERS_TABLE = "canasta-games", "canasta-ledger", "canasta-players"

SPECS = [
    # deal: TableFormed -> the table, the seats, the round; every distinct call.
    Spec("deal.events", DB, "PutItem", "error", exercises="create the table: redelivery"),
    Spec("deal.events", DB, "PutItem", "timeout", exercises="table created, reply lost"),
    Spec("deal.events", DB, "UpdateItem", "error", about=PLAYERS_TABLE, exercises="seat_player"),
    Spec("deal.events", DB, "UpdateItem", "timeout", nth=-1, about=GAMES, exercises="seat conn"),
    Spec("deal.events", DB, "GetItem", "error", about=LEDGER, exercises="joker balances"),
    Spec("deal.events", DB, "GetItem", "error", about=GAMES, exercises="read the table"),
    Spec("deal.events", DB, "TransactWriteItems", "error", exercises="the deal not written"),
    Spec("deal.events", DB, "TransactWriteItems", "timeout", exercises="dealt, reply lost"),
    Spec("deal.events", SCHED, "CreateSchedule", "error", exercises="dealt, no timer yet"),
    Spec("deal.events", SCHED, "CreateSchedule", "timeout", exercises="timer made, reply lost"),
    Spec("deal.events", WS, "PostToConnection", "error", exercises="dealt, views not pushed"),
    Spec("deal.events", WS, "PostToConnection", "timeout", nth=-1, exercises="last view"),
    # turn, RoundStarted from the outbox: views and the first timer.
    Spec("turn.events", DB, "GetItem", "error", exercises="refresh on RoundStarted"),
    Spec("turn.events", WS, "PostToConnection", "error", nth=1, exercises="refresh push"),
    # turn, a player's move (a sample).
    Spec("turn.websocket", DB, "GetItem", "error", nth=10, exercises="read before a move"),
    Spec("turn.websocket", DB, "TransactWriteItems", "error", exercises="move not written"),
    Spec("turn.websocket", DB, "TransactWriteItems", "timeout", exercises="move written, lost"),
    Spec("turn.websocket", DB, "TransactWriteItems", "timeout", nth=-1, exercises="last move"),
    Spec("turn.websocket", DB, "GetItem", "error", about=LEDGER, exercises="joker balance"),
    Spec(
        "turn.websocket",
        DB,
        "TransactWriteItems",
        "timeout",
        about=LEDGER,
        exercises="joker move and its debit written, reply lost",
    ),
    # No move arms a timer here: the deal's, an hour away, covers every turn of the round
    # (one pending timer a table), so the deal's CreateSchedule faults above are the ones.
    Spec("turn.websocket", WS, "PostToConnection", "error", nth=1, exercises="next seat's view"),
    Spec("turn.websocket", WS, "PostToConnection", "timeout", nth=3, exercises="a bystander"),
    # relay: the outbox to the bus.
    Spec("relay.stream", EB, "PutEvents", "error", about="RoundStarted", exercises="retry"),
    Spec("relay.stream", EB, "PutEvents", "timeout", about="RoundEnded", exercises="twice"),
    Spec("relay.stream", EB, "PutEvents", "timeout", about="MatchEnded", exercises="twice"),
    Spec("relay.stream", EB, "PutEvents", "error", about="MatchEnded", exercises="retry"),
    # score: RoundEnded -> the score, the results.
    Spec("score.events", DB, "GetItem", "error", exercises="read the table"),
    Spec("score.events", DB, "GetItem", "error", about=PLAYERS_TABLE, exercises="who it frees"),
    Spec("score.events", DB, "TransactWriteItems", "error", exercises="score not written"),
    Spec("score.events", DB, "TransactWriteItems", "timeout", exercises="scored, reply lost"),
    Spec(
        "score.events",
        DB,
        "TransactWriteItems",
        "timeout",
        nth=-1,
        about=PLAYERS_TABLE,
        exercises="the match ended and its players freed, reply lost",
    ),
    Spec("score.events", WS, "PostToConnection", "error", exercises="scored, first push fails"),
    Spec("score.events", WS, "PostToConnection", "timeout", nth=-1, exercises="last result"),
    # ledger: MatchEnded -> the settlement.
    Spec("ledger.events", DB, "TransactWriteItems", "error", exercises="not booked"),
    Spec("ledger.events", DB, "TransactWriteItems", "timeout", exercises="booked, reply lost"),
    Spec("ledger.events", EB, "PutEvents", "error", exercises="booked, LedgerSettled lost"),
    Spec("ledger.events", EB, "PutEvents", "timeout", exercises="LedgerSettled twice"),
    # matchmaking: MatchEnded -> the release the score's write made, asked again: no change.
    Spec("matchmaking.events", DB, "UpdateItem", "timeout", exercises="release, reply lost"),
]


def differences(expected: Outcome, actual: Outcome) -> list[str]:
    found = []
    for f in fields(Outcome):
        want, got = getattr(expected, f.name), getattr(actual, f.name)
        if want != got:
            found.append(f"{f.name}: expected {_short(want)}, got {_short(got)}")
    return found


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 300 else text[:300] + "…"


@pytest.mark.parametrize("spec", SPECS, ids=[s.id for s in SPECS])
def test_one_failed_call_leaves_the_match_unchanged(
    spec: Spec, moto_endpoint: str, injector: FaultInjector, baseline: Run
) -> None:
    fault = spec.resolve(baseline.calls)
    check_fault(
        fault,
        name=spec.id,
        exercises=spec.exercises,
        moto_endpoint=moto_endpoint,
        injector=injector,
        baseline=baseline,
    )


def every_fault(calls: list[Call]) -> list[Fault]:
    """Each call of the fault-free match failing, every way it can: the whole space."""
    kinds: tuple[FaultKind, ...] = ("error", "timeout", "conflict")
    return [Fault(call, kind) for call in calls for kind in kinds if _can(call, kind)]


def _can(call: Call, kind: FaultKind) -> bool:
    """Only a write meets another transaction."""
    return kind != "conflict" or (call.service == DB and call.operation in conflicts.WRITES)


def drawn(calls: list[Call]) -> list[Fault]:
    faults = every_fault(calls)
    if SWEEP:
        return faults
    return random.Random(SEED).sample(faults, min(SAMPLE, len(faults)))


def test_the_sample_is_drawn_from_every_call_and_replays_from_its_seed(baseline: Run) -> None:
    print(f"fault sample: CANASTA_FAULT_SEED={SEED}")
    faults = every_fault(baseline.calls)
    assert {f.call.path.split(".")[0] for f in faults} >= {
        "connect",
        "deal",
        "turn",
        "relay",
        "score",
        "ledger",
        "matchmaking",
    }
    assert {f.kind for f in faults} == {"error", "timeout", "conflict"}
    assert drawn(baseline.calls) == drawn(baseline.calls)
    assert len(drawn(baseline.calls)) == (len(faults) if SWEEP else SAMPLE)


@pytest.mark.parametrize("index", range(SAMPLE))
def test_a_seeded_sample_of_every_call_failing_leaves_the_match_unchanged(
    index: int, moto_endpoint: str, injector: FaultInjector, baseline: Run
) -> None:
    """``make fault-sweep`` runs every fault of the match instead (CANASTA_FAULT_SWEEP=all)."""
    faults = drawn(baseline.calls)
    chosen = faults[index::SAMPLE]
    for fault in chosen:
        check_fault(
            fault,
            name=f"seed {SEED} #{index}",
            exercises=fault.kind,
            moto_endpoint=moto_endpoint,
            injector=injector,
            baseline=baseline,
        )


def check_fault(
    fault: Fault,
    *,
    name: str,
    exercises: str,
    moto_endpoint: str,
    injector: FaultInjector,
    baseline: Run,
) -> None:
    """Play the match with ``fault``; it must end exactly as the fault-free one did."""
    replay = f" [replay: CANASTA_FAULT_SEED={SEED}]" if name.startswith("seed") else ""
    run = play(moto_endpoint, injector, fault)
    assert injector.fired, f"{fault} never fired{replay}"
    fired = f"{injector.fired[0]}{replay}"
    print(
        f"{name} ({exercises}): {fired}; redelivered {len(run.redelivered)}, "
        f"resent {run.played.resends}, refusals {dict(run.played.refusals)}"
    )
    stored = run.problems + differences(baseline.outcome, run.outcome)
    if run.stalled is not None and run.outcome.status == "finished" and not stored:
        pytest.fail(
            f"{fired}: the match is over in the store exactly as in the fault-free run "
            f"(score, ledger), but the clients never heard: {run.stalled}"
        )
    in_store = f"; in the store: {'; '.join(stored)}" if stored else ""
    assert run.stalled is None, f"{fired}: the clients could not finish: {run.stalled}{in_store}"
    assert run.played.crashes == [], fired
    assert set(run.played.refusals) <= RECOVERABLE, (fired, run.played.refusals)
    assert stored == [], fired
    assert run.heard == [1, 2, 3, 4], f"{fired}: only seats {run.heard} heard the match result"
