"""Profiles: a finished match in its players' history, stats and rating, once (MATCH-3).

What a match adds is what the games table's records say (like the ledger's
settlement): a forged or premature ``MatchEnded`` adds nothing. A second delivery
adds nothing; a profile changed by another match between the read and the write is
decided again. ``tests/integration/test_profiles.py`` plays the same on the local stack.
"""

from __future__ import annotations

import pytest

from services.common.events import SeatPlayer
from services.common.identities import host_bot_id
from services.common.memory_storage import MemoryStorage
from services.common.profiles import MatchEntry, ModeStats, Profile, ProfileStore, Rating
from services.common.records import Status
from services.common.store import GameStore
from services.common.telemetry import RecordingTelemetry
from services.common.unit_of_work import Outcome, VersionConflict
from services.profile.app import MODEL, ProfileService
from shared_engine import MatchMode
from tests.scored import scored_table
from tests.services.conftest import PLAYERS

pytestmark = pytest.mark.unit


@pytest.fixture
def profiles(storage: MemoryStorage) -> ProfileStore:
    return ProfileStore(storage)


@pytest.fixture
def service(store: GameStore, profiles: ProfileStore) -> ProfileService:
    return ProfileService(store, profiles, RecordingTelemetry())


def ended(
    store: GameStore,
    table_id: str,
    totals_by_round: list[tuple[int, int]],
    *,
    mode: MatchMode = MatchMode.ONE_ROUND,
    stake: int = 0,
    status: Status = "finished",
    seats: dict[int, SeatPlayer] | None = None,
    at: float = 1_800_000_000.0,
) -> None:
    scored_table(
        store,
        table_id,
        mode,
        totals_by_round,
        seats or PLAYERS,
        stake=stake,
        status=status,
        at=at,
    )


def history(profiles: ProfileStore, player_id: str) -> list[MatchEntry]:
    return profiles.history(player_id)


def test_a_won_match_is_in_each_players_history_as_they_saw_it(
    store: GameStore, profiles: ProfileStore, service: ProfileService
) -> None:
    """MATCH-1, MATCH-3: team A (seats 1 and 3) won the one round, 1,000 points a round."""
    ended(store, "t1", [(2500, 400)])
    service.match_ended("t1")
    (mine,) = history(profiles, "p1")
    assert (mine.result, mine.partner, mine.opponents) == ("won", "P3", ("P2", "P4"))
    assert (mine.rounds, mine.points, mine.practice) == (((2500, 400),), 1000, False)
    (theirs,) = history(profiles, "p2")
    assert (theirs.result, theirs.partner, theirs.rounds, theirs.points) == (
        "lost",
        "P4",
        ((400, 2500),),
        -1000,
    )


def test_stats_count_rated_matches_per_mode_without_a_scan(
    store: GameStore, profiles: ProfileStore, service: ProfileService
) -> None:
    ended(store, "t1", [(2500, 400)])
    ended(store, "t2", [(300, 900)], at=1_800_000_600.0)
    service.match_ended("t1")
    service.match_ended("t2")
    p1 = profiles.profile("p1")
    assert p1 is not None and p1.rated == 2
    stats = p1.stats[MatchMode.ONE_ROUND.value]
    assert (stats.matches, stats.wins, stats.rounds, stats.round_points) == (2, 1, 2, 2800)
    assert stats.win_rate == 0.5 and stats.average_round == 1400
    assert [e.table_id for e in history(profiles, "p1")] == ["t2", "t1"], "newest first"


def test_the_winners_rating_rises_and_the_losers_falls_from_an_uncertain_start(
    store: GameStore, profiles: ProfileStore, service: ProfileService
) -> None:
    ended(store, "t1", [(2500, 400)])
    service.match_ended("t1")
    start = MODEL.rating()
    ratings = {p: profiles.profile(f"p{p}") for p in (1, 2, 3, 4)}
    rated = {p: r.ratings["one_round"] for p, r in ratings.items() if r is not None}
    assert rated[1] == rated[3] and rated[2] == rated[4]
    assert rated[1].mu > start.mu > rated[2].mu
    assert all(r.sigma < start.sigma for r in rated.values()), "a match makes it less uncertain"
    (entry,) = history(profiles, "p1")
    assert entry.rating_before is None and entry.rating_after == rated[1]


def test_a_second_delivery_adds_nothing(
    store: GameStore, profiles: ProfileStore, service: ProfileService
) -> None:
    ended(store, "t1", [(2500, 400)])
    service.match_ended("t1")
    once = profiles.profile("p1")
    service.match_ended("t1")
    assert profiles.profile("p1") == once
    assert len(history(profiles, "p1")) == 1


def test_a_practice_match_is_listed_and_changes_no_stats_and_no_rating(
    store: GameStore, profiles: ProfileStore, service: ProfileService
) -> None:
    """MATCH-3: a seat a host filled with a bot makes the match practice."""
    bot = SeatPlayer(player_id=host_bot_id("ABCD", 4), name="Bot", bot=True)
    ended(store, "t1", [(2500, 400)], seats={**PLAYERS, 4: bot})
    service.match_ended("t1")
    assert profiles.profile("p1") is None
    (entry,) = history(profiles, "p1")
    assert entry.practice and entry.points == 0 and entry.rating_after is None
    assert history(profiles, bot.player_id) == [], "a bot has no profile"


def test_an_arena_match_books_the_stake_won_or_lost(
    store: GameStore, profiles: ProfileStore, service: ProfileService
) -> None:
    """MATCH-4: the winners gain their stake, the losers lose theirs."""
    ended(store, "t1", [(900, 400), (2100, 1500), (5200, 1900)], mode=MatchMode.ARENA, stake=200)
    service.match_ended("t1")
    assert [history(profiles, f"p{seat}")[0].points for seat in (1, 2)] == [200, -200]


@pytest.mark.parametrize(
    ("totals", "status"),
    [
        ([(2500, 400)], "playing"),
        ([(2500, 2500)], "finished"),
        ([(2500, 400)], "aborted"),
    ],
    ids=["still-playing", "a-tie-that-ends-nothing", "aborted"],
)
def test_a_match_its_records_do_not_end_adds_nothing(
    store: GameStore,
    profiles: ProfileStore,
    service: ProfileService,
    totals: list[tuple[int, int]],
    status: Status,
) -> None:
    """A forged ``MatchEnded`` names a table whose records do not end a match (MATCH-2:
    a tie adds a round)."""
    ended(store, "t1", totals, status=status)
    service.match_ended("t1")
    service.match_ended("no-such-table")
    assert [profiles.profile(f"p{s}") for s in (1, 2, 3, 4)] == [None] * 4
    assert history(profiles, "p1") == []


def test_a_profile_another_match_changed_meanwhile_is_read_again(
    store: GameStore,
    profiles: ProfileStore,
    service: ProfileService,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first write finds p1's profile changed since it was read: nothing of it is
    written, and the match is decided again on the new profile."""
    ended(store, "t1", [(2500, 400)])
    original = profiles.add_match
    raced: list[Outcome] = []

    def racing(*args: object, **kwargs: object) -> Outcome:
        if not raced:
            other = Profile(
                "p1",
                version=1,
                ratings={"three_rounds": Rating(25.0, 8.0)},
                stats={"three_rounds": ModeStats(1, 1)},
            )
            assert original("other", [], [(None, other)], {}).ok
            raced.append(original(*args, **kwargs))  # type: ignore[arg-type]
            return raced[0]
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(profiles, "add_match", racing)
    service.match_ended("t1")
    assert isinstance(raced[0], VersionConflict)
    p1 = profiles.profile("p1")
    assert p1 is not None and (p1.version, p1.rated) == (2, 2)
    assert p1.stats["one_round"] == ModeStats(matches=1, wins=1, rounds=1, round_points=2500)
    assert p1.stats["three_rounds"] == ModeStats(1, 1), "the other match's counts are kept"
    assert len(history(profiles, "p1")) == 1
