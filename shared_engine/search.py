"""Search bots: the heuristic player, looking ahead in worlds its seat could be in.

At a decision with a choice, the bot ranks a few candidate actions (the
heuristic's own choice first, then the best melds and pickups by the
heuristic's gain and the safest discards by its cost), deals the tiles it
cannot see afresh into ``worlds`` worlds consistent with its view
(determinization), and in each world plays every candidate, then
``horizon`` more actions with the heuristic in every seat, and values the
position by the round lead it is heading for (``shared_engine.evaluation``,
a model fitted on self-play; SCORE-1 itself once the round is over), the
match totals included, as a chance of winning the match (``_chance``): a
match is won or lost whatever the margin (MATCH-1, MATCH-3), so a bot ahead
near the end makes sure of it and one behind takes the risk that can turn
it. An alternative is played instead of the heuristic's choice only when its
gain over it, paired world by world, stands ``doubt`` standard errors above
zero; of those, the one whose lower bound is highest.

Information-fair by construction: the hidden tiles are the full set less
every tile the seat can see (its hand, the melds, the discard pile, the bonus
threes), never read from the other hands or the stock; they are shuffled in
sorted order by a seed made of the bot's seed and public facts only, so a
reshuffle of the hidden tiles, or a state rebuilt from the seat's view, gives
the same worlds and the same move. The budget is a fixed count of simulated
actions per decision (``candidates x worlds x (horizon + 1)``), never wall
time, and the same seed and position give the same move.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from shared_engine.actions import DRAW, JOKER_BUTTON, Action, Discard, Meld, TakePile
from shared_engine.bots import Policy, _discard_cost, _meld_gain, heuristic_policy
from shared_engine.deal import shuffle
from shared_engine.evaluation import predicted_lead
from shared_engine.legal import legal_actions
from shared_engine.rules import apply
from shared_engine.scoring import score_team
from shared_engine.state import RoundState, team_of
from shared_engine.tiles import FULL_SET, JOKER, NAMES


@dataclass(frozen=True, slots=True)
class Level:
    """How hard a search bot thinks: its whole budget per decision is fixed by these."""

    name: str
    candidates: int
    worlds: int
    horizon: int
    hands: float = 0.5
    """Without the learned evaluation, what the tiles still in hand weigh when the
    look-ahead stops before the round's end: at full value (SCORE-1) a pile just taken
    looks like a loss, though most of it will be melded before anyone goes out."""
    spread: float = 100.0
    """The width, in points, of the soft sign a lead at the round's end is counted by
    (``_chance``): a win by 10 points counts about as a draw, one by 300 as a win."""
    evaluation: tuple[str, ...] | None = ("easy",)
    """The fits of the learned evaluation (``shared_engine.evaluation``: each named by the
    level whose self-play it was fitted on) whose mean values a look-ahead that stops
    before the round's end; ``None`` values it by the score so far (``hands``)."""
    doubt: float = 1.5
    """How many standard errors of the paired difference over the same worlds an
    alternative must lead the heuristic's choice by to be played instead: the
    look-ahead is short and its worlds few, so a lead within the noise is not
    evidence."""

    @property
    def budget(self) -> int:
        """The most actions simulated for one decision."""
        return self.candidates * self.worlds * (self.horizon + 1)


NORMAL: Final = Level("normal", candidates=3, worlds=16, horizon=4)
HARD: Final = Level("hard", candidates=5, worlds=48, horizon=4, evaluation=("easy", "normal"))
ROUND_SPREAD: Final = 750.0
"""About one standard deviation, in points, of a team's lead over a whole round, and of
what the rest of a round still changes in the lead a position is valued by, at any
stage (both measured in heuristic self-play, ``benchmarks.spread``): before the round's
end a lead is only a chance."""
LEVELS: Final = ("easy", "normal", "hard")
"""``easy`` is the heuristic bot itself."""


def _candidates(state: RoundState, seat: int, actions: list[Action], count: int) -> list[Action]:
    """The heuristic's choice, then the others it ranks best, kinds taken in turn."""
    first = heuristic_policy(state, seat)
    draws: list[Action] = [a for a in (JOKER_BUTTON, DRAW) if a in actions]
    gains = [a for a in actions if isinstance(a, (Meld, TakePile))]
    gains.sort(key=lambda a: -_meld_gain(state, seat, a))
    costs = [a for a in actions if isinstance(a, Discard)]
    costs.sort(key=lambda a: (_discard_cost(state, seat, a.tile), a.tile))
    chosen = [first]
    kinds: list[list[Action]] = [draws, [*gains], [*costs]]
    while len(chosen) < count and any(kinds):
        for kind in kinds:
            while kind and kind[0] in chosen:
                kind.pop(0)
            if kind and len(chosen) < count:
                chosen.append(kind.pop(0))
    return chosen


def hidden_tiles(state: RoundState, seat: int) -> list[int]:
    """The tiles ``seat`` cannot see, in sorted order: the full set less what it sees."""
    counts = [0] * 64
    for t in FULL_SET:
        counts[t] += 1
    seen = [state.hands[seat - 1], state.discard, *state.bonus_threes]
    seen += [m for team in state.melds for m in team]
    for tiles in seen:
        for t in tiles:
            counts[t] -= 1
    return [t for t in range(64) for _ in range(counts[t])]


def _public_key(state: RoundState, seat: int) -> str:
    """What the seat sees, as text: the seed of its worlds at this decision."""
    parts = [
        str(seat),
        state.phase,
        str(len(state.stock)),
        " ".join(NAMES[t] for t in state.hands[seat - 1]),
        " ".join(NAMES[t] for t in state.discard),
        ",".join(str(len(h)) for h in state.hands),
        ",".join(str(len(m)) for team in state.melds for m in team),
    ]
    return "|".join(parts)


def world(state: RoundState, seat: int, seed: str, *, button: bool) -> RoundState:
    """One deal of the hidden tiles into the other hands and the stock.

    ``button`` says whether the seat's joker button is open (JOKER-1: only
    with a joker in the stock), which its view tells it: the world keeps that
    true. The other seats' account jokers are not in the view, so in the
    world they have none.
    """
    tiles = shuffle(seed, hidden_tiles(state, seat))
    hands = list(state.hands)
    others = [s for s in (1, 2, 3, 4) if s != seat]
    for s in others:
        size = len(state.hands[s - 1])
        hands[s - 1], tiles = tuple(sorted(tiles[:size])), tiles[size:]
    stock = tiles
    if button and JOKER not in stock:
        holder = next(s for s in others if JOKER in hands[s - 1])
        hand = list(hands[holder - 1])
        hand[hand.index(JOKER)] = stock[0]
        stock[0] = JOKER
        hands[holder - 1] = tuple(sorted(hand))
    new = state.copy()
    new.hands = tuple(hands)
    new.stock = tuple(stock)
    new.account_jokers = tuple(
        n if s == seat else 0 for s, n in zip((1, 2, 3, 4), state.account_jokers, strict=True)
    )
    return new


def _chance(
    lead: float, *, over: bool, level: Level, rounds_after: int, rest: float = 0.0
) -> float:
    """How likely a match lead of ``lead`` points is to win the match, from -1 to 1.

    The lead's normal spread to the match's end is that of the rounds still to
    play (``ROUND_SPREAD`` each, and one for the rest of this round if it is
    not ``over``), ``rest`` (a learned prediction's own spread: the lead is
    then where the round is heading, so the round counts as ``over``) and
    ``level.spread``: far from the end the chance is almost
    linear in the lead, as a lead maximizer plays; in the deciding round it
    is a soft sign.
    """
    later = rounds_after + (0 if over else 1)
    variance = level.spread**2 + rest**2 + later * ROUND_SPREAD**2
    return math.erf(lead / math.sqrt(2 * variance))


def _playout(
    state: RoundState, seat: int, action: Action, level: Level, rounds_after: int
) -> float:
    """Play ``action``, then ``horizon`` heuristic actions; the team's chance (``_chance``)."""
    state, _ = apply(state, seat, action)
    for _ in range(level.horizon):
        if state.phase == "round_over":
            break
        turn = state.turn
        state, _ = apply(state, turn, heuristic_policy(state, turn))
    team = team_of(seat)
    match_lead = state.match_scores[team] - state.match_scores[1 - team]
    over = state.phase == "round_over"
    if not over and level.evaluation is not None:
        lead, residual = predicted_lead(state, team, level.evaluation)
        return _chance(
            lead + match_lead, over=True, level=level, rounds_after=rounds_after, rest=residual
        )
    ours, theirs = score_team(state, team), score_team(state, 1 - team)
    lead = float(ours.total - theirs.total + match_lead)
    if not over:
        lead -= (1 - level.hands) * (ours.hands - theirs.hands)
    return _chance(lead, over=over, level=level, rounds_after=rounds_after)


def _lower_bound(diffs: list[float], doubt: float) -> float:
    """The mean of ``diffs`` less ``doubt`` standard errors."""
    n = len(diffs)
    mean = sum(diffs) / n
    if n < 2:
        return mean
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    return mean - doubt * math.sqrt(var / n)


def search_policy(level: Level, seed: str, *, rounds_after: int = 0) -> Policy:
    """A bot of ``level`` whose worlds are drawn from ``seed`` and the public position.

    ``rounds_after`` is how many rounds the match is expected to play after this
    one (``match.rounds_after``); 0 when this round decides it.
    """

    def choose(state: RoundState, seat: int) -> Action:
        actions = legal_actions(state, seat)
        if len(actions) == 1:
            return actions[0]
        candidates = _candidates(state, seat, actions, level.candidates)
        if len(candidates) == 1:
            return candidates[0]
        key = f"{seed}|{_public_key(state, seat)}"
        button = JOKER_BUTTON in actions
        worlds = [world(state, seat, f"{key}|{i}", button=button) for i in range(level.worlds)]
        base = [_playout(w, seat, candidates[0], level, rounds_after) for w in worlds]
        best, best_margin = candidates[0], 0.0
        for action in candidates[1:]:
            diffs = [
                _playout(w, seat, action, level, rounds_after) - b
                for w, b in zip(worlds, base, strict=True)
            ]
            margin = _lower_bound(diffs, level.doubt)
            if margin > best_margin:
                best, best_margin = action, margin
        return best

    return choose


def level_policy(level: str, seed: str, *, rounds_after: int = 0) -> Policy:
    """The bot for a difficulty level by name (``LEVELS``); ``rounds_after`` as for
    ``search_policy``."""
    if level == "easy":
        return heuristic_policy
    if level == "normal":
        return search_policy(NORMAL, seed, rounds_after=rounds_after)
    if level == "hard":
        return search_policy(HARD, seed, rounds_after=rounds_after)
    raise ValueError(f"unknown level: {level!r}")
