"""TurnService: moves, refusals, races, auto-play for absent and timed-out seats, resync."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from services.common.events import (
    BotLevel,
    PlayerConnected,
    PlayerDisconnected,
    RoundStarted,
    SeatPlayer,
)
from services.common.ledger import Posting
from services.common.memory_storage import MemoryStorage
from services.common.presence import PresenceStore
from services.common.protocol import LOG_SHOWN, Play
from services.common.records import LogEntry, LoggedTurn, RoundRecord, TableRecord
from services.common.replay import rounds_of, verify
from services.common.store import GameStore
from services.common.telemetry import RecordingTelemetry
from services.common.unit_of_work import Outcome, Storage
from services.turn import autoplay
from services.turn.app import TurnService
from services.turn.autoplay import STRETCH_MOVES
from shared_engine import (
    MatchMode,
    RoundState,
    action_to_wire,
    apply,
    commitment,
    parse_action,
    player_view,
    shuffled,
    start_round,
    unpack,
)
from shared_engine.autoplay import auto_play_step
from shared_engine.bots import greedy_policy
from shared_engine.search import level_policy
from shared_engine.tiles import JOKER
from tests.services.conftest import PLAYERS, SEATS, build, put_table, seat_everyone, snapshot
from tests.services.fakes import FakeClock, RecordingPusher, RecordingTimers

pytestmark = pytest.mark.unit

SEED = "turn-seed"


@pytest.fixture
def turn(deps: dict[str, Any]) -> TurnService:
    return build(TurnService, deps)


@pytest.fixture
def dealt(store: GameStore, presence: PresenceStore) -> RoundState:
    """Table t1, round 1 just dealt at version 1: seat 1 must discard (DEAL-2)."""
    state = start_round(SEED)
    put_table(store, "t1", state)
    seat_everyone(presence, "t1")
    return state


def _play(table_id: str, version: int, move: dict[str, Any]) -> Play:
    return Play.model_validate(
        {"action": "play", "table_id": table_id, "version": version, "move": move}
    )


def _discard(state: RoundState, seat: int, index: int = 0) -> dict[str, Any]:
    hand = player_view(state, seat).hand
    return {"type": "discard", "tile": hand[index]}


def _logs(store: GameStore) -> tuple[LogEntry, ...]:
    return store.history.records("t1").logs


def _turns(store: GameStore) -> tuple[LoggedTurn, ...]:
    return store.history.records("t1").turns


def _unchanged(store: GameStore, before: tuple[object, ...]) -> None:
    assert snapshot(store, "t1") == before


def test_a_move_is_applied_logged_and_shown_to_each_seat(
    *,
    turn: TurnService,
    store: GameStore,
    pusher: RecordingPusher,
    timers: RecordingTimers,
    clock: FakeClock,
    dealt: RoundState,
) -> None:
    move = _discard(dealt, 1)
    turn.play("p1", "c1", _play("t1", 1, move))

    after, _ = apply(dealt, 1, parse_action(move))
    table = store.get_table("t1")
    assert table is not None and table.state is not None
    assert unpack(table.state) == after
    assert (table.version, table.turn_started) == (2, 2)
    assert table.turn_deadline == clock.now() + 60
    (log,) = _logs(store)
    assert store.history.keys("t1", "LOG#") == ["LOG#0001#000001"]
    assert (log.seat, log.action, log.auto) == (1, move, False)
    # The log entry is the move's record for the audit, the replay and a sync's move log;
    # it publishes nothing, since nothing on the bus reads single moves.
    assert log.public == {
        "seat": 1,
        "type": "discard",
        "tile": move["tile"],
        "auto": False,
        "version": 2,
    }
    assert [turn.outbox for turn in _turns(store)] == [()]
    assert timers.scheduled == [("t1", 2, clock.now() + 60)]
    for seat in (1, 2, 3, 4):
        (message,) = pusher.to(f"c{seat}")
        assert message["version"] == 2
        assert message["seat"] == seat
        assert message["view"] == player_view(after, seat).model_dump(mode="json")
        assert message["last_action"] == {"seat": 1, **move, "auto": False}


def test_a_move_inside_a_turn_sets_no_second_timer_table_2(
    *,
    turn: TurnService,
    store: GameStore,
    timers: RecordingTimers,
    clock: FakeClock,
    dealt: RoundState,
) -> None:
    """One timer per turn: seat 2's draw keeps the timer its turn began with."""
    turn.play("p1", "c1", _play("t1", 1, _discard(dealt, 1)))
    assert timers.scheduled == [("t1", 2, clock.now() + 60)]
    clock.advance(5)
    turn.play("p2", "c2", _play("t1", 2, {"type": "draw"}))
    table = store.get_table("t1")
    assert table is not None and (table.version, table.turn_started) == (3, 2)
    assert timers.scheduled == [("t1", 2, clock.now() - 5 + 60)], "the draw set no timer"


def test_a_stale_version_is_refused_with_the_current_view(
    turn: TurnService, store: GameStore, pusher: RecordingPusher, dealt: RoundState
) -> None:
    before = snapshot(store, "t1")
    turn.play("p1", "c1", _play("t1", 0, _discard(dealt, 1)))
    _unchanged(store, before)
    (message,) = pusher.sent
    assert message[0] == "c1"
    error = message[1]
    assert error["type"] == "error" and error["code"] == "stale_version"
    assert error["view"]["version"] == 1
    assert error["view"]["seat"] == 1
    assert error["view"]["view"]["hand"] == player_view(dealt, 1).hand
    assert error["view"]["view"]["legal_actions"] == player_view(dealt, 1).legal_actions


def test_every_message_sent_is_a_valid_server_message(
    turn: TurnService, pusher: RecordingPusher, dealt: RoundState
) -> None:
    """Clients parse what they receive with the protocol's models (docs/asyncapi.json).

    The ``view`` of a ``stale_version`` error must be a whole ``ViewMessage``:
    its ``went_out``, ``round_scores`` and ``turn_deadline`` may be null but
    are required fields.
    """
    from pydantic import TypeAdapter

    from services.common.protocol import ServerMessage

    turn.play("p1", "c1", _play("t1", 0, _discard(dealt, 1)))  # stale_version with a view
    turn.play("p2", "c2", _play("t1", 1, {"type": "draw"}))  # not_your_turn
    turn.receive(("p1", "P1"), "c1", "{")  # malformed
    turn.receive(("p3", "P3"), "c3", '{"action": "sync"}')  # view
    turn.play("p1", "c1", _play("t1", 1, _discard(dealt, 1)))  # views to all
    adapter: TypeAdapter[Any] = TypeAdapter(ServerMessage)
    assert len(pusher.sent) == 8
    for _, message in pusher.sent:
        adapter.validate_python(message)


@pytest.mark.parametrize(
    ("player", "connection", "move", "code"),
    [
        ("p1", "c1", {"type": "draw"}, "wrong_phase"),
        ("p2", "c2", {"type": "draw"}, "not_your_turn"),
        ("p1", "c1", {"type": "meld", "melds": [{"rank": 5, "tiles": ["5R", "5R", "5R"]}]}, None),
        ("p1", "c1", {"type": "discard", "tile": "JK"}, None),
    ],
)
def test_engine_refusals_answer_the_sender_and_change_nothing(
    *,
    turn: TurnService,
    store: GameStore,
    pusher: RecordingPusher,
    dealt: RoundState,
    player: str,
    connection: str,
    move: dict[str, Any],
    code: str | None,
) -> None:
    hand = player_view(dealt, 1).hand
    if move["type"] == "discard" and move["tile"] in hand:
        pytest.skip("the seed dealt this tile")
    before = snapshot(store, "t1")
    turn.play(player, connection, _play("t1", 1, move))
    _unchanged(store, before)
    (message,) = pusher.sent
    assert message[0] == connection
    assert message[1]["type"] == "error"
    assert message[1]["table_id"] == "t1"
    if code is not None:
        assert message[1]["code"] == code
    else:
        assert message[1]["code"] in ("wrong_phase", "tile_not_in_hand")


@pytest.mark.parametrize(
    ("player", "body", "code"),
    [
        (None, '{"action": "sync"}', "not_seated"),
        (("p1", "P1"), None, "message_too_large"),
        (("p1", "P1"), json.dumps({"action": "sync", "pad": "x" * 9000}), "message_too_large"),
        (("p1", "P1"), "not json{", "malformed"),
        (("p1", "P1"), "[]", "malformed"),
        (("p1", "P1"), "null", "malformed"),
        (("p1", "P1"), '{"action": "dance"}', "unknown_action"),
        (("p1", "P1"), '{"table_id": "t1"}', "unknown_action"),
        (("p1", "P1"), '{"action": "play", "table_id": "t1", "version": 1}', "malformed"),
        (
            ("p1", "P1"),
            '{"action": "play", "table_id": "t1", "version": 1, "move": {"type": "draw"},'
            ' "seat": 2}',
            "malformed",
        ),
        (
            ("p1", "P1"),
            '{"action": "play", "table_id": "t1", "version": 1,'
            ' "move": {"type": "draw", "tile": "5R"}}',
            "malformed",
        ),
        (
            ("p1", "P1"),
            '{"action": "play", "table_id": "../t1", "version": 1, "move": {"type": "draw"}}',
            "malformed",
        ),
        (
            ("p1", "P1"),
            '{"action": "play", "table_id": "t1", "version": -1, "move": {"type": "draw"}}',
            "malformed",
        ),
        (
            ("p1", "P1"),
            '{"action": "play", "table_id": "t1", "version": 1, "move": {"type": "fly"}}',
            "malformed",  # SCENARIOS.md: anything that is not a well-formed action
        ),
        (
            ("p1", "P1"),
            '{"action": "play", "table_id": "t1", "version": 1, "move": {}}',
            "malformed",
        ),
    ],
)
def test_bad_messages_are_refused_before_anything_changes(
    *,
    turn: TurnService,
    store: GameStore,
    pusher: RecordingPusher,
    dealt: RoundState,
    player: tuple[str, str] | None,
    body: str | None,
    code: str,
) -> None:
    before = snapshot(store, "t1")
    turn.receive(player, "c1", body)
    _unchanged(store, before)
    (message,) = pusher.sent
    assert message[0] == "c1"
    assert message[1]["type"] == "error"
    assert message[1]["code"] == code


def test_a_message_of_exactly_the_limit_is_read(
    deps: dict[str, Any], pusher: RecordingPusher, presence: PresenceStore, dealt: RoundState
) -> None:
    presence.add_connection("c1", "p1", "P1", 1_800_000_000.0, 3600)
    turn = build(TurnService, deps, max_message_bytes=64)
    body = '{"action": "sync"}'
    body = body[:-1] + " " * (64 - len(body)) + "}"
    assert len(body.encode()) == 64
    turn.receive(("p1", "P1"), "c1", body)
    (message,) = pusher.sent
    assert message[1]["type"] == "view"
    pusher.clear()
    turn.receive(("p1", "P1"), "c1", body[:-1] + " }")
    assert pusher.sent[0][1]["code"] == "message_too_large"


def test_only_seated_players_may_play(
    turn: TurnService, store: GameStore, pusher: RecordingPusher, dealt: RoundState
) -> None:
    before = snapshot(store, "t1")
    turn.play("stranger", "c9", _play("t1", 1, _discard(dealt, 1)))
    turn.play("p1", "c1", _play("other-table", 1, _discard(dealt, 1)))
    _unchanged(store, before)
    assert [(c, m["code"]) for c, m in pusher.sent] == [("c9", "not_seated"), ("c1", "not_seated")]


def test_a_move_that_loses_a_race_gets_stale_version(
    *,
    turn: TurnService,
    deps: dict[str, Any],
    store: GameStore,
    pusher: RecordingPusher,
    dealt: RoundState,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two moves read version 1 (a double press); the other commits first (same seat, ply)."""
    rival = build(TurnService, deps)
    first, second = _discard(dealt, 1, 0), _discard(dealt, 1, 1)
    original = store.commit_actions

    def racing(*args: Any, **kwargs: Any) -> Outcome:
        monkeypatch.setattr(store, "commit_actions", original)
        rival.play("p1", "c1", _play("t1", 1, first))
        return original(*args, **kwargs)

    monkeypatch.setattr(store, "commit_actions", racing)
    turn.play("p1", "c1", _play("t1", 1, second))

    table = store.get_table("t1")
    assert table is not None and table.version == 2
    (log,) = _logs(store)
    assert log.action == first
    errors = pusher.to("c1", "error")
    assert [e["code"] for e in errors] == ["stale_version"]
    assert errors[0]["view"]["version"] == 2


def test_each_attempt_of_a_move_reads_the_table_once(
    *,
    turn: TurnService,
    deps: dict[str, Any],
    storage: Storage,
    store: GameStore,
    pusher: RecordingPusher,
    dealt: RoundState,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The attempt's one read decides it, its refusals included: a joker press refused for
    want of a spare joker reads nothing more; a race lost to a rival's write is followed
    by one more attempt, whose read answers stale_version."""
    reads: list[str] = []
    get_table = store.get_table

    def counted(table_id: str) -> TableRecord | None:
        reads.append(table_id)
        return get_table(table_id)

    monkeypatch.setattr(store, "get_table", counted)
    turn.play("p1", "c1", _play("t1", 1, _discard(dealt, 1)))
    assert reads == ["t1"]
    turn.play("p2", "c2", _play("t1", 2, {"type": "joker_button"}))
    assert [e["code"] for e in pusher.to("c2", "error")] == ["joker_button_unavailable"]
    assert reads == ["t1"] * 2

    rival = build(TurnService, deps, store=GameStore(storage))
    original = store.commit_actions

    def racing(*args: Any, **kwargs: Any) -> Outcome:
        monkeypatch.setattr(store, "commit_actions", original)
        rival.play("p2", "c2", _play("t1", 2, {"type": "draw"}))
        return original(*args, **kwargs)

    monkeypatch.setattr(store, "commit_actions", racing)
    turn.play("p2", "c2", _play("t1", 2, {"type": "draw"}))
    assert pusher.to("c2", "error")[-1]["code"] == "stale_version"
    assert reads == ["t1"] * 4, "the lost attempt's read, then the next attempt's"


def test_a_timer_that_loses_a_race_to_the_move_does_nothing(
    turn: TurnService,
    deps: dict[str, Any],
    store: GameStore,
    dealt: RoundState,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """TABLE-2: the player moves just as the timer fires; the move stands, alone."""
    player = build(TurnService, deps)
    move = _discard(dealt, 1, 3)
    original = store.commit_actions

    def racing(*args: Any, **kwargs: Any) -> Outcome:
        monkeypatch.setattr(store, "commit_actions", original)
        player.play("p1", "c1", _play("t1", 1, move))
        return original(*args, **kwargs)

    monkeypatch.setattr(store, "commit_actions", racing)
    deps["clock"].advance(60)
    turn.expire_turn("t1", 1)

    (log,) = _logs(store)
    assert log.action == move
    assert log.auto is False


def test_absent_seats_are_auto_played_after_a_move(
    *,
    turn: TurnService,
    store: GameStore,
    presence: PresenceStore,
    pusher: RecordingPusher,
    timers: RecordingTimers,
    clock: FakeClock,
) -> None:
    """TABLE-2: seat 2 has no connection; its whole turn is played: draw, then discard."""
    state = start_round(SEED)
    put_table(store, "t1", state, connections={1: "c1", 2: None, 3: "c3", 4: "c4"})
    seat_everyone(presence, "t1")
    move = _discard(state, 1)
    turn.play("p1", "c1", _play("t1", 1, move))

    expected, _ = apply(state, 1, parse_action(move))
    auto_moves = []
    while expected.turn == 2:
        action = auto_play_step(expected, 2)
        auto_moves.append(action)
        expected, _ = apply(expected, 2, action)
    table = store.get_table("t1")
    assert table is not None and table.state is not None
    assert unpack(table.state) == expected
    assert expected.turn == 3
    assert table.turn_started == table.version
    logs = _logs(store)
    assert [(i.seat, i.auto) for i in logs] == [(1, False), (2, True), (2, True)]
    assert [i.action["type"] for i in logs[1:]] == ["draw", "discard"]
    assert all(i.public is not None and i.public["auto"] for i in logs[1:])
    # The move armed seat 2's timer; it is due by seat 3's deadline, so seat 3's turn arms none.
    assert timers.scheduled == [("t1", table.version - 1, clock.now() + 60)]
    assert table.timer_at == clock.now() + 60
    assert pusher.to("c1")[-1]["version"] == table.version
    assert pusher.to("c1")[-1]["last_action"]["auto"] is True


def test_a_timer_plays_the_current_turn_once(
    turn: TurnService, store: GameStore, dealt: RoundState, clock: FakeClock
) -> None:
    clock.advance(60)
    turn.expire_turn("t1", 1)
    turn.expire_turn("t1", 1)
    (log,) = _logs(store)
    assert log.auto is True
    assert log.action["type"] == "discard"
    table = store.get_table("t1")
    assert table is not None and table.version == 2
    before = snapshot(store, "t1")
    turn.expire_turn("t1", 0)
    turn.expire_turn("t1", 99)
    turn.expire_turn("missing", 1)
    _unchanged(store, before)


def test_a_timer_before_the_deadline_never_plays_the_turn_and_is_set_again(
    turn: TurnService,
    store: GameStore,
    dealt: RoundState,
    clock: FakeClock,
    timers: RecordingTimers,
) -> None:
    """TABLE-2: a timer that arrives early (Scheduler fires within its minute) waits."""
    table = store.get_table("t1")
    assert table is not None and table.turn_deadline == clock.now() + 60
    clock.advance(59.5)
    turn.expire_turn("t1", table.turn_deadline)
    assert timers.scheduled[-1] == ("t1", 1, table.turn_deadline), "set again for the rest"
    after = store.get_table("t1")
    assert after is not None and after.timer_from == table.turn_deadline, "the fire recorded it"
    assert after.evolve(timer_at=None, timer_from=None) == table, "and nothing else moved"
    assert not _logs(store)
    clock.advance(0.5)
    turn.expire_turn("t1", table.turn_deadline)
    (log,) = _logs(store)
    assert log.auto is True, "at the deadline the turn is played"


def test_a_timer_after_the_draw_only_discards(
    turn: TurnService, store: GameStore, dealt: RoundState, clock: FakeClock
) -> None:
    turn.play("p1", "c1", _play("t1", 1, _discard(dealt, 1)))
    turn.play("p2", "c2", _play("t1", 2, {"type": "draw"}))
    table = store.get_table("t1")
    assert table is not None and (table.version, table.turn_started) == (3, 2)
    clock.advance(60)
    turn.expire_turn("t1", 2)
    logs = _logs(store)
    assert [(i.action["type"], i.auto) for i in logs] == [
        ("discard", False),
        ("draw", False),
        ("discard", True),
    ]
    table = store.get_table("t1")
    assert table is not None and table.state is not None
    assert unpack(table.state).turn == 3


def test_sync_sends_the_view_to_the_new_connection_and_moves_the_seat(
    turn: TurnService,
    store: GameStore,
    presence: PresenceStore,
    pusher: RecordingPusher,
    dealt: RoundState,
) -> None:
    presence.add_connection("c3-new", "p3", "P3", 1_800_000_000.0, 3600)
    turn.receive(("p3", "P3"), "c3-new", '{"action": "sync"}')
    (message,) = pusher.sent
    assert message[0] == "c3-new"
    assert message[1]["type"] == "view" and message[1]["seat"] == 3
    assert message[1]["view"] == player_view(dealt, 3).model_dump(mode="json")
    table = store.get_table("t1")
    assert table is not None and table.connections[3] == "c3-new"
    assert message[1]["seats"]["3"]["connected"] is True


def test_sync_without_a_table_says_so(
    turn: TurnService, pusher: RecordingPusher, dealt: RoundState
) -> None:
    turn.receive(("nobody", "N"), "c9", '{"action": "sync"}')
    assert [(c, m["code"]) for c, m in pusher.sent] == [("c9", "no_table")]


def test_a_gone_connection_frees_its_seat_and_the_move_stands(
    turn: TurnService, store: GameStore, pusher: RecordingPusher, dealt: RoundState
) -> None:
    pusher.gone.add("c3")
    turn.play("p1", "c1", _play("t1", 1, _discard(dealt, 1)))
    table = store.get_table("t1")
    assert table is not None and table.version == 2
    assert table.connections == {1: "c1", 2: "c2", 3: None, 4: "c4"}
    assert "c3" in pusher.refused
    # The seat's next view shows it absent.
    turn.play("p2", "c2", _play("t1", 2, {"type": "draw"}))
    assert pusher.to("c2")[-1]["seats"]["3"]["connected"] is False


def test_a_presence_event_auto_plays_an_absent_seat_to_play(
    turn: TurnService, store: GameStore, pusher: RecordingPusher, dealt: RoundState
) -> None:
    store.set_connection("t1", 1, None)
    turn.on_event(PlayerDisconnected(player_id="p1", connection_id="c1", table_id="t1", seat=1))
    (log,) = _logs(store)
    assert (log.seat, log.auto) == (1, True)
    assert pusher.to("c2")[-1]["version"] == 2
    assert pusher.to("c2")[-1]["seats"]["1"]["connected"] is False


def test_presence_and_round_events_change_nothing_for_connected_seats(
    turn: TurnService, store: GameStore, pusher: RecordingPusher, dealt: RoundState
) -> None:
    before = snapshot(store, "t1")
    turn.on_event(PlayerConnected(player_id="p2", connection_id="c2", table_id="t1", seat=2))
    turn.on_event(PlayerConnected(player_id="p9", connection_id="c9"))
    turn.on_event(RoundStarted(table_id="t1", round=1, dealer=4, commitment="x", version=1))
    _unchanged(store, before)
    assert {m["version"] for _, m in pusher.sent} == {1}


def test_views_carry_only_the_seats_own_tiles(
    turn: TurnService, store: GameStore, pusher: RecordingPusher, dealt: RoundState
) -> None:
    turn.play("p1", "c1", _play("t1", 1, _discard(dealt, 1)))
    table = store.get_table("t1")
    assert table is not None and table.state is not None
    state = unpack(table.state)
    for seat in (1, 2, 3, 4):
        (message,) = pusher.to(f"c{seat}")
        text = json.dumps(message)
        assert sorted(message["view"]["hand"]) == sorted(player_view(state, seat).hand)
        assert SEED not in text
        assert "stock" not in message["view"] or not isinstance(message["view"]["stock"], list)


def test_telemetry_counts_refusals(
    deps: dict[str, Any], telemetry: RecordingTelemetry, dealt: RoundState
) -> None:
    turn = build(TurnService, deps)
    turn.receive(("p1", "P1"), "c1", "{")
    turn.receive(("p1", "P1"), "c1", "x" * 9000)
    assert telemetry.metrics.get("refused_malformed") == 1
    assert telemetry.metrics.get("refused_message_too_large") == 1


def test_a_quick_message_is_shown_to_the_whole_table_by_the_seat(
    turn: TurnService, store: GameStore, pusher: RecordingPusher, dealt: RoundState
) -> None:
    before = snapshot(store, "t1")
    body = {"action": "say", "table_id": "t1", "phrase": "well_played", "cid": "s-1"}
    turn.receive(("p3", "P3"), "c3", json.dumps(body))
    _unchanged(store, before)
    said = {"type": "said", "table_id": "t1", "seat": 3, "phrase": "well_played"}
    assert pusher.to("c3") == [{**said, "cid": "s-1"}]
    for seat in (1, 2, 4):
        assert pusher.to(f"c{seat}") == [said]


@pytest.mark.parametrize(
    ("player", "body", "code"),
    [
        (("p1", "P1"), {"action": "say", "table_id": "t1", "phrase": "you are bad"}, "malformed"),
        (("x9", "X9"), {"action": "say", "table_id": "t1", "phrase": "thanks"}, "not_seated"),
        (("p1", "P1"), {"action": "say", "table_id": "t404", "phrase": "thanks"}, "not_seated"),
    ],
)
def test_only_the_fixed_phrases_from_a_seat_are_said(
    *,
    turn: TurnService,
    pusher: RecordingPusher,
    dealt: RoundState,
    player: tuple[str, str],
    body: dict[str, Any],
    code: str,
) -> None:
    """No free text: a phrase outside the set is malformed; no seat, no say."""
    turn.receive(player, "c1", json.dumps(body))
    (message,) = pusher.sent
    assert message[0] == "c1" and message[1]["type"] == "error"
    assert message[1]["code"] == code


BOT_SEED = "turn-seed-0"
"""A deal in which the hard bots' first turns differ from the heuristic player's."""


def _bot_turns(state: RoundState, choose: Any) -> list[tuple[int, dict[str, Any]]]:
    """The moves seats 2-4 make until seat 1's turn comes back, each chosen by ``choose``."""
    moves = []
    while state.turn != 1 and not state.round_over:
        seat = state.turn
        action = choose(state, seat)
        moves.append((seat, action_to_wire(action)))
        state, _ = apply(state, seat, action)
    return moves


def _bots_answer_seat_1(
    turn: TurnService, store: GameStore, presence: PresenceStore, level: BotLevel | None
) -> RoundState:
    """Seats 2-4 bots of ``level`` (stored as given); seat 1 discards. The state after it."""
    state = start_round(BOT_SEED)
    bots = {
        s: SeatPlayer(player_id=f"bot-{s}", name=f"Bot {s}", bot=True, level=level)
        for s in (2, 3, 4)
    }
    put_table(
        store,
        "t1",
        state,
        seats={1: PLAYERS[1], **bots},
        connections={1: "c1", 2: None, 3: None, 4: None},
    )
    seat_everyone(presence, "t1")
    move = _discard(state, 1)
    turn.play("p1", "c1", _play("t1", 1, move))
    after, _ = apply(state, 1, parse_action(move))
    return after


def _logged_after_seat_1(store: GameStore) -> list[tuple[int, dict[str, Any]]]:
    return [(i.seat, i.action) for i in _logs(store)[1:]]


def test_a_hard_bot_seat_is_played_by_the_search_bot_seeded_by_table_round_and_move(
    turn: TurnService, store: GameStore, presence: PresenceStore
) -> None:
    """The seat's stored level picks the policy; the seed is the table, round and ply, so
    the log replays: the moves are level_policy's for those seeds, not the heuristic's."""
    after = _bots_answer_seat_1(turn, store, presence, "hard")
    searched = _bot_turns(after, lambda st, seat: level_policy("hard", f"t1:1:{st.ply}")(st, seat))
    greedy = _bot_turns(after, greedy_policy)
    assert searched != greedy, "the deal must tell the two policies apart"
    assert _logged_after_seat_1(store) == searched
    assert all(i.auto for i in _logs(store)[1:])


def test_a_bot_weighs_a_lead_by_the_rounds_its_match_still_plays_match_1(
    store: GameStore,
) -> None:
    """Round 1 of three: the bot plays ``level_policy`` with two rounds after this one, not
    as if this round decided the match (a position where the two choose otherwise)."""
    state = start_round("later0")
    while True:
        state, _ = apply(state, state.turn, greedy_policy(state, state.turn))
        seed = f"t1:1:{state.ply}"
        planned = level_policy("normal", seed, rounds_after=2)(state, state.turn)
        if planned != level_policy("normal", seed, rounds_after=0)(state, state.turn):
            break
    seat = state.turn
    bot = SeatPlayer(player_id="bot-2", name="Bot 2", bot=True, level="normal")
    table = put_table(store, "t1", state, mode=MatchMode.THREE_ROUNDS, seats={**PLAYERS, seat: bot})
    assert autoplay.bot_policy(table, seat)(state, seat) == planned


@pytest.mark.parametrize("level", ["easy", "normal", None])
def test_easy_normal_and_unset_levels_play_their_policy(
    turn: TurnService, store: GameStore, presence: PresenceStore, level: BotLevel | None
) -> None:
    """easy is the heuristic player; a bot seat stored without a level plays at normal."""
    after = _bots_answer_seat_1(turn, store, presence, level)
    played = level or "normal"
    expected = _bot_turns(after, lambda st, seat: level_policy(played, f"t1:1:{st.ply}")(st, seat))
    assert _logged_after_seat_1(store) == expected


def _versions(logs: Sequence[LogEntry]) -> list[int]:
    """The table version each logged action was written at."""
    return [int((i.public or {})["version"]) for i in logs]


def _auto_played(state: RoundState) -> list[tuple[int, dict[str, Any]]]:
    """Every move of the round from ``state``, each seat auto-played (TABLE-2)."""
    moves = []
    while not state.round_over:
        action = auto_play_step(state, state.turn)
        moves.append((state.turn, action_to_wire(action)))
        state, _ = apply(state, state.turn, action)
    return moves


@pytest.mark.parametrize("most", [STRETCH_MOVES, 21])
def test_a_table_nobody_watches_is_played_to_the_round_s_end_in_few_writes_table_2(
    turn: TurnService,
    store: GameStore,
    presence: PresenceStore,
    monkeypatch: pytest.MonkeyPatch,
    most: int,
) -> None:
    """Every seat left: the stretch of absent turns is written up to ``most`` moves a write,
    not a write a turn, with a log entry per move, the same moves in the same order."""
    monkeypatch.setattr(autoplay, "STRETCH_MOVES", most)
    state = start_round(SEED)
    opened, _ = apply(state, 1, auto_play_step(state, 1))
    put_table(store, "t1", opened, connections=dict.fromkeys(SEATS))
    seat_everyone(presence, "t1")
    turn.refresh("t1")

    table = store.get_table("t1")
    assert table is not None and table.state is not None
    assert unpack(table.state).round_over
    logs = _logs(store)
    assert [(i.seat, i.action) for i in logs] == _auto_played(opened)
    assert len(logs) > 2 * 21, "the round needs several writes of 21"
    # Whole turns, packed into writes as long as the next turn still fits.
    turns: list[int] = []
    for number, (seat, _) in enumerate(_auto_played(opened)):
        if number == 0 or seat != _auto_played(opened)[number - 1][0]:
            turns.append(0)
        turns[-1] += 1
    packed = [0]
    for moves in turns:
        if packed[-1] + moves > most:
            packed.append(0)
        packed[-1] += moves
    versions = _versions(logs)
    writes = sorted(set(versions))
    assert writes == list(range(2, table.version + 1))
    # Only the move that ends the round publishes: RoundEnded, at its write's version.
    logged = _turns(store)
    assert [e for turn in logged[:-1] for e in turn.outbox] == []
    (ended,) = logged[-1].outbox
    assert (ended.detail_type, ended.detail["version"]) == ("RoundEnded", versions[-1])
    assert [versions.count(v) for v in writes] == packed
    assert [len(logged.moves) for logged in _turns(store)] == turns, "one log item a turn"


def _writes(storage: Storage, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every commit from now on, as its writes: ``Update:TABLE``, ``Put:LOG``, ..."""
    commits: list[list[str]] = []
    original = storage.commit

    def commit(writes: Sequence[Any]) -> Outcome:
        kinds = [
            f"{type(w).__name__}:{str(w.key.get('sk', w.table)).split('#')[0]}" for w in writes
        ]
        commits.append(kinds)
        return original(writes)

    monkeypatch.setattr(storage, "commit", commit)
    return commits


def test_a_move_within_a_turn_is_answered_to_the_mover_alone_and_the_turn_shown_at_its_end(
    *,
    turn: TurnService,
    store: GameStore,
    storage: Storage,
    pusher: RecordingPusher,
    dealt: RoundState,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A draw is one conditional update of the table item, answered to the mover alone; the
    discard ends the turn: one transaction with one log item holding the whole turn, and
    one view to each other seat with every move of the turn, in order, each at its version."""
    turn.play("p1", "c1", _play("t1", 1, _discard(dealt, 1)))
    pusher.clear()
    writes = _writes(storage, monkeypatch)

    turn.receive(
        ("p2", "P2"),
        "c2",
        _play("t1", 2, {"type": "draw"})
        .model_copy(update={"cid": "d-1"})
        .model_dump_json(exclude_none=True),
    )
    assert writes == [["Update:TABLE"]], "a move within its turn: one update, no transaction"
    ((to, answer),) = pusher.sent
    assert (to, answer["cid"], answer["version"]) == ("c2", "d-1", 3)
    draw = {"seat": 2, "type": "draw", "auto": False, "version": 3}
    assert answer["moves"] == [draw]
    assert store.history.keys("t1", "LOG#") == ["LOG#0001#000001"], "the draw is not logged yet"

    # The draw sent again (its answer lost) is stale: nothing written, nobody else told.
    before = snapshot(store, "t1")
    turn.play("p2", "c2", _play("t1", 2, {"type": "draw"}))
    _unchanged(store, before)
    assert [m["type"] for c, m in pusher.sent] == ["view", "error"]
    assert {c for c, _ in pusher.sent} == {"c2"}
    pusher.clear()
    writes.clear()

    table = store.get_table("t1")
    assert table is not None and table.state is not None
    discard = _discard(unpack(table.state), 2)
    turn.play("p2", "c2", _play("t1", 3, discard))
    assert writes == [["Update:TABLE", "Put:LOG"]], "the turn's end: one transaction"
    (logged,) = _turns(store)[1:]
    assert [(m.seat, m.action, m.version) for m in logged.moves] == [
        (2, {"type": "draw"}, 2),
        (2, discard, 3),
    ]
    assert logged.outbox == (), "a turn that does not end the round publishes nothing"
    assert store.history.keys("t1", "LOG#") == ["LOG#0001#000001", "LOG#0001#000003"]
    ended = {"seat": 2, **discard, "auto": False, "version": 4}
    assert pusher.to("c2") == [pusher.to("c2")[0]] and pusher.to("c2")[0]["moves"] == [ended]
    for seat in (1, 3, 4):
        (view,) = pusher.to(f"c{seat}")
        assert view["version"] == 4 and view["moves"] == [draw, ended]
        assert view["view"]["turn"] == 3


def test_a_stretch_of_absent_turns_is_one_write_and_one_view_per_seat_table_2(
    *,
    turn: TurnService,
    store: GameStore,
    storage: Storage,
    presence: PresenceStore,
    pusher: RecordingPusher,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seats 3 and 4 are away: seat 2's discard is followed by their turns in one write (a
    log item each), and each seat is pushed once, seat 1 with seat 2's turn and theirs."""
    state = start_round(SEED)
    put_table(store, "t1", state, connections={1: "c1", 2: "c2", 3: None, 4: None})
    seat_everyone(presence, "t1")
    turn.play("p1", "c1", _play("t1", 1, _discard(state, 1)))
    turn.play("p2", "c2", _play("t1", 2, {"type": "draw"}))
    pusher.clear()
    writes = _writes(storage, monkeypatch)
    table = store.get_table("t1")
    assert table is not None and table.state is not None
    turn.play("p2", "c2", _play("t1", 3, _discard(unpack(table.state), 2)))

    assert writes == [["Update:TABLE", "Put:LOG"], ["Update:TABLE", "Put:LOG", "Put:LOG"]]
    after = store.get_table("t1")
    assert after is not None and after.state is not None and unpack(after.state).turn == 1
    stretch = [m.public for m in _logs(store) if m.seat in (3, 4)]
    assert {m["version"] for m in stretch if m} == {5}
    answer, shown = pusher.to("c2")
    assert [m["seat"] for m in answer["moves"]] == [2]
    assert shown["moves"] == stretch and shown["version"] == 5
    (seen,) = pusher.to("c1")
    assert [m["seat"] for m in seen["moves"]] == [2, 2, *(m["seat"] for m in stretch if m)]
    assert seen["moves"][2:] == stretch


def test_a_reconnect_or_a_presence_change_mid_turn_shows_the_turn_so_far(
    *,
    turn: TurnService,
    store: GameStore,
    presence: PresenceStore,
    pusher: RecordingPusher,
    dealt: RoundState,
) -> None:
    """Mid-turn, a sync's log holds the turn's moves so far (the draw, never its tile), and a
    presence change shows every seat the table with them; the turn's end brings them again
    with the rest, at the same versions (the client keeps each once)."""
    turn.play("p1", "c1", _play("t1", 1, _discard(dealt, 1)))
    turn.play("p2", "c2", _play("t1", 2, {"type": "draw"}))
    presence.add_connection("c3-new", "p3", "P3", 1_800_000_000.0, 3600)
    pusher.clear()
    turn.receive(("p3", "P3"), "c3-new", '{"action": "sync"}')
    ((_, synced),) = pusher.sent
    draw = {"seat": 2, "type": "draw", "auto": False, "version": 3}
    assert [m["type"] for m in synced["log"]] == ["discard", "draw"]
    assert synced["log"][-1] == draw and synced["version"] == 3

    pusher.clear()
    store.set_connection("t1", 4, None)
    turn.on_event(PlayerDisconnected(player_id="p4", connection_id="c4", table_id="t1", seat=4))
    for connection in ("c1", "c2", "c3-new"):
        (view,) = pusher.to(connection)
        assert view["moves"] == [draw] and view["seats"]["4"]["connected"] is False
    table = store.get_table("t1")
    assert table is not None and table.version == 3, "nothing was played for seat 2"


# --- the joker button at a practice table (JOKER-1, MATCH-3) --------------------------------


PRACTICE = {**PLAYERS, 4: SeatPlayer(player_id="bot-4", name="Bot", bot=True)}
"""A bot in seat 4 from the start: the match is practice (MATCH-3)."""


@pytest.mark.parametrize("spare", [2, 0], ids=["spare jokers", "none"])
def test_the_joker_button_at_a_practice_table_debits_the_player_s_own_joker_joker_1(
    *,
    turn: TurnService,
    deps: dict[str, Any],
    store: GameStore,
    presence: PresenceStore,
    pusher: RecordingPusher,
    spare: int,
) -> None:
    """JOKER-1 (practice): the button works as at any table and debits the player's joker,
    with the move, once per round, only with a spare joker. Before the press, the seat's
    view says what it costs and what the account holds."""
    ledger = deps["ledger"]
    if spare:
        ledger.book([Posting("p2", "welcome", "welcome", jokers=spare)], 1.0)
    dealt = start_round(SEED, account_jokers=(0, spare, 0, 0))
    assert JOKER in dealt.stock, "this deal leaves a joker to take"
    put_table(store, "t1", dealt, seats=PRACTICE, connections={1: "c1", 2: "c2", 3: "c3"})
    seat_everyone(presence, "t1")
    turn.play("p1", "c1", _play("t1", 1, _discard(dealt, 1)))
    (offered,) = pusher.to("c2", "view")
    assert offered["match"]["practice"] is True
    view = offered["view"]
    assert (view["joker_button_cost"], view["account_jokers"]) == (1, spare)
    assert ({"type": "joker_button"} in view["legal_actions"]) is (spare > 0)
    before = snapshot(store, "t1")

    turn.play("p2", "c2", _play("t1", 2, {"type": "joker_button"}))

    entries = [e["sk"] for e in ledger.entries("p2") if e["purpose"] == "joker"]
    if not spare:
        assert [e["code"] for e in pusher.to("c2", "error")] == ["joker_button_unavailable"]
        assert snapshot(store, "t1") == before and entries == []
        return
    assert ledger.balance("p2").jokers == spare - 1
    assert entries == ["ENTRY#t1:joker:1"]
    (log,) = [e for e in _logs(store) if e.action == {"type": "joker_button"}]
    assert (log.seat, log.version) == (2, 2), "the press is the move on the version read"
    pressed = pusher.to("c2", "view")[-1]["view"]
    assert (pressed["account_jokers"], pressed["joker_button_used"]) == (spare - 1, True)
    assert "JK" in pressed["hand"]


def test_sync_restores_the_round_s_move_log(
    turn: TurnService,
    store: GameStore,
    presence: PresenceStore,
    pusher: RecordingPusher,
    dealt: RoundState,
) -> None:
    """A reload mid-round shows the log it showed before: every public move of the round,
    in order, with the version its write made (as the views brought them)."""
    turn.play("p1", "c1", _play("t1", 1, _discard(dealt, 1)))
    turn.play("p2", "c2", _play("t1", 2, {"type": "draw"}))
    table = store.get_table("t1")
    assert table is not None
    turn.play("p2", "c2", _play("t1", 3, _discard(unpack(table.state or b""), 2)))
    seen = [move for view in pusher.to("c3", "view") for move in view["moves"]]
    assert [(move["type"], move["version"]) for move in seen] == [
        ("discard", 2),
        ("draw", 3),
        ("discard", 4),
    ]
    presence.add_connection("c3-new", "p3", "P3", 1_800_000_000.0, 3600)
    pusher.clear()
    turn.receive(("p3", "P3"), "c3-new", '{"action": "sync"}')
    ((_, answer),) = pusher.sent
    assert answer["log"] == seen and answer["moves"] == []


def test_a_move_is_answered_once_when_the_bots_turn_after_it_loses_a_race(
    turn: TurnService,
    store: GameStore,
    presence: PresenceStore,
    pusher: RecordingPusher,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The views after the move answer its ``cid``; the bot's turn that follows is written
    by another invocation first (its write refused): the sender still hears one answer."""
    state = start_round(SEED)
    bot = SeatPlayer(player_id="bot-2", name="Bob bot", bot=True, level="easy")
    put_table(store, "t1", state, seats={**PLAYERS, 2: bot}, connections={1: "c1", 2: None})
    seat_everyone(presence, "t1")
    monkeypatch.setattr(turn._autoplay, "play_turns", lambda *args, **kwargs: None)
    move = _play("t1", 1, _discard(state, 1)).model_copy(update={"cid": "m-1"})
    turn.receive(("p1", "P1"), "c1", move.model_dump_json(exclude_none=True))
    answers = [m for c, m in pusher.sent if c == "c1" and m.get("cid") == "m-1"]
    assert [m["type"] for m in answers] == ["view"]


def test_a_round_logged_a_move_an_item_reads_on_with_its_turns_logged_whole(
    *,
    turn: TurnService,
    store: GameStore,
    storage: MemoryStorage,
    presence: PresenceStore,
    pusher: RecordingPusher,
) -> None:
    """A round in play across a deploy: its first move is in an item of its own, as every
    move was logged before turns were logged whole. The log, a reload's and the replay read
    it with the turns logged since, in order; a replay meets the live state mid-turn."""
    state = start_round(SEED)
    storage.put(
        "games", RoundRecord("t1", 1, SEED, commitment(SEED, shuffled(SEED)), 4, 1.0).to_item()
    )
    move = _discard(state, 1)
    opened, _ = apply(state, 1, parse_action(move))
    put_table(store, "t1", opened, version=2)
    seat_everyone(presence, "t1")
    shown = {"seat": 1, **move, "auto": False, "version": 2}
    applied = {"table_id": "t1", "round": 1, "version": 2, "seat": 1, "action": move, "auto": False}
    storage.put(
        "games",
        {
            "pk": "TABLE#t1",
            "sk": "LOG#0001#000001",
            "seat": 1,
            "action": json.dumps(move),
            "auto": False,
            "at": 1_800_000_000.0,
            "public": json.dumps(shown),
            "outbox": json.dumps(
                [{"detail-type": "ActionApplied", "source": "canasta.turn", "detail": applied}]
            ),
        },
    )
    turn.play("p2", "c2", _play("t1", 2, {"type": "draw"}))
    drawn = store.get_table("t1")
    assert drawn is not None and drawn.state is not None

    def replayed(table: TableRecord) -> list[str]:
        return verify(
            rounds_of(store.history.records("t1")),
            variant=table.variant,
            live_state=table.state,
            live_round=1,
            totals=(0, 0),
        ).mismatches

    assert replayed(drawn) == [], "mid-turn: the old item, then the turn so far"
    discard = _discard(unpack(drawn.state), 2)
    turn.play("p2", "c2", _play("t1", 3, discard))

    old, new = _turns(store)
    assert [(m.seat, m.action, m.version) for m in old.moves] == [(1, move, 1)]
    assert old.outbox[0].detail == applied and old.last.public == shown
    assert [(m.seat, m.action["type"]) for m in new.moves] == [(2, "draw"), (2, "discard")]
    assert [(m.seat, m.version) for m in _logs(store)] == [(1, 1), (2, 2), (2, 3)]
    ended = store.get_table("t1")
    assert ended is not None and replayed(ended) == []
    presence.add_connection("c3-new", "p3", "P3", 1_800_000_000.0, 3600)
    pusher.clear()
    turn.receive(("p3", "P3"), "c3-new", '{"action": "sync"}')
    ((_, synced),) = pusher.sent
    assert [(m["seat"], m["type"], m["version"]) for m in synced["log"]] == [
        (1, "discard", 2),
        (2, "draw", 3),
        (2, "discard", 4),
    ]


def test_a_reload_that_read_the_table_mid_turn_gets_each_move_once(
    turn: TurnService, store: GameStore, dealt: RoundState
) -> None:
    """The table is read, then the turn ends and is logged before the log is read: the
    turn's moves are in the log item now, and not repeated from the table as read."""
    turn.play("p1", "c1", _play("t1", 1, _discard(dealt, 1)))
    turn.play("p2", "c2", _play("t1", 2, {"type": "draw"}))
    read = store.get_table("t1")
    assert read is not None and read.state is not None and len(read.turn_moves) == 1
    turn.play("p2", "c2", _play("t1", 3, _discard(unpack(read.state), 2)))
    log = store.moves.of_round(read, LOG_SHOWN)
    assert [(m["type"], m["version"]) for m in log] == [("discard", 2), ("draw", 3), ("discard", 4)]
