"""The console's refusals before it reaches anything: each one line, never a traceback."""

from __future__ import annotations

import os

import pytest

from ops.__main__ import main
from ops.actions import ActionRefused, refusal
from ops.stage import tables_of

pytestmark = pytest.mark.unit


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """An environment where the default boto3 chain finds no credentials at all."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def test_a_deployed_stage_without_credentials_is_one_line(
    no_credentials: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--stack", "canasta-prod", "--region", "eu-west-1", "stuck"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "error: no_credentials: no AWS credentials: a profile, SSO or variables"
    ]


def test_a_stack_without_an_output_the_console_needs_is_an_old_stack() -> None:
    with pytest.raises(ActionRefused) as refused:
        tables_of({"GamesTableName": "prod-canasta-games"})
    assert refused.value.code == "old_stack"
    assert "AuditTableName" in refused.value.message


@pytest.mark.parametrize(
    ("status", "body", "code"),
    [
        (409, b'{"error": "plan_changed", "message": "look again"}', "plan_changed"),
        (403, b'{"Message": "Forbidden"}', "access_denied"),
        (502, b"Bad Gateway", "internal"),
    ],
)
def test_what_the_function_url_answers_is_a_refusal_with_its_code(
    status: int, body: bytes, code: str
) -> None:
    assert refusal(status, body).code == code
