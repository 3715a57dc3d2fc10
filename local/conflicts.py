"""Transaction conflicts on the embedded AWS, which moto never produces.

On DynamoDB a write that meets another transaction on one of its items fails
and writes nothing: a ``TransactWriteItems`` is cancelled with the reason
``TransactionConflict`` for that item (``None`` for the others), a single
``PutItem``/``UpdateItem``/``DeleteItem`` raises ``TransactionConflictException``.
moto serves one request at a time and never does either, so without this no
test would see the storage's answer to them (``DynamoStorage.commit``).

``CANASTA_INJECT_CONFLICTS`` chooses, when ``LocalAws`` wires an account:

- ``off`` (or unset): nothing is injected;
- ``first``: the first attempt of every distinct write request the storage
  (``services/common/dynamo_storage.py``, through which every write of the
  services goes) makes to the game's tables fails as DynamoDB fails it under
  a conflicting transaction, before it is sent; the same request sent again
  (the storage's retry) goes through. A test's own client, writing a table
  as it wants it for the test, meets none.

The storage then sends it again at once (``ENVIRONMENT``: a pause would wait
for no other writer); the pause itself is proven against botocore's Stubber
(``tests/integration/test_storage_conflicts.py``).

A request is told apart by its entry point, operation and body (less the token
botocore makes up for each call of a transaction), so every write path
meets a conflict once per request it makes and its retry passes. What was
injected is counted per (entry point, operation, tables), beside every write
attempt, so a test can see that each path that wrote met one.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from collections import Counter
from collections.abc import Iterable
from types import FrameType
from typing import Any

from botocore.awsrequest import AWSResponse

from local.iam import current_entry_point
from services.common import dynamo_storage

ENV = "CANASTA_INJECT_CONFLICTS"
MODES = ("off", "first")
WRITES = frozenset({"TransactWriteItems", "PutItem", "UpdateItem", "DeleteItem"})
EVENT = "before-call.dynamodb"
UNIQUE_ID = "canasta-local-conflicts"
STORAGE = dynamo_storage.__file__
REMEMBERED = 10_000
"""Requests remembered as tried: a retry follows its first attempt within milliseconds."""
HELD = "Transaction is ongoing for the item"
ENVIRONMENT = {"CANASTA_CONFLICT_BACKOFF_SECONDS": "0"}
"""What the handlers are wired with while conflicts are injected."""

Path = tuple[str, str, str]
"""(entry point, operation, tables): ``turn.websocket``, ``TransactWriteItems``,
``canasta-games+canasta-ledger``; ``outside`` for a call no handler made."""


class ConflictInjector:
    """A ``before-call`` hook that answers a write's first attempt as a conflict.

    Answering from the hook (botocore's short-circuit: a response instead of
    the request) raises the modelled error the client raises for DynamoDB's own
    answer, and nothing reaches moto.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tried: dict[tuple[Path, bytes], None] = {}
        self._tables: frozenset[str] = frozenset()
        self.writes: Counter[Path] = Counter()
        """Every write attempt on the game's tables, injected or not."""
        self.injected: Counter[Path] = Counter()

    def start(self, tables: Iterable[str]) -> None:
        """A fresh account: every request is new again (counts are kept)."""
        with self._lock:
            self._tried.clear()
            self._tables = frozenset(tables)

    def missed(self) -> list[Path]:
        """The paths that wrote but never met an injected conflict."""
        with self._lock:
            return sorted(path for path in self.writes if not self.injected[path])

    def before_call(
        self, event_name: str, params: dict[str, Any], **_: Any
    ) -> tuple[AWSResponse, dict[str, Any]] | None:
        operation = event_name.rsplit(".", 1)[-1]
        if operation not in WRITES or not _from_storage():
            return None
        request = request_of(params)
        tables = _tables(request)
        if not set(tables) <= self._tables:
            return None
        entered = current_entry_point()
        where = ".".join(entered.split(".")[1::2]) if entered else "outside"
        path = (where, operation, "+".join(dict.fromkeys(tables)))
        # botocore fills a transaction's ClientRequestToken anew for every call it makes.
        request.pop("ClientRequestToken", None)
        canonical = json.dumps(request, sort_keys=True).encode()
        digest = hashlib.sha256(operation.encode() + b"\0" + canonical).digest()
        with self._lock:
            self.writes[path] += 1
            if (path, digest) in self._tried:
                return None
            self._tried[(path, digest)] = None
            if len(self._tried) > REMEMBERED:
                del self._tried[next(iter(self._tried))]
            self.injected[path] += 1
        return answer(operation, request)


def request_of(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters of a serialized DynamoDB request (its JSON body), as sent."""
    body = params.get("body") or b"{}"
    return dict(json.loads(body if isinstance(body, bytes) else str(body)))


def _from_storage() -> bool:
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename == STORAGE:
            return True
        frame = frame.f_back
    return False


def _tables(request: dict[str, Any]) -> list[str]:
    if "TransactItems" in request:
        return [str(next(iter(i.values()))["TableName"]) for i in request["TransactItems"]]
    return [str(request.get("TableName", ""))]


def answer(operation: str, request: dict[str, Any]) -> tuple[AWSResponse, dict[str, Any]]:
    """DynamoDB's answer to ``request`` under a conflicting transaction; for a transaction,
    one item (chosen by the request, so that every position is met) is the one another
    transaction held."""
    if operation == "TransactWriteItems":
        items = len(request["TransactItems"])
        held = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).digest()[0] % items
        reasons = [{"Code": "None"} for _ in range(items)]
        reasons[held] = {"Code": "TransactionConflict", "Message": HELD}
        codes = ", ".join(r["Code"] for r in reasons)
        message = f"Transaction cancelled, please refer cancellation reasons [{codes}]"
        code, extra = "TransactionCanceledException", {"CancellationReasons": reasons}
    else:
        code, message, extra = "TransactionConflictException", HELD, {}
    parsed = {
        "Error": {"Code": code, "Message": message},
        "Message": message,
        "ResponseMetadata": {"HTTPStatusCode": 400, "HTTPHeaders": {}},
        **extra,
    }
    return AWSResponse("https://dynamodb.local/", 400, {}, None), parsed


INJECTOR = ConflictInjector()
"""One per process, as the embedded AWS is."""


def install(tables: Iterable[str]) -> ConflictInjector | None:
    """Inject as ``CANASTA_INJECT_CONFLICTS`` says into the clients boto3's default session
    creates from now on (each client copies its session's hooks when it is created)."""
    import boto3  # noqa: PLC0415

    mode = os.environ.get(ENV) or "off"
    if mode not in MODES:
        raise ValueError(f"{ENV}={mode!r}: expected one of {', '.join(MODES)}")
    events = boto3._get_default_session().events
    events.unregister(EVENT, unique_id=UNIQUE_ID)
    if mode == "off":
        return None
    INJECTOR.start(tables)
    events.register(EVENT, INJECTOR.before_call, unique_id=UNIQUE_ID)
    return INJECTOR
