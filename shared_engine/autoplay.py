"""TABLE-2: the server's move for a disconnected or timed-out seat."""

from __future__ import annotations

from shared_engine.actions import DISCARDS, DRAW, Action
from shared_engine.rules import apply
from shared_engine.state import RoundState, team_of
from shared_engine.tiles import BLOCKING_THREES, VALUES, colour_of, is_three, is_wild, rank_of


def _natural_key(tile: int) -> tuple[int, int, int]:
    """Highest points, then highest rank, then the colour first in R, Y, K, B."""
    return (VALUES[tile], rank_of(tile), -colour_of(tile))


def auto_discard(state: RoundState, seat: int) -> int:
    """The tile auto-play discards: the TABLE-2 ruling, deterministic."""
    hand = state.hands[seat - 1]
    threes = sorted(t for t in hand if t in BLOCKING_THREES)
    if threes:
        return threes[0]
    naturals = [t for t in hand if not is_wild(t) and not is_three(t)]
    if naturals:
        melds = state.melds[team_of(seat)]
        per_rank = [0] * 14
        for t in hand:
            per_rank[rank_of(t)] += 1
        lonely = [t for t in naturals if per_rank[rank_of(t)] == 1 and not melds[rank_of(t)]]
        return max(lonely or naturals, key=_natural_key)
    return max(hand, key=lambda t: VALUES[t])


def auto_play_step(state: RoundState, seat: int) -> Action:
    """The next action of an automatic turn: draw in the draw phase, else discard."""
    if state.phase == "draw":
        return DRAW
    return DISCARDS[auto_discard(state, seat)]


def auto_play_turn(state: RoundState) -> RoundState:
    """Play the whole turn of the seat to play: draw (if due), then discard."""
    seat = state.turn
    while state.turn == seat and state.phase != "round_over":
        state, _ = apply(state, seat, auto_play_step(state, seat))
    return state
