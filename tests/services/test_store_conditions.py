"""Every condition of the stores' writes, on the in-memory storage: the fast tier.

Each test breaks when the condition it guards is dropped from its store
(``tests/storage_mutations.py`` applies each such mutation and runs the test
that must fail). The storage contract (``test_unit_of_work.py``) makes the
in-memory storage decide conditions as DynamoDB does.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from services.common import constants
from services.common.events import SeatPlayer
from services.common.ledger import (
    DAY_LIMIT,
    RECORD_SHARDS,
    Balance,
    ExternalBooking,
    Ledger,
    Posting,
)
from services.common.memory_storage import MemoryStorage
from services.common.presence import PresenceStore
from services.common.records import (
    SEATS,
    AuditRecord,
    ClosedRecord,
    Lobby,
    LogEntry,
    LoggedTurn,
    Player,
    QueueTicket,
    RoundRecord,
    ScoreRecord,
    TableRecord,
    shard_of,
)
from services.common.store import GameStore
from services.common.unit_of_work import (
    AlreadyDone,
    Busy,
    Committed,
    LostRace,
    Outcome,
    Short,
    Update,
    VersionConflict,
    Write,
)
from services.matchmaking.store import CODE_TAKEN, LobbyStore, PlayerStore, QueueStore
from services.ops.audit import AuditTrail
from shared_engine import MatchMode
from tests.storage_mutations import MUTATIONS, Mutation, applies

pytestmark = pytest.mark.unit

PLAYERS = {seat: SeatPlayer(player_id=f"p{seat}", name=f"P{seat}") for seat in SEATS}


@pytest.fixture
def storage() -> MemoryStorage:
    return MemoryStorage()


@pytest.fixture
def store(storage: MemoryStorage) -> GameStore:
    return GameStore(storage)


def table(version: int = 5, round_number: int = 1, **changes: object) -> TableRecord:
    return TableRecord(
        table_id="t1",
        mode=MatchMode.THREE_ROUNDS,
        variant="twos-meld",
        stake=0,
        seats=dict(PLAYERS),
        version=version,
        round=round_number,
        state=b"state",
        connections={s: f"c{s}" for s in SEATS},
    ).evolve(**changes)


def stored(store: GameStore, record: TableRecord) -> TableRecord:
    assert isinstance(store.create_table(record), Committed)
    return record


def turn(ply: int, seat: int = 1) -> LoggedTurn:
    """A turn of a draw and a discard, its last move the round's ``ply``."""
    draw, discard = {"type": "draw"}, {"type": "discard", "tile": "9R"}
    moves = (
        LogEntry(1, ply - 1, seat, draw, False, 10.0, {"seat": seat, **draw, "auto": False}),
        LogEntry(1, ply, seat, discard, False, 10.0, {"seat": seat, **discard, "auto": False}),
    )
    return LoggedTurn(1, moves)


def dealt(round_number: int = 2) -> RoundRecord:
    return RoundRecord("t1", round_number, "seed", "commitment", 1, 10.0)


# --- the TABLE item's version -------------------------------------------------------------


def test_a_move_at_an_old_version_conflicts_and_writes_nothing(store: GameStore) -> None:
    now = stored(store, table(version=6))
    read = table(version=5)
    new = read.evolve(version=6, state="after")
    assert store.commit_actions(read, new, [turn(6)]) == VersionConflict()
    assert store.get_table("t1") == now
    assert store.moves.turn("t1", 1, 6) is None


def test_a_deal_at_an_old_version_conflicts_and_deals_nothing(store: GameStore) -> None:
    now = stored(store, table(version=6, state=None))
    read = table(version=5, state=None)
    new = read.evolve(version=6, round=2, state="dealt")
    assert store.start_round(old=read, new=new, dealt=dealt()) == VersionConflict()
    assert store.get_table("t1") == now
    assert store.history.keys("t1", "ROUND#") == []


def test_a_score_at_an_old_version_conflicts_and_scores_nothing(store: GameStore) -> None:
    now = stored(store, table(version=61))
    read = table(version=60)
    new = read.evolve(version=61, totals=(100, 0))
    assert store.record_score(read, new, ScoreRecord("t1", 1, {"r": 1})) == VersionConflict()
    assert store.get_table("t1") == now
    assert store.score("t1", 1) is None


def test_a_close_at_an_old_version_conflicts_and_closes_nothing(
    store: GameStore, storage: MemoryStorage
) -> None:
    """An operator's close (or a played match's void) aborts the table at the version it
    read: a move committed since makes it refuse, never abort over the move."""
    now = stored(store, table(version=6))
    read = table(version=5)
    new = read.evolve(version=6, status="aborted")
    closed = ClosedRecord(table_id="t1", operator="arn:aws:iam::1:user/ana", reason="r", at=1.0)
    void = [Posting("p1", "void:t1:escrow:1", "void", points=100, match="t1")]
    assert store.close_table(read, new, closed, void) == VersionConflict()
    assert store.get_table("t1") == now
    assert store.history.keys("t1", constants.CLOSED_SK) == []
    assert Ledger(storage).balance("p1") == Balance(0, 0)


def test_a_deal_follows_the_stored_round_whatever_was_read(store: GameStore) -> None:
    """The round condition: a table already at round 2 is never dealt round 2 again."""
    now = stored(store, table(version=5, round_number=2))
    read = table(version=5, round_number=1)
    new = read.evolve(version=6, round=2, state="dealt")
    assert store.start_round(old=read, new=new, dealt=dealt()) == VersionConflict()
    assert store.get_table("t1") == now


def test_a_table_that_is_over_is_never_dealt(store: GameStore) -> None:
    """The status condition: a finished or aborted table deals no further round."""
    now = stored(store, table(version=5, status="aborted"))
    read = table(version=5)
    new = read.evolve(version=6, round=2, state="dealt")
    assert store.start_round(old=read, new=new, dealt=dealt()) == VersionConflict()
    assert store.get_table("t1") == now


# --- create-only items ------------------------------------------------------------------------


def test_a_table_is_created_once(store: GameStore) -> None:
    first = stored(store, table(version=0))
    assert store.create_table(table(version=9)) == AlreadyDone()
    assert store.get_table("t1") == first


def test_a_round_is_dealt_once(store: GameStore, storage: MemoryStorage) -> None:
    read = stored(store, table(version=5))
    storage.put("games", dealt().to_item())
    new = read.evolve(version=6, round=2, state="dealt")
    assert store.start_round(old=read, new=new, dealt=dealt()) == AlreadyDone()
    assert store.get_table("t1") == read


def test_a_logged_turn_is_logged_once(store: GameStore, storage: MemoryStorage) -> None:
    read = stored(store, table(version=5))
    storage.put("games", turn(6, seat=3).to_item("t1"))
    assert store.commit_actions(read, read.evolve(version=6), [turn(6)]) == AlreadyDone()
    assert store.get_table("t1") == read
    logged = store.moves.turn("t1", 1, 6)
    assert logged is not None and logged.last.seat == 3


def test_a_round_is_scored_once(store: GameStore, storage: MemoryStorage) -> None:
    read = stored(store, table(version=60))
    storage.put("games", ScoreRecord("t1", 1, {"first": True}).to_item())
    scored = ScoreRecord("t1", 1, {"second": True})
    assert store.record_score(read, read.evolve(version=61), scored) == AlreadyDone()
    assert store.get_table("t1") == read
    assert store.score("t1", 1) == ScoreRecord("t1", 1, {"first": True})


# --- presence on the TABLE item ------------------------------------------------------------------


def test_no_connection_is_set_on_a_table_that_does_not_exist(
    store: GameStore, storage: MemoryStorage
) -> None:
    assert store.set_connection("t1", 2, "c9") is False
    assert storage.tables["games"] == {}


def test_a_gone_connection_frees_its_seat_only_if_it_still_holds_it(store: GameStore) -> None:
    stored(store, table())
    assert store.set_connection("t1", 2, "c2-new") is True
    assert store.set_connection("t1", 2, None, replacing="c2") is False
    now = store.get_table("t1")
    assert now is not None and now.connections[2] == "c2-new"
    assert store.set_connection("t1", 2, None, replacing="c2-new") is True
    now = store.get_table("t1")
    assert now is not None and now.connections[2] is None


def test_a_move_is_repaired_once_and_only_if_logged(
    store: GameStore, storage: MemoryStorage
) -> None:
    read = stored(store, table())
    assert store.moves.claim_repair("t1", 1, 6) is False, "no such move"
    assert store.moves.turn("t1", 1, 6) is None
    assert isinstance(store.commit_actions(read, read.evolve(version=6), [turn(6)]), Committed)
    assert store.moves.claim_repair("t1", 1, 6) is True
    assert store.moves.claim_repair("t1", 1, 6) is False, "repaired before"
    logged = store.moves.turn("t1", 1, 6)
    assert logged is not None and logged.repaired


# --- presence ------------------------------------------------------------------------------------


def test_closing_an_old_connection_keeps_the_players_new_one(storage: MemoryStorage) -> None:
    presence = PresenceStore(storage)
    presence.add_connection("old", "p1", "P1", 1.0, 60)
    presence.add_connection("new", "p1", "P1", 2.0, 60)
    assert presence.remove_connection("old") is None
    player = presence.get_player("p1")
    assert player is not None and player.connection_id == "new"
    released = presence.remove_connection("new")
    assert released is not None and released.connection_id is None


# --- the ledger ----------------------------------------------------------------------------------


@pytest.fixture
def ledger(storage: MemoryStorage) -> Ledger:
    return Ledger(storage)


def test_a_posting_is_booked_once(ledger: Ledger) -> None:
    posting = Posting("p1", "t:settlement:1", "settlement", points=1000)
    assert isinstance(ledger.book([posting], 1.0), Committed)
    assert ledger.book([posting], 2.0) == AlreadyDone()
    assert ledger.balance("p1") == Balance(1000, 0)


def test_a_guarded_debit_of_points_must_be_covered(ledger: Ledger) -> None:
    ledger.book([Posting("p1", "welcome", "welcome", points=99, jokers=5)], 1.0)
    stake = Posting("p1", "t:escrow:1", "escrow", points=-100, guarded=True)
    assert ledger.book([stake], 1.0) == Short(("p1",))
    assert ledger.balance("p1") == Balance(99, 5)


def test_a_guarded_debit_of_jokers_must_be_covered(ledger: Ledger) -> None:
    ledger.book([Posting("p1", "welcome", "welcome", points=500, jokers=0)], 1.0)
    joker = Posting("p1", "t:joker:1", "joker", jokers=-1, guarded=True)
    assert ledger.book([joker], 1.0) == Short(("p1",))
    assert ledger.balance("p1") == Balance(500, 0)


def booking(key: str = "k-0001", points: int = 10) -> ExternalBooking:
    return ExternalBooking("rummy", key, "p1", points, 0)


LIMITS = Balance(1000, 10)


def test_an_external_key_books_once(ledger: Ledger, storage: MemoryStorage) -> None:
    outcome, after = ledger.book_external(booking(), "2026-12-01", LIMITS, 1.0)
    assert isinstance(outcome, Committed) and after == Balance(10, 0)
    # The key's record exists: a repeat books nothing, even with a balance that moved.
    storage.commit([Update("ledger", Balance.key_of("p1"), add={"points": 5})])
    outcome, _ = ledger.book_external(booking(), "2026-12-01", LIMITS, 2.0)
    assert outcome == AlreadyDone()
    assert ledger.balance("p1") == Balance(15, 0)


def test_an_external_key_books_one_body_only(ledger: Ledger) -> None:
    """The key's record, not the entry, holds the key: the same key for another account
    books nothing (the entry of another account would not collide)."""
    assert isinstance(ledger.book_external(booking(), "2026-12-01", LIMITS, 1.0)[0], Committed)
    other = ExternalBooking("rummy", "k-0001", "p2", 10, 0)
    outcome, _ = ledger.book_external(other, "2026-12-01", LIMITS, 2.0)
    assert outcome == AlreadyDone()
    assert ledger.balance("p2") == Balance(0, 0)


def credited_before_the_booking(storage: MemoryStorage, points: int) -> None:
    """Another booking credits p1 between ``book_external``'s read and its commit."""
    real = storage.commit

    def credited_first(writes: Sequence[Write]) -> Outcome:
        real([Update("ledger", Balance.key_of("p1"), add={"points": points})])
        storage.commit = real  # type: ignore[method-assign]
        return real(writes)

    storage.commit = credited_first  # type: ignore[method-assign]


def test_an_external_booking_is_exact_or_nothing(ledger: Ledger, storage: MemoryStorage) -> None:
    """The balance condition: a balance that moves between the read and the write (another
    booking on the account) refuses the booking, so the balance it reports is exact."""
    ledger.book([Posting("p1", "welcome", "welcome", points=100)], 1.0)
    credited_before_the_booking(storage, 1)
    outcome, _ = ledger.book_external(booking(), "2026-12-01", LIMITS, 2.0)
    assert outcome == VersionConflict()
    assert ledger.balance("p1") == Balance(101, 0)


def test_a_first_external_booking_needs_the_account_still_empty(
    ledger: Ledger, storage: MemoryStorage
) -> None:
    credited_before_the_booking(storage, 7)
    outcome, _ = ledger.book_external(booking(), "2026-12-01", LIMITS, 2.0)
    assert outcome == VersionConflict()
    assert ledger.balance("p1") == Balance(7, 0)


def test_a_clients_bookings_of_a_day_stay_within_its_limit(ledger: Ledger) -> None:
    for i in range(3):
        outcome, _ = ledger.book_external(booking(f"k-{i:04d}", 300), "2026-12-01", LIMITS, 1.0)
        assert isinstance(outcome, Committed)
    outcome, _ = ledger.book_external(booking("k-0003", 300), "2026-12-01", LIMITS, 1.0)
    assert outcome == DAY_LIMIT
    assert ledger.balance("p1") == Balance(900, 0)
    outcome, _ = ledger.book_external(booking("k-0004", 300), "2026-12-02", LIMITS, 1.0)
    assert isinstance(outcome, Committed), "a new day, a new limit"


def test_a_sharded_clients_usage_is_counted_per_shard_each_within_its_share(
    ledger: Ledger, storage: MemoryStorage
) -> None:
    """With 4 day shards each counter takes its share (here 1000 of the day's 4000): a key of
    a spent shard is refused, a key of another shard still books; the sum stays in limit."""
    keys = [f"k-{i:04d}" for i in range(40)]
    same = [k for k in keys if shard_of(k, 4) == shard_of(keys[0], 4)]
    other = next(k for k in keys if shard_of(k, 4) != shard_of(keys[0], 4))
    for key in same[:3]:
        outcome, _ = ledger.book_external(booking(key, 300), "2026-12-01", LIMITS, 1.0, 4)
        assert isinstance(outcome, Committed)
    outcome, _ = ledger.book_external(booking(same[3], 300), "2026-12-01", LIMITS, 1.0, 4)
    assert outcome == DAY_LIMIT
    outcome, _ = ledger.book_external(booking(other, 300), "2026-12-01", LIMITS, 1.0, 4)
    assert isinstance(outcome, Committed)
    days = {
        key[0]: item["points"]
        for key, item in storage.tables["ledger"].items()
        if str(key[1]).startswith("DAY#")
    }
    assert days == {
        f"CLIENT#rummy#{shard_of(same[0], 4)}": 900,
        f"CLIENT#rummy#{shard_of(other, 4)}": 300,
    }
    records = {
        str(key[1]): key[0] for key in storage.tables["ledger"] if str(key[1]).startswith("KEY#")
    }
    assert records == {
        f"KEY#{k}": f"CLIENT#rummy#{shard_of(k, RECORD_SHARDS)}" for k in [*same[:3], other]
    }


# --- matchmaking -------------------------------------------------------------------------------


@pytest.fixture
def players(storage: MemoryStorage) -> PlayerStore:
    return PlayerStore(storage)


@pytest.fixture
def queues(storage: MemoryStorage) -> QueueStore:
    return QueueStore(storage)


@pytest.fixture
def lobbies(storage: MemoryStorage) -> LobbyStore:
    return LobbyStore(storage)


def ticket(player: str = "p1", ticket_id: str = "t-1") -> QueueTicket:
    return QueueTicket(
        "one_round:twos-meld:0", f"0001#{player}", player, player.upper(), ticket_id, 99.0
    )


def commit(store: QueueStore | LobbyStore, *writes: Write) -> Outcome:
    return store.unit().add(*writes).commit()


@pytest.mark.parametrize("place", ["queue_key", "lobby", "table_id"])
def test_a_player_somewhere_is_busy(
    players: PlayerStore,
    queues: QueueStore,
    lobbies: LobbyStore,
    storage: MemoryStorage,
    place: str,
) -> None:
    storage.put("players", {"player_id": "p1", place: "somewhere"})
    assert commit(queues, *queues.enqueue(ticket(), 60)) == Busy(("p1",))
    assert commit(lobbies, lobbies.player_to_lobby("p1", "P1", "CODE")) == Busy(("p1",))
    assert queues.waiting("one_round:twos-meld:0", 4) == []
    assert players.player("p1") == Player.from_item({"player_id": "p1", place: "somewhere"})


def test_a_player_leaves_the_queue_only_with_the_ticket_that_holds_them(
    players: PlayerStore, queues: QueueStore
) -> None:
    assert commit(queues, *queues.enqueue(ticket(ticket_id="t-2"), 60)).ok
    assert commit(queues, *queues.dequeue(ticket(ticket_id="t-1"), None)) == LostRace(("p1",))
    seated = queues.seat_from_queue(ticket(ticket_id="t-1"), None, "tb", 1)
    assert commit(queues, *seated) == LostRace(("p1",))
    assert players.player("p1").ticket == "t-2"
    assert [t.ticket for t in queues.waiting("one_round:twos-meld:0", 4)] == ["t-2"]


def test_a_player_leaves_the_queue_only_with_the_task_token_they_were_read_with(
    players: PlayerStore, queues: QueueStore
) -> None:
    """Whoever moves the player on answers the token it read: one kept since must refuse."""
    assert commit(queues, *queues.enqueue(ticket(), 60)).ok
    assert players.player("p1").task_token is None
    assert queues.keep_token(ticket(), "token-1")
    assert commit(queues, *queues.dequeue(ticket(), None)) == LostRace(("p1",))
    assert commit(queues, *queues.seat_from_queue(ticket(), None, "tb", 1)) == LostRace(("p1",))
    assert commit(queues, *queues.dequeue(ticket(), "token-2")) == LostRace(("p1",))
    assert players.player("p1").task_token == "token-1"
    assert commit(queues, *queues.dequeue(ticket(), "token-1")).ok
    assert players.player("p1").task_token is None, "the token goes with the ticket"


def test_a_token_is_kept_only_while_the_player_holds_the_ticket(
    players: PlayerStore, queues: QueueStore
) -> None:
    assert commit(queues, *queues.enqueue(ticket(ticket_id="t-2"), 60)).ok
    assert not queues.keep_token(ticket(ticket_id="t-1"), "token-1")
    assert players.player("p1").task_token is None


def test_a_lobby_seats_its_own_members_only(players: PlayerStore, lobbies: LobbyStore) -> None:
    assert commit(lobbies, lobbies.player_to_lobby("p1", "P1", "AAAAAA")).ok
    assert commit(lobbies, lobbies.seat_from_lobby("p1", "BBBBBB", "tb", 2)) == LostRace(("p1",))
    assert players.player("p1").table_id is None


def lobby(**changes: object) -> Lobby:
    host = SeatPlayer(player_id="h", name="H")
    made = Lobby("AAAAAA", "h", "one_round", "twos-meld", "forming", {1: host}, None)
    return Lobby(**{**made.__dict__, **changes})  # type: ignore[arg-type]


def test_an_invite_code_opens_one_lobby(players: PlayerStore, lobbies: LobbyStore) -> None:
    first = lobby()
    assert commit(lobbies, *lobbies.create_lobby(first, first.seats[1], 99)).ok
    other = lobby(host="x", seats={1: SeatPlayer(player_id="x", name="X")})
    assert commit(lobbies, *lobbies.create_lobby(other, other.seats[1], 99)) == CODE_TAKEN
    assert lobbies.lobby("AAAAAA") == first
    assert players.player("x").lobby is None


def test_a_seat_is_taken_once_and_only_while_forming(
    lobbies: LobbyStore, storage: MemoryStorage
) -> None:
    made = lobby()
    storage.put("matchmaking", made.to_item(99))
    guest = SeatPlayer(player_id="g", name="G")
    assert commit(lobbies, lobbies.take_seat("AAAAAA", 1, guest)) == LostRace()
    assert commit(lobbies, lobbies.take_seat("AAAAAA", 2, guest)).ok
    storage.put("matchmaking", lobby(status="closed").to_item(99))
    assert commit(lobbies, lobbies.take_seat("AAAAAA", 3, guest)) == LostRace()
    assert lobbies.lobby("AAAAAA") == lobby(status="closed")


def test_a_lobby_starts_only_as_it_was_read(lobbies: LobbyStore, storage: MemoryStorage) -> None:
    read = lobby()
    bots = {s: SeatPlayer(player_id=f"bot-{s}", name="B", bot=True) for s in (2, 3, 4)}
    seats = {**read.seats, **bots}
    guest = SeatPlayer(player_id="g", name="G")
    # A guest took seat 2 since the read; the host's seat changed; the lobby closed.
    for stored in (
        lobby(seats={**read.seats, 2: guest}),
        lobby(seats={1: SeatPlayer(player_id="h", name="renamed")}),
        lobby(status="closed"),
    ):
        storage.put("matchmaking", stored.to_item(99))
        assert commit(lobbies, lobbies.start_lobby(read, seats, "tb")) == LostRace()
        assert lobbies.lobby("AAAAAA") == stored
    storage.put("matchmaking", read.to_item(99))
    assert commit(lobbies, lobbies.start_lobby(read, seats, "tb")).ok


def test_leaving_a_lobby_needs_it_forming_and_the_seat_still_yours(
    lobbies: LobbyStore, storage: MemoryStorage
) -> None:
    guest = SeatPlayer(player_id="g", name="G")
    read = lobby(seats={**lobby().seats, 2: guest})
    storage.put("players", {"player_id": "g", "lobby": "AAAAAA"})
    storage.put("players", {"player_id": "h", "lobby": "AAAAAA"})
    storage.put(
        "matchmaking", lobby(seats={**lobby().seats, 2: guest}, status="started").to_item(9)
    )
    assert commit(lobbies, *lobbies.leave_lobby(read, "g")) == LostRace()
    assert commit(lobbies, *lobbies.leave_lobby(read, "h")) == LostRace()
    other = SeatPlayer(player_id="g", name="G2")
    storage.put("matchmaking", lobby(seats={**lobby().seats, 2: other}).to_item(9))
    assert commit(lobbies, *lobbies.leave_lobby(read, "g")) == LostRace()
    storage.put("matchmaking", read.to_item(9))
    storage.put("players", {"player_id": "g", "lobby": "BBBBBB"})
    assert commit(lobbies, *lobbies.leave_lobby(read, "g")) == LostRace(("g",))
    assert lobbies.lobby("AAAAAA") == read


def test_a_rematch_takes_a_player_still_at_the_ended_table_only(
    players: PlayerStore, lobbies: LobbyStore, storage: MemoryStorage
) -> None:
    storage.put("players", {"player_id": "p1", "table_id": "f-old", "seat": 2})
    assert commit(lobbies, lobbies.player_to_lobby("p1", "P1", "CODE", "f-other")) == Busy(("p1",))
    storage.put("players", {"player_id": "p1", "table_id": "f-old", "queue_key": "q"})
    assert commit(lobbies, lobbies.player_to_lobby("p1", "P1", "CODE", "f-old")) == Busy(("p1",))
    storage.put("players", {"player_id": "p1", "table_id": "f-old", "lobby": "L"})
    assert commit(lobbies, lobbies.player_to_lobby("p1", "P1", "CODE", "f-old")) == Busy(("p1",))
    storage.put("players", {"player_id": "p1", "table_id": "f-old", "seat": 2})
    assert commit(lobbies, lobbies.player_to_lobby("p1", "P1", "CODE", "f-old")).ok
    assert players.player("p1") == Player("p1", "P1", lobby="CODE")


def test_invite_codes_tried_are_limited_per_window(lobbies: LobbyStore) -> None:
    assert [lobbies.try_code("p1", 100.0, 3, 600) for _ in range(4)] == [True, True, True, False]
    assert lobbies.try_code("p1", 700.0, 3, 600), "a new window"


def test_a_release_frees_the_player_from_that_table_only(
    players: PlayerStore, storage: MemoryStorage
) -> None:
    storage.put("players", {"player_id": "p1", "table_id": "t-new", "seat": 1})
    players.release("p1", "t-old")
    assert players.player("p1").table_id == "t-new"
    players.release("p1", "t-new")
    assert players.player("p1").table_id is None


def test_an_action_id_keeps_its_first_record_only(storage: MemoryStorage) -> None:
    """The audit is create-only: a repeated action id (a retry, or a guess) neither
    overwrites what was recorded under it nor adds a second record."""
    trail = AuditTrail(storage)
    first = AuditRecord("a" * 32, 1_800_000_000.0, "arn:ana", "void", "t1", "why", "applied", {})
    again = AuditRecord("a" * 32, 1_800_000_001.0, "arn:eve", "void", "t1", "lie", "refused", {})
    assert trail.record(first) == first
    assert trail.record(again) == first
    assert trail.recorded(first.action_id) == first
    day = storage.query("audit", AuditRecord.day_pk(first.stamp[:10]))
    assert list(map(AuditRecord.from_item, day)) == [first]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_every_listed_mutation_still_applies(mutation: Mutation) -> None:
    assert applies(mutation), f"{mutation.original!r} is no longer in {mutation.path}: update it"
    known = {name for name in globals() if name.startswith("test_")}
    assert set(mutation.killed_by) <= known
