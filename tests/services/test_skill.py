"""Arena tables matched by skill (``services/matchmaking/skill.py``): the window around
the oldest player widens with their wait, and the teams are as even as the four allow.

The team seating is checked against every ordering of the four (the exhaustive
reference); the queue's use of it is in ``test_matchmaking_app.py``.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

import pytest

from services.matchmaking.skill import WIDENING, WINDOW, pick, seat_teams, team_gap, window

pytestmark = pytest.mark.unit


@dataclass(frozen=True)
class Seeker:
    name: str
    queued_at: float
    rating: float | None


def seekers(*ratings: float | None) -> list[Seeker]:
    return [Seeker(f"p{n}", float(n), r) for n, r in enumerate(ratings, start=1)]


def test_the_teams_are_the_most_even_of_every_seating_of_the_four() -> None:
    rng = random.Random(26)
    for _ in range(500):
        four = tuple(Seeker(str(n), n, rng.uniform(0, 50)) for n in range(4))
        seated = seat_teams(four)  # type: ignore[arg-type]
        best = min(team_gap(order) for order in itertools.permutations(four))
        assert team_gap(seated) == pytest.approx(best)
        assert seated[0] is four[0], "the oldest keeps seat 1"
        assert sorted(s.name for s in seated) == ["0", "1", "2", "3"]


def test_equal_ratings_sit_in_the_order_they_queued() -> None:
    four = tuple(seekers(25.0, 25.0, None, 25.0))
    assert seat_teams(four) == four  # type: ignore[arg-type]


def test_a_player_out_of_every_window_waits_until_the_windows_reach_them() -> None:
    waiting = seekers(25.0, 25.5, 26.0, 40.0)
    assert pick(waiting, now=4.0) is None, "40 is 15 from the others, windows are ~3"
    # The first window to reach 40: each player's from when they queued.
    first = min(w.queued_at + (40.0 - (w.rating or 0) - WINDOW) / WIDENING for w in waiting[:3])
    assert pick(waiting, now=first - 0.1) is None
    seated = pick(waiting, now=first)
    assert seated is not None and {s.name for s in seated} == {"p1", "p2", "p3", "p4"}
    assert window(0) == WINDOW and window(-5) == WINDOW


def test_the_oldest_is_served_first_with_the_nearest_ratings() -> None:
    waiting = seekers(25.0, 26.9, 25.1, 25.3, 25.2, 10.0)
    seated = pick(waiting, now=6.0)
    assert seated is not None
    assert {s.name for s in seated} == {"p1", "p3", "p4", "p5"}, "the three nearest to p1"


def test_when_the_oldest_has_no_table_the_next_oldest_may() -> None:
    waiting = seekers(0.0, 30.0, 30.5, 31.0, 31.5)
    seated = pick(waiting, now=5.0)
    assert seated is not None and "p1" not in {s.name for s in seated}
