"""The embedded AWS: moto in server mode, with every resource created and wired.

Used by the local stack and by the integration tests alike: both get the
same tables, bus, rules, queues and schedule group, the same environment for
the handlers, and the same dispatcher.
"""

from __future__ import annotations

import copy
import json
import os
import threading
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from infra.functions import FUNCTIONS, FunctionSpec
from local.connections import ConnectionsEndpoint, Deliver
from local.dispatcher import Dispatcher
from local.iam import IamEnforcer, LocalArns, install
from local.resources import LocalResources, create_resources, table_names
from services.common.settings import Settings

REGION = "eu-west-1"
HANDLER_MODULES = (
    "services.matchmaking.handler",
    "services.ledger.handler",
    "services.turn.handler",
    "services.deal.handler",
    "services.score.handler",
    "services.connect.handler",
    "services.relay.handler",
)


class _OneRequestAtATime:
    """WSGI middleware: moto's backends are not thread-safe, DynamoDB's API is.

    moto's ``transact_write_items`` copies the tables, writes, and on a failed
    condition puts the copies back, with no lock: two concurrent transactions
    can both pass their conditions, or a failed one can restore a copy taken
    before another committed (a lost write). Real DynamoDB makes each request
    atomic, so the embedded AWS serves one request at a time; the services'
    own races (read, then a conditional write) stay as they are.
    """

    def __init__(self, app: Any) -> None:
        self._app = app
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        with self._lock:
            return list(self._app(environ, start_response))


def _table_deepcopy(self: Any, memo: dict[int, Any]) -> Any:
    """moto's ``Table`` copied for a transaction's rollback, without copying its stream.

    moto's ``transact_write_items`` deep-copies every table it writes to, so that
    a cancelled transaction can put the copy back. The copy includes the
    table's whole stream (every record ever written, each with its images), so
    each move of a match costs more than the one before: a three-round match
    spent 50 of its 80 seconds in those copies. Stream records are never
    changed once written, so the copy keeps the same records in a list of its
    own: a rollback still drops exactly the records of the cancelled writes.
    Items are deep-copied as before, so what moto stores and returns is
    unchanged.
    """
    cls = self.__class__
    new = cls.__new__(cls)
    memo[id(self)] = new
    for key, value in self.__dict__.items():
        if key == "stream_shard" and value is not None:
            shard = copy.copy(value)
            shard.table = new
            shard.items = list(value.items)
            new.__dict__[key] = shard
        else:
            new.__dict__[key] = copy.deepcopy(value, memo)
    return new


def start_moto(port: int = 0) -> tuple[Any, str]:
    """A moto server on 127.0.0.1 that serves one request at a time; returns it and its URL."""
    from moto.dynamodb.models.table import Table  # noqa: PLC0415
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer  # noqa: PLC0415
    from moto.moto_server.werkzeug_app import (  # noqa: PLC0415
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server  # noqa: PLC0415

    Table.__deepcopy__ = _table_deepcopy  # type: ignore[attr-defined]

    class SerializedMotoServer(ThreadedMotoServer):
        def _server_entry(self) -> None:
            app = _OneRequestAtATime(DomainDispatcherApplication(create_backend_app))
            self._server = make_server(
                self._ip_address, self._port, app, True, request_handler=MotoRequestHandler
            )
            self._server_ready_event.set()
            self._server.serve_forever()

    server = SerializedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    host, bound = server.get_host_and_port()
    # moto's Step Functions call their service integrations on this port.
    os.environ["MOTO_PORT"] = str(bound)
    return server, f"http://{host}:{bound}"


def base_environment(moto_url: str, connections_url: str, token_secret: str) -> dict[str, str]:
    """What the CDK stack sets on each function, pointed at the local endpoints."""
    return {
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
        "CANASTA_ENDPOINT_URL": moto_url,
        "CANASTA_WEBSOCKET_ENDPOINT": connections_url,
        "CANASTA_TOKEN_SECRET": token_secret,
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "Canasta",
        "POWERTOOLS_LOG_LEVEL": os.environ.get("POWERTOOLS_LOG_LEVEL", "WARNING"),
    }


class LocalAws:
    """Resources on a running moto server, the connections endpoint and the dispatcher."""

    def __init__(
        self,
        moto_url: str,
        deliver: Deliver,
        token_secret: str,
        turn_seconds: int = 60,
        *,
        functions: Mapping[str, FunctionSpec] = FUNCTIONS,
        timing: Mapping[str, Any] | None = None,
    ) -> None:
        """``timing``: the dispatcher's ``clock`` and ``within_minute`` (tests of timers)."""
        self.moto_url = moto_url
        self.endpoint = ConnectionsEndpoint(deliver).start()
        self.environment = base_environment(moto_url, self.endpoint.url, token_secret)
        self.environment["CANASTA_TURN_SECONDS"] = str(turn_seconds)
        os.environ.update(self.environment)
        self.settings = Settings()
        _post(f"{moto_url}/moto-api/config", {"stepfunctions": {"execute_state_machine": True}})
        self.resources: LocalResources = create_resources(self.settings, self.client)
        timers = {
            "CANASTA_TIMER_QUEUE_URL": self.resources.queues["timers"],
            "CANASTA_TIMER_QUEUE_ARN": self.resources.timer_queue_arn,
            "CANASTA_SCHEDULER_ROLE_ARN": self.resources.scheduler_role_arn,
            "CANASTA_STATE_MACHINE_ARN": self.resources.state_machine_arn,
            "CANASTA_MATCHMAKING_QUEUE_URL": self.resources.queues["matchmaking"],
        }
        self.environment.update(timers)
        os.environ.update(timers)
        self.settings = Settings()
        # Every handler call from now on runs under its function's role (local/iam.py).
        self.iam = IamEnforcer(self._arns(), functions)
        install(self.iam)
        reset_handlers()
        self.dispatcher = Dispatcher(
            client=self.client,
            queues=self.resources.queues,
            stream_arn=self.resources.stream_arn,
            schedule_group=self.settings.schedule_group,
            timer_queue_url=self.resources.queues["timers"],
            **(timing or {}),
        )

    def _arns(self) -> LocalArns:
        settings = self.settings
        return LocalArns(
            region=REGION,
            tables=table_names(settings),
            event_bus=settings.event_bus,
            schedule_group=settings.schedule_group,
            state_machine=self.resources.state_machine_arn,
            scheduler_role=self.resources.scheduler_role_arn,
            timer_queue=self.resources.timer_queue_arn,
        )

    def client(self, service: str) -> Any:
        import boto3  # noqa: PLC0415

        return boto3.client(service, endpoint_url=self.moto_url, region_name=REGION)

    def housekeeping(self) -> None:
        """Forget the stream iterators moto keeps forever (one per read; ours are used once)."""
        from moto.dynamodbstreams.models import dynamodbstreams_backends  # noqa: PLC0415

        for regions in dynamodbstreams_backends.values():
            for backend in regions.values():
                backend.shard_iterators.clear()

    def close(self) -> None:
        self.endpoint.stop()


def _post(url: str, body: dict[str, Any]) -> None:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    urllib.request.urlopen(request, timeout=10).close()


def reset(moto_url: str) -> None:
    """Empty every moto backend (a fresh account, as for each test)."""
    _post(f"{moto_url}/moto-api/reset", {})


def reset_handlers() -> None:
    """Forget every handler's cached service, so the next call wires from the new settings."""
    import importlib  # noqa: PLC0415

    for name in HANDLER_MODULES:
        importlib.import_module(name).service.cache_clear()


@contextmanager
def moto_server() -> Iterator[str]:
    server, url = start_moto()
    try:
        yield url
    finally:
        server.stop()
