"""The reliability tier: its own moto server (one request at a time, as the local stack's),
with every write's first attempt failing as a conflicting transaction (``local/conflicts.py``;
``CANASTA_INJECT_CONFLICTS=off`` runs the tier without them)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from local import conflicts
from local.__main__ import Relay
from local.aws import LocalAws, reset, start_moto
from tests.integration.harness import served_issuer


@pytest.fixture(scope="session", autouse=True)
def injected_conflicts() -> None:
    os.environ.setdefault(conflicts.ENV, "first")


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    before = os.environ.get("MOTO_PORT")
    server, url = start_moto()
    # start_moto points moto's Step Functions at this server; leave any other tier's alone.
    if before is not None:
        os.environ["MOTO_PORT"] = before
    try:
        yield url
    finally:
        server.stop()


@pytest.fixture
def aws(moto_endpoint: str) -> Iterator[tuple[LocalAws, Relay]]:
    """The local stack's AWS side on a fresh moto, its ``@connections`` posts to a relay."""
    reset(moto_endpoint)
    saved = dict(os.environ)
    relay = Relay()
    local = LocalAws(moto_endpoint, relay.deliver, served_issuer())
    try:
        yield local, relay
    finally:
        local.close()
        os.environ.clear()
        os.environ.update(saved)
