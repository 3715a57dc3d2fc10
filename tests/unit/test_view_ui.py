"""UI-1: the view tells every client how to draw a meld, so web and mobile agree."""

from __future__ import annotations

import pytest

from shared_engine import from_json, player_view

pytestmark = pytest.mark.unit

MELDS = {
    3: ["7R", "7K", "7B"],
    5: ["8R", "8K", "8B", "8Y", "2R"],
    6: ["9R", "9K", "9B", "9Y", "9R", "JK"],
    7: ["10R", "10K", "10B", "10Y", "10R", "10K", "10B"],
    8: ["11R", "11K", "11B", "11Y", "11R", "11K", "11B", "2K"],
}


@pytest.mark.parametrize(
    ("size", "compact", "stripe", "canasta"),
    [
        (3, False, None, None),
        (5, False, None, None),
        (6, True, "yellow", None),
        (7, True, "red", "clean"),
        (8, True, "red", "dirty"),
    ],
)
def test_ui_1_meld_display_follows_its_size(
    size: int, compact: bool, stripe: str | None, canasta: str | None
) -> None:
    state = from_json(
        {
            "turn": 1,
            "hands": {"1": ["5R", "6R"], "2": ["5K"], "3": ["5B"], "4": ["5Y"]},
            "stock": ["4R"],
            "melds": {"A": [MELDS[size]], "B": []},
        }
    )
    (meld,) = player_view(state, 2).melds["A"]
    assert len(meld.tiles) == size
    assert (meld.compact, meld.stripe, meld.canasta) == (compact, stripe, canasta)
