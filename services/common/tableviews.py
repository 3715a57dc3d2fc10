"""Building and pushing each seat's own view of a table.

Every push is built per seat from ``player_view``: nothing addressed to one
seat is ever computed from another seat's data.
"""

from __future__ import annotations

from typing import Any

from services.common.adapters import Pusher
from services.common.events import is_practice
from services.common.protocol import (
    ErrorMessage,
    LastAction,
    MatchInfo,
    SeatInfo,
    TableView,
    ViewMessage,
)
from services.common.records import SEATS, TableRecord
from services.common.store import GameStore
from shared_engine import RoundState, loads, player_view


def view_message(
    table: TableRecord,
    state: RoundState,
    seat: int,
    last_action: dict[str, Any] | None = None,
    cid: str | None = None,
) -> ViewMessage:
    """``cid``: the correlation id of the seat's own message this view answers, if any."""
    return ViewMessage(
        cid=cid,
        table_id=table.table_id,
        version=table.version,
        seat=seat,
        seats={
            str(s): SeatInfo(player=table.seats[s], connected=table.connections.get(s) is not None)  # type: ignore[misc]
            for s in SEATS
        },
        match=MatchInfo(
            mode=table.mode,
            variant=table.variant,
            stake=table.stake,
            round=table.round,
            totals={"A": table.totals[0], "B": table.totals[1]},
            status=table.status,
            practice=is_practice(table.seats.values()),
        ),
        turn_deadline=table.turn_deadline,
        view=TableView.model_validate(player_view(state, seat).model_dump()),
        last_action=LastAction.model_validate(last_action) if last_action else None,
    )


def error_message(
    code: str,
    message: str,
    table_id: str | None = None,
    view: ViewMessage | None = None,
    cid: str | None = None,
) -> dict[str, Any]:
    """An error frame (``ErrorMessage`` leaves out the fields it has no value for);
    ``cid`` echoes the correlation id of the message refused."""
    error = ErrorMessage(code=code, message=message, table_id=table_id, view=view, cid=cid)  # type: ignore[arg-type]
    return error.model_dump(mode="json")


class ViewPusher:
    """Pushes to every connected seat; a gone connection frees its seat and never fails the move."""

    def __init__(self, pusher: Pusher, store: GameStore) -> None:
        self._pusher = pusher
        self._store = store

    def send(self, connection_id: str, message: dict[str, Any]) -> bool:
        return self._pusher.send(connection_id, message)

    def push_views(
        self,
        table: TableRecord,
        last_action: dict[str, Any] | None = None,
        state: RoundState | None = None,
        reply: tuple[int, str] | None = None,
    ) -> int:
        """Sends each connected seat its view; returns how many were delivered.

        ``state`` is ``table.state`` already parsed, if the caller has it. ``reply``
        is the seat whose own message produced this version and its correlation id:
        that seat's view answers it; the other seats' views are pushes.
        """
        if table.state is None:
            return 0
        if state is None:
            state = loads(table.state)
        delivered = 0
        failures: list[Exception] = []
        for seat in SEATS:
            connection = table.connections.get(seat)
            if connection is None:
                continue
            cid = reply[1] if reply is not None and reply[0] == seat else None
            message = view_message(table, state, seat, last_action, cid).model_dump(mode="json")
            if self._deliver(table, seat, connection, message, failures):
                delivered += 1
        _raise_first(failures)
        return delivered

    def _deliver(
        self,
        table: TableRecord,
        seat: int,
        connection: str,
        message: dict[str, Any],
        failures: list[Exception],
    ) -> bool:
        """One push; a gone connection frees the seat. Any other failure is kept, so the
        other seats are still served before the caller learns of it (and its retry
        repeats the pushes: see ``TurnService._stale`` and ``ScoreService``)."""
        try:
            sent = self._pusher.send(connection, message)
        except Exception as exc:
            failures.append(exc)
            return False
        if not sent:
            self._store.set_connection(table.table_id, seat, None, replacing=connection)
        return sent

    def push_all(self, table: TableRecord, message: dict[str, Any]) -> None:
        """The same public message (a round or match result) to every connected seat."""
        failures: list[Exception] = []
        for seat in SEATS:
            connection = table.connections.get(seat)
            if connection is not None:
                self._deliver(table, seat, connection, message, failures)
        _raise_first(failures)


def _raise_first(failures: list[Exception]) -> None:
    if failures:
        raise failures[0]
