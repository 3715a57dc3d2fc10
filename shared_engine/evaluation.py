"""A learned evaluation: the round lead a position is heading for, from cheap features.

The search bots stop their look-ahead long before the round's end, where the
score so far says little: a meld of six is worth most of a canasta's bonus,
a pair in hand is a claim on the pile, the pile itself belongs to the seat
about to take it. ``predicted_lead`` weighs such features of a whole
position (a world of the search, every hand dealt) by a linear model per
stage of the stock, fitted by least squares to the round's final lead in
self-play (``benchmarks.train``, ``make train-bots``); its weights are data
in ``shared_engine.weights``, so the engine stays pure and deterministic and
the Lambda asset carries no model runtime.

A position is worth what the players who play it on make of it, so there
is one fit per level of self-play: on the heuristic's rounds (``easy``) the
prediction is what the look-ahead's own heuristic would make of the rest of
the round; on rounds of normal search bots (``normal``) it is what a
searching player would. Normal values its leaves by the first; hard by the
mean of both, since it meets either kind of player: a step beyond the
first fit that a bigger search on it does not give (docs/performance.md).

The model is antisymmetric by construction (every feature is team A's less
team B's, or signed by the team to play), so the two teams' predictions of
one position are exact opposites.
"""

from __future__ import annotations

from functools import cache
from typing import Final

from shared_engine.rules import CANASTA_SIZE
from shared_engine.scoring import score_team
from shared_engine.state import RoundState, team_of
from shared_engine.tiles import is_three, is_wild, plays_wild, rank_of
from shared_engine.weights import RESIDUALS, STAGES, WEIGHTS

TEAM_FEATURES: Final = (
    "melded",
    "canastas",
    "bonus_threes",
    "hands",
    "melds_of_six",
    "melds_of_five",
    "melds_of_four",
    "melds_of_three",
    "clean_progress",
    "wilds_held",
    "tiles_held",
    "layable_held",
    "pairs_held",
    "threes_held",
    "opened",
    "has_canasta",
    "unopened_threshold",
)
"""What each team's half of a position is described by (``_team``), in the weights' order."""
FEATURES: Final = (*TEAM_FEATURES, "pile_to_play", "pile_takeable", "to_play")
"""Team A's features less team B's, then the pile and the move, signed by the team to play."""


def stage_of(stock: int, stages: tuple[int, ...] = STAGES) -> int:
    """The index of the stage a stock of ``stock`` tiles is weighed in (``stages``: each
    stage's lowest stock, the first 0)."""
    return sum(1 for lowest in stages[1:] if stock >= lowest)


def _team(state: RoundState, team: int) -> list[float]:
    """One team's half of the features, in ``TEAM_FEATURES`` order."""
    score = score_team(state, team)
    melds = state.melds[team]
    sizes = [0, 0, 0, 0]
    clean = 0
    for rank, meld in enumerate(melds):
        size = len(meld)
        if 3 <= size < CANASTA_SIZE:
            sizes[CANASTA_SIZE - 1 - size] += 1
            if size >= 5 and not any(plays_wild(t, rank) for t in meld):
                clean += 1
    wilds = tiles = layable = pairs = threes = 0
    for seat in (team + 1, team + 3):
        hand = state.hands[seat - 1]
        tiles += len(hand)
        counts = [0] * 14
        for t in hand:
            if is_wild(t):
                wilds += 1
            elif is_three(t):
                threes += 1
            else:
                rank = rank_of(t)
                counts[rank] += 1
                layable += bool(melds[rank])
        pairs += sum(1 for n in counts if n >= 2)
    opened = state.opened[team]
    return [
        score.melded,
        score.canastas,
        score.bonus_threes,
        score.hands,
        *sizes,
        clean,
        wilds,
        tiles,
        layable,
        pairs,
        threes,
        float(opened),
        float(score.canastas > 0),
        0.0 if opened else state.thresholds[team] / 100,
    ]


def features(state: RoundState) -> list[float]:
    """The position's features from team A's side (``FEATURES`` order)."""
    a, b = _team(state, 0), _team(state, 1)
    sign = 1.0 if team_of(state.turn) == 0 else -1.0
    pile = len(state.discard)
    takeable = 0.0
    if pile and state.phase == "draw":
        top = state.discard[-1]
        if not is_wild(top) and not is_three(top):
            hand = state.hands[state.turn - 1]
            if sum(1 for t in hand if rank_of(t) == rank_of(top)) >= 2:
                takeable = float(pile)
    return [x - y for x, y in zip(a, b, strict=True)] + [sign * pile, sign * takeable, sign]


@cache
def _fit(fits: tuple[str, ...]) -> tuple[tuple[tuple[float, ...], ...], tuple[float, ...]]:
    """The mean of ``fits``' weights and residuals, stage by stage: the fits are linear in
    the same features, so this one model predicts the mean of their predictions."""
    rows = tuple(
        tuple(sum(ws) / len(fits) for ws in zip(*stage, strict=True))
        for stage in zip(*(WEIGHTS[f] for f in fits), strict=True)
    )
    spreads = tuple(sum(rs) / len(fits) for rs in zip(*(RESIDUALS[f] for f in fits), strict=True))
    return rows, spreads


def predicted_lead(
    state: RoundState, team: int, fits: tuple[str, ...] = ("easy",)
) -> tuple[float, float]:
    """The round lead ``team`` is heading for (its total less the other's), by the mean
    of the ``fits`` (each named by the level whose self-play it was fitted on: what those
    players would make of the rest of the round), and the standard deviation of what
    the model leaves unexplained at this stage."""
    rows, spreads = _fit(fits)
    stage = stage_of(len(state.stock))
    lead = sum(w * x for w, x in zip(rows[stage], features(state), strict=True))
    return (lead if team == 0 else -lead), spreads[stage]
