"""Players' profiles: each one's match history, stats per mode and rating, as records,
and the one write that adds a match to its four players' profiles.

A match is added once, whatever delivers its result how often: the write is one
transaction holding a create-only ``MATCH#<table>``/``PROFILED`` marker, every
history entry it adds and each profile at the version it was read. A second
delivery finds the marker (``AlreadyDone``); a profile another match changed since
it was read refuses the whole write (``VersionConflict``), which is then decided again
on a fresh read. Stats are counters kept on the profile, never a scan of the history.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Literal

from services.common.frozen import Frozen, field
from services.common.leaderboards import Change, board_writes
from services.common.unit_of_work import (
    Absent,
    AlreadyDone,
    Condition,
    Equals,
    Item,
    Key,
    Outcome,
    Put,
    Storage,
    VersionConflict,
)

PROFILE_SK = "PROFILE"
PROFILED_SK = "PROFILED"
HISTORY = "MATCH#"
"""How a player's history entries' sort keys start: newest first (``history_sk``)."""
LATEST = 10**10
"""Seconds since the epoch below which every end time falls: ``LATEST - ended_at`` sorts
a player's matches newest first in an ascending query, so the last ones are read first."""
Result = Literal["won", "lost"]


def player_pk(player_id: str) -> str:
    return f"PLAYER#{player_id}"


def match_pk(table_id: str) -> str:
    return f"MATCH#{table_id}"


def history_sk(ended_at: float, table_id: str) -> str:
    return f"{HISTORY}{LATEST - ended_at:016.3f}#{table_id}"


class Rating(Frozen):
    """A skill estimate and its uncertainty (``mu``, ``sigma``: the rating model's)."""

    mu: float
    sigma: float

    @property
    def shown(self) -> float:
        """The rating a player and a leaderboard see: three deviations below the estimate,
        so a new, uncertain player is not ranked on a lucky first match."""
        return self.mu - 3 * self.sigma


class ModeStats(Frozen):
    """A player's rated matches in one mode, as counters added to once per match."""

    matches: int = 0
    wins: int = 0
    rounds: int = 0
    round_points: int = 0
    """The sum of their team's round scores over every round played."""
    canasta_points: int = 0
    """The sum of their team's canasta bonuses (SCORE-1) over every round played."""
    out_first: int = 0
    """Rounds their team went out (OUT-1)."""
    clean: int = 0
    dirty: int = 0
    twos: int = 0
    """Their team's canastas of each kind (CAN-1..3) over every round played."""

    @property
    def win_rate(self) -> float:
        return self.wins / self.matches if self.matches else 0.0

    @property
    def average_round(self) -> float:
        return self.round_points / self.rounds if self.rounds else 0.0

    def plus(self, other: ModeStats) -> ModeStats:
        return ModeStats(*(a + b for a, b in zip(_counts(self), _counts(other), strict=True)))


def _counts(stats: ModeStats) -> tuple[int, ...]:
    return (
        stats.matches,
        stats.wins,
        stats.rounds,
        stats.round_points,
        stats.canasta_points,
        stats.out_first,
        stats.clean,
        stats.dirty,
        stats.twos,
    )


class Profile(Frozen):
    """A player's rating and stats in each mode they played rated, at a version.

    A mode is a game of its own (a one-round match rewards other play than a race to
    10,000), so each has its own rating and its own leaderboard; ``months`` names the
    last month the player was rated in each mode, where their monthly standing is."""

    player_id: str
    version: int = 0
    ratings: dict[str, Rating] = field(default_factory=dict)
    stats: dict[str, ModeStats] = field(default_factory=dict)
    months: dict[str, str] = field(default_factory=dict)

    @property
    def rated(self) -> int:
        """Rated matches, every mode: how many updates the ratings have had."""
        return sum(stats.matches for stats in self.stats.values())

    def to_item(self) -> Item:
        return {
            "pk": player_pk(self.player_id),
            "sk": PROFILE_SK,
            "version": self.version,
            "ratings": json.dumps(
                {mode: [r.mu, r.sigma] for mode, r in sorted(self.ratings.items())}
            ),
            "stats": json.dumps({mode: _counts(s) for mode, s in sorted(self.stats.items())}),
            "months": json.dumps(dict(sorted(self.months.items()))),
        }

    @classmethod
    def from_item(cls, item: Item) -> Profile:
        ratings = json.loads(str(item["ratings"]))
        stats = json.loads(str(item["stats"]))
        return cls(
            player_id=str(item["pk"]).removeprefix("PLAYER#"),
            version=int(item["version"]),
            ratings={mode: Rating(mu, sigma) for mode, (mu, sigma) in ratings.items()},
            stats={mode: ModeStats(*counts) for mode, counts in stats.items()},
            months=json.loads(str(item["months"])),
        )


class MatchEntry(Frozen):
    """One finished match as one of its players sees it in their history."""

    player_id: str
    table_id: str
    ended_at: float
    mode: str
    stake: int
    practice: bool
    seat: int
    partner: str
    opponents: tuple[str, str]
    rounds: tuple[tuple[int, int], ...]
    """Each round's score: their team's, then the other's."""
    result: Result
    points: int
    """What the match changed on their balance (MATCH-3, MATCH-4); 0 for practice."""
    rating_before: Rating | None = None
    rating_after: Rating | None = None

    def to_item(self) -> Item:
        body = {
            "table_id": self.table_id,
            "ended_at": self.ended_at,
            "mode": self.mode,
            "stake": self.stake,
            "practice": self.practice,
            "seat": self.seat,
            "partner": self.partner,
            "opponents": list(self.opponents),
            "rounds": [list(r) for r in self.rounds],
            "result": self.result,
            "points": self.points,
            "rating_before": _rating(self.rating_before),
            "rating_after": _rating(self.rating_after),
        }
        return {
            "pk": player_pk(self.player_id),
            "sk": history_sk(self.ended_at, self.table_id),
            "entry": json.dumps(body),
        }

    @classmethod
    def from_item(cls, item: Item) -> MatchEntry:
        body = json.loads(str(item["entry"]))
        return cls(
            player_id=str(item["pk"]).removeprefix("PLAYER#"),
            table_id=body["table_id"],
            ended_at=body["ended_at"],
            mode=body["mode"],
            stake=body["stake"],
            practice=body["practice"],
            seat=body["seat"],
            partner=body["partner"],
            opponents=tuple(body["opponents"]),
            rounds=tuple(tuple(r) for r in body["rounds"]),
            result=body["result"],
            points=body["points"],
            rating_before=Rating(*body["rating_before"]) if body["rating_before"] else None,
            rating_after=Rating(*body["rating_after"]) if body["rating_after"] else None,
        )


def _rating(rating: Rating | None) -> list[float] | None:
    return [rating.mu, rating.sigma] if rating else None


class ProfileStore:
    """The profiles table: read by the profile service, the players' requests and ``ops``."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def profile(self, player_id: str) -> Profile | None:
        item = self._storage.get("profiles", {"pk": player_pk(player_id), "sk": PROFILE_SK})
        return Profile.from_item(item) if item else None

    def history(self, player_id: str, last: int | None = None) -> list[MatchEntry]:
        """The player's matches, newest first: the ``last`` ones, or all of them."""
        items = self._storage.query("profiles", player_pk(player_id), prefix=HISTORY, limit=last)
        return [MatchEntry.from_item(item) for item in items]

    def profiled(self, table_id: str) -> bool:
        marker: Key = {"pk": match_pk(table_id), "sk": PROFILED_SK}
        return self._storage.get("profiles", marker) is not None

    def add_match(
        self,
        table_id: str,
        entries: list[MatchEntry],
        updated: list[tuple[Profile | None, Profile]],
        boards: Mapping[tuple[str, str], Sequence[Change]],
    ) -> Outcome:
        """Add a match's history entries, its players' updated profiles and their new
        standings on each board (mode, period), once.

        ``updated`` pairs each profile as read (None: none yet) with what it becomes;
        ``AlreadyDone``: the match was added before; ``VersionConflict``: one of them
        changed since it was read, and nothing was written."""
        marker = Put(
            "profiles",
            {"pk": match_pk(table_id), "sk": PROFILED_SK, "players": len(entries)},
            when=Absent(),
            refusal=AlreadyDone(),
        )
        profiles = [
            Put("profiles", new.to_item(), when=_as_read(old), refusal=VersionConflict())
            for old, new in updated
        ]
        history = [Put("profiles", entry.to_item(), when=Absent()) for entry in entries]
        standings = [
            write
            for (mode, period), changes in sorted(boards.items())
            for write in board_writes(mode, period, changes)
        ]
        return self._storage.commit([marker, *profiles, *history, *standings])


def _as_read(old: Profile | None) -> Condition:
    return Absent() if old is None else Equals("version", old.version)
