"""DealService: one round per round number, whatever is delivered twice or late."""

from __future__ import annotations

from typing import Any

import pytest

from services.common.events import RoundScored, SeatPlayer, TableFormed, TeamScore
from services.common.ledger import Posting
from services.common.presence import PresenceStore
from services.common.store import GameStore
from services.common.unit_of_work import Outcome
from services.deal.app import DealService
from shared_engine import (
    MatchMode,
    commitment,
    dealer_of_round,
    player_view,
    shuffled,
    start_round,
    threshold_for,
    unpack,
)
from shared_engine.autoplay import auto_play_turn
from tests.services.conftest import PLAYERS, build, put_table, snapshot
from tests.services.fakes import FakeClock, RecordingPusher, RecordingTimers, SeededEntropy

pytestmark = pytest.mark.unit


@pytest.fixture
def deal(deps: dict[str, Any]) -> DealService:
    return build(DealService, deps, turn_seconds=45)


def _formed(table_id: str = "t1", mode: MatchMode = MatchMode.THREE_ROUNDS) -> TableFormed:
    return TableFormed(table_id=table_id, mode=mode, seats={str(s): p for s, p in PLAYERS.items()})  # type: ignore[misc]


def _scored(table_id: str, round_number: int, nxt: str) -> RoundScored:
    zero = TeamScore(melded=0, canastas=0, bonus_threes=0, going_out=0, hands=0, total=0)
    return RoundScored(
        table_id=table_id,
        round=round_number,
        scores={"A": zero, "B": zero},
        totals={"A": 0, "B": 0},
        next=nxt,  # type: ignore[arg-type]
        seed="s",
        commitment="c",
    )


def test_table_formed_deals_round_one_from_a_fresh_seed(
    *,
    deal: DealService,
    store: GameStore,
    presence: PresenceStore,
    pusher: RecordingPusher,
    timers: RecordingTimers,
    clock: FakeClock,
    entropy: SeededEntropy,
) -> None:
    presence.add_connection("c1", "p1", "P1", clock.now(), 60)
    presence.add_connection("c3", "p3", "P3", clock.now(), 60)

    deal.table_formed(_formed())

    table = store.get_table("t1")
    assert table is not None and table.state is not None
    assert (table.round, table.version, table.turn_started) == (1, 1, 1)
    assert table.turn_deadline == clock.now() + 45
    assert table.connections == {1: "c1", 2: None, 3: "c3", 4: None}
    (seed,) = entropy.issued
    state = unpack(table.state)
    assert state == start_round(seed, dealer=4, account_jokers=state.account_jokers)
    assert store.history.keys("t1", "ROUND#") == ["ROUND#0001"]
    (dealt,) = store.history.records("t1").rounds
    assert dealt.seed == seed
    assert dealt.commitment == commitment(seed, shuffled(seed))
    assert dealt.dealer == 4
    (started,) = dealt.outbox
    assert started.detail_type == "RoundStarted"
    assert started.detail == {
        "table_id": "t1",
        "round": 1,
        "dealer": 4,
        "commitment": dealt.commitment,
        "version": 1,
    }
    assert timers.scheduled == [("t1", 1, clock.now() + 45)]
    # Each connected seat got its own view, and only its own hand.
    assert {c for c, _ in pusher.sent} == {"c1", "c3"}
    for connection, seat in (("c1", 1), ("c3", 3)):
        (message,) = pusher.to(connection)
        assert message["seat"] == seat
        assert message["view"] == player_view(state, seat).model_dump(mode="json")
        assert seed not in str(message)
    for seat in (1, 2, 3, 4):
        player = presence.get_player(f"p{seat}")
        assert player is not None and (player.table_id, player.seat) == ("t1", seat)


def test_table_formed_twice_deals_once(
    deal: DealService,
    store: GameStore,
    pusher: RecordingPusher,
    timers: RecordingTimers,
    entropy: SeededEntropy,
) -> None:
    deal.table_formed(_formed())
    first = snapshot(store, "t1")
    deal.table_formed(_formed())
    assert snapshot(store, "t1") == first
    assert store.history.keys("t1", "ROUND#") == ["ROUND#0001"]
    assert len(entropy.issued) == 1
    assert len(timers.scheduled) == 1


def test_the_next_round_is_dealt_once_with_the_match_totals(
    deal: DealService, store: GameStore, clock: FakeClock, entropy: SeededEntropy
) -> None:
    finished = auto_play_round(start_round("r1", dealer=4))
    put_table(store, "t1", finished, mode=MatchMode.THREE_ROUNDS, version=50, totals=(1600, -20))

    deal.round_scored(_scored("t1", 1, "round"))
    deal.round_scored(_scored("t1", 1, "round"))

    table = store.get_table("t1")
    assert table is not None and table.state is not None
    assert (table.round, table.version, table.turn_started) == (2, 51, 51)
    assert store.history.keys("t1", "ROUND#") == ["ROUND#0002"]
    state = unpack(table.state)
    assert state.dealer == dealer_of_round(2) == 1
    assert state.turn == 2
    assert state.thresholds == (threshold_for(1600), threshold_for(-20)) == (90, 15)
    assert entropy.issued == ["seed-1"]


@pytest.mark.parametrize("nxt", ["round", "tie_break", "end"])
def test_nothing_is_dealt_while_a_round_is_running(
    deal: DealService, store: GameStore, nxt: str
) -> None:
    put_table(store, "t1", start_round("r1"), mode=MatchMode.THREE_ROUNDS, version=7)
    before = snapshot(store, "t1")
    deal.round_scored(_scored("t1", 1, nxt))
    assert snapshot(store, "t1") == before


def test_nothing_is_dealt_after_the_end_or_for_a_finished_table(
    deal: DealService, store: GameStore, pusher: RecordingPusher
) -> None:
    finished = auto_play_round(start_round("r1"))
    put_table(store, "t1", finished, version=50)
    put_table(store, "t2", finished, version=50, status="finished")
    before = (snapshot(store, "t1"), snapshot(store, "t2"))
    deal.round_scored(_scored("t1", 1, "end"))
    deal.round_scored(_scored("t2", 1, "round"))
    deal.deal("t2", 2)
    deal.deal("missing", 1)
    assert (snapshot(store, "t1"), snapshot(store, "t2")) == before
    assert pusher.sent == []


def test_a_late_round_scored_deals_nothing(deal: DealService, store: GameStore) -> None:
    """RoundScored of round 1 arriving again while round 2 is played."""
    put_table(store, "t1", start_round("r2", dealer=1), mode=MatchMode.THREE_ROUNDS, round_number=2)
    before = snapshot(store, "t1")
    deal.round_scored(_scored("t1", 1, "round"))
    assert snapshot(store, "t1") == before


def test_a_concurrent_deal_loses_quietly(
    deal: DealService, deps: dict[str, Any], store: GameStore, pusher: RecordingPusher
) -> None:
    """Two deliveries of one event race: the one that writes second deals nothing."""
    rival = build(DealService, deps, timers=None, entropy=SeededEntropy("rival"))
    put_table(store, "t1", None, version=0, round_number=0)
    original = store.start_round

    def racing(**kwargs: Any) -> Outcome:
        store.start_round = original  # type: ignore[method-assign]
        rival.deal("t1", 1)
        return original(**kwargs)

    store.start_round = racing  # type: ignore[method-assign]
    deal.deal("t1", 1)

    assert store.history.keys("t1", "ROUND#") == ["ROUND#0001"]
    (dealt,) = store.history.records("t1").rounds
    assert dealt.seed == "rival-1"
    table = store.get_table("t1")
    assert table is not None and table.version == 1
    # Only the winner pushed its deal.
    hands = {tuple(m["view"]["hand"]) for _, m in pusher.sent}
    assert len(pusher.sent) == 4 and len(hands) == 4


def auto_play_round(state: Any) -> Any:
    while not state.round_over:
        state = auto_play_turn(state)
    return state


def test_a_late_table_formed_leaves_players_where_they_are(
    deal: DealService, store: GameStore, presence: PresenceStore, clock: FakeClock
) -> None:
    """The match at t1 is over and its players sit at t2; t1's TableFormed comes again.

    Redelivery must change nothing: not the players' table (they would be sent
    t1's views on sync, and matchmaking would refuse to queue them), not t1.
    """
    finished = auto_play_round(start_round("r1"))
    put_table(
        store, "t1", finished, version=50, status="finished", connections=dict.fromkeys(range(1, 5))
    )
    for seat, player in PLAYERS.items():
        presence.add_connection(f"c{seat}", player.player_id, player.name, clock.now(), 60)
        presence.seat_player(player.player_id, player.name, "t2", seat)
    before = snapshot(store, "t1")

    deal.table_formed(_formed("t1", MatchMode.ONE_ROUND))

    for seat, player in PLAYERS.items():
        seated = presence.get_player(player.player_id)
        assert seated is not None
        assert (seated.table_id, seated.seat) == ("t2", seat), f"{player.player_id} moved back"
    assert snapshot(store, "t1") == before


def test_a_practice_table_deals_each_player_their_spare_jokers_joker_1(
    deal: DealService, store: GameStore, deps: dict[str, Any]
) -> None:
    """JOKER-1 (practice): a bot's seat makes the match practice (MATCH-3), and its players'
    joker buttons still work with their own jokers: the deal reads each player's balance,
    as at any table; a bot has no account and no spare joker."""
    seats = {**PLAYERS, 3: SeatPlayer(player_id="bot-3", name="Bot", bot=True)}
    for player, jokers in (("p1", 2), ("p2", 1), ("bot-3", 5)):
        deps["ledger"].book([Posting(player, "welcome", "welcome", jokers=jokers)], 1.0)
    formed = TableFormed(
        table_id="t1",
        mode=MatchMode.ONE_ROUND,
        seats={str(s): p for s, p in seats.items()},  # type: ignore[misc]
    )

    deal.table_formed(formed)

    table = store.get_table("t1")
    assert table is not None and table.state is not None
    assert unpack(table.state).account_jokers == (2, 1, 0, 0)
