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
    ("level", "below"), [("normal", "easy"), ("hard", "easy"), ("hard", "normal")]
)
def test_each_level_wins_most_duplicate_matches_against_the_one_below(
    level: str, below: str
) -> None:
    """``make figures`` measures every pair of levels over 1,000 matches
    (docs/performance.md); over 20 duplicate deals (40 one-round matches, the seats
    swapped, so a deal's luck cancels) on these seeds each level wins more than half
    against the heuristic and hard more than half against normal. A ladder swapped (two
    levels' budgets or evaluations exchanged), or a search that played on noise, would
    not: a level that played as the one below it scores exactly 0.5."""
    scores = duplicate(
        (level, below),
        DEALS,
        "ladder",
        timings=defaultdict(Timings),
        levels={"normal": NORMAL, "hard": HARD},
    )
    assert sum(scores) / DEALS > 0.5
