"""A finished match replayed for one of its players, from their own seat.

Every frame is the engine's view of that seat after a move (``player_view``, the
one every live push is built from), replayed from the round's stored seed and
log: their own tiles, every seat's public ones, the hands once the round is over.
Only a player who sat at the table is answered, and only once its match is over:
a replay of a live table would show a seat its own tiles as they are now.
"""

from __future__ import annotations

from services.common.protocol import (
    REPLAY_FRAMES,
    LoggedMove,
    Replay,
    ReplayFrame,
    ReplayMessage,
    TableView,
)
from services.common.replay import rounds_of, seat_frames
from services.common.store import GameStore
from services.matchmaking.replies import Replies


class Replays:
    def __init__(self, games: GameStore, replies: Replies) -> None:
        self._games = games
        self._replies = replies

    def replay(self, player_id: str, connection_id: str, message: Replay) -> None:
        """A page of ``REPLAY_FRAMES`` frames of the asked round, from ``start``."""
        cid = message.cid
        table = self._games.get_table(message.table_id)
        seat = table.seat_of(player_id) if table else None
        if table is None or seat is None:
            # Another player's table is as unknown as one that never was.
            self._replies.refuse(connection_id, "no_table", "you played no such match", cid)
            return
        if table.status != "finished":
            self._replies.refuse(connection_id, "not_over", "the match is not over yet", cid)
            return
        played = rounds_of(self._games.history.records(table.table_id))
        rnd = next((r for r in played if r.number == message.round), None)
        if rnd is None or message.start > len(rnd.moves):
            where = f"round {message.round} from move {message.start}"
            self._replies.refuse(connection_id, "no_table", f"the match has no {where}", cid)
            return
        frames = seat_frames(
            played,
            variant=table.variant,
            round_number=rnd.number,
            seat=seat,
            start=message.start,
            count=REPLAY_FRAMES,
        )
        answer = ReplayMessage(
            cid=cid,
            table_id=table.table_id,
            seat=seat,
            round=rnd.number,
            rounds=len(played),
            moves=len(rnd.moves),
            start=message.start,
            frames=[
                ReplayFrame(
                    move=LoggedMove.model_validate(move.public) if move and move.public else None,
                    # A replay offers no move: the legal ones would only weigh the page.
                    view=TableView.model_validate(view.model_dump() | {"legal_actions": []}),
                )
                for move, view in frames
            ],
            more=message.start + len(frames) <= len(rnd.moves),
        )
        self._replies.send(connection_id, answer.model_dump(mode="json"))
