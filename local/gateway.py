"""A local WebSocket gateway that behaves like API Gateway for the handlers.

- ``GET /ws?token=…``: runs the ``$connect`` authorizer with the token from the
  query string (401 if it denies), then the ``$connect`` handler; the
  authorizer's context rides on every later event of that connection, as in
  API Gateway.
- Each text frame is routed on its ``action`` (route selection
  ``$request.body.action``) to the handler of that route, ``$default`` if none.
- Closing runs ``$disconnect``.
- The handlers post to ``@connections`` (``local.connections``), which this
  gateway delivers to the open socket.
- It also serves the web client, a local sign-in, and the local issuer's keys
  (``/.well-known/jwks.json``, ``/.well-known/openid-configuration``): the
  sign-in's tokens are RS256 JWTs of ``local.issuer``, which the authorizer
  verifies against those keys, fetched over HTTP from this port as it would
  fetch Cognito's.
- ``POST /operator/...`` is the operators' function URL (AuthType ``AWS_IAM``):
  each request is authorized as AWS does, before the function runs, against the
  role its signature's access key names (``local.iam``: ``lambda:InvokeFunctionUrl``
  and ``lambda:InvokeFunction`` with their conditions), then the handler gets the
  function URL event under its own role. There is no IAM authentication locally:
  the signature itself is not checked, and the caller the handler is told of
  (``userArn``) is the operator's name the console sends (``X-Canasta-Operator``).

Handlers are synchronous (they are Lambda functions), so they run in worker
threads, never on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import secrets
import time
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from aiohttp import WSMsgType, web
from aiohttp.http_exceptions import HttpProcessingError
from pydantic import ValidationError

from infra import manifest
from local import STAGE
from local.dispatcher import LambdaContext, load, websocket_event
from local.iam import ACCOUNT, IamEnforcer
from local.issuer import DISCOVERY_PATH, JWKS_PATH, Accounts, LocalIssuer
from services.common.auth import MAX_URL_CHARS, Identity
from services.common.names import NAME_RULE
from services.common.protocol import CloseCode, SignInError, SignInRequest, SignInResponse
from services.common.tableviews import error_message

_WEBSOCKET = manifest.websocket_routes()
ROUTES: dict[str, str] = {
    route: handler
    for route, handler in _WEBSOCKET.items()
    if route not in ("$connect", "$disconnect")
}
"""Message route (``$default`` included) → handler, as the deployed API's (``infra.manifest``)."""
AUTHORIZER = manifest.authorizer()
CONNECT = _WEBSOCKET["$connect"]
DISCONNECT = _WEBSOCKET["$disconnect"]
OPERATOR = manifest.operator_function()
OPERATOR_HANDLER = manifest.FUNCTIONS[OPERATOR].handler
OPERATOR_PATH = "/operator"
"""Where the operators' function URL is served (its own paths below it)."""
OPERATOR_HEADER = "X-Canasta-Operator"
"""Locally, who the operator is (no IAM authenticates the caller here)."""
WEB_ROOT = Path(__file__).resolve().parents[1] / "web"
WEB_HEADERS = {
    ".webmanifest": {"Content-Type": "application/manifest+json"},
    ".js": {"Content-Type": "text/javascript"},
}
"""Content types the platform's own tables may lack or name otherwise."""
WORKER = WEB_ROOT / "sw.js"
WORKER_SCOPE = {"Service-Worker-Allowed": "/"}
"""The service worker lives in ``web/`` and the page at ``/``: its scope may be the whole site."""
MESSAGE_LIMIT = 128 * 1024
"""API Gateway's message payload quota (frames of up to 32 KB make up one message)."""
READ_LIMIT = 4 * MESSAGE_LIMIT
"""What the socket reads at all; a larger message closes it (1009), as API Gateway would."""
NAME_ERRORS = frozenset({"string_pattern_mismatch", "string_too_short", "string_too_long"})
"""How pydantic says a name is text but not a display name."""


def signin_refusal(exc: ValidationError) -> tuple[int, SignInError]:
    """The status and body for a sign-in request that is not a ``SignInRequest``."""
    first = exc.errors()[0]
    if first["loc"] == ("name",) and first["type"] in NAME_ERRORS:
        return 400, SignInError(code="invalid_name", error=f"a name is {NAME_RULE}")
    where = ".".join(str(part) for part in first["loc"]) or "body"
    return 400, SignInError(
        code="malformed", error=f'send {{"name": "...", "secret": "..."}}: {where}: {first["msg"]}'
    )


def answer(status: int, body: SignInError | SignInResponse) -> web.Response:
    return web.json_response(body.model_dump(mode="json"), status=status)


class ClientErrors(logging.Filter):
    """aiohttp answers a request it cannot parse (a line over 8 KB, a broken header) with a
    400, then logs it with a traceback at ERROR: the mistake is the client's, and one line
    at INFO says so; a traceback in the gateway's log is always the server's."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, HttpProcessingError) and 400 <= error.code < 500:
            record.msg = f"{record.getMessage()}: {error.code} {error.message[:200]}"
            record.args = ()
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


CLIENT_ERRORS = ClientErrors()


def refusal(kind: WSMsgType, size: int) -> dict[str, Any]:
    """The error frame for a frame no route receives: binary, or a message of 128 KB or more.

    API Gateway closes the connection (1009) on a message over its 128 KB
    quota; here the player is told why instead, with the code the handlers
    give a message over their own limit.
    """
    if kind == WSMsgType.BINARY:
        return error_message("malformed", "send JSON text frames, not binary ones")
    return error_message(
        "message_too_large", f"messages are limited to {MESSAGE_LIMIT // 1024} KB ({size} bytes)"
    )


class Gateway:
    def __init__(
        self,
        issuer: LocalIssuer,
        *,
        routes: dict[str, str] | None = None,
        on_signin: Callable[[Identity], None] | None = None,
        on_queue: Callable[[object], None] | None = None,
        fillers: Collection[str] = (),
        config: dict[str, Any] | None = None,
        iam: IamEnforcer | None = None,
        accounts: Accounts | None = None,
    ) -> None:
        """``on_queue`` hears every ``queue`` frame but those of ``fillers``, the player ids of
        the bots it sent: to the services those are players like any other. ``iam``: the
        enforcer that authorizes the operators' function URL, which is served only with it.
        ``accounts``: the sign-in's, shared with the bots' filler, whose bots hold accounts."""
        self._issuer = issuer
        self._paths = routes or ROUTES
        self._routes = {route: load(path) for route, path in self._paths.items()}
        self._authorize = load(AUTHORIZER)
        self._connect = load(CONNECT)
        self._disconnect = load(DISCONNECT)
        self._on_signin = on_signin
        self._on_queue = on_queue
        self._fillers = fillers
        self._config = config or {}
        self._sockets: dict[str, web.WebSocketResponse] = {}
        self._accounts = accounts or Accounts()
        self._authorized: dict[str, dict[str, Any]] = {}
        self._sending: set[asyncio.Future[None]] = set()
        """Frames being written (kept referenced until done)."""
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="lambda")
        self.loop: asyncio.AbstractEventLoop | None = None
        self.app = web.Application(client_max_size=64 * 1024)
        self.app.add_routes(
            [
                web.get(f"/{STAGE}", self._websocket),
                web.post("/api/signin", self._signin),
                web.get("/config.json", self._config_json),
                web.get(JWKS_PATH, self._jwks),
                web.get(DISCOVERY_PATH, self._discovery),
                web.get("/", self._index),
                web.get("/web/{path:.*}", self._file),
            ]
        )
        self._iam = iam
        if iam is not None:
            self._operator = load(OPERATOR_HANDLER)
            self.app.router.add_post(OPERATOR_PATH + "/{path:.*}", self._function_url)
        logging.getLogger("aiohttp.server").addFilter(CLIENT_ERRORS)

    # --- @connections ------------------------------------------------------------

    def deliver(self, connection_id: str, data: bytes) -> bool:
        """Called from a handler's thread by the connections endpoint: send, or report gone.

        Like API Gateway, a post is accepted once the connection is known to be
        open; the frame is written by the event loop without the handler waiting
        for it, so a move's four pushes go out together instead of each waiting
        its turn on a loop that also serves every client. Frames to one socket
        keep their order (the loop runs the sends as they were scheduled).
        """
        socket = self._sockets.get(connection_id)
        if socket is None or socket.closed or self.loop is None:
            return False
        self.loop.call_soon_threadsafe(self._send, socket, data.decode())
        return True

    def close_connection(self, connection_id: str) -> bool:
        """``DELETE @connections/{id}``: the socket closes, and ``$disconnect`` runs as for
        any closed socket."""
        socket = self._sockets.get(connection_id)
        if socket is None or socket.closed or self.loop is None:
            return False
        self.loop.call_soon_threadsafe(
            lambda: asyncio.ensure_future(socket.close(code=CloseCode.NORMAL))
        )
        return True

    def _send(self, socket: web.WebSocketResponse, text: str) -> None:
        task = asyncio.ensure_future(socket.send_str(text))
        self._sending.add(task)
        task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Future[None]) -> None:
        """A frame to a socket that closed meanwhile is lost, as it would be in AWS."""
        self._sending.discard(task)
        if not task.cancelled():
            task.exception()

    # --- HTTP --------------------------------------------------------------------

    async def _index(self, request: web.Request) -> web.StreamResponse:
        index = WEB_ROOT / "index.html"
        if not index.exists():
            return web.Response(text="the web client is not installed", status=404)
        return web.FileResponse(index)

    async def _file(self, request: web.Request) -> web.StreamResponse:
        """A file of the web client; any path that names none is 404 (one too long for the
        file system, a NUL in it, a way out of ``web/``), never a server error."""
        try:
            path = (WEB_ROOT / request.match_info["path"]).resolve()
            if path == WEB_ROOT:
                return await self._index(request)  # the installed app starts at /web/
            found = path.is_relative_to(WEB_ROOT) and path.is_file()
        except (OSError, ValueError):
            found = False
        if not found:
            raise web.HTTPNotFound()
        headers = WEB_HEADERS.get(path.suffix, {}) | (WORKER_SCOPE if path == WORKER else {})
        return web.FileResponse(path, headers=headers)

    async def _config_json(self, request: web.Request) -> web.Response:
        host = request.headers.get("Host", request.host)
        signin = "/api/signin"
        return web.json_response(
            {
                "ws_url": f"ws://{host}/{STAGE}",
                "signin_url": signin,
                "auth": {"kind": "local", "signin_url": signin, "issuer": self._issuer.url},
                **self._config,
            }
        )

    async def _jwks(self, request: web.Request) -> web.Response:
        return web.json_response(self._issuer.jwks())

    async def _discovery(self, request: web.Request) -> web.Response:
        return web.json_response(self._issuer.discovery())

    async def _signin(self, request: web.Request) -> web.Response:
        try:
            asked = SignInRequest.model_validate_json(await request.read())
        except ValidationError as exc:
            return answer(*signin_refusal(exc))
        signed = self._accounts.sign_in(asked.name, asked.secret)
        if signed is None:
            return answer(
                409,
                SignInError(
                    code="name_taken",
                    error=f"the name {asked.name!r} is taken on this server (or one that looks "
                    "like it): pick another name, or sign in from the browser that first used it",
                ),
            )
        identity, secret = signed
        if self._on_signin is not None:
            await self._run(lambda: self._on_signin(identity) if self._on_signin else None)
        return answer(
            200,
            SignInResponse(
                token=self._issuer.issue(identity),
                player_id=identity.player_id,
                name=identity.name,
                secret=secret,
            ),
        )

    async def _function_url(self, request: web.Request) -> web.Response:
        """The operators' function URL: authorized as AWS does, then the handler's answer."""
        from botocore.exceptions import ClientError  # noqa: PLC0415

        assert self._iam is not None
        caller = access_key(request.headers.get("Authorization", ""))
        try:
            role = self._iam.check_url(caller, OPERATOR)
        except ClientError as denied:
            return web.json_response({"Message": denied.response["Error"]["Message"]}, status=403)
        event = function_url_event(
            request.method,
            "/" + request.match_info["path"],
            await request.text(),
            headers=dict(request.headers),
            caller=request.headers.get(OPERATOR_HEADER) or role.arn,
            key=caller,
        )
        reply = await self._run(lambda: self._operator(event, LambdaContext.of(OPERATOR_HANDLER)))
        return web.Response(
            status=int(reply["statusCode"]),
            text=str(reply.get("body") or ""),
            headers={"Content-Type": "application/json"},
        )

    # --- WebSocket ------------------------------------------------------------------

    async def _run(self, call: Callable[[], Any]) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, call)

    def _event(self, connection_id: str, route: str, body: str | None) -> dict[str, Any]:
        return websocket_event(connection_id, route, body, self._authorized.get(connection_id))

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        url = f"{'wss' if request.secure else 'ws'}://{request.host}{request.raw_path}"
        if len(url) > MAX_URL_CHARS:
            # API Gateway refuses the connect before any authorizer runs.
            return web.Response(status=414, text="URI Too Long")
        token = request.query.get("token", "")
        try:
            policy = await self._run(
                lambda: self._authorize(
                    {
                        "type": "REQUEST",
                        "methodArn": "arn:aws:execute-api:local:000000000000:local/local/$connect",
                        "queryStringParameters": {"token": token},
                    },
                    LambdaContext.of(AUTHORIZER),
                )
            )
        except Exception as exc:
            if str(exc) != "Unauthorized":
                raise
            return web.Response(status=401, text="Unauthorized")
        if policy["policyDocument"]["Statement"][0]["Effect"] != "Allow":
            return web.Response(status=403, text="Forbidden")
        socket = web.WebSocketResponse(heartbeat=30, max_msg_size=READ_LIMIT)
        await socket.prepare(request)
        connection_id = secrets.token_urlsafe(12)
        self._authorized[connection_id] = policy["context"]
        self._sockets[connection_id] = socket
        try:
            result = await self._run(
                lambda: self._connect(
                    self._event(connection_id, "$connect", None), LambdaContext.of(CONNECT)
                )
            )
            if result.get("statusCode") != 200:
                await socket.close()
                return socket
            async for message in socket:
                if message.type == WSMsgType.TEXT and len(message.data) < MESSAGE_LIMIT:
                    await self._route(connection_id, message.data)
                elif message.type in (WSMsgType.TEXT, WSMsgType.BINARY):
                    await socket.send_json(refusal(message.type, len(message.data)))
                elif message.type == WSMsgType.ERROR:
                    break
        finally:
            self._sockets.pop(connection_id, None)
            await self._run(
                lambda: self._disconnect(
                    self._event(connection_id, "$disconnect", None), LambdaContext.of(DISCONNECT)
                )
            )
            self._authorized.pop(connection_id, None)
        return socket

    async def _route(self, connection_id: str, body: str) -> None:
        try:
            message = json.loads(body)
            action = message.get("action")
        except (ValueError, AttributeError, RecursionError):
            message, action = None, None
        route = action if isinstance(action, str) and action in self._routes else "$default"
        handler, path = self._routes[route], self._paths[route]
        await self._run(
            lambda: handler(self._event(connection_id, route, body), LambdaContext.of(path))
        )
        player = str((self._authorized.get(connection_id) or {}).get("player_id", ""))
        if route == "queue" and self._on_queue is not None and player not in self._fillers:
            self._on_queue(message)

    async def close_sockets(self) -> None:
        """Close every open WebSocket (going away), so a stop never waits on a client."""
        for socket in list(self._sockets.values()):
            with contextlib.suppress(Exception):
                stopping = socket.close(code=CloseCode.GOING_AWAY, message=b"server stopping")
                await asyncio.wait_for(stopping, 2)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def access_key(authorization: str) -> str:
    """The access key a SigV4 ``Authorization`` header signs with (``Credential=KEY/...``)."""
    found = re.search(r"Credential=([^/,\s]+)/", authorization)
    return found.group(1) if found else ""


def function_url_event(
    method: str, path: str, body: str, *, headers: dict[str, str], caller: str, key: str
) -> dict[str, Any]:
    """A function URL's event (payload format 2.0) for a caller IAM authenticated."""
    now = time.time()
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {name.lower(): value for name, value in headers.items()},
        "requestContext": {
            "accountId": ACCOUNT,
            "apiId": "local",
            "authorizer": {
                "iam": {
                    "accessKey": key,
                    "accountId": ACCOUNT,
                    "callerId": key,
                    "userArn": caller,
                    "userId": key,
                }
            },
            "domainName": "127.0.0.1",
            "domainPrefix": "local",
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": headers.get("User-Agent", ""),
            },
            "requestId": secrets.token_hex(16),
            "routeKey": "$default",
            "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "timeEpoch": int(now * 1000),
        },
        "body": body,
        "isBase64Encoded": False,
    }
