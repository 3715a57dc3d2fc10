"""A turn consumer's batch of ten whole rounds keeps inside its timeout.

Ten tables whose every player dropped at once (a network blip) send the turn
consumer ten ``PlayerDisconnected`` records, each of which auto-plays its
table's whole round: about 4 s apiece at the turn functions' memory, 40 s for
the batch, past the 30 s timeout. The batch starts a record only while one
more fits (``services.common.runtime.process_batch``), hands the others back
unstarted, and their redelivery finishes them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from infra.manifest import FUNCTIONS
from local.dispatcher import LambdaContext
from services.common.runtime import BATCH_RESPONSE_MARGIN_MS
from services.common.settings import Settings
from services.turn import handler as turn_handler
from shared_engine import unpack
from tests.integration.harness import Harness, sqs_event

pytestmark = pytest.mark.integration

TABLES = [f"blip{n}" for n in range(10)]
CONSUMER = "turn-events"
SPEC = FUNCTIONS[CONSUMER]


@dataclass
class WorstCaseInvocation(LambdaContext):
    """Lambda's context for a batch whose every record takes its function's worst case.

    Here a round is played faster than at the turn functions' share of a vCPU,
    so each record is charged the manifest's ``record_seconds`` (or what it
    really took, if more): the time left is what the same batch would have
    left in AWS at its worst, and the test does not depend on this machine's speed.
    """

    record_ms: float = 0.0
    spent_ms: float = 0.0
    records: int = 0

    @classmethod
    def of_spec(cls, key: str) -> WorstCaseInvocation:
        spec = FUNCTIONS[key]
        assert spec.record_seconds is not None
        return cls(key, spec.memory_mb, spec.timeout_seconds, record_ms=spec.record_seconds * 1000)

    @property
    def timeout_ms(self) -> float:
        return self.timeout_seconds * 1000

    def get_remaining_time_in_millis(self) -> int:
        return int(self.timeout_ms - self.spent_ms)

    def timed(self, handle: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
        """``handle``, each record it runs charged to this invocation."""

        def run(body: dict[str, Any]) -> None:
            began = time.monotonic()
            try:
                handle(body)
            finally:
                self.records += 1
                self.spent_ms += max(self.record_ms, (time.monotonic() - began) * 1000)

        return run


def _unwatched_tables(harness: Harness) -> dict[str, dict[str, Any]]:
    """Ten tables whose four players all dropped: table → its last ``PlayerDisconnected``
    as the turn consumer's queue receives it (not yet delivered)."""
    connections = {t: harness.start_table(t, [f"{t}p{s}" for s in range(4)]) for t in TABLES}
    capture = harness.capture()
    for seats in connections.values():
        for connection in seats.values():
            harness.disconnect(connection)
    return {e["detail"]["table_id"]: e for e in capture.of_type("PlayerDisconnected")}


def _round_over(harness: Harness, table_id: str) -> bool:
    return unpack(harness.table(table_id).state or b"").round_over


def _deliver(
    records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> tuple[set[str], WorstCaseInvocation]:
    """One invocation of the real turn consumer with ``records``: the ids it handed back."""
    invocation = WorstCaseInvocation.of_spec(CONSUMER)
    monkeypatch.setattr(turn_handler, "EVENTS", invocation.timed(turn_handler.EVENTS))
    began = time.monotonic()
    result = turn_handler.events({"Records": records}, invocation)
    assert time.monotonic() - began < SPEC.timeout_seconds, "inside the real timeout too"
    assert invocation.spent_ms + BATCH_RESPONSE_MARGIN_MS <= invocation.timeout_ms
    return {f["itemIdentifier"] for f in result["batchItemFailures"]}, invocation


def test_a_batch_of_ten_whole_rounds_ends_before_its_deadline_and_loses_none(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Settings().record_seconds == SPEC.record_seconds, "the local stack's is the manifest's"
    events = _unwatched_tables(harness)
    assert sorted(events) == TABLES
    batch = sqs_event(*(events[t] for t in TABLES))["Records"]
    table_of = {r["messageId"]: t for r, t in zip(batch, TABLES, strict=True)}
    before = {t: harness.history(t) for t in TABLES}

    failed, invocation = _deliver(batch, monkeypatch)

    done = {t for m, t in table_of.items() if m not in failed}
    assert done and failed, "ten worst cases do not fit one invocation: some wait"
    assert invocation.records == len(done), "a record handed back never started"
    for table_id in TABLES:
        if table_id in done:
            assert _round_over(harness, table_id), f"{table_id}: its whole round is played"
        else:
            assert harness.history(table_id) == before[table_id], f"{table_id}: untouched"
    finished = {t: harness.history(t) for t in done}

    waiting = [r for r in batch if r["messageId"] in failed]
    for _ in TABLES:
        if not waiting:
            break
        again, _invocation = _deliver(waiting, monkeypatch)
        assert len(again) < len(waiting), "each redelivery finishes some"
        waiting = [r for r in waiting if r["messageId"] in again]
    assert waiting == []
    assert all(_round_over(harness, t) for t in TABLES), "no record lost"
    assert {t: harness.history(t) for t in done} == finished, "none played twice"
