"""Auto-play (TABLE-2 and its ruling in docs/rules-rulings.md)."""

from __future__ import annotations

from typing import Any

import pytest

from shared_engine.actions import DISCARDS, Draw
from shared_engine.autoplay import auto_discard, auto_play_step, auto_play_turn
from shared_engine.deal import start_round
from shared_engine.rules import apply
from shared_engine.state import RoundState, from_json
from shared_engine.tiles import NAMES, names

pytestmark = pytest.mark.unit


def position(hand: list[str], **over: Any) -> RoundState:
    raw: dict[str, Any] = {
        "turn": 1,
        "phase": "play",
        "hands": {"1": hand, "2": ["4Y"], "3": ["10Y"], "4": ["6K"]},
        "stock": ["11K"],
        "discard": [],
    }
    raw.update(over)
    return from_json(raw)


def choice(hand: list[str], **over: Any) -> str:
    return NAMES[auto_discard(position(hand, **over), 1)]


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        (["3B", "3K", "1R", "JK"], "3K"),
        (["3K", "3B", "13R"], "3K"),
        (["3B", "1R", "1K", "JK", "2R"], "3B"),
        (["3B", "3B", "13Y"], "3B"),
    ],
)
def test_a_blocking_three_first_3k_before_3b_table_2(hand: list[str], expected: str) -> None:
    assert choice(hand) == expected


def test_highest_point_lonely_natural_table_2() -> None:
    assert choice(["1R", "13B", "13K", "5Y", "2R", "JK"]) == "1R"
    assert choice(["13B", "5Y", "5K", "4R"]) == "13B"


def test_a_lonely_natural_beats_a_higher_paired_one_table_2() -> None:
    assert choice(["1R", "1K", "13B", "4Y", "4K"]) == "13B"


def test_wilds_do_not_pair_a_natural_table_2() -> None:
    assert choice(["9R", "2R", "JK", "4Y", "4K"]) == "9R"


def test_a_natural_matching_a_team_meld_is_not_lonely_table_2() -> None:
    melds = {"A": [["1Y", "1B", "1B"]], "B": []}
    assert choice(["1R", "13B", "5Y"], melds=melds) == "13B"


def test_the_partners_meld_counts_as_a_team_meld_table_2() -> None:
    """Seat 3's melds are team A's melds: seat 1 keeps its lonely ace."""
    state = from_json(
        {
            "turn": 3,
            "phase": "play",
            "hands": {"1": [], "2": [], "3": ["1R", "12B", "5Y"], "4": []},
            "stock": ["7R"],
            "melds": {"A": [["1Y", "1B", "1B"]], "B": []},
        }
    )
    assert NAMES[auto_discard(state, 3)] == "12B"


def test_an_opponents_meld_does_not_count_table_2() -> None:
    melds = {"A": [], "B": [["1Y", "1B", "1B"]]}
    assert choice(["1R", "13B", "5Y"], melds=melds) == "1R"


def test_tie_break_by_higher_rank_table_2() -> None:
    assert choice(["10R", "12B", "11Y", "4K", "4K"]) == "12B"
    assert choice(["6R", "9B", "8Y", "13K", "13K", "12B", "12Y"]) == "9B"


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        (["12B", "12K", "12Y", "12R", "5R", "5K"], "12R"),
        (["12B", "12Y", "5R", "5K"], "12Y"),
        (["12B", "12K", "5R", "5K"], "12K"),
        (["12B", "12B", "5R", "5K"], "12B"),
    ],
)
def test_tie_break_by_colour_r_y_k_b_table_2(hand: list[str], expected: str) -> None:
    assert choice(hand) == expected


def test_highest_natural_when_none_is_lonely_table_2() -> None:
    assert choice(["13R", "13K", "1R", "1K", "2R", "JK"]) == "1R"


def test_highest_natural_when_all_lonely_ones_match_team_melds_table_2() -> None:
    melds = {"A": [["13Y", "13B", "13B"], ["4Y", "4B", "4B"]], "B": []}
    assert choice(["13R", "4R", "9K", "9Y"], melds=melds) == "13R"


def test_a_wild_only_when_nothing_else_joker_before_two_table_2() -> None:
    assert choice(["2R", "JK", "2K"]) == "JK"
    assert choice(["2R", "2K"]) in ("2R", "2K")
    assert choice(["JK", "JK"]) == "JK"


def test_auto_play_step_draws_in_the_draw_phase() -> None:
    state = position(["1R", "13B"], phase="draw")
    assert isinstance(auto_play_step(state, 1), Draw)


def test_auto_play_step_discards_in_the_play_phase() -> None:
    state = position(["1R", "13B", "13K"])
    assert auto_play_step(state, 1) == DISCARDS[auto_discard(state, 1)]


def test_auto_play_turn_draws_then_discards_never_takes_the_pile_table_2() -> None:
    """The pile could be taken (pair of 9s, 9 on top): auto-play still draws."""
    state = position(
        ["9R", "9K", "7R", "7K", "7Y", "13B"],
        phase="draw",
        discard=["4B", "9Y"],
        melds={"A": [["5R", "5K", "5Y"]], "B": []},
        stock=["1Y", "12K"],
    )
    new = auto_play_turn(state)
    assert new.turn == 2
    assert new.phase == "draw"
    assert new.ply == state.ply + 2
    assert names(new.stock) == ["12K"]
    assert new.melds == state.melds
    assert names(new.discard) == ["4B", "9Y", "1Y"]
    assert sorted(names(new.hands[0])) == sorted(["9R", "9K", "7R", "7K", "7Y", "13B"])


def test_auto_play_turn_never_melds_table_2() -> None:
    state = position(
        ["7R", "7K", "7Y", "8R", "8K", "8Y"],
        melds={"A": [["5R", "5K", "5Y"]], "B": []},
    )
    new = auto_play_turn(state)
    assert new.melds == state.melds
    assert len(new.hands[0]) == 5
    assert new.ply == state.ply + 1


def test_auto_play_turn_only_discards_in_first_discard_table_2() -> None:
    state = start_round("auto-first")
    assert state.phase == "first_discard"
    tile = auto_discard(state, 1)
    new = auto_play_turn(state)
    assert new.stock == state.stock
    assert new.discard == (tile,)
    assert len(new.hands[0]) == 14
    assert new.turn == 2
    assert new.ply == 1


def test_auto_play_turn_stops_when_the_draw_ends_the_round_stock_2() -> None:
    state = position(["1R", "13B"], phase="draw", stock=["3R"])
    new = auto_play_turn(state)
    assert new.phase == "round_over"
    assert new.hands == state.hands


def test_auto_play_turn_is_what_apply_gives_step_by_step() -> None:
    state = start_round("auto-steps")
    state = auto_play_turn(state)
    expected, _ = apply(state, 2, auto_play_step(state, 2))
    expected, _ = apply(expected, 2, auto_play_step(expected, 2))
    assert auto_play_turn(state) == expected
