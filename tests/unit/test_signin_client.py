"""The web client's sign-in module (web/signin.js), run under node's test runner."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

SUITE = Path(__file__).with_name("signin.test.mjs")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_signin_module() -> None:
    done = subprocess.run(
        ["node", "--test", "--test-reporter=dot", str(SUITE)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
