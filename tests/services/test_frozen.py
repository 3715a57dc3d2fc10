"""``Frozen`` keeps what the records, conditions, writes and outcomes relied on as
dataclasses: equality by class and fields, hashing, immutability, defaults made
per instance, positional and keyword construction, ``replace`` and matching."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from services.common.frozen import Frozen, field, replace
from services.common.records import SEATS, TableRecord
from services.common.unit_of_work import (
    Absent,
    AlreadyDone,
    Busy,
    Committed,
    ConditionFailed,
    Equals,
    LostRace,
    Put,
    Short,
    Update,
    VersionConflict,
)
from shared_engine.match import MatchMode


class Point(Frozen):
    x: int
    y: int = 0
    tags: dict[str, int] = field(default_factory=dict)


class Labelled(Point):
    label: str = ""


def test_equality_needs_the_same_class_and_equal_fields() -> None:
    assert Short(("a",)) == Short(("a",))
    assert Short(("a",)) != Short(("b",))
    assert Short(("a",)) != LostRace(("a",))
    assert LostRace(("a",)) != Busy(("a",))
    assert Absent() != ConditionFailed()
    assert Absent() == Absent()
    assert VersionConflict() != AlreadyDone()
    assert Equals("version", 3) != Equals("version", 4)
    assert Point(1) != Labelled(1)
    assert Point(1) != (1, 0, {})


def test_equal_values_hash_alike_and_serve_as_keys() -> None:
    assert hash(Equals("version", 3)) == hash(Equals("version", 3))
    assert {Short(("a",)): 1}[Short(("a",))] == 1
    assert (
        len({Absent(), Absent(), ConditionFailed("x"), ConditionFailed("x"), ConditionFailed("y")})
        == 3
    )
    with pytest.raises(TypeError):
        hash(Point(1))  # a dict field: unhashable, as a frozen dataclass's would be


def test_fields_cannot_change() -> None:
    refused = ConditionFailed("x")
    with pytest.raises(FrozenInstanceError):
        refused.reason = "y"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del refused.reason
    with pytest.raises(FrozenInstanceError):
        refused.other = 1  # type: ignore[attr-defined]
    assert refused.reason == "x"


def test_construction_by_position_keyword_and_default() -> None:
    assert Labelled(1, 2, {"a": 1}, "p") == Labelled(x=1, label="p", tags={"a": 1}, y=2)
    assert Labelled(1).label == ""
    assert Labelled._fields == ("x", "y", "tags", "label")
    with pytest.raises(TypeError, match="missing"):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected"):
        Point(1, z=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected"):
        Point(1, x=2)  # type: ignore[misc]
    with pytest.raises(TypeError, match="takes 3 arguments"):
        Point(1, 2, {}, 4)  # type: ignore[call-arg]


def test_a_factory_default_is_made_for_each_instance() -> None:
    first, second = Point(1), Point(2)
    first.tags["a"] = 1
    assert second.tags == {}
    assert "tags" not in vars(Point)
    assert Put("games", {"pk": "p", "sk": "s"}).refusal == AlreadyDone()
    assert Update("games", {"pk": "p", "sk": "s"}).refusal == VersionConflict()
    table = TableRecord("t", MatchMode.THREE_ROUNDS, "classic", 0, {})
    assert table.connections == dict.fromkeys(SEATS)
    assert (
        table.connections
        is not TableRecord("u", MatchMode.THREE_ROUNDS, "classic", 0, {}).connections
    )


def test_replace_copies_with_changes_and_refuses_unknown_fields() -> None:
    point = Labelled(1, label="p")
    moved = replace(point, y=5)
    assert moved == Labelled(1, 5, label="p")
    assert point.y == 0
    with pytest.raises(TypeError, match="no fields"):
        replace(point, z=1)


def test_repr_names_the_class_and_every_field() -> None:
    assert repr(Short(("a",))) == "Short(accounts=('a',))"
    assert repr(Committed()) == "Committed(before=None, after=None)"
    assert Committed().ok and not ConditionFailed().ok


def test_class_patterns_match_by_position() -> None:
    match Short(("a", "b")):
        case LostRace(players):
            found: tuple[str, ...] = players
        case Short(accounts):
            found = accounts
    assert found == ("a", "b")
