"""The handler benchmark's state machine follows the definition the stack deploys: what it
sends and the transitions it counts are the ones Step Functions would make and bill."""

from __future__ import annotations

import json

import pytest

from benchmarks.tickets import Tickets

pytestmark = pytest.mark.unit

URL = "https://sqs.us-east-1.amazonaws.com/123456789012/canasta-matchmaking"
TICKET = {"player_id": "p1", "ticket": "t1", "wait_seconds": 120}


def _tickets() -> tuple[Tickets, list[dict[str, object]]]:
    sent: list[dict[str, object]] = []
    return Tickets(URL, lambda url, body: sent.append({"url": url, **json.loads(body)})), sent


def test_a_ticket_answered_seated_is_one_transition() -> None:
    tickets, sent = _tickets()
    assert tickets.start(json.dumps({"ticket": TICKET})) == 1
    (task,) = sent
    assert (task["url"], task["kind"], task["ticket"]) == (URL, "try_match", TICKET)
    assert tickets.waiting() == 1
    assert tickets.answered(str(task["task_token"])) == 0
    assert tickets.waiting() == 0
    assert tickets.answered(str(task["task_token"])) == 0, "a second answer is refused"
    assert tickets.time_out() == 0
    assert len(sent) == 1


def test_a_ticket_nobody_ends_times_out_into_abandon() -> None:
    tickets, sent = _tickets()
    tickets.start(json.dumps({"ticket": TICKET}))
    assert tickets.time_out() == 1
    abandon = sent[-1]
    assert abandon == {"url": URL, "kind": "abandon", "ticket": TICKET, "error": "States.Timeout"}
    assert tickets.waiting() == 0
