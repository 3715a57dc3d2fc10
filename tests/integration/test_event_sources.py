"""Only the service that owns an event can trigger its consumers (the rules match ``source``)."""

from __future__ import annotations

import pytest

from infra import manifest
from services.common import events
from shared_engine import MatchMode
from tests.integration.harness import Harness

pytestmark = pytest.mark.integration

PLAYERS = ["s1", "s2", "s3", "s4"]


def test_an_event_from_another_source_reaches_no_consumer(harness: Harness) -> None:
    capture = harness.capture()
    seats = {str(i + 1): {"player_id": p, "name": p} for i, p in enumerate(PLAYERS)}
    detail = {"table_id": "forged", "mode": MatchMode.ONE_ROUND.value, "seats": seats}
    harness.publish("TableFormed", detail, "canasta.score")
    harness.settle()
    assert [e["source"] for e in capture.of_type("TableFormed")] == ["canasta.score"]
    assert harness.store.get_table("forged") is None, "deal never saw it"

    harness.publish("TableFormed", detail, "canasta.matchmaking")
    harness.settle()
    assert harness.table("forged").round == 1, "from matchmaking, the table is dealt"


def test_every_consumed_detail_type_has_one_producer() -> None:
    consumed = {d for types in manifest.CONSUMERS.values() for d in types}
    assert consumed <= set(events.EMITTERS)
