"""The arena simulation (``benchmarks/arena.py``) seats as the queue does and measures
what docs/performance.md reports: at every rate, skill matching narrows the gaps."""

from __future__ import annotations

import pytest

from benchmarks.arena import arrivals, first_come, simulate
from services.matchmaking.skill import POOL, pick

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("rate", [0.2, 5.0])
def test_skill_narrows_the_gaps_and_costs_some_wait(rate: float) -> None:
    seekers = arrivals(2_000, rate, seed=5)
    fifo = simulate(seekers, first_come, 4)
    matched = simulate(seekers, pick, POOL)
    seated = len(matched.waits) + matched.left
    assert seated <= len(seekers) and len(matched.waits) % 4 == 0
    assert sorted(matched.gaps)[len(matched.gaps) // 2] < sorted(fifo.gaps)[len(fifo.gaps) // 2]
    assert max(matched.spreads) <= max(fifo.spreads)
    assert sum(matched.waits) / len(matched.waits) >= sum(fifo.waits) / len(fifo.waits)
