"""MatchmakingService on the in-memory storage with fakes for the pusher, the clock, the
telemetry and Step Functions: tickets, forming tables, and each ticket's one task."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from botocore.exceptions import ClientError

from services.common import constants
from services.common.events import MatchEnded, PlayerDisconnected, SeatPlayer
from services.common.identities import host_bot_id, player_id_of
from services.common.ledger import Balance, Ledger, Posting, escrow_account
from services.common.memory_storage import MemoryStorage
from services.common.presence import PresenceStore
from services.common.profiles import Profile, ProfileStore, Rating
from services.common.protocol import CreateTable, Queue
from services.common.records import (
    QUEUE_SHARDS,
    Player,
    QueueTicket,
    queue_pk,
    queue_shard,
    table_key,
)
from services.common.store import GameStore
from services.common.telemetry import RecordingTelemetry
from services.common.unit_of_work import Item, Key, Outcome, Put, Storage, TableKind, Update, Write
from services.matchmaking.app import MatchmakingService
from services.matchmaking.forming import ENTRY_TTL
from services.matchmaking.lobbies import CODE_ALPHABET, CODE_LENGTH
from services.matchmaking.rematch import rematch_code
from services.matchmaking.root import compose
from services.matchmaking.store import LobbyStore, PlayerStore, QueueStore
from shared_engine import MatchMode
from tests.services.fakes import FakeClock, RecordingPusher

pytestmark = pytest.mark.unit

ARN = "arn:aws:states:eu-west-1:123456789012:stateMachine:canasta-matchmaking"
QUICK = "one_round:twos-meld:0"


class FakeMachine:
    """Step Functions as the service uses it: starting tickets, answering task tokens. A
    token is answered once: a second answer is refused as Step Functions refuses it."""

    def __init__(self) -> None:
        self.started: list[dict[str, Any]] = []
        self.answered: list[tuple[str, dict[str, Any]]] = []
        self.refused: list[tuple[str, dict[str, Any]]] = []

    def start_execution(self, **kwargs: Any) -> dict[str, Any]:
        self.started.append(kwargs)
        return {"executionArn": f"{ARN}:{kwargs['name']}"}

    def send_task_success(self, *, taskToken: str, output: str) -> None:
        answer = (taskToken, json.loads(output))
        if taskToken in self.answers():
            self.refused.append(answer)
            error = {"Error": {"Code": "TaskTimedOut", "Message": "task already closed"}}
            raise ClientError(error, "SendTaskSuccess")
        self.answered.append(answer)

    def answers(self) -> dict[str, str]:
        """Each answered token's status."""
        return {token: output["status"] for token, output in self.answered}

    def tickets(self) -> list[dict[str, Any]]:
        return [json.loads(call["input"])["ticket"] for call in self.started]


class CountingStorage:
    """The storage, keeping every commit it was asked for, and in ``calls`` the partition
    key of every query and a mark for every commit."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self.commits: list[list[Write]] = []
        self.calls: list[str] = []

    def get(self, table: TableKind, key: Key, *, consistent: bool = True) -> Item | None:
        return self._storage.get(table, key, consistent=consistent)

    def query(
        self, table: TableKind, pk: str, *, prefix: str | None = None, limit: int | None = None
    ) -> list[Item]:
        self.calls.append(pk)
        return self._storage.query(table, pk, prefix=prefix, limit=limit)

    def commit(self, writes: Sequence[Write]) -> Outcome:
        self.commits.append(list(writes))
        self.calls.append("commit")
        return self._storage.commit(writes)


@dataclass
class World:
    """The service under test and everything around it."""

    service: MatchmakingService
    storage: MemoryStorage
    counting: CountingStorage
    players: PlayerStore
    lobbies: LobbyStore
    ledger: Ledger
    store: GameStore
    presence: PresenceStore
    pusher: RecordingPusher
    machine: FakeMachine
    clock: FakeClock
    telemetry: RecordingTelemetry

    def online(self, *players: str) -> None:
        """Each player connected on ``c-<player>``, as the connect service records it."""
        for p in players:
            self.presence.add_connection(f"c-{p}", p, p.upper(), 1_800_000_000.0, 3600)

    def queue(
        self, player: str, mode: MatchMode = MatchMode.ONE_ROUND, stake: int = 0, **kwargs: Any
    ) -> None:
        self.clock.advance(1)  # arrival order
        message = Queue(action="queue", mode=mode, stake=stake, **kwargs)
        self.service.queues.queue(player, player.upper(), f"c-{player}", message)

    def fund(self, player: str, points: int) -> None:
        self.ledger.book([Posting(player, "welcome", "welcome", points=points)], 0.0)

    def shard(self, queue_key: str, shard: int) -> list[QueueTicket]:
        """The entries one partition of the queue holds."""
        items = self.storage.query("matchmaking", queue_pk(queue_key, shard))
        return [QueueTicket.from_item(queue_key, item) for item in items]

    def entries(self, queue_key: str = QUICK) -> list[QueueTicket]:
        """Every shard's entries of the queue, oldest first."""
        found = [e for shard in range(QUEUE_SHARDS) for e in self.shard(queue_key, shard)]
        return sorted(found, key=lambda entry: entry.sk)

    def waiting(self, queue_key: str = QUICK) -> list[str]:
        return [e.player_id for e in self.entries(queue_key)]

    def player(self, player_id: str) -> Player:
        """Where the player item says the player is (nowhere, if nothing was written)."""
        return self.presence.get_player(player_id) or Player(player_id, "")

    def codes(self, player_id: str) -> list[str]:
        return [m["code"] for m in self.pusher.to(f"c-{player_id}", "error")]

    def ticket(self, player_id: str) -> dict[str, Any]:
        """The player's latest ticket, as the state machine was started with it."""
        return next(t for t in reversed(self.machine.tickets()) if t["player_id"] == player_id)


def token(player: str) -> str:
    return f"token-{player}"


def task(w: World, player: str) -> str:
    """The ``try_match`` of the player's latest ticket, delivered with its task token."""
    return w.service.queues.try_match(w.ticket(player), token(player))


def tables(ended: dict[str, str]) -> int:
    """How many tables a formation made, from the tickets it ended."""
    return list(ended.values()).count("seated") // 4


@pytest.fixture
def w(
    storage: MemoryStorage,
    presence: PresenceStore,
    pusher: RecordingPusher,
    clock: FakeClock,
    telemetry: RecordingTelemetry,
) -> World:
    counting = CountingStorage(storage)
    ledger = Ledger(storage)
    machine = FakeMachine()
    service = compose(
        storage=counting,
        ledger=ledger,
        pusher=pusher,
        machine=machine,
        state_machine_arn=ARN,
        clock=clock,
        telemetry=telemetry,
        queue_seconds=120,
        arena_stakes=(100, 500, 1000),
        max_message_bytes=8 * 1024,
    )
    players, lobbies, store = PlayerStore(counting), LobbyStore(counting), GameStore(counting)
    return World(
        service,
        storage,
        counting,
        players,
        lobbies,
        ledger,
        store,
        presence,
        pusher,
        machine,
        clock,
        telemetry,
    )


# --- queueing ------------------------------------------------------------------------------


def test_queue_writes_the_entry_and_starts_a_ticket(w: World) -> None:
    w.online("p1")
    w.queue("p1")
    now = w.clock.now()

    (entry,) = w.entries()
    assert entry.sk == f"{now:017.6f}#p1"
    assert entry.player_id == "p1"
    assert entry.name == "P1"
    assert entry.expires_at == now + 120
    stored = w.storage.get("matchmaking", entry.key)
    assert stored is not None and stored["expires_at"] == int(now + 120) + ENTRY_TTL, "its TTL"
    player = w.player("p1")
    assert (player.queue_key, player.queue_sk) == (QUICK, entry.sk)
    assert player.ticket == entry.ticket

    assert w.pusher.to("c-p1") == [
        {
            "type": "queued",
            "mode": "one_round",
            "variant": "twos-meld",
            "stake": 0,
            "expires_at": now + 120,
        }
    ]
    (started,) = w.machine.started
    assert started["stateMachineArn"] == ARN
    assert started["name"] == entry.ticket
    assert json.loads(started["input"]) == {
        "ticket": {
            "player_id": "p1",
            "queue_key": QUICK,
            "sk": entry.sk,
            "name": "P1",
            "ticket": entry.ticket,
            "expires_at": now + 120,
            "wait_seconds": 120,
        }
    }


def test_a_player_queues_once(w: World) -> None:
    w.online("p1")
    w.queue("p1")
    w.queue("p1")
    w.queue("p1", MatchMode.THREE_ROUNDS, variant="classic")
    assert w.codes("p1") == ["already_playing", "already_playing"]
    assert w.waiting() == ["p1"]
    assert w.entries("three_rounds:classic:0") == []
    assert len(w.machine.started) == 1
    # Nor while in a friends lobby.
    w.online("p2")
    w.service.lobbies.create_table(
        "p2", "P2", "c-p2", CreateTable(action="create_table", mode="one_round")
    )
    w.queue("p2")
    assert w.codes("p2") == ["already_playing"]
    assert len(w.machine.started) == 1


def test_arena_stakes_must_be_listed_and_covered(w: World) -> None:
    w.online("p1", "p2")
    w.fund("p1", 499)
    w.queue("p1", MatchMode.ARENA, 200)
    w.queue("p1", MatchMode.ARENA, 500)
    assert w.codes("p1") == ["invalid_stake", "insufficient_balance"]
    assert w.machine.started == []
    assert w.player("p1").queue_key is None

    w.queue("p1", MatchMode.ARENA, 100)
    assert w.waiting("arena:twos-meld:100") == ["p1"]
    assert w.ledger.balance("p1") == Balance(499, 0), "nothing is held before the table forms"
    # A quick-start queue ignores a stake sent with it.
    w.queue("p2", MatchMode.ONE_ROUND, 500)
    assert w.waiting() == ["p2"]
    assert w.ticket("p2")["queue_key"] == QUICK


# --- forming tables -------------------------------------------------------------------------


def test_four_waiting_players_are_seated_in_one_transaction(w: World) -> None:
    players = ["p1", "p2", "p3", "p4", "p5"]
    w.online(*players)
    for p in players:
        w.queue(p)
    w.counting.commits.clear()

    assert w.service.queues.form_tables(QUICK) == {
        w.ticket(p)["ticket"]: "seated" for p in players[:4]
    }
    assert len(w.counting.commits) == 1
    assert w.telemetry.metrics["tables_formed"] == 1
    table_id = w.player("p1").table_id
    assert table_id is not None
    for seat, p in enumerate(players[:4], start=1):
        player = w.player(p)
        assert (player.table_id, player.seat) == (table_id, seat)
        assert (player.queue_key, player.queue_sk, player.ticket) == (None, None, None)
    # The fifth keeps waiting.
    assert w.waiting() == ["p5"]
    assert w.player("p5").queue_key is not None

    table = w.store.get_table(table_id)
    assert table is not None
    assert {s: p.player_id for s, p in table.seats.items()} == {1: "p1", 2: "p2", 3: "p3", 4: "p4"}
    assert (table.mode, table.variant, table.stake, table.version) == (
        MatchMode.ONE_ROUND,
        "twos-meld",
        0,
        0,
    )
    (formed,) = w.store.history.table_outbox(table_id)
    assert (formed.detail_type, formed.source) == ("TableFormed", "canasta.matchmaking")
    assert formed.detail == {
        "table_id": table_id,
        "mode": "one_round",
        "variant": "twos-meld",
        "stake": 0,
        "seats": {
            str(seat): {"player_id": p, "name": p.upper(), "bot": False}
            for seat, p in enumerate(players[:4], start=1)
        },
    }


def _in_shards(count: int, shard: int, other: bool = False) -> list[str]:
    """``count`` player ids whose queue shard is ``shard`` (or, ``other``, is not)."""
    found = (f"s{shard}-{n}" for n in range(10_000))
    return [p for p in found if (queue_shard(p) == shard) != other][:count]


def test_a_queue_spreads_its_entries_over_shards_by_player(w: World) -> None:
    players = [f"p{i}" for i in range(1, 33)]
    w.online(*players)
    for p in players:
        w.queue(p)
    pks = {
        e.player_id: queue_pk(QUICK, shard)
        for shard in range(QUEUE_SHARDS)
        for e in w.shard(QUICK, shard)
    }
    assert pks == {p: f"QUEUE#{QUICK}#{queue_shard(p)}" for p in players}
    assert len(set(pks.values())) == QUEUE_SHARDS  # 32 players fill all 8
    # The player item names the entry: leaving deletes it from its own shard.
    w.service.leave("p7", "c-p7")
    assert "p7" not in w.waiting()
    assert len(w.waiting()) == 31


def test_a_pass_seats_the_four_oldest_of_its_own_shard_with_one_read(w: World) -> None:
    """A busy queue: each ticket's pass drains its shard, with no read of the others."""
    older = _in_shards(2, 3, other=True)
    own = _in_shards(4, 3)
    w.online(*older, *own)
    for p in (*older, *own):
        w.queue(p)
    (ticket,) = [t for t in w.machine.tickets() if t["player_id"] == own[-1]]
    w.counting.calls.clear()

    assert w.service.queues.try_match(ticket, "token") == "seated"
    queries = [c for c in w.counting.calls if c.startswith("QUEUE#") or c == "commit"]
    assert queries[:2] == [f"QUEUE#{QUICK}#3", "commit"]
    assert {w.player(p).seat for p in own} == {1, 2, 3, 4}
    assert w.waiting() == older


def test_a_pass_short_in_its_shard_seats_the_four_oldest_of_every_shard(w: World) -> None:
    """A quiet queue: four players in four shards still make a table, oldest first."""
    players = [_in_shards(1, shard)[0] for shard in (5, 1, 6, 2, 0)]
    w.online(*players)
    for p in players:
        w.queue(p)
    w.counting.calls.clear()

    assert tables(w.service.queues.form_tables(QUICK, 6)) == 1
    shards = [f"QUEUE#{QUICK}#{(6 + n) % QUEUE_SHARDS}" for n in range(QUEUE_SHARDS)]
    assert w.counting.calls[: QUEUE_SHARDS + 1] == [*shards, "commit"]
    seated = {p: w.player(p).seat for p in players[:4]}
    assert seated == {p: seat for seat, p in enumerate(players[:4], start=1)}
    assert w.waiting() == players[4:]


def test_eight_waiting_players_make_two_tables_and_three_make_none(w: World) -> None:
    players = [f"p{i}" for i in range(1, 9)]
    w.online(*players)
    for p in players:
        w.queue(p)
    w.counting.commits.clear()
    assert tables(w.service.queues.form_tables(QUICK)) == 2
    assert len(w.counting.commits) == 2
    first = {w.player(p).table_id for p in players[:4]}
    second = {w.player(p).table_id for p in players[4:]}
    assert len(first) == len(second) == 1
    assert first != second
    assert w.entries() == []

    w.online("q1", "q2", "q3")
    for p in ("q1", "q2", "q3"):
        w.queue(p)
    w.queue("q4", variant="classic")  # another queue does not complete this one
    w.counting.commits.clear()
    assert w.service.queues.form_tables(QUICK) == {}
    assert w.counting.commits == []
    assert w.waiting() == ["q1", "q2", "q3"]


def _arena_table(w: World, players: list[str]) -> tuple[str, list[str]]:
    """The four funded with 1,000, queued for the 500 arena, seated: the table and its puts."""
    w.online(*players)
    for p in players:
        w.fund(p, 1000)
        w.queue(p, MatchMode.ARENA, 500)
    w.counting.commits.clear()
    assert tables(w.service.queues.form_tables("arena:twos-meld:500")) == 1
    (writes,) = w.counting.commits
    table_id = w.player(players[0]).table_id
    assert table_id is not None
    return table_id, [str(write.item["sk"]) for write in writes if isinstance(write, Put)]


def test_an_arena_table_moves_the_stakes_to_escrow_in_the_same_transaction(w: World) -> None:
    players = ["p1", "p2", "p3", "p4"]
    table_id, booked = _arena_table(w, players)
    assert {f"ENTRY#{table_id}:escrow:{seat}" for seat in (1, 2, 3, 4)} <= set(booked)
    assert {p: w.ledger.balance(p) for p in players} == dict.fromkeys(players, Balance(500, 0))
    assert w.ledger.balance(escrow_account(table_id)) == Balance(2000, 0)
    table = w.store.get_table(table_id)
    assert table is not None and (table.mode, table.stake) == (MatchMode.ARENA, 500)


def test_whoever_queues_is_a_player_whatever_their_id(w: World) -> None:
    """MATCH-3, MATCH-4: a queue entry comes from a connection with a verified token, so its
    seat is a player's, even under an id that reads like a bot's (a provider's ``bot-x``, the
    local stack's fillers): no practice table, every stake held."""
    players = ["p1", "bot-x", "p3", "bot-KQ7M2X-2"]
    table_id, booked = _arena_table(w, players)
    assert {f"ENTRY#{table_id}:escrow:{seat}" for seat in (1, 2, 3, 4)} <= set(booked)
    assert {p: w.ledger.balance(p) for p in players} == dict.fromkeys(players, Balance(500, 0))
    table = w.store.get_table(table_id)
    assert table is not None
    assert [table.seats[s].bot for s in (1, 2, 3, 4)] == [False] * 4
    (formed,) = w.store.history.table_outbox(table_id)
    assert [formed.detail["seats"][s]["bot"] for s in "1234"] == [False] * 4


def test_a_player_short_of_the_stake_is_dropped_and_the_others_wait(w: World) -> None:
    players = ["p1", "p2", "p3", "p4"]
    w.online(*players)
    for p in players:
        w.fund(p, 100)
        w.queue(p, MatchMode.ARENA, 100)
        if p != "p4":
            assert task(w, p) == "waiting"
    w.ledger.book([Posting("p2", "external:spent", "external", points=-1)], 0.0)

    # p4's try_match: the formation it tries drops p2 and ends p2's ticket (its kept token).
    assert task(w, "p4") == "waiting"
    assert w.codes("p2") == ["insufficient_balance"]
    assert w.machine.answers() == {token("p2"): "gone"}
    dropped = w.player("p2")
    assert (dropped.queue_key, dropped.ticket, dropped.table_id) == (None, None, None)
    assert w.waiting("arena:twos-meld:100") == ["p1", "p3", "p4"]
    for p in ("p1", "p3", "p4"):
        assert w.codes(p) == []
        assert w.ledger.balance(p) == Balance(100, 0)
    # The next funded player completes the table.
    w.online("p5")
    w.fund("p5", 100)
    w.queue("p5", MatchMode.ARENA, 100)
    assert task(w, "p5") == "seated"
    seated = {token(p): "seated" for p in ("p1", "p3", "p4", "p5")}
    assert w.machine.answers() == {token("p2"): "gone", **seated}
    table = w.store.get_table(str(w.player("p5").table_id))
    assert table is not None
    assert [p.player_id for _, p in sorted(table.seats.items())] == ["p1", "p3", "p4", "p5"]


def test_a_stale_entry_is_removed_and_does_not_block_the_queue(w: World) -> None:
    """An entry whose player no longer holds its ticket (a lost write) is dropped."""
    players = ["p1", "p2", "p3", "p4", "p5"]
    w.online(*players)
    for p in players:
        w.queue(p)
    lost = Update("players", Player.key_of("p2"), remove=("queue_key", "queue_sk", "ticket"))
    w.storage.commit([lost])
    assert tables(w.service.queues.form_tables(QUICK)) == 1
    assert w.player("p2").table_id is None
    assert [p for p in players if w.player(p).table_id is not None] == ["p1", "p3", "p4", "p5"]
    assert w.entries() == []


# --- a ticket's one task -------------------------------------------------------------------


def test_a_lone_ticket_keeps_its_token_on_its_player_and_nobody_answers_it(w: World) -> None:
    w.online("p1")
    w.queue("p1")
    assert task(w, "p1") == "waiting"
    assert w.player("p1").task_token == token("p1")
    w.clock.advance(500)  # nothing polls: the state machine's timeout is the only clock
    # A repeated delivery (SQS delivers at least once) changes nothing.
    assert task(w, "p1") == "waiting"
    assert w.player("p1").task_token == token("p1")
    assert w.machine.answered == w.machine.refused == []
    assert w.pusher.to("c-p1", "queue_left") == []


def test_the_fourth_ticket_seats_the_four_and_answers_each_task_once(w: World) -> None:
    """A seated ticket's execution is its one task: the three tokens kept with their
    entries and the fourth's own, each answered seated by the write that seated them."""
    players = ["p1", "p2", "p3", "p4"]
    w.online(*players)
    answered = []
    for p in players:
        w.queue(p)
        w.clock.advance(200)  # seating wins over a queue time that is up: the timeout decides
        answered.append(task(w, p))
    assert answered == ["waiting"] * 3 + ["seated"]
    assert w.machine.answers() == {token(p): "seated" for p in players}
    assert len(w.machine.answered) == 4
    assert w.machine.refused == []
    assert len({w.player(p).table_id for p in players} - {None}) == 1
    assert w.entries() == []


def test_a_try_match_after_its_ticket_was_seated_answers_its_own_token(w: World) -> None:
    """The fourth's try_match seats p3, whose own try_match has not arrived: nobody holds
    p3's token, so p3's try_match answers it when it comes, and brings no entry back."""
    players = ["p1", "p2", "p3", "p4"]
    w.online(*players)
    answered = []
    for p in players:
        w.queue(p)
        if p != "p3":
            answered.append(task(w, p))
    assert answered == ["waiting", "waiting", "seated"]
    assert w.machine.answers() == {token(p): "seated" for p in ("p1", "p2", "p4")}
    assert w.player("p3").table_id is not None

    assert task(w, "p3") == "seated"
    assert w.machine.answers()[token("p3")] == "seated"
    assert w.player("p3").task_token is None, "kept on a player the ticket no longer holds"
    # Delivered again: the second answer is refused, and it says the same.
    assert task(w, "p3") == "seated"
    assert w.machine.refused == [(token("p3"), {"status": "seated"})]
    assert w.entries() == []


def test_a_token_kept_while_the_formation_read_is_answered_by_it(
    w: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """p3's try_match keeps its token after the fourth's formation read p3's player: that
    write is refused (the player is not as read), and the next read answers p3's token."""
    players = ["p1", "p2", "p3", "p4"]
    w.online(*players)
    for p in ("p1", "p2"):
        w.queue(p)
        assert task(w, p) == "waiting"
    w.queue("p3")
    w.queue("p4")
    (late,) = [e for e in w.entries() if e.player_id == "p3"]
    original = QueueStore.form_table
    kept: list[bool] = []

    def racing(self: QueueStore, *args: Any) -> Outcome:
        if not kept:
            kept.append(QueueStore(w.storage).keep_token(late, token("p3")))
        return original(self, *args)

    monkeypatch.setattr(QueueStore, "form_table", racing)
    assert task(w, "p4") == "seated"
    assert kept == [True]
    assert w.machine.answers() == {token(p): "seated" for p in players}


def test_leave_ends_the_ticket_and_answers_its_task_gone(w: World) -> None:
    w.online("p1", "p2")
    w.queue("p1")
    w.queue("p2")
    assert [task(w, p) for p in ("p1", "p2")] == ["waiting"] * 2
    w.service.leave("p1", "c-p1")
    w.service.player_disconnected(PlayerDisconnected(player_id="p2", connection_id="c-p2"))
    assert w.machine.answers() == {token("p1"): "gone", token("p2"): "gone"}
    assert w.pusher.to("c-p1", "queue_left") == [{"type": "queue_left", "reason": "left"}]
    assert w.entries() == []
    w.service.leave("p1", "c-p1")
    assert w.codes("p1") == ["not_queued"]
    assert len(w.machine.answered) == 2


def test_a_ticket_left_before_its_token_arrived_answers_it_gone(w: World) -> None:
    w.online("p1")
    w.queue("p1")
    first = w.ticket("p1")
    w.service.leave("p1", "c-p1")
    assert w.machine.answered == []
    assert task(w, "p1") == "gone"
    assert w.machine.answers() == {token("p1"): "gone"}
    # Queued again with a new ticket: the old one's late delivery is still gone.
    w.queue("p1")
    assert w.ticket("p1")["ticket"] != first["ticket"]
    assert w.service.queues.try_match(first, "token-old") == "gone"
    assert task(w, "p1") == "waiting"
    assert w.waiting() == ["p1"]


def test_a_token_kept_while_leave_read_is_answered_by_the_leave(
    w: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    w.online("p1")
    w.queue("p1")
    (read,) = w.entries()
    original = QueueStore.leave
    kept: list[bool] = []

    def racing(self: QueueStore, ticket: QueueTicket, task_token: str | None) -> bool:
        if not kept:
            kept.append(QueueStore(w.storage).keep_token(read, token("p1")))
        return original(self, ticket, task_token)

    monkeypatch.setattr(QueueStore, "leave", racing)
    w.service.leave("p1", "c-p1")
    assert kept == [True]
    assert w.machine.answers() == {token("p1"): "gone"}
    assert w.entries() == []


def test_a_ticket_whose_time_is_up_leaves_the_queue_and_the_player_is_told(w: World) -> None:
    """The task's timeout (the ticket's wait_seconds) → Catch → Abandon: the message the
    state machine sends then takes the waiting player out."""
    w.online("p1", "p2")
    w.queue("p1")
    w.queue("p2")
    assert task(w, "p1") == "waiting"
    w.service.queues.abandon(w.ticket("p1"), "States.Timeout")
    assert w.pusher.to("c-p1", "queue_left") == [{"type": "queue_left", "reason": "timeout"}]
    expired = w.player("p1")
    assert (expired.queue_key, expired.queue_sk, expired.ticket) == (None, None, None)
    assert w.waiting() == ["p2"]
    assert w.telemetry.metrics["tickets_expired"] == 1
    assert "tickets_abandoned" not in w.telemetry.metrics
    assert w.machine.answered == [], "a timed-out task needs no answer"


def test_a_seated_player_is_never_told_their_ticket_expired(w: World) -> None:
    """The timeout raced the formation that seated p1: the abandon that follows finds the
    ticket ended, says nothing and counts the unanswered task."""
    players = ["p1", "p2", "p3", "p4"]
    w.online(*players)
    for p in players:
        w.queue(p)
    assert task(w, "p4") == "seated"
    w.pusher.clear()
    w.service.queues.abandon(w.ticket("p1"), "States.Timeout")
    assert w.pusher.sent == []
    assert w.player("p1").table_id is not None
    assert w.telemetry.metrics["tickets_abandoned"] == 1
    assert "tickets_expired" not in w.telemetry.metrics


def test_an_abandon_from_a_ticket_of_the_polling_definition_still_takes_the_player_out(
    w: World,
) -> None:
    """Executions started before the deploy run the definition they started with, whose
    abandon names no error: their players must not stay queued."""
    from services.matchmaking.handler import AbandonTask

    w.online("p1")
    w.queue("p1")
    old = AbandonTask.model_validate({"kind": "abandon", "ticket": w.ticket("p1")})
    w.service.queues.abandon(old.ticket, old.error)
    assert w.pusher.to("c-p1", "queue_left") == [{"type": "queue_left", "reason": "timeout"}]
    assert w.entries() == []


def test_a_ticket_whose_task_could_not_be_sent_is_taken_out_and_counted(w: World) -> None:
    w.online("p1")
    w.queue("p1")
    w.service.queues.abandon(w.ticket("p1"), "States.TaskFailed")
    assert w.pusher.to("c-p1", "queue_left") == [{"type": "queue_left", "reason": "timeout"}]
    assert w.entries() == []
    assert w.telemetry.metrics["tickets_abandoned"] == 1
    assert "tickets_expired" not in w.telemetry.metrics


# --- events ------------------------------------------------------------------------------------


def test_match_over_frees_only_that_tables_humans(w: World) -> None:
    players = ["p1", "p2", "p3", "p4"]
    w.online(*players)
    for p in players:
        w.queue(p)
    w.service.queues.form_tables(QUICK)
    table_id = w.player("p1").table_id
    assert table_id is not None
    seats = {str(i): SeatPlayer(player_id=p, name=p) for i, p in enumerate(players, start=1)}
    other = MatchEnded(
        table_id="another",
        mode=MatchMode.ONE_ROUND,
        stake=0,
        winner="A",
        totals={"A": 1, "B": 0},
        rounds_played=1,
        seats=seats,  # type: ignore[arg-type]
    )
    w.service.match_over(other)
    assert all(w.player(p).table_id == table_id for p in players)
    w.service.match_over(other.model_copy(update={"table_id": table_id}))
    assert all((w.player(p).table_id, w.player(p).seat) == (None, None) for p in players)
    w.queue("p1")
    assert w.waiting() == ["p1"]


def test_a_disconnected_player_leaves_the_queue_silently(w: World) -> None:
    w.online("p1")
    w.queue("p1")
    w.pusher.clear()
    w.service.player_disconnected(PlayerDisconnected(player_id="p1", connection_id="c-p1"))
    assert w.entries() == []
    assert w.player("p1").queue_key is None
    assert w.pusher.sent == []


def test_leave_racing_the_table_does_not_tell_a_seated_player_they_left(
    w: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``leave`` reads the player (queued), the table forms, then its dequeue is cancelled.

    The player is seated and must not be told ``queue_left``; leave() goes on
    as if its dequeue had worked (services/matchmaking/app.py, leave()).
    """
    players = ["p1", "p2", "p3", "p4"]
    w.online(*players)
    for p in players:
        w.queue(p)
    queued = w.players.player("p1")
    w.service.queues.form_tables(QUICK)
    assert w.player("p1").table_id is not None
    w.pusher.clear()

    reads = iter([queued])
    real = w.players.player
    monkeypatch.setattr(w.players, "player", lambda pid: next(reads, None) or real(pid))
    w.service.leave("p1", "c-p1")
    assert w.player("p1").table_id is not None
    assert w.pusher.to("c-p1", "queue_left") == [], "a seated player was told they left the queue"


# --- bots ---------------------------------------------------------------------------------------


def _lobby_of(w: World, host: str) -> str:
    w.online(host)
    w.service.lobbies.create_table(
        host, host.upper(), f"c-{host}", CreateTable(action="create_table", mode="one_round")
    )
    code = w.player(host).lobby
    assert code is not None
    return code


def test_invite_codes_are_drawn_from_the_whole_code_space(w: World) -> None:
    """A code is a secret that seats its holder: 200 lobbies' codes are all different and
    every position draws on most of the alphabet, so codes are neither shared, guessable
    from each other, nor from a small space (31**6 is about 887 million)."""
    codes = [_lobby_of(w, f"host{n}") for n in range(200)]
    assert len(set(codes)) == len(codes)
    assert all(len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET) for code in codes)
    for position in range(CODE_LENGTH):
        assert len({code[position] for code in codes}) >= len(CODE_ALPHABET) * 2 // 3


def test_the_hosts_level_is_stored_on_every_bot_seat_and_in_table_formed(w: World) -> None:
    _lobby_of(w, "h1")
    w.service.receive(("h1", "H1"), "c-h1", '{"action": "fill_bots", "level": "hard"}')
    table_id = str(w.player("h1").table_id)
    table = w.store.get_table(table_id)
    assert table is not None
    assert {s: (p.bot, p.level) for s, p in table.seats.items()} == {
        1: (False, None),
        2: (True, "hard"),
        3: (True, "hard"),
        4: (True, "hard"),
    }
    assert w.store.history.keys(table_id) == [constants.TABLE_SK]
    (formed,) = w.store.history.table_outbox(table_id)
    assert formed.detail_type == "TableFormed"
    levels = {s: p.get("level") for s, p in formed.detail["seats"].items()}
    assert levels == {"1": None, "2": "hard", "3": "hard", "4": "hard"}


def test_a_hosts_bots_sit_under_ids_no_token_can_name(w: World) -> None:
    """The bot seats are known by ``bot``, and their ids lie outside every player id, so a
    player whose subject is spelled like one is not seated there (MATCH-3)."""
    code = _lobby_of(w, "h4")
    w.service.receive(("h4", "H4"), "c-h4", '{"action": "fill_bots"}')
    table = w.store.get_table(str(w.player("h4").table_id))
    assert table is not None
    bots = [p.player_id for p in table.seats.values() if p.bot]
    assert bots == [host_bot_id(code, seat) for seat in (2, 3, 4)]
    assert [player_id_of(bot) for bot in bots] == [None] * 3
    assert table.seat_of(f"bot-{code}-2") is None


def test_fill_bots_defaults_to_normal(w: World) -> None:
    _lobby_of(w, "h2")
    w.service.receive(("h2", "H2"), "c-h2", '{"action": "fill_bots"}')
    table = w.store.get_table(str(w.player("h2").table_id))
    assert table is not None
    assert [p.level for p in table.seats.values() if p.bot] == ["normal"] * 3


@pytest.mark.parametrize("level", ['"expert"', '""', "3", "null", '"HARD"'])
def test_a_malformed_level_is_refused_and_the_lobby_waits(w: World, level: str) -> None:
    code = _lobby_of(w, "h3")
    before = w.lobbies.lobby(code)
    w.service.receive(("h3", "H3"), "c-h3", f'{{"action": "fill_bots", "level": {level}}}')
    assert w.codes("h3") == ["malformed"]
    assert w.lobbies.lobby(code) == before
    assert w.player("h3").table_id is None


# --- playing again ------------------------------------------------------------------------


def _ended_friends_table(w: World, players: list[str]) -> str:
    """Four played a friends table (a bot in seat 4) to its end; the release of the
    seated players (``match_over``) has not arrived yet."""
    w.online(*players)
    code = _lobby_of(w, players[0])
    for p in players[1:]:
        w.service.lobbies.join_table(p, p.upper(), f"c-{p}", code)
    w.service.lobbies.fill_bots(players[0], f"c-{players[0]}", level="easy")
    table_id = str(w.player(players[0]).table_id)
    table = w.store.get_table(table_id)
    assert table is not None and table_id.startswith("f-")
    w.storage.commit([Update("games", table_key(table_id), set={"status": "finished"})])
    return table_id


def _rematch(w: World, player: str, table_id: str) -> None:
    message = json.dumps({"action": "rematch", "table_id": table_id})
    w.service.receive((player, player.upper()), f"c-{player}", message)


def test_a_player_whose_release_has_not_arrived_takes_their_rematch_seat(w: World) -> None:
    """The rematch seats a player still marked at the ended table (the release of
    ``match_over`` travels as an event); the late release then changes nothing."""
    ended = _ended_friends_table(w, ["e1", "e2", "e3"])
    _rematch(w, "e2", ended)
    assert w.codes("e2") == []
    item = w.player("e2")
    assert item.lobby is not None and (item.table_id, item.seat) == (None, None)
    lobby = w.lobbies.lobby(item.lobby)
    assert lobby is not None and lobby.rematch_of == ended
    bot = w.store.get_table(ended).seats[4]  # type: ignore[union-attr]
    assert lobby.seats == {2: SeatPlayer(player_id="e2", name="E2"), 4: bot}
    assert {s: p.player_id for s, p in lobby.awaiting().items()} == {1: "e1", 3: "e3"}

    w.service.match_over(
        MatchEnded(
            table_id=ended,
            mode=MatchMode.ONE_ROUND,
            stake=0,
            winner="A",
            totals={"A": 1, "B": 0},
            rounds_played=1,
            seats={str(s): p for s, p in lobby.held.items()},  # type: ignore[misc]
        )
    )
    assert w.player("e2") == item
    assert (w.player("e1").table_id, w.player("e1").seat) == (None, None)


def test_a_player_at_another_live_table_is_refused_and_nothing_changes(w: World) -> None:
    ended = _ended_friends_table(w, ["g1", "g2", "g3"])
    w.storage.commit(
        [Update("players", Player.key_of("g3"), set={"table_id": "another-live-table"})]
    )
    before = w.player("g3")
    _rematch(w, "g3", ended)
    assert w.codes("g3") == ["already_playing"]
    assert w.player("g3") == before
    assert w.lobbies.lobby(rematch_code(ended, 0)) is None


def test_the_arena_seats_players_near_in_rating_and_balances_the_teams(w: World) -> None:
    """Arena ratings 10, 40, 11, 12: four are waiting but 40 is out of reach, so no table
    (first-come would seat them); a 10.5 arrives and the four near each other sit, the
    teams as even as they allow (10 + 12 against 10.5 + 11), while 40 waits on."""
    ratings = {"p1": 10.0, "p2": 40.0, "p3": 11.0, "p4": 12.0, "p5": 10.5}
    profiles = ProfileStore(w.storage)
    for player, mu in ratings.items():
        rated = Profile(player, version=1, ratings={"arena": Rating(mu, 2.0)})
        assert profiles.add_match(f"setup-{player}", [], [(None, rated)], {}).ok
    w.online(*ratings)
    for player in ratings:
        w.fund(player, 100)
        w.queue(player, MatchMode.ARENA, 100)
        expected = "seated" if player == "p5" else "waiting"
        assert task(w, player) == expected, player
    table = w.store.get_table(str(w.player("p5").table_id))
    assert table is not None
    assert [p.player_id for _, p in sorted(table.seats.items())] == ["p1", "p5", "p4", "p3"]
    assert w.waiting("arena:twos-meld:100") == ["p2"]
