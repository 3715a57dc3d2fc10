"""Property 6: a seat's view and the events show nothing the seat may not see."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings

from shared_engine import RoundState, player_view
from shared_engine.events import (
    BonusThreeExposed,
    CanastaCompleted,
    Discarded,
    Event,
    JokerButtonUsed,
    MeldsLaid,
    PileTaken,
    RoundEnded,
    TeamOpened,
    TileDrawn,
)
from shared_engine.tiles import NAMES

from ._model import BONUS_THREES, JOKER, canasta_bonus, points, team_of
from ._support import ALL_NAMES, RoundParams, examples, play, round_params

pytestmark = pytest.mark.property

TILE_NAMES = frozenset(ALL_NAMES)


def tile_names_in(value: Any) -> list[str]:
    """Every tile name anywhere in decoded JSON (dict keys included)."""
    if isinstance(value, str):
        return [value] if value in TILE_NAMES else []
    if isinstance(value, dict):
        return [n for k, v in value.items() for n in tile_names_in(k) + tile_names_in(v)]
    if isinstance(value, list):
        return [n for v in value for n in tile_names_in(v)]
    return []


def names(tiles: Any) -> Counter[str]:
    return Counter(NAMES[t] for t in tiles)


def check_view(state: RoundState, seat: int) -> dict[str, Any]:
    """The view holds the seat's own hand and public tiles only, each where it belongs."""
    text = player_view(state, seat).model_dump_json()
    assert state.seed is not None and state.seed not in text, "DEAL-4: the seed reached a view"
    assert json.dumps(state.seed)[1:-1] not in text
    data = json.loads(text)
    own = names(state.hands[seat - 1])
    top = names(state.discard[-1:])
    for key, value in data.items():
        found = Counter(tile_names_in(value))
        if key == "hand":
            assert Counter(value) == own
        elif key == "melds":
            for team in (0, 1):
                shown = {m["rank"]: m for m in value["AB"[team]]}
                real = {r: m for r, m in enumerate(state.melds[team]) if m}
                assert sorted(shown) == sorted(real)
                for r, meld in real.items():
                    assert Counter(shown[r]["tiles"]) == names(meld)
                    bonus = canasta_bonus(r, meld)
                    kind = None if not bonus else "clean" if bonus in (500, 1000) else "dirty"
                    assert shown[r]["canasta"] == kind, "CAN-1..3: the canasta shown"
                    size = len(meld)
                    assert shown[r]["compact"] == (size > 5), "UI-1"
                    stripe = "red" if size >= 7 else "yellow" if size == 6 else None
                    assert shown[r]["stripe"] == stripe, "UI-1"
        elif key == "discard":
            assert value == [NAMES[t] for t in state.discard]
        elif key == "bonus_threes":
            for team in (0, 1):
                assert Counter(value["AB"[team]]) == names(state.bonus_threes[team])
        elif key == "legal_actions":
            for action in value:
                assert Counter(tile_names_in(action)) <= own + top, f"{action} uses hidden tiles"
        elif key == "tile_points":
            assert set(value) == set(own), "the points of the seat's own tiles, and of no other"
            hand = state.hands[seat - 1]
            assert value == {NAMES[t]: points(t) for t in hand}, "the model's points"
        elif key == "revealed":
            # Every seat's leftover tiles are public once the round is over, never before.
            if state.phase == "round_over":
                hands = {str(s): [NAMES[t] for t in state.hands[s - 1]] for s in (1, 2, 3, 4)}
                assert value == hands
            else:
                assert value is None, "hands are revealed only when the round is over"
        else:
            assert not found, f"view field {key!r} names tiles {sorted(found)}"
    assert data["seat"] == seat
    assert data["turn"] == state.turn and data["phase"] == state.phase
    assert data["opened"] == {"A": state.opened[0], "B": state.opened[1]}
    assert data["thresholds"] == {"A": state.thresholds[0], "B": state.thresholds[1]}
    assert data["hand_sizes"] == {str(s): len(state.hands[s - 1]) for s in (1, 2, 3, 4)}
    assert data["stock_size"] == len(state.stock)
    assert data["account_jokers"] == state.account_jokers[seat - 1]
    return data


def reshuffle_hidden(state: RoundState, seat: int, rng: random.Random) -> RoundState:
    """The same position as ``seat`` sees it: the other hands' tiles and the stock dealt
    anew, with the same sizes; jokers stay where they were (the joker button tells whether
    the stock holds one) and bonus threes stay in the stock (never in a hand)."""
    others = [s for s in (1, 2, 3, 4) if s != seat]
    kept = {s: [t for t in state.hands[s - 1] if t == JOKER] for s in others}
    fixed_stock = [t for t in state.stock if t == JOKER or t in BONUS_THREES]
    pool = [t for s in others for t in state.hands[s - 1] if t != JOKER]
    pool += [t for t in state.stock if t != JOKER and t not in BONUS_THREES]
    rng.shuffle(pool)
    hands = list(state.hands)
    for s in others:
        size = len(state.hands[s - 1]) - len(kept[s])
        hands[s - 1] = tuple(sorted(kept[s] + pool[:size]))
        pool = pool[size:]
    stock = fixed_stock + pool
    rng.shuffle(stock)
    new = state.copy()
    new.hands = tuple(hands)
    new.stock = tuple(stock)
    return new


def check_events(before: RoundState, seat: int, after: RoundState, events: list[Event]) -> None:
    """Events carry only public tiles: never the tile drawn from the stock."""
    team = team_of(seat)
    for ev in events:
        if isinstance(ev, BonusThreeExposed):
            assert ev.tile in BONUS_THREES and ev.tile in after.bonus_threes[team]
        elif isinstance(ev, PileTaken):
            assert ev.tiles == before.discard
        elif isinstance(ev, MeldsLaid):
            laid = Counter(t for _, tiles in ev.melds for t in tiles)
            melded = Counter(t for m in after.melds[team] for t in m)
            assert laid <= melded
        elif isinstance(ev, Discarded):
            assert after.discard[-1:] == (ev.tile,)
        else:
            assert isinstance(
                ev,
                TileDrawn | JokerButtonUsed | TeamOpened | CanastaCompleted | RoundEnded,
            ), f"unknown event {ev!r}"
            assert not [f for f in ev.__slots__ if "tile" in f], f"{ev!r} carries a tile"


@settings(max_examples=examples(30))
@given(round_params)
def test_views_show_only_own_and_public_tiles(params: RoundParams) -> None:
    """Every seat's view at every step: own hand, public tiles and counts, never the seed."""
    state = params.start()
    for seat in (1, 2, 3, 4):
        check_view(state, seat)
    for step in play(params):
        state = step.after
        for seat in (1, 2, 3, 4):
            check_view(state, seat)
        check_events(step.state, step.seat, step.after, step.events)


@settings(max_examples=examples(30))
@given(round_params)
def test_views_do_not_depend_on_hidden_tiles(params: RoundParams) -> None:
    """Dealing the hidden tiles anew (other hands, stock order) leaves a seat's view equal."""
    rng = random.Random(params.choices)
    for step in play(params):
        seat = rng.randint(1, 4)
        hidden = reshuffle_hidden(step.state, seat, rng)
        assert player_view(hidden, seat) == player_view(step.state, seat)
