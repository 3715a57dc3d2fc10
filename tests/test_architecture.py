"""The engine stays pure: the layering rule of the design, enforced.

The rules modules import nothing that does I/O, reads a clock, draws global
randomness or talks to AWS; the two command-line edges (the scenario runner
and the demo) may read files and draw a seed, and no rules module imports
them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ENGINE = Path(__file__).resolve().parents[1] / "shared_engine"
EDGES = {"scenarios", "demo", "simulate"}
FORBIDDEN = {
    "boto3",
    "botocore",
    "aws_lambda_powertools",
    "services",
    "infra",
    "random",
    "secrets",
    "time",
    "datetime",
    "os",
    "socket",
    "pathlib",
    "io",
    "subprocess",
    "threading",
    "asyncio",
    "uuid",
}


def _imports(path: Path) -> set[str]:
    """Top-level module names imported at run time (TYPE_CHECKING blocks excluded)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
            if node.module == "shared_engine":
                found.update(f"shared_engine.{alias.name}" for alias in node.names)
            elif node.module.startswith("shared_engine."):
                found.add(node.module)
    return found


RULES_MODULES = sorted(p for p in ENGINE.glob("*.py") if p.stem not in EDGES)


@pytest.mark.parametrize("path", RULES_MODULES, ids=lambda p: p.stem)
def test_rules_modules_import_nothing_impure(path: Path) -> None:
    assert _imports(path) & FORBIDDEN == set()


@pytest.mark.parametrize("path", RULES_MODULES, ids=lambda p: p.stem)
def test_rules_modules_do_not_import_the_command_line_edges(path: Path) -> None:
    edges = {f"shared_engine.{edge}" for edge in EDGES}
    assert _imports(path) & edges == set()


def test_the_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import boto3\nfrom random import choice\n", encoding="utf-8")
    assert {"boto3", "random"} <= _imports(sample)
