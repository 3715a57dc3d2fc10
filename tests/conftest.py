"""Shared test settings: one hypothesis profile, database-less, chosen by HYPOTHESIS_PROFILE;
the Cognito-shaped token issuer of the sign-in tests; how the tests share out among
pytest-xdist's workers."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

from local.issuer import LocalIssuer
from tests.cognito import pool_issuer

settings.register_profile("default", deadline=None, database=None, print_blob=True)
# A long search: tests that scale their example counts (tests/property) run 20 times more.
settings.register_profile("deep", settings.get_profile("default"), max_examples=2000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


SHARED_ONCE = {"synthesis", "generated", "stack", "live", "fresh_artifacts"}
"""Fixtures made once for many tests that cost more to make again than their tests take
(a CDK synthesis of three stacks, the contract's generated models, a running local stack,
a table a few moves in), or that clear what the module's other tests wrote (screenshots):
every test that uses one runs on the worker that made it."""


def xdist_group(item: pytest.Item) -> str | None:
    """The group a test shares a worker with (``--dist loadgroup``), if any. Other tests,
    whole matches among them, go to whichever worker is free: a fault run's module
    fixture (one fault-free match) costs less than the hundred runs it would serialize."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for name, definitions in info.name2fixturedefs.items():
        definition = definitions[-1]
        if name in SHARED_ONCE and definition.scope != "function":
            return f"{definition.baseid}::{name}"
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        group = xdist_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="module")
def pool() -> Iterator[LocalIssuer]:
    """A Cognito user pool's issuer and app client, its keys served on 127.0.0.1."""
    issuer = pool_issuer()
    yield issuer
    issuer.stop()


@pytest.fixture
def fresh_pool() -> Iterator[LocalIssuer]:
    """The same, with keys no verifier has fetched yet (tests of the key cache)."""
    issuer = pool_issuer()
    yield issuer
    issuer.stop()
