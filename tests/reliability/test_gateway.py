"""Hostile frames through the real local gateway (``local/gateway.py``), over a real WebSocket.

API Gateway routes a frame it cannot read (``$request.body.action`` missing
or unparseable) to ``$default``; the local gateway must do the same, so that
the turn service answers it with an error frame and the connection stays open.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from aiohttp import ClientSession, ClientWebSocketResponse, WSMsgType, WSServerHandshakeError, web

from local.__main__ import Relay
from local.aws import LocalAws
from local.gateway import Gateway
from services.common.auth import MAX_URL_CHARS, Identity
from tests.integration.harness import served_issuer

pytestmark = pytest.mark.integration


@asynccontextmanager
async def gateway(relay: Relay) -> AsyncIterator[str]:
    """The local gateway on a free port of 127.0.0.1; yields its WebSocket URL."""
    served = Gateway(served_issuer())
    relay.target = served
    served.loop = asyncio.get_running_loop()
    runner = web.AppRunner(served.app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"ws://127.0.0.1:{runner.addresses[0][1]}/ws"
    finally:
        await runner.cleanup()
        served.close()


async def reply(ws: ClientWebSocketResponse) -> dict[str, Any]:
    message = await ws.receive(timeout=30)
    assert message.type == WSMsgType.TEXT, f"the connection ended: {message.type} {ws.close_code}"
    return json.loads(message.data)  # type: ignore[no-any-return]


FRAMES = {
    "unknown action": '{"action": "shout"}',
    "not JSON": "{{{",
    "deeply nested JSON": "[" * 5000 + "]" * 5000,
    "deeply nested object": '{"a":' * 3000 + "1" + "}" * 3000,
}


@pytest.mark.parametrize("frame", FRAMES.values(), ids=FRAMES.keys())
def test_an_unreadable_frame_gets_an_error_and_the_connection_stays_open(
    aws: tuple[LocalAws, Relay], frame: str
) -> None:
    _, relay = aws
    token = served_issuer().issue(Identity("gw1", "Gw"), ttl=600)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with (
            gateway(relay) as url,
            ClientSession() as session,
            session.ws_connect(f"{url}?token={token}") as ws,
        ):
            await ws.send_str(frame)
            refused = await reply(ws)
            await ws.send_str('{"action": "balance"}')
            return refused, await reply(ws)

    refused, after = asyncio.run(scenario())
    assert refused["type"] == "error" and refused["code"] != "internal", refused
    assert after["type"] == "balance", after


def test_a_connect_url_over_api_gateways_limit_is_refused_before_the_authorizer(
    aws: tuple[LocalAws, Relay],
) -> None:
    """API Gateway takes WebSocket URLs of at most 4,096 characters (``MAX_URL_CHARS``): the
    local gateway refuses a longer one too, so a client cannot rely on what AWS refuses."""
    _, relay = aws
    token = served_issuer().issue(Identity("gw2", "Gw"), ttl=600)

    async def scenario() -> tuple[int, int]:
        async with gateway(relay) as url, ClientSession() as session:
            base = f"{url}?token={token}&pad="
            statuses = []
            for length in (MAX_URL_CHARS, MAX_URL_CHARS + 1):
                padded = base + "x" * (length - len(base))
                assert len(padded) == length
                try:
                    async with session.ws_connect(padded) as ws:
                        await ws.send_str('{"action": "balance"}')
                        assert (await reply(ws))["type"] == "balance"
                        statuses.append(101)
                except WSServerHandshakeError as exc:
                    statuses.append(exc.status)
            return statuses[0], statuses[1]

    assert asyncio.run(scenario()) == (101, 414)
