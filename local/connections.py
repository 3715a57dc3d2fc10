"""The ``@connections`` management endpoint that the handlers post to, served locally.

It speaks the API Gateway management API's wire format (``POST
/@connections/{id}``, 410 ``GoneException`` for an unknown connection), so the
handlers' ``ApiGatewayPusher`` runs unchanged against it; ``DELETE`` closes the
connection, as the operators' ``kick`` asks API Gateway to (``$disconnect`` runs).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

Deliver = Callable[[str, bytes], bool]
Close = Callable[[str], bool]
PREFIX = "/@connections/"


def send_json(
    handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str]
) -> None:
    """One JSON response from a ``http.server`` handler."""
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class ConnectionsEndpoint:
    """A threaded HTTP server on 127.0.0.1 that hands each post to ``deliver``."""

    def __init__(self, deliver: Deliver, port: int = 0, close: Close | None = None) -> None:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_DELETE(self) -> None:
                if not self.path.startswith(PREFIX) or endpoint.close is None:
                    self._reply(404, "NotFoundException")
                    return
                if endpoint.close(unquote(self.path[len(PREFIX) :])):
                    self._reply(200, None)
                else:
                    self._reply(410, "GoneException")

            def do_POST(self) -> None:
                if not self.path.startswith(PREFIX):
                    self._reply(404, "NotFoundException")
                    return
                connection_id = unquote(self.path[len(PREFIX) :])
                length = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(length)
                if endpoint.deliver(connection_id, data):
                    self._reply(200, None)
                else:
                    self._reply(410, "GoneException")

            def _reply(self, status: int, error: str | None) -> None:
                body = b"{}" if error is None else b'{"message":"' + error.encode() + b'"}'
                headers = {} if error is None else {"x-amzn-ErrorType": error}
                send_json(self, status, body, headers)

            def log_message(self, format: str, *args: object) -> None:
                return

        self.deliver = deliver
        self.close = close
        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="connections", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> ConnectionsEndpoint:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
