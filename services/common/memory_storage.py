"""The storage in memory: every table a dict, with a DynamoDB transaction's semantics.

The fast tier runs the use cases and the stores on it; the storage contract
(``tests/services/test_unit_of_work.py``, and against DynamoDB too in
``tests/integration/test_storage_contract.py``) holds it to ``DynamoStorage``.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping, Sequence

from services.common.unit_of_work import (
    KEYS,
    Committed,
    Delete,
    Item,
    Key,
    Outcome,
    Put,
    TableKind,
    Value,
    Write,
    check_transaction,
    holds,
    outcome_of,
)


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
        check_transaction(writes)
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
