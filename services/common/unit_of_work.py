"""A unit of work: what must hold, what changes, and what it meant when it did not hold.

A use case (through a store) states every change of one commit as a write
(``Put``, ``Update``, ``Delete``) with the condition it needs and the domain
outcome its failure means (``VersionConflict`` for a table moved on,
``AlreadyDone`` for a create-only item found, ``Short`` for a balance that does
not cover a debit, ...). ``commit()`` runs them all or none and answers with an
``Outcome``: no caller sees an attribute map, an item's index in a transaction
or an AWS error code.

Two storages with the same semantics (a DynamoDB transaction's) implement
``Storage``: ``dynamo_storage.DynamoStorage`` over the low-level client, and
``memory_storage.MemoryStorage`` for the fast tier. One contract test runs the
same cases against both (``tests/services/test_unit_of_work.py`` on the
in-memory one, ``tests/integration/test_storage_contract.py`` on both).

Values are Python values (``str``, ``bytes``, ``int``, ``float``, ``bool``); the
DynamoDB storage turns them into attribute maps at its boundary and back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, Protocol

from services.common.frozen import Frozen, field

Value = str | bytes | int | float | bool
Item = dict[str, Value]
Key = dict[str, Value]
TableKind = Literal["games", "ledger", "players", "connections", "matchmaking", "audit", "profiles"]
KEYS: Mapping[TableKind, tuple[str, ...]] = {
    "games": ("pk", "sk"),
    "ledger": ("pk", "sk"),
    "matchmaking": ("pk", "sk"),
    "players": ("player_id",),
    "connections": ("connection_id",),
    "audit": ("pk", "sk"),
    "profiles": ("pk", "sk"),
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


class ConditionFailed(Outcome):
    """A condition with no more particular meaning failed (``reason`` says which)."""

    reason: str = ""


class InvalidTransaction(Exception):
    """A commit DynamoDB would reject outright: too many items, or one item twice."""


class Contended(RuntimeError):
    """A write with no version to lose collided with other writers on every try."""


def unless_contended(outcome: Outcome) -> Outcome:
    """``outcome``, for a caller whose writes name no version: a ``VersionConflict`` can
    only mean they collided with another transaction on every try (``DynamoStorage``) and
    wrote nothing. Such a caller has no read to redo, and going on as if the write had been
    made (or refused for its own reason) would lose it: it fails, and its invocation is
    retried or answered as failed."""
    if isinstance(outcome, VersionConflict):
        raise Contended("the write collided with other transactions on every try")
    return outcome


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
    if found is None or isinstance(found, (str, bytes, bool)):
        return False
    if isinstance(condition, AtLeast):
        return found >= condition.value
    if isinstance(condition, Below):
        return found < condition.value
    return found <= condition.value


def _kind(value: Value) -> str:
    """DynamoDB's type of a value: a number equals a number whatever its Python type."""
    if isinstance(value, bool):
        return "BOOL"
    return "S" if isinstance(value, str) else "B" if isinstance(value, bytes) else "N"


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
    refusal: Outcome = field(default_factory=ConditionFailed)
    returning: Literal["old"] | None = None


Write = Put | Update | Delete


def outcome_of(writes: Sequence[Write], failed: Iterable[int]) -> Outcome:
    """The meaning of a cancelled commit: the refusal of the first write whose condition
    failed; ``Short`` and ``LostRace``/``Busy`` name every account or player at fault."""
    refusals = [writes[i].refusal for i in sorted(failed)]
    if not refusals:
        return ConditionFailed("cancelled")
    first = refusals[0]
    if isinstance(first, Short):
        return Short(tuple(a for r in refusals if isinstance(r, Short) for a in r.accounts))
    if isinstance(first, (LostRace, Busy)):
        kind = type(first)
        return kind(tuple(p for r in refusals if isinstance(r, kind) for p in r.players))
    return first


class Storage(Protocol):
    """Reads and all-or-nothing commits (``dynamo_storage``, ``memory_storage``)."""

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


def check_transaction(writes: Sequence[Write]) -> None:
    """Refuse, before any storage sees it, a commit DynamoDB would reject outright: both
    storages raise the same ``InvalidTransaction`` for it."""
    if len(writes) > TRANSACTION_LIMIT:
        raise InvalidTransaction(f"{len(writes)} items: more than {TRANSACTION_LIMIT}")
    if any(isinstance(w, Update) and not (w.set or w.keep or w.add or w.remove) for w in writes):
        raise InvalidTransaction("an update that changes nothing")
    keys = [(w.table, tuple(sorted(w.key.items()))) for w in writes]
    if len(set(keys)) != len(keys):
        raise InvalidTransaction("one item touched twice in a transaction")
