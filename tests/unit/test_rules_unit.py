"""``apply``: every refusal code, the order of refusals, unchanged states, events and ply.

The conformance scenarios cover the game rules move by move; these tests pin
the engine contract around them (docs/rules-rulings.md, "Order of refusals").
"""

from __future__ import annotations

import random
from dataclasses import dataclass, fields
from typing import Any

import pytest

from shared_engine.actions import (
    Action,
    Discard,
    Draw,
    Meld,
    MeldSpec,
    TakePile,
    parse_action,
)
from shared_engine.bots import random_policy
from shared_engine.deal import start_round
from shared_engine.errors import ERROR_CODES, EngineError
from shared_engine.events import (
    BonusThreeExposed,
    CanastaCompleted,
    Discarded,
    JokerButtonUsed,
    MeldsLaid,
    PileTaken,
    RoundEnded,
    TeamOpened,
    TileDrawn,
)
from shared_engine.rules import apply
from shared_engine.state import RoundState, dumps, from_json, loads
from shared_engine.tiles import names, parse_tile, parse_tiles

pytestmark = pytest.mark.unit

HAND_1 = ["7R", "7K", "7Y", "8R", "8K", "9B", "1R", "1K", "2R", "JK", "3K", "13B"]


def position(**over: Any) -> RoundState:
    """Seat 1 (team A) to play with ``HAND_1``; team A has opened with a meld of 5s."""
    raw: dict[str, Any] = {
        "turn": 1,
        "phase": "play",
        "hands": {"1": HAND_1, "2": ["4R", "4K"], "3": ["10R", "10K"], "4": ["6Y", "6B"]},
        "stock": ["12R", "12K", "12Y", "JK"],
        "discard": ["11R"],
        "melds": {"A": [["5R", "5K", "5Y"]], "B": []},
    }
    raw.update(over)
    return from_json(raw)


def unopened(**over: Any) -> RoundState:
    return position(melds={"A": [], "B": []}, **over)


def act(wire: dict[str, Any]) -> Action:
    return parse_action(wire)


def meld(*specs: tuple[int, list[str]]) -> Action:
    return act({"type": "meld", "melds": [{"rank": r, "tiles": t} for r, t in specs]})


def take(*specs: tuple[int, list[str]]) -> Action:
    return act({"type": "take_pile", "melds": [{"rank": r, "tiles": t} for r, t in specs]})


def discard(name: str) -> Action:
    return act({"type": "discard", "tile": name})


DRAW = act({"type": "draw"})
JOKER = act({"type": "joker_button"})
CANASTA_8 = ["8Y", "8Y", "8B", "8B", "8R", "8K", "2K"]


@dataclass(frozen=True)
class Case:
    name: str
    state: RoundState
    seat: int
    action: Action
    code: str


def _cases() -> list[Case]:
    over = position(phase="round_over", went_out=None)
    draw_phase = position(phase="draw")
    return [
        Case("malformed: meld with no specs", position(), 1, Meld(()), "malformed"),
        Case("malformed: rank 14", position(), 1, Meld((MeldSpec(14, (28,)),)), "malformed"),
        Case("malformed: rank 0", position(), 1, TakePile((MeldSpec(0, (28,)),)), "malformed"),
        Case("malformed: spec with no tiles", position(), 1, Meld((MeldSpec(7, ()),)), "malformed"),
        Case(
            "malformed: two specs of one rank",
            position(),
            1,
            Meld((MeldSpec(7, (28,)), MeldSpec(7, (29,)))),
            "malformed",
        ),
        Case("round over: draw", over, 1, DRAW, "wrong_phase"),
        Case("round over: discard", over, 1, discard("7R"), "wrong_phase"),
        Case("not your turn: draw", draw_phase, 2, DRAW, "not_your_turn"),
        Case("not your turn: discard", position(), 3, discard("10R"), "not_your_turn"),
        Case("draw twice", position(), 1, DRAW, "wrong_phase"),
        Case("take pile after drawing", position(), 1, take((11, ["11R"])), "wrong_phase"),
        Case("joker button after drawing", position(), 1, JOKER, "wrong_phase"),
        Case("meld before drawing", draw_phase, 1, meld((7, ["7R", "7K", "7Y"])), "wrong_phase"),
        Case("discard before drawing", draw_phase, 1, discard("9B"), "wrong_phase"),
        Case("draw in first_discard", position(phase="first_discard"), 1, DRAW, "wrong_phase"),
        Case(
            "meld in first_discard",
            position(phase="first_discard"),
            1,
            meld((7, ["7R", "7K", "7Y"])),
            "wrong_phase",
        ),
        Case(
            "joker button in first_discard",
            position(phase="first_discard", account_jokers={"1": 1}),
            1,
            JOKER,
            "wrong_phase",
        ),
        Case("draw from an empty stock", position(phase="draw", stock=[]), 1, DRAW, "wrong_phase"),
        Case("discard a tile not held", position(), 1, discard("13R"), "tile_not_in_hand"),
        Case(
            "meld a tile more often than held",
            position(),
            1,
            meld((9, ["9B", "9B", "9B"])),
            "tile_not_in_hand",
        ),
        Case(
            "meld the partner's tiles",
            position(),
            1,
            meld((10, ["10R", "10K", "JK"])),
            "tile_not_in_hand",
        ),
        Case("new meld of two", position(), 1, meld((8, ["8R", "8K"])), "meld_too_small"),
        Case(
            "natural of another rank",
            position(),
            1,
            meld((7, ["7R", "7K", "8R"])),
            "mixed_ranks",
        ),
        Case(
            "wilds not outnumbered",
            position(),
            1,
            meld((8, ["8R", "8K", "2R", "JK"])),
            "too_many_wilds",
        ),
        Case(
            "extension breaks MELD-2",
            position(melds={"A": [["5R", "5K", "5Y", "2B", "2Y"]], "B": []}),
            1,
            meld((5, ["JK"])),
            "too_many_wilds",
        ),
        Case(
            "four wilds in a big meld",
            position(melds={"A": [["5R", "5K", "5Y", "5B", "5R", "2B", "2Y", "2K"]], "B": []}),
            1,
            meld((5, ["2R"])),
            "too_many_wilds",
        ),
        Case(
            "twos meld with as many jokers as twos",
            position(hands={"1": ["2R", "2K", "JK", "JK", "9B"]}, stock=["12R", "12K", "12Y"]),
            1,
            meld((2, ["2R", "2K", "JK", "JK"])),
            "too_many_wilds",
        ),
        Case(
            "meld of threes",
            position(hands={"1": ["3K", "3K", "3B", "9B"]}),
            1,
            meld((3, ["3K", "3K", "3B"])),
            "threes_not_meldable",
        ),
        Case(
            "a three in a meld of sevens",
            position(),
            1,
            meld((7, ["7R", "7K", "3K"])),
            "threes_not_meldable",
        ),
        Case(
            "twos meld in classic",
            position(variant="classic", hands={"1": ["2R", "2K", "2Y", "9B"]}),
            1,
            meld((2, ["2R", "2K", "2Y"])),
            "no_twos_meld",
        ),
        Case(
            "opening below the threshold",
            unopened(),
            1,
            meld((7, ["7R", "7K", "7Y"])),
            "below_threshold",
        ),
        Case(
            "empty pile",
            position(phase="draw", discard=[]),
            1,
            take((7, ["7R", "7K"])),
            "pile_empty",
        ),
        Case(
            "two on top",
            position(phase="draw", discard=["7B", "2Y"]),
            1,
            take((7, ["7R", "7K"])),
            "pile_blocked",
        ),
        Case(
            "joker on top",
            position(phase="draw", discard=["7B", "JK"], stock=["12R", "12K", "12Y"]),
            1,
            take((7, ["7R", "7K"])),
            "pile_blocked",
        ),
        Case(
            "blocking three on top",
            position(phase="draw", discard=["7B", "3B"]),
            1,
            take((7, ["7R", "7K"])),
            "pile_blocked",
        ),
        Case(
            "no pair for the top",
            position(phase="draw", discard=["9R"]),
            1,
            take((9, ["9B", "JK"])),
            "pile_needs_pair",
        ),
        Case(
            "pair of another rank",
            position(phase="draw", discard=["13K"]),
            1,
            take((7, ["7R", "7K"])),
            "pile_needs_pair",
        ),
        Case(
            "pair needed even with a team meld",
            position(phase="draw", discard=["5B"], hands={"1": ["5R", "9B", "9K"]}),
            1,
            take((5, ["5R"])),
            "pile_needs_pair",
        ),
        Case(
            "meld the whole hand",
            position(hands={"1": ["8R", "8K", "8Y"]}),
            1,
            meld((8, ["8R", "8K", "8Y"])),
            "must_keep_discard",
        ),
        Case(
            "meld down to one tile without a canasta",
            position(hands={"1": ["8R", "8K", "8Y", "9B"]}),
            1,
            meld((8, ["8R", "8K", "8Y"])),
            "cannot_go_out",
        ),
        Case(
            "go out without a canasta",
            position(hands={"1": ["9B"]}),
            1,
            discard("9B"),
            "cannot_go_out",
        ),
        Case(
            "joker button used already",
            position(phase="draw", account_jokers={"1": 3}, joker_button_used=[1]),
            1,
            JOKER,
            "joker_button_unavailable",
        ),
        Case(
            "joker button without a spare joker",
            position(phase="draw"),
            1,
            JOKER,
            "joker_button_unavailable",
        ),
        Case(
            "joker button without a joker in stock",
            position(phase="draw", account_jokers={"1": 1}, stock=["12R", "12K"]),
            1,
            JOKER,
            "joker_button_unavailable",
        ),
    ]


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_refusal_code(case: Case) -> None:
    with pytest.raises(EngineError) as info:
        apply(case.state, case.seat, case.action)
    assert info.value.code == case.code


def test_every_error_code_is_produced_here() -> None:
    """All 16 codes of SCENARIOS.md can be produced by ``apply``."""
    assert len(ERROR_CODES) == 16
    assert {c.code for c in CASES} == set(ERROR_CODES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_refused_action_changes_nothing(case: Case) -> None:
    state = case.state
    text = dumps(state)
    copy = loads(text)
    before = {name: getattr(state, name) for name in RoundState.__slots__}
    with pytest.raises(EngineError):
        apply(state, case.seat, case.action)
    assert dumps(state) == text
    assert state == copy
    for name, value in before.items():
        assert getattr(state, name) is value, name


# --- order of refusals (docs/rules-rulings.md) -------------------------------------


ORDER = [
    (
        "malformed before round over and seat",
        position(phase="round_over"),
        3,
        Meld(()),
        "malformed",
    ),
    ("round over before not your turn", position(phase="round_over"), 2, DRAW, "wrong_phase"),
    (
        "not your turn before wrong phase",
        position(phase="draw"),
        2,
        meld((4, ["4R", "4K", "4Y"])),
        "not_your_turn",
    ),
    (
        "not your turn before tile checks",
        position(),
        2,
        discard("13R"),
        "not_your_turn",
    ),
    (
        "wrong phase before tile checks",
        position(phase="draw"),
        1,
        discard("13R"),
        "wrong_phase",
    ),
    (
        "first_discard allows only a discard",
        position(phase="first_discard", discard=[]),
        1,
        take((7, ["7R", "7K"])),
        "wrong_phase",
    ),
    (
        "pile_empty before tile checks",
        position(phase="draw", discard=[]),
        1,
        take((13, ["13R", "13R"])),
        "pile_empty",
    ),
    (
        "pile_blocked before tile checks",
        position(phase="draw", discard=["3K"]),
        1,
        take((13, ["13R", "13R"])),
        "pile_blocked",
    ),
    (
        "tile_not_in_hand before pile_needs_pair",
        position(phase="draw", discard=["9R"]),
        1,
        take((9, ["9K"])),
        "tile_not_in_hand",
    ),
    (
        "pile_needs_pair before the spec checks",
        position(phase="draw", discard=["9R"]),
        1,
        take((9, ["9B"]), (8, ["8R", "8K", "3K"])),
        "pile_needs_pair",
    ),
    (
        "tile_not_in_hand checks all specs as a multiset",
        position(),
        1,
        meld((7, ["7R", "7K", "JK"]), (8, ["8R", "8K", "JK"])),
        "tile_not_in_hand",
    ),
    (
        "threes before mixed ranks",
        position(),
        1,
        meld((7, ["7R", "3K", "8R"])),
        "threes_not_meldable",
    ),
    (
        "rank 3 spec is threes even with no three in it",
        position(),
        1,
        meld((3, ["7R", "7K", "7Y"])),
        "threes_not_meldable",
    ),
    (
        "no_twos_meld before mixed ranks",
        position(variant="classic"),
        1,
        meld((2, ["2R", "7R", "JK"])),
        "no_twos_meld",
    ),
    (
        "mixed ranks before meld too small",
        position(),
        1,
        meld((7, ["7R", "8R"])),
        "mixed_ranks",
    ),
    (
        "meld too small before too many wilds",
        position(),
        1,
        meld((7, ["7R", "JK"])),
        "meld_too_small",
    ),
    (
        "specs are checked in order",
        position(),
        1,
        meld((8, ["8R", "8K", "2R", "JK"]), (7, ["7R", "7K", "3K"])),
        "too_many_wilds",
    ),
    (
        "too many wilds before below threshold",
        unopened(),
        1,
        meld((7, ["7R", "2R", "JK"])),
        "too_many_wilds",
    ),
    (
        "below threshold before must keep discard",
        unopened(hands={"1": ["7R", "7K", "7Y"]}),
        1,
        meld((7, ["7R", "7K", "7Y"])),
        "below_threshold",
    ),
    (
        "below threshold before cannot go out",
        unopened(hands={"1": ["7R", "7K", "7Y", "9B"]}),
        1,
        meld((7, ["7R", "7K", "7Y"])),
        "below_threshold",
    ),
    (
        "must keep discard before cannot go out",
        position(hands={"1": ["7R", "7K", "7Y"]}),
        1,
        meld((7, ["7R", "7K", "7Y"])),
        "must_keep_discard",
    ),
    (
        "discard: tile_not_in_hand before cannot_go_out",
        position(hands={"1": ["9B"]}),
        1,
        discard("9R"),
        "tile_not_in_hand",
    ),
    (
        "joker button: used before no spare joker",
        position(phase="draw", joker_button_used=[1]),
        1,
        JOKER,
        "joker_button_unavailable",
    ),
]


@pytest.mark.parametrize(
    ("state", "seat", "action", "code"), [o[1:] for o in ORDER], ids=[o[0] for o in ORDER]
)
def test_order_of_refusals(state: RoundState, seat: int, action: Action, code: str) -> None:
    with pytest.raises(EngineError) as info:
        apply(state, seat, action)
    assert info.value.code == code


def test_pile_3_rest_of_the_pile_does_not_count_for_the_opening() -> None:
    """PILE-3: 8+8+8 = 15 with the top; the aces lower in the pile do not help."""
    state = unopened(
        phase="draw",
        hands={"1": ["8R", "8K", "9B", "9K"]},
        discard=["1R", "1K", "1Y", "8Y"],
    )
    with pytest.raises(EngineError) as info:
        apply(state, 1, take((8, ["8R", "8K"])))
    assert info.value.code == "below_threshold"


def test_must_keep_discard_counts_the_rest_of_the_pile() -> None:
    """Melding the whole hand in a pickup is fine when the pile brings tiles (rulings)."""
    state = position(phase="draw", hands={"1": ["9B", "9K"]}, discard=["4R", "6B", "9R"])
    new, _ = apply(state, 1, take((9, ["9B", "9K"])))
    assert names(new.hands[0]) == ["4R", "6B"]


# --- apply's contract for actions built in code -----------------------------------


@pytest.mark.parametrize("phase", ["draw", "play", "first_discard"])
def test_apply_refuses_a_non_action_as_malformed(phase: str) -> None:
    """Rulings, order of refusals 1: anything not a well-formed action is ``malformed``.

    Here the wire dict is passed where ``parse_action``'s result belongs.
    """
    with pytest.raises(EngineError) as info:
        apply(position(phase=phase), 1, {"type": "draw"})  # type: ignore[arg-type]
    assert info.value.code == "malformed"


@pytest.mark.parametrize(
    "action",
    [Discard(99), Meld((MeldSpec(7, (99, 28, 29)),))],
    ids=["discard", "meld"],
)
def test_apply_with_an_unknown_tile_id_raises_engine_error(action: Action) -> None:
    """``apply`` promises ``EngineError`` for a refusal, never another exception."""
    with pytest.raises(EngineError):
        apply(position(), 1, action)


# --- events ----------------------------------------------------------------------


def _tiles_in(event: object) -> set[int]:
    found: set[int] = set()
    for f in fields(event):  # type: ignore[arg-type]
        value = getattr(event, f.name)
        if f.name == "tile":
            found.add(value)
        elif f.name == "tiles":
            found.update(value)
        elif f.name == "melds":
            for _, tiles in value:
                found.update(tiles)
    return found


def test_tile_drawn_carries_only_the_seat() -> None:
    assert [f.name for f in fields(TileDrawn)] == ["seat"]


def test_draw_events_do_not_reveal_the_drawn_tile_turn_2() -> None:
    state = position(phase="draw", stock=["12R", "4Y"])
    new, events = apply(state, 1, DRAW)
    assert events == [TileDrawn(1)]
    assert parse_tile("12R") in new.hands[0]
    assert all(parse_tile("12R") not in _tiles_in(e) for e in events)


def test_draw_through_a_bonus_three_reveals_only_the_three_turn_2() -> None:
    state = position(phase="draw", stock=["3R", "3Y", "12R", "4Y"])
    new, events = apply(state, 1, DRAW)
    assert events == [
        TileDrawn(1),
        BonusThreeExposed(1, parse_tile("3R")),
        BonusThreeExposed(1, parse_tile("3Y")),
    ]
    assert names(new.bonus_threes[0]) == ["3R", "3Y"]
    assert names(new.stock) == ["4Y"]
    assert parse_tile("12R") in new.hands[0]
    assert all(parse_tile("12R") not in _tiles_in(e) for e in events)


def test_no_draw_event_reveals_the_tile_drawn_in_random_rounds() -> None:
    for seed in range(6):
        state = start_round(f"events-{seed}")
        policy = random_policy(random.Random(seed))
        while not state.round_over:
            seat = state.turn
            action = policy(state, seat)
            new, events = apply(state, seat, action)
            if isinstance(action, Draw):
                gained = set(new.hands[seat - 1]) - set(state.hands[seat - 1])
                for event in events:
                    assert not gained & _tiles_in(event), event
                    assert isinstance(event, TileDrawn | BonusThreeExposed | RoundEnded)
            state = new


def test_discard_event() -> None:
    new, events = apply(position(), 1, discard("9B"))
    assert events == [Discarded(1, parse_tile("9B"))]
    assert new.turn == 2
    assert new.phase == "draw"
    assert names(new.discard) == ["11R", "9B"]


def test_meld_events_on_an_opening() -> None:
    state = unopened()
    action = meld((1, ["1R", "1K", "JK"]))
    new, events = apply(state, 1, action)
    assert events == [
        MeldsLaid(1, ((1, parse_tiles(["1R", "1K", "JK"])),)),
        TeamOpened(0),
    ]
    assert new.opened == (True, False)


def test_meld_events_without_an_opening() -> None:
    _, events = apply(position(), 1, meld((7, ["7R", "7K", "7Y"])))
    assert events == [MeldsLaid(1, ((7, parse_tiles(["7R", "7K", "7Y"])),))]


def test_canasta_completed_when_a_meld_reaches_seven_can_1() -> None:
    state = position(melds={"A": [["5R", "5K", "5Y", "5B", "5R", "2K"]], "B": []})
    new, events = apply(state, 1, meld((5, ["2R"])))
    assert CanastaCompleted(0, 5) in events
    assert len(new.melds[0][5]) == 7


def test_no_second_canasta_event_for_a_bigger_meld_can_1() -> None:
    state = position(melds={"A": [["5R", "5K", "5Y", "5B", "5R", "5K", "5Y"]], "B": []})
    _, events = apply(state, 1, meld((5, ["JK"])))
    assert not any(isinstance(e, CanastaCompleted) for e in events)


def test_take_pile_events_pile_4() -> None:
    state = unopened(
        phase="draw", hands={"1": ["1R", "1K", "9B", "9K"]}, discard=["4R", "6B", "1Y"]
    )
    new, events = apply(state, 1, take((1, ["1R", "1K"])))
    assert events == [
        PileTaken(1, parse_tiles(["4R", "6B", "1Y"])),
        MeldsLaid(1, ((1, parse_tiles(["1R", "1K"])),)),
        TeamOpened(0),
    ]
    assert new.discard == ()
    assert new.phase == "play"
    assert sorted(names(new.hands[0])) == sorted(["9B", "9K", "4R", "6B"])
    assert sorted(names(new.melds[0][1])) == sorted(["1R", "1K", "1Y"])


def test_joker_button_event_jokers_1() -> None:
    state = position(phase="draw", account_jokers={"1": 2}, stock=["12R", "JK", "12K"])
    new, events = apply(state, 1, JOKER)
    assert events == [JokerButtonUsed(1)]
    assert names(new.stock) == ["12R", "12K"]
    assert new.account_jokers == (1, 0, 0, 0)
    assert new.joker_used == (True, False, False, False)
    assert new.phase == "play"


def test_going_out_events_out_1() -> None:
    state = position(hands={"1": ["9B"]}, melds={"A": [CANASTA_8], "B": []})
    new, events = apply(state, 1, discard("9B"))
    assert events == [Discarded(1, parse_tile("9B")), RoundEnded(1)]
    assert new.phase == "round_over"
    assert new.went_out == 1
    assert new.turn == 1


def test_stock_out_events_stock_1() -> None:
    state = position(phase="draw", stock=["12R"])
    mid, events = apply(state, 1, DRAW)
    assert events == [TileDrawn(1)]
    assert mid.stock == ()
    assert mid.phase == "play"
    end, events = apply(mid, 1, discard("12R"))
    assert events == [Discarded(1, parse_tile("12R")), RoundEnded(None)]
    assert end.phase == "round_over"
    assert end.went_out is None


def test_last_stock_tile_a_bonus_three_ends_the_round_at_once_stock_2() -> None:
    state = position(phase="draw", stock=["3Y"])
    new, events = apply(state, 1, DRAW)
    assert events == [TileDrawn(1), BonusThreeExposed(1, parse_tile("3Y")), RoundEnded(None)]
    assert new.phase == "round_over"
    assert new.hands == state.hands
    assert names(new.bonus_threes[0]) == ["3Y"]
    assert new.went_out is None


# --- ply -------------------------------------------------------------------------


def test_ply_increments_by_one_per_applied_action() -> None:
    state = start_round("ply")
    policy = random_policy(random.Random(5))
    assert state.ply == 0
    count = 0
    while not state.round_over:
        state, _ = apply(state, state.turn, policy(state, state.turn))
        count += 1
        assert state.ply == count


def test_apply_returns_a_new_state_and_keeps_the_old_one() -> None:
    state = position()
    text = dumps(state)
    new, _ = apply(state, 1, meld((7, ["7R", "7K", "7Y"])))
    assert new is not state
    assert dumps(state) == text
    assert new.ply == state.ply + 1
