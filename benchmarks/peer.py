"""This engine's random self-play against jhtschultz/canasta-openspiel's, side by side.

``python -m benchmarks.peer PEER_DIR [--peer-python PY] [--actions N] [--repeats R]``

Both engines play uniformly random games, listing every legal action before
each move, in alternating child processes of the same run, so both see the
same machine load. Each child counts the players' actions it played (the
peer's chance nodes, which deal its cards one at a time, are played but not
counted, as this engine's deal inside ``start_round`` is not) and the CPU time
of its process (one thread: one core), including the deals. The peer needs
``pyspiel`` (the ``open_spiel`` package) in ``--peer-python``; its code is run
from ``PEER_DIR`` and never imported into this project. docs/performance.md
says how to get it.

The peer plays whole games (hands until a team reaches 5,000), which random
players rarely finish: each of its children plays until it has taken
``--actions`` actions, starting a new game whenever one ends. This engine
plays whole rounds until it has taken as many. The peer's ``legal_actions``
returns nothing, and ends the game, when the seat to play cannot draw: the
loop then starts a new game.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.engine import child
from benchmarks.report import Figure, median, table

SECTION = "random self-play, one core"

# Run with the peer's checkout as working directory and its interpreter.
_PEER_CHILD = """
import json, random, sys, time
from canasta.canasta_game import CanastaGame
target, seed = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
game = CanastaGame()
actions = games = 0
start = time.process_time()
while actions < target:
    state = game.new_initial_state()
    games += 1
    while not state.is_terminal() and actions < target:
        if state.is_chance_node():
            state.apply_action(rng.choice(state.chance_outcomes())[0])
        else:
            legal = state.legal_actions()
            if not legal:  # its legal_actions ends the game when no draw is left
                break
            state.apply_action(rng.choice(legal))
            actions += 1
seconds = time.process_time() - start
print(json.dumps({"actions": actions, "seconds": seconds}))
"""

# Run with this checkout as working directory: the same loop as benchmarks.engine.
_OWN_CHILD = """
import json, random, sys, time
from shared_engine import VARIANTS, apply, legal_actions, start_round
target, seed = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
actions = rounds = 0
start = time.process_time()
while actions < target:
    state = start_round(f"peer-{seed}-{rounds}", variant=VARIANTS[rounds % 2])
    rounds += 1
    while state.phase != "round_over":
        seat = state.turn
        state, _ = apply(state, seat, rng.choice(legal_actions(state, seat)))
        actions += 1
seconds = time.process_time() - start
print(json.dumps({"actions": actions, "seconds": seconds}))
"""


def _run(python: str, code: str, cwd: Path, target: int, seed: int) -> float:
    """Actions per CPU second of one child."""
    result = child(python, code, cwd, target, seed)
    return float(result["actions"]) / float(result["seconds"])


def compare(peer: Path, peer_python: str, target: int, repeats: int) -> list[Figure]:
    """Medians over ``repeats`` alternating pairs of children, and their ratio."""
    here = Path(__file__).resolve().parent.parent
    own: list[float] = []
    theirs: list[float] = []
    for seed in range(repeats):
        theirs.append(_run(peer_python, _PEER_CHILD, peer, target, seed))
        own.append(_run(sys.executable, _OWN_CHILD, here, target, seed))
    ratio = median(own) / median(theirs)
    ratios = sorted(a / b for a, b in zip(own, theirs, strict=True))
    return [
        Figure(SECTION, "canasta-openspiel, actions/s", median(theirs), "{:,.0f}"),
        Figure(SECTION, "shared_engine, actions/s", median(own), "{:,.0f}"),
        Figure(
            SECTION,
            "shared_engine / canasta-openspiel",
            ratio,
            "{:.2f}x",
            f"pairs {ratios[0]:.2f}x..{ratios[-1]:.2f}x; target >= 2x: "
            + ("ok" if ratio >= 2 else "BELOW TARGET"),
        ),
    ]


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("peer", type=Path, help="a checkout of jhtschultz/canasta-openspiel")
    parser.add_argument("--peer-python", default=sys.executable, help="an interpreter with pyspiel")
    parser.add_argument("--actions", type=int, default=20_000, help="actions per child")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    figures = compare(args.peer.resolve(), args.peer_python, args.actions, args.repeats)
    title = f"engines side by side: {args.actions:,} actions x {args.repeats} pairs, medians"
    print(table(figures, title))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
