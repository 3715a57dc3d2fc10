"""The engine's one error type, carrying the refusal codes of SCENARIOS.md."""

from __future__ import annotations

from typing import Final, Literal, get_args

ErrorCode = Literal[
    "not_your_turn",
    "wrong_phase",
    "tile_not_in_hand",
    "meld_too_small",
    "mixed_ranks",
    "too_many_wilds",
    "threes_not_meldable",
    "no_twos_meld",
    "below_threshold",
    "pile_empty",
    "pile_blocked",
    "pile_needs_pair",
    "must_keep_discard",
    "cannot_go_out",
    "joker_button_unavailable",
    "malformed",
]

ERROR_CODES: Final[tuple[ErrorCode, ...]] = get_args(ErrorCode)


class EngineError(Exception):
    """A refused action. The state it was applied to is unchanged.

    Clients translate ``code``; ``detail`` is for logs and developers and may
    name the rule id that refused the action.
    """

    def __init__(self, code: ErrorCode, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code: ErrorCode = code
        self.detail = detail
