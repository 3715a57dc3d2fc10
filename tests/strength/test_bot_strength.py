"""The bot ladder's order over whole matches: minutes of play, so out of the unit tier's
loop (``pytest -m unit``) and run by ``make test`` beside the slower tiers."""

from __future__ import annotations

from collections import defaultdict

import pytest

from benchmarks.strength import Timings, duplicate
from shared_engine.search import HARD, NORMAL

pytestmark = pytest.mark.slow

DEALS = 20


@pytest.mark.parametrize("level", ["normal", "hard"])
def test_each_search_level_wins_most_duplicate_matches_against_the_heuristic(level: str) -> None:
    """``make figures`` measures each level against the heuristic (easy) over 1,000
    matches (docs/performance.md: normal 57.9%, hard 62.0%); over 20 duplicate deals (40
    one-round matches, the seats swapped, so a deal's luck cancels) on these seeds each
    wins more than half, and a ladder swapped below easy, or a search that played on
    noise, would not. Hard against normal is not held here: over 1,000 matches it
    measured 48.5% (45.5-51.5%), no order to keep."""
    scores = duplicate(
        (level, "easy"),
        DEALS,
        "ladder",
        timings=defaultdict(Timings),
        levels={"normal": NORMAL, "hard": HARD},
    )
    assert sum(scores) / DEALS > 0.5
