"""The cost of a match, this checkout beside earlier ones, in one run.

``python -m benchmarks.compare [--matches N] [--before LABEL=DIR ...]`` (``make cost``)

Each checkout (every ``--before`` directory, then this one) plays ``N``
three-round matches of each kind through its own handlers, in a child
process of its own (``cwd`` and ``sys.path`` its directory, this
interpreter): a quick-start match of four players and an arena match at
``ARENA_STAKE``. Each child prices its matches with its own cost model and
prints the result as JSON; the table sets the dollars per million matches per
AWS service and the usage that drives them side by side, one column per
checkout. A directory is any checkout, e.g. ``git worktree add /tmp/before
REV``: the child only calls what every version of the cost model has
(``handlers.play_matches``, ``usage.usage``, ``usage.stored_per_match``,
``cost.match_cost``, ``engine.bot_round_length``).

The counts (messages, write units, events, transitions, invocations) do not
depend on the machine; the Lambda line does (billed time is the CPU time
measured), so compare it between columns of one run, not across runs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

KINDS = {"quick start": ("three_rounds", 0), "arena": ("arena", 100)}
"""The two matches priced: (mode, stake). The goals: <= $1,500 and <= $1,800 per million."""
GOALS = {"quick start": 1500.0, "arena": 1800.0}
USAGE = (
    ("WebSocket messages pushed", "push_messages"),
    ("WebSocket messages received", "inbound_messages"),
    ("DynamoDB write units", "wru"),
    ("DynamoDB read units", "rru"),
    ("EventBridge events", "events"),
    ("Step Functions transitions", "sfn_transitions"),
    ("SQS messages", "sqs_messages"),
    ("Turn timers armed in the run", "timers_armed"),
    ("Scheduler invocations", "scheduler_invocations"),
    ("Lambda invocations", "invocations"),
)
"""Usage per match shown under the dollars: what each service bills."""

CHILD = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
from benchmarks import cost, engine, handlers, usage
matches, kinds = int(sys.argv[1]), json.loads(sys.argv[2])
per_round = engine.bot_round_length(50, 5)
out = {}
for kind, (mode, stake) in kinds.items():
    runs = handlers.play_matches(matches, mode=mode, stake=stake)
    measured = usage.usage(runs, per_round)
    match = measured.per_match
    priced = cost.match_cost(
        match, measured.actions_per_round * measured.rounds, usage.stored_per_match(runs)
    )
    counts = {k: v for k, v in match.items() if not k.startswith(("cpu:", "own:", "call:"))}
    counts["invocations"] = sum(v for k, v in match.items() if k.startswith("invocations:"))
    out[kind] = {
        "dollars": priced.by_service,
        "lambda_typical": priced.lambda_typical,
        "usage": counts,
        "errors": sum(len(r.errors) for r in runs),
    }
print("\n" + json.dumps(out))
"""
"""Run in each checkout: its own modules price its own matches."""


def measure(directory: Path, matches: int) -> dict[str, Any]:
    """Play and price the matches of ``KINDS`` in the checkout at ``directory``."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys; sys.path.insert(0, '.')\n{CHILD}",
            str(matches),
            json.dumps(KINDS),
        ],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{directory}: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def rows(results: dict[str, dict[str, Any]], kind: str) -> list[list[str]]:
    """One kind of match: $ per million matches per service, the total, then the usage."""
    columns = list(results.values())
    services = sorted(
        {s for c in columns for s in c[kind]["dollars"]},
        key=lambda s: -columns[-1][kind]["dollars"].get(s, 0.0),
    )
    out = [
        [f"  {service}, $ per million"]
        + [f"{c[kind]['dollars'].get(service, 0.0) * 1e6:,.0f}" for c in columns]
        for service in services
    ]
    totals = [sum(c[kind]["dollars"].values()) * 1e6 for c in columns]
    out.append(["  total, $ per million"] + [f"{t:,.0f}" for t in totals])
    typical = [
        total + (c[kind]["lambda_typical"] - c[kind]["dollars"]["Lambda"]) * 1e6
        for c, total in zip(columns, totals, strict=True)
    ]
    out.append(["    with Lambda at typical AWS latencies"] + [f"{t:,.0f}" for t in typical])
    out += [
        [f"  {label}, per match"] + [f"{c[kind]['usage'].get(key, 0.0):,.0f}" for c in columns]
        for label, key in USAGE
    ]
    out.append(["  errors in the matches played"] + [str(c[kind]["errors"]) for c in columns])
    return out


def render(results: dict[str, dict[str, Any]], matches: int) -> str:
    labels = list(results)
    width = max(12, *(len(label) + 2 for label in labels))
    body: list[str] = []
    for kind in KINDS:
        body.append(f"[{kind}: {matches} three-round match(es) per checkout]")
        for row in rows(results, kind):
            body.append(f"{row[0]:<46}" + "".join(f"{cell:>{width}}" for cell in row[1:]))
        total = sum(results[labels[-1]][kind]["dollars"].values()) * 1e6
        verdict = "ok" if total <= GOALS[kind] else "OVER GOAL"
        body.append(f"  goal <= ${GOALS[kind]:,.0f} per million: {verdict}")
        body.append("")
    header = f"{'cost per match (AWS list prices)':<46}" + "".join(
        f"{label:>{width}}" for label in labels
    )
    rule = "-" * len(header)
    return "\n".join([header, rule, *body[:-1], rule])


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--matches", type=int, default=1, help="matches of each kind (default 1)")
    parser.add_argument(
        "--before",
        action="append",
        default=[],
        metavar="LABEL=DIR",
        help="an earlier checkout, shown left of this one (repeatable, oldest first)",
    )
    args = parser.parse_args(argv)
    checkouts: dict[str, Path] = {}
    for spec in args.before:
        label, _, directory = spec.partition("=")
        checkouts[label if directory else Path(label).name] = Path(directory or label)
    checkouts["now"] = Path(__file__).resolve().parent.parent
    results = {label: measure(path, args.matches) for label, path in checkouts.items()}
    print(render(results, args.matches))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
