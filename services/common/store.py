"""The DynamoDB adapter: every read and conditional write the game loop makes.

Low-level client calls with hand-written item maps: no resource layer and no
type serializer on the hot path, and every condition in one place. Why each
write is safe under retries and races is written down in docs/data-model.md.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from services.common import constants
from services.common.dynamo import (
    CONDITION_FAILED,
    TRANSACTION_CANCELLED,
    DynamoClient,
    cancelled_on,
    error_code,
    n,
    query_all,
    s,
)
from services.common.events import SeatPlayer
from services.common.records import SEATS, TableRecord
from shared_engine.match import MatchMode


class VersionConflict(Exception):
    """Another writer changed the table since it was read."""


class AlreadyDone(Exception):
    """A create-only write found its item: the work was done before (a duplicate)."""


class ExtraRefused(Exception):
    """A condition of the items that ride along with a move (``extra``) failed."""

    def __init__(self, cause: Exception, offset: int) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.offset = offset


@dataclass(frozen=True)
class Outbound:
    """An event to publish once the write that carries it has committed."""

    detail_type: str
    detail: dict[str, Any]
    source: str

    def as_json(self) -> dict[str, Any]:
        return {"detail-type": self.detail_type, "source": self.source, "detail": self.detail}


@dataclass(frozen=True)
class LogEntry:
    """One applied action, appended to the table's log with the write that applied it."""

    round: int
    version: int
    seat: int
    action: dict[str, Any]
    auto: bool
    at: float
    outbox: tuple[Outbound, ...] = ()


def _outbox(events: Sequence[Outbound]) -> dict[str, dict[str, str]]:
    return {"outbox": s(json.dumps([e.as_json() for e in events], separators=(",", ":")))}


def _conn_attr(seat: int) -> str:
    return f"conn{seat}"


class GameStore:
    """Tables, rounds, scores and logs in the games table."""

    def __init__(self, client: DynamoClient, table_name: str) -> None:
        self._db = client
        self._name = table_name

    def _key(self, table_id: str, sk: str) -> dict[str, dict[str, str]]:
        return {"pk": s(constants.table_pk(table_id)), "sk": s(sk)}

    # --- reads ------------------------------------------------------------------

    def get_table(self, table_id: str) -> TableRecord | None:
        item = self._db.get_item(
            TableName=self._name, Key=self._key(table_id, constants.TABLE_SK), ConsistentRead=True
        ).get("Item")
        return _table_from_item(item) if item else None

    def get_item(self, table_id: str, sk: str) -> dict[str, Any] | None:
        """A round, score or log item as stored (for audits and tests)."""
        item = self._db.get_item(
            TableName=self._name, Key=self._key(table_id, sk), ConsistentRead=True
        ).get("Item")
        return dict(item) if item else None

    def history(self, table_id: str) -> list[dict[str, Any]]:
        """Every item of a table, in key order: logs, rounds, scores, the table."""
        return query_all(
            self._db,
            TableName=self._name,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": s(constants.table_pk(table_id))},
            ConsistentRead=True,
        )

    # --- writes -----------------------------------------------------------------

    def new_table_item(self, table: TableRecord, outbox: Sequence[Outbound] = ()) -> dict[str, Any]:
        """A create-only transaction item for a new table, with the events it publishes."""
        item = _table_to_item(table)
        if outbox:
            item.update(_outbox(outbox))
        return {
            "Put": {
                "TableName": self._name,
                "Item": item,
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        }

    def create_table(self, table: TableRecord) -> None:
        """Create-only: forming the same table twice creates nothing."""
        try:
            self._db.put_item(**self.new_table_item(table)["Put"])
        except Exception as exc:
            if error_code(exc) == CONDITION_FAILED:
                raise AlreadyDone(table.table_id) from None
            raise

    def _table_update(
        self,
        old: TableRecord,
        new: TableRecord,
        condition: str,
        values: dict[str, Any],
        drop: Sequence[str] = (),
    ) -> dict[str, Any]:
        """The versioned update of the ``TABLE`` item; ``drop`` names attributes to remove."""
        sets = {
            "version": n(new.version),
            "#status": s(new.status),
            "#round": n(new.round),
            "totals_a": n(new.totals[0]),
            "totals_b": n(new.totals[1]),
            "tie_break": n(int(new.tie_break)),
            "turn_started": n(new.turn_started),
            "updated_at": n(new.updated_at),
        }
        names = {"#status": "status", "#round": "round"}
        expression = [f"{name} = :{name.lstrip('#')}" for name in sets]
        attr_values = {f":{name.lstrip('#')}": value for name, value in sets.items()}
        removes: list[str] = list(drop)
        if new.state is not None:
            expression.append("#state = :state")
            names["#state"] = "state"
            attr_values[":state"] = s(new.state)
        if new.turn_deadline is None:
            removes.append("turn_deadline")
        else:
            expression.append("turn_deadline = :deadline")
            attr_values[":deadline"] = n(new.turn_deadline)
        update = (
            "SET " + ", ".join(expression) + (" REMOVE " + ", ".join(removes) if removes else "")
        )
        attr_values.update(values)
        attr_values[":expected"] = n(old.version)
        return {
            "Update": {
                "TableName": self._name,
                "Key": self._key(old.table_id, constants.TABLE_SK),
                "UpdateExpression": update,
                "ConditionExpression": condition,
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": attr_values,
            }
        }

    def _put_once(self, table_id: str, sk: str, attributes: dict[str, Any]) -> dict[str, Any]:
        return {
            "Put": {
                "TableName": self._name,
                "Item": {**self._key(table_id, sk), **attributes},
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        }

    def _transact(
        self, items: list[dict[str, Any]], table_index: int, extra_from: int | None = None
    ) -> None:
        """Run a transaction and say which condition stopped it.

        The table's version condition means a conflict; a condition among the
        ``extra`` items (from ``extra_from`` on) is the caller's to explain; any
        other failed item is a create-only write that found its item: a duplicate.
        """
        try:
            self._db.transact_write_items(TransactItems=items)
        except Exception as exc:
            if error_code(exc) != TRANSACTION_CANCELLED:
                raise
            if cancelled_on(exc, table_index):
                raise VersionConflict() from None
            if extra_from is not None and any(
                cancelled_on(exc, i) for i in range(extra_from, len(items))
            ):
                raise ExtraRefused(exc, extra_from) from None
            raise AlreadyDone() from None

    def commit_actions(
        self,
        old: TableRecord,
        new: TableRecord,
        entries: Sequence[LogEntry],
        extra: Sequence[dict[str, Any]] = (),
    ) -> None:
        """The new state, conditional on the version read, with its log entries appended.

        ``extra`` are further transaction items that must commit with the move
        (the joker button's debit). Raises ``VersionConflict`` if the table moved on.
        """
        items = [self._table_update(old, new, "version = :expected", {})]
        for entry in entries:
            attributes: dict[str, Any] = {
                "seat": n(entry.seat),
                "action": s(json.dumps(entry.action, separators=(",", ":"))),
                "auto": {"BOOL": entry.auto},
                "at": n(entry.at),
            }
            if entry.outbox:
                attributes.update(_outbox(entry.outbox))
            items.append(
                self._put_once(
                    old.table_id, constants.log_sk(entry.round, entry.version), attributes
                )
            )
        offset = len(items)
        items.extend(extra)
        self._transact(items, 0, offset if extra else None)

    def start_round(
        self,
        *,
        old: TableRecord,
        new: TableRecord,
        seed: str,
        commitment: str,
        dealer: int,
        outbox: Sequence[Outbound],
    ) -> None:
        """Create round ``new.round`` once; raises ``AlreadyDone`` for a duplicate deal.

        The ``TABLE`` item sheds the ``outbox`` it was created with (``[TableFormed]``,
        already relayed from the insert's stream record: this deal is its consumer). Every
        move rewrites the whole item, and those 0.4 KB took it past 2 KB: 2 more write
        units per move.
        """
        round_item = {
            "seed": s(seed),
            "commitment": s(commitment),
            "dealer": n(dealer),
            "at": n(new.updated_at),
            **_outbox(outbox),
        }
        items = [
            self._put_once(old.table_id, constants.round_sk(new.round), round_item),
            self._table_update(
                old,
                new,
                "version = :expected AND #round = :previous AND #status = :playing",
                {":previous": n(new.round - 1), ":playing": s("playing")},
                drop=("outbox",),
            ),
        ]
        self._transact(items, 1)

    def record_score(
        self, old: TableRecord, new: TableRecord, result: dict[str, Any], outbox: Sequence[Outbound]
    ) -> None:
        """Score round ``old.round`` once; raises ``AlreadyDone`` for a duplicate."""
        items = [
            self._put_once(
                old.table_id,
                constants.score_sk(old.round),
                {"result": s(json.dumps(result, separators=(",", ":"))), **_outbox(outbox)},
            ),
            self._table_update(old, new, "version = :expected", {}),
        ]
        self._transact(items, 1)

    def close_table(
        self, old: TableRecord, new: TableRecord, note: dict[str, Any], outbox: Sequence[Outbound]
    ) -> None:
        """End a table from outside its game (an operator's ``close``): the table at the
        version read, and a create-only ``CLOSED`` item carrying ``note`` (who, why) and
        the events (a new item: the relay publishes inserts only). ``AlreadyDone`` if it
        was closed before, ``VersionConflict`` if the table moved on since it was read."""
        attributes = {key: s(str(value)) for key, value in note.items()}
        items = [
            self._put_once(old.table_id, CLOSED_SK, {**attributes, **_outbox(outbox)}),
            self._table_update(old, new, "version = :expected", {}),
        ]
        self._transact(items, 1)

    def set_connection(
        self, table_id: str, seat: int, connection_id: str | None, replacing: str | None = None
    ) -> bool:
        """Mark a seat (dis)connected; with ``replacing``, only if that connection still holds it.

        Not versioned: presence does not change the game, and a turn write sets
        other attributes, so the two never overwrite each other.
        """
        attr = _conn_attr(seat)
        kwargs: dict[str, Any] = {
            "TableName": self._name,
            "Key": self._key(table_id, constants.TABLE_SK),
            "ConditionExpression": "attribute_exists(pk)",
        }
        if connection_id is None:
            kwargs["UpdateExpression"] = f"REMOVE {attr}"
        else:
            kwargs["UpdateExpression"] = f"SET {attr} = :conn"
            kwargs["ExpressionAttributeValues"] = {":conn": s(connection_id)}
        if replacing is not None:
            kwargs["ConditionExpression"] += f" AND {attr} = :old"
            kwargs.setdefault("ExpressionAttributeValues", {})[":old"] = s(replacing)
        try:
            self._db.update_item(**kwargs)
        except Exception as exc:
            if error_code(exc) == CONDITION_FAILED:
                return False
            raise
        return True

    def claim_repair(self, table_id: str, sk: str) -> bool:
        """Mark a logged move repaired once: False if a replay of it repaired it before.

        A write only on the first replay of a move; every later one reads the mark with the
        log item it reads anyway (a MODIFY, which the outbox relay ignores).
        """
        try:
            self._db.update_item(
                TableName=self._name,
                Key=self._key(table_id, sk),
                UpdateExpression="SET repaired = :yes",
                ConditionExpression="attribute_exists(pk) AND attribute_not_exists(repaired)",
                ExpressionAttributeValues={":yes": {"BOOL": True}},
            )
        except Exception as exc:
            if error_code(exc) == CONDITION_FAILED:
                return False
            raise
        return True


CLOSED_SK = "CLOSED"


def _table_to_item(table: TableRecord) -> dict[str, Any]:
    item: dict[str, Any] = {
        "pk": s(constants.table_pk(table.table_id)),
        "sk": s(constants.TABLE_SK),
        "table_id": s(table.table_id),
        "mode": s(table.mode.value),
        "variant": s(table.variant),
        "stake": n(table.stake),
        "seats": s(json.dumps({str(seat): p.model_dump() for seat, p in table.seats.items()})),
        "version": n(table.version),
        "status": s(table.status),
        "round": n(table.round),
        "totals_a": n(table.totals[0]),
        "totals_b": n(table.totals[1]),
        "tie_break": n(int(table.tie_break)),
        "turn_started": n(table.turn_started),
        "updated_at": n(table.updated_at),
    }
    if table.state is not None:
        item["state"] = s(table.state)
    if table.turn_deadline is not None:
        item["turn_deadline"] = n(table.turn_deadline)
    for seat, conn in table.connections.items():
        if conn:
            item[_conn_attr(seat)] = s(conn)
    return item


def _table_from_item(item: dict[str, Any]) -> TableRecord:
    seats = {
        int(seat): SeatPlayer.model_validate(player)
        for seat, player in json.loads(item["seats"]["S"]).items()
    }
    return TableRecord(
        table_id=item["table_id"]["S"],
        mode=MatchMode(item["mode"]["S"]),
        variant=item["variant"]["S"],
        stake=int(item["stake"]["N"]),
        seats=seats,
        version=int(item["version"]["N"]),
        status=item["status"]["S"],
        round=int(item["round"]["N"]),
        totals=(int(item["totals_a"]["N"]), int(item["totals_b"]["N"])),
        tie_break=item.get("tie_break", {"N": "0"})["N"] == "1",
        state=item["state"]["S"] if "state" in item else None,
        connections={
            seat: item[_conn_attr(seat)]["S"] if _conn_attr(seat) in item else None
            for seat in SEATS
        },
        turn_started=int(item["turn_started"]["N"]),
        turn_deadline=float(item["turn_deadline"]["N"]) if "turn_deadline" in item else None,
        updated_at=float(item["updated_at"]["N"]),
    )
