"""Fit the search bots' evaluation (``shared_engine.evaluation``) and write its weights.

``python -m benchmarks.train [--level L] [--against A] [--rounds N] [--seed S] [--jobs N]
[--check]`` (``make train-bots``)

Plays ``rounds`` rounds of self-play by four bots of ``level`` (``easy``, the
heuristic the search's look-ahead plays, so the positions are those its
leaves reach; or ``normal``, valued by the ``easy`` fit, so train that one
first), from match totals drawn from the seed so that every opening
threshold occurs, and keeps every ``EVERY``-th position with the round's
final lead (team A's total less B's). With ``--against`` one team (drawn
per round) plays ``level`` and the other ``against``, and every position is
kept from the first team's side: the fit (named ``level-against``) predicts
the lead of a searching team over players of the other kind, which is what a
search bot values its own leaves by when it meets them. Per stage of the
stock it fits that lead on the position's features by least squares (a little ridge, so a
feature a stage never varies gets no weight), and prints each stage's
explained variance beside the score so far's (tiles in hand at full value, as
SCORE-1 counts them at the end), on a tenth of the rounds held out of the fit.
Without ``--check`` it writes the level's fit into ``shared_engine/weights.py``,
keeping the other levels' fits; the same level, seed and rounds write the same
weights.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from benchmarks.report import Figure, table
from shared_engine.deal import start_round
from shared_engine.evaluation import FEATURES, features, stage_of
from shared_engine.rules import apply
from shared_engine.scoring import score_team
from shared_engine.search import level_policy
from shared_engine.state import team_of
from shared_engine.weights import RESIDUALS, WEIGHTS, WRITTEN_BY

STAGES = (0, 10, 20, 30, 40)
"""Each stage's lowest stock: the game changes as the stock runs down."""
EVERY = 3
"""One position kept in so many: neighbours are nearly the same sample."""
RIDGE = 1.0
CHUNK = 250
"""Rounds one worker plays at a time; a tenth of the rounds, in whole chunks, is held out."""
WEIGHTS_FILE = Path(__file__).resolve().parent.parent / "shared_engine" / "weights.py"
TOTALS = (0, 0, 0, 1500, 3000, 5000, -200)
"""Match totals a round starts from (OPEN-2's thresholds), drawn per team."""

Sample = tuple[int, list[float], float, float]
"""Stage, features, the score so far's lead, the final lead."""


def play_round(level: str, seed: str, against: str | None = None) -> list[Sample]:
    """One round's kept positions, each with the round's final lead, from the side of the
    team that plays ``level`` (team A in self-play, where ``against`` is ``None``)."""
    rng = random.Random(seed)
    totals = (rng.choice(TOTALS), rng.choice(TOTALS))
    state = start_round(seed, dealer=rng.randint(1, 4), match_scores=totals)
    ours = level_policy(level, seed)
    mine = 0 if against is None else rng.randrange(2)
    theirs = ours if against is None else level_policy(against, seed)
    policies = {seat: ours if team_of(seat) == mine else theirs for seat in (1, 2, 3, 4)}
    # Every feature and lead is team A's less team B's: negated, it is B's less A's.
    side = 1.0 if mine == 0 else -1.0
    kept: list[tuple[int, list[float], float]] = []
    ply = 0
    while state.phase != "round_over":
        if ply % EVERY == 0:
            lead = score_team(state, 0).total - score_team(state, 1).total
            x = [side * v for v in features(state)]
            kept.append((stage_of(len(state.stock), STAGES), x, side * lead))
        seat = state.turn
        state, _ = apply(state, seat, policies[seat](state, seat))
        ply += 1
    final = side * (score_team(state, 0).total - score_team(state, 1).total)
    return [(stage, x, lead, final) for stage, x, lead in kept]


def play_rounds(
    level: str, seed: str, first: int, count: int, against: str | None = None
) -> list[Sample]:
    return [
        s for i in range(first, first + count) for s in play_round(level, f"{seed}:{i}", against)
    ]


def solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """``matrix x = vector`` by Gaussian elimination with partial pivoting."""
    n = len(vector)
    a = [[*row, b] for row, b in zip(matrix, vector, strict=True)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(n):
            if r != col and a[col][col]:
                f = a[r][col] / a[col][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col], strict=True)]
    return [a[i][n] / a[i][i] if a[i][i] else 0.0 for i in range(n)]


def fit(samples: Sequence[Sample]) -> list[float]:
    """Ridge least squares of the final lead on the features, scaled per feature."""
    n = len(FEATURES)
    scale = [math.sqrt(sum(s[1][j] ** 2 for s in samples) / len(samples)) or 1.0 for j in range(n)]
    xtx = [[0.0] * n for _ in range(n)]
    xty = [0.0] * n
    for _, x, _, y in samples:
        z = [v / c for v, c in zip(x, scale, strict=True)]
        for i in range(n):
            zi = z[i]
            if zi:
                row = xtx[i]
                for j in range(n):
                    row[j] += zi * z[j]
                xty[i] += zi * y
    for i in range(n):
        xtx[i][i] += RIDGE
    return [w / c for w, c in zip(solve(xtx, xty), scale, strict=True)]


def _predict(weights: Sequence[float], sample: Sample) -> float:
    return sum(w * x for w, x in zip(weights, sample[1], strict=True))


def explained(pairs: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """The share of the final lead's variance a prediction explains, and the residual sd."""
    finals = [y for _, y in pairs]
    mean = sum(finals) / len(finals)
    total = sum((y - mean) ** 2 for y in finals)
    residual = sum((y - p) ** 2 for p, y in pairs)
    return 1 - residual / total, math.sqrt(residual / len(pairs))


def _command(level: str, command: str) -> str:
    """``WRITTEN_BY``'s entry for a fit: a command too long for a line is split before
    ``--rounds`` into two strings, as the line length allows and ``ruff format`` keeps."""
    line = f'    "{level}": "{command}",\n'
    if len(line) <= 101:
        return line
    head, _, tail = command.partition(" --rounds")
    return f'    "{level}": (\n        "{head}"\n        " --rounds{tail}"\n    ),\n'


def render(
    weights: Mapping[str, Sequence[Sequence[float]]],
    residuals: Mapping[str, Sequence[float]],
    written_by: Mapping[str, str],
) -> str:
    """The weights module's text, every level's fit, as ``ruff format`` leaves it."""
    fits = "".join(
        f'    "{level}": (\n'
        + "".join(
            f"        # stock {lowest}+\n        (\n"
            + "".join(f"            {w:.6g},\n" for w in stage)
            + "        ),\n"
            for stage, lowest in zip(rows, STAGES, strict=True)
        )
        + "    ),\n"
        for level, rows in weights.items()
    )
    spreads = "".join(
        f'    "{level}": ({", ".join(f"{r:.1f}" for r in residuals[level])}),\n'
        for level in weights
    )
    commands = "".join(_command(level, written_by[level]) for level in weights)
    return (
        '"""The search bots\' evaluation weights: do not edit, train again.\n\n'
        "One fit per level of self-play (``WRITTEN_BY``: the command that wrote it). In\n"
        "each, one row per stage of the stock (``STAGES``: each stage's lowest stock), one\n"
        "weight per feature of ``shared_engine.evaluation.FEATURES``; ``RESIDUALS`` is each\n"
        "stage's standard deviation of the final round lead the fit leaves unexplained, in\n"
        'points.\n"""\n\n'
        "from typing import Final\n\n"
        f"STAGES: Final = {tuple(STAGES)!r}\n"
        f"WRITTEN_BY: Final = {{\n{commands}}}\n"
        f"WEIGHTS: Final[dict[str, tuple[tuple[float, ...], ...]]] = {{\n{fits}}}\n"
        f"RESIDUALS: Final[dict[str, tuple[float, ...]]] = {{\n{spreads}}}\n"
    )


def fit_stages(
    train: Sequence[list[Sample]], test: Sequence[list[Sample]]
) -> tuple[list[list[float]], list[float], list[Figure]]:
    """Each stage's weights fitted on ``train``'s rounds, its residual sd there, and its
    explained variance on the rounds ``test`` holds out, beside the score so far's."""
    fitted = [s for part in train for s in part]
    held = [s for part in test for s in part]
    weights, residuals, figures = [], [], []
    for stage, lowest in enumerate(STAGES):
        mine = [s for s in fitted if s[0] == stage]
        w = fit(mine)
        weights.append(w)
        held_out = [s for s in held if s[0] == stage]
        r2, sd = explained([(_predict(w, s), s[3]) for s in held_out])
        base, _ = explained([(s[2], s[3]) for s in held_out])
        residuals.append(explained([(_predict(w, s), s[3]) for s in mine])[1])
        figures.append(
            Figure(
                "held-out rounds, share of the final lead's variance explained",
                f"stock {lowest}+",
                r2 * 100,
                "{:.1f}%",
                f"score so far {base * 100:.1f}%; residual sd {sd:.0f}; {len(mine)} positions",
            )
        )
    return weights, residuals, figures


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--level", choices=("easy", "normal"), default="easy")
    parser.add_argument(
        "--against", choices=("easy", "normal"), help="the other team's level (default: self-play)"
    )
    parser.add_argument("--rounds", type=int, default=4000)
    parser.add_argument("--seed", default="train")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--check", action="store_true", help="fit and print, write nothing")
    args = parser.parse_args(argv)
    held = args.rounds // 10
    chunks = [(i, min(CHUNK, args.rounds - i)) for i in range(0, args.rounds, CHUNK)]
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        parts = list(
            pool.map(
                play_rounds,
                [args.level] * len(chunks),
                [args.seed] * len(chunks),
                *zip(*chunks, strict=True),
                [args.against] * len(chunks),
            )
        )
    split = sum(1 for i, _ in chunks if i < held)
    weights, residuals, figures = fit_stages(parts[split:], parts[:split])
    name = args.level if args.against is None else f"{args.level}-{args.against}"
    play = "self-play" if args.against is None else f"against {args.against}"
    title = f"evaluation fit: {args.rounds} rounds of {args.level} {play}, seed {args.seed!r}"
    print(table(figures, title))
    if not args.check:
        against = "" if args.against is None else f" --against {args.against}"
        how = (
            f"python -m benchmarks.train --level {args.level}{against} --rounds {args.rounds}"
            f" --seed {args.seed}"
        )
        text = render(
            {**WEIGHTS, name: weights},
            {**RESIDUALS, name: residuals},
            {**WRITTEN_BY, name: how},
        )
        WEIGHTS_FILE.write_text(text)
        print(f"wrote {WEIGHTS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
