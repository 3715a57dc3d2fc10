"""Leaderboards: the rated players of a mode ranked by their rating in it, for all time
and for each month, kept as records written in the one commit that changes the ratings.

A board is sharded: each player's standing sits in one of ``BOARD_SHARDS`` partitions
(a CRC-32 of their id), so the peak's rating changes spread over them
(docs/capacity.md); the top 100 is each shard's first 100, merged. A rank is counted
without a scan: each shard also counts its players per bucket of a hundredth of a
rating point, so a player's rank is the players of every better bucket plus those
ahead of them in their own bucket, a short query per shard whatever the board's size.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime

from services.common.adapters import Clock
from services.common.frozen import Frozen
from services.common.unit_of_work import Delete, Item, Put, Storage, Update, Write

BOARD_SHARDS = 8
"""Partitions of a board: at the peak each takes an eighth of the rating changes."""
TOP = 100
ALL_TIME = "all"
"""The period of the all-time board; a month's is its ``YYYY-MM`` (UTC)."""
SCALE = 1000
"""A standing's key counts thousandths of a rating point."""
OFFSET = 10**7
"""Subtracted from, so that an ascending read lists the highest rating first."""
WIDTH = 8
BUCKET = WIDTH - 1
"""A bucket is the key's first seven digits: ten thousandths, a hundredth of a point, so
that the standings of a player's own bucket are few even on a board of millions."""
FRESH_SECONDS = 10.0
"""How long a function serves a board's top and bucket counts from memory: what every
reader of a board reads alike, read again at most this often (docs/capacity.md)."""


def period_of(at: float) -> str:
    """The month (UTC) a match that ended at ``at`` counts in."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m")


def shard_of(player_id: str) -> int:
    return zlib.crc32(player_id.encode()) % BOARD_SHARDS


def board_pk(mode: str, period: str, shard: int) -> str:
    return f"BOARD#{mode}#{period}#{shard}"


def buckets_pk(mode: str, period: str, shard: int) -> str:
    return f"RANKS#{mode}#{period}#{shard}"


def standing_sk(shown: float, player_id: str) -> str:
    points = min(max(round(shown * SCALE), 1 - OFFSET), OFFSET - 1)
    return f"{OFFSET - points:0{WIDTH}d}#{player_id}"


class Standing(Frozen):
    """A player's place on a board."""

    rank: int
    player_id: str
    name: str
    shown: float


class Change(Frozen):
    """One player's rating on one board: ``before`` None when they were not on it yet."""

    player_id: str
    name: str
    before: float | None
    after: float


def board_writes(mode: str, period: str, changes: Sequence[Change]) -> list[Write]:
    """The writes that move each player to their new standing, and the bucket counts
    with them (one update per bucket whose count changes, as a commit needs)."""
    writes: list[Write] = []
    counts: Counter[tuple[str, str]] = Counter()
    for change in changes:
        shard = shard_of(change.player_id)
        pk, buckets = board_pk(mode, period, shard), buckets_pk(mode, period, shard)
        new = standing_sk(change.after, change.player_id)
        if change.before is not None:
            old = standing_sk(change.before, change.player_id)
            if old != new:
                writes.append(Delete("profiles", {"pk": pk, "sk": old}))
            counts[(buckets, old[:BUCKET])] -= 1
        item: Item = {"pk": pk, "sk": new, "name": change.name, "shown": round(change.after, 3)}
        writes.append(Put("profiles", item))
        counts[(buckets, new[:BUCKET])] += 1
    writes += [
        Update("profiles", {"pk": pk, "sk": sk}, add={"players": count})
        for (pk, sk), count in sorted(counts.items())
        if count
    ]
    return writes


class _Read(Frozen):
    at: float
    top: tuple[Standing, ...]
    buckets: tuple[tuple[str, int], ...]
    """Every bucket of every shard with its players, best first."""


class Leaderboards:
    """The boards as players read them: the top of one, and one player's rank on it.

    The top and the bucket counts are the same for every reader: each function keeps
    them ``fresh_seconds`` (0: read on every call), so a board read by thousands a
    second costs each shard a few reads a second. Only the player's own bucket is read
    for each rank, so a rank is exact as of that read, give or take the players who
    changed buckets in the last ``fresh_seconds``."""

    def __init__(self, storage: Storage, clock: Clock, fresh_seconds: float = 0.0) -> None:
        self._storage = storage
        self._clock = clock
        self._fresh = fresh_seconds
        self._read: dict[tuple[str, str], _Read] = {}

    def top(self, mode: str, period: str) -> list[Standing]:
        """The board's first 100: each shard's first 100, merged."""
        return list(self._board(mode, period).top)

    def rank(self, mode: str, period: str, player_id: str, shown: float) -> int:
        """The place of a player standing at ``shown``: one more than those ahead, counted
        from the buckets before theirs and from the standings of their own bucket."""
        own = standing_sk(shown, player_id)
        bucket = own[:BUCKET]
        ahead = sum(count for sk, count in self._board(mode, period).buckets if sk < bucket)
        for shard in range(BOARD_SHARDS):
            same = self._storage.query("profiles", board_pk(mode, period, shard), prefix=bucket)
            ahead += sum(1 for item in same if str(item["sk"]) < own)
        return ahead + 1

    def _board(self, mode: str, period: str) -> _Read:
        now = self._clock.now()
        kept = self._read.get((mode, period))
        if kept is not None and now - kept.at < self._fresh:
            return kept
        standings: list[Item] = []
        buckets: list[tuple[str, int]] = []
        for shard in range(BOARD_SHARDS):
            standings += self._storage.query("profiles", board_pk(mode, period, shard), limit=TOP)
            counted = self._storage.query("profiles", buckets_pk(mode, period, shard))
            buckets += [(str(item["sk"]), int(item["players"])) for item in counted]
        standings.sort(key=lambda item: str(item["sk"]))
        top = tuple(_standing(rank, item) for rank, item in enumerate(standings[:TOP], start=1))
        read = _Read(now, top, tuple(sorted(buckets)))
        if self._fresh:
            self._read[(mode, period)] = read
        return read


def _standing(rank: int, item: Item) -> Standing:
    return Standing(
        rank=rank,
        player_id=str(item["sk"]).split("#", 1)[1],
        name=str(item["name"]),
        shown=float(str(item["shown"])),
    )
