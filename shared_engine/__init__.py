"""The rules of team Canasta with tiles: pure, deterministic, shared by every service.

Nothing here does I/O, reads a clock or uses a global random source: a round
is a function of its seed and its actions. See docs/rules-rulings.md for the
rulings where RULES.md is silent.
"""

from shared_engine.actions import (
    Action,
    Discard,
    Draw,
    JokerButton,
    Meld,
    MeldSpec,
    TakePile,
    action_to_wire,
    parse_action,
)
from shared_engine.autoplay import auto_discard, auto_play_step, auto_play_turn
from shared_engine.deal import commitment, shuffled, start_round
from shared_engine.errors import ERROR_CODES, EngineError, ErrorCode
from shared_engine.legal import legal_actions
from shared_engine.match import (
    MatchDecision,
    MatchMode,
    account_rewards,
    dealer_of_round,
    decide_after_round,
    first_player,
    threshold_for,
)
from shared_engine.packing import pack, unpack
from shared_engine.rules import apply
from shared_engine.scoring import ScoreBreakdown, score_round
from shared_engine.state import (
    VARIANTS,
    RoundState,
    Variant,
    dumps,
    from_json,
    loads,
    to_json,
    variant_of,
)
from shared_engine.view import PlayerView, player_view

__all__ = [
    "ERROR_CODES",
    "VARIANTS",
    "Action",
    "Discard",
    "Draw",
    "EngineError",
    "ErrorCode",
    "JokerButton",
    "MatchDecision",
    "MatchMode",
    "Meld",
    "MeldSpec",
    "PlayerView",
    "RoundState",
    "ScoreBreakdown",
    "TakePile",
    "Variant",
    "account_rewards",
    "action_to_wire",
    "apply",
    "auto_discard",
    "auto_play_step",
    "auto_play_turn",
    "commitment",
    "dealer_of_round",
    "decide_after_round",
    "dumps",
    "first_player",
    "from_json",
    "legal_actions",
    "loads",
    "pack",
    "parse_action",
    "player_view",
    "score_round",
    "shuffled",
    "start_round",
    "threshold_for",
    "to_json",
    "unpack",
    "variant_of",
]
