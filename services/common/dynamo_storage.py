"""The storage on DynamoDB, and the attribute maps it turns items into and back.

No store and no use case sees an attribute map. What reads DynamoDB's own
format converts it here: this storage, the relay's handler (the stream's
images) and the operators' console (its scans).
"""

from __future__ import annotations

import base64
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from services.common import constants
from services.common.dynamo import (
    CONDITION_FAILED,
    CONFLICT_REASON,
    TRANSACTION_CANCELLED,
    TRANSACTION_CONFLICT,
    DynamoClient,
    cancellation,
    error_code,
    n,
    query_all,
    s,
)
from services.common.frozen import Frozen
from services.common.unit_of_work import (
    KEYS,
    Absent,
    AllOf,
    AnyOf,
    AtLeast,
    AtMost,
    Below,
    Committed,
    Condition,
    Delete,
    Equals,
    Exists,
    Has,
    InvalidTransaction,
    Item,
    Key,
    Lacks,
    Outcome,
    Put,
    TableKind,
    Update,
    Value,
    VersionConflict,
    Write,
    check_transaction,
    outcome_of,
)

if TYPE_CHECKING:
    from services.common.settings import Settings


def to_attribute(value: Value) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, str):
        return s(value)
    if isinstance(value, bytes):
        return {"B": value}
    return n(value)


def from_attribute(attribute: Mapping[str, Any]) -> Value:
    if "S" in attribute:
        return str(attribute["S"])
    if "B" in attribute:
        raw = attribute["B"]
        # The client decodes a binary value; a stream record's JSON carries it in base64.
        return bytes(raw) if isinstance(raw, (bytes, bytearray)) else base64.b64decode(raw)
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


class Backoff(Frozen):
    """How a commit that collided with another transaction is tried again.

    A collision wrote nothing and clears as soon as the other transaction ends
    (milliseconds), so the same request is sent again after a short, jittered
    pause (the two writers must not meet again in step); ``attempts`` in all,
    then the commit answers ``VersionConflict``. ``pause`` and ``draw`` (a
    number in [0, 1)) are the clock and the dice, replaced in tests.
    """

    attempts: int = 3
    base: float = 0.01
    pause: Callable[[float], None] = time.sleep
    draw: Callable[[], float] = random.random

    def wait(self, attempt: int) -> None:
        """Before try ``attempt + 1``: between half and all of ``base * 2**(attempt - 1)``."""
        self.pause(self.base * 2 ** (attempt - 1) * (0.5 + self.draw() / 2))


BACKOFF = Backoff()
"""Three tries, 5-10 ms then 10-20 ms apart (``Settings.conflict_backoff_seconds``)."""


class DynamoStorage:
    """The storage on DynamoDB: one write is a single conditional request (half the write
    units of a transaction); several are one ``TransactWriteItems``."""

    def __init__(
        self, client: DynamoClient, names: Mapping[TableKind, str], backoff: Backoff = BACKOFF
    ) -> None:
        self._db = client
        self._names = dict(names)
        self._backoff = backoff

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
                "audit": settings.audit_table,
                "profiles": settings.profiles_table,
            },
            Backoff(base=settings.conflict_backoff_seconds),
        )

    @classmethod
    def default(cls, client: DynamoClient, backoff: Backoff = BACKOFF) -> DynamoStorage:
        """The storage over the tables' default names (the tests' and the local stack's)."""
        return cls(
            client,
            {
                "games": constants.GAMES.name,
                "ledger": constants.LEDGER.name,
                "players": constants.PLAYERS.name,
                "connections": constants.CONNECTIONS.name,
                "matchmaking": constants.MATCHMAKING.name,
                "audit": constants.AUDIT.name,
                "profiles": constants.PROFILES.name,
            },
            backoff,
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
        """All the writes or none. A commit that collided with another transaction wrote
        nothing and is sent again (``Backoff``); if it collides every time, the answer is
        ``VersionConflict``, a lost race, never a write's own refusal: no condition
        failed, and whoever reads again sees what the other writer did."""
        check_transaction(writes)
        for attempt in range(1, self._backoff.attempts + 1):
            outcome = self._single(writes[0]) if len(writes) == 1 else self._transact(writes)
            if outcome is not None:
                return outcome
            if attempt < self._backoff.attempts:
                self._backoff.wait(attempt)
        return VersionConflict()

    def _transact(self, writes: Sequence[Write]) -> Outcome | None:
        """The outcome of one ``TransactWriteItems``; None if it collided (nothing written).

        A failed condition wins over a collision in the same cancellation: it is a
        fact about the items as they are, and sending the request again would fail it
        again.
        """
        items = [{type(w).__name__: self.request(w)} for w in writes]
        try:
            self._db.transact_write_items(TransactItems=items)
        except Exception as exc:
            code = error_code(exc)
            if code == "ValidationException":
                raise InvalidTransaction(str(exc)) from None
            if code != TRANSACTION_CANCELLED:
                raise
            reasons = [cancellation(exc, i) for i in range(len(writes))]
            failed = [i for i, reason in enumerate(reasons) if reason == "ConditionalCheckFailed"]
            if failed:
                return outcome_of(writes, failed)
            if CONFLICT_REASON in reasons:
                return None
            raise
        return Committed()

    def _single(self, write: Write) -> Outcome | None:
        """The outcome of one write's own request; None if a transaction held its item."""
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
            code = error_code(exc)
            if code == CONDITION_FAILED:
                return write.refusal
            if code == TRANSACTION_CONFLICT:
                return None
            raise
        found = answer.get("Attributes")
        item = from_item(found) if found else None
        return Committed(
            before=item if returning == "old" else None,
            after=item if returning == "new" else None,
        )
