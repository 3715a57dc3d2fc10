"""Between two rounds: the result stays on the table until its people continue (TABLE-2).

The score service leaves a match that goes on at the round's end with an
intermission; the next round is dealt on the last connected person's ``continue``,
when nobody is left to wait for, or by the intermission's timer, and never before.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from services.common.events import PlayerDisconnected, RoundEnded, RoundScored, SeatPlayer
from services.common.presence import PresenceStore
from services.common.protocol import ContinueMatch, ServerMessage
from services.common.store import GameStore
from services.deal.app import DealService
from services.score.app import ScoreService
from services.turn.app import TurnService
from shared_engine import MatchMode, RoundState, start_round, unpack
from shared_engine.autoplay import auto_play_turn
from tests.services.conftest import PLAYERS, build, put_table, seat_everyone, snapshot
from tests.services.fakes import FakeClock, RecordingPusher, RecordingTimers

pytestmark = pytest.mark.unit

PAUSE = 20
BOT = SeatPlayer(player_id="bot-3", name="Ada bot", bot=True, level="easy")


@pytest.fixture
def score(deps: dict[str, Any]) -> ScoreService:
    return build(ScoreService, deps, intermission_seconds=PAUSE)


@pytest.fixture
def deal(deps: dict[str, Any]) -> DealService:
    return build(DealService, deps)


@pytest.fixture
def turn(deps: dict[str, Any]) -> TurnService:
    return build(TurnService, deps)


def finished_round(seed: str = "pause-seed") -> RoundState:
    state = start_round(seed)
    while not state.round_over:
        state = auto_play_turn(state)
    return state


def scored_round(
    score: ScoreService,
    deal: DealService,
    store: GameStore,
    presence: PresenceStore,
    *,
    connections: dict[int, str | None] | None = None,
    seats: dict[int, SeatPlayer] | None = None,
) -> RoundState:
    """Round 1 of three played out at t1 and scored; the deal service has had its event."""
    state = finished_round()
    put_table(
        store,
        "t1",
        state,
        mode=MatchMode.THREE_ROUNDS,
        version=60,
        connections=connections,
        seats=seats,
    )
    seat_everyone(presence, "t1")
    score.round_ended(RoundEnded(table_id="t1", round=1, version=60, went_out=state.went_out))
    record = store.score("t1", 1)
    assert record is not None
    deal.round_scored(RoundScored.model_validate(record.result))
    return state


def _continue(turn: TurnService, seat: int, round_number: int = 1, cid: str = "c-1") -> None:
    message = ContinueMatch(action="continue", table_id="t1", round=round_number, cid=cid)
    turn.receive((f"p{seat}", f"P{seat}"), f"c{seat}", message.model_dump_json(exclude_none=True))


def test_a_round_that_goes_on_waits_with_its_result_and_no_turn_timer(
    *,
    score: ScoreService,
    deal: DealService,
    store: GameStore,
    presence: PresenceStore,
    pusher: RecordingPusher,
    timers: RecordingTimers,
    clock: FakeClock,
) -> None:
    state = scored_round(score, deal, store, presence)
    table = store.get_table("t1")
    assert table is not None and table.round == 1 and unpack(table.state or b"").round_over
    assert table.turn_deadline is None and table.intermission_until == clock.now() + PAUSE
    # The only timer is the intermission's: no turn's clock runs while the result is read.
    assert timers.scheduled == [("t1", table.version, clock.now() + PAUSE)]
    result = pusher.to("c2", "round_result")[-1]
    assert result["intermission_until"] == clock.now() + PAUSE
    assert result["went_out"] == state.went_out
    assert set(result["hands"]) == {"1", "2", "3", "4"}
    assert sum(map(len, result["hands"].values())) == sum(map(len, state.hands))
    view = pusher.to("c2", "view")[-1]
    assert view["intermission"] == {
        "until": clock.now() + PAUSE,
        "continued": [],
        "awaited": [1, 2, 3, 4],
    }
    assert view["turn_deadline"] is None and view["view"]["revealed"] is not None


def test_the_last_connected_person_s_continue_deals_the_next_round(
    *,
    score: ScoreService,
    deal: DealService,
    turn: TurnService,
    store: GameStore,
    presence: PresenceStore,
    pusher: RecordingPusher,
) -> None:
    scored_round(score, deal, store, presence)
    for seat in (1, 2, 3):
        pusher.clear()
        _continue(turn, seat)
        table = store.get_table("t1")
        assert table is not None and table.round == 1, f"dealt after seat {seat}"
        answer = pusher.to(f"c{seat}", "view")[-1]
        assert answer["cid"] == "c-1"
        assert answer["intermission"]["continued"] == list(range(1, seat + 1))
        assert answer["intermission"]["awaited"] == list(range(seat + 1, 5))
    _continue(turn, 4)
    table = store.get_table("t1")
    assert table is not None and table.round == 2 and table.intermission_until is None
    assert not unpack(table.state or b"").round_over and table.turn_deadline is not None
    assert pusher.to("c4", "view")[-1]["match"]["round"] == 2


def test_a_late_or_repeated_continue_changes_nothing(
    *,
    score: ScoreService,
    deal: DealService,
    turn: TurnService,
    store: GameStore,
    presence: PresenceStore,
    pusher: RecordingPusher,
) -> None:
    scored_round(score, deal, store, presence)
    _continue(turn, 1)
    before = snapshot(store, "t1")
    pusher.clear()
    _continue(turn, 1, cid="again")
    _continue(turn, 2, round_number=2, cid="ahead")
    assert snapshot(store, "t1") == before
    # Each is answered to its sender alone, with the view: nothing is pushed to the others.
    assert [(c, m["type"], m["cid"]) for c, m in pusher.sent] == [
        ("c1", "view", "again"),
        ("c2", "view", "ahead"),
    ]
    for seat in (2, 3, 4):
        _continue(turn, seat)
    dealt = snapshot(store, "t1")
    pusher.clear()
    _continue(turn, 3, round_number=1, cid="late")
    assert snapshot(store, "t1") == dealt
    assert [(c, m["cid"], m["match"]["round"]) for c, m in pusher.sent] == [("c3", "late", 2)]


def test_bots_and_absent_seats_never_wait(
    score: ScoreService,
    deal: DealService,
    store: GameStore,
    presence: PresenceStore,
    timers: RecordingTimers,
) -> None:
    """Nobody connected but bots: the round is scored and the next dealt at once."""
    seats = {**PLAYERS, 3: BOT}
    scored_round(
        score, deal, store, presence, connections={1: None, 2: None, 3: None, 4: None}, seats=seats
    )
    table = store.get_table("t1")
    assert table is not None and table.round == 2 and table.intermission_until is None
    assert all(started != 60 + 1 for _, started, _ in timers.scheduled)


def test_only_connected_people_are_awaited(
    score: ScoreService,
    deal: DealService,
    turn: TurnService,
    store: GameStore,
    presence: PresenceStore,
) -> None:
    seats = {**PLAYERS, 3: BOT}
    scored_round(
        score, deal, store, presence, connections={1: "c1", 2: None, 3: None, 4: "c4"}, seats=seats
    )
    table = store.get_table("t1")
    assert table is not None and table.awaited() == [1, 4]
    _continue(turn, 4)
    _continue(turn, 1)
    table = store.get_table("t1")
    assert table is not None and table.round == 2


def test_a_player_who_leaves_during_the_intermission_is_not_waited_for_table_2(
    score: ScoreService,
    deal: DealService,
    turn: TurnService,
    store: GameStore,
    presence: PresenceStore,
) -> None:
    scored_round(score, deal, store, presence, connections={1: "c1", 2: "c2", 3: None, 4: None})
    _continue(turn, 1)
    store.set_connection("t1", 2, None)
    table = store.get_table("t1")
    assert table is not None and table.round == 1
    turn.on_event(PlayerDisconnected(player_id="p2", connection_id="c2", table_id="t1", seat=2))
    table = store.get_table("t1")
    assert table is not None and table.round == 2


def test_the_intermission_s_timer_deals_at_its_end_and_never_before(
    *,
    score: ScoreService,
    deal: DealService,
    turn: TurnService,
    store: GameStore,
    presence: PresenceStore,
    timers: RecordingTimers,
    clock: FakeClock,
) -> None:
    scored_round(score, deal, store, presence)
    (armed,) = timers.scheduled
    table_id, _started, at = armed
    clock.advance(PAUSE - 1)
    turn.expire_turn(table_id, at)
    assert timers.scheduled == [armed, armed], "handed on for the second left"
    turn.refresh(table_id)  # a presence change a second early deals nothing either
    table = store.get_table("t1")
    assert table is not None and table.round == 1
    clock.advance(1)
    turn.expire_turn(table_id, at)
    table = store.get_table("t1")
    assert table is not None and table.round == 2
    # The new round's turn clock starts with the deal, not with the scoring.
    assert table.turn_deadline == clock.now() + 60
    assert timers.scheduled[-1] == ("t1", table.version, clock.now() + 60)


def test_a_reload_during_the_intermission_shows_the_round_s_result_again(
    *,
    score: ScoreService,
    deal: DealService,
    turn: TurnService,
    store: GameStore,
    presence: PresenceStore,
    pusher: RecordingPusher,
) -> None:
    scored_round(score, deal, store, presence)
    pushed = pusher.to("c2", "round_result")[-1]
    presence.add_connection("c9", "p2", "P2", 1_800_000_000.0, 3600)
    pusher.clear()
    turn.receive(("p2", "P2"), "c9", '{"action": "sync", "cid": "s-1"}')
    view, result = pusher.to("c9")
    assert view["type"] == "view" and view["intermission"]["awaited"] == [1, 2, 3, 4]
    assert result["type"] == "round_result" and result["cid"] == "s-1"
    assert {k: v for k, v in result.items() if k != "cid"} == pushed
    adapter: TypeAdapter[Any] = TypeAdapter(ServerMessage)
    for message in (view, result):
        adapter.validate_python(message)
