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
