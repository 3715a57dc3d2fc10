"""What a handler invocation asks of AWS: calls by type, capacity units, pushes, time.

Hooks on botocore's events (``before-parameter-build``, ``before-call``,
``after-call``) of the default session, where the services' lazy clients are
created, see every call a handler makes. Only calls made while an invocation
is being metered count: the harness's own reads and the dispatcher's polling
(the platform's work) are left out.

moto does not report consumed capacity for transactions (and reports a fixed
figure otherwise), so capacity units are computed from the sizes of the
items actually read and written, by DynamoDB's own rules:

* item size: the UTF-8 bytes of every attribute name and value; a binary
  value its raw bytes (moto's stored items and stream records hold them in
  base64, which would count a third more); a number takes one byte per two
  significant digits plus one; a boolean one byte.
* write: 1 WRU per started KB of the larger of the item before and after
  (an update pays for the whole item, not the attributes it changed); in a
  transaction 2 WRU per KB, per item. A failed condition still pays.
* read: a strongly consistent read costs 1 RRU per started 4 KB (at least 1,
  found or not), an eventually consistent one half; a query rounds the sum
  of the items it returns.
"""

from __future__ import annotations

import base64
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

KB = 1024
READ_UNIT = 4 * KB
CAPTURED = frozenset({"sfn.StartExecution", "sfn.SendTaskSuccess"})
_KEY_CONDITION = re.compile(r"(#?\w+)\s*=\s*(:\w+)")


def _partition_keys() -> dict[str, str]:
    from services.common.constants import TABLES

    return {spec.name: spec.partition_key for spec in TABLES}


def value_size(value: dict[str, Any]) -> int:
    """Bytes of one attribute value in DynamoDB's size rules (low-level JSON form)."""
    ((kind, raw),) = value.items()
    if kind == "S":
        return len(raw.encode())
    if kind == "N":
        digits = raw.lstrip("-").replace(".", "").strip("0") or "0"
        return math.ceil(len(digits) / 2) + 1
    if kind == "B":
        return len(raw) if isinstance(raw, (bytes, bytearray)) else len(base64.b64decode(raw))
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(v.encode()) for v in raw)
    if kind == "NS":
        return sum(value_size({"N": v}) for v in raw)
    if kind == "L":
        return 3 + sum(1 + value_size(v) for v in raw)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + value_size(v) for k, v in raw.items())
    raise ValueError(f"unknown attribute type {kind}")


def item_size(item: dict[str, Any] | None) -> int:
    """Bytes of an item as DynamoDB counts them for capacity (0 for no item)."""
    if not item:
        return 0
    return sum(len(name.encode()) + value_size(value) for name, value in item.items())


def write_units(before: int, after: int, *, transactional: bool = False) -> int:
    units = max(1, math.ceil(max(before, after) / KB))
    return 2 * units if transactional else units


def read_units(size: int, *, consistent: bool, transactional: bool = False) -> float:
    units = max(1, math.ceil(size / READ_UNIT))
    if transactional:
        return 2.0 * units
    return float(units) if consistent else units / 2


@dataclass
class Invocation:
    """One metered handler invocation."""

    function: str
    kind: str
    wall: float = 0.0
    cpu: float = 0.0
    aws_wall: float = 0.0
    aws_cpu: float = 0.0
    calls: Counter[str] = field(default_factory=Counter)
    tables: Counter[str] = field(default_factory=Counter)
    """DynamoDB calls by operation and table ("GetItem:canasta-games"; transactions per item)."""
    wru: float = 0.0
    rru: float = 0.0
    pushes: int = 0
    push_bytes: list[int] = field(default_factory=list)
    events: int = 0
    event_bytes: list[int] = field(default_factory=list)
    written: list[tuple[str, str, int]] = field(default_factory=list)
    """(table, sort key prefix, item bytes) of every item written."""
    writes: list[list[str]] = field(default_factory=list)
    """Each write request, as the item kinds it writes: a single ``UpdateItem`` of a table
    item is ``["Update:TABLE"]``, a ``TransactWriteItems`` all of its items
    (``["Update:TABLE", "Put:LOG"]``); failed ones too."""
    captured: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """The parameters of the calls named in ``CAPTURED`` (for the harness to follow them)."""
    records: int = 0
    """Records in the event (an SQS or stream batch), 0 for a single request."""
    key_units: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    """Capacity units by (table, partition key value, ``read`` or ``write``): the load each
    partition key takes, for the capacity study (``benchmarks.keys``)."""
    error: str | None = None

    @property
    def own_cpu(self) -> float:
        """CPU time of the handler's own code: everything but the AWS calls."""
        return self.cpu - self.aws_cpu

    @property
    def own_wall(self) -> float:
        return self.wall - self.aws_wall


def _queried_key(params: dict[str, Any]) -> str:
    """The partition key value a query reads: the one equality of its key condition."""
    match = _KEY_CONDITION.search(params["KeyConditionExpression"])
    if match is None:
        raise ValueError(f"no partition key in {params['KeyConditionExpression']!r}")
    ((_, raw),) = params["ExpressionAttributeValues"][match.group(2)].items()
    return str(raw)


def _sk_kind(key: dict[str, Any]) -> str:
    sk = key.get("sk", {}).get("S")
    if sk is None:
        return next(iter(key), "?")
    return sk.split("#", 1)[0]


class Meter:
    """Meters handler invocations made through ``invoke`` while installed on a session."""

    def __init__(self, stored_item: Callable[[str, dict[str, Any]], dict[str, Any] | None]):
        """``stored_item(table, key)`` reads an item as stored, without any AWS call."""
        self._stored = stored_item
        self._partition_key = _partition_keys()
        self.active: Invocation | None = None
        self.invocations: list[Invocation] = []

    # --- botocore hooks ------------------------------------------------------------

    def install(self, events: Any) -> None:
        """Register on a botocore event emitter (``boto3.DEFAULT_SESSION.events``)."""
        events.register("provide-client-params", self._start)
        events.register("before-parameter-build", self._params)
        events.register("before-call", self._before)
        events.register("after-call", self._after)

    def _start(self, context: dict[str, Any], **_: Any) -> None:
        if self.active is not None:
            context["bench"] = {"t0": time.perf_counter(), "c0": time.thread_time()}

    def _params(
        self, params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any
    ) -> None:
        bench = context.get("bench")
        if bench is not None:
            bench["params"] = params
            bench["op"] = model.name

    def _before(self, event_name: str, context: dict[str, Any], **_: Any) -> None:
        bench = context.get("bench")
        if bench is None or self.active is None:
            return
        _, service, operation = event_name.split(".", 2)
        bench["service"] = service
        name = f"{service}.{operation}"
        self.active.calls[name] += 1
        params = bench["params"]
        if name in CAPTURED:
            self.active.captured.setdefault(name, []).append(params)
        if service == "dynamodb":
            bench["before"] = self._sizes_before(operation, params)
            if "TransactItems" in params:
                for entry in params["TransactItems"]:
                    ((action, body),) = entry.items()
                    self.active.tables[f"{operation}.{action}:{body['TableName']}"] += 1
            else:
                self.active.tables[f"{operation}:{params['TableName']}"] += 1
        elif operation == "PostToConnection":
            self.active.pushes += 1
            self.active.push_bytes.append(len(params["Data"]))
        elif operation == "PutEvents":
            self.active.events += len(params["Entries"])
            self.active.event_bytes += [len(e.get("Detail", "")) for e in params["Entries"]]

    def _after(self, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        bench = context.pop("bench", None)
        invocation = self.active
        if bench is None or invocation is None:
            return
        if bench.get("service") == "dynamodb":
            self._capacity(invocation, bench["op"], bench["params"], bench["before"], parsed)
        invocation.aws_wall += time.perf_counter() - bench["t0"]
        invocation.aws_cpu += time.thread_time() - bench["c0"]

    # --- capacity --------------------------------------------------------------------

    def _sizes_before(self, operation: str, params: dict[str, Any]) -> list[int]:
        if operation in ("PutItem", "UpdateItem", "DeleteItem"):
            key = params.get("Key") or self._key_of(params["TableName"], params["Item"])
            return [item_size(self._stored(params["TableName"], key))]
        if operation == "TransactWriteItems":
            sizes = []
            for entry in params["TransactItems"]:
                ((_, body),) = entry.items()
                key = body.get("Key") or self._key_of(body["TableName"], body["Item"])
                sizes.append(item_size(self._stored(body["TableName"], key)))
            return sizes
        return []

    def _key_of(self, table: str, item: dict[str, Any]) -> dict[str, Any]:
        names = ("pk", "sk") if "pk" in item else tuple(item)[:1]
        return {name: item[name] for name in names if name in item}

    def _capacity(
        self,
        invocation: Invocation,
        operation: str,
        params: dict[str, Any],
        before: list[int],
        parsed: dict[str, Any],
    ) -> None:
        failed = "Error" in parsed
        if operation == "GetItem":
            size = item_size(parsed.get("Item"))
            units = read_units(size, consistent=bool(params.get("ConsistentRead")))
            invocation.rru += units
            self._on_key(invocation, params["TableName"], params["Key"], "read", units)
        elif operation == "Query":
            size = sum(item_size(i) for i in parsed.get("Items", []))
            units = read_units(size, consistent=bool(params.get("ConsistentRead")))
            invocation.rru += units
            invocation.key_units[(params["TableName"], _queried_key(params), "read")] += units
        elif operation in ("PutItem", "UpdateItem", "DeleteItem"):
            table = params["TableName"]
            key = params.get("Key") or self._key_of(table, params["Item"])
            after = 0 if operation == "DeleteItem" else item_size(self._stored(table, key))
            if failed and operation == "PutItem":
                after = item_size(params["Item"])
            units = write_units(before[0], after)
            invocation.wru += units
            self._on_key(invocation, table, key, "write", units)
            invocation.writes.append([f"{operation.removesuffix('Item')}:{_sk_kind(key)}"])
            if not failed and operation != "DeleteItem":
                invocation.written.append((table, _sk_kind(key), after))
        elif operation == "TransactWriteItems":
            kinds = []
            for entry, old in zip(params["TransactItems"], before, strict=True):
                ((action, body),) = entry.items()
                table = body["TableName"]
                key = body.get("Key") or self._key_of(table, body["Item"])
                if action == "Put":
                    after = item_size(body["Item"])
                elif action in ("Update", "ConditionCheck"):
                    after = old if failed else item_size(self._stored(table, key))
                else:
                    after = 0
                units = write_units(old, after, transactional=True)
                invocation.wru += units
                self._on_key(invocation, table, key, "write", units)
                kinds.append(f"{action}:{_sk_kind(key)}")
                if not failed and action in ("Put", "Update"):
                    invocation.written.append((table, _sk_kind(key), after))
            invocation.writes.append(kinds)
        elif operation in ("BatchWriteItem", "BatchGetItem", "TransactGetItems", "Scan"):
            raise NotImplementedError(f"capacity of {operation} is not metered")

    def _on_key(
        self, invocation: Invocation, table: str, key: dict[str, Any], kind: str, units: float
    ) -> None:
        value = key[self._partition_key[table]]
        ((_, raw),) = value.items()
        invocation.key_units[(table, str(raw), kind)] += units

    # --- invocations -----------------------------------------------------------------

    @contextmanager
    def metering(self, function: str, kind: str) -> Iterator[Invocation]:
        """Meter everything done inside the block as one invocation of ``function``."""
        invocation = Invocation(function, kind)
        self.active = invocation
        w0, c0 = time.perf_counter(), time.thread_time()
        try:
            yield invocation
        finally:
            invocation.wall = time.perf_counter() - w0
            invocation.cpu = time.thread_time() - c0
            self.active = None
            self.invocations.append(invocation)
