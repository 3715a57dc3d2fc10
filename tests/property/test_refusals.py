"""Property 5: hostile and illegal actions are refused with a known code and change nothing;
whatever is accepted is legal by the rules."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from shared_engine import (
    ERROR_CODES,
    Discard,
    Draw,
    EngineError,
    JokerButton,
    Meld,
    MeldSpec,
    RoundState,
    TakePile,
    action_to_wire,
    apply,
    dumps,
    legal_actions,
    parse_action,
)
from shared_engine.tiles import NAMES, TILE_KINDS

from ._model import model_apply, normal
from ._support import ALL_NAMES, RoundParams, check_transition, examples, play, round_params

pytestmark = pytest.mark.property

TYPES = ("draw", "take_pile", "joker_button", "meld", "discard")
KEYS = ("type", "tile", "melds", "rank", "tiles")
JUNK_NAMES = ("", "0R", "14R", "3X", "jk", "Jk", "7r", " 7R", "7R ", "1", "R", "10", "13BB", "JKR")

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 20),
    st.floats(),
    st.text(max_size=4),
    st.sampled_from(TYPES),
    st.sampled_from(ALL_NAMES),
)
junk = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def _names(tiles: list[int]) -> list[str]:
    return [NAMES[t] for t in tiles]


def _spec_of_rank(state: RoundState, seat: int, rank: int) -> st.SearchStrategy[dict[str, Any]]:
    """Some held naturals of ``rank``, some held wilds, maybe one odd tile (or the pile top)."""
    hand = state.hands[seat - 1]
    naturals = [t for t in hand if t >> 2 == rank]
    wilds = [t for t in hand if t == 0 or (t >> 2 == 2 and rank != 2)]
    odd = [t for t in hand if t not in naturals and t not in wilds]
    odd += state.discard[-1:]
    return st.builds(
        lambda n, w, o: {"rank": rank, "tiles": _names(naturals[:n] + wilds[:w] + o)},
        st.integers(0, len(naturals)),
        st.integers(0, len(wilds)),
        st.lists(st.sampled_from(odd), max_size=1) if odd else st.just([]),
    )


def _hand_specs(state: RoundState, seat: int) -> st.SearchStrategy[dict[str, Any]]:
    """Specs made of tiles really held, from near-legal melds to odd subsets of the hand."""
    hand = state.hands[seat - 1]
    pool = _names([*hand, *state.discard[-1:]])
    melded = {r for r, m in enumerate(state.melds[(seat - 1) % 2]) if m}
    ranks = sorted({t >> 2 for t in hand if t} | {2, 3, *(t >> 2 for t in state.discard[-1:])})
    ranks = sorted({*ranks, *melded})
    subsets = st.builds(
        lambda r, picks: {"rank": r, "tiles": [pool[i] for i in picks]},
        st.sampled_from(ranks) | st.integers(1, 13),
        st.lists(st.integers(0, len(pool) - 1), min_size=1, max_size=len(pool), unique=True),
    )
    near = st.sampled_from(ranks).flatmap(lambda r: _spec_of_rank(state, seat, r))
    return st.one_of(near, near, subsets) if pool else st.nothing()


def split_hand(hand: tuple[int, ...], keep: int | None) -> list[dict[str, Any]]:
    """The hand but tile ``keep`` as specs by rank, the wilds on the first spec."""
    tiles = [t for i, t in enumerate(hand) if i != keep]
    by_rank: dict[int, list[int]] = {}
    for t in tiles:
        by_rank.setdefault(2 if t == 0 else t >> 2, []).append(t)
    wilds = by_rank.pop(2, []) if len(by_rank) > 1 else []
    specs = [{"rank": r, "tiles": _names(ts)} for r, ts in sorted(by_rank.items())]
    if specs:
        specs[0]["tiles"] += _names(wilds)
    return specs


def _whole_hand(state: RoundState, seat: int) -> st.SearchStrategy[dict[str, Any]]:
    """Meld the whole hand, or all but one tile: reaches must_keep_discard and cannot_go_out."""
    hand = state.hands[seat - 1]
    return st.builds(
        lambda kind, keep: {"type": kind, "melds": split_hand(hand, keep)},
        st.sampled_from(["meld", "take_pile"]),
        st.none() | st.integers(0, max(len(hand) - 1, 0)),
    )


def _mutate(wire: dict[str, Any], hand: list[str], how: int, where: int) -> dict[str, Any]:
    """One small change to a legal meld or pickup: the edges of the meld rules."""
    specs = [{"rank": s["rank"], "tiles": list(s["tiles"])} for s in wire["melds"]]
    spec = specs[where % len(specs)]
    if how == 0 and len(spec["tiles"]) > 1:
        spec["tiles"].pop(where % len(spec["tiles"]))  # one tile fewer
    elif how == 1 and hand:
        spec["tiles"].append(hand[where % len(hand)])  # one more held tile
    elif how == 2 and len(specs) > 1:
        specs.remove(spec)  # one spec fewer
    elif how == 3:
        spec["rank"] = where % 15  # another rank
    elif how == 4 and hand:
        spec["tiles"].append(hand[where % len(hand)])
        spec["tiles"].append(hand[(where // 7) % len(hand)])
    return {"type": wire["type"], "melds": specs}


def _mutated_legal(state: RoundState, seat: int) -> st.SearchStrategy[dict[str, Any]]:
    listed = [action_to_wire(a) for a in legal_actions(state, state.turn)]
    listed = [w for w in listed if "melds" in w]
    if not listed:
        return st.nothing()
    hand = _names(list(state.hands[seat - 1]))
    return st.builds(
        lambda wire, how, where: _mutate(wire, hand, how, where),
        st.sampled_from(listed),
        st.integers(0, 5),
        st.integers(0, 10_000),
    )


def hostile_wire(state: RoundState, seat: int) -> st.SearchStrategy[Any]:
    """Wire messages, from almost right to nonsense."""
    held = [NAMES[t] for t in state.hands[seat - 1]] or list(ALL_NAMES)
    names = st.one_of(
        st.sampled_from(held),
        st.sampled_from(ALL_NAMES),
        st.sampled_from(JUNK_NAMES),
        st.text(max_size=3),
    )
    random_spec = st.fixed_dictionaries(
        {"rank": st.integers(-1, 15) | junk, "tiles": st.lists(names, max_size=8) | junk}
    )
    spec = st.one_of(_hand_specs(state, seat), _hand_specs(state, seat), random_spec)
    well_formed = st.one_of(
        st.sampled_from([{"type": "draw"}, {"type": "joker_button"}]),
        st.builds(lambda n: {"type": "discard", "tile": n}, names),
        st.builds(
            lambda kind, specs: {"type": kind, "melds": specs},
            st.sampled_from(["meld", "take_pile"]),
            st.lists(spec, max_size=4),
        ),
    )
    # The action the phase calls for, made of held tiles: reaches the deeper meld checks.
    kind = {"play": "meld", "draw": "take_pile"}.get(state.phase, "meld")
    targeted = st.builds(
        lambda specs: {"type": kind, "melds": specs},
        st.lists(_hand_specs(state, seat), min_size=1, max_size=2),
    )
    mutated = _mutated_legal(state, seat)
    return st.one_of(
        mutated,
        mutated,
        targeted,
        targeted,
        _whole_hand(state, seat),
        well_formed,
        well_formed,
        st.builds(lambda msg, k, v: {**msg, k: v}, well_formed, st.sampled_from(KEYS), junk),
        st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=5), junk, max_size=4),
        junk,
    )


@dataclass(frozen=True)
class CodeBuilt:
    """An action handed to ``apply`` as it is, not parsed from the wire."""

    action: Any


tile_ids = st.sampled_from(TILE_KINDS) | st.integers(-2, 60)
code_specs = st.lists(
    st.builds(
        MeldSpec,
        st.integers(-1, 15),
        st.lists(tile_ids, max_size=6).map(tuple),
    ),
    max_size=3,
).map(tuple)
code_actions = st.one_of(
    st.just(Draw()),
    st.just(JokerButton()),
    st.builds(Discard, tile_ids),
    st.builds(Meld, code_specs),
    st.builds(TakePile, code_specs),
    st.sampled_from([None, "draw", 5, {"type": "draw"}, (), Draw]),
).map(CodeBuilt)
"""Actions built in code rather than parsed: ranks out of range, empty specs, ids that are no
tile, objects that are no action."""


def probe(state: RoundState, seat: int, raw: Any) -> None:
    before = dumps(state)
    if isinstance(raw, CodeBuilt):
        action = raw.action
    else:
        try:
            action = parse_action(raw)
        except EngineError as exc:
            assert exc.code == "malformed", f"parse_action({raw!r}) refused with {exc.code}"
            event("parse: malformed")
            return
    expected = model_apply(state, seat, action)
    try:
        after, _ = apply(state, seat, action)
    except EngineError as exc:
        assert exc.code in ERROR_CODES
        assert dumps(state) == before, "a refused action changed the state"
        assert exc.code == expected, (
            f"seat {seat} {action!r}: engine refused with {exc.code}, the rules say "
            f"{expected if isinstance(expected, str) else 'legal'}"
        )
        event(f"refused: {exc.code}")
        return
    assert dumps(state) == before, "apply changed its input"
    assert isinstance(expected, RoundState), (
        f"seat {seat} {action!r} was accepted, but the rules refuse it: {expected}"
    )
    check_transition(state, seat, after)
    assert normal(after) == normal(expected)
    event(f"accepted: {type(action).__name__}")


MAX_PROBED_STEPS = 16


@settings(max_examples=examples(40))
@given(round_params, st.data())
def test_hostile_actions_are_refused_cleanly_or_are_legal(
    params: RoundParams, data: st.DataObject
) -> None:
    """Any message from any seat at random steps: either ``apply`` refuses it with the code the
    order of refusals names (never another exception) and nothing changes, or it was legal
    and the position is the one the rules give."""
    pick = random.Random(params.choices ^ 0x5EED)
    probed = 0
    state = params.start()
    for step in play(params):
        state = step.after
        # Probe often where the edges are: meld phases, and small hands (OUT-1, OUT-2).
        small = len(step.state.hands[step.seat - 1]) <= 4
        chance = 1.0 if small else 0.3 if step.state.phase == "play" else 0.1
        if probed >= MAX_PROBED_STEPS or pick.random() > chance:
            continue
        probed += 1
        for _ in range(data.draw(st.integers(1, 3), label="probes")):
            turn = step.state.turn
            seat = data.draw(
                st.one_of(st.just(turn), st.just(turn), st.integers(1, 4), st.sampled_from([0, 5])),
                label="seat",
            )
            owner = seat if 1 <= seat <= 4 else turn
            raw = data.draw(
                st.one_of(hostile_wire(step.state, owner), code_actions), label="action"
            )
            probe(step.state, seat, raw)
    seat = data.draw(st.integers(1, 4), label="seat after the round")
    probe(state, seat, data.draw(hostile_wire(state, seat), label="action after the round"))


@settings(max_examples=examples(40))
@given(round_params)
def test_melding_down_to_the_last_tiles_follows_out_1_and_out_2(params: RoundParams) -> None:
    """With a small hand in the play phase, melding everything or all but one tile is refused
    or accepted exactly as must_keep_discard, cannot_go_out (OUT-1, OUT-2) and the meld
    rules say."""
    for step in play(params):
        state, seat = step.state, step.seat
        hand = state.hands[seat - 1]
        if state.phase != "play" or len(hand) > 8:
            continue
        for keep in (None, *range(len(hand))):
            specs = split_hand(hand, keep)
            if specs:
                probe(state, seat, {"type": "meld", "melds": specs})
