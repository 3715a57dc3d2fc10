"""Match rules: thresholds (OPEN-2), dealers (DEAL-2), match end and rewards (MATCH-1..4)."""

from __future__ import annotations

import pytest

from shared_engine.match import (
    PRESENT,
    TEAM_NAMES,
    MatchDecision,
    MatchMode,
    SeatPresence,
    SeatSettlement,
    abandoned,
    account_rewards,
    dealer_of_round,
    decide_after_round,
    first_player,
    held_stake,
    rounds_after,
    settle_match,
    threshold_for,
    winner_after,
    winner_of,
)
from shared_engine.state import team_of

pytestmark = pytest.mark.unit

CONTINUE = MatchDecision(ended=False, winner=None, tie_break=False)
TIE_BREAK = MatchDecision(ended=False, winner=None, tie_break=True)


def won_by(team: int) -> MatchDecision:
    return MatchDecision(ended=True, winner=team, tie_break=False)


@pytest.mark.parametrize(
    ("total", "threshold"),
    [
        (-10_000, 15),
        (-1, 15),
        (0, 50),
        (1_499, 50),
        (1_500, 90),
        (2_999, 90),
        (3_000, 120),
        (6_999, 120),
        (7_000, 150),
        (25_000, 150),
    ],
)
def test_threshold_for_every_boundary_open_2(total: int, threshold: int) -> None:
    assert threshold_for(total) == threshold


@pytest.mark.parametrize(
    ("round_number", "dealer"), [(1, 4), (2, 1), (3, 2), (4, 3), (5, 4), (6, 1), (7, 2), (8, 3)]
)
def test_dealer_of_round_rotates_from_seat_4_deal_2(round_number: int, dealer: int) -> None:
    assert dealer_of_round(round_number) == dealer


@pytest.mark.parametrize(("dealer", "first"), [(1, 2), (2, 3), (3, 4), (4, 1)])
def test_first_player_is_after_the_dealer_deal_2(dealer: int, first: int) -> None:
    assert first_player(dealer) == first


def test_round_1_is_started_by_seat_1() -> None:
    assert first_player(dealer_of_round(1)) == 1


# --- one round ------------------------------------------------------------------


def test_one_round_ends_after_round_1_match_1() -> None:
    assert decide_after_round(MatchMode.ONE_ROUND, (500, 300), 1) == won_by(0)
    assert decide_after_round(MatchMode.ONE_ROUND, (-500, 300), 1) == won_by(1)


def test_one_round_tie_adds_a_round_match_2() -> None:
    assert decide_after_round(MatchMode.ONE_ROUND, (400, 400), 1) == TIE_BREAK
    assert decide_after_round(MatchMode.ONE_ROUND, (400, 400), 2) == TIE_BREAK
    assert decide_after_round(MatchMode.ONE_ROUND, (400, 410), 2) == won_by(1)


# --- three rounds and arena ------------------------------------------------------


@pytest.mark.parametrize("mode", [MatchMode.THREE_ROUNDS, MatchMode.ARENA])
def test_three_rounds_not_ended_before_round_3_match_1(mode: MatchMode) -> None:
    assert decide_after_round(mode, (5_000, 100), 1) == CONTINUE
    assert decide_after_round(mode, (12_000, 100), 2) == CONTINUE
    assert decide_after_round(mode, (100, 100), 2) == CONTINUE


@pytest.mark.parametrize("mode", [MatchMode.THREE_ROUNDS, MatchMode.ARENA])
def test_three_rounds_end_after_round_3_match_1(mode: MatchMode) -> None:
    assert decide_after_round(mode, (900, 1_000), 3) == won_by(1)
    assert decide_after_round(mode, (1_000, 900), 3) == won_by(0)


@pytest.mark.parametrize("mode", [MatchMode.THREE_ROUNDS, MatchMode.ARENA])
def test_three_rounds_tie_after_round_3_adds_a_round_match_2(mode: MatchMode) -> None:
    assert decide_after_round(mode, (1_000, 1_000), 3) == TIE_BREAK
    assert decide_after_round(mode, (1_200, 1_000), 4) == won_by(0)
    assert decide_after_round(mode, (1_200, 1_200), 4) == TIE_BREAK
    assert decide_after_round(mode, (1_200, 1_300), 5) == won_by(1)


# --- to 10,000 --------------------------------------------------------------------


def test_to_10000_continues_below_the_target_match_1() -> None:
    for rounds in (1, 3, 10, 40):
        assert decide_after_round(MatchMode.TO_10000, (9_999, 9_999), rounds) == CONTINUE
        assert decide_after_round(MatchMode.TO_10000, (9_999, -3_000), rounds) == CONTINUE


def test_to_10000_ends_when_a_team_reaches_it_match_1() -> None:
    assert decide_after_round(MatchMode.TO_10000, (10_000, 9_999), 5) == won_by(0)
    assert decide_after_round(MatchMode.TO_10000, (2_000, 10_450), 4) == won_by(1)


def test_to_10000_higher_total_wins_when_both_are_over_match_1() -> None:
    assert decide_after_round(MatchMode.TO_10000, (10_800, 11_200), 6) == won_by(1)
    assert decide_after_round(MatchMode.TO_10000, (12_000, 10_100), 6) == won_by(0)


def test_to_10000_tie_over_the_target_adds_a_round_match_2() -> None:
    assert decide_after_round(MatchMode.TO_10000, (10_500, 10_500), 6) == TIE_BREAK


def test_to_10000_tie_break_that_breaks_the_tie_ends_below_the_target_match_2() -> None:
    """MATCH-2 decision: the tie-break round ends the match once the totals differ."""
    mode = MatchMode.TO_10000
    assert decide_after_round(mode, (9_800, 9_650), 7, tie_break=True) == won_by(0)
    assert decide_after_round(mode, (-200, 300), 7, tie_break=True) == won_by(1)
    assert decide_after_round(mode, (9_800, 9_800), 7, tie_break=True) == TIE_BREAK
    assert decide_after_round(mode, (9_800, 9_650), 7) == CONTINUE


# --- the rounds a settlement pays for ----------------------------------------------


@pytest.mark.parametrize(
    ("mode", "totals_by_round", "winner"),
    [
        (MatchMode.ONE_ROUND, [(500, 300)], 0),
        (MatchMode.ONE_ROUND, [(400, 400), (400, 400), (400, 410)], 1),
        (MatchMode.THREE_ROUNDS, [(100, 0), (100, 200), (900, 1_000)], 1),
        (MatchMode.ARENA, [(0, 0), (10, 0), (50, 50), (70, 60)], 0),
        (MatchMode.TO_10000, [(4_000, 3_000), (8_000, 7_000), (10_100, 9_000)], 0),
        (MatchMode.TO_10000, [(9_000, 9_000), (10_500, 10_500), (9_800, 9_900)], 1),
    ],
    ids=["one", "one-ties", "three", "arena-tie", "10000", "10000-tie-break"],
)
def test_the_winner_after_the_rounds_the_rules_let_the_match_run_match_1_match_2(
    mode: MatchMode, totals_by_round: list[tuple[int, int]], winner: int
) -> None:
    assert winner_after(mode, totals_by_round) == winner


@pytest.mark.parametrize(
    ("mode", "totals_by_round"),
    [
        (MatchMode.ONE_ROUND, []),
        (MatchMode.ONE_ROUND, [(400, 400)]),
        (MatchMode.ONE_ROUND, [(500, 300), (900, 300)]),
        (MatchMode.ONE_ROUND, [(500, 300)] * 1_000_000),
        (MatchMode.THREE_ROUNDS, [(100, 0), (900, 0)]),
        (MatchMode.THREE_ROUNDS, [(100, 0), (100, 200), (900, 1_000), (2_000, 1_000)]),
        (MatchMode.ARENA, [(0, 0), (10, 0), (50, 60), (70, 60)]),
        (MatchMode.TO_10000, [(4_000, 3_000), (8_000, 7_000)]),
        (MatchMode.TO_10000, [(10_100, 9_000), (12_000, 9_000)]),
    ],
    ids=[
        "none",
        "one-tied",
        "one-past-its-end",
        "one-a-million",
        "three-short",
        "three-past-its-end",
        "arena-past-its-end",
        "10000-short",
        "10000-past-its-end",
    ],
)
def test_rounds_beyond_or_short_of_the_match_s_end_name_no_winner_match_1_match_4(
    mode: MatchMode, totals_by_round: list[tuple[int, int]]
) -> None:
    """What pays 1,000 a round (MATCH-3) cannot be inflated by rounds the match never had."""
    assert winner_after(mode, totals_by_round) is None


@pytest.mark.parametrize(
    ("mode", "round_number", "totals", "after"),
    [
        (MatchMode.ONE_ROUND, 1, (0, 0), 0),
        (MatchMode.ONE_ROUND, 2, (700, 700), 0),
        (MatchMode.THREE_ROUNDS, 1, (0, 0), 2),
        (MatchMode.THREE_ROUNDS, 2, (1_500, 900), 1),
        (MatchMode.THREE_ROUNDS, 3, (1_500, 900), 0),
        (MatchMode.ARENA, 1, (0, 0), 2),
        (MatchMode.ARENA, 4, (2_000, 2_000), 0),
        (MatchMode.TO_10000, 1, (0, 0), 14),
        (MatchMode.TO_10000, 9, (8_800, 4_000), 1),
        (MatchMode.TO_10000, 12, (9_500, 9_900), 0),
        (MatchMode.TO_10000, 13, (10_200, 10_200), 0),
    ],
)
def test_rounds_after_are_the_planned_ones_left_or_the_leader_s_way_to_10000_match_1(
    mode: MatchMode, round_number: int, totals: tuple[int, int], after: int
) -> None:
    """MATCH-1 and MATCH-2: a tie-break round is the last one a bot can count on; in the
    10,000 mode the leader's distance at about 700 points a round (from 8,800: this
    round and one more)."""
    assert rounds_after(mode, round_number, totals) == after


@pytest.mark.parametrize("mode", ["to_10000", "arena", "one_round", 3, None])
def test_match_functions_refuse_anything_but_a_match_mode(mode: object) -> None:
    """A plain string equals a member of the StrEnum; it must be refused, not misread."""
    with pytest.raises(TypeError, match="MatchMode"):
        decide_after_round(mode, (10_500, 100), 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="MatchMode"):
        rounds_after(mode, 1, (0, 0))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="MatchMode"):
        account_rewards(mode, 0, 3, stake=500)  # type: ignore[arg-type]


# --- rewards ------------------------------------------------------------------


@pytest.mark.parametrize("mode", [MatchMode.ONE_ROUND, MatchMode.THREE_ROUNDS, MatchMode.TO_10000])
@pytest.mark.parametrize("rounds", [1, 3, 4, 9])
@pytest.mark.parametrize("winner", [0, 1])
def test_rewards_are_1000_per_round_played_match_3(
    mode: MatchMode, rounds: int, winner: int
) -> None:
    rewards = account_rewards(mode, winner, rounds)
    amount = 1_000 * rounds
    winners = (1, 3) if winner == 0 else (2, 4)
    assert set(rewards) == {1, 2, 3, 4}
    for seat, change in rewards.items():
        assert change == (amount if seat in winners else -amount)
    assert sum(rewards.values()) == 0


def test_four_rounds_pay_4000_match_3() -> None:
    assert account_rewards(MatchMode.THREE_ROUNDS, 1, 4) == {
        1: -4_000,
        2: 4_000,
        3: -4_000,
        4: 4_000,
    }


@pytest.mark.parametrize("rounds", [3, 4, 7])
def test_arena_pays_the_stake_whatever_the_rounds_match_4(rounds: int) -> None:
    rewards = account_rewards(MatchMode.ARENA, 0, rounds, stake=250)
    assert rewards == {1: 250, 2: -250, 3: 250, 4: -250}
    assert sum(rewards.values()) == 0


def test_arena_pays_each_winner_two_stakes_from_escrow_match_4() -> None:
    """Gross and net are one computation: the payout is what the winners' balances gain
    back from escrow, and minus the stake held is the net every announcement shows."""
    settlement = settle_match(MatchMode.ARENA, 1, 4, stake=250)
    assert settlement == {
        1: SeatSettlement(held=250, paid=0),
        2: SeatSettlement(held=250, paid=500),
        3: SeatSettlement(held=250, paid=0),
        4: SeatSettlement(held=250, paid=500),
    }
    assert {seat: s.net for seat, s in settlement.items()} == account_rewards(
        MatchMode.ARENA, 1, 4, stake=250
    )
    assert sum(s.paid for s in settlement.values()) == sum(s.held for s in settlement.values())


@pytest.mark.parametrize("mode", [MatchMode.ONE_ROUND, MatchMode.THREE_ROUNDS, MatchMode.TO_10000])
def test_only_arena_holds_a_stake_match_3_match_4(mode: MatchMode) -> None:
    assert held_stake(mode, 500) == 0
    assert held_stake(MatchMode.ARENA, 500) == 500
    assert all(s.held == 0 for s in settle_match(mode, 0, 3, stake=500).values())


# --- who won ------------------------------------------------------------------


def test_the_higher_total_wins_and_a_tie_names_no_winner_match_1_match_2() -> None:
    assert winner_of((1_200, 1_100)) == 0
    assert winner_of((-50, 0)) == 1
    assert winner_of((0, 0)) is None
    assert winner_of((1_500, 1_500)) is None
    assert [TEAM_NAMES[team_of(seat)] for seat in (1, 2, 3, 4)] == ["A", "B", "A", "B"]


@pytest.mark.parametrize("mode", list(MatchMode))
def test_a_tie_when_the_match_is_due_never_goes_to_team_a_match_2(mode: MatchMode) -> None:
    decision = decide_after_round(mode, (10_200, 10_200), 3, tie_break=True)
    assert decision == TIE_BREAK
    assert decision.next == "tie_break"


# --- abandonment --------------------------------------------------------------

GONE = SeatPresence(bot=False, connected=False)
HERE = SeatPresence(bot=False, connected=True)
BOT = SeatPresence(bot=True, connected=False)


def test_a_table_is_abandoned_only_when_every_player_left() -> None:
    assert abandoned((GONE, GONE, GONE, GONE))
    assert not abandoned(PRESENT)
    for seat in range(4):
        one_stays = [GONE] * 4
        one_stays[seat] = HERE
        assert not abandoned(one_stays), f"seat {seat + 1} is still connected"
        one_left = [HERE] * 4
        one_left[seat] = GONE
        assert not abandoned(one_left), "one player's leaving is auto-played (TABLE-2)"


def test_a_table_with_a_bot_is_never_abandoned_match_3() -> None:
    """The host chose to play alone: leaving must not be a way out of a losing match."""
    assert not abandoned((GONE, BOT, GONE, GONE))
    assert not abandoned((BOT, BOT, BOT, GONE))


def test_abandonment_needs_the_four_seats() -> None:
    with pytest.raises(ValueError, match="four seats"):
        abandoned(())


def test_an_abandoned_match_stops_without_a_winner_unless_it_is_over() -> None:
    everyone_left = (GONE,) * 4
    stopped = decide_after_round(MatchMode.THREE_ROUNDS, (500, 300), 1, seats=everyone_left)
    assert stopped == MatchDecision(ended=False, winner=None, tie_break=False, abandoned=True)
    assert stopped.next == "end"
    over = decide_after_round(MatchMode.THREE_ROUNDS, (500, 300), 3, seats=everyone_left)
    assert over == won_by(0)
    assert over.next == "end"
    one_left = (GONE, HERE, HERE, HERE)
    assert decide_after_round(MatchMode.THREE_ROUNDS, (500, 300), 1, seats=one_left) == CONTINUE
    assert CONTINUE.next == "round"
