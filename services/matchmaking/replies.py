"""What matchmaking's players hear: answers to their messages, and news of their places.

Queues, lobbies and rematches answer alike (a refusal counted by its code, the
``cid`` echoed to the sender only), so they share one way to say it.
"""

from __future__ import annotations

from typing import Any

from services.common.adapters import Pusher
from services.common.protocol import QueueLeftMessage
from services.common.tableviews import error_message
from services.common.telemetry import Telemetry
from services.common.unit_of_work import Busy, Committed, Outcome
from services.matchmaking.store import PlayerStore

Reply = tuple[str, str] | None
"""The player whose message is being answered, and its ``cid`` (None: nothing to echo)."""


def reply_to(player_id: str, cid: str | None) -> Reply:
    return (player_id, cid) if cid is not None else None


class Replies:
    def __init__(self, *, players: PlayerStore, pusher: Pusher, telemetry: Telemetry) -> None:
        self._players = players
        self._pusher = pusher
        self._telemetry = telemetry

    def send(self, connection_id: str, message: dict[str, Any]) -> None:
        self._pusher.send(connection_id, message)

    def tell(self, player_id: str, message: dict[str, Any]) -> None:
        """Push to the player's current connection: the one their queue or lobby answers
        on (a player with none hears nothing)."""
        connection = self._players.player(player_id).connection_id
        if connection:
            self._pusher.send(connection, message)

    def left(self, connection_id: str | None, reason: str, cid: str | None = None) -> None:
        """The player is out of the queue or lobby they asked to leave (on the connection
        that asked, if one did: a closed connection leaves unanswered)."""
        if connection_id:
            left = QueueLeftMessage(reason=reason, cid=cid)  # type: ignore[arg-type]
            self._pusher.send(connection_id, left.model_dump())

    def refuse(self, connection_id: str, code: str, message: str, cid: str | None = None) -> None:
        self._telemetry.count(f"refused_{code}")
        self._pusher.send(connection_id, error_message(code, message, cid=cid))

    def claimed(
        self,
        outcome: Outcome,
        connection_id: str,
        cid: str | None = None,
        joining: tuple[str, str] | None = None,
    ) -> bool | None:
        """What a commit that puts a player somewhere did: True if it did, None if the
        player is busy elsewhere (answered ``already_playing``), False if another write
        lost a race (read again and retry). ``joining``: (player, lobby code); a player
        found in that lobby is not busy: their own message, sent twice at once, seated
        them (the retry shows it)."""
        if isinstance(outcome, Committed):
            return True
        if isinstance(outcome, Busy) and (
            joining is None or self._players.player(joining[0]).lobby != joining[1]
        ):
            self.refuse(
                connection_id,
                "already_playing",
                "you are already queued, in a lobby or at a table",
                cid,
            )
            return None
        return False
