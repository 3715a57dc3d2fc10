"""A turn's melds and discard in one ``play`` (``move``, then ``then``): one write, all or
nothing (TURN-1: draw, any number of melds, one discard).

The mover hears one answer; the other seats are shown the whole turn once, at its end;
each move is logged as its own. A refused move refuses the message: the table, the log and
the hands stay as they were, and the error names the first refused move by its place.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from services.common.protocol import MAX_THEN, Play
from services.common.store import GameStore
from services.common.telemetry import RecordingTelemetry
from services.turn.app import TurnService
from shared_engine import (
    EngineError,
    RoundState,
    action_to_wire,
    apply,
    parse_action,
    player_view,
    unpack,
)
from shared_engine.bots import greedy_policy
from tests.services import test_turn
from tests.services.conftest import snapshot
from tests.services.fakes import RecordingPusher
from tests.services.test_turn_repair import _write_and_lose_the_answer

pytestmark = pytest.mark.unit

turn = test_turn.turn
dealt = test_turn.dealt
"""The turn service and table t1 as ``test_turn.py`` wires and deals them."""


def _table_state(store: GameStore) -> tuple[int, RoundState]:
    table = store.get_table("t1")
    assert table is not None and table.state is not None
    return table.version, unpack(table.state)


@dataclass(frozen=True)
class Melding:
    """The table as the seat to play may meld: its version and state, the seat, the seat's
    first legal meld and a discard legal after it."""

    version: int
    state: RoundState
    seat: int
    meld: dict[str, Any]
    discard: dict[str, Any]

    def parts(self) -> tuple[int, RoundState, int, dict[str, Any], dict[str, Any]]:
        return self.version, self.state, self.seat, self.meld, self.discard


@pytest.fixture
def melding(turn: TurnService, store: GameStore, dealt: RoundState) -> Melding:
    """The table played through the service until a seat has drawn and may meld."""
    for _ in range(40):
        version, state = _table_state(store)
        view = player_view(state, state.turn)
        if view.phase == "play" and any(a["type"] == "meld" for a in view.legal_actions):
            return Melding(version, state, state.turn, *_meld_and_discard(state))
        move = action_to_wire(greedy_policy(state, state.turn))
        turn.play(f"p{state.turn}", f"c{state.turn}", _sequence(version, move))
    raise AssertionError("no seat came to meld")


def _sequence(version: int, move: dict[str, Any], *then: dict[str, Any]) -> Play:
    return Play.model_validate(
        {"action": "play", "table_id": "t1", "version": version, "move": move, "then": list(then)}
    )


def _meld_and_discard(state: RoundState) -> tuple[dict[str, Any], dict[str, Any]]:
    """The seat's first legal meld, and a discard legal after it."""
    seat = state.turn
    meld = next(a for a in player_view(state, seat).legal_actions if a["type"] == "meld")
    after, _ = apply(state, seat, parse_action(meld))
    discard = next(a for a in player_view(after, seat).legal_actions if a["type"] == "discard")
    return meld, discard


def test_a_turns_melds_and_discard_are_one_write_one_answer_one_push_turn_1(
    *,
    turn: TurnService,
    store: GameStore,
    pusher: RecordingPusher,
    telemetry: RecordingTelemetry,
    melding: Melding,
) -> None:
    version, state, seat, meld, discard = melding.parts()
    pusher.clear()
    applied_before = telemetry.metrics["actions_applied"]

    turn.play(
        f"p{seat}", f"c{seat}", _sequence(version, meld, discard).model_copy(update={"cid": "m-1"})
    )

    after = apply(apply(state, seat, parse_action(meld))[0], seat, parse_action(discard))[0]
    assert _table_state(store) == (version + 1, after), "one write, both moves applied"
    assert telemetry.metrics["actions_applied"] - applied_before == 2
    logged = store.history.records("t1").turns[-1]
    assert [(m.seat, m.action) for m in logged.moves[-2:]] == [(seat, meld), (seat, discard)]
    assert [m.public["version"] for m in logged.moves if m.public] == [
        version,
        version + 1,
        version + 1,
    ], "each move logged as its own, at the version its write made (the draw's before)"
    (answer,) = pusher.to(f"c{seat}")
    assert (answer["type"], answer.get("cid"), answer["version"]) == ("view", "m-1", version + 1)
    for other in {1, 2, 3, 4} - {seat}:
        (view,) = pusher.to(f"c{other}")
        assert [m["type"] for m in view["moves"]][-3:] == ["draw", "meld", "discard"]


def _melded_tile_discarded(state: RoundState, meld: dict[str, Any]) -> dict[str, Any]:
    """A discard of a tile the meld took, none of its kind left in the hand after it."""
    hand = player_view(state, state.turn).hand
    tiles = [tile for spec in meld["melds"] for tile in spec["tiles"]]
    tile = next(t for t in tiles if hand.count(t) == tiles.count(t))
    return {"type": "discard", "tile": tile}


@pytest.mark.parametrize("refused", ["the meld again", "a melded tile discarded"])
def test_a_refused_move_of_the_sequence_changes_nothing_and_is_named_meld_5(
    *,
    turn: TurnService,
    store: GameStore,
    pusher: RecordingPusher,
    melding: Melding,
    refused: str,
) -> None:
    """MELD-5: the meld's tiles left the hand, so a move after it that uses them again is
    refused, and with it the meld before it: nothing of the message is applied."""
    version, state, seat, meld, discard = melding.parts()
    then = [meld, discard] if refused == "the meld again" else [_melded_tile_discarded(state, meld)]
    after_meld = apply(state, seat, parse_action(meld))[0]
    with pytest.raises(EngineError) as engine:
        apply(after_meld, seat, parse_action(then[0]))
    before = snapshot(store, "t1")
    pusher.clear()

    turn.play(f"p{seat}", f"c{seat}", _sequence(version, meld, *then))

    ((connection, error),) = pusher.sent
    assert (connection, error["type"], error["code"]) == (f"c{seat}", "error", engine.value.code)
    assert error["message"].startswith("then.0: "), "the refused move named by its place"
    assert snapshot(store, "t1") == before, "table, log and hands unchanged"


def test_a_sequence_from_another_seat_or_an_old_version_changes_nothing_turn_1(
    *,
    turn: TurnService,
    store: GameStore,
    pusher: RecordingPusher,
    melding: Melding,
) -> None:
    version, _, seat, meld, discard = melding.parts()
    other = seat % 4 + 1
    before = snapshot(store, "t1")
    pusher.clear()

    turn.play(f"p{other}", f"c{other}", _sequence(version, meld, discard))
    turn.play(f"p{seat}", f"c{seat}", _sequence(version - 1, meld, discard))

    assert [m["code"] for m in pusher.to(f"c{other}", "error")] == ["not_your_turn"]
    assert [m["code"] for m in pusher.to(f"c{seat}", "error")] == ["stale_version"]
    assert snapshot(store, "t1") == before


@pytest.mark.parametrize(
    "then",
    [
        [{"type": "discard", "tile": "JK"}, {"type": "discard", "tile": "JK"}],
        [{"type": "draw"}],
        [{"type": "joker_button"}],
        [{"type": "meld", "melds": [{"rank": 5, "tiles": ["5R"]}]}] * (MAX_THEN + 1),
    ],
    ids=["after a discard", "a draw", "the joker button", "too many"],
)
def test_what_cannot_be_one_turn_is_refused_malformed_before_the_table_is_read_turn_1(
    *,
    turn: TurnService,
    store: GameStore,
    pusher: RecordingPusher,
    melding: Melding,
    then: list[dict[str, Any]],
) -> None:
    """TURN-1: the discard ends the turn and the draw begins it; JOKER-1's button is a draw."""
    version, seat, meld = melding.version, melding.seat, melding.meld
    body = {"action": "play", "table_id": "t1", "version": version, "move": meld, "then": then}
    before = snapshot(store, "t1")
    pusher.clear()

    turn.receive((f"p{seat}", f"P{seat}"), f"c{seat}", json.dumps(body))

    assert [m["code"] for m in pusher.to(f"c{seat}", "error")] == ["malformed"]
    assert snapshot(store, "t1") == before


def test_a_sequence_written_and_re_sent_is_followed_through_once_never_applied_again(
    *,
    melding: Melding,
    turn: TurnService,
    store: GameStore,
    pusher: RecordingPusher,
    telemetry: RecordingTelemetry,
) -> None:
    """The re-sent message finds its moves at the logged turn's end: what follows the write
    runs once; the moves are not played again (the table stays at the write's version)."""
    version, _, seat, meld, discard = melding.parts()
    sequence = _sequence(version, meld, discard)
    _write_and_lose_the_answer(turn, sequence, seat)
    written = store.get_table("t1")
    pusher.clear()

    for _ in range(3):
        turn.play(f"p{seat}", f"c{seat}", sequence)

    assert telemetry.metrics["answers_repaired"] == 1
    assert [m["code"] for m in pusher.to(f"c{seat}", "error")] == ["stale_version"] * 3
    for other in {1, 2, 3, 4} - {seat}:
        (view,) = pusher.to(f"c{other}")
        assert [m["type"] for m in view["moves"]][-3:] == ["draw", "meld", "discard"]
    table = store.get_table("t1")
    assert table is not None and written is not None
    assert table.version == version + 1 and table.state == written.state


def test_another_sequence_ending_in_the_written_discard_repairs_nothing(
    *,
    turn: TurnService,
    pusher: RecordingPusher,
    telemetry: RecordingTelemetry,
    melding: Melding,
) -> None:
    """Only the written moves, all of them, are the lost message: the same discard after
    another meld is an old message of another kind, answered ``stale_version`` alone."""
    version, state, seat, meld, discard = melding.parts()
    _write_and_lose_the_answer(turn, _sequence(version, meld, discard), seat)
    pusher.clear()
    legal = player_view(state, seat).legal_actions
    other_meld = next(a for a in legal if a["type"] == "meld" and a != meld)

    turn.play(f"p{seat}", f"c{seat}", _sequence(version, other_meld, discard))

    assert [m["code"] for m in pusher.to(f"c{seat}", "error")] == ["stale_version"]
    assert len(pusher.sent) == 1
    assert telemetry.metrics.get("answers_repaired", 0) == 0
