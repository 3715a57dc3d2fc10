"""Arena tables matched by skill: four players within a rating window that widens with
waiting time, seated so that the two teams' ratings are as even as the four allow.

Pure: the queue's waiting entries in, a table's four in seat order out, so that the
matchmaking simulation (``benchmarks/arena.py``) runs the very rule the queue runs.
The oldest waiting player is served first: the table is formed around them, with
the players nearest their rating inside their window; if none can be formed, around
the next oldest. A window starts at ``WINDOW`` rating points (the model's μ) and
widens by ``WIDENING`` a second, so no one waits long for lack of their equals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

WINDOW = 2.0
"""Rating points (μ) either side of a player's own at the moment they queue."""
WIDENING = 0.25
"""Rating points the window widens by for each second waited."""
POOL = 16
"""The oldest waiting entries a formation chooses from: one bounded read."""
DEFAULT_RATING = 25.0
"""The rating of a player never rated in the mode (the rating model's starting μ)."""


class Waiting(Protocol):
    @property
    def queued_at(self) -> float: ...

    @property
    def rating(self) -> float | None: ...


def skill(waiting: Waiting) -> float:
    return DEFAULT_RATING if waiting.rating is None else waiting.rating


W = TypeVar("W", bound=Waiting)


def window(waited: float) -> float:
    return WINDOW + WIDENING * max(0.0, waited)


def pick(waiting: Sequence[W], now: float) -> tuple[W, W, W, W] | None:
    """Four to seat, in seat order (1 and 3 team A, 2 and 4 team B), or None to wait."""
    oldest = sorted(waiting, key=lambda w: w.queued_at)
    for anchor in oldest:
        reach = window(now - anchor.queued_at)
        own = skill(anchor)
        near = [w for w in oldest if w is not anchor and abs(skill(w) - own) <= reach]
        if len(near) >= 3:
            near.sort(key=lambda w: (abs(skill(w) - own), w.queued_at))
            return seat_teams((anchor, near[0], near[1], near[2]))
    return None


def seat_teams(four: tuple[W, W, W, W]) -> tuple[W, W, W, W]:
    """The four in seat order, of the three ways to make two teams the one whose team
    ratings differ least; of equal ones, the four in the order given (the oldest player
    keeps seat 1, players of equal rating sit in the order they queued)."""
    a, b, c, d = four
    splits = (((a, c), (b, d)), ((a, b), (c, d)), ((a, d), (b, c)))
    (one, two), (three, four_) = min(
        splits, key=lambda s: abs(skill(s[0][0]) + skill(s[0][1]) - skill(s[1][0]) - skill(s[1][1]))
    )
    return (one, three, two, four_)


def team_gap(seated: Sequence[Waiting]) -> float:
    """How far apart the two teams' ratings are (seats 1 and 3 against 2 and 4)."""
    a1, b1, a2, b2 = (skill(w) for w in seated)
    return abs(a1 + a2 - b1 - b2)


def table_spread(seated: Sequence[Waiting]) -> float:
    """The gap between the table's strongest and weakest player."""
    skills = [skill(w) for w in seated]
    return max(skills) - min(skills)
