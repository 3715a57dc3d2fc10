"""One synthesis of the CDK app per test session: dev, prod and oidc stacks, cdk-nag on.

``import aws_cdk`` (2-4 s) and the first synth (several seconds) are paid once;
every test reads the templates of that one cloud assembly. The layer is the
placeholder (no ``bundle``), so nothing is downloaded.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.infra._support import (
    ALARM_EMAIL,
    ALARM_TOPIC_ARN,
    HAVE_CDK,
    OIDC_AUDIENCE,
    OIDC_ISSUER,
    SES_FROM_EMAIL,
    SKIP_REASON,
    STAGES,
    Synthesis,
)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of the synthesis runs in one xdist worker (``--dist loadgroup``): a worker
    that needs it synthesizes the three stacks, about a CPU-minute under load, so one worker
    doing it instead of each of them is minutes of the suite's CPU. First among the hooks:
    xdist reads the group into the test's id in its own, and a mark added after it is lost."""
    for item in items:
        if "synthesis" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("synthesis"))


@pytest.fixture(scope="session")
def synthesis(tmp_path_factory: pytest.TempPathFactory) -> Synthesis:
    if not HAVE_CDK:
        pytest.skip(SKIP_REASON)
    import aws_cdk as cdk

    from infra.app import SYNTH_DEFAULTS, add_stack
    from infra.config import Config
    from infra.nag import add_checks

    outdir = tmp_path_factory.mktemp("cdk.out")
    build_dir = tmp_path_factory.mktemp("infra-build")
    started = time.perf_counter()
    app = cdk.App(outdir=str(outdir), context=dict(SYNTH_DEFAULTS))
    # Two modes: one in another account (a resource policy), one by its managed policy only.
    ledger_clients = Config.from_context(
        {
            "ledgerClients": {
                "rummy": {
                    "principal": "arn:aws:iam::111122223333:role/rummy",
                    "pointsPerBooking": 10000,
                    "pointsPerDay": 1000000,
                    "jokersPerBooking": 3,
                    "jokersPerDay": 100,
                    "dayShards": 8,
                },
                "poker": {"pointsPerBooking": 500, "pointsPerDay": 50000},
            }
        }.get
    ).ledger_clients
    configs = {
        "dev": Config(bundle=False),
        # The other branch of every switch: production (its first deploy), tracing on, other
        # timings and stakes.
        "prod": Config(
            stage="prod",
            bundle=False,
            reserved_concurrency=True,
            ses_from_email=SES_FROM_EMAIL,
            tracing=True,
            turn_seconds=45,
            turn_p99_alarm_ms=800,
            queue_seconds=90,
            arena_stakes=(100, 250),
            ledger_clients=ledger_clients,
            alarm_email=ALARM_EMAIL,
        ),
        # The platform's existing parts: its issuer signs players in (no user pool), its
        # topic takes the alarms (no topic of the stack's own).
        # Deployed again with protection, and this stack sets the account's logs role.
        "oidc": Config(
            stage="oidc",
            bundle=False,
            deletion_protection=True,
            api_gateway_logs_role=True,
            oidc_issuer=OIDC_ISSUER,
            oidc_audience=OIDC_AUDIENCE,
            alarm_topic_arn=ALARM_TOPIC_ARN,
        ),
    }
    stacks = {stage: add_stack(app, c, build_dir / stage) for stage, c in configs.items()}
    add_checks(app)
    # Raises if cdk-nag reports a finding that is not acknowledged.
    assembly = app.synth()
    seconds = time.perf_counter() - started
    templates = {
        stage: json.loads(json.dumps(assembly.get_stack_by_name(stack.stack_name).template))
        for stage, stack in stacks.items()
    }
    return Synthesis(stacks, templates, outdir, build_dir, seconds)


@pytest.fixture(params=STAGES)
def stage(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def template(synthesis: Synthesis, stage: str) -> dict[str, Any]:
    """The synthesized template of one stage (each test runs for every stage)."""
    return synthesis.templates[stage]
