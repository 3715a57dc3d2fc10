"""The cost model prices each function at the memory it is deployed with (issue: it priced
every function at 256 MB while the turn functions run at 1,024 MB)."""

from __future__ import annotations

from collections import Counter

import pytest

from benchmarks.cost import LAMBDA_ARM_GB_SECOND, LAMBDA_REQUEST, match_cost
from benchmarks.usage import FULL_VCPU_MB, MEMORY_MB, cpu_slowdown
from infra.manifest import FUNCTIONS, TURN_MEMORY_MB

pytestmark = pytest.mark.unit


def _work(function: str, cpu: float, own: float) -> Counter[str]:
    return Counter({f"invocations:{function}": 1, f"cpu:{function}": cpu, f"own:{function}": own})


def test_every_function_is_priced_at_its_manifest_memory() -> None:
    assert MEMORY_MB["turn.websocket"] == FUNCTIONS["turn-ws"].memory_mb == TURN_MEMORY_MB
    assert MEMORY_MB["relay.stream"] == FUNCTIONS["relay"].memory_mb == 256
    assert len(MEMORY_MB) == len(FUNCTIONS)


@pytest.mark.parametrize("function", ["turn.websocket", "relay.stream"])
def test_lambda_bills_gb_seconds_at_the_functions_memory_and_vcpu_share(function: str) -> None:
    """0.1 s waiting on AWS and 0.1 s of the function's own CPU on a full core: the own part
    takes 1,769 / memory times longer on Lambda, and the GB-seconds are at its memory."""
    cost = match_cost(_work(function, cpu=0.2, own=0.1), actions=0, stored_bytes=0)
    slowdown = FULL_VCPU_MB / MEMORY_MB[function]
    assert cpu_slowdown(function) == pytest.approx(slowdown)
    billed = 0.1 + 0.1 * slowdown
    assert cost.lambda_seconds == pytest.approx(billed, abs=1e-3)
    assert cost.gb_seconds == pytest.approx(billed * MEMORY_MB[function] / 1024, abs=1e-3)
    assert cost.by_service["Lambda"] == pytest.approx(
        LAMBDA_REQUEST + cost.gb_seconds * LAMBDA_ARM_GB_SECOND
    )


def _priced(dollars: dict[str, float], pushes: float) -> dict[str, object]:
    return {
        "dollars": dollars,
        "lambda_typical": dollars["Lambda"] * 2,
        "usage": {"push_messages": pushes},
        "errors": 0,
    }


def test_the_comparison_sets_each_checkout_side_by_side_against_the_goals() -> None:
    """One column per checkout, oldest first; the verdict is the last column's (this one's)
    total against each kind's goal ($1,500 quick start, $1,800 arena)."""
    from benchmarks.compare import render

    before = {"Lambda": 0.0002, "API Gateway WebSocket": 0.0014}
    after = {"Lambda": 0.0001, "API Gateway WebSocket": 0.0013}
    results = {
        "before": {"quick start": _priced(before, 1049), "arena": _priced(before, 1049)},
        "now": {"quick start": _priced(after, 700), "arena": _priced(after, 700)},
    }
    text = render(results, 1)
    lines = text.splitlines()
    assert lines[0].split()[-2:] == ["before", "now"]
    total = next(line for line in lines if line.strip().startswith("total"))
    assert total.split()[-2:] == ["1,600", "1,400"]
    typical = next(line for line in lines if "typical" in line)
    assert typical.split()[-2:] == ["1,800", "1,500"]
    pushes = next(line for line in lines if "pushed" in line)
    assert pushes.split()[-2:] == ["1,049", "700"]
    verdicts = [line.strip() for line in lines if line.strip().startswith("goal")]
    assert verdicts == [
        "goal <= $1,500 per million: ok",
        "goal <= $1,800 per million: ok",
    ]
    results["now"]["quick start"] = _priced(before, 700)
    assert "goal <= $1,500 per million: OVER GOAL" in render(results, 1)
