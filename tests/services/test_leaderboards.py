"""Leaderboards: each mode's rated players by rating, all time and per month, with every
player's rank counted from the shards' buckets, never a scan (MATCH-3).

The reference is the profiles themselves: sorting every rated player by rating gives
each one's place, and the boards must agree with it at every player.
"""

from __future__ import annotations

import random

import pytest

from services.common.events import SeatPlayer
from services.common.leaderboards import (
    ALL_TIME,
    BOARD_SHARDS,
    FRESH_SECONDS,
    TOP,
    Leaderboards,
    buckets_pk,
    period_of,
    standing_sk,
)
from services.common.memory_storage import MemoryStorage
from services.common.profiles import ProfileStore
from services.common.store import GameStore
from services.common.telemetry import RecordingTelemetry
from services.profile.app import ProfileService
from shared_engine import MatchMode
from tests.scored import scored_table
from tests.services.fakes import FakeClock

pytestmark = pytest.mark.unit

MODE = MatchMode.ONE_ROUND.value
DECEMBER = 1_796_083_200.0  # 2026-12-01 00:00 UTC
JANUARY = 1_798_761_600.0  # 2027-01-01 00:00 UTC


@pytest.fixture
def profiles(storage: MemoryStorage) -> ProfileStore:
    return ProfileStore(storage)


@pytest.fixture
def boards(storage: MemoryStorage, clock: FakeClock) -> Leaderboards:
    return Leaderboards(storage, clock)


@pytest.fixture
def service(store: GameStore, profiles: ProfileStore) -> ProfileService:
    return ProfileService(store, profiles, RecordingTelemetry())


def play(
    store: GameStore,
    service: ProfileService,
    table_id: str,
    players: list[str],
    *,
    a_wins: bool,
    at: float = DECEMBER,
    mode: MatchMode = MatchMode.ONE_ROUND,
) -> None:
    seats = {s: SeatPlayer(player_id=p, name=p.upper()) for s, p in enumerate(players, start=1)}
    totals = (2500, 400) if a_wins else (400, 2500)
    scored_table(store, table_id, mode, [totals], seats, at=at)
    service.match_ended(table_id)


def reference(profiles: ProfileStore, players: list[str], mode: str = MODE) -> list[str]:
    """Every rated player, best first, as the boards order them."""
    rated = [(p, profiles.profile(p)) for p in players]
    shown = {p: r.ratings[mode].shown for p, r in rated if r and mode in r.ratings}
    return sorted(shown, key=lambda p: standing_sk(shown[p], p))


def test_a_match_puts_its_four_on_the_all_time_and_the_months_board(
    store: GameStore, service: ProfileService, boards: Leaderboards
) -> None:
    """The winners (team A: seats 1 and 3) rank above the losers on both boards."""
    play(store, service, "t1", ["p1", "p2", "p3", "p4"], a_wins=True)
    for period in (ALL_TIME, "2026-12"):
        top = boards.top(MODE, period)
        assert [s.rank for s in top] == [1, 2, 3, 4]
        assert {s.player_id for s in top[:2]} == {"p1", "p3"}
        assert {s.name for s in top[2:]} == {"P2", "P4"}
    assert boards.top(MODE, "2027-01") == []
    assert boards.top(MatchMode.THREE_ROUNDS.value, ALL_TIME) == [], "a board per mode"


def test_ranks_and_the_top_100_agree_with_every_players_rating(
    store: GameStore, profiles: ProfileStore, service: ProfileService, boards: Leaderboards
) -> None:
    """160 players, 120 matches at random: more than a top 100, every shard and many
    buckets in use, players moving up and down as they play again."""
    rng = random.Random(31)
    pool = [f"player-{n:03d}" for n in range(160)]
    for number in range(120):
        play(store, service, f"t{number}", rng.sample(pool, 4), a_wins=rng.random() < 0.5)
    expected = reference(profiles, pool)
    assert len(expected) > TOP
    top = boards.top(MODE, ALL_TIME)
    assert [s.player_id for s in top] == expected[:TOP]
    for place, player in enumerate(expected, start=1):
        profile = profiles.profile(player)
        assert profile is not None
        shown = profile.ratings[MODE].shown
        assert boards.rank(MODE, ALL_TIME, player, shown) == place, player


def test_the_buckets_count_each_rated_player_once(
    store: GameStore, storage: MemoryStorage, service: ProfileService
) -> None:
    """A player who plays again moves between buckets: the old one counts them no more."""
    rng = random.Random(7)
    pool = [f"player-{n:02d}" for n in range(12)]
    for number in range(30):
        play(store, service, f"t{number}", rng.sample(pool, 4), a_wins=rng.random() < 0.5)
    counted = sum(
        int(item["players"])
        for shard in range(BOARD_SHARDS)
        for item in storage.query("profiles", buckets_pk(MODE, ALL_TIME, shard))
    )
    assert counted == len(pool)


def test_a_new_month_starts_an_empty_board_and_keeps_the_last_ones(
    store: GameStore, profiles: ProfileStore, service: ProfileService, boards: Leaderboards
) -> None:
    play(store, service, "t1", ["p1", "p2", "p3", "p4"], a_wins=True, at=DECEMBER)
    december = boards.top(MODE, period_of(DECEMBER))
    play(store, service, "t2", ["p1", "p5", "p6", "p7"], a_wins=True, at=JANUARY)
    assert boards.top(MODE, "2026-12") == december, "December's board as it ended"
    january = boards.top(MODE, "2027-01")
    assert {s.player_id for s in january} == {"p1", "p5", "p6", "p7"}
    assert len(boards.top(MODE, ALL_TIME)) == 7
    p1 = profiles.profile("p1")
    assert p1 is not None and p1.months[MODE] == "2027-01"
    shown = p1.ratings[MODE].shown
    assert boards.rank(MODE, "2027-01", "p1", shown) == 1


def test_a_second_delivery_and_a_practice_match_move_no_standing(
    store: GameStore, storage: MemoryStorage, service: ProfileService, boards: Leaderboards
) -> None:
    play(store, service, "t1", ["p1", "p2", "p3", "p4"], a_wins=True)
    before = boards.top(MODE, ALL_TIME)
    service.match_ended("t1")
    bot = SeatPlayer(player_id="bot:QQQQ-4", name="Bot", bot=True)
    seats = {1: SeatPlayer(player_id="p1", name="P1"), 2: bot}
    seats |= {3: SeatPlayer(player_id="p3", name="P3"), 4: bot}
    scored_table(store, "practice", MatchMode.ONE_ROUND, [(400, 2500)], seats, at=DECEMBER)
    service.match_ended("practice")
    assert boards.top(MODE, ALL_TIME) == before


def test_each_mode_has_its_own_rating_and_board(
    store: GameStore, profiles: ProfileStore, service: ProfileService, boards: Leaderboards
) -> None:
    """A one-round win and a three-round loss: two ratings, each on its mode's board."""
    play(store, service, "t1", ["p1", "p2", "p3", "p4"], a_wins=True)
    three = MatchMode.THREE_ROUNDS
    seats = {s: SeatPlayer(player_id=f"p{s}", name=f"P{s}") for s in (1, 2, 3, 4)}
    scored_table(store, "t2", three, [(400, 2500)] * 3, seats, at=DECEMBER + 60)
    service.match_ended("t2")
    p1 = profiles.profile("p1")
    assert p1 is not None
    assert p1.ratings[MODE].mu > p1.ratings[three.value].mu
    assert boards.top(MODE, ALL_TIME)[0].player_id in {"p1", "p3"}
    assert boards.top(three.value, ALL_TIME)[0].player_id in {"p2", "p4"}


def test_a_function_reads_a_boards_top_and_buckets_again_only_when_stale(
    store: GameStore,
    storage: MemoryStorage,
    service: ProfileService,
    clock: FakeClock,
) -> None:
    """Every reader of a board reads the same top and counts: kept ``FRESH_SECONDS``."""
    kept = Leaderboards(storage, clock, FRESH_SECONDS)
    play(store, service, "t1", ["p1", "p2", "p3", "p4"], a_wins=True)
    first = kept.top(MODE, ALL_TIME)
    play(store, service, "t2", ["p5", "p6", "p7", "p8"], a_wins=True)
    assert kept.top(MODE, ALL_TIME) == first
    clock.advance(FRESH_SECONDS)
    assert len(kept.top(MODE, ALL_TIME)) == 8
