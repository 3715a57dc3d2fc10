"""The parts of the infra package that need no CDK: context parsing, bundling, token issuing."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from infra import manifest
from infra.assets import (
    LAYER_PACKAGES,
    PLATFORM,
    REPO,
    SOURCE_PACKAGES,
    build_assets,
    build_code,
    build_layer,
    pip_commands,
)
from infra.config import CONTEXT_KEYS, Config, ConfigError
from infra.manifest import FUNCTIONS, TIMERS, handler_modules
from services.common.settings import LedgerClient
from tests.test_architecture import imports

pytestmark = pytest.mark.infra
ROOT = "arn:aws:iam::111122223333:root"


# --- configuration -------------------------------------------------------------------


def test_defaults() -> None:
    config = Config.from_context(lambda key: None)
    assert config == Config()
    assert (config.stage, config.turn_seconds, config.log_retention_days) == ("dev", 60, 30)
    assert not config.protect_tables and not config.retain_data
    assert config.bundle, "a plain synth builds the layer: what it writes can be deployed"
    # What a new account's first deploy must survive (infra/README.md).
    assert not config.reserved_concurrency and not config.api_gateway_logs_role


def test_context_strings_from_the_command_line_are_parsed() -> None:
    given = {
        "stage": "prod",
        "sesFromEmail": " noreply@example.com ",
        "turnSeconds": "45",
        "intermissionSeconds": "30",
        "logRetentionDays": "90",
        "throttleRate": "50",
        "throttleBurst": "80",
        "archiveRetentionDays": "0",
        "tracing": "true",
        "turnP99AlarmMs": "750",
        "bundle": "FALSE",
        "apiGatewayLogsRole": "true",
        "reservedConcurrency": True,
        "queueSeconds": "90",
        "arenaStakes": "100,250",
    }
    config = Config.from_context(given.get)
    assert config == Config(
        stage="prod",
        ses_from_email="noreply@example.com",
        turn_seconds=45,
        intermission_seconds=30,
        log_retention_days=90,
        throttle_rate=50,
        throttle_burst=80,
        archive_retention_days=0,
        tracing=True,
        turn_p99_alarm_ms=750,
        bundle=False,
        api_gateway_logs_role=True,
        reserved_concurrency=True,
        queue_seconds=90,
        arena_stakes=(100, 250),
    )
    assert not config.protect_tables and config.retain_data
    assert (config.message_rate, config.message_burst) == (50, 80)


@pytest.mark.parametrize("given", [[100, 250], "[100,250]", " 100, 250 ", (100, 250)])
def test_arena_stakes_come_as_json_lists_or_comma_separated(given: Any) -> None:
    assert Config.from_context({"arenaStakes": given}.get).arena_stakes == (100, 250)


def test_deletion_protection_only_when_asked_for_so_a_first_create_can_roll_back() -> None:
    """A protected table cannot be deleted by a failed first create's rollback (infra/README.md:
    production is created unprotected, then deployed again with deletionProtection)."""
    prod = Config(stage="prod", ses_from_email="noreply@example.com")
    assert not prod.protect_tables and prod.retain_data
    assert Config.from_context({**prod_context(), "deletionProtection": "true"}.get).protect_tables
    assert Config(stage="staging", deletion_protection=True).protect_tables
    assert not Config(stage="staging").retain_data


def prod_context() -> dict[str, Any]:
    return {"stage": "prod", "sesFromEmail": "noreply@example.com"}


def test_production_sends_its_players_email_through_ses() -> None:
    """Cognito's own sender stops at 50 emails a day: production must name an SES sender."""
    with pytest.raises(ConfigError, match="sesFromEmail"):
        Config.from_context({"stage": "prod"}.get)
    assert Config.from_context(prod_context().get).ses_from_email == "noreply@example.com"
    # With the platform's issuer there is no user pool to send anything.
    Config(stage="prod", oidc_issuer="https://id.example", oidc_audience="canasta")


def test_access_logs_only_where_the_accounts_logs_role_is() -> None:
    assert not Config().stage_access_logs
    assert Config(access_logs=True).stage_access_logs
    assert Config(api_gateway_logs_role=True).stage_access_logs


def test_the_stage_throttle_is_sized_from_the_expected_peak() -> None:
    """10,000 matches a day × 350 messages ≈ 40.5 a second on average; the busiest hour is
    about three times that, and the stage keeps half as much again above it."""
    assert (Config().message_rate, Config().message_burst) == (190, 380)
    assert Config(matches_per_day=100_000).message_rate == 1830
    assert Config(matches_per_day=10).message_rate == 50
    assert Config(throttle_rate=70).message_rate == 70
    assert Config(throttle_rate=70).message_burst == 140
    with pytest.raises(ConfigError, match="throttleRate"):
        Config(matches_per_day=10_000_000)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("stage", "Prod"),
        ("stage", "a-b"),
        ("turnSeconds", "2"),
        ("turnSeconds", "soon"),
        ("intermissionSeconds", "601"),
        ("logRetentionDays", "31"),
        ("tracing", "yes"),
        ("throttleRate", "0"),
        ("matchesPerDay", "0"),
        ("deletionProtection", "maybe"),
        ("queueSeconds", "5"),
        ("arenaStakes", "[]"),
        ("arenaStakes", "100,100"),
        ("arenaStakes", "100,lots"),
        ("arenaStakes", "[100,"),
        ("arenaStakes", "0"),
        ("arenaStakes", {"stake": 100}),
        ("oidcIssuer", "https://id.example"),
        ("oidcAudience", "canasta"),
        ("oidcJwksUrl", "https://id.example/keys"),
        ("webUrls", "http://play.example/"),
        ("webUrls", "[]"),
        ("webUrls", "https://play.example/?x=1"),
        ("authDomainPrefix", "My_Game"),
        ("authDomainPrefix", "canasta-aws"),
        ("ledgerClients", "[]"),
        ("ledgerClients", "{"),
        ("ledgerClients", {"Rummy": {"pointsPerBooking": 1, "pointsPerDay": 1}}),
        ("ledgerClients", {"1": {"pointsPerBooking": 1, "pointsPerDay": 1}}),
        ("ledgerClients", {"rummy": {"pointsPerBooking": 1}}),
        ("ledgerClients", {"rummy": {"pointsPerBooking": "1", "pointsPerDay": 1}}),
        ("ledgerClients", {"rummy": {"pointsPerBooking": 10**15, "pointsPerDay": 1}}),
        ("ledgerClients", {"rummy": {"pointsPerBooking": 1, "pointsPerDay": 1, "other": 1}}),
        ("ledgerClients", {"rummy": {"principal": "*", "pointsPerBooking": 1, "pointsPerDay": 1}}),
        (
            "ledgerClients",
            {"rummy": {"principal": f"{ROOT}\n", "pointsPerBooking": 1, "pointsPerDay": 1}},
        ),
    ],
)
def test_bad_context_is_refused(key: str, value: Any) -> None:
    with pytest.raises(ConfigError):
        Config.from_context({key: value}.get)


@pytest.mark.parametrize(
    "given",
    [
        {"stage": "prod\n"},
        {"auth_domain_prefix": "canasta-game\n"},
        {"oidc_issuer": "https://id.example/players\n", "oidc_audience": "canasta"},
    ],
    ids=repr,
)
def test_every_pattern_matches_the_whole_value(given: dict[str, Any]) -> None:
    """The context's text values are stripped; nothing else is: a trailing newline is no
    stage, domain prefix, issuer or (above) principal."""
    with pytest.raises(ConfigError):
        Config(**given)


def test_an_existing_issuer_replaces_the_user_pool() -> None:
    given = {
        "oidcIssuer": "https://id.rummy.example/realms/players",
        "oidcAudience": "canasta",
        "webUrls": "https://play.rummy.example/canasta/, http://localhost:8080/",
    }
    config = Config.from_context(given.get)
    assert not config.own_user_pool
    assert config.oidc_issuer == "https://id.rummy.example/realms/players"
    assert config.web_urls == ("https://play.rummy.example/canasta/", "http://localhost:8080/")
    assert Config().own_user_pool


@pytest.mark.parametrize(
    "given",
    [
        {"oidcIssuer": "http://id.example", "oidcAudience": "canasta"},
        {"oidcIssuer": "https://id.example", "oidcAudience": ""},
        {"oidcIssuer": "https://id.example", "oidcAudience": "c", "oidcJwksUrl": "file:///k"},
        {"oidcIssuer": "https://id.example", "oidcAudience": "c", "authDomainPrefix": "x"},
    ],
)
def test_an_issuer_needs_https_and_an_audience(given: dict[str, str]) -> None:
    with pytest.raises(ConfigError):
        Config.from_context(given.get)


TOPIC = "arn:aws:sns:eu-west-1:111122223333:platform-alarms"


def test_alarms_go_to_an_existing_topic_or_the_stacks_own_which_may_mail_someone() -> None:
    existing = Config.from_context({"alarmTopicArn": f" {TOPIC} "}.get)
    assert (existing.alarm_topic_arn, existing.alarm_email) == (TOPIC, None)
    mailed = Config.from_context({"alarmEmail": "ops@play.example"}.get)
    assert (mailed.alarm_topic_arn, mailed.alarm_email) == (None, "ops@play.example")


@pytest.mark.parametrize(
    ("given", "refusal"),
    [
        ({"alarmTopicArn": "arn:aws:sqs:eu-west-1:111122223333:alarms"}, "alarmTopicArn"),
        ({"alarmTopicArn": "platform-alarms"}, "alarmTopicArn"),
        ({"alarmEmail": "ops@"}, "alarmEmail"),
        # The existing topic's subscribers are its owner's: the stack does not add one.
        ({"alarmTopicArn": TOPIC, "alarmEmail": "ops@play.example"}, "with 'alarmTopicArn'"),
    ],
    ids=repr,
)
def test_bad_alarm_context_is_refused_by_name(given: dict[str, str], refusal: str) -> None:
    with pytest.raises(ConfigError, match=refusal):
        Config.from_context(given.get)


def test_every_config_field_has_a_context_key_documented() -> None:
    readme = (Path(__file__).resolve().parents[2] / "infra" / "README.md").read_text()
    for key in CONTEXT_KEYS.values():
        assert f"`{key}`" in readme, key


# --- function specs ------------------------------------------------------------------


def test_queue_consumers_name_known_queues() -> None:
    for spec in FUNCTIONS.values():
        assert spec.queue is None or spec.queue == TIMERS or spec.queue in manifest.CONSUMERS


def test_the_matchmaking_defaults_are_the_services_own() -> None:
    from services.common.settings import Settings

    config, settings = Config(), Settings.model_fields
    assert config.queue_seconds == settings["queue_seconds"].default
    assert config.arena_stakes == settings["arena_stakes"].default


def test_only_matchmaking_uses_the_state_machine_and_only_the_ledger_api_is_external() -> None:
    starts = {k for k, s in FUNCTIONS.items() if s.starts_tickets}
    answers = {k for k, s in FUNCTIONS.items() if s.answers_tickets}
    assert (starts, answers) == ({"matchmaking-ws"}, {"matchmaking-ws", "matchmaking-events"})
    assert FUNCTIONS["matchmaking-events"].queue == "matchmaking"
    assert {k for k, s in FUNCTIONS.items() if s.external_api} == {"ledger-api"}


def test_exactly_one_authorizer_and_each_route_once() -> None:
    assert sum(spec.authorizer for spec in FUNCTIONS.values()) == 1
    routes = [route for spec in FUNCTIONS.values() for route in spec.routes]
    assert len(routes) == len(set(routes))


# --- bundling ------------------------------------------------------------------------


def test_the_layer_is_installed_for_the_lambda_platform_with_pinned_versions(
    tmp_path: Path,
) -> None:
    (command,) = pip_commands(tmp_path, "3.13", tracing=False)
    assert command[:4] == [sys.executable, "-m", "pip", "install"]
    text = " ".join(command)
    assert f"--platform {PLATFORM}" in text
    assert "--python-version 3.13" in text
    assert "--only-binary=:all:" in text
    assert f"--target {tmp_path}" in text
    for package in LAYER_PACKAGES:
        assert any(arg.startswith(f"{package}==") for arg in command), package
    assert not any(arg.startswith(("boto3", "botocore")) for arg in command)


def test_tracing_adds_the_xray_sdk_without_its_botocore(tmp_path: Path) -> None:
    _, tracer = pip_commands(tmp_path, "3.13", tracing=True)
    assert "--no-deps" in tracer
    assert any(arg.startswith("aws-xray-sdk") for arg in tracer)


def test_without_bundle_the_layer_is_a_placeholder_and_pip_never_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_pip(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("pip ran")

    monkeypatch.setattr("subprocess.run", no_pip)
    layer = build_layer(tmp_path, "3.13", bundle=False, tracing=True)
    assert [p.name for p in (layer / "python").iterdir()] == ["PLACEHOLDER.txt"]


def test_a_bundled_layer_is_reused_while_its_requirements_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs: list[list[str]] = []

    def fake_pip(command: list[str], check: bool) -> None:
        runs.append(command)
        target = Path(command[command.index("--target") + 1])
        (target / "pydantic").mkdir(parents=True, exist_ok=True)

    monkeypatch.setattr("subprocess.run", fake_pip)
    first = build_layer(tmp_path, "3.13", bundle=True, tracing=False)
    again = build_layer(tmp_path, "3.13", bundle=True, tracing=False)
    assert first == again and len(runs) == 1
    build_layer(tmp_path, "3.13", bundle=True, tracing=True)
    assert len(runs) == 3


def test_the_bundled_code_ships_unchecked_bytecode_of_the_interpreter_given(
    tmp_path: Path,
) -> None:
    """A function's directory is read-only and its zip keeps no modification times: only
    bytecode of the runtime's magic number that never looks at the source is loaded."""
    code = build_code(tmp_path, sys.executable)
    tag = sys.implementation.cache_tag
    sources = list(code.rglob("*.py"))
    assert sources
    for source in sources:
        compiled = source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc"
        header = compiled.read_bytes()[:8]
        assert header[:4] == importlib.util.MAGIC_NUMBER, compiled
        # PEP 552 flags: bit 0 hash-based, bit 1 check_source (left unset).
        assert int.from_bytes(header[4:8], "little") == 0b01, compiled


def test_bundling_without_the_runtimes_interpreter_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("infra.assets.runtime_python", lambda version: None)
    with pytest.raises(RuntimeError, match=r"CPython 3\.13"):
        build_assets(tmp_path, "3.13", bundle=True, tracing=False)
    assert not (tmp_path / "code").exists(), "nothing is built without the bytecode"


def test_the_code_copy_has_the_sources_and_no_caches(tmp_path: Path) -> None:
    code = build_code(tmp_path)
    assert (code / "services" / "relay" / "handler.py").is_file()
    assert (code / "shared_engine").is_dir()
    assert not list(code.rglob("__pycache__"))
    assert not list(code.rglob("*.pyc"))


def test_the_code_asset_carries_no_development_tool(tmp_path: Path) -> None:
    """The generators, demos and simulations, the CDK app and the local stack stay out of
    the Lambda asset; every handler's module is in it."""
    code = build_code(tmp_path)
    shipped = {p.relative_to(code).as_posix() for p in code.rglob("*.py")}
    tools = {p.relative_to(REPO).as_posix() for p in (REPO / "tools").rglob("*.py")}
    assert tools, "the tools package exists"
    assert not {top for top in {s.split("/")[0] for s in shipped}} - set(SOURCE_PACKAGES)
    assert not shipped & tools
    # A tool copied in under another path: the same text (names such as events.py are
    # shared by a tool and a service module, so names alone cannot tell).
    tool_texts = {(REPO / t).read_bytes() for t in tools} - {b""}
    assert not {s for s in shipped if (code / s).read_bytes() in tool_texts}
    commands = [s for s in shipped if '__name__ == "__main__"' in (code / s).read_text()]
    assert commands == [], "a command-line entry point ships"
    for module in handler_modules():
        assert module.replace(".", "/") + ".py" in shipped, module


def _loaded_by(code: Path, module: str) -> set[str]:
    """Every module of the asset that importing ``module`` may load (imports inside
    functions count; the type checker's do not), followed through the asset's own files."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        base = code / name.replace(".", "/")
        path = (
            base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        )
        if name in seen or not path.is_file():
            continue  # seen, or a name a module defines, or a library
        seen.add(name)
        todo.extend(m for m in imports(path) if m.split(".")[0] in SOURCE_PACKAGES)
    return seen


def test_the_test_doubles_beside_their_ports_ship_but_no_handler_loads_the_storage(
    tmp_path: Path,
) -> None:
    """``MemoryStorage`` and ``RecordingTelemetry`` are in the asset, and may be: each lives
    beside the port it implements (``Storage``, ``Telemetry``) in the runtime package, so the
    test tiers and the benchmarks take them from where the ports are, and the in-memory
    storage changes with the contract it shares with ``DynamoStorage``. They import only the
    standard library and the package itself, a few kilobytes; the in-memory storage is a
    module no handler imports, so no cold start loads it."""
    code = build_code(tmp_path)
    assert (code / "services" / "common" / "memory_storage.py").is_file()
    assert "class RecordingTelemetry" in (code / "services" / "common" / "telemetry.py").read_text()
    for module in handler_modules():
        assert "services.common.memory_storage" not in _loaded_by(code, module), module


def test_cdk_json_runs_the_app_and_its_context_is_the_defaults() -> None:
    import json

    cdk_json = json.loads((Path(__file__).resolve().parents[2] / "cdk.json").read_text())
    assert cdk_json["app"].endswith("python -m infra.app")
    context = cdk_json["context"]
    assert set(context) <= set(CONTEXT_KEYS.values())
    assert Config.from_context(context.get) == Config()


def test_ledger_clients_come_as_json_with_their_limits_and_principals() -> None:
    given = (
        '{"rummy": {"principal": "arn:aws:iam::111122223333:role/rummy", '
        '"pointsPerBooking": 10000, "pointsPerDay": 100000, "jokersPerBooking": 2, '
        '"jokersPerDay": 10}, "poker": {"pointsPerBooking": 5, "pointsPerDay": 50}}'
    )
    rummy, poker = Config.from_context({"ledgerClients": given}.get).ledger_clients
    assert (rummy.name, rummy.principal) == ("rummy", "arn:aws:iam::111122223333:role/rummy")
    assert rummy.limits == LedgerClient(
        points_per_booking=10000, points_per_day=100000, jokers_per_booking=2, jokers_per_day=10
    )
    assert (poker.name, poker.principal, poker.limits.jokers_per_booking) == ("poker", None, 0)
    assert Config().ledger_clients == ()


def test_a_ledger_client_in_day_shards_must_fit_each_booking_in_one_share() -> None:
    """A booking larger than one counter's share of the day could never be booked."""
    sharded = LedgerClient(points_per_booking=125, points_per_day=1000, day_shards=8)
    assert sharded.shard_limits == (125, 0)
    assert LedgerClient(points_per_booking=900, points_per_day=1000).shard_limits == (1000, 0)
    with pytest.raises(ValidationError, match="at most the day's limits / 8"):
        LedgerClient(points_per_booking=126, points_per_day=1000, day_shards=8)
    with pytest.raises(ValidationError, match="at most the day's limits / 2"):
        LedgerClient(
            points_per_booking=1,
            points_per_day=10,
            jokers_per_booking=2,
            jokers_per_day=3,
            day_shards=2,
        )
    given = {
        "ledgerClients": {"rummy": {"pointsPerBooking": 5, "pointsPerDay": 50, "dayShards": 20}}
    }
    with pytest.raises(ConfigError, match="rummy"):
        Config.from_context(given.get)
