"""Starting a round: a verifiable, platform-independent shuffle and the deal.

The shuffle is Fisher-Yates driven by SHA-256 in counter mode over the seed,
rather than ``random.Random``: its output is fixed by this file alone, so a
client in any language can recompute the order from the revealed seed and
check it against the commitment published when the round started (DEAL-4).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence

from shared_engine.match import first_player, threshold_for
from shared_engine.state import RoundState, Variant, new_state, next_seat, team_of
from shared_engine.tiles import BONUS_THREES, FULL_SET, NAMES

HAND_SIZE = 14


def _stream(seed: str) -> Iterator[int]:
    counter = 0
    key = seed.encode()
    while True:
        block = hashlib.sha256(key + b":" + counter.to_bytes(8, "big")).digest()
        for i in range(0, 32, 4):
            yield int.from_bytes(block[i : i + 4], "big")
        counter += 1


def shuffled(seed: str) -> tuple[int, ...]:
    """The 106 tiles in the order fixed by ``seed`` (unbiased, by rejection)."""
    return tuple(shuffle(seed, FULL_SET))


def shuffle(seed: str, items: Sequence[int]) -> list[int]:
    """``items`` in the order fixed by ``seed``: the deal's shuffle, for any tiles."""
    tiles = list(items)
    words = _stream(seed)
    for i in range(len(tiles) - 1, 0, -1):
        bound = i + 1
        limit = (1 << 32) - (1 << 32) % bound
        word = next(words)
        while word >= limit:
            word = next(words)
        j = word % bound
        tiles[i], tiles[j] = tiles[j], tiles[i]
    return tiles


def commitment(seed: str, order: tuple[int, ...]) -> str:
    """SHA-256 over the seed and the tile order, published before play."""
    text = seed + "|" + " ".join(NAMES[t] for t in order)
    return hashlib.sha256(text.encode()).hexdigest()


def start_round(
    seed: str,
    *,
    variant: Variant = "twos-meld",
    dealer: int = 4,
    match_scores: tuple[int, int] = (0, 0),
    account_jokers: tuple[int, ...] = (0, 0, 0, 0),
) -> RoundState:
    """DEAL-1..4: shuffle, deal 14 each and 15 to the first player, expose threes.

    ``match_scores`` are the teams' totals before this round; they set the
    opening thresholds (OPEN-2).
    """
    order = shuffled(seed)
    first = first_player(dealer)
    seats = [first, next_seat(first), next_seat(next_seat(first)), dealer]
    hands: dict[int, list[int]] = {seat: [] for seat in seats}
    position = 0
    for _ in range(HAND_SIZE):
        for seat in seats:
            hands[seat].append(order[position])
            position += 1
    hands[first].append(order[position])
    position += 1
    stock = list(order[position:])
    bonus: tuple[list[int], list[int]] = ([], [])
    for seat in seats:
        hand = hands[seat]
        while any(t in BONUS_THREES for t in hand):
            for t in [t for t in hand if t in BONUS_THREES]:
                hand.remove(t)
                bonus[team_of(seat)].append(t)
                hand.append(stock.pop(0))
    return new_state(
        variant=variant,
        turn=first,
        phase="first_discard",
        hands=tuple(tuple(hands[seat]) for seat in (1, 2, 3, 4)),
        stock=tuple(stock),
        bonus_threes=(tuple(bonus[0]), tuple(bonus[1])),
        thresholds=(threshold_for(match_scores[0]), threshold_for(match_scores[1])),
        match_scores=match_scores,
        account_jokers=account_jokers,
        dealer=dealer,
        seed=seed,
        commitment=commitment(seed, order),
    )
