"""Replaying a table from its stored history: the proof that a match was played fairly.

Every round is a function of its seed and its actions (DEAL-4). The round
items keep the seeds and commitments, the log keeps every action; replaying
them with the engine must give back every state, every score and the match
totals the services recorded. Operators run it on a disputed table; the tests
run it on every match they play.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from shared_engine import (
    JokerButton,
    RoundState,
    apply,
    commitment,
    parse_action,
    score_round,
    shuffled,
    start_round,
)
from shared_engine.state import with_account_jokers


@dataclass(frozen=True)
class ReplayedRound:
    round: int
    final: RoundState
    scores: tuple[int, int]
    commitment_ok: bool


def replay(items: list[dict[str, Any]], *, twos: bool) -> list[ReplayedRound]:
    """Replay every round of a table from its items (``GameStore.history``)."""
    by_key = {item["sk"]["S"]: item for item in items}
    rounds = sorted(k for k in by_key if k.startswith("ROUND#"))
    totals = (0, 0)
    replayed: list[ReplayedRound] = []
    for key in rounds:
        number = int(key.split("#")[1])
        round_item = by_key[key]
        seed = round_item["seed"]["S"]
        state = start_round(
            seed, twos=twos, dealer=int(round_item["dealer"]["N"]), match_scores=totals
        )
        logs = sorted(k for k in by_key if k.startswith(f"LOG#{number:04d}#"))
        for log_key in logs:
            entry = by_key[log_key]
            seat = int(entry["seat"]["N"])
            action = parse_action(json.loads(entry["action"]["S"]))
            if isinstance(action, JokerButton):
                # The move was paid from the account (JOKER-1): a spare joker was there.
                state = with_account_jokers(state, seat, max(1, state.account_jokers[seat - 1]))
            state, _ = apply(state, seat, action)
        a, b = score_round(state)
        if state.round_over:
            totals = (totals[0] + a.total, totals[1] + b.total)
        replayed.append(
            ReplayedRound(
                round=number,
                final=state,
                scores=(a.total, b.total),
                commitment_ok=commitment(seed, shuffled(seed)) == round_item["commitment"]["S"],
            )
        )
    return replayed
