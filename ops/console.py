"""What the operators' console answers and does, whoever prints it.

Reads: a player (balance, last matches and their ledger entries, where they are),
a match (seats, rounds, every move, the replay's verdict, a seat's view after any
move) and what is stuck (overdue turns, old tickets, dead letters). Actions:
``void``, ``close``, ``credit`` and ``kick``; each one is planned first (the
plan says what would change, for the operator to confirm), is idempotent (a
second run finds it done and changes nothing) and is recorded in the
append-only audit table, applied or not. Ledger changes are postings like any
other: create-only entries beside their balances, never a deleted entry.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from ops.replay import Verdict, rounds_of, seat_view, verify
from ops.stage import Stage
from services.common import constants
from services.common.adapters import ApiGatewayPusher
from services.common.afterwrite import AfterWrite
from services.common.dynamo import error_code, query_all, s
from services.common.dynamo_storage import DynamoStorage, from_item
from services.common.events import TableAborted
from services.common.ledger import (
    Balance,
    Ledger,
    Posting,
    closing,
    escrow_account,
    match_account,
)
from services.common.records import (
    ClosedRecord,
    Connection,
    Outbound,
    Player,
    QueueTicket,
    TableRecord,
    queue_of,
)
from services.common.store import GameStore
from services.common.tableviews import ViewPusher
from services.common.unit_of_work import AlreadyDone, Committed, Item, Short, TableKind
from shared_engine.match import TEAM_NAMES, winner_of

SUPPORT_ACCOUNT = "house:support"
"""Where support credits come from: every credit is a transfer, so the book stays zero-sum."""
RECENT_MATCHES = 10
STORED: dict[TableKind, constants.TableSpec] = {
    "games": constants.GAMES,
    "ledger": constants.LEDGER,
    "players": constants.PLAYERS,
    "connections": constants.CONNECTIONS,
    "matchmaking": constants.MATCHMAKING,
}
"""The tables the console reads and writes through the services' own records."""
TURN_GRACE_SECONDS = 120
"""A turn's timer fires within the minute after its deadline (EventBridge Scheduler); past
this it is overdue, not late."""
TICKET_GRACE_SECONDS = 120


@dataclass(frozen=True)
class CreditLimit:
    """The most one ``credit`` may move (either way): larger amounts go through the
    ledger's own review, not the console."""

    points: int = 10_000
    jokers: int = 5


class ActionRefused(Exception):
    """The action cannot be done as asked; nothing was written (but the audit record)."""


@dataclass
class Plan:
    """What an action would change; ``apply`` changes it (once)."""

    action: Literal["void", "close", "credit", "kick"]
    target: str
    reason: str
    changes: dict[str, Any]
    done_before: bool
    """Nothing to do: a previous run did it (the plan then changes nothing)."""
    apply: Callable[[], dict[str, Any]] = field(repr=False)


class Console:
    def __init__(
        self,
        stage: Stage,
        clock: Callable[[], float] = time.time,
        credit_limit: CreditLimit | None = None,
    ) -> None:
        self._stage = stage
        self._db = stage.client("dynamodb")
        self._clock = clock
        self._limit = credit_limit or CreditLimit()
        self._storage = DynamoStorage(
            self._db, {kind: stage.table(spec) for kind, spec in STORED.items()}
        )
        self._games = GameStore(self._storage)
        self._ledger = Ledger(self._storage)

    # --- reads -----------------------------------------------------------------------

    def find_players(self, query: str) -> list[str]:
        """Player ids for an id or a name (names are not unique: every match)."""
        if self._player(query) is not None:
            return [query]
        page = query_all(
            self._db,
            TableName=self._stage.table(constants.PLAYERS),
            IndexName=constants.PLAYERS_BY_NAME,
            KeyConditionExpression="#name = :name",
            ExpressionAttributeNames={"#name": "name"},
            ExpressionAttributeValues={":name": s(query)},
        )
        return sorted({str(from_item(item)["player_id"]) for item in page})

    def player(self, player_id: str) -> dict[str, Any]:
        """The account, where the player is now, and their last matches with the entries."""
        found = self._player(player_id)
        if found is None:
            raise ActionRefused(f"no player {player_id!r}")
        balance = self._ledger.balance(player_id)
        entries = [_entry(e) for e in self._ledger.entries(player_id)]
        by_match: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for entry in entries:
            if entry["match"]:
                by_match[entry["match"]].append(entry)
        if found.table_id:
            by_match.setdefault(found.table_id, [])
        latest = sorted(
            by_match, key=lambda m: max((e["at"] for e in by_match[m]), default=1e18), reverse=True
        )
        matches = []
        for table_id in latest[:RECENT_MATCHES]:
            table = self._games.get_table(table_id)
            matches.append(
                {
                    "table_id": table_id,
                    **(_match_summary(table, player_id) if table else {"status": "unknown"}),
                    "entries": sorted(by_match[table_id], key=lambda e: e["at"]),
                }
            )
        return {
            "player_id": player_id,
            "name": found.name,
            "balance": {"points": balance.points, "jokers": balance.jokers},
            "connection": self._connection(found.connection_id),
            "place": _place(found),
            "matches": matches,
            "other_entries": [e for e in entries if not e["match"]],
        }

    def match(
        self,
        table_id: str,
        *,
        seat: int | None = None,
        after: int | None = None,
        round_number: int | None = None,
    ) -> dict[str, Any]:
        """Everything about a table, the replay's verdict, and a seat's view if asked."""
        table = self._table(table_id)
        played = rounds_of(self._games.records(table_id))
        verdict = verify(
            played,
            variant=table.variant,
            live_state=table.state,
            live_round=table.round,
            totals=table.totals,
        )
        names = {seat_no: p.name for seat_no, p in table.seats.items()}
        report: dict[str, Any] = {
            **_match_summary(table, None),
            "table_id": table_id,
            "seats": {str(k): p.model_dump() for k, p in sorted(table.seats.items())},
            "version": table.version,
            "turn_deadline": table.turn_deadline,
            "rounds": [
                {
                    "round": rnd.number,
                    "dealer": rnd.dealer,
                    "commitment": rnd.commitment,
                    # While the round is played its seed is its hands: shown once scored.
                    "seed": rnd.seed if rnd.scored is not None else None,
                    "scores": rnd.scored["scores"] if rnd.scored else None,
                    "totals": rnd.scored["totals"] if rnd.scored else None,
                    "moves": [
                        {
                            "n": n,
                            "version": m.version,
                            "seat": m.seat,
                            "player": names.get(m.seat),
                            "action": m.action,
                            "auto": m.auto,
                            "at": m.at,
                        }
                        for n, m in enumerate(rnd.moves, start=1)
                    ],
                }
                for rnd in played
            ],
            "replay": _verdict(verdict),
        }
        if seat is not None:
            number = (
                round_number if round_number is not None else (played[-1].number if played else 1)
            )
            moves = (
                after
                if after is not None
                else len(next((r.moves for r in played if r.number == number), ()))
            )
            view = seat_view(
                played, variant=table.variant, round_number=number, moves=moves, seat=seat
            )
            report["seat_view"] = {
                "seat": seat,
                "round": number,
                "after": moves,
                **view.model_dump(),
            }
        return report

    def stuck(self) -> dict[str, Any]:
        """Tables whose turn is overdue, tickets past their time, and the dead letters."""
        now = self._clock()
        tables = []
        for item in self._scan(
            constants.GAMES,
            "sk = :table AND #status = :playing",
            {":table": s(constants.TABLE_SK), ":playing": s("playing")},
            {"#status": "status"},
        ):
            table = TableRecord.from_item(item)
            deadline = table.turn_deadline
            if deadline is not None and deadline < now - TURN_GRACE_SECONDS:
                tables.append(
                    {
                        "table_id": table.table_id,
                        "overdue_seconds": round(now - deadline),
                        "round": table.round,
                        "version": table.version,
                    }
                )
        tickets = []
        for item in self._scan(
            constants.MATCHMAKING, "begins_with(pk, :queue)", {":queue": s("QUEUE#")}
        ):
            ticket = QueueTicket.from_item(queue_of(str(item["pk"])), item)
            if ticket.expires_at < now - TICKET_GRACE_SECONDS:
                tickets.append(
                    {
                        "queue": ticket.queue_key,
                        "player_id": ticket.player_id,
                        "overdue_seconds": round(now - ticket.expires_at),
                    }
                )
        return {
            "tables": sorted(tables, key=lambda t: -t["overdue_seconds"]),
            "tickets": sorted(tickets, key=lambda t: -t["overdue_seconds"]),
            "dead_letters": self._dead_letters(),
        }

    def audit(self, day: str | None = None) -> list[dict[str, Any]]:
        """The day's audit records (UTC), oldest first."""
        day = day or datetime.fromtimestamp(self._clock(), UTC).strftime("%Y-%m-%d")
        items = query_all(
            self._db,
            TableName=self._stage.table(constants.AUDIT),
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": s(f"AUDIT#{day}")},
            ConsistentRead=True,
        )
        fields = ("at", "operator", "action", "target", "reason", "outcome")
        return [
            {
                **{name: str(record[name]) for name in fields},
                "changes": json.loads(str(record["changes"])),
            }
            for record in map(from_item, items)
        ]

    # --- actions -----------------------------------------------------------------------

    def plan_void(self, table_id: str, reason: str) -> Plan:
        """Reverse every entry the match booked (stakes in escrow, a settlement, a payout,
        a refund, a joker), each with a compensating entry; mark the match closed so no
        later settlement or refund books; end it if it is still played."""
        table = self._table(table_id)
        accounts = [p.player_id for p in table.seats.values() if not p.bot]
        accounts += [escrow_account(table_id), match_account(table_id)]
        booked = [
            (account, entry)
            for account in accounts
            for entry in map(_entry, self._ledger.entries(account))
            if entry["match"] == table_id
        ]
        marker = f"{table_id}:void"
        done = any(a == match_account(table_id) and e["key"] == marker for a, e in booked)
        postings = [
            Posting(
                account,
                f"void:{entry['key']}",
                "void",
                points=-entry["points"],
                jokers=-entry["jokers"],
                match=table_id,
            )
            for account, entry in booked
            if entry["points"] or entry["jokers"]
        ]
        postings.append(Posting(match_account(table_id), marker, "void", match=table_id))
        closed = any(
            a == match_account(table_id) and e["key"] == f"{table_id}:closed" for a, e in booked
        )
        if not closed:
            postings.append(closing(table_id, "void"))
        changes: dict[str, int] = defaultdict(int)
        for p in postings:
            changes[p.account] += p.points
        plan_changes = {
            "points": {a: v for a, v in changes.items() if v},
            "jokers": {p.account: -p.jokers for p in postings if p.jokers},
            "reversed_entries": len([p for p in postings if p.key.startswith("void:")]),
            "sum": sum(changes.values()),
            "ends_the_match": table.status == "playing",
        }

        def apply() -> dict[str, Any]:
            booked = self._ledger.book(postings, self._clock())
            if isinstance(booked, AlreadyDone):
                return {"outcome": "done before"}
            if not isinstance(booked, Committed):
                raise ActionRefused(f"the ledger refused: {booked}")
            if table.status == "playing":
                self._close(table, f"voided: {reason}")
            return {"outcome": "applied"}

        return Plan("void", table_id, reason, plan_changes, done, apply)

    def plan_close(self, table_id: str, reason: str) -> Plan:
        """End a table still played: TableAborted, as when every player left, so its arena
        stakes are refunded and its players freed by the services that do so."""
        table = self._table(table_id)
        done = table.status != "playing"

        def apply() -> dict[str, Any]:
            current = self._table(table_id)
            if current.status != "playing":
                return {"outcome": "done before"}
            self._close(current, reason)
            return {"outcome": "applied"}

        changes = {
            "status": f"{table.status} -> aborted" if not done else table.status,
            "players": [p.player_id for p in table.seats.values() if not p.bot],
        }
        return Plan("close", table_id, reason, changes, done, apply)

    def plan_credit(
        self, player_id: str, points: int, jokers: int, reason: str, key: str | None = None
    ) -> Plan:
        """Move points or jokers between support's account and a player's, within the
        limit; ``key`` (by default one made of the request) makes it happen once."""
        if self._player(player_id) is None or ":" in player_id:
            raise ActionRefused(f"{player_id!r} is not a player's account")
        if not points and not jokers:
            raise ActionRefused("nothing to credit: give --points or --jokers")
        if abs(points) > self._limit.points or abs(jokers) > self._limit.jokers:
            raise ActionRefused(
                f"over the limit of {self._limit.points} points and {self._limit.jokers} "
                "jokers per credit"
            )
        key = (
            key
            or hashlib.sha256(f"{player_id}|{points}|{jokers}|{reason}".encode()).hexdigest()[:16]
        )
        postings = [
            Posting(
                player_id,
                f"credit:{key}",
                "credit",
                points=points,
                jokers=jokers,
                guarded=points < 0 or jokers < 0,
            ),
            Posting(
                SUPPORT_ACCOUNT,
                f"credit:{key}:{player_id}",
                "credit",
                points=-points,
                jokers=-jokers,
            ),
        ]
        done = any(
            e["key"] == f"credit:{key}" for e in map(_entry, self._ledger.entries(player_id))
        )

        def apply() -> dict[str, Any]:
            booked = self._ledger.book(postings, self._clock())
            if isinstance(booked, AlreadyDone):
                return {"outcome": "done before"}
            if isinstance(booked, Short):
                raise ActionRefused(
                    f"the balance of {', '.join(booked.accounts)} does not cover it"
                )
            if not isinstance(booked, Committed):
                raise ActionRefused(f"the ledger refused: {booked}")
            balance = self._ledger.balance(player_id)
            return {
                "outcome": "applied",
                "balance": {"points": balance.points, "jokers": balance.jokers},
            }

        changes = {"points": points, "jokers": jokers, "key": key, "from": SUPPORT_ACCOUNT}
        return Plan("credit", player_id, reason, changes, done, apply)

    def plan_kick(self, connection_id: str, reason: str) -> Plan:
        """Close a connection, as API Gateway does when it drops one: ``$disconnect`` runs."""
        item = self._storage.get("connections", Connection.key_of(connection_id))
        player = str(item["player_id"]) if item else None

        def apply() -> dict[str, Any]:
            try:
                self._stage.connections().delete_connection(ConnectionId=connection_id)
            except Exception as exc:
                if error_code(exc) in ("GoneException", "410"):
                    return {"outcome": "done before"}
                raise
            return {"outcome": "applied"}

        return Plan("kick", connection_id, reason, {"player_id": player}, item is None, apply)

    def carry_out(self, plan: Plan) -> dict[str, Any]:
        """Apply a confirmed plan and record it; the record is written whatever happens."""
        if not plan.reason.strip():
            raise ActionRefused("every action needs a --reason")
        outcome: dict[str, Any]
        try:
            outcome = plan.apply()
        except ActionRefused as exc:
            outcome = {"outcome": "refused", "why": str(exc)}
        self._record(plan, outcome)
        if outcome["outcome"] == "refused":
            raise ActionRefused(outcome["why"])
        return {"action": plan.action, "target": plan.target, **outcome, "changes": plan.changes}

    # --- helpers ---------------------------------------------------------------------

    def _close(self, table: TableRecord, reason: str) -> None:
        aborted = TableAborted(
            table_id=table.table_id,
            mode=table.mode,
            stake=table.stake,
            seats={str(k): p for k, p in table.seats.items()},  # type: ignore[misc]
            reason=f"closed by an operator: {reason}",
        )
        new = table.evolve(
            status="aborted",
            version=table.version + 1,
            turn_deadline=None,
            updated_at=self._clock(),
        )
        closed = ClosedRecord(
            table_id=table.table_id,
            operator=self._stage.operator,
            reason=reason,
            at=self._clock(),
            outbox=(Outbound.of(aborted, emitter="ops"),),
        )
        if not isinstance(self._games.close_table(table, new, closed), Committed):
            raise ActionRefused("the table changed meanwhile: look again and retry")
        if self._stage.connections_url is not None:
            # The services' own step after a write: views to the seats, gone seats freed.
            views = ViewPusher(ApiGatewayPusher(self._stage.connections()))
            AfterWrite(self._games, views, None)(new)

    def _record(self, plan: Plan, outcome: dict[str, Any]) -> None:
        now = self._clock()
        stamp = datetime.fromtimestamp(now, UTC)
        self._db.put_item(
            TableName=self._stage.table(constants.AUDIT),
            Item={
                "pk": s(f"AUDIT#{stamp.strftime('%Y-%m-%d')}"),
                "sk": s(f"{stamp.isoformat()}#{uuid.uuid4().hex[:12]}"),
                "at": s(stamp.isoformat()),
                "operator": s(self._stage.operator),
                "action": s(plan.action),
                "target": s(plan.target),
                "reason": s(plan.reason),
                "outcome": s(outcome["outcome"]),
                "changes": s(json.dumps({**plan.changes, **outcome}, sort_keys=True, default=str)),
            },
            ConditionExpression="attribute_not_exists(pk)",
        )

    def _table(self, table_id: str) -> TableRecord:
        table = self._games.get_table(table_id)
        if table is None:
            raise ActionRefused(f"no table {table_id!r}")
        return table

    def _player(self, player_id: str) -> Player | None:
        item = self._storage.get("players", Player.key_of(player_id))
        return Player.from_item(item) if item else None

    def _connection(self, connection_id: str | None) -> dict[str, Any] | None:
        if connection_id is None:
            return None
        item = self._storage.get("connections", Connection.key_of(connection_id))
        return {"connection_id": connection_id, "open": item is not None}

    def _scan(
        self,
        spec: constants.TableSpec,
        condition: str,
        values: dict[str, Any],
        names: dict[str, str] | None = None,
    ) -> list[Item]:
        """A filtered scan, every page: the console's only wide read, for ``stuck``."""
        kwargs: dict[str, Any] = {
            "TableName": self._stage.table(spec),
            "FilterExpression": condition,
            "ExpressionAttributeValues": values,
            **({"ExpressionAttributeNames": names} if names else {}),
        }
        found: list[Item] = []
        while True:
            page = self._db.scan(**kwargs)
            found.extend(map(from_item, page.get("Items", [])))
            if "LastEvaluatedKey" not in page:
                return found
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def _dead_letters(self) -> list[dict[str, Any]]:
        sqs = self._stage.client("sqs") if self._stage.dead_letters else None
        found = []
        for consumer, url in sorted(self._stage.dead_letters.items()):
            assert sqs is not None
            count = int(
                sqs.get_queue_attributes(
                    QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
                )["Attributes"]["ApproximateNumberOfMessages"]
            )
            # A look, not a take: visible again at once, and no consumer reads these queues.
            messages = sqs.receive_message(
                QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=0
            ).get("Messages", [])
            found.append(
                {
                    "queue": consumer,
                    "messages": count,
                    "tables": sorted({t for m in messages if (t := _table_of(m.get("Body", "")))}),
                }
            )
        return found


def _entry(item: Item) -> dict[str, Any]:
    """A ledger entry as the console shows it (``Posting.entry`` wrote it)."""
    match = item.get("match")
    return {
        "key": str(item["sk"]).removeprefix("ENTRY#"),
        "purpose": str(item.get("purpose", "")),
        "points": int(item.get("points", 0)),
        "jokers": int(item.get("jokers", 0)),
        "match": str(match) if match is not None else None,
        "at": float(item.get("at", 0)),
    }


def _place(player: Player) -> dict[str, Any]:
    if player.table_id is not None:
        return {"at": "table", "table_id": player.table_id, "seat": player.seat}
    if player.lobby is not None:
        return {"at": "lobby", "code": player.lobby}
    if player.queue_key is not None:
        return {"at": "queue", "queue": player.queue_key}
    return {"at": "nowhere"}


def _match_summary(table: TableRecord, player_id: str | None) -> dict[str, Any]:
    totals = {"A": table.totals[0], "B": table.totals[1]}
    winner = None
    if table.status == "finished":
        team = winner_of(table.totals)
        winner = None if team is None else TEAM_NAMES[team]
    summary: dict[str, Any] = {
        "mode": table.mode.value,
        "variant": table.variant,
        "stake": table.stake,
        "status": table.status,
        "round": table.round,
        "totals": totals,
        "winner": winner,
    }
    if player_id is not None:
        summary["seat"] = table.seat_of(player_id)
    return summary


def _verdict(verdict: Verdict) -> dict[str, Any]:
    return {
        "verified": verdict.verified,
        "rounds": verdict.rounds,
        "moves": verdict.moves,
        "mismatches": verdict.mismatches,
    }


def _table_of(body: str) -> str | None:
    """The table a dead letter belongs to: an event's ``detail.table_id``, a task's ticket."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict):
        return None
    detail = message.get("detail") if isinstance(message.get("detail"), dict) else message
    table = detail.get("table_id") if isinstance(detail, dict) else None
    return table if isinstance(table, str) else None


__all__ = ["ActionRefused", "Balance", "Console", "CreditLimit", "Plan"]
