"""Connections: the token check on connect, presence, and seat (dis)connection.

Presence events are published directly rather than through the outbox: they
change no game state, and if one is lost the turn timer still auto-plays an
absent player's turn (TABLE-2).
"""

from __future__ import annotations

from services.common.adapters import Clock, Publisher
from services.common.auth import Identity, TokenVerifier
from services.common.events import PlayerConnected, PlayerDisconnected
from services.common.presence import PresenceStore
from services.common.protocol import OpenedElsewhereMessage
from services.common.records import Outbound
from services.common.store import GameStore
from services.common.tableviews import ViewPusher
from services.common.telemetry import Telemetry


class ConnectService:
    def __init__(
        self,
        *,
        store: GameStore,
        presence: PresenceStore,
        publisher: Publisher,
        views: ViewPusher,
        clock: Clock,
        telemetry: Telemetry,
        verifier: TokenVerifier | None,
        connection_ttl: int,
    ) -> None:
        self._store = store
        self._presence = presence
        self._publisher = publisher
        self._views = views
        self._clock = clock
        self._telemetry = telemetry
        self._verifier = verifier
        self._ttl = connection_ttl

    def authorize(self, token: str) -> Identity:
        """The player a token names; raises ``InvalidToken`` if it is not valid now.

        Only the authorizer is configured with the issuer; anywhere else a token
        check is a wiring mistake, raised as such rather than refusing every player.
        """
        if self._verifier is None:
            raise RuntimeError("no token issuer: set CANASTA_OIDC_ISSUER and CANASTA_OIDC_AUDIENCE")
        return self._verifier.verify(token)

    def connect(self, connection_id: str, identity: Identity) -> None:
        """Record the connection; a seated player's seat now points to it (a reconnect).

        A connection the player still had open (another tab or device) is told
        ``opened_elsewhere``: from now on its moves are refused, so a person never
        plays from a tab that no longer sees the table.
        """
        self._telemetry.annotate(player_id=identity.player_id)
        player, replaced = self._presence.add_connection(
            connection_id, identity.player_id, identity.name, self._clock.now(), self._ttl
        )
        seat = None
        if player.table_id is not None and player.seat is not None:
            table = self._store.get_table(player.table_id)
            if (
                table is not None
                and table.status == "playing"
                and table.seat_of(player.player_id) == player.seat
            ):
                self._store.set_connection(table.table_id, player.seat, connection_id)
                seat = player.seat
        self._telemetry.count("connections_opened")
        if replaced is not None and replaced != connection_id:
            self._telemetry.count("connections_replaced")
            self._views.send(replaced, OpenedElsewhereMessage().model_dump())
        event = PlayerConnected(
            player_id=identity.player_id,
            connection_id=connection_id,
            table_id=player.table_id if seat else None,
            seat=seat,
        )
        self._publisher.publish([Outbound.of(event)])

    def disconnect(self, connection_id: str) -> None:
        """Forget the connection; if it was the player's current one, they are now absent.

        A seat at a table becomes absent (TABLE-2); matchmaking takes a queued
        player out of the queue on the event.
        """
        player = self._presence.remove_connection(connection_id)
        self._telemetry.count("connections_closed")
        if player is None:
            return
        self._telemetry.annotate(
            player_id=player.player_id, table_id=player.table_id, seat=player.seat
        )
        seated = (
            player.table_id is not None
            and player.seat is not None
            and self._store.set_connection(
                player.table_id, player.seat, None, replacing=connection_id
            )
        )
        event = PlayerDisconnected(
            player_id=player.player_id,
            connection_id=connection_id,
            table_id=player.table_id if seated else None,
            seat=player.seat if seated else None,
        )
        self._publisher.publish([Outbound.of(event)])
