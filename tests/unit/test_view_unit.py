"""``player_view``: a seat sees its own tiles, counts of the others', and the public table."""

from __future__ import annotations

import random
from typing import Any

import pytest

from shared_engine.actions import action_to_wire
from shared_engine.bots import random_policy
from shared_engine.deal import start_round
from shared_engine.legal import legal_actions
from shared_engine.rules import apply
from shared_engine.scoring import score_round
from shared_engine.state import RoundState, from_json
from shared_engine.tiles import names
from shared_engine.view import player_view

pytestmark = pytest.mark.unit

SEED = "SECRET-SEED-do-not-leak"
HANDS = {
    "1": ["1R", "4R", "2R"],
    "2": ["5Y", "6Y", "JK"],
    "3": ["7K", "8K", "11Y"],
    "4": ["9B", "10B", "13Y"],
}
STOCK = ["11R", "12Y", "13K", "6K"]


def table(**over: Any) -> RoundState:
    """Every hand and the stock hold tile kinds found nowhere else."""
    raw: dict[str, Any] = {
        "turn": 2,
        "phase": "play",
        "hands": HANDS,
        "stock": STOCK,
        "discard": ["1B", "4B"],
        "melds": {"A": [["5R", "5K", "5B"]], "B": [["12R", "12K", "12B", "12R"]]},
        "bonus_threes": {"A": ["3Y"], "B": []},
        "account_jokers": {"2": 1},
        "seed": SEED,
        "commitment": "c0ffee",
    }
    raw.update(over)
    return from_json(raw)


def _quoted(name: str) -> str:
    return f'"{name}"'


@pytest.mark.parametrize("seat", [1, 2, 3, 4])
def test_a_view_holds_no_other_seats_tiles(seat: int) -> None:
    text = player_view(table(), seat).model_dump_json()
    for other, tiles in HANDS.items():
        for name in tiles:
            if int(other) == seat:
                assert _quoted(name) in text
            else:
                assert _quoted(name) not in text, (seat, other, name)


@pytest.mark.parametrize("seat", [1, 2, 3, 4])
def test_a_view_holds_neither_the_stock_nor_the_seed(seat: int) -> None:
    view = player_view(table(), seat)
    text = view.model_dump_json()
    for name in STOCK:
        assert _quoted(name) not in text
    assert SEED not in text
    assert "seed" not in view.model_dump()
    assert "stock" not in view.model_dump()
    assert view.stock_size == len(STOCK)


@pytest.mark.parametrize("seat", [1, 2, 3, 4])
def test_a_view_of_a_dealt_round_shows_own_hand_and_counts(seat: int) -> None:
    state = start_round("view-dealt")
    policy = random_policy(random.Random(1))
    for _ in range(25):
        state, _ = apply(state, state.turn, policy(state, state.turn))
    view = player_view(state, seat)
    assert view.hand == names(state.hands[seat - 1])
    assert view.hand_sizes == {str(s): len(state.hands[s - 1]) for s in (1, 2, 3, 4)}
    assert view.stock_size == len(state.stock)
    assert state.seed is not None
    assert state.seed not in view.model_dump_json()
    assert view.seat == seat
    assert view.team == ("A" if seat in (1, 3) else "B")


def test_the_public_table_is_shown() -> None:
    view = player_view(table(), 1)
    assert view.discard == ["1B", "4B"]
    assert view.bonus_threes == {"A": ["3Y"], "B": []}
    assert view.opened == {"A": True, "B": True}
    assert view.turn == 2
    assert view.phase == "play"
    assert [m.rank for m in view.melds["A"]] == [5]
    assert sorted(view.melds["B"][0].tiles) == sorted(["12R", "12K", "12B", "12R"])


def test_account_jokers_are_the_seats_own() -> None:
    assert player_view(table(), 2).account_jokers == 1
    assert player_view(table(), 1).account_jokers == 0


@pytest.mark.parametrize("seat", [1, 2, 3, 4])
def test_legal_actions_only_for_the_seat_to_play(seat: int) -> None:
    state = table()
    view = player_view(state, seat)
    if seat == state.turn:
        assert view.legal_actions
        assert view.legal_actions == [action_to_wire(a) for a in legal_actions(state, seat)]
    else:
        assert view.legal_actions == []


def test_round_scores_absent_while_the_round_runs() -> None:
    for phase in ("draw", "play", "first_discard"):
        assert player_view(table(phase=phase), 1).round_scores is None


def test_round_scores_present_when_the_round_is_over() -> None:
    state = table(phase="round_over", went_out=None)
    view = player_view(state, 3)
    assert view.round_scores is not None
    assert view.legal_actions == []
    a, b = score_round(state)
    assert view.round_scores["A"].total == a.total
    assert view.round_scores["B"].total == b.total
    assert view.round_scores["A"].model_dump() == {**a.as_dict(), "total": a.total}


@pytest.mark.parametrize(
    ("meld", "rank", "kind"),
    [
        (["7R", "7K", "7Y", "7B", "7R", "7K"], 7, None),
        (["7R", "7K", "7Y", "7B", "7R", "7K", "7Y"], 7, "clean"),
        (["7R", "7K", "7Y", "7B", "7R", "7K", "JK"], 7, "dirty"),
        (["1R", "1K", "1Y", "1B", "2R", "2K", "2Y"], 1, "dirty"),
        (["2R", "2K", "2Y", "2B", "2R", "2K", "2Y"], 2, "clean"),
        (["2R", "2K", "2Y", "2B", "2R", "2K", "JK"], 2, "dirty"),
        (["2R", "2K", "JK"], 2, None),
    ],
)
def test_meld_view_canasta_flag_can_2_can_3(meld: list[str], rank: int, kind: str | None) -> None:
    quiet = {"1": ["10R"], "2": ["10K"], "3": ["10Y"], "4": ["10B"]}
    view = player_view(table(melds={"A": [meld], "B": []}, hands=quiet, stock=["11R"]), 1)
    (meld_view,) = view.melds["A"]
    assert meld_view.rank == rank
    assert meld_view.canasta == kind
    assert sorted(meld_view.tiles) == sorted(meld)


def test_the_rule_facts_a_client_shows_come_with_the_view() -> None:
    """Tile values (the value table), wilds, PILE-1 and PILE-2, and each meld's wilds:
    the client copies none of these rules."""
    view = player_view(table(), 1)
    assert view.tile_points == {"1R": 25, "4R": 5, "2R": 20}
    assert view.wild_ranks == [0, 2]
    assert (view.pile_blocked, view.pile_pair) == (False, False)
    assert player_view(table(hands={**HANDS, "1": ["4R", "4Y", "1R"]}), 1).pile_pair
    for top in ("2K", "3B", "JK"):
        blocked = player_view(table(discard=["4B", top], hands={**HANDS, "1": ["2R", "2Y"]}), 1)
        assert (blocked.pile_blocked, blocked.pile_pair) == (True, False), top
    empty = player_view(table(discard=[]), 1)
    assert (empty.pile_blocked, empty.pile_pair) == (False, False)
    melds = {"A": [["7R", "7K", "7B", "2Y", "2K"], ["2Y", "2K", "2B", "JK"]], "B": []}
    shown = player_view(table(melds=melds), 1).melds["A"]
    assert {m.rank: m.wilds for m in shown} == {7: 2, 2: 1}


def test_hands_are_revealed_only_once_the_round_is_over() -> None:
    """Every seat's leftover tiles are the round's result (SCORE-1), never before."""
    for seat in (1, 2, 3, 4):
        assert player_view(table(), seat).revealed is None
    over = player_view(table(phase="round_over", went_out=1), 2)
    assert over.revealed is not None
    assert {s: sorted(t) for s, t in over.revealed.items()} == {
        s: sorted(t) for s, t in HANDS.items()
    }
