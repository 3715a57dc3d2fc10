"""The matchmaking state machine as the handler benchmark's platform runs it.

Each ticket's execution walks ``services.matchmaking.flow.definition()`` state by
state, and every state it enters is a transition Step Functions bills. A task
with ``.waitForTaskToken`` sends its message with a token and waits: it succeeds
when a function answers the token (its ``SendTaskSuccess``, as the meter captured
it; a later answer is refused, as Step Functions refuses it), and fails with
``States.Timeout`` when the benchmark declares the ticket's queue time over (a
ticket nobody ended). A request-response ``sqs:sendMessage`` sends its message
and goes on. No send fails here (the queue is moto's), so no retry runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from services.matchmaking import flow

TIMEOUT = "States.Timeout"
TOKEN_LENGTH = 2048
"""The longest task token Step Functions' API takes: the service keeps the token on the
player's item, so those writes are metered at their dearest."""


@dataclass
class Execution:
    data: dict[str, Any]
    """The state input, as the definition's paths read it."""
    waiting: str
    """The task state waiting for its token."""


class Tickets:
    """The executions of one match's tickets, keyed by the token each one waits on."""

    def __init__(self, queue_url: str, send: Callable[[str, str], None]) -> None:
        """``send(queue_url, body)``: SQS, as the state machine's role sends."""
        definition = flow.definition(queue_url)
        self._start, self._states = definition["StartAt"], definition["States"]
        self._send = send
        self._waiting: dict[str, Execution] = {}
        self._tokens = 0

    def start(self, execution_input: str) -> int:
        """StartExecution: the transitions until the execution waits or ends."""
        return self._enter(json.loads(execution_input), self._start)

    def answered(self, token: str) -> int:
        """SendTaskSuccess: the waiting task succeeds (nothing, for a token no task waits on)."""
        execution = self._waiting.pop(token, None)
        if execution is None:
            return 0
        return self._enter(execution.data, self._states[execution.waiting].get("Next"))

    def time_out(self) -> int:
        """Every task still waiting times out and takes its ``States.Timeout`` catcher."""
        transitions = 0
        for token in list(self._waiting):
            execution = self._waiting.pop(token)
            catcher = next(
                c
                for c in self._states[execution.waiting]["Catch"]
                if {TIMEOUT, "States.ALL"} & set(c["ErrorEquals"])
            )
            error = {"Error": TIMEOUT, "Cause": "the ticket's wait_seconds are over"}
            data = _with(execution.data, catcher.get("ResultPath", "$"), error)
            transitions += self._enter(data, catcher["Next"])
        return transitions

    def waiting(self) -> int:
        return len(self._waiting)

    def _enter(self, data: dict[str, Any], name: str | None) -> int:
        transitions = 0
        while name is not None:
            state = self._states[name]
            transitions += 1
            self._tokens += 1
            token = f"token-{self._tokens}-".ljust(TOKEN_LENGTH, "x")
            parameters = state["Parameters"]
            body = _rendered(parameters["MessageBody"], data, {"Task": {"Token": token}})
            self._send(parameters["QueueUrl"], json.dumps(body))
            if state["Resource"].endswith(".waitForTaskToken"):
                self._waiting[token] = Execution(data, name)
                return transitions
            name = state.get("Next")
        return transitions


def _rendered(template: dict[str, Any], data: dict[str, Any], context: dict[str, Any]) -> Any:
    """A payload template: each ``key.$`` takes the value its path selects."""
    return {
        key.removesuffix(".$"): _selected(value, data, context) if key.endswith(".$") else value
        for key, value in template.items()
    }


def _selected(path: str, data: dict[str, Any], context: dict[str, Any]) -> Any:
    found: Any = context if path.startswith("$$") else data
    for part in path.lstrip("$").split(".")[1:]:
        found = found[part]
    return found


def _with(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """``data`` with ``value`` at a ``ResultPath`` of one level (``$.error``), or as a whole."""
    if path == "$":
        return dict(value)
    return {**data, path.removeprefix("$."): value}
