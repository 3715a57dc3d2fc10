"""The matchmaking ticket's worst-case history, counted from the state machine's definition:
the HISTORY deploy rule and the Config's bound rest on this count."""

from __future__ import annotations

import copy
from collections.abc import Callable
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


def _through_a_pass_state(states: dict[str, Any]) -> None:
    states["Wait"]["Next"] = "Again"
    states["Again"] = {"Type": "Pass", "Next": "TryMatch"}


def _one_more_retry(states: dict[str, Any]) -> None:
    states["TryMatch"]["Retry"][0]["MaxAttempts"] += 1


def _a_longer_abandon(states: dict[str, Any]) -> None:
    states["Abandon"]["Next"] = "Told"
    states["Told"] = {"Type": "Pass", "Next": "Expired"}


@pytest.mark.parametrize(
    ("change", "more"),
    [
        pytest.param(
            _through_a_pass_state, 12 * 2, id="a state in the loop: every pass but the last"
        ),
        pytest.param(_one_more_retry, 13 * 4, id="a retry more: every pass and the way out"),
        pytest.param(_a_longer_abandon, 2, id="a longer way out: once"),
    ],
)
def test_a_change_to_the_definition_changes_the_count(
    monkeypatch: pytest.MonkeyPatch, change: Callable[[dict[str, Any]], None], more: int
) -> None:
    before = history_events(120, 10)
    original = flow.definition

    def changed(queue_url: str, partition: str = "aws") -> dict[str, Any]:
        states = copy.deepcopy(original(queue_url, partition))
        change(states["States"])
        return states

    monkeypatch.setattr(flow, "definition", changed)
    assert history_events(120, 10) == before + more
