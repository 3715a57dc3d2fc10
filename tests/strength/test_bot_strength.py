"""The bot ladder's order over whole matches: minutes of play, so out of the unit tier's
loop (``pytest -m unit``) and run by ``make test`` beside the slower tiers."""

from __future__ import annotations

from collections import defaultdict

import pytest

from benchmarks.strength import Timings, duplicate
from shared_engine.search import HARD, NORMAL

# The longest CPU-bound tests, minutes in all: one group, so one worker takes them first
# (xdist hands out its groups before single tests) and they do not trail the parallel run.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ladder")]

DEALS = 20


@pytest.mark.parametrize(
    ("level", "below", "deals"),
    [("normal", "easy", DEALS), ("hard", "easy", DEALS), ("hard", "normal", 3 * DEALS)],
)
def test_each_level_wins_most_duplicate_matches_against_the_one_below(
    level: str, below: str, deals: int
) -> None:
    """``make figures`` measures every pair of levels over 1,000 matches
    (docs/performance.md); over duplicate deals (two one-round matches each, the seats
    swapped, so a deal's luck cancels) on these seeds each level wins more than half
    against the heuristic and hard more than half against normal. Hard's edge over normal
    is the smallest and most deals are split, so that pair plays three times the deals
    (60: at its measured edge a sample of 20 is a coin toss). A ladder swapped (two
    levels' budgets or evaluations exchanged), or a search that played on noise, would
    not pass: a level that played as the one below it scores exactly 0.5."""
    scores = duplicate(
        (level, below),
        deals,
        "ladder",
        timings=defaultdict(Timings),
        levels={"normal": NORMAL, "hard": HARD},
    )
    assert sum(scores) / deals > 0.5
