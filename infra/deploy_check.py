"""The deploy rehearsal (``make deploy-check``): what a first ``cdk deploy`` must survive.

Synthesizes ``stage=prod`` with the real dependency layer (pip, for Lambda's
aarch64 Linux) and ``stage=dev`` beside it, lets cdk-nag fail the synth on any
unacknowledged finding, holds both templates to the deploy rules
(``infra/rules.py``), lints the prod template with cfn-lint, checks the layer
and the code against Lambda's size limits, and imports every handler module in a fresh interpreter
whose path holds the code asset, the layer's packages and the runtime's boto3,
nothing else (``-I -S``: no site-packages, no environment).

The layer holds compiled wheels (pydantic-core) for aarch64 and the runtime's
CPython. They load only on that machine and that interpreter, so on another
machine the import runs against a twin of the layer: the same pinned
requirements installed by pip for this machine's platform, which must resolve
to exactly the same distributions and versions (checked) -- the modules are the
same, only the compiled extensions differ. The interpreter is the runtime's
CPython when it can be found (``python3.13`` on PATH, a pyenv version, or
``CANASTA_RUNTIME_PYTHON``); otherwise this one, and the report says so.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.assets import (
    REPO,
    build_assets,
    build_layer,
    compile_bytecode,
    pip_commands,
    runtime_python,
)
from infra.config import Config
from infra.rules import RULES, check

BUILD_DIR = REPO / "build" / "deploy-check"
UNZIPPED_LIMIT = 250 * 1024 * 1024
"""Lambda: a function's code and all its layers, unzipped."""
ZIPPED_LIMIT = 50 * 1024 * 1024
"""Lambda: a deployment package or layer archive uploaded directly."""
RUNTIME_PACKAGES = ("boto3",)
"""What the Lambda Python runtime provides itself (the layer leaves it out)."""
LINT_IGNORED = ["W3005"]
"""CDK adds a DependsOn on each function's role that its GetAtt already implies."""


REHEARSAL_CONTEXT = {"stage": "prod", "bundle": True, "sesFromEmail": "noreply@example.com"}
"""An operator's first production deploy: production needs an SES sender, whose verification
in the account is for ``make preflight`` to check, not the template."""


class CheckFailed(Exception):
    pass


@dataclass(frozen=True)
class Sizes:
    unzipped: int
    zipped: int


def size_of(directory: Path, archive: Path) -> Sizes:
    """Bytes of the files under ``directory``, and of the zip CDK would upload."""
    unzipped = sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                zipped.write(path, path.relative_to(directory))
    return Sizes(unzipped, archive.stat().st_size)


def check_sizes(code: Path, layer: Path, work: Path) -> list[str]:
    code_size = size_of(code, work / "code.zip")
    layer_size = size_of(layer, work / "layer.zip")
    total = code_size.unzipped + layer_size.unzipped
    lines = [
        f"{name:6} {s.unzipped / 1e6:7.1f} MB unzipped, {s.zipped / 1e6:6.1f} MB zip"
        for name, s in (("code", code_size), ("layer", layer_size))
    ]
    lines.append(f"total  {total / 1e6:7.1f} MB unzipped (limit {UNZIPPED_LIMIT / 1e6:.1f} MB)")
    if total > UNZIPPED_LIMIT:
        raise CheckFailed(f"code and layer unzipped: {total} bytes > {UNZIPPED_LIMIT}")
    for name, sizes in (("code", code_size), ("layer", layer_size)):
        if sizes.zipped > ZIPPED_LIMIT:
            raise CheckFailed(f"{name} zipped: {sizes.zipped} bytes > {ZIPPED_LIMIT}")
    return lines


def distributions(site: Path) -> set[str]:
    """``name-version`` of every distribution installed in ``site``."""
    return {p.name.removesuffix(".dist-info") for p in site.glob("*.dist-info")}


def install(target: Path, python_version: str, machine: str, packages: tuple[str, ...]) -> Path:
    """pip-install ``packages`` (pinned as installed here) for ``machine`` into ``target``."""
    if target.exists():
        shutil.rmtree(target)
    for command in pip_commands(
        target,
        python_version,
        tracing=False,
        platform=f"manylinux2014_{machine}",
        packages=packages,
    ):
        subprocess.run(command, check=True)
    return target


@dataclass(frozen=True)
class Deployed:
    """What a cold start imports from: an interpreter and the path a function's has."""

    interpreter: str
    path: list[str]
    """The code asset, the layer's packages (or their twin) and the runtime's boto3."""
    notes: list[str]


def deployed_path(
    code: Path, layer_site: Path, python_version: str, tracing: bool, work: Path
) -> Deployed:
    """The runtime's interpreter and a function's path, as close to Lambda's as this machine
    allows: a twin of the layer where its compiled wheels cannot load here, and boto3
    compiled as the runtime ships it."""
    machine = platform.machine()
    interpreter = runtime_python(python_version)
    notes = []
    if interpreter is None:
        interpreter = sys.executable
        notes.append(
            f"no CPython {python_version} here: importing with {platform.python_version()}"
        )
        found = "%d.%d" % sys.version_info[:2]  # noqa: UP031
    else:
        found = python_version
    site = layer_site
    if machine != "aarch64" or found != python_version:
        twin = build_layer(
            work / "twin",
            found,
            bundle=True,
            tracing=tracing,
            machine=machine,
            interpreter=interpreter,
        )
        site = twin / "python"
        expected = {d.split("-")[0] for d in distributions(layer_site)}
        if {d.split("-")[0] for d in distributions(site)} != expected:
            raise CheckFailed(
                f"the {machine} twin of the layer differs: {sorted(distributions(site))} "
                f"vs {sorted(distributions(layer_site))}"
            )
        if found == python_version and distributions(site) != distributions(layer_site):
            raise CheckFailed("the twin of the layer resolved other versions")
        notes.append(f"imported against a {machine} CPython {found} twin of the layer")
    runtime = install(work / "runtime", found, machine, RUNTIME_PACKAGES)
    compile_bytecode(runtime, interpreter)
    return Deployed(interpreter, [str(code), str(site), str(runtime)], notes)


def lambda_env(tracing: bool) -> dict[str, str]:
    """The environment a handler's import reads (the function's, less the stack's ARNs)."""
    return {
        "AWS_REGION": "eu-west-1",
        "AWS_DEFAULT_REGION": "eu-west-1",
        "POWERTOOLS_METRICS_NAMESPACE": "Canasta",
        "POWERTOOLS_TRACE_DISABLED": "false" if tracing else "true",
        "PYDANTIC_DISABLE_PLUGINS": "__all__",
        "PATH": os.environ.get("PATH", ""),
    }


def check_bytecode(directory: Path, python_version: str) -> str:
    """Every module under ``directory`` has its bytecode for the runtime's CPython."""
    tag = f"cpython-{python_version.replace('.', '')}"
    sources = list(directory.rglob("*.py"))
    missing = [
        p for p in sources if not (p.parent / "__pycache__" / f"{p.stem}.{tag}.pyc").is_file()
    ]
    if missing:
        raise CheckFailed(
            f"{len(missing)} of {len(sources)} modules in {directory.name} have no {tag} "
            f"bytecode, e.g. {missing[0]}"
        )
    return f"{directory.name}: {len(sources)} modules, each with {tag} bytecode"


def import_handlers(
    code: Path, layer_site: Path, python_version: str, tracing: bool, work: Path
) -> list[str]:
    """Import every handler module with only the code, the layer and boto3 on the path."""
    from infra.manifest import FUNCTIONS  # noqa: PLC0415

    deployed = deployed_path(code, layer_site, python_version, tracing, work)
    modules = sorted({spec.handler.rsplit(".", 1)[0] for spec in FUNCTIONS.values()})
    entries = sorted({spec.handler for spec in FUNCTIONS.values()})
    script = (
        "import importlib, sys\n"
        f"sys.path[:0] = {deployed.path!r}\n"
        f"for entry in {entries!r}:\n"
        "    module, name = entry.rsplit('.', 1)\n"
        "    getattr(importlib.import_module(module), name)\n"
        "leaked = [m.__file__ for m in list(sys.modules.values())\n"
        "          if getattr(m, '__file__', None) and 'site-packages' in m.__file__]\n"
        "assert not leaked, leaked\n"
    )
    result = subprocess.run(
        [deployed.interpreter, "-I", "-S", "-c", script],
        env=lambda_env(tracing),
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise CheckFailed(f"a handler module does not import:\n{result.stderr}")
    return [
        *deployed.notes,
        f"imported {len(modules)} handler modules ({len(entries)} entry points)",
    ]


def check_rules(templates: Mapping[str, tuple[Mapping[str, Any], Config]]) -> list[str]:
    """Every stage's template against the deploy rules; any finding fails the rehearsal."""
    findings = [
        f"{stage}: {finding}"
        for stage, (template, config) in templates.items()
        for finding in check(template, config)
    ]
    if findings:
        raise CheckFailed(f"{len(findings)} deploy rule findings:\n" + "\n".join(findings))
    return [f"stage={stage}: {len(RULES)} checked, 0 findings" for stage in templates]


def lint(template: dict[str, object], work: Path) -> None:
    from cfnlint.api import ManualArgs, lint_file  # type: ignore[import-untyped]  # noqa: PLC0415

    path = work / "template.json"
    path.write_text(json.dumps(template), encoding="utf-8")
    matches = lint_file(path, config=ManualArgs(regions=["us-east-1"], ignore_checks=LINT_IGNORED))
    if matches:
        raise CheckFailed("cfn-lint:\n" + "\n".join(str(m) for m in matches))


def main() -> int:
    import aws_cdk as cdk  # noqa: PLC0415

    from infra.app import SYNTH_DEFAULTS  # noqa: PLC0415
    from infra.components.runtime import PYTHON_VERSION  # noqa: PLC0415
    from infra.config import Config, file_context, stack_name  # noqa: PLC0415
    from infra.nag import add_checks  # noqa: PLC0415
    from infra.stack import CanastaStack  # noqa: PLC0415

    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    context = {**SYNTH_DEFAULTS, **file_context(), **REHEARSAL_CONTEXT}
    app = cdk.App(outdir=str(BUILD_DIR / "cdk.out"), context=context)
    config = Config.from_context(app.node.try_get_context)
    assets = build_assets(BUILD_DIR, PYTHON_VERSION, bundle=True, tracing=config.tracing)
    stack = CanastaStack(app, stack_name(config), config=config, assets=assets)
    # The default stage too, for the rules: the same context and assets, its own switches.
    dev = Config.from_context({**context, "stage": "dev", "sesFromEmail": None}.get)
    dev_stack = CanastaStack(app, stack_name(dev), config=dev, assets=assets)
    add_checks(app)
    try:
        # cdk-nag: an unacknowledged finding makes the synth raise.
        assembly = app.synth()
        template = assembly.get_stack_by_name(stack.stack_name).template
        print(f"synth  stage=prod, cdk-nag clean, {len(template['Resources'])} resources")
        dev_template = assembly.get_stack_by_name(dev_stack.stack_name).template
        for line in check_rules({"prod": (template, config), "dev": (dev_template, dev)}):
            print(f"rules  {line}")
        lint(template, BUILD_DIR)
        print("lint   cfn-lint clean")
        for line in check_sizes(assets.code, assets.layer, BUILD_DIR):
            print(f"size   {line}")
        if runtime_python(PYTHON_VERSION) is not None:
            for directory in (assets.code, assets.layer / "python"):
                print(f"pyc    {check_bytecode(directory, PYTHON_VERSION)}")
        else:
            print(f"pyc    NOT CHECKED: no CPython {PYTHON_VERSION} here (no bytecode shipped)")
        for line in import_handlers(
            assets.code, assets.layer / "python", PYTHON_VERSION, config.tracing, BUILD_DIR
        ):
            print(f"import {line}")
    except CheckFailed as exc:
        print(f"deploy-check failed: {exc}", file=sys.stderr)
        return 1
    print("deploy-check passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
