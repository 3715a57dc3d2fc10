"""The matchmaking ticket's worst-case history, counted from the state machine's definition:
the HISTORY deploy rule and the Config's bound rest on this count."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from services.matchmaking import flow
from services.matchmaking.flow import HISTORY_LIMIT, history_events

pytestmark = pytest.mark.unit

PASS = 14 + 2 + 2
"""TryMatch (entered, exited, 3 attempts of scheduled, started, submitted, ended), Outcome
and Wait (entered, exited)."""
LAST = 14 + 6 + 2
"""TryMatch failing every attempt, Abandon (one attempt), Expired."""


@pytest.mark.parametrize(
    ("queue_seconds", "poll_seconds", "passes"),
    [(120, 10, 13), (125, 10, 14), (90, 5, 19), (10, 60, 2), (3600, 1, 3601)],
)
def test_a_ticket_counts_every_pass_until_expiry_and_the_longest_way_out(
    queue_seconds: int, poll_seconds: int, passes: int
) -> None:
    expected = 2 + (passes - 1) * PASS + LAST
    assert history_events(queue_seconds, poll_seconds) == expected


def test_the_bounds_of_the_settings_reach_past_the_limit() -> None:
    assert history_events(3600, 3) < HISTORY_LIMIT <= history_events(3600, 2)


def _with(change: Any) -> Any:
    """``flow.definition`` with ``change`` applied to its result."""
    original = flow.definition

    def changed(queue_url: str, partition: str = "aws") -> dict[str, Any]:
        states = copy.deepcopy(original(queue_url, partition))
        change(states["States"])
        return states

    return changed


def test_a_state_added_to_the_loop_counts_on_every_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    before = history_events(120, 10)

    def through_a_pass_state(states: dict[str, Any]) -> None:
        states["Wait"]["Next"] = "Again"
        states["Again"] = {"Type": "Pass", "Next": "TryMatch"}

    monkeypatch.setattr(flow, "definition", _with(through_a_pass_state))
    assert history_events(120, 10) == before + 12 * 2


def test_more_retries_count_on_every_pass_and_on_the_way_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = history_events(120, 10)

    def one_more_retry(states: dict[str, Any]) -> None:
        states["TryMatch"]["Retry"][0]["MaxAttempts"] += 1

    monkeypatch.setattr(flow, "definition", _with(one_more_retry))
    assert history_events(120, 10) == before + 13 * 4


def test_a_longer_way_out_counts_once(monkeypatch: pytest.MonkeyPatch) -> None:
    before = history_events(120, 10)

    def a_longer_abandon(states: dict[str, Any]) -> None:
        states["Abandon"]["Next"] = "Told"
        states["Told"] = {"Type": "Pass", "Next": "Expired"}

    monkeypatch.setattr(flow, "definition", _with(a_longer_abandon))
    assert history_events(120, 10) == before + 2
