"""``legal_actions`` lists the moves that were once missing from it.

Each position is one a player met: ``apply`` accepted the move, the list did
not offer it. The list must hold the move (as a canonical shape: colours are
free) and ``apply`` must accept what the list holds.

The bound on long lists is held to its promise from both sides: up to
``MAX_COMBINATIONS`` openings or pickups nothing is cut, past it exactly the
tile-minimal ones stay, as ``apply`` judges them.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

import shared_engine.legal
from shared_engine.actions import Action, Discard, Meld, MeldSpec, TakePile
from shared_engine.errors import EngineError
from shared_engine.legal import MAX_COMBINATIONS, legal_actions
from shared_engine.rules import apply
from shared_engine.state import RoundState, from_json
from shared_engine.tiles import NAMES, parse_tile


def _position(**state: Any) -> RoundState:
    base: dict[str, Any] = {"turn": 1, "stock": ["6B", "9K"]}
    return from_json(base | state)


def _shape(action: Action) -> tuple[str, tuple[tuple[int, tuple[str, ...]], ...]]:
    """The action up to colours: rank and tile ranks of each spec ("2", "JK", "13"...)."""
    assert isinstance(action, (Meld, TakePile))
    kind = "take_pile" if isinstance(action, TakePile) else "meld"
    specs = tuple(
        (s.rank, tuple(sorted("JK" if t == 0 else str(t >> 2) for t in s.tiles)))
        for s in action.melds
    )
    return kind, tuple(sorted(specs))


def _listed(state: RoundState, kind: str, *specs: tuple[int, list[str]]) -> Action:
    wanted = (kind, tuple(sorted((r, tuple(sorted(tiles))) for r, tiles in specs)))
    listed = [a for a in legal_actions(state, state.turn) if isinstance(a, (Meld, TakePile))]
    found = [a for a in listed if _shape(a) == wanted]
    assert found, f"{wanted} not among {[_shape(a) for a in listed]}"
    apply(state, state.turn, found[0])
    return found[0]


def test_pickup_with_two_of_three_matching_naturals() -> None:
    """PILE-1, OUT-2: all three 7s would leave one tile without a canasta; two of them do not."""
    state = _position(
        hands={"1": ["7R", "7Y", "7K", "9B"]},
        discard=["4R", "7B"],
        melds={"A": [["10R", "10Y", "10K"]]},
    )
    _listed(state, "take_pile", (7, ["7", "7"]))


def test_pickup_opening_with_the_joker_not_the_two() -> None:
    """PILE-3: 13-13-joker on a 13 reaches 80 >= 70; with the 2 instead it is only 50."""
    state = _position(
        hands={"1": ["13R", "13Y", "2K", "JK", "6B", "9R"]},
        discard=["13K"],
        thresholds={"A": 70},
    )
    _listed(state, "take_pile", (13, ["13", "13", "JK"]))


def test_opening_with_a_joker_rather_than_a_two() -> None:
    """OPEN-1: 5-5-joker = 60 reaches 50, where 5-5-2 = 30 does not."""
    state = _position(phase="play", hands={"1": ["5R", "5Y", "2K", "JK", "9R", "11B"]})
    _listed(state, "meld", (5, ["5", "5", "JK"]))


def test_opening_with_three_of_four_sevens_at_threshold_15() -> None:
    """OPEN-2, OUT-2: four 7s would leave one tile without a canasta; three reach 15."""
    state = _position(
        phase="play", hands={"1": ["7R", "7Y", "7K", "7B", "12R"]}, thresholds={"A": 15}
    )
    _listed(state, "meld", (7, ["7", "7", "7"]))


def test_opening_with_several_melds_at_once_and_a_wild() -> None:
    """OPEN-1: no single meld reaches 90; 1-1-1 (75) and 9-9-2 (30) together do."""
    state = _position(
        phase="play",
        hands={"1": ["1R", "1Y", "1K", "9R", "9B", "2Y", "6K", "11B"]},
        thresholds={"A": 90},
    )
    _listed(state, "meld", (1, ["1", "1", "1"]), (9, ["9", "9", "2"]))


def test_extending_a_meld_with_one_of_two_matching_tiles() -> None:
    """MELD-4, OUT-2: both 8s would leave one tile without a canasta; one 8 leaves two."""
    state = _position(
        phase="play",
        hands={"1": ["8R", "8Y", "4B"]},
        melds={"A": [["8K", "8B", "8B"]]},
    )
    _listed(state, "meld", (8, ["8"]))


def test_going_out_by_melding_one_of_a_pair_and_discarding_the_other() -> None:
    """OUT-1: with a canasta, one 8 goes on the meld and the other is the going-out discard."""
    state = _position(
        phase="play",
        hands={"1": ["8R", "8R"]},
        melds={"A": [["8K", "8B", "8B"], ["10R", "10R", "10Y", "10Y", "10K", "10K", "10B"]]},
    )
    meld = _listed(state, "meld", (8, ["8"]))
    after, _ = apply(state, 1, meld)
    discard = Discard(parse_tile("8R"))
    assert discard in legal_actions(after, 1)
    final, _ = apply(after, 1, discard)
    assert final.went_out == 1
    assert [NAMES[t] for t in final.hands[0]] == []


# --- the bound on long lists before the opening ----------------------------------

# Built so that the meld-minimal openings (or pickups) number exactly the bound or
# one more, and some of them could shed a tile and still be accepted: in the last,
# a natural from a meld holding three wilds (MELD-2).
_AT_THE_BOUND = {
    "openings": _position(
        phase="play",
        hands={"1": ["13R", "13Y", "13K", "1R", "1Y", "1K", "6R", "6Y", "6K", "2K", "JK", "6B"]},
        thresholds={"A": 120},
    ),
    "pickups": _position(
        hands={"1": ["6R", "6Y", "6K", "9R", "9Y", "9K", "2K", "2B", "JK", "6B"]},
        discard=["4B", "9B"],
        thresholds={"A": 90},
    ),
}
_ONE_OVER = {
    "openings": _position(
        phase="play",
        hands={"1": ["4R", "4Y", "4K", "6R", "6Y", "6K", "2K", "2B", "JK", "JK", "6B"]},
        thresholds={"A": 90},
    ),
    "pickups": _position(
        hands={"1": ["11R", "11Y", "6R", "6Y", "6K", "2K", "2B", "JK", "JK", "6B"]},
        discard=["4B", "11B"],
        thresholds={"A": 90},
    ),
    "pickups with three wilds in a meld": _position(
        hands={"1": ["7R", "7Y", "7K", "7B", "7R", "7Y", "6R", "6Y", "2K", "2B", "JK", "6B"]},
        discard=["4B", "7B"],
        thresholds={"A": 120},
    ),
}


def _combinations(state: RoundState) -> set[Meld | TakePile]:
    return {a for a in legal_actions(state, state.turn) if isinstance(a, (Meld, TakePile))}


def _unbounded(state: RoundState, monkeypatch: pytest.MonkeyPatch) -> set[Meld | TakePile]:
    with monkeypatch.context() as patch:
        patch.setattr(shared_engine.legal, "MAX_COMBINATIONS", sys.maxsize)
        return _combinations(state)


def _sheds_a_tile(state: RoundState, action: Meld | TakePile) -> bool:
    """``apply`` still accepts the action with one tile fewer in one of its specs: judged
    by the rules themselves, not by the listing's own arithmetic."""
    for i, spec in enumerate(action.melds):
        for tile in set(spec.tiles):
            tiles = list(spec.tiles)
            tiles.remove(tile)
            specs = list(action.melds)
            specs[i] = MeldSpec(spec.rank, tuple(tiles))
            try:
                apply(state, state.turn, type(action)(tuple(specs)))
            except EngineError:
                continue
            return True
    return False


@pytest.mark.parametrize("kind", sorted(_AT_THE_BOUND))
def test_a_list_as_long_as_the_bound_is_whole(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """OPEN-1, PILE-3: up to MAX_COMBINATIONS openings or pickups, every meld-minimal one is
    listed, those that could shed a tile too."""
    state = _AT_THE_BOUND[kind]
    whole = _unbounded(state, monkeypatch)
    assert len(whole) == MAX_COMBINATIONS
    assert any(_sheds_a_tile(state, a) for a in whole)
    assert _combinations(state) == whole


@pytest.mark.parametrize("kind", sorted(_ONE_OVER))
def test_one_over_the_bound_keeps_exactly_the_tile_minimal_ones(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OPEN-1, PILE-3: past MAX_COMBINATIONS only the openings or pickups from which no tile
    can be taken are listed; the others are reached by laying the rest afterwards."""
    state = _ONE_OVER[kind]
    whole = _unbounded(state, monkeypatch)
    assert len(whole) == MAX_COMBINATIONS + 1
    minimal = {a for a in whole if not _sheds_a_tile(state, a)}
    assert minimal < whole
    assert _combinations(state) == minimal
