"""Actions: small internal values for the hot path, one pydantic union at the edge.

The engine applies and lists the frozen dataclasses below. Anything that comes
from outside (a WebSocket message, a scenario file) goes through
``parse_action``, which validates it with one pydantic discriminated union and
turns every defect into ``malformed``.
"""

from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from shared_engine.errors import EngineError
from shared_engine.tiles import NAMES, TILE_KINDS, parse_tile

# Enough for any real action (a hand never reaches 106 tiles), small enough that a
# hostile message cannot make validation expensive.
MAX_TILES_PER_SPEC: Final = 106
MAX_SPECS: Final = 13
_MAX_KEYS: Final = 3


@dataclass(frozen=True, slots=True)
class MeldSpec:
    """Tiles for the team's meld of ``rank``: extends it if it exists, else starts it."""

    rank: int
    tiles: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Draw:
    """TURN-1/TURN-2: take the next stock tile."""


@dataclass(frozen=True, slots=True)
class TakePile:
    """PILE-1..4: take the whole discard pile, melding the top with a pair."""

    melds: tuple[MeldSpec, ...]


@dataclass(frozen=True, slots=True)
class JokerButton:
    """JOKER-1: take a joker from the stock instead of drawing."""


@dataclass(frozen=True, slots=True)
class Meld:
    """Lay new melds and extend the team's melds, atomically."""

    melds: tuple[MeldSpec, ...]


@dataclass(frozen=True, slots=True)
class Discard:
    """End the turn; going out when it is the last tile."""

    tile: int


Action = Draw | TakePile | JokerButton | Meld | Discard

DRAW: Final = Draw()
JOKER_BUTTON: Final = JokerButton()
# Interned so that listing discards allocates nothing.
DISCARDS: Final = {t: Discard(t) for t in TILE_KINDS}


# --- the wire form -------------------------------------------------------------

TileName = Annotated[str, Field(pattern=r"^(JK|([1-9]|1[0-3])[RYKB])$", max_length=3)]


class _Strict(BaseModel):
    # Built on first use: most services never parse an action, and a cold start
    # would otherwise pay for every model's validator.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


class MeldSpecModel(_Strict):
    rank: int = Field(ge=1, le=13)
    tiles: list[TileName] = Field(min_length=1, max_length=MAX_TILES_PER_SPEC)


class DrawModel(_Strict):
    type: Literal["draw"]


class TakePileModel(_Strict):
    type: Literal["take_pile"]
    melds: list[MeldSpecModel] = Field(min_length=1, max_length=MAX_SPECS)


class JokerButtonModel(_Strict):
    type: Literal["joker_button"]


class MeldModel(_Strict):
    type: Literal["meld"]
    melds: list[MeldSpecModel] = Field(min_length=1, max_length=MAX_SPECS)


class DiscardModel(_Strict):
    type: Literal["discard"]
    tile: TileName


ActionModel = Annotated[
    DrawModel | TakePileModel | JokerButtonModel | MeldModel | DiscardModel,
    Field(discriminator="type"),
]


@cache
def action_adapter() -> TypeAdapter[Any]:
    """The validator of the wire form, built by the first action parsed."""
    return TypeAdapter(ActionModel)


def _specs(models: list[MeldSpecModel]) -> tuple[MeldSpec, ...]:
    specs = tuple(MeldSpec(m.rank, tuple(parse_tile(n) for n in m.tiles)) for m in models)
    if len({s.rank for s in specs}) != len(specs):
        raise EngineError("malformed", "each rank may appear once in an action")
    return specs


def parse_action(raw: object) -> Action:
    """A validated action from its wire form (a dict, as decoded from JSON)."""
    if isinstance(raw, dict) and len(raw) > _MAX_KEYS:
        raise EngineError("malformed", "too many fields for an action")
    try:
        model = action_adapter().validate_python(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "action"
        raise EngineError("malformed", f"{where}: {first['msg']}") from None
    return from_model(model)


def from_model(
    model: DrawModel | TakePileModel | JokerButtonModel | MeldModel | DiscardModel,
) -> Action:
    """The internal action of an already validated wire model (e.g. inside a message)."""
    if isinstance(model, DrawModel):
        return DRAW
    if isinstance(model, JokerButtonModel):
        return JOKER_BUTTON
    if isinstance(model, DiscardModel):
        return DISCARDS[parse_tile(model.tile)]
    if isinstance(model, TakePileModel):
        return TakePile(_specs(model.melds))
    return Meld(_specs(model.melds))


def _spec_wire(spec: MeldSpec) -> dict[str, object]:
    return {"rank": spec.rank, "tiles": [NAMES[t] for t in spec.tiles]}


def action_to_wire(action: Action) -> dict[str, object]:
    """The wire form that ``parse_action`` reads back to an equal action."""
    if isinstance(action, Draw):
        return {"type": "draw"}
    if isinstance(action, JokerButton):
        return {"type": "joker_button"}
    if isinstance(action, Discard):
        return {"type": "discard", "tile": NAMES[action.tile]}
    kind = "take_pile" if isinstance(action, TakePile) else "meld"
    return {"type": kind, "melds": [_spec_wire(s) for s in action.melds]}
