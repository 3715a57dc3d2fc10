"""The Lambda code and dependency layer, built as plain directories at synth time (no Docker).

- Code: ``shared_engine/`` and ``services/`` copied into ``<build>/code`` (caches left out),
  without the engine's command-line edge (``DEVELOPMENT_MODULES``); the development
  tools (``tools/``), the CDK app and the local stack are other packages and never
  ship. Every function shares this one asset; only the handler differs.
- Bytecode: when bundling, the code and the layer ship ``.pyc`` files compiled by
  the runtime's CPython (the magic number must match it, so the build finds that
  interpreter: ``runtime_python``). A function's directory is read-only, so
  without them every cold start compiles every module again and keeps nothing.
  They are hash-based and unchecked: the asset's zip does not keep the sources'
  modification times, which timestamp-checked bytecode would compare and reject.
- Layer: the runtime dependencies (pydantic, Powertools, PyJWT with cryptography, OpenSkill)
  installed by pip for the Lambda platform (``manylinux2014_aarch64``, CPython of
  the runtime's version) into ``<build>/layer/python``, only when bundling
  (``-c bundle=true``). Without it the layer is a placeholder: synth stays fast
  and offline (tests, ``cdk synth``, ``cdk diff``), and such a stack must not be
  deployed. boto3 is not bundled: the Lambda runtime provides it.

The versions installed are those of the environment that synthesizes, so the
layer carries what the tests ran with.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_BUILD_DIR = REPO / "build" / "infra"
SOURCE_PACKAGES = ("shared_engine", "services")
DEVELOPMENT_MODULES = ("shared_engine/scenarios.py",)
"""Modules of the source packages no handler imports: the conformance runner's command
line (``python -m shared_engine.scenarios``), which reads files."""
LAYER_PACKAGES = ("pydantic", "aws-lambda-powertools", "PyJWT", "cryptography", "openskill")
TRACING_PACKAGES = ("aws-xray-sdk", "wrapt")
"""Powertools' Tracer needs the X-Ray SDK; installed without its dependencies, since they
would bring a second botocore that shadows the runtime's."""
PLATFORM = "manylinux2014_aarch64"
PLACEHOLDER = "PLACEHOLDER.txt"
BYTECODE = "unchecked-hash"
"""``compileall --invalidation-mode``: loaded without looking at the source's mtime."""


@dataclass(frozen=True)
class Assets:
    code: Path
    layer: Path
    bundled: bool


def pinned(packages: tuple[str, ...]) -> list[str]:
    """``name==version`` for each package as installed here, or the bare name if it is not."""
    requirements = []
    for name in packages:
        try:
            requirements.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            requirements.append(name)
    return requirements


def pip_commands(
    target: Path,
    python_version: str,
    tracing: bool,
    platform: str = PLATFORM,
    packages: tuple[str, ...] = LAYER_PACKAGES,
) -> list[list[str]]:
    """The pip invocations that fill the layer directory (one more for the tracer)."""
    base = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "--quiet",
        "--platform",
        platform,
        "--implementation",
        "cp",
        "--python-version",
        python_version,
        "--only-binary=:all:",
        "--no-compile",
        "--target",
        str(target),
    ]
    commands = [[*base, *pinned(packages)]]
    if tracing:
        commands.append([*base, "--no-deps", *pinned(TRACING_PACKAGES)])
    return commands


def runtime_python(version: str) -> str | None:
    """An interpreter of the runtime's CPython version that runs, if there is one here."""
    pyenv = glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}*/bin/python{version}"))
    candidates = [
        os.environ.get("CANASTA_RUNTIME_PYTHON"),
        *sorted(pyenv, reverse=True),
        shutil.which(f"python{version}"),
    ]
    for candidate in filter(None, candidates):
        probe = subprocess.run(
            [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=False,
        )
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return candidate
    return None


def compile_bytecode(directory: Path, interpreter: str) -> None:
    """Compile every module under ``directory`` with ``interpreter`` into ``__pycache__``."""
    options = ["-q", "-j", "0", "--invalidation-mode", BYTECODE]
    subprocess.run([interpreter, "-m", "compileall", *options, str(directory)], check=True)


def build_code(build_dir: Path, interpreter: str | None = None, source: Path = REPO) -> Path:
    """Copy the source packages (without caches) into a fresh directory; with
    ``interpreter``, ship their bytecode too. ``source``: the checkout whose packages
    ship (another one's for a benchmark's baseline)."""
    code = build_dir / "code"
    if code.exists():
        shutil.rmtree(code)
    code.mkdir(parents=True)
    caches = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".*")
    development = {source / module for module in DEVELOPMENT_MODULES}

    def ignore(directory: str, names: list[str]) -> set[str]:
        left_out = {name for name in names if Path(directory, name) in development}
        return set(caches(directory, names)) | left_out

    for package in SOURCE_PACKAGES:
        shutil.copytree(source / package, code / package, ignore=ignore)
    if interpreter is not None:
        compile_bytecode(code, interpreter)
    return code


def build_layer(
    build_dir: Path,
    python_version: str,
    *,
    bundle: bool,
    tracing: bool,
    machine: str = "aarch64",
    interpreter: str | None = None,
) -> Path:
    """The layer directory: pip-installed dependencies, or a placeholder when not bundling.

    A bundled layer is reused while its requirements are unchanged (a stamp file
    beside it records them, and whether it was compiled), so repeated synths do
    not reinstall. ``machine`` other than Lambda's aarch64 builds a twin of the
    layer for import tests. With ``interpreter`` the layer ships its bytecode.
    """
    if not bundle:
        layer = build_dir / "layer-placeholder"
        (layer / "python").mkdir(parents=True, exist_ok=True)
        (layer / "python" / PLACEHOLDER).write_text(
            "Placeholder layer: synthesize with -c bundle=true to deploy.\n", encoding="utf-8"
        )
        return layer
    suffix = "" if machine == "aarch64" else f"-{machine}"
    layer = build_dir / f"layer-py{python_version}{suffix}"
    target = layer / "python"
    commands = pip_commands(target, python_version, tracing, platform=f"manylinux2014_{machine}")
    stamp = build_dir / f"layer-py{python_version}{suffix}.requirements"
    compiled = BYTECODE if interpreter is not None else None
    wanted = hashlib.sha256(json.dumps([[c[3:] for c in commands], compiled]).encode()).hexdigest()
    if stamp.exists() and stamp.read_text(encoding="utf-8") == wanted and target.exists():
        return layer
    if layer.exists():
        shutil.rmtree(layer)
    target.mkdir(parents=True)
    for command in commands:
        subprocess.run(command, check=True)
    # Console scripts and caches are of no use in a layer.
    shutil.rmtree(target / "bin", ignore_errors=True)
    for cache in target.rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)
    if interpreter is not None:
        compile_bytecode(target, interpreter)
    stamp.write_text(wanted, encoding="utf-8")
    return layer


def build_assets(build_dir: Path, python_version: str, *, bundle: bool, tracing: bool) -> Assets:
    """The code and the layer; bundled for a deploy, with the runtime's bytecode."""
    build_dir.mkdir(parents=True, exist_ok=True)
    interpreter = None
    if bundle:
        interpreter = runtime_python(python_version)
        if interpreter is None and os.environ.get("CANASTA_BYTECODE") == "optional":
            print(
                f"warning: no CPython {python_version} here: the assets ship no bytecode, "
                "and every cold start compiles every module again",
                file=sys.stderr,
            )
        elif interpreter is None:
            raise RuntimeError(
                f"bundling needs CPython {python_version}, the runtime's, to compile the "
                f"bytecode it loads: put python{python_version} on PATH (or a pyenv "
                "version), or name it in CANASTA_RUNTIME_PYTHON (CANASTA_BYTECODE=optional "
                "bundles without bytecode)"
            )
    return Assets(
        code=build_code(build_dir, interpreter),
        layer=build_layer(
            build_dir, python_version, bundle=bundle, tracing=tracing, interpreter=interpreter
        ),
        bundled=bundle,
    )
