"""The bots' strength over whole matches: minutes of play, so out of the unit tier's loop
(``pytest -m unit``) and run by ``make test`` beside the slower tiers."""

from __future__ import annotations

import pytest

from shared_engine import MatchMode
from shared_engine.bots import heuristic_policy
from shared_engine.search import level_policy
from tools.simulate import Tally, play_match

pytestmark = pytest.mark.slow


def test_normal_is_not_beaten_by_the_heuristic_over_20_duplicate_deals() -> None:
    """benchmarks/strength.py measures about 55-58% over 60-80 deals; over 20 deals
    (40 matches) the 95% interval is about +-13 points, so 40% is a safe floor that
    still fails a search that plays on noise or against its own team."""
    won = 0
    for deal in range(20):
        seed = f"ci:{deal}"
        for swap in (False, True):
            bot = level_policy("normal", f"{seed}:normal")
            policies = (heuristic_policy, bot) if swap else (bot, heuristic_policy)
            won += play_match(policies, MatchMode.ONE_ROUND, seed, Tally()) == (1 if swap else 0)
    assert won / 40 >= 0.40
