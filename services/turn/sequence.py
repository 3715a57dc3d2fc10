"""A ``play`` message's moves: ``move``, then each of ``then``, decided as one turn's.

A person's melds and discard come in one message, so that a turn costs the draw and one
commit. The engine judges the moves in order on the table as read, each on the state the
one before it left; the first it refuses (or that is malformed) refuses them all, named by
its place in the message, and nothing is written. The moves it accepts are written in one
write (``MoveWriter.commit``), each logged as its own move.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.common.protocol import Play
from services.turn.writes import Moves
from shared_engine import Action, EngineError, RoundState, action_to_wire, apply
from shared_engine.actions import from_model


@dataclass(frozen=True, slots=True)
class MoveSequence:
    """The moves of one message as the engine's actions, or why the first malformed one is
    none (answered in its turn, after the checks of the seat and the version)."""

    actions: tuple[Action, ...] | EngineError

    @classmethod
    def of(cls, message: Play) -> MoveSequence:
        models = (message.move, *message.then)
        actions: list[Action] = []
        for place, model in enumerate(models):
            try:
                actions.append(from_model(model))
            except EngineError as malformed:
                return cls(_placed(malformed, place, len(models)))
        return cls(tuple(actions))

    @property
    def first(self) -> Action | None:
        return self.actions[0] if isinstance(self.actions, tuple) else None

    def wire(self) -> list[dict[str, object]] | None:
        """The moves as the log keeps them (a re-sent message's repair looks for them)."""
        if isinstance(self.actions, EngineError):
            return None
        return [action_to_wire(action) for action in self.actions]

    def played(self, state: RoundState, seat: int) -> Moves | EngineError:
        """Each move by ``seat`` with the state after it, or why the engine refuses the
        first it refuses: then none is played."""
        if isinstance(self.actions, EngineError):
            return self.actions
        moves: Moves = []
        for place, action in enumerate(self.actions):
            try:
                state = apply(state, seat, action)[0]
            except EngineError as refused:
                return _placed(refused, place, len(self.actions))
            moves.append((seat, action, state))
        return moves


def _placed(error: EngineError, place: int, count: int) -> EngineError:
    """``error`` naming the move it refuses by its place (``move``, ``then.N``) when the
    message carried more than one; a single move's refusal reads as it always has."""
    if count == 1:
        return error
    where = "move" if place == 0 else f"then.{place - 1}"
    return EngineError(error.code, f"{where}: {error.detail or error.code}")
