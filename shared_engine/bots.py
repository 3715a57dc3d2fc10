"""Players that choose among ``legal_actions``: pure, deterministic, information-fair.

A policy reads only what its seat may see: its own hand, the melds, the
discard pile, the bonus threes, the counts and the scores — never another
hand or the stock's order (``legal_actions`` itself depends on nothing
else). ``random_policy`` is the yardstick; ``heuristic_policy`` is the bot
that fills empty seats and plays against people.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from shared_engine.actions import DRAW, JOKER_BUTTON, Action, Discard, Meld, TakePile
from shared_engine.legal import legal_actions
from shared_engine.rules import CANASTA_SIZE, has_canasta
from shared_engine.state import RoundState, next_seat, team_of
from shared_engine.tiles import (
    BLOCKING_THREES,
    VALUES,
    count_rank,
    is_wild,
    plays_wild,
    rank_of,
)

if TYPE_CHECKING:
    import random

Policy = Callable[[RoundState, int], Action]


def random_policy(rng: random.Random) -> Policy:
    """Uniform over the legal actions, from the caller's own generator."""

    def choose(state: RoundState, seat: int) -> Action:
        return rng.choice(legal_actions(state, seat))

    return choose


def _meld_gain(state: RoundState, seat: int, action: Meld | TakePile) -> float:
    """How much a meld or pickup is worth to the team, beyond its face value.

    Naturals are worth melding; wilds are kept for completing canastas, so a
    wild spent elsewhere costs; completing a canasta is worth its bonus.
    """
    melds = state.melds[team_of(seat)]
    gain = 0.0
    for spec in action.melds:
        existing = melds[spec.rank]
        size = len(existing) + len(spec.tiles) + (1 if isinstance(action, TakePile) else 0)
        naturals = sum(1 for t in spec.tiles if not plays_wild(t, spec.rank))
        wilds = len(spec.tiles) - naturals
        gain += sum(VALUES[t] for t in spec.tiles)
        gain += 8 * naturals
        completes = len(existing) < CANASTA_SIZE <= size
        if completes:
            gain += (
                300 if wilds == 0 and all(not plays_wild(t, spec.rank) for t in existing) else 200
            )
        elif wilds:
            gain -= 45 * wilds if size < CANASTA_SIZE - 1 else 10 * wilds
        if not existing and naturals == 2 and wilds and size < 5:
            gain -= 20
    if isinstance(action, TakePile):
        gain += 12 * len(state.discard)
    return gain


def _discard_cost(state: RoundState, seat: int, tile: int) -> float:
    """How bad discarding ``tile`` is: feeds an opponent, breaks a pair, wastes a wild.

    The bigger the pile, the more a discard the next player can pick up costs:
    a tile is safer the more copies of its rank are already in sight, and a
    blocking three or a 2 on top stops the pickup altogether (PILE-2).
    """
    hand = state.hands[seat - 1]
    rank = rank_of(tile)
    pile = len(state.discard)
    if tile in BLOCKING_THREES:
        return -50.0 - pile
    if is_wild(tile):
        return 160.0 + VALUES[tile] - 10 * pile
    same = count_rank(hand, rank)
    own = state.melds[team_of(seat)]
    theirs = state.melds[team_of(next_seat(seat))]
    seen = same + count_rank(state.discard, rank)
    seen += sum(count_rank(side[rank], rank) for side in state.melds)
    cost = (8 - min(seen, 8)) / 8 * 16 * pile
    if own[rank]:
        cost += 40
    if same >= 2:
        cost += 30 * (same - 1)
    if theirs[rank]:
        cost += 35
    cost -= VALUES[tile] * (0.3 if len(state.stock) > 20 else 1.0)
    return cost


def _team_ahead(state: RoundState, seat: int) -> bool:
    """Whether going out now is good for the team, from what the seat can see.

    Visible melds and canastas against the tiles still in hands; going out
    also ends the opponents' chances to pick up the pile, so the team goes
    out unless it is clearly behind (by more than the going-out swing).
    """
    team = team_of(seat)

    def visible(side: int) -> int:
        melds = state.melds[side]
        melded = sum(VALUES[t] for m in melds for t in m)
        canastas = sum(300 for m in melds if len(m) >= CANASTA_SIZE)
        hands = sum(len(state.hands[s - 1]) for s in (1, 2, 3, 4) if team_of(s) == side)
        return melded + canastas - 8 * hands

    return visible(team) + 400 >= visible(1 - team)


def heuristic_policy(state: RoundState, seat: int) -> Action:
    """A sensible Canasta player.

    Takes the pile when it can, opens as soon as it reaches the threshold,
    lays naturals and builds canastas while keeping wilds for completing them,
    goes out when it can and its team is ahead, and discards blocking threes
    and tiles no opponent wants, keeping pairs and its team's ranks.
    """
    actions = legal_actions(state, seat)
    if len(actions) == 1:
        return actions[0]
    pickups = [a for a in actions if isinstance(a, TakePile)]
    if pickups:
        return max(pickups, key=lambda a: _meld_gain(state, seat, a))
    if DRAW in actions or JOKER_BUTTON in actions:
        return JOKER_BUTTON if JOKER_BUTTON in actions else DRAW
    hand = state.hands[seat - 1]
    melds = [a for a in actions if isinstance(a, Meld)]
    if melds:
        best = max(melds, key=lambda a: _meld_gain(state, seat, a))
        left = len(hand) - sum(len(s.tiles) for s in best.melds)
        going_down = left <= 1
        if _meld_gain(state, seat, best) > 0 and (not going_down or _team_ahead(state, seat)):
            return best
    discards = [a for a in actions if isinstance(a, Discard)]
    if len(hand) == 1 and discards and has_canasta(state.melds[team_of(seat)]):
        return discards[0]
    return min(discards, key=lambda a: (_discard_cost(state, seat, a.tile), a.tile))


def greedy_policy(state: RoundState, seat: int) -> Action:
    """Kept as the name the services use for a seat's bot."""
    return heuristic_policy(state, seat)
