"""Every item the services keep, one typed record each: its key and its (de)serialization.

Nothing else in the services reads or writes an item's attributes: the stores
(``store``, ``presence``, ``ledger``, ``services/matchmaking/store``) build their
writes (``unit_of_work``) from these records, and read them back through them.
Items are Python values (``unit_of_work.Item``); the DynamoDB storage turns
them into attribute maps at its boundary.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar, Literal

from pydantic import BaseModel

from services.common import constants
from services.common.events import SeatPlayer, source_of
from services.common.frozen import Frozen, field, replace
from services.common.unit_of_work import Item, Key
from shared_engine import Variant, loads, pack, variant_of
from shared_engine.match import MatchMode

Status = Literal["playing", "finished", "aborted"]
SEATS = (1, 2, 3, 4)


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _int(value: object) -> int:
    assert isinstance(value, (int, float)) and not isinstance(value, bool)
    return int(value)


def _float(value: object) -> float:
    assert isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value)


def _str(value: object) -> str:
    assert isinstance(value, str)
    return value


class Outbound(Frozen):
    """An event to publish once the write that carries it has committed."""

    detail_type: str
    detail: dict[str, Any]
    source: str

    @classmethod
    def of(cls, event: BaseModel, emitter: str | None = None) -> Outbound:
        """The event as its model says: the detail-type its class name, the source its
        emitter's (``events.EMITTERS``), so no service spells either."""
        detail_type = type(event).__name__
        return cls(detail_type, event.model_dump(mode="json"), source_of(detail_type, emitter))

    def as_json(self) -> dict[str, Any]:
        return {"detail-type": self.detail_type, "source": self.source, "detail": self.detail}


def outbox(events: Sequence[Outbound]) -> Item:
    """The ``outbox`` attribute: the events the stream relay publishes from the item."""
    return {"outbox": _json([e.as_json() for e in events])} if events else {}


def outbox_events(item: Item) -> list[Outbound]:
    """The events an item's ``outbox`` carries (none if it has no outbox)."""
    raw = item.get("outbox")
    if not raw:
        return []
    return [Outbound(e["detail-type"], e["detail"], e["source"]) for e in json.loads(_str(raw))]


# --- the games table --------------------------------------------------------------------


def table_key(table_id: str, sk: str = constants.TABLE_SK) -> Key:
    return {"pk": constants.table_pk(table_id), "sk": sk}


def conn_attribute(seat: int) -> str:
    return f"conn{seat}"


class TableRecord(Frozen):
    """The live item of a table: match facts, the round's state and who is connected.

    ``version`` grows by one with every write that changes what players see;
    every such write is conditional on the version it read.
    """

    table_id: str
    mode: MatchMode
    variant: Variant
    stake: int
    seats: dict[int, SeatPlayer]
    version: int = 0
    status: Status = "playing"
    round: int = 0
    totals: tuple[int, int] = (0, 0)
    tie_break: bool = False
    """The round being played was added because the totals were tied (MATCH-2)."""
    state: bytes | None = None
    """The round's state as ``shared_engine.pack`` wrote it; never sent to a client."""
    connections: dict[int, str | None] = field(default_factory=lambda: dict.fromkeys(SEATS))
    turn_started: int = 0
    """The version at which the current turn began: the key of its timer."""
    turn_deadline: float | None = None
    intermission_until: float | None = None
    """Between two rounds of a match: when the next is dealt at the latest (sooner once
    every connected player has continued, ``intermission_over``); None while a round runs
    and after the match."""
    continued: frozenset[int] = frozenset()
    """The seats whose player sent ``continue`` during the intermission."""
    timer_at: float | None = None
    """When the table's pending timer is due (TABLE-2): one timer per table, not per turn.
    A turn or intermission whose deadline it precedes arms none (``services.common.timers``).
    None on a table written before it was kept: every turn arms its own, as then."""
    timer_from: float | None = None
    """The ``at`` of the timer whose fire recorded ``timer_at`` (None: a turn's write did),
    so that fire, delivered again after a crash, knows the timer may never have been sent."""
    updated_at: float = 0.0
    turn_moves: tuple[LogEntry, ...] = ()
    """The moves of the turn being played, once written: kept here until the move that ends
    the turn logs them all in one ``LOG`` item (``LoggedTurn``), so that a move within a turn
    is one conditional update of this item alone."""

    def seat_of(self, player_id: str) -> int | None:
        return next((s for s, p in self.seats.items() if p.player_id == player_id), None)

    def awaited(self) -> list[int]:
        """The seats the intermission still waits for: a connected person who has not
        continued. A bot's seat and a disconnected seat are never waited for (TABLE-2)."""
        return [
            seat
            for seat, player in sorted(self.seats.items())
            if not player.bot
            and self.connections.get(seat) is not None
            and seat not in self.continued
        ]

    def intermission_over(self, now: float) -> bool:
        """Whether the next round may be dealt: no intermission, its time is up, or nobody
        is left to wait for."""
        return (
            self.intermission_until is None or now >= self.intermission_until or not self.awaited()
        )

    def deadline(self) -> float | None:
        """When the table's timer must fire: the turn's deadline, or the intermission's end."""
        return self.turn_deadline if self.turn_deadline is not None else self.intermission_until

    def evolve(self, **changes: object) -> TableRecord:
        return replace(self, **changes)

    @property
    def key(self) -> Key:
        return table_key(self.table_id)

    def changing(self) -> Item:
        """The attributes a versioned write sets (everything but the match's fixed facts and
        the connections, which presence writes on its own)."""
        item: Item = {
            "version": self.version,
            "status": self.status,
            "round": self.round,
            "totals_a": self.totals[0],
            "totals_b": self.totals[1],
            "tie_break": int(self.tie_break),
            "turn_started": self.turn_started,
            "updated_at": self.updated_at,
        }
        if self.state is not None:
            item["state"] = self.state
        if self.turn_deadline is not None:
            item["turn_deadline"] = self.turn_deadline
        if self.intermission_until is not None:
            item["intermission_until"] = self.intermission_until
        if self.timer_at is not None:
            item["timer_at"] = self.timer_at
        if self.timer_from is not None:
            item["timer_from"] = self.timer_from
        if self.continued:
            item["continued"] = _json(sorted(self.continued))
        if self.turn_moves:
            item["turn_moves"] = _json([move.as_json() for move in self.turn_moves])
        return item

    def to_item(self) -> Item:
        item: Item = {
            **self.key,
            "mode": self.mode.value,
            "variant": self.variant,
            "stake": self.stake,
            "seats": _json({str(seat): _seat_row(p) for seat, p in self.seats.items()}),
            **self.changing(),
        }
        for seat, conn in self.connections.items():
            if conn:
                item[conn_attribute(seat)] = conn
        return item

    @classmethod
    def from_item(cls, item: Item) -> TableRecord:
        seats = {int(seat): _seat_of(row) for seat, row in json.loads(_str(item["seats"])).items()}
        deadline = item.get("turn_deadline")
        until = item.get("intermission_until")
        state = item.get("state")
        return cls(
            table_id=_str(item["pk"]).split("#", 1)[1],
            mode=MatchMode(_str(item["mode"])),
            variant=variant_of(_str(item["variant"])),
            stake=_int(item["stake"]),
            seats=seats,
            version=_int(item["version"]),
            status=item["status"],  # type: ignore[arg-type]
            round=_int(item["round"]),
            totals=(_int(item["totals_a"]), _int(item["totals_b"])),
            tie_break=item.get("tie_break", 0) == 1,
            state=_state(state) if state is not None else None,
            connections={
                seat: _str(item[conn_attribute(seat)]) if conn_attribute(seat) in item else None
                for seat in SEATS
            },
            turn_started=_int(item["turn_started"]),
            turn_deadline=_float(deadline) if deadline is not None else None,
            intermission_until=_float(until) if until is not None else None,
            timer_at=_float(item["timer_at"]) if "timer_at" in item else None,
            timer_from=_float(item["timer_from"]) if "timer_from" in item else None,
            continued=frozenset(json.loads(_str(item["continued"])))
            if "continued" in item
            else frozenset(),
            updated_at=_float(item["updated_at"]),
            turn_moves=tuple(
                LogEntry.of_json(_int(item["round"]), move)
                for move in json.loads(_str(item["turn_moves"]))
            )
            if "turn_moves" in item
            else (),
        )


def _seat_row(player: SeatPlayer) -> list[str | None]:
    """A seat as the ``TABLE`` item keeps it: ``[player_id, name]``, a bot's with its level
    after them (its length marks the bot). Every move rewrites the item, so its seats are
    rows rather than objects that name each field four times."""
    row: list[str | None] = [player.player_id, player.name]
    return [*row, player.level] if player.bot else row


def _seat_of(row: list[str | None] | dict[str, Any]) -> SeatPlayer:
    """A seat from ``_seat_row``, or from the object an item written before held."""
    if isinstance(row, dict):
        return SeatPlayer.model_validate(row)
    player_id, name, *bot = row
    return SeatPlayer.model_validate(
        {"player_id": player_id, "name": name, "bot": bool(bot), "level": bot[0] if bot else None}
    )


def _state(stored: object) -> bytes:
    """The packed state of a ``TABLE`` item; an item written before the state was packed
    holds its JSON text (``shared_engine.dumps``), read once and packed here."""
    if isinstance(stored, str):
        return pack(loads(stored))
    assert isinstance(stored, bytes)
    return stored


class RoundRecord(Frozen):
    """A dealt round: its seed (revealed at the end) and the commitment shown at the start."""

    table_id: str
    round: int
    seed: str
    commitment: str
    dealer: int
    at: float
    outbox: tuple[Outbound, ...] = ()

    def to_item(self) -> Item:
        return {
            **table_key(self.table_id, constants.round_sk(self.round)),
            "seed": self.seed,
            "commitment": self.commitment,
            "dealer": self.dealer,
            "at": self.at,
            **outbox(self.outbox),
        }

    @classmethod
    def from_item(cls, item: Item) -> RoundRecord:
        _, round_number = _str(item["sk"]).split("#")
        return cls(
            table_id=_str(item["pk"]).split("#", 1)[1],
            round=int(round_number),
            seed=_str(item["seed"]),
            commitment=_str(item["commitment"]),
            dealer=_int(item["dealer"]),
            at=_float(item.get("at", 0)),
            outbox=tuple(outbox_events(item)),
        )


class LogEntry(Frozen):
    """One applied action of a round's log: who played what, when, and how every seat saw it."""

    round: int
    version: int
    """The engine's ply: the action's number within the round (from 1)."""
    seat: int
    action: dict[str, Any]
    auto: bool
    at: float
    public: dict[str, Any] | None = None
    """The move as every seat may learn it (``tableviews.public_move``) with the table
    version its write made: what a ``sync`` restores to the client's move log."""

    def as_json(self) -> dict[str, Any]:
        """The move inside a turn's ``LOG`` item or the ``TABLE`` item's ``turn_moves``: its
        public form names the seat, the auto flag and the action's own fields (the public
        move copies the wire form's ``type``, ``tile`` and ``melds``), so they are kept once."""
        assert self.public is not None, "a turn's moves are logged with their public form"
        return {"ply": self.version, "at": self.at, "public": self.public}

    @classmethod
    def of_json(cls, round_number: int, raw: dict[str, Any]) -> LogEntry:
        public = raw["public"]
        return cls(
            round=round_number,
            version=_int(raw["ply"]),
            seat=_int(public["seat"]),
            action={k: public[k] for k in WIRE_FIELDS if k in public},
            auto=bool(public["auto"]),
            at=_float(raw["at"]),
            public=public,
        )


WIRE_FIELDS = ("type", "tile", "melds")
"""What a move's wire form holds (``shared_engine.action_to_wire``), all of which its public
form repeats as they are (``tableviews.public_move``)."""


class LoggedTurn(Frozen):
    """A ``LOG`` item: the moves of one turn, written with the move that ended it (a draw,
    the melds, the discard), and the events its insert publishes.

    Its key is the ply of its last move, so the round's items sort in the order played.
    Items written one per move before turns were logged whole (``seat``, ``action``,
    ``auto``, ``at``, ``public`` as attributes) are read as a turn of one move.
    """

    round: int
    moves: tuple[LogEntry, ...]
    outbox: tuple[Outbound, ...] = ()
    repaired: bool = False
    """What follows the write was run again once, for a client that re-sent its last move."""

    @property
    def last(self) -> LogEntry:
        return self.moves[-1]

    def to_item(self, table_id: str) -> Item:
        return {
            **table_key(table_id, constants.log_sk(self.round, self.last.version)),
            "moves": _json([move.as_json() for move in self.moves]),
            **outbox(self.outbox),
        }

    @classmethod
    def from_item(cls, item: Item) -> LoggedTurn:
        _, round_number, ply = _str(item["sk"]).split("#")
        number = int(round_number)
        if "moves" in item:
            moves = tuple(LogEntry.of_json(number, m) for m in json.loads(_str(item["moves"])))
        else:
            moves = (
                LogEntry(
                    round=number,
                    version=int(ply),
                    seat=_int(item["seat"]),
                    action=json.loads(_str(item["action"])),
                    auto=bool(item["auto"]),
                    at=_float(item["at"]),
                    public=json.loads(_str(item["public"])) if "public" in item else None,
                ),
            )
        return cls(
            round=number,
            moves=moves,
            outbox=tuple(outbox_events(item)),
            repaired=item.get("repaired") is True,
        )


class ScoreRecord(Frozen):
    """A scored round: its result (``RoundScored``'s body) and the events it publishes."""

    table_id: str
    round: int
    result: dict[str, Any]
    outbox: tuple[Outbound, ...] = ()

    def to_item(self) -> Item:
        return {
            **table_key(self.table_id, constants.score_sk(self.round)),
            "result": _json(self.result),
            **outbox(self.outbox),
        }

    @classmethod
    def from_item(cls, item: Item) -> ScoreRecord:
        _, round_number = _str(item["sk"]).split("#")
        pk = _str(item["pk"])
        return cls(
            table_id=pk.split("#", 1)[1],
            round=int(round_number),
            result=json.loads(_str(item["result"])),
            outbox=tuple(outbox_events(item)),
        )

    @property
    def totals(self) -> tuple[int, int]:
        """The match totals after this round, team A's and team B's (``RoundScored.totals``)."""
        totals = self.result["totals"]
        return _int(totals["A"]), _int(totals["B"])


class ClosedRecord(Frozen):
    """A table an operator closed (``python -m ops close``): who, why, and the events its
    insert publishes (the relay publishes inserts only, so the close is a new item)."""

    table_id: str
    operator: str
    reason: str
    at: float
    outbox: tuple[Outbound, ...] = ()

    def to_item(self) -> Item:
        return {
            **table_key(self.table_id, constants.CLOSED_SK),
            "operator": self.operator,
            "reason": self.reason,
            "at": self.at,
            **outbox(self.outbox),
        }


# --- the audit ----------------------------------------------------------------------------


class AuditRecord(Frozen):
    """An operator's action as the audit keeps it: who (the caller as AWS authenticated
    them), when, what, why and what came of it, written once under the action id the
    console asked it with."""

    action_id: str
    at: float
    operator: str
    action: str
    target: str
    reason: str
    outcome: str
    """``applied``, ``done before`` or ``refused``."""
    changes: dict[str, Any]
    """What the plan said would change, and what the action's outcome added to it."""

    @property
    def stamp(self) -> str:
        return datetime.fromtimestamp(self.at, UTC).isoformat()

    @property
    def key(self) -> Key:
        return {"pk": f"AUDIT#{self.stamp[:10]}", "sk": f"{self.stamp}#{self.action_id}"}

    @staticmethod
    def day_pk(day: str) -> str:
        """The partition of a UTC day's records (``YYYY-MM-DD``)."""
        return f"AUDIT#{day}"

    @staticmethod
    def marker_key(action_id: str) -> Key:
        """The item that holds an action id once: a repeat of the id finds its record."""
        return {"pk": f"ACTION#{action_id}", "sk": "ACTION"}

    def marker(self) -> Item:
        key = self.key
        return {**self.marker_key(self.action_id), "day": key["pk"], "record": key["sk"]}

    @staticmethod
    def recorded_key(marker: Item) -> Key:
        """The key of the record an action id's marker names."""
        return {"pk": _str(marker["day"]), "sk": _str(marker["record"])}

    def to_item(self) -> Item:
        return {
            **self.key,
            "action_id": self.action_id,
            "at": self.stamp,
            "operator": self.operator,
            "action": self.action,
            "target": self.target,
            "reason": self.reason,
            "outcome": self.outcome,
            "changes": json.dumps(self.changes, sort_keys=True, default=str),
        }

    @classmethod
    def from_item(cls, item: Item) -> AuditRecord:
        return cls(
            # Records of before action ids end their key with an id of their own.
            action_id=_str(item.get("action_id", _str(item["sk"]).rpartition("#")[2])),
            at=datetime.fromisoformat(_str(item["at"])).timestamp(),
            operator=_str(item["operator"]),
            action=_str(item["action"]),
            target=_str(item["target"]),
            reason=_str(item["reason"]),
            outcome=_str(item["outcome"]),
            changes=json.loads(_str(item["changes"])),
        )


class TableHistory(Frozen):
    """Every record a table keeps of its play, each kind in key order."""

    rounds: tuple[RoundRecord, ...]
    turns: tuple[LoggedTurn, ...]
    scores: tuple[ScoreRecord, ...]
    playing: tuple[LogEntry, ...] = ()
    """The moves of the turn being played (``TableRecord.turn_moves``): logged when it ends."""

    @property
    def logs(self) -> tuple[LogEntry, ...]:
        """Every move played at the table, in order: the logged turns', then the turn's so far."""
        return (*(move for turn in self.turns for move in turn.moves), *self.playing)


# --- presence ---------------------------------------------------------------------------


class Player(Frozen):
    """A player's item: their current connection and where they are (queue, lobby, table).

    Its attribute names are spelled here only: the stores that write the item
    (presence, matchmaking) and their conditions name them through these constants.
    """

    PLAYER_ID: ClassVar[str] = "player_id"
    NAME: ClassVar[str] = "name"
    CONNECTION_ID: ClassVar[str] = "connection_id"
    SEEN_AT: ClassVar[str] = "seen_at"
    TABLE_ID: ClassVar[str] = "table_id"
    SEAT: ClassVar[str] = "seat"
    LOBBY: ClassVar[str] = "lobby"
    QUEUE_KEY: ClassVar[str] = "queue_key"
    QUEUE_SK: ClassVar[str] = "queue_sk"
    TICKET: ClassVar[str] = "ticket"
    TASK_TOKEN: ClassVar[str] = "task_token"
    QUEUED: ClassVar[tuple[str, ...]] = (QUEUE_KEY, QUEUE_SK, TICKET, TASK_TOKEN)
    """What a queue ticket holds while the player waits: it all goes when they move on."""
    SEATED: ClassVar[tuple[str, ...]] = (TABLE_ID, SEAT)
    """Where at a live table the player sits: it all goes when their match is over."""

    player_id: str
    name: str
    connection_id: str | None = None
    table_id: str | None = None
    seat: int | None = None
    lobby: str | None = None
    queue_key: str | None = None
    queue_sk: str | None = None
    ticket: str | None = None
    task_token: str | None = None
    """The state machine's task of the ticket, kept here once its ``try_match`` arrived
    (the player's own item, not the queue's shared partition): whoever ends the ticket
    answers it."""

    @classmethod
    def key_of(cls, player_id: str) -> Key:
        return {cls.PLAYER_ID: player_id}

    @classmethod
    def at_table(cls, table_id: str, seat: int) -> Item:
        """The attributes that seat the player at a live table."""
        return {cls.TABLE_ID: table_id, cls.SEAT: seat}

    @classmethod
    def from_item(cls, item: Item) -> Player:
        def text(name: str) -> str | None:
            value = item.get(name)
            return _str(value) if value is not None else None

        seat = item.get(cls.SEAT)
        return cls(
            player_id=_str(item[cls.PLAYER_ID]),
            name=text(cls.NAME) or "",
            connection_id=text(cls.CONNECTION_ID),
            table_id=text(cls.TABLE_ID),
            seat=_int(seat) if seat is not None else None,
            lobby=text(cls.LOBBY),
            queue_key=text(cls.QUEUE_KEY),
            queue_sk=text(cls.QUEUE_SK),
            ticket=text(cls.TICKET),
            task_token=text(cls.TASK_TOKEN),
        )


class Connection(Frozen):
    """A live WebSocket connection and whose it is; expires with its TTL."""

    connection_id: str
    player_id: str
    connected_at: float
    expires_at: int

    @staticmethod
    def key_of(connection_id: str) -> Key:
        return {"connection_id": connection_id}

    def to_item(self) -> Item:
        return {
            "connection_id": self.connection_id,
            "player_id": self.player_id,
            "connected_at": self.connected_at,
            "expires_at": self.expires_at,
        }


# --- matchmaking ------------------------------------------------------------------------


QUEUE_SHARDS = 8
"""Each queue's entries are spread over this many partition keys, by player, so that
no key takes more than a quarter of a partition's writes at the peak (one key took
93% of one: docs/capacity.md). The matcher reads every shard it needs. Changing the
count strands the entries waiting in shards that no longer exist until they expire."""


def shard_of(key: str, shards: int) -> int:
    """The key's shard of ``shards``: stable across processes and releases (unlike
    ``hash``), so a key is always found in the partition it was written to."""
    return zlib.crc32(key.encode()) % shards


def queue_shard(player_id: str) -> int:
    """The player's shard of any queue."""
    return shard_of(player_id, QUEUE_SHARDS)


def queue_pk(queue_key: str, shard: int) -> str:
    return f"QUEUE#{queue_key}#{shard}"


def queue_of(pk: str) -> str:
    """The queue a shard's partition key belongs to."""
    return pk.removeprefix("QUEUE#").rpartition("#")[0]


def lobby_key(code: str) -> Key:
    return {"pk": f"LOBBY#{code}", "sk": "LOBBY"}


class QueueTicket(Frozen):
    """A player waiting in a queue: the queue's entry, and the ticket the player item holds
    while they wait (each move on is conditional on it)."""

    queue_key: str
    sk: str
    player_id: str
    name: str
    ticket: str
    expires_at: float
    rating: float | None = None
    """The arena's entries: the player's rating (μ) in the arena as they queued, which the
    queue matches on; None when never rated (they are matched as a new player)."""

    @property
    def key(self) -> Key:
        return {"pk": queue_pk(self.queue_key, self.shard), "sk": self.sk}

    @property
    def queued_at(self) -> float:
        """When the player queued: the sort key starts with it, so the oldest sort first."""
        return float(self.sk.split("#", 1)[0])

    @property
    def shard(self) -> int:
        return queue_shard(self.player_id)

    def to_item(self, ttl: int) -> Item:
        return {
            **self.key,
            "player_id": self.player_id,
            "name": self.name,
            "ticket": self.ticket,
            "queue_expires_at": self.expires_at,
            "expires_at": int(self.expires_at) + ttl,
        } | ({} if self.rating is None else {"rating": self.rating})

    @classmethod
    def from_item(cls, queue_key: str, item: Item) -> QueueTicket:
        return cls(
            queue_key=queue_key,
            sk=_str(item["sk"]),
            player_id=_str(item["player_id"]),
            name=_str(item["name"]),
            ticket=_str(item["ticket"]),
            expires_at=_float(item["queue_expires_at"]),
            rating=_float(item["rating"]) if "rating" in item else None,
        )

    @classmethod
    def held_by(cls, player: Player) -> QueueTicket | None:
        """The ticket the player item holds, if the player is queued."""
        if player.queue_key is None or player.queue_sk is None or player.ticket is None:
            return None
        return cls(
            player.queue_key, player.queue_sk, player.player_id, player.name, player.ticket, 0.0
        )


def seat_attribute(seat: int) -> str:
    return f"s{seat}"


class Lobby(Frozen):
    """A friends table being formed behind its invite code."""

    code: str
    host: str
    mode: str
    variant: Variant
    status: str
    seats: dict[int, SeatPlayer]
    table_id: str | None
    rematch_of: str | None = None
    """The ended friends table whose four this lobby seats again, each in their seat."""
    held: dict[int, SeatPlayer] = field(default_factory=dict)
    """A rematch's seats kept for the ended match's players (taken or not): nobody
    else may take one; the host's bots may fill one still empty."""

    def awaiting(self) -> dict[int, SeatPlayer]:
        """The held seats not taken yet."""
        return {seat: p for seat, p in self.held.items() if seat not in self.seats}

    @property
    def key(self) -> Key:
        return lobby_key(self.code)

    def to_item(self, expires_at: int) -> Item:
        item: Item = {
            **self.key,
            "host": self.host,
            "mode": self.mode,
            "variant": self.variant,
            "status": self.status,
            "expires_at": expires_at,
        }
        item.update({seat_attribute(seat): p.model_dump_json() for seat, p in self.seats.items()})
        item.update({f"h{seat}": p.model_dump_json() for seat, p in self.held.items()})
        if self.rematch_of is not None:
            item["rematch_of"] = self.rematch_of
        if self.table_id is not None:
            item["table_id"] = self.table_id
        return item

    @classmethod
    def from_item(cls, item: Item) -> Lobby:
        def players(prefix: str) -> dict[int, SeatPlayer]:
            return {
                seat: SeatPlayer.model_validate(json.loads(_str(item[f"{prefix}{seat}"])))
                for seat in SEATS
                if f"{prefix}{seat}" in item
            }

        table_id = item.get("table_id")
        rematch_of = item.get("rematch_of")
        return cls(
            code=_str(item["pk"]).removeprefix("LOBBY#"),
            host=_str(item["host"]),
            mode=_str(item["mode"]),
            variant=variant_of(_str(item["variant"])),
            status=_str(item["status"]),
            seats=players("s"),
            table_id=_str(table_id) if table_id is not None else None,
            rematch_of=_str(rematch_of) if rematch_of is not None else None,
            held=players("h"),
        )
