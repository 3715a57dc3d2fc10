"""A whole match played by a client that knows only the contract, against the local stack.

The client reads nothing from the server's code: it signs in as the contract
says, decodes its token's claims, connects, learns its player id from
``welcome``, keeps the connection alive with ``ping``, and plays from
``legal_actions`` until ``match_result``. Every frame it sends is checked
against ``ClientMessage`` and every frame it receives against
``ServerMessage`` (the JSON Schemas in docs/asyncapi.json), and every answer
must echo the ``cid`` of the message it answers while pushes carry none.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from itertools import count
from pathlib import Path
from typing import Any

import aiohttp
import pytest

pytestmark = pytest.mark.integration

jsonschema = pytest.importorskip("jsonschema")
from tests.ecma import Draft202012  # noqa: E402 - needs jsonschema

ROOT = Path(__file__).resolve().parents[2]
CONTRACT: dict[str, Any] = json.loads((ROOT / "docs" / "asyncapi.json").read_text("utf-8"))
MATCH_SECONDS = 240


def _validator(name: str) -> Any:
    root = {"$ref": f"#/components/schemas/{name}", "components": CONTRACT["components"]}
    return Draft202012(root)


SERVER = _validator("ServerMessage")
CLIENT = _validator("ClientMessage")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def stack() -> Iterator[int]:
    """``python -m local`` on a free port, the way ``make play`` starts it."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "local", "--port", str(port), "--turn-seconds", "60"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    lines: list[str] = []
    deadline = time.time() + 120
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip())
        if "Press Ctrl-C to stop." in line:
            break
    else:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail("the local stack did not start:\n" + "\n".join(lines))
    try:
        yield port
    finally:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


class ContractClient:
    """A client written from the contract: its messages, its answers, its correlation ids."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, player_id: str) -> None:
        self.ws = ws
        self.player_id = player_id
        self.received: Counter[str] = Counter()
        self.pushes: list[dict[str, Any]] = []
        """Frames that arrived while waiting for an answer, in order."""
        self._cids = count(1)

    async def send(self, message: dict[str, Any]) -> str:
        cid = f"c-{next(self._cids)}"
        framed = {**message, "cid": cid}
        CLIENT.validate(framed)
        await self.ws.send_json(framed)
        return cid

    async def receive(self, timeout: float = 60) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(await self.ws.receive_str(timeout=timeout))
        SERVER.validate(message)
        self.received[message["type"]] += 1
        return message

    async def ask(self, message: dict[str, Any], answers: set[str]) -> dict[str, Any]:
        """Send and wait for the answer that echoes the ``cid``; pushes meanwhile are kept."""
        cid = await self.send(message)
        while True:
            frame = await self.receive()
            if frame.get("cid") == cid:
                assert frame["type"] in answers | {"error"}, frame
                return frame
            assert "cid" not in frame, f"a push carries a cid: {frame}"
            self.pushes.append(frame)


def _claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    padded = payload + "=" * (-len(payload) % 4)
    claims: dict[str, Any] = json.loads(base64.urlsafe_b64decode(padded))
    return claims


def _choose(legal: list[dict[str, Any]]) -> dict[str, Any]:
    """A move from ``legal_actions``: take the pile or draw; meld when possible; else discard."""
    for kind in ("take_pile", "draw", "meld", "discard"):
        for move in legal:
            if move["type"] == kind:
                return move
    return legal[0]


async def _sign_in(session: aiohttp.ClientSession, port: int, name: str) -> tuple[str, str]:
    request = {"name": name}
    _validator("SignInRequest").validate(request)
    answer = await session.post(f"http://127.0.0.1:{port}/api/signin", json=request)
    assert answer.status == 200
    body = await answer.json()
    _validator("SignInResponse").validate(body)
    claims = _claims(body["token"])
    _validator("TokenClaims").validate(claims)
    assert claims["sub"] == body["player_id"] and claims["exp"] > time.time()
    return body["token"], body["player_id"]


async def _play_match(client: ContractClient, first: dict[str, Any]) -> dict[str, Any]:
    """Play the client's seat from ``first`` (a view) until the match result; returns it."""
    latest = first
    deadline = time.time() + MATCH_SECONDS
    while time.time() < deadline:
        view = latest["view"]
        if latest["type"] == "view" and view["turn"] == view["seat"] and view["legal_actions"]:
            move = _choose(view["legal_actions"])
            answer = await client.ask(
                {
                    "action": "play",
                    "table_id": latest["table_id"],
                    "version": latest["version"],
                    "move": move,
                },
                {"view"},
            )
            if answer["type"] == "error":
                assert answer["code"] == "stale_version", answer
                latest = answer["view"]
            else:
                assert answer["version"] == latest["version"] + 1
                latest = answer
            frames = client.pushes
        else:
            frames = [await client.receive()]
        client.pushes = []
        for frame in frames:
            assert "cid" not in frame
            if frame["type"] == "match_result":
                return frame
            if frame["type"] == "view" and frame["version"] > latest["version"]:
                latest = frame
    raise AssertionError(f"no match_result within {MATCH_SECONDS} s: {client.received}")


async def _connect(session: aiohttp.ClientSession, port: int, name: str) -> ContractClient:
    token, player_id = await _sign_in(session, port, name)
    ws = await session.ws_connect(f"ws://127.0.0.1:{port}/ws?token={token}")
    client = ContractClient(ws, player_id)
    welcome = await client.ask({"action": "hello"}, {"welcome"})
    assert welcome["type"] == "welcome" and welcome["player_id"] == player_id
    assert welcome["idle_seconds"] == 600
    pong = await client.ask({"action": "ping"}, {"pong"})
    assert pong["type"] == "pong"
    nothing = await client.ask({"action": "sync"}, {"view"})
    assert (nothing["type"], nothing["code"]) == ("error", "no_table")
    return client


async def _friends_match(port: int) -> tuple[ContractClient, dict[str, Any]]:
    async with aiohttp.ClientSession() as session:
        client = await _connect(session, port, "Contract Host")
        lobby = await client.ask({"action": "create_table", "mode": "one_round"}, {"lobby"})
        assert lobby["type"] == "lobby" and lobby["status"] == "forming"
        assert lobby["host"] == lobby["you"] == client.player_id
        started = await client.ask({"action": "fill_bots"}, {"lobby"})
        assert started["type"] == "lobby" and started["status"] == "started"
        assert started["table_id"] and all(started["seats"].values())
        first = await _first_view(client)
        assert first["table_id"] == started["table_id"]
        result = await _play_match(client, first)
        await client.ws.close()
        return client, result


async def _queue_match(port: int) -> tuple[ContractClient, dict[str, Any]]:
    async with aiohttp.ClientSession() as session:
        client = await _connect(session, port, "Contract Queuer")
        queued = await client.ask({"action": "queue", "mode": "one_round"}, {"queued"})
        assert queued["type"] == "queued" and queued["stake"] == 0
        first = await _first_view(client)
        result = await _play_match(client, first)
        await client.ws.close()
        return client, result


async def _first_view(client: ContractClient) -> dict[str, Any]:
    for frame in client.pushes:
        if frame["type"] == "view":
            return frame
    while True:
        frame = await client.receive()
        assert "cid" not in frame
        if frame["type"] == "view":
            client.pushes = []
            return frame


def _check_result(client: ContractClient, result: dict[str, Any]) -> None:
    assert result["winner"] in ("A", "B")
    assert sorted(result["rewards"]) == ["1", "2", "3", "4"]
    assert client.received["view"] > 1
    assert client.received["round_result"] >= 1


def test_a_friends_match_played_from_the_contract(stack: int) -> None:
    client, result = asyncio.run(_friends_match(stack))
    _check_result(client, result)


def test_a_quick_start_match_played_from_the_contract(stack: int) -> None:
    client, result = asyncio.run(_queue_match(stack))
    _check_result(client, result)


def test_the_validators_refuse_what_the_contract_forbids() -> None:
    """The checks above are real: a frame without its tag, a seat 5, a bad cid are refused,
    and a server message with a field added later is accepted (server schemas are open)."""
    welcome = {
        "type": "welcome",
        "player_id": "p-1",
        "name": "Ann",
        "protocol": 1,
        "idle_seconds": 600,
    }
    SERVER.validate(welcome)
    SERVER.validate({**welcome, "added_later": True})
    for broken in (
        {k: v for k, v in welcome.items() if k != "type"},
        {k: v for k, v in welcome.items() if k != "idle_seconds"},
        {**welcome, "type": "welcomed"},
        {**welcome, "cid": ""},
        {"type": "queue_left", "reason": "bored"},
    ):
        with pytest.raises(jsonschema.ValidationError):
            SERVER.validate(broken)
    with pytest.raises(jsonschema.ValidationError):
        CLIENT.validate({"action": "sync", "unknown": 1})
    with pytest.raises(jsonschema.ValidationError):
        CLIENT.validate({"action": "queue", "mode": "arena", "stake": 7})
    move = {"action": "play", "table_id": "t", "version": 1, "move": {"type": "draw"}}
    CLIENT.validate(move)
    with pytest.raises(jsonschema.ValidationError):
        CLIENT.validate({**move, "move": {"type": "discard", "tile": "14R"}})
