"""TABLE-2: one pending timer per table, handed on from turn to turn (issue 30)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from services.common.protocol import Play
from services.common.records import TableRecord
from services.common.store import GameStore
from services.common.telemetry import RecordingTelemetry
from services.common.timers import TableTimers
from services.common.unit_of_work import Outcome
from services.turn.app import TurnService
from shared_engine import RoundState, player_view, start_round, unpack
from tests.services.conftest import build, put_table, seat_everyone
from tests.services.fakes import FakeClock, RecordingTimers

TURN = 60
SEED = "timer-seed"


@pytest.fixture
def turn(deps: dict[str, Any]) -> TurnService:
    return build(TurnService, deps)


def _table(store: GameStore) -> TableRecord:
    table = store.get_table("t1")
    assert table is not None and table.state is not None
    return table


def _move(turn: TurnService, store: GameStore, seat: int, move: dict[str, Any]) -> None:
    message = {"action": "play", "table_id": "t1", "version": _table(store).version, "move": move}
    turn.play(f"p{seat}", f"c{seat}", Play.model_validate(message))


def _state(store: GameStore) -> RoundState:
    state = _table(store).state
    assert state is not None
    return unpack(state)


def _whole_turn(turn: TurnService, store: GameStore, seat: int) -> None:
    """The seat draws and discards: its turn ends long before its deadline."""
    _move(turn, store, seat, {"type": "draw"})
    tile = player_view(_state(store), seat).hand[0]
    _move(turn, store, seat, {"type": "discard", "tile": tile})


@pytest.fixture
def fast(turn: TurnService, store: GameStore, presence: Any, clock: FakeClock) -> float:
    """Seat 1 discards at once (arming seat 2's timer, due at the returned time); five
    seconds on, seat 2 plays its whole turn."""
    put_table(store, "t1", start_round(SEED))
    seat_everyone(presence, "t1")
    tile = player_view(_state(store), 1).hand[0]
    _move(turn, store, 1, {"type": "discard", "tile": tile})
    due = clock.now() + TURN
    clock.advance(5)
    _whole_turn(turn, store, 2)
    return due


def test_a_turn_that_a_pending_timer_reaches_in_time_arms_none(
    fast: float, store: GameStore, timers: RecordingTimers, clock: FakeClock
) -> None:
    table = _table(store)
    assert _state(store).turn == 3 and table.turn_deadline == clock.now() + TURN
    assert [at for _, _, at in timers.scheduled] == [fast], "seat 3's turn armed nothing"
    assert table.timer_at == fast


def test_the_pending_timer_hands_on_to_the_current_turn_which_it_then_plays(
    *,
    fast: float,
    turn: TurnService,
    store: GameStore,
    timers: RecordingTimers,
    clock: FakeClock,
    telemetry: RecordingTelemetry,
) -> None:
    clock.advance(fast - clock.now())
    turn.expire_turn("t1", fast)
    table = _table(store)
    assert timers.scheduled[-1] == ("t1", table.turn_started, table.turn_deadline)
    assert (table.timer_at, table.timer_from) == (table.turn_deadline, fast)
    assert not any(move.auto for move in table.turn_moves), "seat 3's turn is not due yet"
    assert table.turn_deadline is not None
    clock.advance(table.turn_deadline - clock.now())
    turn.expire_turn("t1", table.turn_deadline)
    assert _state(store).turn == 4, "at its deadline seat 3's turn is played"
    assert telemetry.metrics["timers_handed_on"] == 1


def test_a_timer_with_another_coming_in_time_arms_nothing(
    fast: float, turn: TurnService, store: GameStore, timers: RecordingTimers
) -> None:
    """A message of the format before ``at``, or a duplicate of an older timer."""
    before = list(timers.scheduled)
    turn.expire_turn("t1", None)
    turn.expire_turn("t1", fast - 30)
    assert timers.scheduled == before
    assert _table(store).timer_at == fast


Race = Callable[[Callable[[], object], float], None]


@pytest.fixture
def fire_raced(
    turn: TurnService, store: GameStore, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> Race:
    """``fire_raced(first, due)``: the timer due ``due`` fires, and ``first`` writes the
    table between the fire's read and its record of the timer it hands on."""

    def fire(first: Callable[[], object], due: float) -> None:
        original = store.record_timer

        def racing(*args: Any, **kwargs: Any) -> Outcome:
            monkeypatch.setattr(store, "record_timer", original)
            first()
            return original(*args, **kwargs)

        clock.advance(due - clock.now())
        monkeypatch.setattr(store, "record_timer", racing)
        turn.expire_turn("t1", due)

    return fire


def test_two_fires_that_race_arm_one_timer(
    fast: float, deps: dict[str, Any], store: GameStore, timers: RecordingTimers, fire_raced: Race
) -> None:
    """SQS delivers a message twice: both read the table before either records."""
    other = build(TurnService, deps)
    fire_raced(lambda: other.expire_turn("t1", fast), fast)
    assert [at for _, _, at in timers.scheduled] == [fast, _table(store).turn_deadline]


def test_a_fire_that_races_a_move_of_the_turn_still_hands_on(
    fast: float, turn: TurnService, store: GameStore, timers: RecordingTimers, fire_raced: Race
) -> None:
    """TABLE-2: seat 3 draws between the fire's read and its record. The draw arms nothing
    (its turn began earlier) and keeps the fired timer's ``timer_at``: the fire that lost
    must read again and hand on, or seat 3's turn would never be auto-played."""
    fire_raced(lambda: _move(turn, store, 3, {"type": "draw"}), fast)
    table = _table(store)
    assert [m.action["type"] for m in table.turn_moves] == ["draw"]
    assert timers.scheduled[-1] == ("t1", table.turn_started, table.turn_deadline)
    assert table.timer_at == table.turn_deadline


def test_a_stale_timer_of_an_earlier_round_hands_on(
    turn: TurnService,
    store: GameStore,
    presence: Any,
    timers: RecordingTimers,
    clock: FakeClock,
) -> None:
    """Round 2's first turn: the table's last recorded timer has fired; one of round 1's,
    long stale, arrives: it arms the current turn's."""
    table = put_table(store, "t1", start_round(SEED), round_number=2)
    seat_everyone(presence, "t1")
    store.record_timer(table, clock.now() - 5, None)
    turn.expire_turn("t1", clock.now() - 300)
    assert timers.scheduled == [("t1", table.turn_started, table.turn_deadline)]
    assert _table(store).timer_at == table.turn_deadline


def test_a_fire_that_crashed_after_recording_its_timer_arms_it_when_delivered_again(
    *,
    fast: float,
    turn: TurnService,
    store: GameStore,
    timers: RecordingTimers,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The record names the fire (``timer_from``), so its redelivery does not trust it."""
    clock.advance(fast - clock.now())

    def crash(*args: Any) -> None:
        raise RuntimeError("the function stopped")

    monkeypatch.setattr(timers, "schedule", crash)
    with pytest.raises(RuntimeError):
        turn.expire_turn("t1", fast)
    monkeypatch.undo()
    assert _table(store).timer_at == _table(store).turn_deadline, "recorded, never sent"
    turn.expire_turn("t1", fast)
    assert timers.scheduled[-1][2] == _table(store).turn_deadline


def test_a_repair_arms_the_current_turn_s_timer_whatever_is_recorded(
    fast: float, store: GameStore, timers: RecordingTimers
) -> None:
    """``AfterWrite(..., repair=True)``: the write may never have been followed through."""
    table = _table(store)
    assert table.timer_at == fast != table.turn_deadline
    TableTimers(store, timers).repair(table)
    assert timers.scheduled[-1] == ("t1", table.turn_started, table.turn_deadline)
