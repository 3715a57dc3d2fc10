"""The README's first command, started the way a newcomer starts it.

A clean clone of this repository's committed ``HEAD`` in a temporary folder,
and ``make play`` there with no virtualenv: it must create its own ``.venv``,
install only the ``local`` extra into it, and bring up the whole local game.
This signs in over HTTP, connects a WebSocket, queues for a quick one-round
table, and waits for bots to fill it and a view to arrive. Then Ctrl-C must
stop everything cleanly, and a second start on a taken port must say so.

pip's own cache and ``PIP_FIND_LINKS`` are left as the machine has them, so a
second run installs from local wheels; the test's own virtualenv is never
used (its ``bin`` is taken off ``PATH``).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
INSTALL_SECONDS = 600


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _newcomer_environment() -> dict[str, str]:
    """This environment without the test's virtualenv: a shell on a machine with python3."""
    venv_bin = str(Path(sys.executable).parent)
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != venv_bin]
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "MAKEFLAGS", "MFLAGS")
    }
    env["PATH"] = os.pathsep.join(path)
    return env


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout of the project")
    target = tmp_path_factory.mktemp("newcomer") / "tile-canasta"
    subprocess.run(
        ["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(target)],
        check=True,
        timeout=120,
    )
    assert not (target / ".venv").exists()
    return target


def _start(clone: Path, port: int) -> subprocess.Popen[str]:
    # A terminal's Ctrl-C reaches the game even when this runner was started with SIGINT
    # ignored (which children inherit; a handled signal is reset to the default on exec).
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return subprocess.Popen(
        ["make", "--no-print-directory", "play", f"PORT={port}"],
        cwd=clone,
        env=_newcomer_environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _wait_for(process: subprocess.Popen[str], text: str, seconds: float) -> list[str]:
    assert process.stdout is not None
    lines: list[str] = []
    deadline = time.time() + seconds
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip())
        if text in line:
            return lines
    raise AssertionError(f"{text!r} not printed; output was:\n" + "\n".join(lines))


@pytest.fixture
def stack(clone: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    port = _free_port()
    process = _start(clone, port)
    try:
        yield process, port
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


async def _play_until_view(port: int) -> dict[str, object]:
    async with aiohttp.ClientSession() as session:
        answer = await session.post(
            f"http://127.0.0.1:{port}/api/signin", json={"name": "Newcomer"}
        )
        token = (await answer.json())["token"]
        async with session.ws_connect(f"ws://127.0.0.1:{port}/ws?token={token}") as ws:
            await ws.send_json({"action": "queue", "mode": "one_round"})
            seen: list[str] = []
            while True:
                message = json.loads(await ws.receive_str(timeout=60))
                seen.append(message["type"])
                if message["type"] == "view":
                    assert seen[0] == "queued", seen
                    return message


def test_make_play_on_a_fresh_clone_starts_a_game_a_person_can_join(
    clone: Path, stack: tuple[subprocess.Popen[str], int]
) -> None:
    process, port = stack
    lines = _wait_for(process, "Press Ctrl-C to stop.", INSTALL_SECONDS)
    venv = clone / ".venv"
    assert (venv / "bin" / "python").exists(), "make play did not create the clone's .venv"
    assert any(f"http://127.0.0.1:{port}/" in line for line in lines)
    # Only what play needs: the test and lint tools are not installed.
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.lower()
    assert "moto==" in installed
    assert "pytest==" not in installed
    assert "ruff==" not in installed
    view = asyncio.run(_play_until_view(port))
    assert view["seat"] in (1, 2, 3, 4)
    hand = view["view"]["hand"]  # type: ignore[index]
    assert len(hand) in (14, 15)
    taken = _start(clone, port)
    output, _ = taken.communicate(timeout=120)
    assert taken.returncode != 0
    assert "already in use" in output
    os.killpg(process.pid, signal.SIGINT)
    rest, _ = process.communicate(timeout=60)
    assert "stopped." in rest
    # The console says what happened, in words: no structured logs, metrics or warnings.
    assert " formed (one_round): team A " in rest, rest
    assert ": round 1 started" in rest, rest
    printed = lines + rest.splitlines()
    assert not [line for line in printed if line.lstrip().startswith("{")], rest
    assert not [line for line in printed if "Warning" in line or "Traceback" in line], rest
