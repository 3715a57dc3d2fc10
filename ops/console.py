"""What the operators' console answers and asks for, whoever prints it.

Reads: a player (balance, last matches and their ledger entries, where they are),
a match (seats, rounds, every move, the replay's verdict, a seat's view after any
move), what is stuck (overdue turns, old tickets, dead letters) and the audit.
Actions (``void``, ``close``, ``credit``, ``kick``) are the operators' function's
(``services/ops``): the console asks it for a plan (what would change, for the
operator to confirm), then sends the confirmed plan to apply, once (a second run
finds it done and changes nothing); the function records each in the append-only
audit, applied or not. The console itself writes nothing.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ops.actions import ActionRefused, OperatorFunction
from ops.stage import Stage
from services.common import constants
from services.common.dynamo import query_all, s
from services.common.dynamo_storage import DynamoStorage, from_item
from services.common.ledger import Entry, Ledger
from services.common.presence import PresenceStore
from services.common.profiles import MatchEntry, Profile, ProfileStore
from services.common.protocol import ProfileMessage
from services.common.records import (
    AuditRecord,
    Connection,
    Player,
    QueueTicket,
    TableRecord,
    queue_of,
)
from services.common.replay import Verdict, rounds_of, seat_view, verify
from services.common.store import GameStore
from services.common.unit_of_work import Item, TableKind
from shared_engine.match import TEAM_NAMES, winner_of

RECENT_MATCHES = 10
STORED: dict[TableKind, constants.TableSpec] = {
    "games": constants.GAMES,
    "ledger": constants.LEDGER,
    "players": constants.PLAYERS,
    "connections": constants.CONNECTIONS,
    "matchmaking": constants.MATCHMAKING,
    "audit": constants.AUDIT,
    "profiles": constants.PROFILES,
}
"""The tables the console reads through the services' own records."""
TURN_GRACE_SECONDS = 120
"""A turn's timer fires within the minute after its deadline (EventBridge Scheduler); past
this it is overdue, not late."""
TICKET_GRACE_SECONDS = 120


@dataclass(frozen=True)
class Plan:
    """What an action would change, as the function planned it; ``carry_out`` applies it."""

    action: str
    target: str
    reason: str
    changes: dict[str, Any]
    done_before: bool
    """Nothing to do: a previous run did it (the plan then changes nothing)."""
    request: dict[str, Any]
    """The action as asked: applied as it was planned."""
    action_id: str
    """The id this plan is applied under: applying it again repeats the first answer."""


class Console:
    def __init__(self, stage: Stage, clock: Callable[[], float] = time.time) -> None:
        self._stage = stage
        self._db = stage.client("dynamodb")
        self._clock = clock
        self._storage = DynamoStorage(
            self._db, {kind: stage.table(spec) for kind, spec in STORED.items()}
        )
        self._games = GameStore(self._storage)
        self._ledger = Ledger(self._storage)
        self._profiles = ProfileStore(self._storage)
        self._function = OperatorFunction(stage)

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
        """The account, where the player is now, their rating and stats, and their last
        matches (from their history, practice ones too) with the entries each booked."""
        found = self._player(player_id)
        if found is None:
            raise ActionRefused("no_player", f"no player {player_id!r}")
        balance = self._ledger.balance(player_id)
        entries = [_entry(e) for e in self._ledger.entries(player_id)]
        history = self._profiles.history(player_id)
        ended = {match.table_id: match.ended_at for match in history}
        by_match: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for table_id in ended:
            by_match[table_id] = []
        for entry in entries:
            if entry["match"]:
                by_match[entry["match"]].append(entry)
        if found.table_id:
            by_match.setdefault(found.table_id, [])

        def last_change(match: str) -> float:
            return max((e["at"] for e in by_match[match]), default=ended.get(match, 1e18))

        matches = []
        for table_id in sorted(by_match, key=last_change, reverse=True)[:RECENT_MATCHES]:
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
            **_profile(self._profiles.profile(player_id), history),
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
        table_id = table.table_id
        played = rounds_of(self._games.history.records(table_id))
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
        return [
            {
                "at": record.stamp,
                "operator": record.operator,
                "action": record.action,
                "target": record.target,
                "reason": record.reason,
                "outcome": record.outcome,
                "changes": record.changes,
            }
            for record in map(
                AuditRecord.from_item, self._storage.query("audit", AuditRecord.day_pk(day))
            )
        ]

    # --- actions -----------------------------------------------------------------------

    def plan_void(self, table_id: str, reason: str) -> Plan:
        """Reverse every entry the match booked and close it in the ledger; end it if it is
        still played."""
        return self._plan({"action": "void", "table_id": table_id, "reason": reason})

    def plan_close(self, table_id: str, reason: str) -> Plan:
        """End a table still played, at the version the plan read."""
        return self._plan({"action": "close", "table_id": table_id, "reason": reason})

    def plan_credit(
        self, player_id: str, points: int, jokers: int, reason: str, key: str | None = None
    ) -> Plan:
        """Move points or jokers between support's account and a player's, within the limit;
        ``key`` (by default one made of the request) makes it happen once."""
        request = {
            "action": "credit",
            "player_id": player_id,
            "points": points,
            "jokers": jokers,
            "reason": reason,
            **({"key": key} if key else {}),
        }
        return self._plan(request)

    def plan_kick(self, connection_id: str, reason: str) -> Plan:
        """Close a connection, as API Gateway does when it drops one: ``$disconnect`` runs."""
        return self._plan({"action": "kick", "connection_id": connection_id, "reason": reason})

    def carry_out(self, plan: Plan) -> dict[str, Any]:
        """Apply a confirmed plan, once: the function records it whatever happens, and a
        repeat of this plan's request answers what was recorded."""
        return self._function.call(
            "/apply",
            {"request": plan.request, "action_id": plan.action_id, "confirmed": plan.changes},
        )

    def _plan(self, request: dict[str, Any]) -> Plan:
        planned = self._function.call("/plan", request)
        return Plan(
            action=planned["action"],
            target=planned["target"],
            reason=planned["reason"],
            changes=planned["changes"],
            done_before=planned["done_before"],
            request=request,
            action_id=uuid.uuid4().hex,
        )

    # --- helpers ---------------------------------------------------------------------

    def _table(self, table_id: str) -> TableRecord:
        """The table with this id, or with the only id this starts (the short id the local
        console prints): a scan, which a full id spares."""
        table = self._games.get_table(table_id)
        if table is not None:
            return table
        found = sorted(
            str(item["pk"]).removeprefix("TABLE#")
            for item in self._scan(
                constants.GAMES,
                "sk = :table AND begins_with(pk, :id)",
                {":table": s(constants.TABLE_SK), ":id": s(constants.table_pk(table_id))},
            )
        )
        if len(found) > 1:
            raise ActionRefused("ambiguous_table", f"{table_id!r} starts {', '.join(found)}")
        if not found:
            raise ActionRefused("no_table", f"no table {table_id!r}")
        return self._table(found[0])

    def _player(self, player_id: str) -> Player | None:
        return PresenceStore(self._storage).get_player(player_id)

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
        """A filtered scan, every page: the console's only wide reads, for ``stuck`` and a
        short table id."""
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
    """A ledger entry as the console shows it."""
    entry = Entry.from_item(item)
    return {
        "key": entry.key,
        "purpose": entry.purpose,
        "points": entry.points,
        "jokers": entry.jokers,
        "match": entry.match,
        "at": entry.at,
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


__all__ = ["ActionRefused", "Console", "Plan"]


def _profile(profile: Profile | None, history: list[MatchEntry]) -> dict[str, Any]:
    """A player's rating, its history (each rated match's before and after) and stats, as
    the player's own ``profile`` answer shows them."""
    shown = ProfileMessage.of(profile, history).model_dump(mode="json")
    return {
        "rated_matches": shown["rated_matches"],
        "rating_history": [
            {
                "table_id": match["table_id"],
                "ended_at": match["ended_at"],
                "mode": match["mode"],
                "before": match["rating_before"],
                "after": match["rating_after"],
            }
            for match in shown["matches"]
            if match["rating_after"] is not None
        ],
        "stats": shown["stats"],
    }
