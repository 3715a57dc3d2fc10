"""The layering rules of the design, enforced on every module's imports.

- The engine is pure: its rules modules import nothing that does I/O, reads a
  clock, draws global randomness or talks to AWS; its one command-line edge
  (the scenario runner) may read files, and no rules module imports it.
- The runtime packages (``services``, ``shared_engine``: the Lambda asset)
  import no development or deployment code: ``tools``, ``benchmarks``,
  ``local``, ``infra``, ``tests``, the CDK, moto.
- No service imports another service; ``services.common`` imports none.
- A use case (``services/<service>/app.py``) speaks no AWS: no boto3 or
  botocore, no Powertools, not the DynamoDB helpers (``services.common.dynamo``,
  ``services.common.dynamo_storage``: attribute maps, AWS error codes, the DynamoDB
  storage) nor the AWS clients (``services.common.runtime``).
- A handler (``services/<service>/handler.py``) imports only its own service's
  composition root and use cases, ``services.common``, pydantic and Powertools.
- The manifest (``infra/manifest.py``) imports no CDK and no handler, so the
  local stack and the tools load it without either.
- The local stack imports no tool or benchmark; the CDK app imports neither
  them nor the local stack.

Each rule is a function of a source tree, so the last tests here run every
rule on a tree that breaks it and check that the rule reports it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
ENGINE_EDGES = {"scenarios"}
IMPURE = {
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
NOT_IN_THE_ASSET = {
    "tools",
    "benchmarks",
    "ops",
    "local",
    "infra",
    "tests",
    "aws_cdk",
    "constructs",
    "moto",
}
AWS_IN_USE_CASES = {
    "boto3",
    "botocore",
    "aws_lambda_powertools",
    "services.common.dynamo",
    "services.common.dynamo_storage",
    "services.common.runtime",
}
HANDLER_LIBRARIES = {"pydantic", "aws_lambda_powertools"}

KNOWN_BREACHES: set[tuple[str, str]] = set()
"""Breaches tolerated for now, each to be removed by the change that ends it: a breach
not listed fails, and so does a listed one that no longer exists. None today."""


def imports(path: Path) -> set[str]:
    """Every module a file imports at run time, dotted in full (``from a import b`` gives
    ``a`` and ``a.b``); imports under ``if TYPE_CHECKING:`` are left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            node.body = []
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _within(module: str, packages: set[str]) -> bool:
    """``module`` is one of ``packages`` or inside one of them."""
    return any(module == p or module.startswith(f"{p}.") for p in packages)


def _stdlib(module: str) -> bool:
    import sys

    return module.split(".", maxsplit=1)[0] in sys.stdlib_module_names or module == "__future__"


@dataclass(frozen=True)
class Rule:
    name: str
    files: tuple[str, ...]
    """Globs under the root: the modules the rule governs."""
    forbids: Callable[[str, Path], bool]
    """Whether importing a module (first argument) from a file (relative path) breaks it."""

    def governed(self, root: Path) -> list[Path]:
        return sorted({path for pattern in self.files for path in root.glob(pattern)})

    def breaches(self, root: Path) -> set[tuple[str, str]]:
        """(file, module) for every import that breaks the rule: the module named in the
        import statement (``a.b`` for ``from a.b import c``, unless ``a`` breaks it already)."""
        found = set()
        for path in self.governed(root):
            relative = path.relative_to(root)
            broken = {module for module in imports(path) if self.forbids(module, relative)}
            found.update(
                (relative.as_posix(), module)
                for module in broken
                if not any(module.startswith(f"{other}.") for other in broken)
            )
        return found


def _service_of(path: Path) -> str:
    return path.parts[1]


def _other_service(module: str, path: Path) -> bool:
    parts = module.split(".")
    return (
        parts[0] == "services" and len(parts) > 1 and parts[1] not in {"common", _service_of(path)}
    )


def _handler_may_not(module: str, path: Path) -> bool:
    own = f"services.{_service_of(path)}"
    allowed = {"services.common", f"{own}.app", f"{own}.root", *HANDLER_LIBRARIES}
    return not (_stdlib(module) or _within(module, allowed) or module == own)


RULES = [
    Rule(
        "the engine's rules modules are pure",
        ("shared_engine/*.py",),
        lambda module, path: (
            path.stem not in ENGINE_EDGES and _within(module.split(".")[0], IMPURE)
        ),
    ),
    Rule(
        "no rules module imports the engine's command-line edge",
        ("shared_engine/*.py",),
        lambda module, path: (
            path.stem not in ENGINE_EDGES
            and _within(module, {f"shared_engine.{edge}" for edge in ENGINE_EDGES})
        ),
    ),
    Rule(
        "the runtime packages import no development or deployment code",
        ("services/**/*.py", "shared_engine/**/*.py"),
        lambda module, _path: _within(module, NOT_IN_THE_ASSET),
    ),
    Rule("no service imports another service", ("services/*/*.py",), _other_service),
    Rule(
        "the common package imports no service",
        ("services/common/*.py",),
        lambda module, _path: (
            module.startswith("services.") and not _within(module, {"services.common"})
        ),
    ),
    Rule(
        "use cases speak no AWS",
        ("services/*/app.py",),
        lambda module, _path: _within(module, AWS_IN_USE_CASES),
    ),
    Rule(
        "handlers import their root, their use cases and the common package only",
        ("services/*/handler.py",),
        _handler_may_not,
    ),
    Rule(
        "the manifest imports no CDK and no handler",
        ("infra/manifest.py",),
        lambda module, _path: (
            _within(module, {"aws_cdk", "constructs"})
            or module.endswith(".handler")
            or ".handler." in module
        ),
    ),
    Rule(
        "the local stack imports no tool or benchmark",
        ("local/*.py",),
        lambda module, _path: _within(module, {"tools", "benchmarks", "tests"}),
    ),
    Rule(
        "the CDK app imports no tool, benchmark or local stack",
        ("infra/**/*.py",),
        lambda module, _path: _within(module, {"tools", "benchmarks", "tests", "local"}),
    ),
]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_the_rule_holds(rule: Rule) -> None:
    assert rule.breaches(ROOT) - KNOWN_BREACHES == set()


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_every_rule_governs_some_module(rule: Rule) -> None:
    assert rule.governed(ROOT), rule.files


PROJECT = {"shared_engine", "services", "infra", "local", "ops", "tools", "benchmarks"}


def _resolves(module: str) -> bool:
    """``module`` is a module, or a name its parent module defines (``from a import b``)."""
    import importlib
    import importlib.util

    try:
        if importlib.util.find_spec(module) is not None:
            return True
    except ModuleNotFoundError:
        pass
    parent, _, name = module.rpartition(".")
    return bool(parent) and _resolves(parent) and hasattr(importlib.import_module(parent), name)


def test_every_import_of_the_project_s_own_modules_resolves() -> None:
    """Imports inside functions (the benchmarks' and tools' lazy ones) fail only when run:
    a module moved or deleted must leave no import of it behind."""
    missing = {
        (path.relative_to(ROOT).as_posix(), module)
        for package in sorted(PROJECT)
        for path in sorted((ROOT / package).rglob("*.py"))
        for module in imports(path)
        if _within(module, PROJECT) and not _resolves(module)
    }
    assert missing == set()


def test_every_known_breach_still_exists() -> None:
    """The list only shrinks: remove the line of a breach that is gone."""
    found = {breach for rule in RULES for breach in rule.breaches(ROOT)}
    assert KNOWN_BREACHES - found == set()


BREAKS = {
    "the engine's rules modules are pure": ("shared_engine/rules.py", "import random"),
    "no rules module imports the engine's command-line edge": (
        "shared_engine/rules.py",
        "from shared_engine import scenarios",
    ),
    "the runtime packages import no development or deployment code": (
        "services/common/store.py",
        "from tools.schemas import render",
    ),
    "no service imports another service": ("services/score/app.py", "import services.deal.app"),
    "the common package imports no service": (
        "services/common/store.py",
        "from services.turn import app",
    ),
    "use cases speak no AWS": ("services/score/app.py", "from botocore.exceptions import X"),
    "handlers import their root, their use cases and the common package only": (
        "services/score/handler.py",
        "from services.score.store import ScoreStore",
    ),
    "the manifest imports no CDK and no handler": (
        "infra/manifest.py",
        "from services.turn.handler import websocket",
    ),
    "the local stack imports no tool or benchmark": ("local/aws.py", "from tools import demo"),
    "the CDK app imports no tool, benchmark or local stack": (
        "infra/stack.py",
        "from local.aws import LocalAws",
    ),
}
"""For each rule, a file it governs and an import that breaks it."""


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_the_rule_reports_a_breach(rule: Rule, tmp_path: Path) -> None:
    """The rule bites: a tree where one governed module makes the breaking import is
    reported, with that module and import; the same module without it is not."""
    relative, line = BREAKS[rule.name]
    target = tmp_path / relative
    target.parent.mkdir(parents=True)
    target.write_text("from __future__ import annotations\n", encoding="utf-8")
    assert rule.breaches(tmp_path) == set()
    target.write_text(f"{line}\n", encoding="utf-8")
    found = rule.breaches(tmp_path)
    assert found and {path for path, _module in found} == {relative}


def test_imports_under_type_checking_do_not_count(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import boto3\n"
        "def f():\n    from services.ledger import book\n",
        encoding="utf-8",
    )
    assert imports(sample) == {
        "typing",
        "typing.TYPE_CHECKING",
        "services.ledger",
        "services.ledger.book",
    }


def test_every_rule_has_a_breaking_example() -> None:
    assert set(BREAKS) == {rule.name for rule in RULES}
