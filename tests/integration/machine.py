"""An account of its own on the shared moto server, with the state machine watched.

Matchmaking tests change settings (short queues) and must leave no execution
running on the shared server; these helpers do both.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from local.aws import LocalAws, reset
from local.issuer import LocalIssuer
from tests.integration.harness import Harness, Inbox, served_issuer


@contextmanager
def fresh_harness(
    moto_url: str,
    turn_seconds: int = 60,
    env: Mapping[str, str] | None = None,
    timing: Mapping[str, Any] | None = None,
    issuer: LocalIssuer | None = None,
) -> Iterator[Harness]:
    """A fresh account on the shared moto server, its handlers wired to it.

    ``env``: CANASTA_* settings; ``timing``: the dispatcher's ``clock`` and
    ``within_minute`` (local/dispatcher.py); ``issuer``: whose tokens the
    authorizer accepts (default: the tests' local issuer). At the end, every delivery the
    platform made must have succeeded (a handler that reported a failed record
    would be retried forever) and no call a handler made may have been denied
    by its function's role (local/iam.py).
    """
    reset(moto_url)
    saved = dict(os.environ)
    os.environ.update(env or {})
    inbox = Inbox()
    aws = LocalAws(
        moto_url,
        inbox.deliver,
        issuer or served_issuer(),
        turn_seconds=turn_seconds,
        timing=timing,
        close=inbox.close,
    )
    try:
        yield Harness(aws, inbox)
        assert aws.dispatcher.errors == [], aws.dispatcher.errors
        aws.iam.assert_none_denied()
    finally:
        aws.close()
        os.environ.clear()
        os.environ.update(saved)


@contextmanager
def local_harness(moto_url: str, **env: str) -> Iterator[Harness]:
    """A fresh account built with ``env`` (CANASTA_* settings) whose tests must end every
    ticket they open."""
    with fresh_harness(moto_url, env=env) as harness:
        try:
            yield harness
            running = [e["name"] for e in executions(harness) if e["status"] == "RUNNING"]
            assert running == [], f"executions still running at the end: {running}"
        finally:
            stop_running(harness)


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
