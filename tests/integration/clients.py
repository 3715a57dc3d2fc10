"""Scripted players: they see only their own pushed views and answer with legal moves."""

from __future__ import annotations

import random
from typing import Any

from tests.integration.harness import Harness


def choose(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Pick up or meld the most tiles when possible, else draw, else a random discard."""
    actions: list[dict[str, Any]] = view["view"]["legal_actions"]
    by_type: dict[str, list[dict[str, Any]]] = {}
    for action in actions:
        by_type.setdefault(action["type"], []).append(action)
    for kind in ("take_pile", "meld"):
        if kind in by_type:
            return max(by_type[kind], key=lambda a: sum(len(m["tiles"]) for m in a["melds"]))
    if "draw" in by_type:
        return by_type["draw"][0]
    return rng.choice(by_type["discard"])


def rest_of_turn(
    view: dict[str, Any], move: dict[str, Any], rng: random.Random
) -> list[dict[str, Any]]:
    """What a person sends after a meld in the same message, as the web client does: a
    discard of a tile the meld leaves, unless it would be the last (going out is left to
    the view after the meld, which says whether it is allowed)."""
    if move["type"] != "meld":
        return []
    left = list(view["view"]["hand"])
    for spec in move["melds"]:
        for tile in spec["tiles"]:
            left.remove(tile)
    return [{"type": "discard", "tile": rng.choice(left)}] if len(left) >= 2 else []


def play_match(
    harness: Harness, connections: dict[int, str], table_id: str, seed: int = 0, limit: int = 5000
) -> int:
    """Play until the match ends; each move is the one its seat's latest view allows, a
    meld with the discard after it in one message."""
    rng = random.Random(seed)
    moves = 0
    for _ in range(limit):
        result = next((harness.last(c, "match_result") for c in connections.values()), None)
        if result is not None:
            return moves
        to_play = None
        for seat, conn in connections.items():
            view = harness.last(conn)
            if view and view["view"]["turn"] == seat and view["view"]["legal_actions"]:
                to_play = (conn, view)
        if to_play is None:
            harness.settle()
            continue
        conn, view = to_play
        move = choose(view, rng)
        then = rest_of_turn(view, move, rng)
        harness.send(
            conn,
            {
                "action": "play",
                "table_id": table_id,
                "version": view["version"],
                "move": move,
                **({"then": then} if then else {}),
            },
        )
        moves += 1 + len(then)
        if view["view"]["stock_size"] <= 1 or any(
            m["type"] != "view" for m in harness.received(conn)[-2:]
        ):
            harness.settle()
    raise AssertionError("the match did not end")
