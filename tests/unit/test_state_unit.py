"""Round state: JSON round trip, scenario defaults (SCENARIOS.md) and malformed states."""

from __future__ import annotations

import random
from typing import Any

import pytest

from shared_engine.bots import random_policy
from shared_engine.deal import start_round
from shared_engine.errors import EngineError
from shared_engine.rules import apply
from shared_engine.state import RoundState, dumps, from_json, loads, meld_rank, to_json
from shared_engine.tiles import names, parse_tiles

pytestmark = pytest.mark.unit

MAX_STATE_BYTES = 2_000


def _minimal(**extra: Any) -> dict[str, Any]:
    return {
        "turn": 2,
        "hands": {"1": ["5R"], "2": ["7R", "7K"], "3": ["4B"], "4": ["6Y"]},
        "stock": ["11R", "12R"],
        **extra,
    }


def _assert_round_trips(state: RoundState) -> None:
    assert from_json(to_json(state)) == state
    assert loads(dumps(state)) == state
    assert dumps(loads(dumps(state))) == dumps(state)


def test_fresh_round_round_trips() -> None:
    _assert_round_trips(start_round("fresh"))


def test_every_position_of_played_rounds_round_trips() -> None:
    for seed in range(4):
        state = start_round(f"trip-{seed}")
        policy = random_policy(random.Random(seed))
        _assert_round_trips(state)
        while not state.round_over:
            state, _ = apply(state, state.turn, policy(state, state.turn))
            _assert_round_trips(state)


def test_round_trip_keeps_everything_of_a_position() -> None:
    raw = _minimal(
        variant="classic",
        phase="play",
        discard=["9B", "4R"],
        melds={"A": [["8R", "8K", "8Y", "JK"]], "B": [["1R", "1K", "1Y", "2B", "2R"]]},
        bonus_threes={"A": ["3R"], "B": ["3Y", "3Y"]},
        match_scores={"A": -20, "B": 1600},
        account_jokers={"1": 2, "4": 1},
        joker_button_used=[3],
        dealer=2,
        ply=17,
        seed="s",
        commitment="c",
    )
    state = from_json(raw)
    _assert_round_trips(state)
    data = to_json(state)
    assert data["variant"] == "classic"
    assert data["phase"] == "play"
    assert data["discard"] == ["9B", "4R"]
    assert data["thresholds"] == {"A": 15, "B": 90}
    assert data["account_jokers"] == {"1": 2, "2": 0, "3": 0, "4": 1}
    assert data["joker_button_used"] == [3]
    assert data["dealer"] == 2
    assert data["ply"] == 17


def test_equality_sees_a_difference() -> None:
    a = from_json(_minimal())
    b = from_json(_minimal(stock=["12R", "11R"]))
    assert a != b
    assert a == from_json(_minimal())


def test_scenario_defaults() -> None:
    """SCENARIOS.md: phase draw, empty pile and melds, opened iff melds, scores 0."""
    state = from_json(_minimal())
    assert state.phase == "draw"
    assert state.variant == "twos-meld"
    assert state.discard == ()
    assert state.opened == (False, False)
    assert state.match_scores == (0, 0)
    assert state.thresholds == (50, 50)
    assert state.account_jokers == (0, 0, 0, 0)
    assert state.joker_used == (False, False, False, False)
    assert state.bonus_threes == ((), ())
    assert state.went_out is None
    assert state.ply == 0


def test_opened_defaults_to_true_iff_the_team_has_a_meld() -> None:
    state = from_json(_minimal(melds={"A": [], "B": [["9R", "9K", "9Y"]]}))
    assert state.opened == (False, True)


def test_explicit_opened_wins_over_the_default() -> None:
    state = from_json(_minimal(opened={"A": True}))
    assert state.opened == (True, False)


@pytest.mark.parametrize(
    ("scores", "thresholds"),
    [
        ({"A": -1, "B": 0}, (15, 50)),
        ({"A": 1499, "B": 1500}, (50, 90)),
        ({"A": 2999, "B": 3000}, (90, 120)),
        ({"A": 6999, "B": 7000}, (120, 150)),
    ],
)
def test_thresholds_default_from_match_scores_open_2(
    scores: dict[str, int], thresholds: tuple[int, int]
) -> None:
    assert from_json(_minimal(match_scores=scores)).thresholds == thresholds


def test_hands_are_kept_as_multisets() -> None:
    state = from_json(_minimal(hands={"2": ["7R", "JK", "7R", "1B"]}))
    assert sorted(names(state.hands[1])) == sorted(["7R", "JK", "7R", "1B"])


MALFORMED_STATES: list[tuple[str, Any]] = [
    ("not a mapping", ["turn", 1]),
    ("none", None),
    ("missing turn", {"hands": {}, "stock": []}),
    ("turn 0", _minimal(turn=0)),
    ("turn 5", _minimal(turn=5)),
    ("turn as string", _minimal(turn="1")),
    ("bad phase", _minimal(phase="discard")),
    ("bad variant", _minimal(variant="romanian")),
    ("missing stock", {"turn": 1, "hands": {}}),
    ("bad tile in hand", _minimal(hands={"1": ["7R", "7Q"]})),
    ("hand as a string", _minimal(hands={"1": "7R"})),
    ("hands as a list", _minimal(hands=[["7R"], [], [], []])),
    ("bad tile in stock", _minimal(stock=["11R", "14R"])),
    ("bad tile in discard", _minimal(discard=["JK", "0B"])),
    ("bad tile in a meld", _minimal(melds={"A": [["7R", "7K", "7X"]]})),
    ("empty meld", _minimal(melds={"A": [[]]})),
    ("two melds of one rank", _minimal(melds={"A": [["7R", "7K", "7Y"], ["7B", "7B", "7R"]]})),
    ("melds not a mapping", _minimal(melds=[["7R", "7K", "7Y"]])),
    ("bad bonus three tile", _minimal(bonus_threes={"A": ["3Z"]})),
    ("match score not a number", _minimal(match_scores={"A": "lots"})),
    ("account jokers not a number", _minimal(account_jokers={"1": "x"})),
    ("joker_button_used not a list", _minimal(joker_button_used=5)),
]


@pytest.mark.parametrize(
    "raw", [r for _, r in MALFORMED_STATES], ids=[n for n, _ in MALFORMED_STATES]
)
def test_malformed_state_is_refused(raw: Any) -> None:
    with pytest.raises(EngineError) as info:
        from_json(raw)
    assert info.value.code == "malformed"


@pytest.mark.parametrize(
    "raw",
    [_minimal(turn=True), _minimal(turn=1.0)],
    ids=["turn true", "turn 1.0"],
)
def test_turn_must_be_an_integer_seat(raw: Any) -> None:
    """SCENARIOS.md: ``turn`` is a seat 1-4; JSON ``true`` or ``1.0`` is not a seat."""
    with pytest.raises(EngineError) as info:
        from_json(raw)
    assert info.value.code == "malformed"


def test_missing_hands_is_malformed() -> None:
    """SCENARIOS.md lists ``hands`` as required (no default), like ``turn`` and ``stock``."""
    with pytest.raises(EngineError) as info:
        from_json({"turn": 1, "stock": ["7R"]})
    assert info.value.code == "malformed"


def test_opened_must_be_a_boolean() -> None:
    """``opened`` maps teams to bools; the string "no" must not read as True."""
    with pytest.raises(EngineError) as info:
        from_json(_minimal(opened={"A": "no", "B": "false"}))
    assert info.value.code == "malformed"


def test_loads_rejects_a_non_state_text() -> None:
    with pytest.raises(EngineError) as info:
        loads('{"turn": 1}')
    assert info.value.code == "malformed"


@pytest.mark.parametrize(
    ("tiles", "rank"),
    [
        (["1R", "1K", "1Y", "2R", "2B"], 1),  # an ace meld with two 2s is aces
        (["1R", "1K", "2R"], 1),
        (["1R", "1K", "1Y", "1B", "2R", "2B", "2Y"], 1),
        (["2R", "2K", "JK"], 2),  # the twos meld 2-2-joker
        (["2R", "2K", "2Y", "2B", "2R", "JK", "JK"], 2),
        (["13R", "13K", "JK", "2Y"], 13),
        (["7R", "7K", "7Y"], 7),
    ],
)
def test_meld_rank_inference(tiles: list[str], rank: int) -> None:
    assert meld_rank(parse_tiles(tiles)) == rank


def test_meld_slots_follow_the_inferred_rank() -> None:
    aces = ["1R", "1K", "1Y", "2R", "2B"]
    twos = ["2K", "2Y", "JK"]
    state = from_json(_minimal(melds={"A": [aces, twos], "B": []}))
    assert state.melds[0][1] == tuple(sorted(parse_tiles(aces)))
    assert state.melds[0][2] == tuple(sorted(parse_tiles(twos)))
    assert [r for r, m in enumerate(state.melds[0]) if m] == [1, 2]


def test_dumps_of_a_round_stays_small() -> None:
    """A full round state fits comfortably in one store item: below 2,000 bytes."""
    largest = 0
    for i in range(50):
        state = start_round(f"size-{i}", match_scores=(7_500, -300))
        policy = random_policy(random.Random(i))
        largest = max(largest, len(dumps(state).encode()))
        while not state.round_over:
            state, _ = apply(state, state.turn, policy(state, state.turn))
            largest = max(largest, len(dumps(state).encode()))
    print(f"largest dumps over 50 random rounds: {largest} bytes")
    assert largest < MAX_STATE_BYTES


def test_a_stored_variant_name_is_read_back_or_refused() -> None:
    """A queue key or an item names its variant as text: anything but the two names fails,
    so a misspelt one never deals a table of the other variant."""
    from shared_engine import VARIANTS, variant_of

    assert [variant_of(name) for name in ("twos-meld", "classic")] == list(VARIANTS)
    for name in ("twos_meld", "Classic", ""):
        with pytest.raises(ValueError, match="unknown variant"):
            variant_of(name)
