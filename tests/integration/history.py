"""Reading a table's stored history back: outboxes, and the round state at every version.

Independent of the services' code paths: the states are rebuilt with the
engine from the ROUND items' seeds and the logged actions only (the LOG items',
a turn's or a move's each, and the TABLE item's turn being played).
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


@dataclass(frozen=True)
class Move:
    """One logged move, as the stored items hold it."""

    round: int
    ply: int
    seat: int
    action: dict[str, Any]
    auto: bool
    at: float
    version: int
    """The table version its write made."""


def moves_of(items: list[dict[str, Any]], round_number: int | None = None) -> list[Move]:
    """Every move the table's items hold, in the order played (of one round, if given): each
    ``LOG`` item's (a whole turn's, or the one move of an item written a move at a time),
    then those of the turn being played, which the ``TABLE`` item keeps until it ends."""
    moves: list[Move] = []
    for item in sorted(items, key=lambda i: str(i["sk"]["S"])):
        sk = str(item["sk"]["S"])
        if sk.startswith("LOG#") and "moves" in item:
            moves += [_move(round_of(sk), m) for m in json.loads(item["moves"]["S"])]
        elif sk.startswith("LOG#"):
            moves.append(
                Move(
                    round_of(sk),
                    int(sk.split("#")[2]),
                    int(item["seat"]["N"]),
                    json.loads(item["action"]["S"]),
                    item["auto"]["BOOL"],
                    float(item["at"]["N"]),
                    json.loads(item["public"]["S"])["version"],
                )
            )
    for item in items:
        if item["sk"]["S"] == "TABLE" and "turn_moves" in item:
            number = int(item["round"]["N"])
            moves += [_move(number, m) for m in json.loads(item["turn_moves"]["S"])]
    return [m for m in moves if round_number is None or m.round == round_number]


def _move(round_number: int, raw: dict[str, Any]) -> Move:
    """A move of a turn's item: its public form holds its seat, its flag and its action's
    fields (a draw names no tile)."""
    shown = raw["public"]
    action = {k: shown[k] for k in ("type", "tile", "melds") if k in shown}
    return Move(
        round_number, raw["ply"], shown["seat"], action, shown["auto"], raw["at"], shown["version"]
    )


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
        for move in moves_of(items, number):
            state, _ = apply(state, move.seat, parse_action(move.action))
            if versions[-1] == move.version:
                states[-1] = state
            else:
                versions.append(move.version)
                states.append(state)
                rounds.append(number)
        if state.round_over:
            a, b = score_round(state)
            totals = (totals[0] + a.total, totals[1] + b.total)
    assert versions == sorted(versions), versions
    return Versions(versions, states, rounds)
