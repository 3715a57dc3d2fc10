"""The conformance scenarios, and proof that every rule id is exercised.

Each scenario file is one test. ``test_every_rule_id_is_covered`` reads the
rule ids from RULES.md (in the shared folder beside the repository, or
``$SHARED``) and fails if an id has no scenario, unless NOT_EXPRESSIBLE.md
explains why a round position cannot show it and a unit test cites it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from shared_engine.scenarios import run_file

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
OWN = ROOT / "tests" / "scenarios"
SHARED = Path(os.environ.get("SHARED", ROOT.parent / "shared"))
RULE_ID = re.compile(r"\*\*([A-Z]+-\d+)\*\*")
LISTED = re.compile(r"^- ([A-Z]+-\d+):", re.MULTILINE)

FILES = sorted(OWN.rglob("*.json")) + sorted((SHARED / "scenarios").rglob("*.json"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_scenario(path: Path) -> None:
    name, reason = run_file(path)
    assert reason is None, f"{name}: {reason}"


def _rule_ids() -> list[str]:
    rules = SHARED / "RULES.md"
    if not rules.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{rules} is missing")
        pytest.skip(f"{rules} not found; set SHARED to the folder holding RULES.md")
    return RULE_ID.findall(rules.read_text(encoding="utf-8"))


def _cited_by_tests(rule: str) -> bool:
    """A test cites a rule as ``PILE-3`` in a docstring or ``pile_3`` in its name."""
    forms = (rule, rule.lower().replace("-", "_"))
    return any(
        form in path.read_text(encoding="utf-8")
        for tier in ("unit", "property")
        for path in (ROOT / "tests" / tier).rglob("*.py")
        for form in forms
    )


def test_every_rule_id_is_covered() -> None:
    covered = {
        rule
        for path in OWN.rglob("*.json")
        for rule in json.loads(path.read_text(encoding="utf-8")).get("rules", [])
    }
    not_expressible = (OWN / "NOT_EXPRESSIBLE.md").read_text(encoding="utf-8").split("## ")[0]
    explained = set(LISTED.findall(not_expressible))
    missing = [
        rule
        for rule in _rule_ids()
        if rule not in covered and not (rule in explained and _cited_by_tests(rule))
    ]
    assert missing == []


def test_the_rule_id_pattern_reads_the_rule_book() -> None:
    sample = "- **PILE-3** Before your team...\n- **CAN-1** A canasta..."
    assert RULE_ID.findall(sample) == ["PILE-3", "CAN-1"]
