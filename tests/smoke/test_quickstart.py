"""The README's first command, started the way a new user starts it.

``make play`` must bring up the whole local game: this runs it on a free
port, signs in over HTTP, connects a WebSocket, queues for a quick one-round
table, and waits for bots to fill it and a view to arrive. Then Ctrl-C must
stop everything cleanly, and a second start on a taken port must say so.
"""

from __future__ import annotations

import asyncio
import json
import os
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


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start(port: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHON": sys.executable}
    return subprocess.Popen(
        [
            "make",
            "--no-print-directory",
            "play",
            f"PORT={port}",
            "VENV=" + str(Path(sys.executable).parents[1]),
        ],
        cwd=ROOT,
        env=env,
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
def stack() -> Iterator[tuple[subprocess.Popen[str], int]]:
    port = _free_port()
    process = _start(port)
    try:
        yield process, port
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


async def _play_until_view(port: int) -> dict[str, object]:
    async with aiohttp.ClientSession() as session:
        answer = await session.post(
            f"http://127.0.0.1:{port}/api/signin", json={"name": "Newcomer"}
        )
        token = (await answer.json())["token"]
        async with session.ws_connect(f"ws://127.0.0.1:{port}/ws?token={token}") as ws:
            await ws.send_json({"action": "queue", "mode": "one_round"})
            while True:
                message = json.loads(await ws.receive_str(timeout=60))
                if message["type"] == "view":
                    return message


def test_make_play_starts_a_game_a_person_can_join(
    stack: tuple[subprocess.Popen[str], int],
) -> None:
    process, port = stack
    lines = _wait_for(process, "Press Ctrl-C to stop.", 120)
    assert any(f"http://127.0.0.1:{port}/" in line for line in lines)
    view = asyncio.run(_play_until_view(port))
    assert view["seat"] in (1, 2, 3, 4)
    hand = view["view"]["hand"]  # type: ignore[index]
    assert len(hand) in (14, 15)
    taken = _start(port)
    output, _ = taken.communicate(timeout=120)
    assert taken.returncode != 0
    assert "already in use" in output
    os.killpg(process.pid, signal.SIGINT)
    rest, _ = process.communicate(timeout=60)
    assert "stopped." in rest
