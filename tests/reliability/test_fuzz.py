"""Hostile input at every door of the local stack: an answer for each, never a traceback.

The doors are read, not listed: every WebSocket route of the deployed API
(``infra.manifest``, ``$default`` included; ``$connect`` is the handshake's
token, ``$disconnect`` a socket dropped in the middle) and every endpoint the
local gateway's aiohttp router serves, so a new route or endpoint is fuzzed
without a change here. The stack is composed as ``python -m local`` composes
it: the gateway with the sign-in's welcome and the bots' queue hook.

Seeded and bounded (a few hundred requests, well under a minute), each input
is hostile by construction: wrong types, nesting 10,000 deep, strings past
every limit, ``NaN`` and ``1e400``, lone surrogates, control and bidi
characters, missing fields, unknown actions, binary frames. It fails on

- any log record with a traceback, or at ERROR, from any logger, or at
  WARNING from the stack's own (``canasta*``), aiohttp's or the root logger;
- any HTTP status of 500 or more;
- a WebSocket message that is not answered by exactly one ``error`` frame
  with a code of the protocol (never ``internal``), or a socket that does not
  stay open (a ``ping`` after the last still gets its ``pong``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import socket
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, get_args

import pytest
from aiohttp import (
    ClientError,
    ClientResponseError,
    ClientSession,
    ClientTimeout,
    WSMsgType,
    web,
)
from pydantic import BaseModel

from infra import manifest
from local.__main__ import Relay
from local.aws import LocalAws
from local.bots import BotFiller
from local.gateway import Gateway
from services.common.auth import Identity
from services.common.dynamo_storage import DynamoStorage
from services.common.protocol import ERROR_CODE_NAMES, ClientMessage
from services.ledger import handler as ledger_handler
from services.matchmaking.store import QueueStore
from tests.integration.harness import served_issuer
from tools.schemas.examples import examples

pytestmark = pytest.mark.integration

SEED = 20261203
PER_FIELD = 3
"""Hostile values each field of each example gets."""
PER_CONNECTION = 30
REPLY_SECONDS = 15
DEEP = 10_000
HOSTILE = (
    "1e400",
    "-1e400",
    "NaN",
    "Infinity",
    "true",
    "false",
    "{}",
    "[]",
    '{"$ne": 1}',
    '[1, "2", null]',
    "-1",
    "[" * DEEP + "]" * DEEP,
    '{"a":' * 3000 + "1" + "}" * 3000,
    json.dumps("x" * 9000),
    '"\\ud800"',
    '"\\u0000\\u0007"',
    json.dumps("\u202e\u200bAnn\ufeff"),
    json.dumps("\U0001d504\U0001d52b\U0001d52b"),
    json.dumps("e\u0301" * 40),
)
"""JSON values that no field of any client message accepts (as JSON text)."""
RAW = (
    "",
    "{{{",
    "null",
    "5",
    '"queue"',
    "[]",
    '{"action": 5}',
    '{"action": null}',
    '{"action": ["queue"]}',
    '{"action": "\\ud800"}',
    '{"action": "' + "q" * 5000 + '"}',
    "[" * DEEP + "]" * DEEP,
    '{"action": "queue", "action": "play"}',
)
"""Whole frames for ``$default``: not JSON, not an object, no usable ``action``."""
BODIES = (
    b"[" * DEEP + b"]" * DEEP,
    b'{"name": null}',
    b"true",
    b"12345",
    b'{"name": 12345}',
    b'{"name": ["Ann"]}',
    b'{"name": "\\ud800"}',
    b'{"name": NaN}',
    b'{"name": 1e400}',
    b'{"name": "Ann", "secret": {"$gt": ""}}',
    b"\xff\xfe\x00garbage",
    b'{"name": "' + b"x" * 60_000 + b'"}',
    b'{"name": "' + b"x" * 70_000 + b'"}',
    b"",
)
QUERIES = ("?token=", "?token=a.b.c", "?token=" + "x" * 9000, "?token=%00%ff", "?" + "&" * 500)
METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS")
TAILS = ("index.html", "..%2f..%2fpyproject.toml", "%00", "a" * 3000, "../" * 20)


@dataclass
class Findings:
    problems: list[str] = field(default_factory=list)

    def add(self, where: str, what: str) -> None:
        self.problems.append(f"{where}: {what}")


class Records(logging.Handler):
    """Every log record that says something broke."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.found: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        ours = record.name == "root" or record.name.startswith(("canasta", "aiohttp"))
        broke = record.exc_info is not None or record.levelno >= logging.ERROR
        if broke or (ours and record.levelno >= logging.WARNING):
            self.found.append(record)

    def lines(self) -> list[str]:
        """One line per kind of record, with how often it came."""
        kinds = Counter(
            f"log {r.name} {r.levelname}: {r.getMessage()[:120]}"
            + (f" ({r.exc_info[0].__name__})" if r.exc_info and r.exc_info[0] else "")
            for r in self.found
        )
        return [f"{line} x{count}" for line, count in kinds.items()]


def _loggers() -> list[logging.Logger]:
    """The root logger and every logger that keeps its records from it (Powertools')."""
    found = [logging.getLogger()]
    for logger in list(logging.root.manager.loggerDict.values()):
        if isinstance(logger, logging.Logger) and not logger.propagate:
            found.append(logger)
    return found


@pytest.fixture
def records() -> Iterator[Records]:
    handler = Records()
    watched = _loggers()
    for logger in watched:
        logger.addHandler(handler)
    try:
        yield handler
    finally:
        for logger in watched:
            logger.removeHandler(handler)


@asynccontextmanager
async def local_stack(aws: LocalAws, relay: Relay) -> AsyncIterator[tuple[Gateway, str]]:
    """The gateway as ``python -m local`` composes it; yields it and its ``http://`` root."""
    issuer = served_issuer()
    settings = aws.settings
    ledger = ledger_handler.service()
    queues = QueueStore(DynamoStorage.of(aws.client("dynamodb"), settings))

    def welcome(identity: Identity) -> None:
        ledger.welcome(identity.player_id, settings.welcome_points, settings.welcome_jokers)

    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    root = f"http://127.0.0.1:{listening.getsockname()[1]}"
    filler = BotFiller(
        root.replace("http", "ws") + "/ws",
        issuer,
        waiting=lambda queue: len(queues.waiting(queue, 8)),
        welcome=welcome,
    )
    gateway = Gateway(issuer, on_signin=welcome, on_queue=filler.on_queue)
    relay.target = gateway
    gateway.loop = asyncio.get_running_loop()
    runner = web.AppRunner(gateway.app, access_log=None)
    await runner.setup()
    await web.SockSite(runner, listening).start()
    try:
        yield gateway, root
    finally:
        await filler.close()
        await gateway.close_sockets()
        await runner.cleanup()
        gateway.close()


# --- what is sent -------------------------------------------------------------------------


def _action(model: type[BaseModel]) -> str:
    (action,) = get_args(model.model_fields["action"].annotation)
    return str(action)


def models_by_route() -> dict[str, list[type[BaseModel]]]:
    """Every message route of the deployed API and the client messages it receives."""
    routes = [r for r in manifest.websocket_routes() if r not in ("$connect", "$disconnect")]
    found: dict[str, list[type[BaseModel]]] = {route: [] for route in routes}
    for model in get_args(get_args(ClientMessage)[0]):
        action = _action(model)
        found[action if action in found else "$default"].append(model)
    return found


def _with(example: dict[str, Any], name: str, value: str) -> str:
    """``example`` as JSON text with ``name`` set to ``value`` (JSON text itself)."""
    rest = {key: item for key, item in example.items() if key != name}
    return json.dumps(rest)[:-1] + f", {json.dumps(name)}: {value}}}"


def hostile_frames(models: list[type[BaseModel]], rng: random.Random) -> list[str | bytes]:
    """Each client message's contract examples with one field made hostile (each field in
    turn, an unknown one too), or one required field left out: the rest of the message is
    valid, so the hostile part is what the server reads last."""
    cases = examples()
    made: list[str | bytes] = []
    for model in models:
        fields = [name for name in model.model_fields if name != "action"]
        for _, example in cases[model.__name__]:
            for name in [*fields, "unknown_field"]:
                made.extend(_with(example, name, value) for value in rng.sample(HOSTILE, PER_FIELD))
            made.extend(
                json.dumps({k: v for k, v in example.items() if k != name})
                for name in fields
                if model.model_fields[name].is_required()
            )
    return [*made, rng.randbytes(64)]


# --- the WebSocket --------------------------------------------------------------------------


async def _next(ws: Any) -> dict[str, Any] | str:
    """The next frame as JSON, or why there is none."""
    try:
        frame = await ws.receive(timeout=REPLY_SECONDS)
    except TimeoutError:
        return "no answer"
    if frame.type != WSMsgType.TEXT:
        return f"the socket ended ({frame.type.name}, close code {ws.close_code})"
    answer: dict[str, Any] = json.loads(frame.data)
    return answer


async def fuzz_route(
    session: ClientSession, root: str, route: str, frames: list[str | bytes], found: Findings
) -> None:
    """Send each frame and read its one answer, an error; then a ``ping`` gets its ``pong``.

    A fresh connection every ``PER_CONNECTION`` frames, so that flood control
    (a burst of 40 per connection) refuses none of them unread."""
    token = served_issuer().issue(Identity(f"fz-{route.strip('$')}", "Fuzz"), ttl=600)
    url = root.replace("http", "ws") + f"/ws?token={token}"
    for start in range(0, len(frames), PER_CONNECTION):
        async with session.ws_connect(url) as ws:
            for frame in frames[start : start + PER_CONNECTION]:
                await (ws.send_bytes(frame) if isinstance(frame, bytes) else ws.send_str(frame))
                answer = await _next(ws)
                where = f"{route} {frame[:80]!r}"
                if isinstance(answer, str):
                    found.add(where, answer)
                    break
                if answer.get("type") != "error" or answer.get("code") not in ERROR_CODE_NAMES:
                    found.add(where, f"answered {str(answer)[:120]}")
                elif answer["code"] == "internal":
                    found.add(where, "answered internal")
            else:
                await ws.send_str('{"action": "ping"}')
                last = await _next(ws)
                if not isinstance(last, dict) or last.get("type") != "pong":
                    found.add(f"{route} ping after the last", f"answered {str(last)[:120]}")


# --- HTTP -------------------------------------------------------------------------------------


def endpoints(app: web.Application) -> list[tuple[str, str]]:
    """(method, path) of every endpoint the gateway serves, read from its router; a path
    with a variable part (or a directory of files) once with each hostile tail in it."""
    found: list[tuple[str, str]] = []
    for resource in app.router.resources():
        info = resource.get_info()
        if "prefix" in info:
            found.extend(("GET", f"{info['prefix']}/{tail}") for tail in TAILS)
            continue
        path = info.get("path") or info.get("formatter", "/")
        paths = {re.sub(r"\{[^}]*\}", tail, path) for tail in TAILS} if "{" in path else {path}
        found.extend((route.method, each) for route in resource for each in sorted(paths))
    return found


async def fuzz_endpoint(
    session: ClientSession,
    root: str,
    endpoint: tuple[str, str],
    rng: random.Random,
    found: Findings,
) -> None:
    """The endpoint's own method with hostile bodies and queries, and every other method."""
    method, path = endpoint
    requests = [(method, path + rng.choice(QUERIES), body) for body in BODIES]
    requests += [(other, path, rng.choice(BODIES)) for other in METHODS if other != method]
    for verb, target, body in requests:
        headers = {"Content-Type": rng.choice(("application/json", "text/plain", ""))}
        where = f"{verb} {target[:60]} {body[:40]!r}"
        try:
            async with session.request(verb, root + target, data=body, headers=headers) as answer:
                await answer.read()
                status = answer.status
        except ClientResponseError as exc:  # an answer the client would not read, e.g. to a
            status = exc.status  # request line over aiohttp's 8 KB
        except ClientError as exc:
            found.add(where, f"no answer ({type(exc).__name__})")
            continue
        if status >= 500:
            found.add(where, f"HTTP {status}")


# --- the test ---------------------------------------------------------------------------------


def test_no_hostile_input_reaches_a_traceback_or_a_5xx_and_each_frame_gets_one_error(
    aws: tuple[LocalAws, Relay], records: Records
) -> None:
    local, relay = aws
    rng = random.Random(SEED)
    found = Findings()

    async def scenario() -> int:
        sent = 0
        async with (
            local_stack(local, relay) as (gateway, root),
            ClientSession(timeout=ClientTimeout(total=60)) as session,
        ):
            for route, models in sorted(models_by_route().items()):
                frames = hostile_frames(models, rng)
                if route == "$default":
                    frames += list(RAW)
                await fuzz_route(session, root, route, frames, found)
                sent += len(frames)
            for endpoint in endpoints(gateway.app):
                await fuzz_endpoint(session, root, endpoint, rng, found)
                sent += len(BODIES) + len(METHODS) - 1
        return sent

    sent = asyncio.run(scenario())
    problems = found.problems + records.lines()
    assert not problems, f"{len(problems)} problems in {sent} hostile inputs:\n" + "\n".join(
        problems[:60]
    )
