"""Actions: the wire form (SCENARIOS.md, actions) and its validation into ``malformed``."""

from __future__ import annotations

import time

import pytest

from shared_engine.actions import (
    Discard,
    Draw,
    JokerButton,
    Meld,
    MeldSpec,
    TakePile,
    action_to_wire,
    parse_action,
)
from shared_engine.errors import EngineError
from shared_engine.tiles import parse_tile, parse_tiles

pytestmark = pytest.mark.unit

WIRE_ACTIONS = [
    {"type": "draw"},
    {"type": "joker_button"},
    {"type": "discard", "tile": "7R"},
    {"type": "discard", "tile": "JK"},
    {"type": "discard", "tile": "3K"},
    {"type": "discard", "tile": "13B"},
    {"type": "meld", "melds": [{"rank": 7, "tiles": ["7R", "7K", "2Y"]}]},
    {
        "type": "meld",
        "melds": [
            {"rank": 1, "tiles": ["1R", "1R", "JK"]},
            {"rank": 2, "tiles": ["2R", "2K", "2B"]},
            {"rank": 13, "tiles": ["13Y"]},
        ],
    },
    {"type": "take_pile", "melds": [{"rank": 9, "tiles": ["9R", "9B"]}]},
    {
        "type": "take_pile",
        "melds": [{"rank": 9, "tiles": ["9R", "9B", "JK"]}, {"rank": 4, "tiles": ["4R"] * 3}],
    },
]


@pytest.mark.parametrize("wire", WIRE_ACTIONS, ids=lambda w: str(w["type"]))
def test_wire_round_trip(wire: dict[str, object]) -> None:
    assert action_to_wire(parse_action(wire)) == wire


def test_parse_action_builds_the_internal_values() -> None:
    assert parse_action({"type": "draw"}) == Draw()
    assert parse_action({"type": "joker_button"}) == JokerButton()
    assert parse_action({"type": "discard", "tile": "7R"}) == Discard(parse_tile("7R"))
    spec = MeldSpec(7, parse_tiles(["7R", "7K", "2Y"]))
    assert parse_action({"type": "meld", "melds": [{"rank": 7, "tiles": ["7R", "7K", "2Y"]}]}) == (
        Meld((spec,))
    )
    assert parse_action(
        {"type": "take_pile", "melds": [{"rank": 7, "tiles": ["7R", "7K", "2Y"]}]}
    ) == TakePile((spec,))


def test_action_to_wire_reads_back_to_an_equal_action() -> None:
    action = Meld((MeldSpec(5, parse_tiles(["5R", "5R", "JK"])), MeldSpec(2, parse_tiles(["2B"]))))
    assert parse_action(action_to_wire(action)) == action


def _spec(rank: object = 7, tiles: object = ("7R", "7K", "7Y")) -> dict[str, object]:
    return {"rank": rank, "tiles": list(tiles) if isinstance(tiles, tuple) else tiles}


MALFORMED: list[tuple[str, object]] = [
    ("none", None),
    ("int", 7),
    ("string", "draw"),
    ("list", [{"type": "draw"}]),
    ("empty dict", {}),
    ("no type", {"tile": "7R"}),
    ("unknown type", {"type": "pass"}),
    ("type not a string", {"type": 1}),
    ("type unhashable", {"type": ["draw"]}),
    ("type bytes", {"type": b"draw"}),
    ("type wrong case", {"type": "Draw"}),
    ("non-string key", {1: "draw"}),
    ("extra field on draw", {"type": "draw", "tile": "7R"}),
    ("extra field on discard", {"type": "discard", "tile": "7R", "seat": 1}),
    ("extra field on a spec", {"type": "meld", "melds": [{**_spec(), "x": 1}]}),
    ("discard without tile", {"type": "discard"}),
    ("discard tile null", {"type": "discard", "tile": None}),
    ("discard tile int", {"type": "discard", "tile": 28}),
    ("discard tile bool", {"type": "discard", "tile": True}),
    ("discard tile list", {"type": "discard", "tile": ["7R"]}),
    ("discard 0R", {"type": "discard", "tile": "0R"}),
    ("discard 14B", {"type": "discard", "tile": "14B"}),
    ("discard 3X", {"type": "discard", "tile": "3X"}),
    ("discard 07R", {"type": "discard", "tile": "07R"}),
    ("discard lower case", {"type": "discard", "tile": "jk"}),
    ("discard trailing newline", {"type": "discard", "tile": "JK\n"}),
    ("discard empty name", {"type": "discard", "tile": ""}),
    ("meld without melds", {"type": "meld"}),
    ("meld melds null", {"type": "meld", "melds": None}),
    ("meld melds a dict", {"type": "meld", "melds": _spec()}),
    ("meld melds a string", {"type": "meld", "melds": "7R7K7Y"}),
    ("meld empty melds", {"type": "meld", "melds": []}),
    ("take_pile empty melds", {"type": "take_pile", "melds": []}),
    ("take_pile without melds", {"type": "take_pile"}),
    ("rank as string", {"type": "meld", "melds": [_spec(rank="7")]}),
    ("rank as float", {"type": "meld", "melds": [_spec(rank=7.0)]}),
    ("rank as bool", {"type": "meld", "melds": [_spec(rank=True)]}),
    ("rank null", {"type": "meld", "melds": [_spec(rank=None)]}),
    ("rank 0", {"type": "meld", "melds": [_spec(rank=0)]}),
    ("rank 14", {"type": "meld", "melds": [_spec(rank=14)]}),
    ("rank negative", {"type": "meld", "melds": [_spec(rank=-7)]}),
    ("spec without rank", {"type": "meld", "melds": [{"tiles": ["7R", "7K", "7Y"]}]}),
    ("spec without tiles", {"type": "meld", "melds": [{"rank": 7}]}),
    ("spec not a dict", {"type": "meld", "melds": [["7R", "7K", "7Y"]]}),
    ("empty tiles", {"type": "take_pile", "melds": [_spec(tiles=[])]}),
    ("tiles a string", {"type": "meld", "melds": [_spec(tiles="7R")]}),
    ("bad tile name in spec", {"type": "meld", "melds": [_spec(tiles=["7R", "7K", "7Z"])]}),
    ("tile int in spec", {"type": "meld", "melds": [_spec(tiles=["7R", "7K", 30])]}),
    ("tile null in spec", {"type": "meld", "melds": [_spec(tiles=["7R", None, "7Y"])]}),
    (
        "too many specs",
        {"type": "meld", "melds": [_spec(rank=r, tiles=[f"{r}R"] * 3) for r in range(1, 15)]},
    ),
    (
        "duplicated rank in meld",
        {"type": "meld", "melds": [_spec(tiles=["7R", "7K", "7Y"]), _spec(tiles=["7B"])]},
    ),
    (
        "duplicated rank in take_pile",
        {"type": "take_pile", "melds": [_spec(tiles=["7R", "7K"]), _spec(tiles=["7B"])]},
    ),
    ("107 tiles in a spec", {"type": "meld", "melds": [_spec(tiles=["7R"] * 107)]}),
]


@pytest.mark.parametrize(("raw"), [raw for _, raw in MALFORMED], ids=[n for n, _ in MALFORMED])
def test_malformed_wire_is_refused_with_malformed_only(raw: object) -> None:
    with pytest.raises(EngineError) as info:
        parse_action(raw)
    assert info.value.code == "malformed"


def test_thirteen_specs_is_the_limit_but_accepted() -> None:
    specs = [_spec(rank=r, tiles=[f"{r}R"] * 3) for r in range(1, 14)]
    action = parse_action({"type": "meld", "melds": specs})
    assert isinstance(action, Meld)
    assert [s.rank for s in action.melds] == list(range(1, 14))


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "meld", "melds": [_spec(tiles=["7R"] * 1_000_000)]},
        {"type": "meld", "melds": [_spec()] * 1_000_000},
        {"type": "take_pile", "melds": [_spec(tiles=["7Z"] * 1_000_000)]},
        {"type": "discard", "tile": "7R" * 1_000_000},
    ],
    ids=["million tiles", "million specs", "million bad tiles", "megabyte tile name"],
)
def test_huge_inputs_are_refused_quickly(raw: object) -> None:
    started = time.perf_counter()
    with pytest.raises(EngineError) as info:
        parse_action(raw)
    assert info.value.code == "malformed"
    assert time.perf_counter() - started < 1.0


def test_malformed_detail_says_where() -> None:
    with pytest.raises(EngineError) as info:
        parse_action({"type": "meld", "melds": [_spec(rank=14)]})
    assert "rank" in info.value.detail
