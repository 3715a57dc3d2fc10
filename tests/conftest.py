"""Shared test settings: one hypothesis profile, database-less, chosen by HYPOTHESIS_PROFILE."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("default", deadline=None, database=None, print_blob=True)
# A long search: tests that scale their example counts (tests/property) run 20 times more.
settings.register_profile("deep", settings.get_profile("default"), max_examples=2000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
