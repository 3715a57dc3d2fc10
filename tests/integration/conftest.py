"""The integration tier: real handlers on a moto server, one fresh account per test.

Every write meets a transaction conflict on its first attempt (``local/conflicts.py``;
``CANASTA_INJECT_CONFLICTS=off`` runs the tier without them)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from local import conflicts
from local.aws import REGION, reset, start_moto
from local.iam import EVERY_USE
from services.common import constants
from tests.integration.harness import Harness
from tests.integration.machine import fresh_harness


@pytest.fixture(scope="session", autouse=True)
def iam_uses() -> Iterator[None]:
    """With CANASTA_IAM_USES=<file>: write every (function, action, resource) the tier used."""
    yield
    path = os.environ.get("CANASTA_IAM_USES")
    if path:
        Path(path).write_text("".join(f"{f}\t{a}\t{r}\n" for f, a, r in sorted(EVERY_USE)))


@pytest.fixture(scope="session", autouse=True)
def injected_conflicts() -> Iterator[None]:
    """Conflicts on, unless the run said otherwise; at the end, every path that wrote met one
    (its first attempt failed as under a conflicting transaction, and it went on)."""
    os.environ.setdefault(conflicts.ENV, "first")
    yield
    if os.environ[conflicts.ENV] == "first":
        assert conflicts.INJECTOR.missed() == [], "write paths that never met a conflict"


@pytest.fixture(scope="session")
def moto_url() -> Iterator[str]:
    server, url = start_moto()
    try:
        yield url
    finally:
        server.stop()


@pytest.fixture
def dynamodb(moto_url: str) -> Any:
    """Every table, empty, on the moto server, and a client of it: DynamoDB for the storage
    adapter alone, with no handler wired."""
    reset(moto_url)
    conflicts.install(spec.name for spec in constants.TABLES)
    client = boto3.client(
        "dynamodb",
        endpoint_url=moto_url,
        region_name=REGION,
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    for spec in constants.TABLES:
        client.create_table(**constants.create_table_request(spec))
    return client


@pytest.fixture
def harness(moto_url: str) -> Iterator[Harness]:
    with fresh_harness(moto_url) as harness:
        yield harness


@pytest.fixture
def quick_turns(moto_url: str) -> Iterator[Harness]:
    """Turns of 5 s (the shortest setting): timers that fire in real time, in a test."""
    with fresh_harness(moto_url, turn_seconds=5) as harness:
        yield harness
