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
- Only the tiers that prove the adapters (integration, reliability, smoke,
  infrastructure) import moto; the fast tiers assert through records and views,
  never through DynamoDB attribute-value maps.
- No class in ``services``, ``infra`` or ``tools`` grows past what fits in a
  head: 300 lines, 15 public methods.

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
FAST_TIERS = (
    "tests/*.py",
    "tests/unit/**/*.py",
    "tests/services/**/*.py",
    "tests/property/**/*.py",
    "tests/browser/**/*.py",
)
"""The tiers a change is checked by first: they prove the rules and the use cases, so a
DynamoDB attribute map or a moto server there would tie them to an adapter's shape."""

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
    Rule(
        "the fast tiers run without moto",
        FAST_TIERS,
        lambda module, _path: _within(module, {"moto"}),
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
    "the fast tiers run without moto": ("tests/services/conftest.py", "from moto import mock_aws"),
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


ATTRIBUTE_TYPES = {"S", "N", "BOOL", "NULL", "M", "L", "SS", "NS"}
"""DynamoDB's attribute-value type descriptors: ``item["sk"]["S"]`` reads the wire shape.
Binary (``B``) is left out: the project stores none, and ``B`` is a team's name."""


def attribute_map_reads(root: Path) -> set[tuple[str, int]]:
    """(file, line) of every subscript or ``.get`` by a type descriptor in the fast tiers:
    an assertion on the adapter's wire shape rather than on a record or a view."""
    found = set()
    for path in sorted({p for pattern in FAST_TIERS for p in root.glob(pattern)}):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            key: ast.expr | None = None
            if isinstance(node, ast.Subscript):
                key = node.slice
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and node.args
            ):
                key = node.args[0]
            if isinstance(key, ast.Constant) and key.value in ATTRIBUTE_TYPES:
                found.add((path.relative_to(root).as_posix(), node.lineno))
    return found


def test_the_fast_tiers_assert_no_attribute_map() -> None:
    assert attribute_map_reads(ROOT) == set()


def test_an_attribute_map_read_is_reported(tmp_path: Path) -> None:
    target = tmp_path / "tests/services/test_sample.py"
    target.parent.mkdir(parents=True)
    target.write_text('def test(item):\n    assert item["version"] == 2\n', encoding="utf-8")
    assert attribute_map_reads(tmp_path) == set()
    target.write_text(
        'def test(item):\n    assert item["version"]["N"] == "2"\n'
        '    assert item.get("outbox", {}).get("S")\n',
        encoding="utf-8",
    )
    assert attribute_map_reads(tmp_path) == {
        ("tests/services/test_sample.py", 2),
        ("tests/services/test_sample.py", 3),
    }


MAX_CLASS_LINES = 300
MAX_PUBLIC_METHODS = 15
SIZED = ("services/**/*.py", "infra/**/*.py", "tools/**/*.py")


def oversized_classes(root: Path) -> set[tuple[str, str, int, int]]:
    """(file, class, lines, public methods) of every class past either bound."""
    found = set()
    for path in sorted({p for pattern in SIZED for p in root.glob(pattern)}):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            public = sum(
                isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef)
                and not member.name.startswith("_")
                for member in node.body
            )
            if lines > MAX_CLASS_LINES or public > MAX_PUBLIC_METHODS:
                found.add((path.relative_to(root).as_posix(), node.name, lines, public))
    return found


def test_every_class_fits_in_a_head() -> None:
    assert oversized_classes(ROOT) == set()


def test_a_class_past_either_bound_is_reported(tmp_path: Path) -> None:
    target = tmp_path / "services/sample/app.py"
    target.parent.mkdir(parents=True)

    def write(methods: int, padding: int) -> None:
        body = "".join(f"    def m{i}(self): ...\n" for i in range(methods))
        target.write_text(f"class Sample:\n{body}" + "    x = 0\n" * padding, encoding="utf-8")

    write(MAX_PUBLIC_METHODS, MAX_CLASS_LINES - MAX_PUBLIC_METHODS - 1)
    assert oversized_classes(tmp_path) == set()
    write(MAX_PUBLIC_METHODS + 1, 0)
    assert oversized_classes(tmp_path) == {("services/sample/app.py", "Sample", 17, 16)}
    write(1, MAX_CLASS_LINES)
    assert {name for _file, name, _lines, _public in oversized_classes(tmp_path)} == {"Sample"}
