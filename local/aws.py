"""The embedded AWS: moto in server mode, with every resource created and wired.

Used by the local stack and by the integration tests alike: both get the
same tables, bus, rules, queues and schedule group, the same environment for
the handlers, and the same dispatcher.
"""

from __future__ import annotations

import contextvars
import copy
import json
import os
import threading
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from infra import manifest
from infra.manifest import FUNCTIONS, FunctionSpec
from local import conflicts
from local.connections import Close, ConnectionsEndpoint, Deliver
from local.dispatcher import Dispatcher
from local.iam import IamEnforcer, LocalArns, install
from local.issuer import LocalIssuer
from local.resources import LocalResources, create_resources, table_names
from services.common.settings import Settings

REGION = "eu-west-1"
HANDLER_MODULES = manifest.handler_modules()


MOTO_LOCK = threading.Lock()
"""Held by each request to the embedded AWS, and by housekeeping that edits its backends."""


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

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        with MOTO_LOCK:
            return list(self._app(environ, start_response))


_PARTITIONS: contextvars.ContextVar[dict[str, set[Any]]] = contextvars.ContextVar("partitions")
"""Table name → the partition keys the transaction being run writes to."""


def _table_deepcopy(self: Any, memo: dict[int, Any]) -> Any:
    """moto's ``Table`` copied for a transaction's rollback: only what the transaction writes.

    moto's ``transact_write_items`` deep-copies every table it writes to, so that
    a cancelled transaction can put the copy back. A copy of the whole table
    (every item, and the stream's every record) makes each move cost more than
    the one before, in time and in memory the allocator does not give back:
    the games table keeps every move of every match. Only the partitions the
    transaction names can change, so the copy deep-copies those and shares the
    others (a rollback then restores exactly what the transaction touched);
    stream records are never changed once written, so the copy keeps the same
    records in a list of its own and a rollback drops exactly those of the
    cancelled writes. What moto stores and returns is unchanged.
    """
    cls = self.__class__
    new = cls.__new__(cls)
    memo[id(self)] = new
    touched = _PARTITIONS.get({}).get(self.name)
    for key, value in self.__dict__.items():
        if key == "stream_shard" and value is not None:
            shard = copy.copy(value)
            shard.table = new
            shard.items = list(value.items)
            new.__dict__[key] = shard
        elif key == "items" and touched is not None:
            items = copy.copy(value)
            for partition in touched:
                if partition in value:
                    items[partition] = copy.deepcopy(value[partition], memo)
            new.__dict__[key] = items
        else:
            new.__dict__[key] = copy.deepcopy(value, memo)
    return new


def _partition_scoped(transact_write_items: Any) -> Any:
    """Wraps moto's ``transact_write_items`` so its rollback copies see what it writes."""
    from moto.dynamodb.models.dynamo_type import DynamoType  # noqa: PLC0415

    def transact(backend: Any, transact_items: list[dict[str, Any]]) -> Any:
        touched: dict[str, set[Any]] = {}
        for item in transact_items:
            for op in item.values():
                table = backend.tables.get(op.get("TableName"))
                key = op.get("Key") or op.get("Item") or {}
                if table is not None and table.hash_key_attr in key:
                    partition = DynamoType(key[table.hash_key_attr])
                    touched.setdefault(table.name, set()).add(partition)
        token = _PARTITIONS.set(touched)
        try:
            return transact_write_items(backend, transact_items)
        finally:
            _PARTITIONS.reset(token)

    transact.scoped = True  # type: ignore[attr-defined]
    return transact


def _untracked(cls: type, *args: Any, **kwargs: Any) -> Any:
    """moto's ``BaseModel.__new__`` without the tracking.

    moto appends every model object it ever creates (each item, each copy a
    transaction takes for its rollback, each stream record, message and
    iterator) to a list per class, for its dashboard: nothing it creates is
    ever freed. That list, not the data, was what made the local stack grow
    by gigabytes.
    """
    from moto.core.common_models import BaseModel  # noqa: PLC0415

    return super(BaseModel, cls).__new__(cls)  # type: ignore[misc]


def start_moto(port: int = 0) -> tuple[Any, str]:
    """A moto server on 127.0.0.1 that serves one request at a time; returns it and its URL."""
    from moto.backends import list_of_moto_modules  # noqa: PLC0415
    from moto.core.common_models import BaseModel  # noqa: PLC0415
    from moto.dynamodb.models import DynamoDBBackend  # noqa: PLC0415
    from moto.dynamodb.models.table import Table  # noqa: PLC0415
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer  # noqa: PLC0415
    from moto.moto_server.werkzeug_app import (  # noqa: PLC0415
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server  # noqa: PLC0415

    BaseModel.__new__ = staticmethod(_untracked)  # type: ignore[method-assign]
    Table.__deepcopy__ = _table_deepcopy  # type: ignore[attr-defined]
    if not getattr(DynamoDBBackend.transact_write_items, "scoped", False):
        DynamoDBBackend.transact_write_items = _partition_scoped(  # type: ignore[method-assign]
            DynamoDBBackend.transact_write_items
        )

    modules = frozenset(list_of_moto_modules())

    class Dispatch(DomainDispatcherApplication):
        """moto's dispatcher with its list of service modules read once.

        moto lists its package folder (a ``stat`` of some 200 entries) to route
        every request; the folder does not change while the server runs.
        """

        def get_backend_for_host(self, host: str | None) -> Any:
            if host is not None and host in modules:
                return host
            return super().get_backend_for_host(host)

    class QuietRequestHandler(MotoRequestHandler):
        """No access-log line per request: nobody reads them, and each costs a log record."""

        def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
            return

    class SerializedMotoServer(ThreadedMotoServer):
        def _server_entry(self) -> None:
            app = _OneRequestAtATime(Dispatch(create_backend_app))
            self._server = make_server(
                self._ip_address, self._port, app, True, request_handler=QuietRequestHandler
            )
            self._server_ready_event.set()
            self._server.serve_forever()

    server = SerializedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    host, bound = server.get_host_and_port()
    # moto's Step Functions call their service integrations on this port.
    os.environ["MOTO_PORT"] = str(bound)
    return server, f"http://{host}:{bound}"


def base_environment(moto_url: str, connections_url: str, issuer: LocalIssuer) -> dict[str, str]:
    """What the CDK stack sets on each function, pointed at the local endpoints and issuer."""
    return {
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
        "CANASTA_ENDPOINT_URL": moto_url,
        "CANASTA_WEBSOCKET_ENDPOINT": connections_url,
        **issuer.environment(),
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "Canasta",
        "POWERTOOLS_LOG_LEVEL": os.environ.get("POWERTOOLS_LOG_LEVEL", "WARNING"),
    }


def record_seconds(functions: Mapping[str, FunctionSpec]) -> float:
    """The record budget of the local handlers: the largest of any queue consumer.

    In AWS each consumer has its own (``CANASTA_RECORD_SECONDS``); here one
    environment serves every handler, so each takes the slowest one's, and no
    batch starts a record later than its own function would.
    """
    return max(s.record_seconds for s in functions.values() if s.record_seconds is not None)


class LocalAws:
    """Resources on a running moto server, the connections endpoint and the dispatcher."""

    def __init__(
        self,
        moto_url: str,
        deliver: Deliver,
        issuer: LocalIssuer,
        turn_seconds: int = 60,
        *,
        intermission_seconds: int | None = None,
        functions: Mapping[str, FunctionSpec] = FUNCTIONS,
        timing: Mapping[str, Any] | None = None,
        close: Close | None = None,
    ) -> None:
        """``timing``: the dispatcher's ``clock`` and ``within_minute`` (tests of timers);
        ``close``: closes a connection when ``@connections`` is asked to (``kick``)."""
        self.moto_url = moto_url
        self.issuer = issuer
        self.endpoint = ConnectionsEndpoint(deliver, close=close).start()
        self.environment = base_environment(moto_url, self.endpoint.url, issuer)
        self.environment["CANASTA_TURN_SECONDS"] = str(turn_seconds)
        if intermission_seconds is not None:
            self.environment["CANASTA_INTERMISSION_SECONDS"] = str(intermission_seconds)
        self.environment["CANASTA_RECORD_SECONDS"] = str(record_seconds(functions))
        os.environ.update(self.environment)
        self.settings = Settings()
        _post(f"{moto_url}/moto-api/config", {"stepfunctions": {"execute_state_machine": True}})
        self.resources: LocalResources = create_resources(self.settings, self.client)
        wired = self.resources.environment()
        self.environment.update(wired)
        os.environ.update(wired)
        self.settings = Settings()
        # Every handler call from now on runs under its function's role (local/iam.py).
        self.iam = IamEnforcer(self._arns(), functions)
        install(self.iam)
        # With CANASTA_INJECT_CONFLICTS, every write meets a conflict first (local/conflicts.py).
        self.conflicts = conflicts.install(table_names(self.settings).values())
        if self.conflicts is not None:
            self.environment.update(conflicts.ENVIRONMENT)
            os.environ.update(conflicts.ENVIRONMENT)
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
        """Drop what moto would keep forever and the local stack never reads again.

        - The stream iterators (one per read; ours are used once).
        - The games table's stream records the relay has read: a shard keeps
          24 hours of records in AWS; the local stack keeps what is not read yet.
        """
        from moto.dynamodb.models import dynamodb_backends  # noqa: PLC0415
        from moto.dynamodbstreams.models import dynamodbstreams_backends  # noqa: PLC0415

        with MOTO_LOCK:
            for regions in dynamodbstreams_backends.values():
                for backend in regions.values():
                    backend.shard_iterators.clear()
            for accounts in dynamodb_backends.values():
                for database in accounts.values():
                    games = database.tables.get(self.settings.games_table)
                    if games is not None and games.stream_shard is not None:
                        shard = games.stream_shard
                        _trim(shard, self.dispatcher.read_up_to(shard.id))

    def close(self) -> None:
        self.endpoint.stop()


def _trim(shard: Any, read: int | None) -> None:
    """Forget a stream shard's records up to sequence number ``read``; later ones keep theirs."""
    if read is None:
        return
    count = min(len(shard.items), read - shard.starting_sequence_number + 1)
    if count > 0:
        shard.items = shard.items[count:]
        shard.starting_sequence_number += count


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
