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
from services.common.protocol import SignInError
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


REFUSED_QUEUES: list[object] = [
    *(
        {"action": "queue", "mode": "arena", "stake": stake}
        for stake in ("abc", None, [], {}, float("inf"), float("nan"), "500", True, 1.5, -100)
    ),
    {"action": "queue", "mode": "arena", "stake": 100, "unknown": 1},
    {"action": "queue", "mode": "five_rounds"},
    {"action": "queue"},
    None,
    [],
    "queue",
    5,
]
"""Frames the server refuses as ``malformed`` (protocol.Queue), as the gateway hands them on."""


def test_a_queue_frame_the_server_refuses_sends_no_bots_and_raises_nothing() -> None:
    async def scenario() -> list[str]:
        asked: list[str] = []

        def waiting(queue: str) -> int:
            asked.append(queue)
            return 1

        filler = BotFiller(
            "ws://127.0.0.1:9/ws", served_issuer(), waiting=waiting, welcome=lambda _: None, grace=0
        )

        async def joins(token: str, first: dict[str, Any]) -> None:
            return None

        filler._run = joins  # type: ignore[method-assign]
        for frame in REFUSED_QUEUES:
            filler.on_queue(frame)
        filler.on_queue({"action": "queue", "mode": "arena", "stake": 100})
        await asyncio.sleep(0.3)
        await filler.close()
        return asked

    assert set(asyncio.run(scenario())) == {"arena:twos-meld:100"}, "only the frame that parses"


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


async def _post_bodies(bodies: list[bytes]) -> list[tuple[int, Any]]:
    """Each body posted in turn to ``/api/signin`` of one gateway: status and answer."""
    gateway = Gateway(served_issuer())
    runner, url = await _serve(gateway)
    signin = url.replace("ws://", "http://").replace("/ws", "/api/signin")
    answers: list[tuple[int, Any]] = []
    try:
        async with aiohttp.ClientSession() as session:
            for body in bodies:
                headers = {"Content-Type": "application/json"}
                async with session.post(signin, data=body, headers=headers) as answer:
                    text = await answer.text()
                    try:
                        answers.append((answer.status, json.loads(text)))
                    except ValueError:
                        answers.append((answer.status, text[:200]))
    finally:
        await runner.cleanup()
        gateway.close()
    return answers


NOT_REQUESTS = {
    "nested 10,000 deep": b"[" * 10_000 + b"]" * 10_000,
    "a null name": b'{"name": null}',
    "true": b"true",
    "a number": b"12345",
    "a number as the name": b'{"name": 12345}',
    "true as the name": b'{"name": true}',
    "a list as the name": b'{"name": ["Ann"]}',
    "no name": b'{"secret": "x"}',
    "not JSON": b"{name: Ann",
    "not UTF-8": b'{"name": "\xff\xfe"}',
    "a lone surrogate": b'{"name": "\\ud800"}',
    "a secret that is no string": b'{"name": "Ann", "secret": {"$gt": ""}}',
    "an unknown field": b'{"name": "Ann", "admin": true}',
    "nothing": b"",
}


def _is_refusal(answer: tuple[int, Any], status: int, code: str) -> bool:
    got, body = answer
    if got != status or not isinstance(body, dict) or body.get("code") != code:
        return False
    SignInError.model_validate(body)  # the contract's shape
    return "token" not in body


def test_a_body_that_is_not_a_sign_in_request_is_refused_400_malformed_and_makes_no_account(
    harness: Harness,
) -> None:
    bodies = list(NOT_REQUESTS.values())
    later = [json.dumps({"name": name}).encode() for name in ("None", "True", "12345")]
    answers = asyncio.run(_post_bodies([*bodies, *later]))
    refused = dict(zip(NOT_REQUESTS, answers, strict=False))
    wrong = {
        case: answer
        for case, answer in refused.items()
        if not _is_refusal(answer, 400, "malformed")
    }
    assert not wrong, wrong
    for status, body in answers[len(bodies) :]:
        assert status == 200 and body["secret"], "a refused body made an account of that name"


NOT_NAMES = ("Ann (bot)", "A\u200bnn", "Ann\u202e", "   ", "x" * 25, "<b>Ann</b>")


def test_text_that_is_no_display_name_is_refused_400_invalid_name(harness: Harness) -> None:
    answers = asyncio.run(_post_bodies([json.dumps({"name": n}).encode() for n in NOT_NAMES]))
    wrong = {
        n: a
        for n, a in zip(NOT_NAMES, answers, strict=True)
        if not _is_refusal(a, 400, "invalid_name")
    }
    assert not wrong, wrong


CYRILLIC_ANN = "\u0410nn"
ACCOUNTS = ("Ann", "Ann Lee")
LOOK_ALIKES = (CYRILLIC_ANN, "\uff21\uff4e\uff4e", "Ann.", "ANN", " Ann  Lee")


def test_a_name_that_looks_like_an_account_s_is_taken_409_without_its_secret(
    harness: Harness,
) -> None:
    names = [*ACCOUNTS, *LOOK_ALIKES]
    answers = asyncio.run(_post_bodies([json.dumps({"name": n}).encode() for n in names]))
    made, refused = answers[: len(ACCOUNTS)], answers[len(ACCOUNTS) :]
    assert [status for status, _ in made] == [200, 200]
    wrong = {
        name: answer
        for name, answer in zip(LOOK_ALIKES, refused, strict=True)
        if not _is_refusal(answer, 409, "name_taken")
    }
    assert not wrong, wrong


async def _look_alike_with_the_secret() -> tuple[dict[str, Any], dict[str, Any]]:
    gateway = Gateway(served_issuer())
    runner, url = await _serve(gateway)
    signin = url.replace("ws://", "http://").replace("/ws", "/api/signin")
    try:
        async with aiohttp.ClientSession() as session:
            async with session.post(signin, json={"name": "Ann"}) as answer:
                first: dict[str, Any] = await answer.json()
            look_alike = {"name": CYRILLIC_ANN, "secret": first["secret"]}
            async with session.post(signin, json=look_alike) as answer:
                assert answer.status == 200
                again: dict[str, Any] = await answer.json()
    finally:
        await runner.cleanup()
        gateway.close()
    return first, again


def test_the_account_s_secret_signs_in_under_a_look_alike_as_the_account(
    harness: Harness,
) -> None:
    first, again = asyncio.run(_look_alike_with_the_secret())
    assert again["player_id"] == first["player_id"]
    assert again["name"] == "Ann", "the table shows the account's name, not the look-alike"
