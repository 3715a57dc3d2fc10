"""A round as one seat knows it, rebuilt from that seat's view.

Hidden tiles (other hands, the stock) are stood in for by placeholders of the
right counts. Since every decision of a fair player depends on nothing hidden
(``legal_actions`` and the bots read only counts of what they cannot see),
a client that holds only its view decides exactly as it would on the real
state: the bots that connect over WebSockets play from this.
"""

from __future__ import annotations

from typing import Any

from shared_engine.state import EMPTY_MELDS, RoundState, meld_rank, new_state
from shared_engine.tiles import parse_tiles, tile
from shared_engine.view import PlayerView

PLACEHOLDER = tile(13, "B")
"""A stand-in for a tile the seat cannot see (never a joker, so JOKER-1 checks stay honest)."""


def _melds(team_melds: list[Any]) -> tuple[tuple[int, ...], ...]:
    slots = list(EMPTY_MELDS)
    for meld in team_melds:
        tiles = tuple(sorted(parse_tiles(meld.tiles)))
        slots[meld_rank(tiles)] = tiles
    return tuple(slots)


def state_from_view(view: PlayerView) -> RoundState:
    seat = view.seat
    hands = tuple(
        parse_tiles(view.hand) if s == seat else (PLACEHOLDER,) * view.hand_sizes[str(s)]
        for s in (1, 2, 3, 4)
    )
    jokers = tuple(view.account_jokers if s == seat else 0 for s in (1, 2, 3, 4))
    used = tuple(view.joker_button_used if s == seat else False for s in (1, 2, 3, 4))
    return new_state(
        variant=view.variant,
        turn=view.turn,
        phase=view.phase,
        hands=hands,
        stock=(PLACEHOLDER,) * view.stock_size,
        discard=parse_tiles(view.discard),
        melds=(_melds(view.melds["A"]), _melds(view.melds["B"])),
        bonus_threes=(parse_tiles(view.bonus_threes["A"]), parse_tiles(view.bonus_threes["B"])),
        opened=(view.opened["A"], view.opened["B"]),
        thresholds=(view.thresholds["A"], view.thresholds["B"]),
        match_scores=(view.match_scores["A"], view.match_scores["B"]),
        account_jokers=jokers,
        joker_used=used,
        went_out=view.went_out,
    )
