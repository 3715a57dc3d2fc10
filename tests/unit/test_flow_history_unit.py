"""The matchmaking ticket's worst-case history, counted from the state machine's definition:
a ticket's execution must stay under Step Functions' 25,000 events however long it waits."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from services.matchmaking import flow
from services.matchmaking.flow import HISTORY_LIMIT, Loops, history_events

pytestmark = pytest.mark.unit

TRY_MATCH = 2 + 3 * 4
"""TryMatch entered and exited, 3 attempts of scheduled, started, submitted and ended."""
ABANDON = 2 + 3 * 4
"""Abandon, every attempt of its send failing but the last."""


def test_a_ticket_records_the_longest_way_out_whatever_its_wait() -> None:
    """No state is passed twice: TryMatch failing every attempt, then Abandon's attempts."""
    assert history_events() == 2 + TRY_MATCH + ABANDON
    assert history_events() < HISTORY_LIMIT


def _changed(monkeypatch: pytest.MonkeyPatch, change: Callable[[dict[str, Any]], None]) -> None:
    original = flow.definition

    def changed(queue_url: str, partition: str = "aws") -> dict[str, Any]:
        states = copy.deepcopy(original(queue_url, partition))
        change(states["States"])
        return states

    monkeypatch.setattr(flow, "definition", changed)


def _one_more_retry(states: dict[str, Any]) -> None:
    states["TryMatch"]["Retry"][0]["MaxAttempts"] += 1


def _a_longer_abandon(states: dict[str, Any]) -> None:
    del states["Abandon"]["End"]
    states["Abandon"]["Next"] = "Told"
    states["Told"] = {"Type": "Pass", "End": True}


@pytest.mark.parametrize(
    ("change", "more"),
    [
        pytest.param(_one_more_retry, 4, id="a retry more: one attempt's four events"),
        pytest.param(_a_longer_abandon, 2, id="a longer way out: its state's two"),
    ],
)
def test_a_change_to_the_definition_changes_the_count(
    monkeypatch: pytest.MonkeyPatch, change: Callable[[dict[str, Any]], None], more: int
) -> None:
    before = history_events()
    _changed(monkeypatch, change)
    assert history_events() == before + more


def test_a_definition_that_loops_has_no_bound() -> None:
    """A loop back to TryMatch (a ticket that polls) makes the count depend on the wait."""

    def polls(states: dict[str, Any]) -> None:
        del states["TryMatch"]["End"]
        states["TryMatch"]["Next"] = "Wait"
        states["Wait"] = {"Type": "Wait", "Seconds": 10, "Next": "TryMatch"}

    with pytest.MonkeyPatch.context() as monkeypatch:
        _changed(monkeypatch, polls)
        with pytest.raises(Loops, match="TryMatch -> Wait -> TryMatch"):
            history_events()
