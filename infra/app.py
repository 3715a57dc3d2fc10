"""The CDK app: ``cdk synth`` / ``cdk deploy`` run it (cdk.json), or ``python -m infra.app``.

Run directly, it reads the context of cdk.json and ``-c key=value`` arguments
like the CDK CLI, and writes the cloud assembly to ``cdk.out``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aws_cdk as cdk

from infra.assets import DEFAULT_BUILD_DIR, REPO, build_assets
from infra.components.runtime import PYTHON_VERSION
from infra.config import (
    Config,
    ConfigError,
    add_context_option,
    context_overrides,
    file_context,
    stack_name,
)
from infra.nag import add_checks
from infra.stack import CanastaStack

SYNTH_DEFAULTS: dict[str, Any] = {"aws:cdk:disable-stack-trace": True}
"""What the CLI sets unless --debug: no creation stack trace recorded for every construct."""


def add_stack(app: cdk.App, config: Config, build_dir: Path = DEFAULT_BUILD_DIR) -> CanastaStack:
    """Build the assets (the dependency layer only with ``bundle``) and the stack."""
    assets = build_assets(build_dir, PYTHON_VERSION, bundle=config.bundle, tracing=config.tracing)
    return CanastaStack(app, stack_name(config), config=config, assets=assets)


def parse_args(argv: Sequence[str]) -> dict[str, str]:
    parser = argparse.ArgumentParser(prog="python -m infra.app", description=__doc__)
    add_context_option(parser)
    return context_overrides(parser, parser.parse_args(argv).context)


def main(argv: Sequence[str] | None = None) -> int:
    overrides = parse_args(sys.argv[1:] if argv is None else argv)
    # The CLI sets CDK_OUTDIR and passes the context itself, which overrides these defaults.
    app = cdk.App(
        context={**SYNTH_DEFAULTS, **file_context(), **overrides},
        outdir=os.environ.get("CDK_OUTDIR", str(REPO / "cdk.out")),
    )
    try:
        config = Config.from_context(app.node.try_get_context)
    except ConfigError as exc:
        print(f"infra.app: {exc}", file=sys.stderr)
        return 2
    add_stack(app, config)
    add_checks(app)
    app.synth()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
