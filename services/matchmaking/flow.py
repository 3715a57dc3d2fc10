"""The matchmaking state machine: one execution per queue ticket, one state in its life.

Defined once, here: the CDK stack deploys this definition and the local
stack and the tests run the very same one on moto. ``TryMatch`` sends the
ticket's one ``try_match`` task to the matchmaking queue and waits for its
token to be answered (``.waitForTaskToken``), which happens only when the
ticket ends: the service keeps the token with the queue entry, and whoever
ends the ticket answers it (the formation that seats it: ``seated``; its
player's ``leave`` or disconnect: ``gone``). A seated ticket's execution is
one state transition. Tables form when players arrive, so nothing polls:
expiry is the task's own timeout, the ticket's ``wait_seconds``, after which
``Abandon`` asks the service to take the player out and tell them. The wait
is durable: a deploy or a crashed function loses no ticket.
"""

from __future__ import annotations

import json
from typing import Any

SEND_FAILED = "States.TaskFailed"
"""What a task whose SendMessage failed ends with: nothing was sent, so sending again means
something. A lost or failed ``try_match`` delivery is the queue's to redeliver (its
consumer answers or keeps the token once it succeeds), so no other error is retried."""


def _send_retry() -> dict[str, Any]:
    return {
        "ErrorEquals": [SEND_FAILED],
        "IntervalSeconds": 2,
        "MaxAttempts": 2,
        "BackoffRate": 2.0,
    }


def definition(queue_url: str, partition: str = "aws") -> dict[str, Any]:
    """``partition``: the stack passes its own (``aws-cn``, ``aws-us-gov``, ...)."""
    return {
        "Comment": "A matchmaking ticket: one task, answered when it is seated or gone.",
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
                "TimeoutSecondsPath": "$.ticket.wait_seconds",
                "Retry": [_send_retry()],
                "Catch": [
                    {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Abandon"}
                ],
                "End": True,
            },
            "Abandon": {
                "Comment": "Unanswered until the queue time was up (or never sent): take the "
                "ticket out of the queue, tell the player.",
                "Type": "Task",
                "Resource": f"arn:{partition}:states:::sqs:sendMessage",
                "Parameters": {
                    "QueueUrl": queue_url,
                    "MessageBody": {
                        "kind": "abandon",
                        "ticket.$": "$.ticket",
                        "error.$": "$.error.Error",
                    },
                },
                "ResultSelector": {"status": "abandoned"},
                "Retry": [_send_retry()],
                "End": True,
            },
        },
    }


def definition_json(queue_url: str, partition: str = "aws") -> str:
    return json.dumps(definition(queue_url, partition), separators=(",", ":"))


HISTORY_LIMIT = 25_000
"""Step Functions fails a standard workflow's execution when its history reaches 25,000
events: a definition that loops could lose a ticket mid-queue."""
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


class Loops(ValueError):
    """The definition can pass a state twice: its history grows with the ticket's wait."""


def history_events() -> int:
    """The most history events one ticket's execution can record, counted from
    ``definition()``: the execution's two and the longest way from ``StartAt`` to an end,
    each task with all its retries. Today TryMatch (2 + 3 attempts x 4 = 14) and Abandon
    (14): 30, whatever the queue time, since no state is passed twice (``Loops`` if one
    could be: the count would then depend on how long a ticket waits)."""
    flow = definition("")
    return EXECUTION_EVENTS + _longest(flow["States"], flow["StartAt"], ())


def _events(state: dict[str, Any]) -> int:
    if state["Type"] != "Task":
        return STATE_EVENTS
    retries = sum(int(r.get("MaxAttempts", DEFAULT_MAX_ATTEMPTS)) for r in state.get("Retry", ()))
    return STATE_EVENTS + (1 + retries) * ATTEMPT_EVENTS


def _following(state: dict[str, Any]) -> list[str]:
    """Every state this one may pass to: its Next, Default, choices and catchers."""
    branches = [*state.get("Choices", ()), *state.get("Catch", ())]
    return [b["Next"] for b in branches] + [state[k] for k in ("Next", "Default") if k in state]


def _longest(states: dict[str, Any], name: str, seen: tuple[str, ...]) -> int:
    """The most events from ``name`` to the end of the execution."""
    if name in seen:
        raise Loops(f"{' -> '.join((*seen, name))}: a state passed twice")
    ways = [_longest(states, following, (*seen, name)) for following in _following(states[name])]
    return _events(states[name]) + max(ways, default=0)
