"""Reading a table's stored history back: outboxes, and the round state at every version.

Independent of the services' code paths: the states are rebuilt with the
engine from the ROUND items' seeds and the LOG items' actions only.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass
from typing import Any

from shared_engine import RoundState, Variant, apply, parse_action, score_round, start_round


def outbox(item: dict[str, Any]) -> list[dict[str, Any]]:
    """The events an item carries for the relay ([] if none)."""
    raw = item.get("outbox", {}).get("S")
    return json.loads(raw) if raw else []


def events_of(items: list[dict[str, Any]], detail_type: str) -> list[dict[str, Any]]:
    """The ``detail`` of every outbox event of that type, in item key order."""
    return [e["detail"] for i in items for e in outbox(i) if e["detail-type"] == detail_type]


def round_of(sk: str) -> int:
    return int(sk.split("#")[1])


@dataclass
class Versions:
    """The round state the table held at each version, rebuilt from the stored history."""

    versions: list[int]
    states: list[RoundState]
    rounds: list[int]

    def at(self, version: int) -> RoundState:
        index = bisect.bisect_right(self.versions, version) - 1
        assert index >= 0, f"no state at version {version}"
        return self.states[index]

    def round_at(self, version: int) -> int:
        return self.rounds[bisect.bisect_right(self.versions, version) - 1]


def states_by_version(items: list[dict[str, Any]], *, variant: Variant = "twos-meld") -> Versions:
    """Replay every round: the state right after each write that changed it, by version."""
    by_key = {i["sk"]["S"]: i for i in items}
    versions: list[int] = []
    states: list[RoundState] = []
    rounds: list[int] = []
    totals = (0, 0)
    for key in sorted(k for k in by_key if k.startswith("ROUND#")):
        number = round_of(key)
        item = by_key[key]
        (started,) = events_of([item], "RoundStarted")
        state = start_round(
            item["seed"]["S"], variant=variant, dealer=int(item["dealer"]["N"]), match_scores=totals
        )
        versions.append(started["version"])
        states.append(state)
        rounds.append(number)
        for log_key in sorted(k for k in by_key if k.startswith(f"LOG#{number:04d}#")):
            entry = by_key[log_key]
            action = json.loads(entry["action"]["S"])
            state, _ = apply(state, int(entry["seat"]["N"]), parse_action(action))
            version = json.loads(entry["public"]["S"])["version"]
            if versions[-1] == version:
                states[-1] = state
            else:
                versions.append(version)
                states.append(state)
                rounds.append(number)
        if state.round_over:
            a, b = score_round(state)
            totals = (totals[0] + a.total, totals[1] + b.total)
    assert versions == sorted(versions), versions
    return Versions(versions, states, rounds)
