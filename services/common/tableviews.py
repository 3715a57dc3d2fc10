"""Building and pushing each seat's own view of a table.

Every push is built per seat from ``player_view``: nothing addressed to one
seat is ever computed from another seat's data.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

from services.common.adapters import Pusher
from services.common.events import RoundScored, is_friends_table, is_practice
from services.common.protocol import (
    ErrorMessage,
    Intermission,
    LastAction,
    LoggedMove,
    MatchInfo,
    RoundResultMessage,
    SeatInfo,
    TableView,
    ViewMessage,
)
from services.common.records import SEATS, TableRecord
from shared_engine import Action, RoundState, action_to_wire, player_view, unpack
from shared_engine.state import team_of
from shared_engine.tiles import NAMES


def view_message(
    table: TableRecord,
    state: RoundState,
    seat: int,
    last_action: dict[str, Any] | None = None,
    cid: str | None = None,
    *,
    moves: Sequence[dict[str, Any]] = (),
    log: Sequence[dict[str, Any]] | None = None,
) -> ViewMessage:
    """``cid``: the correlation id of the seat's own message this view answers, if any;
    ``moves``: the public moves the seat has not been shown (``public_move``, each with the
    version its write made); ``log``: the round's moves so far, for a ``sync`` answer
    (``MoveLog.of_round``)."""
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
            rematch=is_friends_table(table.table_id),
        ),
        turn_deadline=table.turn_deadline,
        view=TableView.model_validate(player_view(state, seat).model_dump()),
        last_action=_last_action(last_action) if last_action else None,
        moves=[LoggedMove.model_validate(move) for move in moves],
        intermission=(
            Intermission(
                until=table.intermission_until,
                continued=sorted(table.continued),
                awaited=table.awaited(),
            )
            if table.intermission_until is not None
            else None
        ),
        log=[LoggedMove.model_validate(move) for move in log] if log is not None else None,
    )


def _last_action(move: dict[str, Any]) -> LastAction:
    """``last_action`` names the move alone: the version is the view's own."""
    return LastAction.model_validate({k: v for k, v in move.items() if k != "version"})


def round_result(
    table: TableRecord, state: RoundState, scored: RoundScored, cid: str | None = None
) -> RoundResultMessage:
    """A scored round as every seat learns it: the score, who went out, every seat's tiles
    left in hand, and until when the table waits before the next round (if one follows)."""
    return RoundResultMessage.model_validate(
        {
            **scored.model_dump(mode="json"),
            "went_out": state.went_out,
            "hands": {str(s): [NAMES[t] for t in state.hands[s - 1]] for s in SEATS},
            "intermission_until": table.intermission_until,
            "cid": cid,
        }
    )


def public_move(
    seat: int, action: Action, before: RoundState, after: RoundState, auto: bool
) -> dict[str, Any]:
    """One move as every seat may learn it, for the move log: who, what, and what the
    table shows of it (the melds laid, the tile discarded, the size of the pile taken,
    the bonus threes exposed). Built from the states around the move, never from a
    hand: a draw names no tile."""
    wire = action_to_wire(action)
    move: dict[str, Any] = {"seat": seat, "type": wire["type"], "auto": auto}
    if "tile" in wire:
        move["tile"] = wire["tile"]
    if "melds" in wire:
        move["melds"] = wire["melds"]
    if wire["type"] == "take_pile":
        move["pile_size"] = len(before.discard)
    team = team_of(seat)
    exposed = after.bonus_threes[team][len(before.bonus_threes[team]) :]
    if exposed:
        move["bonus_threes"] = [NAMES[t] for t in exposed]
    if after.round_over and after.went_out == seat:
        move["went_out"] = True
    return move


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


Gone = list[tuple[int, str]]
"""Seats whose connection was gone when pushed to, and that connection: theirs to free
(``AfterWrite.free``); a push itself writes nothing."""


class ViewPusher:
    """Pushes to every connected seat; a gone connection never fails the move."""

    def __init__(self, pusher: Pusher) -> None:
        self._pusher = pusher

    def send(self, connection_id: str, message: dict[str, Any]) -> bool:
        return self._pusher.send(connection_id, message)

    def push_views(
        self,
        table: TableRecord,
        last_action: dict[str, Any] | None = None,
        state: RoundState | None = None,
        reply: tuple[int, str | None] | None = None,
        moves: Sequence[dict[str, Any]] = (),
        *,
        shown: Mapping[int, int] | None = None,
        seats: Sequence[int] = SEATS,
    ) -> Gone:
        """Sends each connected seat of ``seats`` its view; returns the seats whose
        connection was gone.

        ``state`` is ``table.state`` already parsed, if the caller has it. ``reply``
        is the seat whose own message produced this version and its correlation id:
        that seat's view answers it; the other seats' views are pushes. ``shown``: how
        many of ``moves`` a seat was shown already; its view carries the rest, and a seat
        shown them all (at this version: the mover, answered) is not pushed again.
        """
        if table.state is None:
            return []
        if state is None:
            state = unpack(table.state)
        seen = shown or {}
        messages: dict[int, dict[str, Any]] = {}
        for seat in seats:
            if table.connections.get(seat) is None or seen.get(seat, -1) == len(moves):
                continue
            cid = reply[1] if reply is not None and reply[0] == seat else None
            unseen = moves[seen.get(seat, 0) :]
            built = view_message(table, state, seat, last_action, cid, moves=unseen)
            messages[seat] = built.model_dump(mode="json")
        return self._deliver_all(table, messages)

    def _deliver_all(self, table: TableRecord, messages: dict[int, dict[str, Any]]) -> Gone:
        """One push per seat, all at once. A failure other than a gone connection is kept,
        so the other seats are still served before the caller learns of it (and its retry
        repeats the pushes: see ``Answers.stale`` in the turn service and ``ScoreService``)."""
        failures: list[Exception] = []

        def deliver(connection: str, message: dict[str, Any]) -> bool:
            try:
                return self._pusher.send(connection, message)
            except Exception as exc:
                failures.append(exc)
                return True

        seats = [(s, c) for s in messages if (c := table.connections.get(s)) is not None]
        sent = _all_at_once([partial(deliver, c, messages[s]) for s, c in seats])
        _raise_first(failures)
        return [seat for seat, delivered in zip(seats, sent, strict=True) if not delivered]

    def push_all(
        self,
        table: TableRecord,
        message: dict[str, Any],
        reply: tuple[int, dict[str, Any]] | None = None,
    ) -> Gone:
        """The same public message (a round or match result, a quick message) to every
        connected seat; ``reply``: a seat that gets its own copy instead (with its cid).
        Returns the seats whose connection was gone."""
        return self._deliver_all(
            table,
            {
                seat: reply[1] if reply is not None and reply[0] == seat else message
                for seat in SEATS
                if table.connections.get(seat) is not None
            },
        )


_PUSHES = ThreadPoolExecutor(max_workers=len(SEATS), thread_name_prefix="push")
"""Pushes to the four seats are independent calls, each a network round trip:
sent together, a move's last view leaves after one round trip instead of four
(the handler's billed time and every seat's wait shrink alike)."""


def _all_at_once(sends: list[Callable[[], bool]]) -> list[bool]:
    """Runs the sends concurrently, each in a copy of the caller's context (so that
    what the caller's context carries, such as its logging keys, goes with it)."""
    if len(sends) <= 1:
        return [send() for send in sends]
    futures = [_PUSHES.submit(contextvars.copy_context().run, send) for send in sends]
    return [future.result() for future in futures]


def _raise_first(failures: list[Exception]) -> None:
    if failures:
        raise failures[0]
