"""Shared test settings: one hypothesis profile, database-less, chosen by HYPOTHESIS_PROFILE;
the Cognito-shaped token issuer of the sign-in tests."""

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
