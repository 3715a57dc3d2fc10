"""The integration tier: real handlers on a moto server, one fresh account per test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from local.aws import LocalAws, reset, start_moto
from local.iam import EVERY_USE
from tests.integration.harness import SECRET, Harness, Inbox


@pytest.fixture(scope="session", autouse=True)
def iam_uses() -> Iterator[None]:
    """With CANASTA_IAM_USES=<file>: write every (function, action, resource) the tier used."""
    yield
    path = os.environ.get("CANASTA_IAM_USES")
    if path:
        Path(path).write_text("".join(f"{f}\t{a}\t{r}\n" for f, a, r in sorted(EVERY_USE)))


@pytest.fixture(scope="session")
def moto_url() -> Iterator[str]:
    server, url = start_moto()
    try:
        yield url
    finally:
        server.stop()


@contextmanager
def local_harness(moto_url: str, turn_seconds: int = 60, **timing: Any) -> Iterator[Harness]:
    """A fresh account on the shared moto server, its handlers wired to it.

    ``timing``: the dispatcher's ``clock`` and ``within_minute`` (local/dispatcher.py).
    """
    reset(moto_url)
    saved = dict(os.environ)
    inbox = Inbox()
    aws = LocalAws(moto_url, inbox.deliver, SECRET, turn_seconds=turn_seconds, timing=timing)
    try:
        yield Harness(aws, inbox)
        # Every delivery the platform made must have succeeded: a handler that
        # reported a failed record (and would be retried forever) fails the test.
        assert aws.dispatcher.errors == [], aws.dispatcher.errors
        # Every call a handler made was allowed by its function's role (local/iam.py).
        aws.iam.assert_none_denied()
    finally:
        aws.close()
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture
def harness(moto_url: str) -> Iterator[Harness]:
    with local_harness(moto_url) as harness:
        yield harness


@pytest.fixture
def quick_turns(moto_url: str) -> Iterator[Harness]:
    """Turns of 5 s (the shortest setting): timers that fire in real time, in a test."""
    with local_harness(moto_url, turn_seconds=5) as harness:
        yield harness
