"""Scoring figures: SCORE-1/2, CAN-1..3, THREE-1/2, OUT-3."""

from __future__ import annotations

from typing import Any

import pytest

from shared_engine.scoring import ScoreBreakdown, canasta_bonus, score_round
from shared_engine.state import RoundState, from_json
from shared_engine.tiles import parse_tiles

pytestmark = pytest.mark.unit


def table(**over: Any) -> RoundState:
    raw: dict[str, Any] = {
        "turn": 1,
        "phase": "round_over",
        "hands": {"1": [], "2": [], "3": [], "4": []},
        "stock": [],
    }
    raw.update(over)
    return from_json(raw)


def team_a(**over: Any) -> ScoreBreakdown:
    return score_round(table(**over))[0]


@pytest.mark.parametrize(
    ("rank", "meld", "bonus"),
    [
        (7, ["7R", "7K", "7Y", "7B", "7R", "7K", "7Y"], 500),
        (7, ["7R", "7K", "7Y", "7B", "7R", "7K", "7Y", "7B"], 500),
        (7, ["7R", "7K", "7Y", "7B", "7R", "2K", "JK"], 300),
        (7, ["7R", "7K", "7Y", "7B", "7R", "7K", "2K"], 300),
        (7, ["7R", "7K", "7Y", "7B", "7R", "7K", "7Y", "JK"], 300),
        (1, ["1R", "1K", "1Y", "1B", "1R", "1K", "1Y"], 500),
        (1, ["1R", "1K", "1Y", "1B", "2R", "2K", "2Y"], 300),
        (2, ["2R", "2K", "2Y", "2B", "2R", "2K", "2Y"], 1000),
        (2, ["2R", "2K", "2Y", "2B", "2R", "2K", "JK"], 700),
        (2, ["2R", "2K", "2Y", "2B", "2R", "JK", "JK"], 700),
        (2, ["2R", "2K", "2Y", "2B", "2R", "2K", "2Y", "2B"], 1000),
        (7, ["7R", "7K", "7Y", "7B", "7R", "7K"], 0),
        (2, ["2R", "2K", "2Y", "2B", "2R", "JK"], 0),
    ],
)
def test_canasta_bonus_can_1_can_2_can_3(rank: int, meld: list[str], bonus: int) -> None:
    assert canasta_bonus(rank, parse_tiles(meld)) == bonus


@pytest.mark.parametrize(
    ("meld", "total"),
    [
        (["2R", "2K", "2Y", "2B", "2R", "2K", "2Y"], 1140),
        (["2R", "2K", "2Y", "2B", "2R", "2K", "JK"], 870),
        (["2R", "2K", "2Y", "2B", "2R", "JK", "JK"], 900),
    ],
)
def test_twos_canasta_totals_can_3(meld: list[str], total: int) -> None:
    score = team_a(melds={"A": [meld], "B": []})
    assert score.melded + score.canastas == total
    assert score.total == total


def test_clean_canasta_of_aces_with_tile_values_score_2() -> None:
    score = team_a(melds={"A": [["1R", "1K", "1Y", "1B", "1R", "1K", "1Y"]], "B": []})
    assert score.as_dict() == {
        "melded": 175,
        "canastas": 500,
        "bonus_threes": 0,
        "going_out": 0,
        "hands": 0,
    }


def test_blocking_threes_in_hand_cost_100_each_three_2() -> None:
    score = team_a(hands={"1": ["3K", "3B", "7R"], "3": ["3K", "JK", "1Y"]})
    assert score.hands == -(100 + 100 + 5 + 100 + 50 + 25)


def test_hands_count_both_partners_only_score_1() -> None:
    a, b = score_round(table(hands={"1": ["13R"], "2": ["1R"], "3": ["2K"], "4": ["9B"]}))
    assert a.hands == -(10 + 20)
    assert b.hands == -(25 + 5)


@pytest.mark.parametrize(
    ("threes", "opened", "score"),
    [
        (["3R"], True, 100),
        (["3R"], False, -100),
        (["3R", "3Y"], True, 200),
        (["3R", "3Y", "3Y"], False, -300),
        (["3R", "3R", "3Y", "3Y"], True, 400),
        (["3R", "3R", "3Y", "3Y"], False, -400),
        ([], False, 0),
    ],
)
def test_bonus_threes_three_1(threes: list[str], opened: bool, score: int) -> None:
    assert team_a(bonus_threes={"A": threes}, opened={"A": opened}).bonus_threes == score


def test_bonus_threes_follow_opened_from_the_melds() -> None:
    state = table(bonus_threes={"A": ["3R"], "B": ["3Y"]}, melds={"A": [["9R", "9K", "9B"]]})
    a, b = score_round(state)
    assert (a.bonus_threes, b.bonus_threes) == (100, -100)


@pytest.mark.parametrize(
    ("went_out", "bonus"),
    [(1, (100, 0)), (3, (100, 0)), (2, (0, 100)), (4, (0, 100)), (None, (0, 0))],
)
def test_going_out_bonus_only_for_the_team_that_went_out_out_3(
    went_out: int | None, bonus: tuple[int, int]
) -> None:
    a, b = score_round(table(went_out=went_out))
    assert (a.going_out, b.going_out) == bonus


def test_round_score_is_the_sum_of_its_parts_score_1() -> None:
    state = table(
        melds={
            "A": [["2R", "2K", "2Y", "2B", "2R", "2K", "JK"], ["9R", "9K", "9B", "2Y"]],
            "B": [["13R", "13K", "13B"]],
        },
        bonus_threes={"A": ["3R"], "B": ["3Y", "3Y"]},
        hands={"1": [], "2": ["3K", "4R"], "3": ["1R", "JK"], "4": ["12B"]},
        went_out=1,
    )
    a, b = score_round(state)
    assert a.as_dict() == {
        "melded": 170 + 35,
        "canastas": 700,
        "bonus_threes": 100,
        "going_out": 100,
        "hands": -75,
    }
    assert a.total == 170 + 35 + 700 + 100 + 100 - 75
    assert b.as_dict() == {
        "melded": 30,
        "canastas": 0,
        "bonus_threes": 200,
        "going_out": 0,
        "hands": -(100 + 5 + 10),
    }
    assert b.total == 30 + 200 - 115


def test_an_unopened_team_has_no_other_penalty_score_2() -> None:
    a, _ = score_round(table(hands={"1": ["7R"]}))
    assert a.as_dict() == {
        "melded": 0,
        "canastas": 0,
        "bonus_threes": 0,
        "going_out": 0,
        "hands": -5,
    }
