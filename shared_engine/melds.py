"""Meld validity, in one function for every caller.

A meld action is checked before it is applied (``rules``), and every meld of
a stored or scenario state is checked when the state is read (``state``): the
same rules, so one function answers both, with the code of the first rule the
tiles break.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared_engine.errors import EngineError
from shared_engine.tiles import NAMES, RANKS, is_three, is_wild, rank_of

MAX_WILDS = 3
"""MELD-2: at most three wilds in a meld."""
MAX_JOKERS_WITH_TWOS = 2
"""MELD-3: the meld of 2s takes at most two jokers."""


def meld_error(rank: int, tiles: Sequence[int], *, twos: bool) -> EngineError | None:
    """MELD-1, -2, -3, -6 and the variants: why ``tiles`` cannot stand as the team's meld
    of ``rank``, or None when they can. ``twos`` is the variant where 2s meld."""
    if rank not in RANKS:
        return EngineError("malformed", f"no meld has rank {rank}")
    if rank == 3 or any(is_three(t) for t in tiles):
        return EngineError("threes_not_meldable", "MELD-6: threes never form melds")
    if rank == 2 and not twos:
        return EngineError("no_twos_meld", "classic variant: 2s are only wilds")
    naturals = wilds = 0
    for t in tiles:
        if rank_of(t) == rank:
            naturals += 1
        elif is_wild(t):
            wilds += 1
        else:
            return EngineError("mixed_ranks", f"MELD-1: {NAMES[t]} in a meld of rank {rank}")
    if len(tiles) < 3:
        return EngineError("meld_too_small", "MELD-1: a meld starts with at least three tiles")
    if rank == 2:
        if wilds > MAX_JOKERS_WITH_TWOS or wilds >= naturals:
            return EngineError("too_many_wilds", "MELD-3: at most two jokers, fewer than the 2s")
    elif wilds > MAX_WILDS or wilds >= naturals:
        return EngineError("too_many_wilds", "MELD-2: naturals outnumber wilds, at most three")
    return None
