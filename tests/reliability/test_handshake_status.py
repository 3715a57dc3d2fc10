"""The handshake's HTTP status through the real local gateway, as the contract states it.

An expired token is answered 401 (get a new one), a forged or missing one 403
(do not retry with it), a valid one opens the WebSocket: what API Gateway
answers for an authorizer that raises ``Unauthorized`` or returns Deny.
"""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest

from local.__main__ import Relay
from local.aws import LocalAws
from local.issuer import SigningKey
from services.common.auth import Identity
from tests.integration.harness import served_issuer
from tests.reliability.test_gateway import gateway

pytestmark = pytest.mark.integration


async def _status(url: str, token: str | None) -> int:
    query = "" if token is None else f"?token={token}"
    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(url + query) as ws:
                await ws.close()
                return 101
        except aiohttp.WSServerHandshakeError as exc:
            return exc.status


def test_expired_tokens_get_401_and_forged_ones_403(aws: tuple[LocalAws, Relay]) -> None:
    _, relay = aws
    now = time.time()
    issuer = served_issuer()
    impostor = SigningKey()
    impostor.kid = issuer.keys[0].kid
    tokens = {
        "valid": issuer.issue(Identity("ann", "Ann"), now=now, ttl=600),
        "expired": issuer.issue(Identity("ann", "Ann"), now=now - 3600, ttl=60),
        "forged": impostor.sign(
            {"iss": issuer.url, "aud": issuer.audience, "sub": "ann", "exp": now + 600}
        ),
        "garbage": "v1.x.y",
    }

    async def scenario() -> dict[str, int]:
        async with gateway(relay) as url:
            statuses = {name: await _status(url, token) for name, token in tokens.items()}
            statuses["missing"] = await _status(url, None)
            return statuses

    assert asyncio.run(scenario()) == {
        "valid": 101,
        "expired": 401,
        "forged": 403,
        "garbage": 403,
        "missing": 403,
    }
