"""An account of its own on the shared moto server, with the state machine watched.

Matchmaking tests change settings (fast polls, short queues) and must leave no
execution running on the shared server; these helpers do both.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from local.aws import LocalAws, reset
from tests.integration.harness import SECRET, Harness, Inbox


@contextmanager
def local_harness(moto_url: str, **env: str) -> Iterator[Harness]:
    """A fresh account on the shared moto server, built with ``env`` (CANASTA_* settings)."""
    reset(moto_url)
    saved = dict(os.environ)
    os.environ.update({"CANASTA_POLL_SECONDS": "1", **env})
    inbox = Inbox()
    aws = LocalAws(moto_url, inbox.deliver, SECRET)
    harness = Harness(aws, inbox)
    try:
        yield harness
        running = [e["name"] for e in executions(harness) if e["status"] == "RUNNING"]
        assert running == [], f"executions still running at the end: {running}"
        assert aws.dispatcher.errors == [], aws.dispatcher.errors
        aws.iam.assert_none_denied()
    finally:
        stop_running(harness)
        aws.close()
        os.environ.clear()
        os.environ.update(saved)


def stop_running(harness: Harness) -> None:
    sfn = harness.aws.client("stepfunctions")
    for execution in executions(harness):
        if execution["status"] == "RUNNING":
            sfn.stop_execution(executionArn=execution["executionArn"])


def executions(harness: Harness) -> list[dict[str, Any]]:
    sfn = harness.aws.client("stepfunctions")
    listed = sfn.list_executions(stateMachineArn=harness.aws.resources.state_machine_arn)
    return list(listed["executions"])


def settle_until(harness: Harness, done: Callable[[], Any], seconds: float = 60.0) -> None:
    deadline = time.time() + seconds
    while True:
        harness.settle()
        if done():
            return
        if time.time() > deadline:
            raise AssertionError(f"not reached within {seconds} s")
        time.sleep(0.05)
