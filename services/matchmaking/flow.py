"""The matchmaking state machine: one execution per queue ticket.

Defined once, here: the CDK stack deploys this definition and the local
stack and the tests run the very same one on moto. Each pass sends a
``try_match`` task to the matchmaking queue and waits for the service's answer
(``.waitForTaskToken``): seated, gone (left or disconnected), expired, or
waiting — then it waits ``poll_seconds`` and tries again. The wait is durable:
a deploy or a crashed function loses no ticket; a task that is never answered
is retried, then abandoned, which takes the player out of the queue.

Tables form when players arrive (each new ticket's first pass seats the
oldest four), so the polling only has to notice expiry: ``poll_seconds`` can
be long, and Step Functions transitions are most of matchmaking's cost.
"""

from __future__ import annotations

import json
from typing import Any


def definition(queue_url: str, partition: str = "aws") -> dict[str, Any]:
    """``partition``: the stack passes its own (``aws-cn``, ``aws-us-gov``, ...)."""
    return {
        "Comment": "A matchmaking ticket: try to seat the player until seated, gone or expired.",
        "StartAt": "TryMatch",
        "States": {
            "TryMatch": {
                "Type": "Task",
                "Resource": f"arn:{partition}:states:::sqs:sendMessage.waitForTaskToken",
                "Parameters": {
                    "QueueUrl": queue_url,
                    "MessageBody": {
                        "kind": "try_match",
                        "ticket.$": "$.ticket",
                        "task_token.$": "$$.Task.Token",
                    },
                },
                "ResultPath": "$.outcome",
                "TimeoutSeconds": 300,
                "Retry": [
                    {
                        "ErrorEquals": ["States.Timeout", "States.TaskFailed"],
                        "IntervalSeconds": 5,
                        "MaxAttempts": 2,
                        "BackoffRate": 2.0,
                    }
                ],
                "Catch": [
                    {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Abandon"}
                ],
                "Next": "Outcome",
            },
            "Abandon": {
                "Comment": "No answer came: take the ticket out of the queue, tell the player.",
                "Type": "Task",
                "Resource": f"arn:{partition}:states:::sqs:sendMessage",
                "Parameters": {
                    "QueueUrl": queue_url,
                    "MessageBody": {"kind": "abandon", "ticket.$": "$.ticket"},
                },
                "Next": "Expired",
            },
            "Outcome": {
                "Type": "Choice",
                "Choices": [
                    {"Variable": "$.outcome.status", "StringEquals": "seated", "Next": "Seated"},
                    {"Variable": "$.outcome.status", "StringEquals": "gone", "Next": "Gone"},
                    {"Variable": "$.outcome.status", "StringEquals": "expired", "Next": "Expired"},
                ],
                "Default": "Wait",
            },
            "Wait": {"Type": "Wait", "SecondsPath": "$.ticket.poll_seconds", "Next": "TryMatch"},
            "Seated": {"Type": "Succeed"},
            "Gone": {"Type": "Succeed"},
            "Expired": {"Type": "Succeed"},
        },
    }


def definition_json(queue_url: str, partition: str = "aws") -> str:
    return json.dumps(definition(queue_url, partition), separators=(",", ":"))


HISTORY_LIMIT = 25_000
"""Step Functions fails a standard workflow's execution when its history reaches 25,000
events: a ticket that polls too often for too long is lost mid-queue."""
EXECUTION_EVENTS = 2
"""ExecutionStarted and ExecutionSucceeded (or ExecutionFailed)."""
STATE_EVENTS = 2
"""Every state's ``<Type>StateEntered`` and ``<Type>StateExited`` (a Fail state only enters,
and the execution's end takes the place of its exit)."""
ATTEMPT_EVENTS = 4
"""Each attempt of a Task: TaskScheduled, TaskStarted, TaskSubmitted and its end
(TaskSucceeded, TaskFailed or TaskTimedOut). Counted for every task, with or without
``.waitForTaskToken``: an upper bound where a request-response task records fewer."""
DEFAULT_MAX_ATTEMPTS = 3
"""A retrier without ``MaxAttempts`` retries three times (Amazon States Language)."""


def history_events(queue_seconds: int, poll_seconds: int) -> int:
    """The most history events one ticket's execution can record, counted from
    ``definition()``: the execution's two, every pass round the loop (the states from
    ``StartAt`` back to it, each task with all its retries), and the longest way out.

    A pass waits ``poll_seconds`` (the loop's Wait); the service answers "expired" to the
    first pass that starts ``queue_seconds`` after the ticket, so a ticket makes at most
    ``ceil(queue_seconds / poll_seconds) + 1`` passes, the last one leaving the loop.
    Every pass is counted with all its retries, though a retry only lengthens the pass
    (fewer passes fit): an upper bound, so the limit holds with room. Today a pass is
    TryMatch (2 + 3 attempts x 4 = 14), Outcome (2) and Wait (2): 18; the longest way out
    is TryMatch failing every attempt, Abandon (2 + 4) and Expired (2): 22.
    """
    flow = definition("")
    states, start = flow["States"], flow["StartAt"]
    passes = -(-queue_seconds // poll_seconds) + 1
    per_pass = sum(_events(states[name]) for name in _loop(states, start))
    return EXECUTION_EVENTS + (passes - 1) * per_pass + _longest_exit(states, start, start, ())


def _events(state: dict[str, Any]) -> int:
    if state["Type"] != "Task":
        return STATE_EVENTS
    retries = sum(int(r.get("MaxAttempts", DEFAULT_MAX_ATTEMPTS)) for r in state.get("Retry", ()))
    return STATE_EVENTS + (1 + retries) * ATTEMPT_EVENTS


def _following(state: dict[str, Any]) -> list[str]:
    """Every state this one may pass to: its Next, Default, choices and catchers."""
    branches = [*state.get("Choices", ()), *state.get("Catch", ())]
    return [b["Next"] for b in branches] + [state[k] for k in ("Next", "Default") if k in state]


def _loop(states: dict[str, Any], start: str) -> list[str]:
    """The states of one pass: a path from ``start`` that leads back to it."""

    def walk(path: list[str]) -> list[str]:
        for name in _following(states[path[-1]]):
            if name == start:
                return path
            if name not in path and (found := walk([*path, name])):
                return found
        return []

    return walk([start])


def _longest_exit(states: dict[str, Any], name: str, start: str, seen: tuple[str, ...]) -> int:
    """The most events from ``name`` to the end of the execution without passing ``start``
    again (0 when every way from ``name`` goes back round the loop)."""
    state = states[name]
    if state["Type"] in ("Succeed", "Fail") or state.get("End"):
        return _events(state)
    ways = [
        _longest_exit(states, following, start, (*seen, name))
        for following in _following(state)
        if following != start and following not in seen
    ]
    longest = max(ways, default=0)
    return _events(state) + longest if longest else 0
