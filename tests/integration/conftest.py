"""The integration tier: real handlers on a moto server, one fresh account per test."""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Iterator

import pytest

from local.aws import LocalAws, moto_server
from tests.integration.harness import SECRET, Harness, Inbox


@pytest.fixture(scope="session")
def moto_url() -> Iterator[str]:
    with moto_server() as url:
        yield url


@pytest.fixture
def harness(moto_url: str) -> Iterator[Harness]:
    urllib.request.urlopen(
        urllib.request.Request(f"{moto_url}/moto-api/reset", method="POST")
    ).close()
    saved = dict(os.environ)
    inbox = Inbox()
    aws = LocalAws(moto_url, inbox.deliver, SECRET)
    try:
        yield Harness(aws, inbox)
    finally:
        aws.close()
        os.environ.clear()
        os.environ.update(saved)
