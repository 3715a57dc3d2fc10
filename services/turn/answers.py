"""The answers to a seat's message that change nothing at the table.

Each goes to the sending connection alone, with the ``cid`` of the message it
answers: a refusal and why, or, for a move on a version the table has left,
the table as it is now.
"""

from __future__ import annotations

from services.common.records import TableRecord
from services.common.tableviews import ViewPusher, error_message, view_message
from services.common.telemetry import Telemetry
from shared_engine import RoundState


class Answers:
    def __init__(self, views: ViewPusher, telemetry: Telemetry) -> None:
        self._views = views
        self._telemetry = telemetry

    def refuse(
        self,
        connection_id: str,
        code: str,
        message: str,
        table: TableRecord | None = None,
        cid: str | None = None,
    ) -> None:
        table_id = table.table_id if table else None
        self._views.send(connection_id, error_message(code, message, table_id, cid=cid))

    def elsewhere(self, connection_id: str, cid: str | None) -> None:
        """A tab the player has since replaced by another: nothing it sends applies."""
        self._telemetry.count("refused_opened_elsewhere")
        self.refuse(
            connection_id,
            "opened_elsewhere",
            "you opened the game in another tab or device; play there, or reload here",
            cid=cid,
        )

    def stale(
        self,
        connection_id: str,
        table: TableRecord,
        state: RoundState | None,
        seat: int,
        cid: str | None,
    ) -> None:
        """The seat's view of ``table`` (``state``: its round, parsed), so that the client
        chooses its move again on the version it missed."""
        self._telemetry.count("refused_stale_version")
        view = view_message(table, state, seat) if state is not None else None
        self._views.send(
            connection_id,
            error_message(
                "stale_version",
                f"the table is at version {table.version}",
                table.table_id,
                view,
                cid,
            ),
        )
