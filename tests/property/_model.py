"""A reference model of the rules, written from RULES.md and docs/rules-rulings.md.

It shares no code with the engine beyond the tile ids (``rank * 4 + colour``,
``0`` for the joker, as documented in ``shared_engine.tiles``) and the
``RoundState`` container it fills. The property tests compare the engine with
it: the same refusal code for every action, and the same next position for
every accepted one.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from shared_engine import (
    Action,
    Discard,
    Draw,
    JokerButton,
    Meld,
    MeldSpec,
    RoundState,
    TakePile,
    to_json,
)

JOKER = 0
COLOURS = "RYKB"
BONUS_THREES = frozenset({3 * 4 + 0, 3 * 4 + 1})  # 3R, 3Y
BLOCKING_THREES = (3 * 4 + 2, 3 * 4 + 3)  # 3K before 3B (auto-play ruling)
CANASTA = 7


def rank(tile: int) -> int:
    return tile >> 2


def points(tile: int) -> int:
    """RULES.md, tile values (a three is worth nothing at face value)."""
    if tile == JOKER:
        return 50
    r = rank(tile)
    if r == 1:
        return 25
    if r == 2:
        return 20
    if r == 3:
        return 0
    return 5 if r <= 9 else 10


def is_natural(tile: int) -> bool:
    """Terms: a tile of rank 1 or 4-13."""
    return tile != JOKER and rank(tile) not in (2, 3)


def team_of(seat: int) -> int:
    """Team A (0) = seats 1 and 3, team B (1) = seats 2 and 4."""
    return 0 if seat in (1, 3) else 1


def threshold(total: int) -> int:
    """OPEN-2."""
    if total < 0:
        return 15
    if total < 1500:
        return 50
    if total < 3000:
        return 90
    if total < 7000:
        return 120
    return 150


def has_canasta(melds: Any) -> bool:
    """OUT-1: a meld of seven or more tiles."""
    return any(len(m) >= CANASTA for m in melds)


def meld_problem(meld_rank: int, tiles: list[int] | tuple[int, ...], twos: bool) -> str | None:
    """MELD-1/2/3/6 on a meld as it stands; None when it is a valid meld."""
    if meld_rank == 3 or any(rank(t) == 3 for t in tiles):
        return "threes_not_meldable"
    if meld_rank == 2 and not twos:
        return "no_twos_meld"
    if meld_rank not in (1, 2, *range(4, 14)):
        return "malformed"
    naturals = sum(1 for t in tiles if rank(t) == meld_rank)
    wilds = sum(1 for t in tiles if rank(t) != meld_rank and (t == JOKER or rank(t) == 2))
    if naturals + wilds != len(tiles):
        return "mixed_ranks"
    if len(tiles) < 3:
        return "meld_too_small"
    limit = 2 if meld_rank == 2 else 3
    if wilds > limit or wilds >= naturals:
        return "too_many_wilds"
    return None


# --- the reference model of ``apply`` --------------------------------------------


TILE_IDS = frozenset({JOKER, *(r * 4 + c for r in range(1, 14) for c in range(4))})


def _malformed(action: object) -> bool:
    """Refusal 1: not a well-formed action (also for actions built in code)."""
    if isinstance(action, (Meld, TakePile)):
        specs = action.melds
        ranks = [s.rank for s in specs]
        return (
            not specs
            or any(not 1 <= s.rank <= 13 or not s.tiles for s in specs)
            or any(t not in TILE_IDS for s in specs for t in s.tiles)
            or len(set(ranks)) != len(ranks)
        )
    if isinstance(action, Discard):
        return action.tile not in TILE_IDS
    return not isinstance(action, (Draw, JokerButton))


def stock_exhausted(stock: tuple[int, ...]) -> bool:
    """STOCK-1, STOCK-2: the stock's last tile is drawn; bonus threes left still count."""
    return not stock


def _phase_error(state: RoundState, action: Action) -> str | None:
    """Refusal 4 of the ruling on the order of refusals: the action must fit the phase."""
    if isinstance(action, Discard):
        return None if state.phase in ("play", "first_discard") else "wrong_phase"
    wanted = "play" if isinstance(action, Meld) else "draw"
    return None if state.phase == wanted else "wrong_phase"


def _set(values: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    items = list(values)
    items[index] = value
    return tuple(items)


def _specs(
    state: RoundState, seat: int, specs: tuple[MeldSpec, ...], top: int | None
) -> RoundState | str:
    """The meld checks in the ruling's order; the position after a valid meld or pickup."""
    hand = Counter(state.hands[seat - 1])
    needed = Counter(t for spec in specs for t in spec.tiles)
    if needed - hand:
        return "tile_not_in_hand"
    if top is not None:
        pair = [s for s in specs if s.rank == rank(top)]
        if not pair or sum(1 for t in pair[0].tiles if rank(t) == rank(top)) < 2:
            return "pile_needs_pair"
    team = team_of(seat)
    melds = list(state.melds[team])
    value = 0
    for spec in specs:
        added = list(spec.tiles)
        if top is not None and spec.rank == rank(top):
            added.append(top)
        existing = list(melds[spec.rank])
        # The meld as it would stand; a new one is just the added tiles (MELD-1).
        problem = meld_problem(spec.rank, existing + added, state.twos)
        if problem is not None:
            return problem
        melds[spec.rank] = tuple(sorted(existing + added))
        value += sum(points(t) for t in added)
    if not state.opened[team] and value < state.thresholds[team]:
        return "below_threshold"
    rest = list((hand - needed).elements())
    if top is not None:
        rest += state.discard[:-1]
    if not rest:
        return "must_keep_discard"
    if len(rest) == 1 and not has_canasta(melds):
        return "cannot_go_out"
    new = state.copy()
    new.hands = _set(state.hands, seat - 1, tuple(sorted(rest)))
    new.melds = _set(state.melds, team, tuple(melds))
    new.opened = _set(state.opened, team, True)  # type: ignore[assignment]
    if top is not None:
        new.discard = ()
    return new


def _draw(state: RoundState, seat: int) -> RoundState | str:
    if not state.stock:
        return "wrong_phase"
    stock = list(state.stock)
    exposed = []
    while stock and stock[0] in BONUS_THREES:
        exposed.append(stock.pop(0))
    new = state.copy()
    team = team_of(seat)
    new.bonus_threes = _set(state.bonus_threes, team, state.bonus_threes[team] + tuple(exposed))
    if not stock:  # STOCK-2: no replacement for a bonus three
        new.stock = ()
        new.phase = "round_over"
        return new
    drawn = stock.pop(0)
    new.stock = tuple(stock)
    new.hands = _set(state.hands, seat - 1, tuple(sorted((*state.hands[seat - 1], drawn))))
    new.phase = "play"
    return new


def _joker_button(state: RoundState, seat: int) -> RoundState | str:
    if state.joker_used[seat - 1] or state.account_jokers[seat - 1] < 1:
        return "joker_button_unavailable"
    if JOKER not in state.stock:
        return "joker_button_unavailable"
    stock = list(state.stock)
    stock.remove(JOKER)
    new = state.copy()
    new.stock = tuple(stock)
    new.hands = _set(state.hands, seat - 1, tuple(sorted((*state.hands[seat - 1], JOKER))))
    new.account_jokers = _set(state.account_jokers, seat - 1, state.account_jokers[seat - 1] - 1)
    new.joker_used = _set(state.joker_used, seat - 1, True)
    new.phase = "play"
    return new


def _take_pile(state: RoundState, seat: int, action: TakePile) -> RoundState | str:
    if not state.discard:
        return "pile_empty"
    top = state.discard[-1]
    if not is_natural(top):
        return "pile_blocked"
    new = _specs(state, seat, action.melds, top)
    if isinstance(new, RoundState):
        new.phase = "play"
    return new


def _discard(state: RoundState, seat: int, tile: int) -> RoundState | str:
    hand = list(state.hands[seat - 1])
    if tile not in hand:
        return "tile_not_in_hand"
    going_out = len(hand) == 1
    if going_out and not has_canasta(state.melds[team_of(seat)]):
        return "cannot_go_out"
    hand.remove(tile)
    new = state.copy()
    new.hands = _set(state.hands, seat - 1, tuple(hand))
    new.discard = (*state.discard, tile)
    if going_out or stock_exhausted(state.stock):
        new.phase = "round_over"
        new.went_out = seat if going_out else None
    else:
        new.turn = seat % 4 + 1
        new.phase = "draw"
    return new


def model_apply(state: RoundState, seat: int, action: Action) -> RoundState | str:
    """The next position, or the refusal code the rulings name for ``action``."""
    if _malformed(action):
        return "malformed"
    if state.phase == "round_over":
        return "wrong_phase"
    if seat != state.turn:
        return "not_your_turn"
    error = _phase_error(state, action)
    if error:
        return error
    if isinstance(action, Discard):
        new = _discard(state, seat, action.tile)
    elif isinstance(action, Draw):
        new = _draw(state, seat)
    elif isinstance(action, JokerButton):
        new = _joker_button(state, seat)
    elif isinstance(action, TakePile):
        new = _take_pile(state, seat, action)
    else:
        new = _specs(state, seat, action.melds, None)
    if isinstance(new, RoundState):
        new.ply = state.ply + 1
    return new


def normal(state: RoundState) -> dict[str, Any]:
    """A position with every unordered collection sorted, for comparing positions."""
    data = to_json(state)
    data["hands"] = {seat: sorted(hand) for seat, hand in data["hands"].items()}
    data["melds"] = {team: sorted(sorted(m) for m in ms) for team, ms in data["melds"].items()}
    data["bonus_threes"] = {team: sorted(b) for team, b in data["bonus_threes"].items()}
    return data


# --- other oracles ------------------------------------------------------------------


def auto_discards(state: RoundState, seat: int) -> set[int]:
    """The tiles the TABLE-2 ruling allows auto-play to discard, as docs/rules-rulings.md
    words it: one tile, except that it does not say which 2 goes when only 2s are left."""
    hand = state.hands[seat - 1]
    for three in BLOCKING_THREES:
        if three in hand:
            return {three}
    naturals = [t for t in hand if is_natural(t)]

    def key(t: int) -> tuple[int, int, int]:
        return (points(t), rank(t), -(t & 3))

    if naturals:
        melds = state.melds[team_of(seat)]
        lonely = [
            t
            for t in naturals
            if sum(1 for u in hand if rank(u) == rank(t)) == 1 and not melds[rank(t)]
        ]
        return {max(lonely or naturals, key=key)}
    return {JOKER} if JOKER in hand else set(hand)


def canasta_bonus(meld_rank: int, meld: tuple[int, ...]) -> int:
    """CAN-1..3, on the meld's final content."""
    if len(meld) < CANASTA:
        return 0
    clean = all(rank(t) == meld_rank for t in meld)
    if meld_rank == 2:
        return 1000 if clean else 700
    return 500 if clean else 300


def expected_scores(state: RoundState) -> list[dict[str, int]]:
    """SCORE-1/2 and THREE-1/2 for teams A and B."""
    scores = []
    for team in (0, 1):
        melds = state.melds[team]
        seats = (1, 3) if team == 0 else (2, 4)
        per_three = 100 if state.opened[team] else -100
        hand_tiles = [t for seat in seats for t in state.hands[seat - 1]]
        scores.append(
            {
                "melded": sum(points(t) for m in melds for t in m),
                "canastas": sum(canasta_bonus(r, m) for r, m in enumerate(melds) if m),
                "bonus_threes": per_three * len(state.bonus_threes[team]),
                "going_out": 100
                if state.went_out is not None and team_of(state.went_out) == team
                else 0,
                "hands": -sum(100 if rank(t) == 3 else points(t) for t in hand_tiles),
            }
        )
    return scores


def expected_deal(
    order: tuple[int, ...], dealer: int
) -> tuple[dict[int, list[int]], list[int], list[list[int]]]:
    """DEAL-2/DEAL-3 as ruled: one tile at a time from the first player, then threes."""
    first = dealer % 4 + 1
    seats = [(first - 1 + i) % 4 + 1 for i in range(4)]
    hands: dict[int, list[int]] = {seat: [] for seat in seats}
    tiles = list(order)
    for _ in range(14):
        for seat in seats:
            hands[seat].append(tiles.pop(0))
    hands[first].append(tiles.pop(0))
    bonus: list[list[int]] = [[], []]
    for seat in seats:
        while True:
            threes = [t for t in hands[seat] if t in BONUS_THREES]
            if not threes:
                break
            for t in threes:
                hands[seat].remove(t)
                bonus[team_of(seat)].append(t)
                hands[seat].append(tiles.pop(0))
    return hands, tiles, bonus
