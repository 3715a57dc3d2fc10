"""The contract's display-name pattern means in JavaScript what it means to the server.

JSON Schema's ``pattern`` is ECMA-262; the contract's name pattern uses Unicode
classes, which JavaScript reads with the ``u`` flag (as the web client does).
For names already in the form the server keeps (NFC, single spaces, trimmed),
JavaScript's verdict and the server's (``services.common.names``) must agree.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from pydantic import ValidationError

from services.common.names import DISPLAY_NAME, NAME_PATTERN

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = (
    "Ann",
    "Анна",
    "李小龙",
    "O'Neil",
    "Jean-Luc Ph.D",
    "ann_2",
    "Jos\u00e9",
    "\u01c5ak",  # a titlecase letter
    "\u02b0i",  # a modifier letter
    "\u0661\u0662\u0663",  # Arabic-Indic digits
    "\u216b",  # a Roman numeral (a letter number)
    "\u00bd",  # a vulgar fraction (another number)
    "x" * 24,
    "x" * 25,
    "Ann (bot)",
    "A\u200bnn",
    "Ann\u202e",
    "ann@example",
    "Ann\U0001f480",
    "Ann\u00a0Lee",
    "e\u0301",  # a combining mark on its own
    "",
)


def _server_accepts(name: str) -> bool:
    try:
        return DISPLAY_NAME.validate_python(name) == name
    except ValidationError:
        return False


def test_the_contract_s_name_pattern_reads_the_same_in_javascript() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is missing: the contract's patterns are checked with it")
    contract = json.loads((ROOT / "docs" / "asyncapi.json").read_text("utf-8"))
    pattern = contract["components"]["schemas"]["SignInRequest"]["properties"]["name"]["pattern"]
    assert pattern == NAME_PATTERN
    assert f"/{NAME_PATTERN}/u" in (ROOT / "web" / "app.js").read_text("utf-8"), "the web client's"
    script = (
        "const r = new RegExp(process.argv[1], 'u');"
        "console.log(JSON.stringify(JSON.parse(process.argv[2]).map((x) => r.test(x))));"
    )
    done = subprocess.run(
        [node, "-e", script, pattern, json.dumps(SAMPLES)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    javascript = dict(zip(SAMPLES, json.loads(done.stdout), strict=True))
    server = {name: _server_accepts(name) for name in SAMPLES}
    assert javascript == server
    assert server["Анна"] and not server["Ann (bot)"]
