"""``apply``: one action on one round, returning the next state and its events.

Every check runs before anything is built, and the new state is a copy, so a
refused action leaves its input exactly as it was. The order of the checks is
the order of refusals in docs/rules-rulings.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared_engine.actions import Action, Discard, Draw, JokerButton, Meld, MeldSpec, TakePile
from shared_engine.errors import EngineError
from shared_engine.events import (
    BonusThreeExposed,
    CanastaCompleted,
    Discarded,
    Event,
    JokerButtonUsed,
    MeldsLaid,
    PileTaken,
    RoundEnded,
    TeamOpened,
    TileDrawn,
)
from shared_engine.melds import meld_error
from shared_engine.state import RoundState, next_seat, team_of
from shared_engine.tiles import (
    BONUS_THREES,
    JOKER,
    NAMES,
    TILE_KINDS,
    VALUES,
    blocks_pickup,
    count_rank,
    rank_of,
)

KINDS = frozenset(TILE_KINDS)

CANASTA_SIZE = 7
JOKER_BUTTON_COST = 1
"""JOKER-1: the spare account jokers one press of the joker button spends, at every table
(a practice table too: it is the player's own joker to spend)."""


def has_canasta(team_melds: tuple[tuple[int, ...], ...]) -> bool:
    """OUT-1: any meld of seven or more tiles (twos included where they exist)."""
    return any(len(m) >= CANASTA_SIZE for m in team_melds)


@dataclass(frozen=True, slots=True)
class MeldPlan:
    """The outcome of a valid meld or pickup, computed before any state is built."""

    hand: tuple[int, ...]
    melds: tuple[tuple[int, ...], ...]
    opens: bool
    completed: tuple[int, ...]


def _remove(hand: tuple[int, ...], tiles: tuple[int, ...]) -> list[int]:
    rest = list(hand)
    for t in tiles:
        rest.remove(t)
    return rest


def plan_melds(
    state: RoundState, seat: int, specs: tuple[MeldSpec, ...], pile_top: int | None = None
) -> MeldPlan | EngineError:
    """Validate a meld action (or a pickup, when ``pile_top`` is given).

    Returns the error rather than raising it: a check that only asks (a test,
    a tool) gets its answer without the cost of an exception.
    """
    hand = state.hands[seat - 1]
    needed: dict[int, int] = {}
    for spec in specs:
        for t in spec.tiles:
            needed[t] = needed.get(t, 0) + 1
    for t, n in needed.items():
        if hand.count(t) < n:
            return EngineError("tile_not_in_hand", f"{NAMES[t]} is not in the hand {n} time(s)")
    top_rank = -1
    if pile_top is not None:
        top_rank = rank_of(pile_top)
        pair = [s for s in specs if s.rank == top_rank]
        if not pair or count_rank(pair[0].tiles, top_rank) < 2:
            return EngineError(
                "pile_needs_pair", "PILE-1: two naturals of the top's rank from the hand"
            )
    team = team_of(seat)
    melds = list(state.melds[team])
    value = 0
    completed: list[int] = []
    for spec in specs:
        added = (
            (*spec.tiles, pile_top)
            if spec.rank == top_rank and pile_top is not None
            else spec.tiles
        )
        existing = melds[spec.rank]
        # The new tiles first: the message names the first of them that does not fit.
        error = meld_error(spec.rank, added + existing, twos=state.twos)
        if error is not None:
            return error
        combined = tuple(sorted(existing + added))
        if len(existing) < CANASTA_SIZE <= len(combined):
            completed.append(spec.rank)
        melds[spec.rank] = combined
        for t in added:
            value += VALUES[t]
    opens = not state.opened[team]
    if opens and value < state.thresholds[team]:
        return EngineError(
            "below_threshold", f"OPEN-1: {value} is below the threshold {state.thresholds[team]}"
        )
    rest = _remove(hand, tuple(t for spec in specs for t in spec.tiles))
    if pile_top is not None:
        rest.extend(state.discard[:-1])
    if not rest:
        return EngineError("must_keep_discard", "OUT-1: keep a tile to discard")
    new_melds = tuple(melds)
    if len(rest) == 1 and not has_canasta(new_melds):
        return EngineError("cannot_go_out", "OUT-2: one tile left and the team has no canasta")
    rest.sort()
    return MeldPlan(tuple(rest), new_melds, opens, tuple(completed))


def _check_turn(state: RoundState, seat: int) -> None:
    if state.phase == "round_over":
        raise EngineError("wrong_phase", "the round is over")
    if seat != state.turn:
        raise EngineError("not_your_turn", f"it is seat {state.turn}'s turn")


def _with_hand(state: RoundState, seat: int, hand: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    hands = list(state.hands)
    hands[seat - 1] = hand
    return tuple(hands)


def _insert(hand: tuple[int, ...], tile: int) -> tuple[int, ...]:
    new = [*hand, tile]
    new.sort()
    return tuple(new)


def _draw(state: RoundState, seat: int) -> tuple[RoundState, list[Event]]:
    stock = state.stock
    if not stock:
        raise EngineError("wrong_phase", "STOCK-1: the stock is empty")
    events: list[Event] = [TileDrawn(seat)]
    exposed: list[int] = []
    i = 0
    while i < len(stock) and stock[i] in BONUS_THREES:
        exposed.append(stock[i])
        events.append(BonusThreeExposed(seat, stock[i]))
        i += 1
    new = state.copy()
    if exposed:
        team = team_of(seat)
        bonus = list(new.bonus_threes)
        bonus[team] = bonus[team] + tuple(exposed)
        new.bonus_threes = tuple(bonus)
    if i == len(stock):
        new.stock = ()
        new.phase = "round_over"
        events.append(RoundEnded(None))
        return new, events
    new.hands = _with_hand(state, seat, _insert(state.hands[seat - 1], stock[i]))
    new.stock = stock[i + 1 :]
    new.phase = "play"
    return new, events


def _joker_button(state: RoundState, seat: int) -> tuple[RoundState, list[Event]]:
    if state.joker_used[seat - 1]:
        raise EngineError("joker_button_unavailable", "JOKER-1: once per round")
    if state.account_jokers[seat - 1] < JOKER_BUTTON_COST:
        raise EngineError("joker_button_unavailable", "JOKER-1: no spare joker on the account")
    if JOKER not in state.stock:
        raise EngineError("joker_button_unavailable", "JOKER-1: no joker left in the stock")
    stock = list(state.stock)
    stock.remove(JOKER)
    new = state.copy()
    new.stock = tuple(stock)
    new.hands = _with_hand(state, seat, _insert(state.hands[seat - 1], JOKER))
    jokers = list(state.account_jokers)
    jokers[seat - 1] -= JOKER_BUTTON_COST
    new.account_jokers = tuple(jokers)
    used = list(state.joker_used)
    used[seat - 1] = True
    new.joker_used = tuple(used)
    new.phase = "play"
    return new, [JokerButtonUsed(seat)]


def _melded(
    state: RoundState, seat: int, plan: MeldPlan, specs: tuple[MeldSpec, ...]
) -> tuple[RoundState, list[Event]]:
    team = team_of(seat)
    new = state.copy()
    new.hands = _with_hand(state, seat, plan.hand)
    team_melds = list(state.melds)
    team_melds[team] = plan.melds
    new.melds = tuple(team_melds)
    events: list[Event] = [MeldsLaid(seat, tuple((s.rank, s.tiles) for s in specs))]
    if plan.opens:
        opened = list(state.opened)
        opened[team] = True
        new.opened = (opened[0], opened[1])
        events.append(TeamOpened(team))
    events.extend(CanastaCompleted(team, rank) for rank in plan.completed)
    return new, events


def _take_pile(state: RoundState, seat: int, action: TakePile) -> tuple[RoundState, list[Event]]:
    if not state.discard:
        raise EngineError("pile_empty", "PILE-1: there is no pile to take")
    top = state.discard[-1]
    if blocks_pickup(top):
        raise EngineError("pile_blocked", f"PILE-2: {NAMES[top]} on top blocks the pickup")
    plan = plan_melds(state, seat, action.melds, top)
    if isinstance(plan, EngineError):
        raise plan
    new, events = _melded(state, seat, plan, action.melds)
    new.discard = ()
    new.phase = "play"
    events.insert(0, PileTaken(seat, state.discard))
    return new, events


def _meld(state: RoundState, seat: int, action: Meld) -> tuple[RoundState, list[Event]]:
    plan = plan_melds(state, seat, action.melds)
    if isinstance(plan, EngineError):
        raise plan
    return _melded(state, seat, plan, action.melds)


def _discard(state: RoundState, seat: int, tile: int) -> tuple[RoundState, list[Event]]:
    hand = state.hands[seat - 1]
    if tile not in hand:
        raise EngineError("tile_not_in_hand", f"{NAMES[tile]} is not in the hand")
    going_out = len(hand) == 1
    if going_out and not has_canasta(state.melds[team_of(seat)]):
        raise EngineError("cannot_go_out", "OUT-1: going out needs a team canasta")
    rest = list(hand)
    rest.remove(tile)
    new = state.copy()
    new.hands = _with_hand(state, seat, tuple(rest))
    new.discard = (*state.discard, tile)
    events: list[Event] = [Discarded(seat, tile)]
    # STOCK-1, STOCK-2: the turn that drew the stock's last tile ends the round. While
    # a tile is left play goes on, even if only bonus threes are left.
    if going_out or not state.stock:
        new.phase = "round_over"
        new.went_out = seat if going_out else None
        events.append(RoundEnded(new.went_out))
    else:
        new.turn = next_seat(seat)
        new.phase = "draw"
    return new, events


def _validate_shape(action: Action) -> None:
    """Shape checks that parsing already makes, repeated for actions built in code."""
    if isinstance(action, Discard):
        if action.tile not in KINDS:
            raise EngineError("malformed", f"not a tile: {action.tile!r}")
        return
    if not isinstance(action, (Meld, TakePile)):
        if not isinstance(action, (Draw, JokerButton)):
            raise EngineError("malformed", f"not an action: {action!r}")
        return
    specs = action.melds
    if not specs:
        raise EngineError("malformed", "an action needs at least one meld spec")
    ranks = set()
    for spec in specs:
        if not 1 <= spec.rank <= 13 or not spec.tiles or not KINDS.issuperset(spec.tiles):
            raise EngineError("malformed", "a meld spec needs a rank 1-13 and tiles")
        ranks.add(spec.rank)
    if len(ranks) != len(specs):
        raise EngineError("malformed", "each rank may appear once in an action")


def apply(state: RoundState, seat: int, action: Action) -> tuple[RoundState, list[Event]]:
    """Apply ``action`` by ``seat``; raises ``EngineError`` and changes nothing if refused."""
    _validate_shape(action)
    _check_turn(state, seat)
    phase = state.phase
    if isinstance(action, Discard):
        if phase not in ("play", "first_discard"):
            raise EngineError("wrong_phase", "TURN-1: draw before discarding")
        new, events = _discard(state, seat, action.tile)
    elif phase == "first_discard":
        raise EngineError("wrong_phase", "DEAL-2: the first player only discards")
    elif isinstance(action, Meld):
        if phase != "play":
            raise EngineError("wrong_phase", "TURN-1: draw before melding")
        new, events = _meld(state, seat, action)
    elif phase != "draw":
        raise EngineError("wrong_phase", "TURN-1: one draw per turn")
    elif isinstance(action, Draw):
        new, events = _draw(state, seat)
    elif isinstance(action, TakePile):
        new, events = _take_pile(state, seat, action)
    else:
        new, events = _joker_button(state, seat)
    new.ply = state.ply + 1
    return new, events
