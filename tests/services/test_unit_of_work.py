"""The storage contract: the same cases for the in-memory storage and for DynamoDB.

The fast tier trusts ``MemoryStorage`` for every conditional write; these cases
keep it honest. ``StorageContract`` holds them, and each storage's test class
runs them all: here the in-memory storage's, in
``tests/integration/test_storage_contract.py`` both storages, the DynamoDB one
on the local stack's embedded AWS, so the two cannot drift. A DynamoDB
transaction is all-or-nothing, checks each item's condition against the items
as they were, touches an item once and holds at most 100 items, and a cancelled
one answers with the outcome of the writes whose conditions failed.
"""

from __future__ import annotations

import pytest

from services.common.memory_storage import MemoryStorage
from services.common.unit_of_work import (
    Absent,
    AllOf,
    AlreadyDone,
    AnyOf,
    AtLeast,
    AtMost,
    Below,
    Busy,
    Committed,
    ConditionFailed,
    Delete,
    Equals,
    Exists,
    Has,
    InvalidTransaction,
    Lacks,
    LostRace,
    Put,
    Short,
    Storage,
    UnitOfWork,
    Update,
    VersionConflict,
)

pytestmark = pytest.mark.unit


def key(sk: str, pk: str = "T#1") -> dict[str, str]:
    return {"pk": pk, "sk": sk}


class StorageContract:
    """Every case a storage must answer as DynamoDB does; a subclass provides ``storage``."""

    def test_values_come_back_as_written(self, storage: Storage) -> None:
        item = {
            **key("A"),
            "text": "x",
            "count": 3,
            "at": 1_800_000_000.25,
            "flag": True,
            "whole": 2.0,
            "blob": bytes(range(256)),
        }
        assert isinstance(storage.commit([Put("games", item)]), Committed)
        assert storage.get("games", key("A")) == item
        assert storage.get("games", key("missing")) is None
        assert storage.get("games", key("A"), consistent=False) == item
        # A binary value set by an update (the TABLE item's packed state) reads back as bytes.
        update = Update("games", key("A"), set={"blob": b"\x02\x00"}, returning="new")
        done = storage.commit([update])
        assert isinstance(done, Committed) and done.after == {**item, "blob": b"\x02\x00"}
        assert storage.query("games", "T#1") == [{**item, "blob": b"\x02\x00"}]

    def test_a_create_only_put_happens_once(self, storage: Storage) -> None:
        first = Put("games", {**key("A"), "n": 1}, when=Absent())
        assert isinstance(storage.commit([first]), Committed)
        again = Put("games", {**key("A"), "n": 2}, when=Absent(), refusal=AlreadyDone())
        assert storage.commit([again]) == AlreadyDone()
        assert storage.get("games", key("A")) == {**key("A"), "n": 1}

    def test_a_version_condition_refuses_a_write_that_read_an_old_version(
        self, storage: Storage
    ) -> None:
        storage.commit([Put("games", {**key("TABLE"), "version": 2})])
        stale = Update("games", key("TABLE"), set={"version": 2}, when=Equals("version", 1))
        assert storage.commit([stale]) == VersionConflict()
        fresh = Update("games", key("TABLE"), set={"version": 3}, when=Equals("version", 2))
        assert isinstance(storage.commit([fresh]), Committed)
        assert storage.get("games", key("TABLE")) == {**key("TABLE"), "version": 3}

    def test_a_transaction_is_all_or_nothing(self, storage: Storage) -> None:
        storage.commit([Put("games", {**key("TABLE"), "version": 5})])
        writes = [
            Put("games", {**key("LOG#1"), "seat": 1}, when=Absent()),
            Update("games", key("TABLE"), set={"version": 5}, when=Equals("version", 4)),
            Update("ledger", {"pk": "ACCOUNT#p1", "sk": "BALANCE"}, add={"points": 10}),
        ]
        assert storage.commit(writes) == VersionConflict()
        assert storage.get("games", key("LOG#1")) is None
        assert storage.get("ledger", {"pk": "ACCOUNT#p1", "sk": "BALANCE"}) is None
        assert storage.get("games", key("TABLE")) == {**key("TABLE"), "version": 5}

    def test_each_condition_sees_the_items_as_they_were_before_the_commit(
        self, storage: Storage
    ) -> None:
        """A put and a condition on the same table's other item: the condition reads the
        item as stored, not as another write of the same commit leaves it."""
        storage.commit([Put("games", {**key("A"), "v": 1})])
        writes = [
            Update("games", key("A"), set={"v": 2}, when=Equals("v", 1)),
            Put("games", {**key("B"), "v": 1}, when=Absent()),
        ]
        assert isinstance(storage.commit(writes), Committed)
        assert storage.get("games", key("A")) == {**key("A"), "v": 2}
        assert storage.get("games", key("B")) == {**key("B"), "v": 1}

    def test_one_item_is_touched_once_per_transaction(self, storage: Storage) -> None:
        writes = [
            Put("games", {**key("A"), "v": 1}),
            Update("games", key("A"), set={"v": 2}),
        ]
        with pytest.raises(InvalidTransaction):
            storage.commit(writes)
        assert storage.get("games", key("A")) is None
        # An update must change something.
        with pytest.raises(InvalidTransaction):
            storage.commit([Update("games", key("A"), when=Absent())])
        # The same key in another table is another item.
        other = [Put("games", {**key("A"), "v": 1}), Put("ledger", {**key("A"), "v": 1})]
        assert isinstance(storage.commit(other), Committed)

    def test_a_transaction_holds_at_most_100_items(self, storage: Storage) -> None:
        many = [Put("games", {**key(f"K#{i:03d}"), "v": i}) for i in range(101)]
        with pytest.raises(InvalidTransaction):
            storage.commit(many)
        assert storage.query("games", "T#1") == []
        assert isinstance(storage.commit(many[:100]), Committed)
        assert len(storage.query("games", "T#1")) == 100

    def test_the_first_failed_condition_names_the_outcome(self, storage: Storage) -> None:
        """Cancellation reasons mapped back to the writes: the earliest failed write's refusal,
        with every short account and every player at fault named."""
        storage.commit(
            [
                Put("games", {**key("TABLE"), "version": 1}),
                Put("games", {**key("LOG#1")}),
                Put("ledger", {"pk": "ACCOUNT#a", "sk": "BALANCE", "points": 5}),
                Put("ledger", {"pk": "ACCOUNT#b", "sk": "BALANCE", "points": 5}),
                Put("players", {"player_id": "p1", "lobby": "L1"}),
                Put("players", {"player_id": "p2", "lobby": "L2"}),
            ]
        )
        log = Put("games", {**key("LOG#1")}, when=Absent(), refusal=AlreadyDone())
        table = Update("games", key("TABLE"), set={"version": 2}, when=Equals("version", 0))

        def debit(account: str, points: int) -> Update:
            return Update(
                "ledger",
                {"pk": f"ACCOUNT#{account}", "sk": "BALANCE"},
                add={"points": -points},
                when=AtLeast("points", points),
                refusal=Short((account,)),
            )

        def free(player: str) -> Update:
            return Update(
                "players", {"player_id": player}, set={"table_id": "t"}, when=Lacks("lobby"),
                refusal=Busy((player,)),
            )  # fmt: skip

        assert storage.commit([table, log, debit("a", 9)]) == VersionConflict()
        assert storage.commit([log, table]) == AlreadyDone()
        assert storage.commit([debit("a", 9), debit("b", 6), log]) == Short(("a", "b"))
        assert storage.commit([debit("a", 1), debit("b", 6)]) == Short(("b",))
        assert storage.commit([free("p1"), free("p2")]) == Busy(("p1", "p2"))
        lost = Update(
            "players",
            {"player_id": "p1"},
            set={"seat": 1},
            when=Equals("lobby", "L9"),
            refusal=LostRace(("p1",)),
        )
        assert storage.commit([lost, debit("a", 1)]) == LostRace(("p1",))
        # Nothing of all that was written.
        assert storage.get("ledger", {"pk": "ACCOUNT#a", "sk": "BALANCE"}) == {
            "pk": "ACCOUNT#a", "sk": "BALANCE", "points": 5,
        }  # fmt: skip

    def test_a_single_write_answers_with_its_own_refusal(self, storage: Storage) -> None:
        gone = Delete("games", key("A"), when=Exists(), refusal=ConditionFailed("gone"))
        assert storage.commit([gone]) == ConditionFailed("gone")
        update = Update("games", key("A"), set={"v": 1}, when=Exists(), refusal=LostRace(("x",)))
        assert storage.commit([update]) == LostRace(("x",))
        assert storage.get("games", key("A")) is None

    def test_updates_set_keep_add_and_remove(self, storage: Storage) -> None:
        # An update creates a missing item, and ADD starts from zero.
        created = Update(
            "games", key("A"), set={"s": "x"}, keep={"name": "first"}, add={"n": 2}, returning="new"
        )
        done = storage.commit([created])
        assert isinstance(done, Committed)
        assert done.after == {**key("A"), "s": "x", "name": "first", "n": 2}
        changed = Update(
            "games",
            key("A"),
            keep={"name": "second"},
            add={"n": -5},
            remove=("s", "absent"),
            returning="old",
        )
        done = storage.commit([changed])
        assert isinstance(done, Committed)
        assert done.before == {**key("A"), "s": "x", "name": "first", "n": 2}
        assert storage.get("games", key("A")) == {**key("A"), "name": "first", "n": -3}
        removed = storage.commit([Delete("games", key("A"), returning="old")])
        assert isinstance(removed, Committed)
        assert removed.before == {**key("A"), "name": "first", "n": -3}
        assert storage.get("games", key("A")) is None
        nothing = storage.commit([Delete("games", key("A"), returning="old")])
        assert isinstance(nothing, Committed) and nothing.before is None

    @pytest.mark.parametrize(
        ("condition", "holds"),
        [
            (Exists(), True),
            (Absent(), False),
            (Has("n"), True),
            (Has("missing"), False),
            (Lacks("missing"), True),
            (Lacks("n"), False),
            (Equals("n", 3), True),
            (Equals("n", 3.0), True),
            (Equals("n", "3"), False),
            (Equals("s", "x"), True),
            (Equals("flag", True), True),
            (Equals("missing", 0), False),
            (AtLeast("n", 3), True),
            (AtLeast("n", 4), False),
            (AtLeast("missing", 0), False),
            (Below("n", 4), True),
            (Below("n", 3), False),
            (AtMost("n", 3), True),
            (AtMost("n", 2), False),
            (AllOf((Has("n"), Equals("s", "x"))), True),
            (AllOf((Has("n"), Equals("s", "y"))), False),
            (AnyOf((Absent(), Equals("s", "y"))), False),
            (AnyOf((Absent(), AllOf((AtMost("n", 3), Has("s"))))), True),
        ],
    )
    def test_conditions_decide_as_dynamodb_does(
        self, storage: Storage, condition: object, holds: bool
    ) -> None:
        storage.commit([Put("games", {**key("A"), "n": 3, "s": "x", "flag": True})])
        write = Update(
            "games", key("A"), add={"hits": 1}, when=condition, refusal=ConditionFailed("no")
        )  # type: ignore[arg-type]
        outcome = storage.commit([write])
        assert isinstance(outcome, Committed) is holds, outcome
        assert storage.get("games", key("A")).get("hits") == (1 if holds else None)  # type: ignore[union-attr]

    def test_an_absent_item_fails_every_attribute_condition(self, storage: Storage) -> None:
        for condition in (Equals("v", 1), AtLeast("v", 0), Has("v"), Exists()):
            assert storage.commit([Update("games", key("A"), add={"v": 1}, when=condition)]) == (
                VersionConflict()
            )
        assert isinstance(
            storage.commit([Update("games", key("A"), add={"v": 1}, when=Lacks("v"))]), Committed
        )

    def test_queries_read_one_partition_in_key_order(self, storage: Storage) -> None:
        storage.commit(
            [Put("games", {**key(sk)}) for sk in ("LOG#0001#0002", "ROUND#0001", "LOG#0001#0001")]
            + [Put("games", {**key("LOG#0001#0001", pk="T#2")})]
        )
        assert [i["sk"] for i in storage.query("games", "T#1")] == [
            "LOG#0001#0001",
            "LOG#0001#0002",
            "ROUND#0001",
        ]
        assert [i["sk"] for i in storage.query("games", "T#1", prefix="LOG#")] == [
            "LOG#0001#0001",
            "LOG#0001#0002",
        ]
        assert [i["sk"] for i in storage.query("games", "T#1", limit=1)] == ["LOG#0001#0001"]
        assert storage.query("games", "T#3") == []

    def test_a_unit_of_work_commits_what_it_gathered_once(self, storage: Storage) -> None:
        work = UnitOfWork(storage)
        work.add(
            Put("games", {**key("A")}, when=Absent()), Put("games", {**key("B")}, when=Absent())
        )
        assert isinstance(work.commit(), Committed)
        assert work.writes == []
        assert isinstance(work.commit(), Committed), "nothing gathered: nothing to do"
        work.add(Put("games", {**key("A")}, when=Absent()))
        assert work.commit() == AlreadyDone()


class TestMemoryStorage(StorageContract):
    @pytest.fixture
    def storage(self) -> Storage:
        return MemoryStorage()
