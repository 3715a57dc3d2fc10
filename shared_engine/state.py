"""The state of one round, and its compact JSON form.

``RoundState`` is immutable by convention: ``apply`` builds a new state from a
shallow copy and replaces only the tuples it changes, so a refused action can
never have touched its input, and old states stay valid for replay and tests.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared_engine.actions import TileName
from shared_engine.errors import EngineError
from shared_engine.match import threshold_for
from shared_engine.melds import meld_error
from shared_engine.tiles import JOKER, NAMES, parse_tiles, rank_of

Phase = Literal["draw", "play", "first_discard", "round_over"]
Variant = Literal["twos-meld", "classic"]
"""The rules a table plays (RULES.md, Variants); the services store and send it as is."""
PHASES: Final[tuple[Phase, ...]] = ("draw", "play", "first_discard", "round_over")
VARIANTS: Final[tuple[Variant, ...]] = get_args(Variant)
TEAMS: Final = ("A", "B")
SEATS: Final = (1, 2, 3, 4)

EMPTY_MELDS: Final[tuple[tuple[int, ...], ...]] = ((),) * 14
"""A team's melds, indexed by rank (MELD-4: at most one per rank)."""

FORMAT_VERSION: Final = 1


def variant_of(name: str) -> Variant:
    """The variant a stored or keyed name stands for (a queue key, an item): the one place
    a string becomes a ``Variant``, so a typo fails loudly instead of playing classic."""
    for variant in VARIANTS:
        if variant == name:
            return variant
    raise ValueError(f"unknown variant {name!r}")


def has_twos_meld(variant: Variant) -> bool:
    """MELD-3, CAN-3: the variants differ only in the meld of twos, so the rules read this
    flag (``RoundState.twos``, ``meld_error``) rather than the variant's name."""
    return variant == "twos-meld"


def team_of(seat: int) -> int:
    """TABLE-1: seats 1 and 3 are team A (0), seats 2 and 4 team B (1)."""
    return (seat - 1) & 1


def next_seat(seat: int) -> int:
    return seat % 4 + 1


class RoundState:
    """Everything about a round in progress; see ``to_json`` for the fields."""

    __slots__ = (
        "account_jokers",
        "bonus_threes",
        "commitment",
        "dealer",
        "discard",
        "hands",
        "joker_used",
        "match_scores",
        "melds",
        "opened",
        "phase",
        "ply",
        "seed",
        "stock",
        "thresholds",
        "turn",
        "twos",
        "went_out",
    )

    twos: bool
    turn: int
    phase: Phase
    hands: tuple[tuple[int, ...], ...]
    stock: tuple[int, ...]
    discard: tuple[int, ...]
    melds: tuple[tuple[tuple[int, ...], ...], ...]
    bonus_threes: tuple[tuple[int, ...], ...]
    opened: tuple[bool, bool]
    thresholds: tuple[int, int]
    match_scores: tuple[int, int]
    account_jokers: tuple[int, ...]
    joker_used: tuple[bool, ...]
    went_out: int | None
    dealer: int
    seed: str | None
    commitment: str | None
    ply: int

    def copy(self) -> RoundState:
        """A shallow copy for ``apply`` to change; spelled out because it is hot."""
        new = object.__new__(RoundState)
        new.twos = self.twos
        new.turn = self.turn
        new.phase = self.phase
        new.hands = self.hands
        new.stock = self.stock
        new.discard = self.discard
        new.melds = self.melds
        new.bonus_threes = self.bonus_threes
        new.opened = self.opened
        new.thresholds = self.thresholds
        new.match_scores = self.match_scores
        new.account_jokers = self.account_jokers
        new.joker_used = self.joker_used
        new.went_out = self.went_out
        new.dealer = self.dealer
        new.seed = self.seed
        new.commitment = self.commitment
        new.ply = self.ply
        return new

    @property
    def variant(self) -> Variant:
        return "twos-meld" if self.twos else "classic"

    @property
    def round_over(self) -> bool:
        return self.phase == "round_over"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RoundState):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in RoundState.__slots__)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RoundState({dumps(self)})"

    def tile_count(self) -> int:
        """Tiles anywhere in the round; 106 for every dealt round (DEAL-1)."""
        return sum(map(len, _all_tiles(self)))


def with_account_jokers(state: RoundState, seat: int, jokers: int) -> RoundState:
    """The state with a seat's spare-joker balance refreshed from the account (JOKER-1)."""
    new = state.copy()
    balances = list(state.account_jokers)
    balances[seat - 1] = jokers
    new.account_jokers = tuple(balances)
    return new


def new_state(
    *,
    variant: Variant,
    turn: int,
    phase: Phase,
    hands: tuple[tuple[int, ...], ...],
    stock: tuple[int, ...],
    discard: tuple[int, ...] = (),
    melds: tuple[tuple[tuple[int, ...], ...], ...] = (EMPTY_MELDS, EMPTY_MELDS),
    bonus_threes: tuple[tuple[int, ...], ...] = ((), ()),
    opened: tuple[bool, bool] | None = None,
    thresholds: tuple[int, int] = (50, 50),
    match_scores: tuple[int, int] = (0, 0),
    account_jokers: tuple[int, ...] = (0, 0, 0, 0),
    joker_used: tuple[bool, ...] = (False, False, False, False),
    went_out: int | None = None,
    dealer: int = 4,
    seed: str | None = None,
    commitment: str | None = None,
    ply: int = 0,
) -> RoundState:
    s = object.__new__(RoundState)
    s.twos = has_twos_meld(variant)
    s.turn = turn
    s.phase = phase
    s.hands = tuple(tuple(sorted(h)) for h in hands)
    s.stock = stock
    s.discard = discard
    s.melds = melds
    s.bonus_threes = bonus_threes
    s.opened = opened if opened is not None else (any(melds[0]), any(melds[1]))
    s.thresholds = thresholds
    s.match_scores = match_scores
    s.account_jokers = account_jokers
    s.joker_used = joker_used
    s.went_out = went_out
    s.dealer = dealer
    s.seed = seed
    s.commitment = commitment
    s.ply = ply
    return s


# --- JSON ------------------------------------------------------------------------


def _seat_map(values: tuple[Any, ...]) -> dict[str, Any]:
    return {str(seat): values[seat - 1] for seat in SEATS}


def to_json(state: RoundState) -> dict[str, Any]:
    """The state as JSON-ready data, in the shape of a scenario's ``state``.

    The seed stays in the stored state (the services need it to reveal the
    shuffle after the round) and must never reach a player: views are built by
    ``player_view``, never from this.
    """
    return {
        "format": FORMAT_VERSION,
        "variant": state.variant,
        "turn": state.turn,
        "phase": state.phase,
        "dealer": state.dealer,
        "ply": state.ply,
        "hands": _seat_map(tuple([NAMES[t] for t in h] for h in state.hands)),
        "stock": [NAMES[t] for t in state.stock],
        "discard": [NAMES[t] for t in state.discard],
        "melds": {TEAMS[i]: [[NAMES[t] for t in m] for m in state.melds[i] if m] for i in (0, 1)},
        "bonus_threes": {TEAMS[i]: [NAMES[t] for t in state.bonus_threes[i]] for i in (0, 1)},
        "opened": {TEAMS[i]: state.opened[i] for i in (0, 1)},
        "thresholds": {TEAMS[i]: state.thresholds[i] for i in (0, 1)},
        "match_scores": {TEAMS[i]: state.match_scores[i] for i in (0, 1)},
        "account_jokers": _seat_map(state.account_jokers),
        "joker_button_used": [seat for seat in SEATS if state.joker_used[seat - 1]],
        "went_out": state.went_out,
        "seed": state.seed,
        "commitment": state.commitment,
    }


def dumps(state: RoundState) -> str:
    """Compact JSON text, as stored in one DynamoDB item."""
    return json.dumps(to_json(state), separators=(",", ":"))


def loads(text: str) -> RoundState:
    return from_json(json.loads(text))


def meld_rank(tiles: tuple[int, ...]) -> int:
    """The rank of a meld: that of its naturals (2 for the meld of twos).

    Naturals outnumber wilds in every meld (MELD-2, MELD-3), so the most common
    rank among the non-jokers is the meld's rank, aces with 2s included.
    """
    ranks = [rank_of(t) for t in tiles if t != JOKER]
    return max(set(ranks), key=ranks.count) if ranks else 0


SeatKey = Literal["1", "2", "3", "4"]
TeamKey = Literal["A", "B"]
SEAT_KEYS: Final[tuple[SeatKey, ...]] = ("1", "2", "3", "4")


class StateModel(BaseModel):
    """The JSON shape of a round (``to_json``), also a scenario's ``state`` block.

    Scenario states omit most keys; the defaults are those of SCENARIOS.md.
    """

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    format: int = FORMAT_VERSION
    variant: Variant = "twos-meld"
    turn: int = Field(ge=1, le=4)
    phase: Phase = "draw"
    dealer: int = Field(default=4, ge=1, le=4)
    ply: int = Field(default=0, ge=0)
    hands: dict[SeatKey, list[TileName]]
    stock: list[TileName]
    discard: list[TileName] = Field(default_factory=list)
    melds: dict[TeamKey, list[list[TileName]]] = Field(default_factory=dict)
    bonus_threes: dict[TeamKey, list[Literal["3R", "3Y"]]] = Field(default_factory=dict)
    opened: dict[TeamKey, bool] = Field(default_factory=dict)
    thresholds: dict[TeamKey, int] = Field(default_factory=dict)
    match_scores: dict[TeamKey, int] = Field(default_factory=dict)
    account_jokers: dict[SeatKey, Annotated[int, Field(ge=0)]] = Field(default_factory=dict)
    joker_button_used: list[Annotated[int, Field(ge=1, le=4)]] = Field(default_factory=list)
    went_out: int | None = Field(default=None, ge=1, le=4)
    seed: str | None = None
    commitment: str | None = None


def _meld_slots(team_melds: list[list[str]], twos: bool) -> tuple[tuple[int, ...], ...]:
    """A team's melds by rank, each checked against MELD-1..3 and MELD-6."""
    slots: list[tuple[int, ...]] = list(EMPTY_MELDS)
    for meld in team_melds:
        tiles = tuple(sorted(parse_tiles(meld)))
        rank = meld_rank(tiles)
        if meld_error(rank, tiles, twos=twos) is not None or slots[rank]:
            raise EngineError("malformed", f"not a valid meld: {meld}")
        slots[rank] = tiles
    return tuple(slots)


def from_json(raw: Mapping[str, Any]) -> RoundState:
    """A state from ``to_json`` output or from a scenario's ``state`` block.

    Anything that does not describe a position is ``malformed``: wrong types,
    unknown keys, invalid melds, or more than two copies of a tile.
    """
    try:
        m = StateModel.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "state"
        raise EngineError("malformed", f"{where}: {first['msg']}") from None
    twos = has_twos_meld(m.variant)
    melds = (_meld_slots(m.melds.get("A", []), twos), _meld_slots(m.melds.get("B", []), twos))
    state = new_state(
        variant=m.variant,
        turn=m.turn,
        phase=m.phase,
        hands=tuple(parse_tiles(m.hands.get(key, [])) for key in SEAT_KEYS),
        stock=parse_tiles(m.stock),
        discard=parse_tiles(m.discard),
        melds=melds,
        bonus_threes=(
            parse_tiles(m.bonus_threes.get("A", [])),
            parse_tiles(m.bonus_threes.get("B", [])),
        ),
        opened=(
            m.opened.get("A", any(melds[0])),
            m.opened.get("B", any(melds[1])),
        ),
        thresholds=(
            m.thresholds.get("A", threshold_for(m.match_scores.get("A", 0))),
            m.thresholds.get("B", threshold_for(m.match_scores.get("B", 0))),
        ),
        match_scores=(m.match_scores.get("A", 0), m.match_scores.get("B", 0)),
        account_jokers=tuple(m.account_jokers.get(key, 0) for key in SEAT_KEYS),
        joker_used=tuple(seat in m.joker_button_used for seat in SEATS),
        went_out=m.went_out,
        dealer=m.dealer,
        seed=m.seed,
        commitment=m.commitment,
        ply=m.ply,
    )
    copies = Counter(t for group in _all_tiles(state) for t in group)
    if any(n > 2 for n in copies.values()):
        raise EngineError("malformed", "more than two copies of a tile")
    return state


def _all_tiles(state: RoundState) -> list[tuple[int, ...]]:
    return [
        *state.hands,
        state.stock,
        state.discard,
        *(m for team in state.melds for m in team),
        *state.bonus_threes,
    ]
