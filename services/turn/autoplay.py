"""TABLE-2: the turns nobody plays, played for their seat: a bot's, an absent player's,
or one whose timer fired. Each write of them is the same write as a move's."""

from __future__ import annotations

from collections.abc import Callable

from services.common.afterwrite import running
from services.common.records import TableRecord
from services.common.telemetry import Telemetry
from services.common.unit_of_work import VersionConflict
from services.turn.writes import Applied, Moves, MoveWriter
from shared_engine import Action, RoundState, apply
from shared_engine.autoplay import auto_play_step
from shared_engine.match import rounds_after
from shared_engine.search import level_policy

AUTO_PLAY_LIMIT = 400
"""More actions than any round holds: a bound on one invocation's auto-play writes."""
STRETCH_MOVES = 90
"""The most moves one write of a stretch of unwatched turns holds: with the table item,
within a transaction's 100 items and far inside its 4 MB."""


class AutoPlay:
    def __init__(self, writer: MoveWriter, telemetry: Telemetry) -> None:
        self._writer = writer
        self._telemetry = telemetry

    def play_turns(
        self, table: TableRecord, before: RoundState, *, stretch: bool, expired: bool = False
    ) -> Applied | None:
        """Play the turn of the seat to play, bot or absent (or ``expired``: its timer fired),
        in one write; with ``stretch``, the turns after it too, up to the next seat with a
        connected player. None: another write moved the table first.

        A stretch is written as one write of up to ``STRETCH_MOVES`` moves, with a
        log item for each turn: a table nobody watches (everyone left, or the one
        person at a bots' table did) is played to the round's end in a few writes
        instead of one rewrite of the table item per turn, which took 37% of the
        partition's write limit in that second (docs/capacity.md). A watched table's
        stretch is one write too: its players see the whole stretch in one view each,
        its moves shown one after another (``FollowThrough``).
        """
        moves: Moves = []
        kinds: list[str] = []
        state = before
        while running(table, state) and (_absent(table, state.turn) or (expired and not moves)):
            turn = _turn(table, state)
            if moves and len(moves) + len(turn) > STRETCH_MOVES:
                break
            moves += turn
            kinds.append("bot_turns" if table.seats[state.turn].bot else "auto_played_turns")
            state = turn[-1][2]
            if not stretch:
                break
        applied = self._writer.commit(table, before, moves, True)
        if isinstance(applied, VersionConflict):
            return None
        if not isinstance(applied, Applied):
            raise RuntimeError(f"the turns were not written: {applied}")
        for kind in kinds:
            self._telemetry.count(kind)
        return applied

    def advance_absent(self, applied: Applied) -> Applied:
        """Play every turn that falls to a bot's seat or to a seat with no connected player,
        the turns up to the next connected person's in one write (``play_turns``); what
        follows is nobody's until then, so the seats are shown it all at once after it.

        Bots (friends tables filled by their host) play with the engine's bot of
        their seat's level, which sees only what its seat may see; absent players
        get auto-play (TABLE-2).
        """
        for _ in range(AUTO_PLAY_LIMIT):
            table, state = applied.table, applied.state
            if state is None or not running(table, state) or not _absent(table, state.turn):
                break
            nxt = self.play_turns(table, state, stretch=True)
            if nxt is None:
                break
            applied = applied.then(nxt)
        return applied


def _absent(table: TableRecord, seat: int) -> bool:
    """A bot's seat, or a person's with no connection: its turn is played for it."""
    return table.seats[seat].bot or table.connections.get(seat) is None


def _turn(table: TableRecord, state: RoundState) -> Moves:
    """The whole turn of the seat to play, by its bot or by TABLE-2's auto-play (draw if
    due, then discard): each action with the state after it."""
    seat = state.turn
    policy = bot_policy(table, seat) if table.seats[seat].bot else auto_play_step
    moves: Moves = []
    while state.turn == seat and not state.round_over:
        action = policy(state, seat)
        state, _ = apply(state, seat, action)
        moves.append((seat, action, state))
    return moves


def bot_policy(table: TableRecord, seat: int) -> Callable[[RoundState, int], Action]:
    """The bot of ``seat`` at its level, seeded by the table, round and move alone.

    A replay of the table's log reproduces every bot move: the seed holds no
    clock and no process randomness, and a retried invocation that replays a
    turn decides it the same way. A seat stored without a level (a table formed
    before levels existed) plays at ``normal``, the default a host gets. It plays
    to win the match: how much a lead counts depends on the rounds still to come.
    """
    level = table.seats[seat].level or "normal"

    def choose(state: RoundState, player: int) -> Action:
        later = rounds_after(table.mode, table.round, state.match_scores)
        seed = f"{table.table_id}:{table.round}:{state.ply}"
        return level_policy(level, seed, rounds_after=later)(state, player)

    return choose
