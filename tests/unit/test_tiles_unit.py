"""Tiles: notation, the full set (DEAL-1) and the values table (RULES.md, tile values)."""

from __future__ import annotations

from collections import Counter

import pytest

from shared_engine.errors import EngineError
from shared_engine.tiles import (
    BLOCKING_THREES,
    BONUS_THREES,
    FULL_SET,
    JOKER,
    NAMES,
    TILE_KINDS,
    VALUES,
    blocks_pickup,
    colour_of,
    count_rank,
    is_three,
    is_wild,
    names,
    parse_tile,
    parse_tiles,
    plays_wild,
    rank_counts,
    rank_of,
    tile,
)

pytestmark = pytest.mark.unit

ALL_NAMES = ["JK", *(f"{rank}{colour}" for rank in range(1, 14) for colour in "RYKB")]


def test_there_are_53_tile_kinds_deal_1() -> None:
    assert len(TILE_KINDS) == 53
    assert len(set(TILE_KINDS)) == 53
    assert sorted(NAMES[t] for t in TILE_KINDS) == sorted(ALL_NAMES)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_notation_round_trip_for_every_kind(name: str) -> None:
    tile_id = parse_tile(name)
    assert tile_id in TILE_KINDS
    assert NAMES[tile_id] == name
    assert names([tile_id]) == [name]


def test_parse_tiles_keeps_order_and_duplicates() -> None:
    assert names(parse_tiles(["7R", "JK", "7R", "13B"])) == ["7R", "JK", "7R", "13B"]


def test_full_set_has_106_tiles_two_of_each_kind_deal_1() -> None:
    assert len(FULL_SET) == 106
    counts = Counter(FULL_SET)
    assert set(counts) == set(TILE_KINDS)
    assert set(counts.values()) == {2}
    assert counts[JOKER] == 2


def test_full_set_holds_104_ranked_tiles_and_two_jokers_deal_1() -> None:
    counts = rank_counts(FULL_SET)
    assert counts[0] == 2  # jokers
    assert counts[1:] == [8] * 13  # two copies of each rank in four colours


@pytest.mark.parametrize(
    ("rank", "points"),
    [
        (1, 25),
        (2, 20),
        (4, 5),
        (5, 5),
        (6, 5),
        (7, 5),
        (8, 5),
        (9, 5),
        (10, 10),
        (11, 10),
        (12, 10),
        (13, 10),
    ],
)
def test_tile_values_table(rank: int, points: int) -> None:
    for colour in "RYKB":
        assert VALUES[tile(rank, colour)] == points


def test_joker_is_worth_50() -> None:
    assert VALUES[parse_tile("JK")] == 50


def test_threes_have_no_face_value_three_1_three_2() -> None:
    for colour in "RYKB":
        assert VALUES[tile(3, colour)] == 0


def test_bonus_and_blocking_threes_by_colour() -> None:
    assert set(names(BONUS_THREES)) == {"3R", "3Y"}
    assert set(names(BLOCKING_THREES)) == {"3K", "3B"}


def test_tile_builder_matches_notation() -> None:
    assert tile(13, "B") == parse_tile("13B")
    assert tile(1, "R") == parse_tile("1R")


@pytest.mark.parametrize(
    "junk",
    ["0R", "14B", "3X", "", None, 7, "jk", "7r", " 7R", "7R ", "07R", "J", "JKR", "1", "R", [], {}],
    ids=repr,
)
def test_parse_tile_rejects_junk_as_malformed(junk: object) -> None:
    with pytest.raises(EngineError) as info:
        parse_tile(junk)  # type: ignore[arg-type]
    assert info.value.code == "malformed"


def test_parse_tiles_rejects_one_bad_name_among_good_ones() -> None:
    with pytest.raises(EngineError) as info:
        parse_tiles(["7R", "8R", "99Z"])
    assert info.value.code == "malformed"


@pytest.mark.parametrize("name", ALL_NAMES)
def test_rank_and_colour_read_back_the_notation(name: str) -> None:
    t = parse_tile(name)
    if t == JOKER:
        assert rank_of(t) == 0
    else:
        assert f"{rank_of(t)}{'RYKB'[colour_of(t)]}" == name


def test_wilds_are_jokers_and_twos_except_in_the_meld_of_twos_meld_2_meld_3() -> None:
    assert is_wild(JOKER) and is_wild(tile(2, "K"))
    assert not is_wild(tile(1, "R")) and not is_wild(tile(3, "B"))
    assert plays_wild(tile(2, "R"), 7) and plays_wild(JOKER, 2)
    assert not plays_wild(tile(2, "R"), 2), "a 2 is a natural of the meld of 2s"
    assert not plays_wild(tile(7, "R"), 7)


def test_jokers_twos_and_threes_block_the_pile_pile_2() -> None:
    blocking = {t for t in TILE_KINDS if blocks_pickup(t)}
    assert blocking == {JOKER, *(tile(r, c) for r in (2, 3) for c in "RYKB")}
    assert {t for t in TILE_KINDS if is_three(t)} == BONUS_THREES | BLOCKING_THREES


def test_count_rank_counts_one_rank_jokers_at_rank_0() -> None:
    hand = parse_tiles(["JK", "JK", "7R", "7B", "8R", "13K"])
    assert count_rank(hand, 7) == 2
    assert count_rank(hand, 0) == 2
    assert count_rank(hand, 9) == 0
