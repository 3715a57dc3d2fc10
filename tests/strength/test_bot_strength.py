"""The bot ladder's order over whole matches: minutes of play, so out of the unit tier's
loop (``pytest -m unit``) and run by ``make test`` beside the slower tiers."""

from __future__ import annotations

from collections import defaultdict

import pytest

from benchmarks.strength import Timings, duplicate
from shared_engine.search import HARD, NORMAL

pytestmark = pytest.mark.slow

DEALS = 20


@pytest.mark.parametrize(
    ("stronger", "weaker"), [("normal", "easy"), ("hard", "easy"), ("hard", "normal")]
)
def test_each_level_wins_most_duplicate_matches_against_the_one_below(
    stronger: str, weaker: str
) -> None:
    """``make figures`` measures each pair's win rate over 1,000 matches
    (docs/performance.md); over 20 duplicate deals (40 one-round matches, the seats
    swapped, so a deal's luck cancels) on these seeds the stronger level wins more than
    half, and a ladder whose levels were swapped, or whose search played on noise, would
    not."""
    scores = duplicate(
        (stronger, weaker),
        DEALS,
        "ladder",
        timings=defaultdict(Timings),
        levels={"normal": NORMAL, "hard": HARD},
    )
    assert sum(scores) / DEALS > 0.5
