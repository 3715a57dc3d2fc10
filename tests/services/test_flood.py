"""Flood control's token buckets: burst, steady rate, and a bounded memory."""

from __future__ import annotations

import pytest

from services.common.flood import FloodControl

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_a_burst_then_the_steady_rate() -> None:
    clock = Clock()
    flood = FloodControl(rate=2.0, burst=3, kept=10, clock=clock)
    assert [flood.allow("c") for _ in range(4)] == [True, True, True, False]
    clock.t += 0.5  # one message's worth at 2 a second
    assert [flood.allow("c") for _ in range(2)] == [True, False]
    clock.t += 100  # refilled to the burst, no more
    assert [flood.allow("c") for _ in range(4)] == [True, True, True, False]


def test_a_refused_message_costs_nothing_and_time_alone_refills() -> None:
    clock = Clock()
    flood = FloodControl(rate=1.0, burst=1, kept=10, clock=clock)
    assert flood.allow("c")
    for _ in range(90):
        clock.t += 0.01
        assert not flood.allow("c")
    clock.t += 0.11  # one second since the last allowed message, refusals or not
    assert flood.allow("c")


def test_buckets_are_per_connection_and_bounded() -> None:
    clock = Clock()
    flood = FloodControl(rate=1.0, burst=1, kept=3, clock=clock)
    assert flood.allow("a") and not flood.allow("a")
    assert flood.allow("b")
    for number in range(1000):
        flood.allow(f"new-{number}")
    assert len(flood) == 3
    # "a" was forgotten: it starts again with a full bucket (the bound's price).
    assert flood.allow("a")
