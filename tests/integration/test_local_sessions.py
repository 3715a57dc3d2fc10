"""Sessions on the local gateway as a person meets them in the browser.

Frames no route receives are answered like any refusal, and a person's queue
frames send bots to a queue once, however many of them arrive.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from local.bots import BotFiller
from local.gateway import MESSAGE_LIMIT, Gateway
from tests.integration.harness import Harness, served_issuer
from tests.integration.machine import stop_running

pytestmark = pytest.mark.integration


async def _serve(gateway: Gateway) -> tuple[web.AppRunner, str]:
    gateway.loop = asyncio.get_running_loop()
    runner = web.AppRunner(gateway.app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"ws://127.0.0.1:{runner.addresses[0][1]}/ws"


async def _frames_refused(harness: Harness) -> list[dict[str, Any]]:
    gateway = Gateway(served_issuer())
    runner, url = await _serve(gateway)
    answers: list[dict[str, Any]] = []
    try:
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(f"{url}?token={harness.token('p-frames')}") as ws,
        ):
            await ws.send_bytes(b"\x00\x01binary")
            answers.append(json.loads(await ws.receive_str(timeout=10)))
            await ws.send_str(json.dumps({"action": "sync", "pad": "x" * MESSAGE_LIMIT}))
            answers.append(json.loads(await ws.receive_str(timeout=10)))
            assert not ws.closed, "the gateway closed the socket instead of answering"
    finally:
        await runner.cleanup()
        gateway.close()
    return answers


def test_a_binary_or_oversized_frame_gets_an_error_frame_and_the_socket_stays(
    harness: Harness,
) -> None:
    binary, large = asyncio.run(_frames_refused(harness))
    assert binary["type"] == "error" and binary["code"] == "malformed"
    assert large["type"] == "error" and large["code"] == "message_too_large"


class _Queue:
    """A matchmaking queue as the filler sees it: people waiting, bots joining."""

    def __init__(self, people: int) -> None:
        self.waiting = people
        self.bots = 0

    def count(self, queue: str) -> int:
        return self.waiting


def test_many_queue_frames_fill_a_waiting_queue_with_bots_once() -> None:
    async def scenario() -> tuple[int, int]:
        queue = _Queue(people=1)
        filler = BotFiller(
            "ws://127.0.0.1:9/ws",
            served_issuer(),
            waiting=queue.count,
            welcome=lambda identity: None,
            grace=0.05,
            settle=2.0,
        )
        formed = itertools.count(1)

        async def joins(token: str, first: dict[str, Any]) -> None:
            queue.bots += 1
            await asyncio.sleep(0.05)  # a bot connects, then queues
            queue.waiting += 1
            if queue.waiting == 4:
                await asyncio.sleep(0.1)
                queue.waiting = 0
                next(formed)

        filler._run = joins  # type: ignore[method-assign]
        frame = {"action": "queue", "mode": "one_round"}
        for _ in range(4):  # four frames: a resend, a second tab, a refused one...
            filler.on_queue(frame)
        await asyncio.sleep(0.6)
        filler.on_queue(frame)  # the table has formed: nobody waits, no bots
        await asyncio.sleep(0.3)
        await filler.close()
        assert len(filler.players) == 3, "the gateway knows each bot it sent"
        return queue.bots, next(formed) - 1

    bots, tables = asyncio.run(scenario())
    assert (bots, tables) == (3, 1)


async def _queue_frames_heard(harness: Harness, fillers: set[str]) -> list[dict[str, Any]]:
    """What the filler hears when a person and one of its own bots queue."""
    heard: list[dict[str, Any]] = []
    gateway = Gateway(served_issuer(), on_queue=heard.append, fillers=fillers)
    runner, url = await _serve(gateway)
    try:
        async with aiohttp.ClientSession() as session:
            for player, mode in (("bot-x", "one_round"), ("bot-f1", "three_rounds")):
                async with session.ws_connect(f"{url}?token={harness.token(player)}") as ws:
                    await ws.send_str(json.dumps({"action": "queue", "mode": mode}))
                    # Frames are routed in order: this one's answer follows the queue's route.
                    await ws.send_bytes(b"\x00")
                    assert json.loads(await ws.receive_str(timeout=10))["code"] == "malformed"
    finally:
        await runner.cleanup()
        gateway.close()
        stop_running(harness)
    return heard


def test_only_the_fillers_own_bots_queue_without_calling_for_more(harness: Harness) -> None:
    """The gateway knows the filler's bots by the ids it gave them, not by how an id reads:
    a person whose id starts ``bot-`` waits for a table like anyone, and gets bots."""
    heard = asyncio.run(_queue_frames_heard(harness, {"bot-f1"}))
    assert heard == [{"action": "queue", "mode": "one_round"}]


async def _signins(harness: Harness) -> list[tuple[int, dict[str, Any]]]:
    gateway = Gateway(served_issuer())
    runner, url = await _serve(gateway)
    signin = url.replace("ws://", "http://").replace("/ws", "/api/signin")
    answers: list[tuple[int, dict[str, Any]]] = []
    try:
        async with aiohttp.ClientSession() as session:

            async def post(body: dict[str, Any]) -> dict[str, Any]:
                async with session.post(signin, json=body) as answer:
                    answers.append((answer.status, await answer.json()))
                    return answers[-1][1]

            first = await post({"name": "Ann"})
            await post({"name": "Ann"})
            await post({"name": " ann ", "secret": "guessed"})
            await post({"name": "Ann", "secret": first["secret"]})
            await post({"name": "Bob"})
    finally:
        await runner.cleanup()
        gateway.close()
    return answers


def test_a_taken_name_needs_the_secret_its_first_sign_in_got(harness: Harness) -> None:
    first, again, guessed, proven, other = asyncio.run(_signins(harness))
    assert first[0] == 200 and first[1]["secret"]
    for status, body in (again, guessed):
        assert status == 409
        assert body["code"] == "name_taken"
        assert "token" not in body
        assert "taken" in body["error"]
    assert proven[0] == 200
    assert proven[1]["player_id"] == first[1]["player_id"]
    assert other[0] == 200 and other[1]["secret"] != first[1]["secret"]


async def _issuer_documents() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], str]:
    issuer = served_issuer()
    gateway = Gateway(issuer)
    runner, url = await _serve(gateway)
    http = url.removesuffix("/ws")
    try:
        async with aiohttp.ClientSession() as session:
            documents = []
            for path in (
                "/.well-known/jwks.json",
                "/.well-known/openid-configuration",
                "/config.json",
            ):
                async with session.get(http + path) as answer:
                    assert answer.status == 200
                    documents.append(await answer.json())
            async with session.post(http + "/api/signin", json={"name": "Cleo"}) as answer:
                token = (await answer.json())["token"]
    finally:
        await runner.cleanup()
        gateway.close()
    jwks, discovery, config = documents
    return jwks, discovery, config, token


def test_the_gateway_publishes_the_local_issuers_keys_and_signs_in_with_them(
    harness: Harness,
) -> None:
    """The sign-in's token is an RS256 JWT the authorizer verifies against those keys."""
    jwks, discovery, config, token = asyncio.run(_issuer_documents())
    issuer = served_issuer()
    assert [k["kid"] for k in jwks["keys"]] == [k.kid for k in issuer.keys]
    assert {k["kty"] for k in jwks["keys"]} == {"RSA"} and all("d" not in k for k in jwks["keys"])
    assert discovery["issuer"] == issuer.url and discovery["jwks_uri"] == issuer.jwks_url
    assert config["auth"] == {"kind": "local", "signin_url": "/api/signin", "issuer": issuer.url}
    policy = harness.authorize(token)
    assert policy["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    assert policy["context"]["name"] == "Cleo"
