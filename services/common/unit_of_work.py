"""A unit of work: what must hold, what changes, and what it meant when it did not hold.

A use case (through a store) states every change of one commit as a write
(``Put``, ``Update``, ``Delete``) with the condition it needs and the domain
outcome its failure means (``VersionConflict`` for a table moved on,
``AlreadyDone`` for a create-only item found, ``Short`` for a balance that does
not cover a debit, ...). ``commit()`` runs them all or none and answers with an
``Outcome``: no caller sees an attribute map, an item's index in a transaction
or an AWS error code.

Two storages with the same semantics (a DynamoDB transaction's): ``DynamoStorage``
over the low-level client, and ``MemoryStorage`` for the fast tier.
``tests/services/test_unit_of_work.py`` runs the same cases against both.

Values are Python values (``str``, ``int``, ``float``, ``bool``); the DynamoDB
storage turns them into attribute maps at its boundary and back.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from services.common import constants
from services.common.dynamo import (
    CONDITION_FAILED,
    TRANSACTION_CANCELLED,
    DynamoClient,
    cancellation,
    error_code,
    n,
    query_all,
    s,
)
from services.common.frozen import Frozen, field

if TYPE_CHECKING:
    from services.common.settings import Settings

Value = str | int | float | bool
Item = dict[str, Value]
Key = dict[str, Value]
TableKind = Literal["games", "ledger", "players", "connections", "matchmaking"]
KEYS: Mapping[TableKind, tuple[str, ...]] = {
    "games": ("pk", "sk"),
    "ledger": ("pk", "sk"),
    "matchmaking": ("pk", "sk"),
    "players": ("player_id",),
    "connections": ("connection_id",),
}
TRANSACTION_LIMIT = 100
"""Items one DynamoDB transaction may hold."""


# --- outcomes -----------------------------------------------------------------------


class Outcome(Frozen):
    """What a commit did; only ``Committed`` changed anything."""

    ok = False


class Committed(Outcome):
    ok = True
    before: Item | None = None
    """The single written item as it was (when the write asked for it)."""
    after: Item | None = None
    """The single written item as it is now (when the write asked for it)."""


class VersionConflict(Outcome):
    """Another writer changed the item since it was read."""


class AlreadyDone(Outcome):
    """A create-only write found its item: the work was done before (a duplicate)."""


class Short(Outcome):
    """These accounts' balances do not cover their debits."""

    accounts: tuple[str, ...] = ()


class LostRace(Outcome):
    """A player was no longer where the write found them (another write moved them)."""

    players: tuple[str, ...] = ()


class Busy(Outcome):
    """A player is already somewhere else (a queue, a lobby or a table)."""

    players: tuple[str, ...] = ()


class Refused(Outcome):
    """A condition with no more particular meaning failed (``reason`` says which)."""

    reason: str = ""


class InvalidTransaction(Exception):
    """A commit DynamoDB would reject outright: too many items, or one item twice."""


# --- conditions -----------------------------------------------------------------------


class Exists(Frozen):
    """The item exists."""


class Absent(Frozen):
    """The item does not exist (a create-only write)."""


class Has(Frozen):
    attribute: str


class Lacks(Frozen):
    attribute: str


class Equals(Frozen):
    attribute: str
    value: Value


class AtLeast(Frozen):
    attribute: str
    value: int | float


class Below(Frozen):
    attribute: str
    value: int | float


class AtMost(Frozen):
    attribute: str
    value: int | float


class AllOf(Frozen):
    parts: tuple[Condition, ...]


class AnyOf(Frozen):
    parts: tuple[Condition, ...]


Condition = Exists | Absent | Has | Lacks | Equals | AtLeast | Below | AtMost | AllOf | AnyOf


def all_of(*parts: Condition | None) -> Condition | None:
    kept = tuple(p for p in parts if p is not None)
    return None if not kept else kept[0] if len(kept) == 1 else AllOf(kept)


def holds(condition: Condition | None, item: Item | None) -> bool:
    """Whether ``condition`` holds for ``item`` (None: no such item), as DynamoDB decides it."""
    if condition is None:
        return True
    if isinstance(condition, Exists):
        return item is not None
    if isinstance(condition, Absent):
        return item is None
    if isinstance(condition, AllOf):
        return all(holds(p, item) for p in condition.parts)
    if isinstance(condition, AnyOf):
        return any(holds(p, item) for p in condition.parts)
    found = (item or {}).get(condition.attribute)
    if isinstance(condition, Has):
        return found is not None
    if isinstance(condition, Lacks):
        return found is None
    if isinstance(condition, Equals):
        return (
            found is not None
            and _kind(found) == _kind(condition.value)
            and found == condition.value
        )
    if found is None or isinstance(found, (str, bool)):
        return False
    if isinstance(condition, AtLeast):
        return found >= condition.value
    if isinstance(condition, Below):
        return found < condition.value
    return found <= condition.value


def _kind(value: Value) -> str:
    """DynamoDB's type of a value: a number equals a number whatever its Python type."""
    return "BOOL" if isinstance(value, bool) else "S" if isinstance(value, str) else "N"


# --- writes ------------------------------------------------------------------------------


class Put(Frozen):
    """Write the whole item; ``refusal``: what a failed ``when`` means."""

    table: TableKind
    item: Item
    when: Condition | None = None
    refusal: Outcome = field(default_factory=AlreadyDone)

    @property
    def key(self) -> Key:
        return {k: self.item[k] for k in KEYS[self.table]}


class Update(Frozen):
    """Change some attributes of an item (creating it if it does not exist)."""

    table: TableKind
    key: Key
    set: Mapping[str, Value] = field(default_factory=dict)
    keep: Mapping[str, Value] = field(default_factory=dict)
    """Set only where the attribute is missing (``if_not_exists``)."""
    add: Mapping[str, int] = field(default_factory=dict)
    remove: tuple[str, ...] = ()
    when: Condition | None = None
    refusal: Outcome = field(default_factory=VersionConflict)
    returning: Literal["old", "new"] | None = None


class Delete(Frozen):
    table: TableKind
    key: Key
    when: Condition | None = None
    refusal: Outcome = field(default_factory=Refused)
    returning: Literal["old"] | None = None


Write = Put | Update | Delete


def outcome_of(writes: Sequence[Write], failed: Iterable[int]) -> Outcome:
    """The meaning of a cancelled commit: the refusal of the first write whose condition
    failed; ``Short`` and ``LostRace``/``Busy`` name every account or player at fault."""
    refusals = [writes[i].refusal for i in sorted(failed)]
    if not refusals:
        return Refused("cancelled")
    first = refusals[0]
    if isinstance(first, Short):
        return Short(tuple(a for r in refusals if isinstance(r, Short) for a in r.accounts))
    if isinstance(first, (LostRace, Busy)):
        kind = type(first)
        return kind(tuple(p for r in refusals if isinstance(r, kind) for p in r.players))
    return first


class Storage(Protocol):
    """Reads and all-or-nothing commits; ``DynamoStorage`` and ``MemoryStorage``."""

    def get(self, table: TableKind, key: Key, *, consistent: bool = True) -> Item | None: ...

    def query(
        self, table: TableKind, pk: str, *, prefix: str | None = None, limit: int | None = None
    ) -> list[Item]: ...

    def commit(self, writes: Sequence[Write]) -> Outcome: ...


class UnitOfWork:
    """The writes of one commit, gathered by the stores a use case calls."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self.writes: list[Write] = []

    def add(self, *writes: Write) -> UnitOfWork:
        self.writes.extend(writes)
        return self

    def commit(self) -> Outcome:
        writes, self.writes = self.writes, []
        return self._storage.commit(writes) if writes else Committed()


def _check(writes: Sequence[Write]) -> None:
    if len(writes) > TRANSACTION_LIMIT:
        raise InvalidTransaction(f"{len(writes)} items: more than {TRANSACTION_LIMIT}")
    if any(isinstance(w, Update) and not (w.set or w.keep or w.add or w.remove) for w in writes):
        raise InvalidTransaction("an update that changes nothing")
    keys = [(w.table, tuple(sorted(w.key.items()))) for w in writes]
    if len(set(keys)) != len(keys):
        raise InvalidTransaction("one item touched twice in a transaction")


# --- in memory -------------------------------------------------------------------------


class MemoryStorage:
    """Every table in a dict, with DynamoDB's transaction semantics: each condition is
    checked against the items as they were before the commit, and every write happens
    or none does. Thread-safe (the services push and write from several threads)."""

    def __init__(self) -> None:
        self.tables: dict[TableKind, dict[tuple[Value, ...], Item]] = {k: {} for k in KEYS}
        self._lock = threading.Lock()

    def _key(self, table: TableKind, key: Mapping[str, Value]) -> tuple[Value, ...]:
        return tuple(key[k] for k in KEYS[table])

    def get(self, table: TableKind, key: Key, *, consistent: bool = True) -> Item | None:
        with self._lock:
            found = self.tables[table].get(self._key(table, key))
            return dict(found) if found is not None else None

    def query(
        self, table: TableKind, pk: str, *, prefix: str | None = None, limit: int | None = None
    ) -> list[Item]:
        with self._lock:
            items = [
                dict(item)
                for key, item in sorted(
                    self.tables[table].items(), key=lambda kv: tuple(map(str, kv[0]))
                )
                if key[0] == pk and (prefix is None or str(key[1]).startswith(prefix))
            ]
        return items[:limit] if limit is not None else items

    def put(self, table: TableKind, item: Item) -> None:
        """Set an item as it is (a test's arrangement)."""
        with self._lock:
            self.tables[table][self._key(table, item)] = dict(item)

    def commit(self, writes: Sequence[Write]) -> Outcome:
        _check(writes)
        with self._lock:
            found = [self.tables[w.table].get(self._key(w.table, w.key)) for w in writes]
            failed = [
                i
                for i, (w, item) in enumerate(zip(writes, found, strict=True))
                if not holds(w.when, item)
            ]
            if failed:
                return outcome_of(writes, failed)
            results = [self._apply(w, item) for w, item in zip(writes, found, strict=True)]
        if len(writes) == 1:
            return results[0]
        return Committed()

    def _apply(self, write: Write, item: Item | None) -> Committed:
        rows = self.tables[write.table]
        key = self._key(write.table, write.key)
        before = copy.copy(item)
        if isinstance(write, Put):
            rows[key] = dict(write.item)
            return Committed()
        if isinstance(write, Delete):
            rows.pop(key, None)
            return Committed(before=before if write.returning == "old" else None)
        new: Item = dict(item) if item is not None else dict(write.key)
        new.update(write.set)
        for name, value in write.keep.items():
            new.setdefault(name, value)
        for name, amount in write.add.items():
            current = new.get(name, 0)
            assert isinstance(current, (int, float)) and not isinstance(current, bool)
            new[name] = current + amount
        for name in write.remove:
            new.pop(name, None)
        rows[key] = new
        return Committed(
            before=before if write.returning == "old" else None,
            after=dict(new) if write.returning == "new" else None,
        )


# --- DynamoDB --------------------------------------------------------------------------


def to_attribute(value: Value) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, str):
        return s(value)
    return n(value)


def from_attribute(attribute: Mapping[str, Any]) -> Value:
    if "S" in attribute:
        return str(attribute["S"])
    if "BOOL" in attribute:
        return bool(attribute["BOOL"])
    text = str(attribute["N"])
    return float(text) if any(c in text for c in ".eE") else int(text)


def to_item(item: Mapping[str, Value]) -> dict[str, Any]:
    return {name: to_attribute(value) for name, value in item.items()}


def from_item(item: Mapping[str, Any]) -> Item:
    return {name: from_attribute(value) for name, value in item.items()}


class _Expression:
    """Placeholders for one request's expressions: ``#aN`` names, ``:vN`` values."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.values: dict[str, Any] = {}

    def name(self, attribute: str) -> str:
        for placeholder, known in self.names.items():
            if known == attribute:
                return placeholder
        placeholder = f"#a{len(self.names)}"
        self.names[placeholder] = attribute
        return placeholder

    def value(self, value: Value) -> str:
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = to_attribute(value)
        return placeholder

    def condition(self, condition: Condition, key: str) -> str:
        if isinstance(condition, Exists):
            return f"attribute_exists({self.name(key)})"
        if isinstance(condition, Absent):
            return f"attribute_not_exists({self.name(key)})"
        if isinstance(condition, AllOf):
            return " AND ".join(f"({self.condition(p, key)})" for p in condition.parts)
        if isinstance(condition, AnyOf):
            return " OR ".join(f"({self.condition(p, key)})" for p in condition.parts)
        if isinstance(condition, Has):
            return f"attribute_exists({self.name(condition.attribute)})"
        if isinstance(condition, Lacks):
            return f"attribute_not_exists({self.name(condition.attribute)})"
        operator = {Equals: "=", AtLeast: ">=", Below: "<", AtMost: "<="}[type(condition)]
        return f"{self.name(condition.attribute)} {operator} {self.value(condition.value)}"

    def apply(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.names:
            request["ExpressionAttributeNames"] = self.names
        if self.values:
            request["ExpressionAttributeValues"] = self.values
        return request


class DynamoStorage:
    """The storage on DynamoDB: one write is a single conditional request (half the write
    units of a transaction); several are one ``TransactWriteItems``."""

    def __init__(self, client: DynamoClient, names: Mapping[TableKind, str]) -> None:
        self._db = client
        self._names = dict(names)

    @classmethod
    def of(cls, client: DynamoClient, settings: Settings) -> DynamoStorage:
        """The storage over the tables ``settings`` names (``services.common.settings``)."""
        return cls(
            client,
            {
                "games": settings.games_table,
                "ledger": settings.ledger_table,
                "players": settings.players_table,
                "connections": settings.connections_table,
                "matchmaking": settings.matchmaking_table,
            },
        )

    @classmethod
    def default(cls, client: DynamoClient) -> DynamoStorage:
        """The storage over the tables' default names (the tests' and the local stack's)."""
        return cls(
            client,
            {
                "games": constants.GAMES.name,
                "ledger": constants.LEDGER.name,
                "players": constants.PLAYERS.name,
                "connections": constants.CONNECTIONS.name,
                "matchmaking": constants.MATCHMAKING.name,
            },
        )

    def get(self, table: TableKind, key: Key, *, consistent: bool = True) -> Item | None:
        """``consistent``: a strongly consistent read (a full read unit, not half)."""
        request: dict[str, Any] = {"TableName": self._names[table], "Key": to_item(key)}
        if consistent:
            request["ConsistentRead"] = True
        found = self._db.get_item(**request).get("Item")
        return from_item(found) if found else None

    def query(
        self, table: TableKind, pk: str, *, prefix: str | None = None, limit: int | None = None
    ) -> list[Item]:
        names = KEYS[table]
        expression = "#pk = :pk"
        attr_names = {"#pk": names[0]}
        values: dict[str, Any] = {":pk": s(pk)}
        if prefix is not None:
            expression += " AND begins_with(#sk, :prefix)"
            attr_names["#sk"] = names[1]
            values[":prefix"] = s(prefix)
        request: dict[str, Any] = {
            "TableName": self._names[table],
            "KeyConditionExpression": expression,
            "ExpressionAttributeNames": attr_names,
            "ExpressionAttributeValues": values,
            "ConsistentRead": True,
        }
        if limit is not None:
            request["Limit"] = limit
            items = self._db.query(**request).get("Items", [])
        else:
            items = query_all(self._db, **request)
        return [from_item(item) for item in items]

    def request(self, write: Write) -> dict[str, Any]:
        """The request of one write, as a transaction item's body or a single call's."""
        expression = _Expression()
        request: dict[str, Any] = {"TableName": self._names[write.table]}
        if isinstance(write, Put):
            request["Item"] = to_item(write.item)
        else:
            request["Key"] = to_item(write.key)
        if isinstance(write, Update):
            sets = [f"{expression.name(a)} = {expression.value(v)}" for a, v in write.set.items()]
            sets += [
                f"{(p := expression.name(a))} = if_not_exists({p}, {expression.value(v)})"
                for a, v in write.keep.items()
            ]
            parts = []
            if sets:
                parts.append("SET " + ", ".join(sets))
            if write.add:
                parts.append(
                    "ADD "
                    + ", ".join(
                        f"{expression.name(a)} {expression.value(v)}" for a, v in write.add.items()
                    )
                )
            if write.remove:
                parts.append("REMOVE " + ", ".join(expression.name(a) for a in write.remove))
            request["UpdateExpression"] = " ".join(parts)
        if write.when is not None:
            request["ConditionExpression"] = expression.condition(write.when, KEYS[write.table][0])
        return expression.apply(request)

    def commit(self, writes: Sequence[Write]) -> Outcome:
        _check(writes)
        if len(writes) == 1:
            return self._single(writes[0])
        items = [{type(w).__name__: self.request(w)} for w in writes]
        try:
            self._db.transact_write_items(TransactItems=items)
        except Exception as exc:
            code = error_code(exc)
            if code == "ValidationException":
                raise InvalidTransaction(str(exc)) from None
            if code != TRANSACTION_CANCELLED:
                raise
            failed = [
                i for i in range(len(writes)) if cancellation(exc, i) == "ConditionalCheckFailed"
            ]
            if not failed:
                raise
            return outcome_of(writes, failed)
        return Committed()

    def _single(self, write: Write) -> Outcome:
        request = self.request(write)
        returning = None if isinstance(write, Put) else write.returning
        if returning is not None:
            request["ReturnValues"] = "ALL_OLD" if returning == "old" else "ALL_NEW"
        call = {
            Put: self._db.put_item,
            Update: self._db.update_item,
            Delete: self._db.delete_item,
        }[type(write)]
        try:
            answer = call(**request)
        except Exception as exc:
            if error_code(exc) == CONDITION_FAILED:
                return write.refusal
            raise
        found = answer.get("Attributes")
        item = from_item(found) if found else None
        return Committed(
            before=item if returning == "old" else None,
            after=item if returning == "new" else None,
        )
