"""Players that choose among ``legal_actions``: pure, seeded by the caller.

``random_policy`` is the yardstick for tests and benchmarks; ``greedy_policy``
is a simple sensible player (pick up the pile, meld as much as it can, then
discard as auto-play would), enough for a demonstration round.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from shared_engine.actions import DRAW, Action, Discard, Meld, TakePile
from shared_engine.autoplay import auto_discard
from shared_engine.legal import legal_actions
from shared_engine.state import RoundState

if TYPE_CHECKING:
    import random

Policy = Callable[[RoundState, int], Action]


def random_policy(rng: random.Random) -> Policy:
    """Uniform over the legal actions, from the caller's own generator."""

    def choose(state: RoundState, seat: int) -> Action:
        return rng.choice(legal_actions(state, seat))

    return choose


def _size(action: Meld | TakePile) -> int:
    return sum(len(spec.tiles) for spec in action.melds)


def greedy_policy(state: RoundState, seat: int) -> Action:
    """Take the pile when allowed, meld the most tiles, else discard like auto-play."""
    actions = legal_actions(state, seat)
    pickups = [a for a in actions if isinstance(a, TakePile)]
    if pickups:
        return max(pickups, key=_size)
    melds = [a for a in actions if isinstance(a, Meld)]
    if melds:
        return max(melds, key=_size)
    if DRAW in actions:
        return DRAW
    discards = [a for a in actions if isinstance(a, Discard)]
    tile = auto_discard(state, seat)
    return next((a for a in discards if a.tile == tile), discards[0] if discards else actions[0])
