"""``player_view``: what one seat may see, and nothing more.

Built field by field from the state, never by filtering a full dump, so a new
secret added to the state cannot leak by default.
"""

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from shared_engine.actions import action_to_wire
from shared_engine.legal import legal_actions
from shared_engine.rules import JOKER_BUTTON_COST
from shared_engine.scoring import canasta_bonus, score_round
from shared_engine.state import TEAMS, Phase, RoundState, Variant, team_of
from shared_engine.tiles import (
    NAMES,
    TILE_KINDS,
    VALUES,
    blocks_pickup,
    count_rank,
    is_wild,
    plays_wild,
    rank_of,
)

Team = Literal["A", "B"]


class _View(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class MeldView(_View):
    rank: int
    tiles: list[str]
    canasta: Literal["clean", "dirty"] | None
    """CAN-1..3, once the meld has seven tiles."""
    compact: bool
    """UI-1: a meld of more than five tiles is drawn compactly."""
    stripe: Literal["yellow", "red"] | None
    """UI-1: yellow at six tiles, red from seven (a complete canasta)."""
    wilds: int
    """How many of its tiles play as wilds (2s and jokers; in the meld of twos, jokers)."""


class ScoreView(_View):
    melded: int
    canastas: int
    bonus_threes: int
    going_out: int
    hands: int
    total: int


class PlayerView(_View):
    seat: int
    team: Team
    teams: dict[str, Team]
    """Each seat's team (TABLE-1: partners sit opposite), so a client names partner and
    opponents without a rule of its own."""
    variant: Variant
    phase: Phase
    turn: int
    hand: list[str]
    hand_sizes: dict[str, int]
    melds: dict[Team, list[MeldView]]
    bonus_threes: dict[Team, list[str]]
    opened: dict[Team, bool]
    thresholds: dict[Team, int]
    match_scores: dict[Team, int]
    discard: list[str]
    stock_size: int
    account_jokers: int
    joker_button_cost: int
    """What one press of the joker button spends of ``account_jokers`` (JOKER-1), at every
    table, a practice table too: a client shows it on the button before it is pressed."""
    joker_button_used: bool
    went_out: int | None
    round_scores: dict[Team, ScoreView] | None
    legal_actions: list[dict[str, object]]
    tile_points: dict[str, int]
    """Face value of each tile in the hand, so a client shows a selection's worth
    without a copy of the value table."""
    wild_ranks: list[int]
    """The ranks that play as wilds, the joker being rank 0 (as in ``JK``'s tile id): 2s and
    jokers, for a client that groups or counts them."""
    wilds_meld_rank: int | None
    """The rank of the meld made of wilds this variant allows (2, the meld of twos,
    MELD-3), or null when there is none (``classic``)."""
    pile_blocked: bool
    """PILE-2: the top of the pile is a 2, a 3 or a joker."""
    pile_pair: bool
    """PILE-1: the hand holds two naturals of the top's rank (the pickup may still be refused
    on other grounds, e.g. the threshold)."""
    commitment: str | None
    """DEAL-4: the shuffle's commitment, public from the deal; the seed comes after the round."""
    revealed: dict[str, list[str]] | None = None
    """Once the round is over, every seat's tiles left in hand (they count against their
    team, SCORE-1), for the round's result; null while the round runs."""


def _meld_view(rank: int, tiles: tuple[int, ...]) -> MeldView:
    bonus = canasta_bonus(rank, tiles)
    clean = bonus in (500, 1000)
    kind: Literal["clean", "dirty"] | None = None if not bonus else "clean" if clean else "dirty"

    ordered = sorted(tiles, key=lambda t: (plays_wild(t, rank), t))
    size = len(tiles)
    stripe: Literal["yellow", "red"] | None = (
        "red" if size >= 7 else "yellow" if size == 6 else None
    )
    return MeldView(
        rank=rank,
        tiles=[NAMES[t] for t in ordered],
        canasta=kind,
        compact=size > 5,
        stripe=stripe,
        wilds=sum(plays_wild(t, rank) for t in tiles),
    )


def player_view(state: RoundState, seat: int) -> PlayerView:
    """The seat's own tiles; of the others only counts; everything public."""
    scores: dict[Team, ScoreView] | None = None
    hand = state.hands[seat - 1]
    blocked, pair = pile_state(hand, state.discard)
    if state.phase == "round_over":
        a, b = (ScoreView(**s.as_dict(), total=s.total) for s in score_round(state))
        scores = {"A": a, "B": b}
    return PlayerView(
        seat=seat,
        team=TEAMS[team_of(seat)],
        teams={str(s): TEAMS[team_of(s)] for s in (1, 2, 3, 4)},
        variant=state.variant,
        phase=state.phase,
        turn=state.turn,
        hand=[NAMES[t] for t in hand],
        hand_sizes={str(s): len(state.hands[s - 1]) for s in (1, 2, 3, 4)},
        melds={
            TEAMS[i]: [_meld_view(rank, m) for rank, m in enumerate(state.melds[i]) if m]
            for i in (0, 1)
        },
        bonus_threes={TEAMS[i]: [NAMES[t] for t in state.bonus_threes[i]] for i in (0, 1)},
        opened={TEAMS[i]: state.opened[i] for i in (0, 1)},
        thresholds={TEAMS[i]: state.thresholds[i] for i in (0, 1)},
        match_scores={TEAMS[i]: state.match_scores[i] for i in (0, 1)},
        discard=[NAMES[t] for t in state.discard],
        stock_size=len(state.stock),
        account_jokers=state.account_jokers[seat - 1],
        joker_button_cost=JOKER_BUTTON_COST,
        joker_button_used=state.joker_used[seat - 1],
        went_out=state.went_out,
        round_scores=scores,
        legal_actions=[action_to_wire(a) for a in legal_actions(state, seat)],
        tile_points={NAMES[t]: VALUES[t] for t in hand},
        wild_ranks=sorted({rank_of(t) for t in TILE_KINDS if is_wild(t)}),
        wilds_meld_rank=2 if state.twos else None,
        pile_blocked=blocked,
        pile_pair=pair,
        commitment=state.commitment,
        revealed=(
            {str(s): [NAMES[t] for t in state.hands[s - 1]] for s in (1, 2, 3, 4)}
            if state.phase == "round_over"
            else None
        ),
    )


def pile_state(hand: Iterable[int], discard: tuple[int, ...]) -> tuple[bool, bool]:
    """Whether the pile's top blocks a pickup (PILE-2), and whether ``hand`` holds the
    pair of naturals of the top's rank a pickup needs (PILE-1)."""
    if not discard:
        return False, False
    top = discard[-1]
    if blocks_pickup(top):
        return True, False
    return False, count_rank(hand, rank_of(top)) >= 2
