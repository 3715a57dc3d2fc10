"""The reliability tier: its own moto server (one request at a time, as the local stack's)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from local.aws import start_moto


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
