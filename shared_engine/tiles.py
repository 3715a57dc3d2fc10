"""Tiles as small integers, so that hands, melds and the stock are cheap tuples.

A tile id is ``rank * 4 + colour`` for ranks 1-13 and colours R, Y, K, B, and
``0`` for the joker; ``rank_of`` is therefore the rank, with the joker at
rank 0. Sorting ids sorts a hand by rank and then colour, jokers first. The
rest of the engine asks what a tile is through the named helpers below, never
through its bits.
Notation (``7R``, ``13B``, ``JK``) exists only at the edges: wire, JSON,
scenarios and logs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from shared_engine.errors import EngineError

JOKER: Final = 0
COLOURS: Final = "RYKB"
RANKS: Final = tuple(range(1, 14))
NATURAL_RANKS: Final = (1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13)
TILE_KINDS: Final = (JOKER, *(rank * 4 + colour for rank in RANKS for colour in range(4)))

BONUS_THREES: Final = frozenset({3 * 4 + 0, 3 * 4 + 1})
BLOCKING_THREES: Final = frozenset({3 * 4 + 2, 3 * 4 + 3})

_MAX_ID: Final = 13 * 4 + 3


def tile(rank: int, colour: str) -> int:
    """The id of a rank-and-colour tile; for building positions in code."""
    return rank * 4 + COLOURS.index(colour)


def rank_of(tile_id: int) -> int:
    """The tile's rank, 0 for the joker."""
    return tile_id >> 2


def colour_of(tile_id: int) -> int:
    """The tile's colour as an index into ``COLOURS`` (the joker's is 0)."""
    return tile_id & 3


def is_wild(tile_id: int) -> bool:
    """A joker or a 2: the tiles that can stand in for a natural (MELD-2)."""
    return tile_id == JOKER or rank_of(tile_id) == 2


def plays_wild(tile_id: int, rank: int) -> bool:
    """Whether the tile is a wild in the meld of ``rank``: a 2 is a natural of the 2s' meld."""
    return tile_id == JOKER or (rank_of(tile_id) == 2 and rank != 2)


def is_three(tile_id: int) -> bool:
    """Threes never meld (MELD-6) and cost 100 left in a hand (THREE-2)."""
    return rank_of(tile_id) == 3


def blocks_pickup(top: int) -> bool:
    """PILE-2: a joker, a 2 or a 3 on top of the pile blocks taking it."""
    return top == JOKER or rank_of(top) in (2, 3)


def count_rank(tiles: Iterable[int], rank: int) -> int:
    """How many of ``tiles`` have ``rank`` (rank 0: the jokers)."""
    return sum(1 for t in tiles if rank_of(t) == rank)


def _name(tile_id: int) -> str:
    if tile_id == JOKER:
        return "JK"
    return f"{rank_of(tile_id)}{COLOURS[colour_of(tile_id)]}"


def _value(tile_id: int) -> int:
    rank = rank_of(tile_id)
    if tile_id == JOKER:
        return 50
    if rank == 1:
        return 25
    if rank == 2:
        return 20
    if rank == 3:
        return 0
    return 5 if rank <= 9 else 10


NAMES: Final = tuple(_name(t) if t in TILE_KINDS else "" for t in range(_MAX_ID + 1))
# Face value (RULES.md, tile values); threes score only by THREE-1 and THREE-2.
VALUES: Final = tuple(_value(t) if t in TILE_KINDS else 0 for t in range(_MAX_ID + 1))
_BY_NAME: Final = {NAMES[t]: t for t in TILE_KINDS}

FULL_SET: Final = tuple(sorted(TILE_KINDS * 2))
"""DEAL-1: the 106 tiles, two of each kind."""


def parse_tile(name: str) -> int:
    """A tile id from its notation; anything else is ``malformed``."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise EngineError("malformed", f"not a tile: {name!r}") from None


def parse_tiles(names: Iterable[str]) -> tuple[int, ...]:
    return tuple(parse_tile(name) for name in names)


def names(tiles: Iterable[int]) -> list[str]:
    return [NAMES[t] for t in tiles]


def rank_counts(tiles: Iterable[int]) -> list[int]:
    """Tiles per rank, index 0 being jokers (so ``counts[2]`` are the 2s)."""
    counts = [0] * 14
    for t in tiles:
        counts[rank_of(t)] += 1
    return counts
