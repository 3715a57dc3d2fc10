"""Meld validity: one function answers the move's check and the stored state's (MELD-1..6)."""

from __future__ import annotations

import pytest

from shared_engine import EngineError, Meld, from_json, parse_action
from shared_engine.melds import meld_error
from shared_engine.rules import plan_melds
from shared_engine.tiles import parse_tiles

pytestmark = pytest.mark.unit

CASES = [
    (7, ["7R", "7Y", "7K"], None),
    (7, ["7R", "7Y", "JK"], None),
    (7, ["7R", "JK", "2R"], "too_many_wilds"),
    (7, ["7R", "7Y", "JK", "2R"], "too_many_wilds"),
    (7, ["7R", "7Y", "7K", "JK", "2R"], None),
    (7, ["7R", "7Y", "7K", "7B", "JK", "2R", "2Y", "JK"], "too_many_wilds"),
    (7, ["7R", "7Y", "8K"], "mixed_ranks"),
    (7, ["7R", "7Y"], "meld_too_small"),
    (3, ["3K", "3B", "3K"], "threes_not_meldable"),
    (8, ["8R", "8Y", "3K"], "threes_not_meldable"),
    (2, ["2R", "2Y", "2K", "JK"], None),
    (2, ["2R", "2Y", "2K", "JK", "JK", "JK"], "too_many_wilds"),
    (2, ["2R", "2Y", "JK", "JK"], "too_many_wilds"),
    (0, ["JK", "JK", "JK"], "malformed"),
]


@pytest.mark.parametrize(("rank", "tiles", "code"), CASES)
def test_meld_rules_meld_1_2_3_6(rank: int, tiles: list[str], code: str | None) -> None:
    error = meld_error(rank, parse_tiles(tiles), twos=True)
    assert (error.code if error else None) == code


def test_twos_meld_only_in_their_variant() -> None:
    error = meld_error(2, parse_tiles(["2R", "2Y", "2K"]), twos=False)
    assert error is not None and error.code == "no_twos_meld"


LAYABLE = [c for c in CASES if c[0] not in (0, 3) and c[1].count("JK") <= 2]


@pytest.mark.parametrize(("rank", "tiles", "code"), LAYABLE)
def test_a_move_and_a_stored_state_agree_on_every_meld(
    rank: int, tiles: list[str], code: str | None
) -> None:
    """The same tiles are a valid meld to lay exactly when they are a valid meld to load."""
    filler = ["5R", "6R", "9R", "10R", "11R", "12R"]
    state = from_json(
        {
            "turn": 1,
            "phase": "play",
            "hands": {"1": [*tiles, *filler]},
            "stock": [],
            "opened": {"A": True},
        }
    )
    action = parse_action({"type": "meld", "melds": [{"rank": rank, "tiles": tiles}]})
    assert isinstance(action, Meld)
    plan = plan_melds(state, 1, action.melds)
    laid = (plan.code if isinstance(plan, EngineError) else None) == code
    try:
        from_json({"turn": 1, "hands": {"1": filler}, "stock": [], "melds": {"A": [tiles]}})
        loads_ok = True
    except EngineError:
        loads_ok = False
    assert laid
    assert loads_ok == (code is None)
