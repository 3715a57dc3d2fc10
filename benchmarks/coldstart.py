"""Cold start figures: handler import time, and the first invocation of the turn handler.

Every sample is a fresh interpreter (a subprocess), so nothing is imported or
cached beforehand; each figure is the median of the repeats.

Bytecode decides much of an import's cost, so it is controlled: each child
runs with ``PYTHONPYCACHEPREFIX`` pointing to a private directory, never to
the ``__pycache__`` folders of the checkout.

* **with .pyc**: every module (standard library, dependencies, the project)
  has its bytecode cached, as in a package that ships compiled files.
* **as deployed**: the very directories a deploy ships, built by
  ``infra/assets.py`` (the code asset and the layer, with their bytecode
  compiled by the runtime's CPython), beside boto3 as the runtime provides
  it, imported by the runtime's CPython with nothing else on the path
  (``-I -S``, the function's environment), as ``make deploy-check`` does.
  Each handler's import is set against ``import boto3`` alone, sampled just
  before it in the same run so that the machine's load falls on both alike:
  the figure is the median of those ratios, and the goal at most 1.2.
  ``--baseline DIR`` imports another checkout's handlers (as its code asset
  would ship them, beside the same layer) alongside, for a before/after.
  Where the layer's compiled wheels cannot load (another machine than
  Lambda's aarch64) a twin of it for this machine stands in, with the same
  distributions. Without the runtime's CPython the figure says so instead.

The first invocation is ``services.turn.handler.websocket`` playing a move
at a dealt table under in-process moto (``mock_aws``): the handler's import,
boto3's import (the services import it lazily, on first use), then the first
call, which creates the DynamoDB, Scheduler and API Gateway management
clients and makes the move's calls; the second call is shown beside it. The
table is set up through a separate boto3 session, so the handler's clients
load their service models themselves. Not counted: moto's own import, which
also imports parts of botocore the first call would otherwise import (a few
modules; most of a client's cost is loading its service model).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.report import Figure, median

SECTION = "Lambda cold start (fresh interpreter)"
HANDLERS = ("connect", "turn", "deal", "score", "relay", "matchmaking", "ledger")
TARGET_IMPORT_SECONDS = 0.3
TARGET_DEPLOYED_RATIO = 1.2
"""A handler's import as deployed, against ``import boto3`` alone."""
BASELINE = "baseline:"
REPO = Path(__file__).resolve().parent.parent
DEPLOYED_BUILD_DIR = REPO / "build" / "coldstart"

DEPLOYED_CHILD = """
import json, sys, time
sys.path[:0] = {path!r}
w, c = time.perf_counter(), time.process_time()
import {module}
print(json.dumps({{"wall": time.perf_counter() - w, "cpu": time.process_time() - c}}))
"""

IMPORT_CHILD = """
import json, time
w, c = time.perf_counter(), time.process_time()
import {module}
print(json.dumps({{"wall": time.perf_counter() - w, "cpu": time.process_time() - c}}))
"""

FIRST_CALL_CHILD = """
import json, time
clock = lambda: (time.perf_counter(), time.process_time())
t0 = clock()
import services.turn.handler as handler
t1 = clock()
import boto3
t2 = clock()
from benchmarks.coldstart import prepare_first_call
first, second, context = prepare_first_call()
t3 = clock()
handler.websocket(first, context)
t4 = clock()
handler.websocket(second, context)
t5 = clock()
span = lambda a, b: {"wall": b[0] - a[0], "cpu": b[1] - a[1]}
print(json.dumps({"import": span(t0, t1), "boto3": span(t1, t2), "first": span(t3, t4),
                  "second": span(t4, t5)}))
"""


def _spawn(
    args: Sequence[str], env: dict[str, str], timeout: int = 300
) -> subprocess.CompletedProcess[str]:
    """A child run to its end; its failure is the benchmark's."""
    done = subprocess.run(
        args, env=env, cwd=REPO, capture_output=True, text=True, check=False, timeout=timeout
    )
    if done.returncode != 0:
        raise RuntimeError(f"child failed:\n{done.stderr[-3000:]}")
    return done


def _run(
    code: str, env: dict[str, str], interpreter: Sequence[str] = (sys.executable,)
) -> dict[str, Any]:
    done = _spawn([*interpreter, "-c", code], env)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _child_env(prefix: Path, *, write: bool = False) -> dict[str, str]:
    from benchmarks.handlers import environment

    env = {k: v for k, v in os.environ.items() if not k.startswith(("CANASTA_", "PYTHON"))}
    env.update(environment())
    env["PYTHONPYCACHEPREFIX"] = str(prefix)
    env["PYTHONPATH"] = str(REPO)
    if not write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def bytecode_prefix(root: Path) -> Path:
    """A bytecode cache of everything the handlers and the first call import."""
    warm = root / "with-pyc"
    modules = ", ".join(f"services.{name}.handler" for name in HANDLERS)
    _run(f"import {modules}; print('{{}}')", _child_env(warm, write=True))
    _run(FIRST_CALL_CHILD, _child_env(warm, write=True))
    return warm


def deployed_import_times(
    repeats: int, baseline: Path | None = None, *, instructions: bool = False
) -> tuple[float, dict[str, tuple[float, float]]] | str:
    """The median CPU seconds of ``import boto3``, and of each handler as deployed with the
    median of its ratios to the ``import boto3`` sampled just before it (with ``baseline``,
    each handler of that checkout too, under ``BASELINE``, the two in turn first); or why
    they cannot be measured here. Pairing each sample with its own boto3 sample keeps a
    change of the machine's load between samples out of the ratio. ``instructions``:
    millions of instructions instead of seconds (``import_instructions``)."""
    from infra.assets import build_assets, build_code, runtime_python
    from infra.components.runtime import PYTHON_VERSION
    from infra.deploy_check import deployed_path, lambda_env

    if runtime_python(PYTHON_VERSION) is None:
        return f"no CPython {PYTHON_VERSION} (the runtime's) here to build and import with"
    if instructions and shutil.which("valgrind") is None:
        return "no valgrind here to count instructions with (apt-get install valgrind)"
    DEPLOYED_BUILD_DIR.mkdir(parents=True, exist_ok=True)
    with contextlib.redirect_stdout(sys.stderr):
        assets = build_assets(DEPLOYED_BUILD_DIR, PYTHON_VERSION, bundle=True, tracing=False)
        deployed = deployed_path(
            assets.code, assets.layer / "python", PYTHON_VERSION, False, DEPLOYED_BUILD_DIR
        )
        other = None
        if baseline is not None:
            other = build_code(DEPLOYED_BUILD_DIR / "baseline", deployed.interpreter, baseline)
    # per handler, (the figure's key, the path it is imported from) of each checkout
    groups = []
    for name in HANDLERS:
        group = [(f"services.{name}.handler", deployed.path)]
        if other is not None:
            group.append((f"{BASELINE}services.{name}.handler", [str(other), *deployed.path[1:]]))
        groups.append(group)
    isolated = (deployed.interpreter, "-I", "-S")

    started: dict[tuple[str, ...], int] = {}  # a path's count for what the child imports

    def sample(module: str, path: list[str]) -> float:
        if instructions:
            if tuple(path) not in started:
                started[tuple(path)] = import_instructions(isolated, path, "json")
            return (import_instructions(isolated, path, module) - started[tuple(path)]) / 1e6
        code = DEPLOYED_CHILD.format(path=path, module=module)
        cpu: float = _run(code, lambda_env(False), isolated)["cpu"]
        return cpu

    boto3: list[float] = []
    samples: dict[str, list[float]] = {key: [] for group in groups for key, _ in group}
    ratios: dict[str, list[float]] = {key: [] for key in samples}
    for repeat in range(repeats):
        for group in groups:
            boto3.append(sample("boto3", deployed.path))
            for key, path in group if repeat % 2 == 0 else reversed(group):
                samples[key].append(sample(key.removeprefix(BASELINE), path))
                ratios[key].append(samples[key][-1] / boto3[-1])
    return median(boto3), {key: (median(samples[key]), median(ratios[key])) for key in samples}


def import_instructions(interpreter: Sequence[str], path: list[str], module: str) -> int:
    """The instructions a fresh interpreter runs to import ``module`` and exit, counted by
    valgrind (callgrind): the same on an idle machine and a busy one, where CPU seconds
    stretch by 10-20% with the load. Hash seeds are fixed, so a count repeats."""
    from infra.deploy_check import lambda_env

    code = DEPLOYED_CHILD.format(path=path, module=module)
    env = {**lambda_env(False), "PYTHONHASHSEED": "0"}
    counter = ("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null")
    done = _spawn([*counter, *interpreter, "-c", code], env, timeout=600)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"valgrind counted nothing:\n{done.stderr[-3000:]}")
    return int(found.group(1))


def deployed_figures(
    repeats: int, baseline: Path | None = None, *, instructions: bool = False
) -> list[Figure]:
    measured = deployed_import_times(repeats, baseline, instructions=instructions)
    if isinstance(measured, str):
        return [Figure(SECTION, "import as deployed vs import boto3", math.nan, "n/a", measured)]
    boto3, handlers = measured
    unit, shown = ("M instructions", "{:,.0f}") if instructions else ("CPU s", "{:.3f}")
    out = [
        Figure(
            SECTION,
            f"import boto3 alone, as the runtime has it, {unit}",
            boto3,
            shown,
            "the runtime's CPython, with bytecode",
        )
    ]
    # this checkout's handlers first, then the baseline's
    for key, (cpu, ratio) in sorted(handlers.items(), key=lambda kv: kv[0].startswith(BASELINE)):
        verdict = "ok" if ratio <= TARGET_DEPLOYED_RATIO else "OVER TARGET"
        module = key.removeprefix(BASELINE)
        out.append(
            Figure(
                f"{SECTION}, baseline {baseline}" if key != module else SECTION,
                f"import {module} as deployed / boto3",
                ratio,
                "{:.2f}",
                f"{shown.format(cpu)} {unit}; target <= {TARGET_DEPLOYED_RATIO}: {verdict}",
            )
        )
    return out


def import_times(module: str, prefix: Path, repeats: int) -> tuple[float, float]:
    """Median (wall, CPU) seconds of importing ``module`` in a fresh interpreter."""
    runs = [_run(IMPORT_CHILD.format(module=module), _child_env(prefix)) for _ in range(repeats)]
    return median(r["wall"] for r in runs), median(r["cpu"] for r in runs)


def first_call_times(prefix: Path, repeats: int) -> dict[str, tuple[float, float]]:
    runs = [_run(FIRST_CALL_CHILD, _child_env(prefix)) for _ in range(repeats)]
    return {
        part: (median(r[part]["wall"] for r in runs), median(r[part]["cpu"] for r in runs))
        for part in ("import", "boto3", "first", "second")
    }


def prepare_first_call() -> tuple[dict[str, Any], dict[str, Any], Any]:
    """In the child: start moto, deal a table through a separate session, return two moves."""
    import boto3
    from moto import mock_aws

    from benchmarks.handlers import (
        ACCOUNT,
        REGION,
        WEBSOCKET_ENDPOINT,
        LambdaContext,
        websocket_event,
    )
    from services.common import constants
    from services.common.dynamo_storage import DynamoStorage
    from services.common.events import SeatPlayer
    from services.common.records import TableRecord
    from services.common.store import GameStore
    from shared_engine import MatchMode, action_to_wire, apply, pack, start_round
    from shared_engine.bots import heuristic_policy

    mock_aws().start()
    session = boto3.session.Session(region_name=REGION)
    dynamodb = session.client("dynamodb")
    for spec in constants.TABLES:
        dynamodb.create_table(**constants.create_table_request(spec))
    queue = session.client("sqs").create_queue(QueueName=constants.TIMER_QUEUE)["QueueUrl"]
    session.client("scheduler").create_schedule_group(Name=constants.SCHEDULE_GROUP)
    # moto loads a service's backend on its first request: not the handler's cost.
    session.client("apigatewaymanagementapi", endpoint_url=WEBSOCKET_ENDPOINT).post_to_connection(
        ConnectionId="warm-up", Data=b"{}"
    )
    os.environ["CANASTA_TIMER_QUEUE_ARN"] = (
        f"arn:aws:sqs:{REGION}:{ACCOUNT}:{queue.rsplit('/', 1)[-1]}"
    )
    os.environ["CANASTA_SCHEDULER_ROLE_ARN"] = f"arn:aws:iam::{ACCOUNT}:role/canasta-bench"
    players = {s: SeatPlayer(player_id=f"player-{s}", name=f"Player {s}") for s in (1, 2, 3, 4)}
    state = start_round("cold-start", dealer=4)
    GameStore(DynamoStorage.default(dynamodb)).create_table(
        TableRecord(
            table_id="cold",
            mode=MatchMode.THREE_ROUNDS,
            variant="twos-meld",
            stake=0,
            seats=players,
            version=1,
            round=1,
            state=pack(state),
            connections={s: f"conn-{s}" for s in players},
            turn_started=1,
        )
    )
    events = []
    for version in (1, 2):
        seat = state.turn
        action = heuristic_policy(state, seat)
        body = {
            "action": "play",
            "table_id": "cold",
            "version": version,
            "move": action_to_wire(action),
        }
        authorizer = {"player_id": players[seat].player_id, "name": players[seat].name}
        events.append(websocket_event(f"conn-{seat}", "play", json.dumps(body), authorizer))
        state, _ = apply(state, seat, action)
    return events[0], events[1], LambdaContext("turn-websocket")


def figures(repeats: int = 5) -> list[Figure]:
    """CPU seconds lead (what an idle core takes); wall seconds, which a busy machine
    stretches, are in the notes."""
    out: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="canasta-bench-") as tmp:
        warm = bytecode_prefix(Path(tmp))
        cached = {
            name: import_times(f"services.{name}.handler", warm, repeats) for name in HANDLERS
        }
        for name in HANDLERS:
            wall, cpu = cached[name]
            verdict = "ok" if cpu < TARGET_IMPORT_SECONDS else "OVER TARGET"
            out.append(
                Figure(
                    SECTION,
                    f"import services.{name}.handler, CPU s",
                    cpu,
                    "{:.3f}",
                    f"with .pyc; wall {wall:.3f}; target < {TARGET_IMPORT_SECONDS}: {verdict}",
                )
            )
        out += deployed_figures(repeats)
        first = first_call_times(warm, repeats)
        total = sum(first[part][1] for part in ("import", "boto3", "first"))
        out += [
            Figure(
                SECTION,
                "turn: import boto3 at first use, CPU s",
                first["boto3"][1],
                "{:.3f}",
                f"wall {first['boto3'][0]:.3f}",
            ),
            Figure(
                SECTION,
                "turn: first play call, CPU s",
                first["first"][1],
                "{:.3f}",
                f"3 clients created + the move's calls; wall {first['first'][0]:.3f}; "
                f"the second call {first['second'][1]:.3f}",
            ),
            Figure(
                SECTION,
                "turn: first invocation, CPU s",
                total,
                "{:.3f}",
                "import + boto3 + first call, with .pyc, in-process moto; wall "
                f"{sum(first[p][0] for p in ('import', 'boto3', 'first')):.3f}",
            ),
        ]
    return out


def main(argv: Sequence[str]) -> int:
    import argparse

    from benchmarks.report import table

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another checkout: only the imports as deployed, each handler of it alongside",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="only the imports as deployed, in instructions counted by valgrind (slow)",
    )
    args = parser.parse_args(argv)
    title = f"cold start: medians of {args.repeats} fresh interpreters"
    if args.baseline is not None or args.instructions:
        baseline = args.baseline.resolve() if args.baseline is not None else None
        measured = deployed_figures(args.repeats, baseline, instructions=args.instructions)
        alongside = f", {args.baseline} alongside" if baseline is not None else ""
        print(table(measured, title + alongside))
        return 0
    print(table(figures(args.repeats), title))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
