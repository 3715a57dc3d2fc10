"""Load on the whole local stack: K concurrent matches played by bots over real WebSockets.

``python -m benchmarks.load --tables K --mode one_round [--pace 0] [--timeout 300]``

Starts the local stack in this process, from the same pieces as ``python -m
local`` (``local.aws.start_moto`` and ``LocalAws``, the gateway, the
dispatcher loop and the ``@connections`` relay of ``local.__main__``), bound
to 127.0.0.1 on free ports. A second process (the clients) runs 4·K bots
(``local.bots.play_as_bot``, unchanged) that connect with signed tokens,
queue for ``--mode`` and play their matches to the end; matchmaking forms the
K tables. The clients have a process of their own so that their CPU does not
count against the stack's.

Each bot connects through this benchmark's own tap (a WebSocket pass-through
on 127.0.0.1, in the clients' process) that times every ``play``: from the
moment the bot's message passes the tap to the first view (or
``stale_version`` view) of a higher version coming back. The tap also counts
every error frame.

At the end every finished match's ledger is checked (four settlement
entries, zero-sum, every account reconciles with its entries), no turn may
have been auto-played, no push to an open connection may have been answered
410, and the run reports actions/s, latency p50/p95/p99/max, errors, the
stack's peak memory, and where the time went: AWS calls per action and their
time, by operation (a botocore hook on the default session, registered
before the handlers create their clients). For a CPU profile, run it under
py-spy (``py-spy record --threads --gil -- python -m benchmarks.load ...``).

It talks only to 127.0.0.1 and stops by itself (``--timeout``, and
``--max-rss-mb``: moto keeps a deep copy of the games table for every
``TransactWriteItems``, so the stack's memory grows with the square of the
moves played). The exit status is 0 only if every match finished, nothing
failed and every ledger checks out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import logging
import multiprocessing
import os
import platform
import sys
import threading
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import boto3
from aiohttp import ClientSession, WSMsgType, web

log = logging.getLogger("canasta.load")
MODES = ("one_round", "three_rounds", "to_10000")


# --- measuring --------------------------------------------------------------------------


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    plays: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    tables: dict[str, dict[str, str]] = field(default_factory=dict)
    """table id → seat → player id, from the views the bots received."""
    finished: set[str] = field(default_factory=set)
    first_play: float | None = None
    last_result: float | None = None
    bot_failures: list[str] = field(default_factory=list)


class AwsCalls:
    """Counts and times every AWS call made in this process, by service and operation."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count: Counter[str] = Counter()
        self.seconds: defaultdict[str, float] = defaultdict(float)

    def install(self) -> None:
        boto3.setup_default_session()
        session = boto3.DEFAULT_SESSION
        assert session is not None
        session.events.register("before-call", self._before)
        session.events.register("after-call", self._after)

    def snapshot(self) -> dict[str, tuple[int, float]]:
        with self._lock:
            return {name: (self.count[name], self.seconds[name]) for name in self.count}

    def since(self, base: dict[str, tuple[int, float]]) -> dict[str, tuple[int, float]]:
        """The calls made after ``base`` was taken (the set-up left out)."""
        now = self.snapshot()
        return {
            name: (count - base.get(name, (0, 0.0))[0], seconds - base.get(name, (0, 0.0))[1])
            for name, (count, seconds) in sorted(now.items())
            if count > base.get(name, (0, 0.0))[0]
        }

    def _before(self, event_name: str, context: dict[str, Any], **_: Any) -> None:
        context["load_started"] = time.perf_counter()

    def _after(self, event_name: str, context: dict[str, Any], **_: Any) -> None:
        started = context.get("load_started")
        if started is None:
            return
        name = event_name.split(".", 1)[1]
        with self._lock:
            self.count[name] += 1
            self.seconds[name] += time.perf_counter() - started


class Tap:
    """A WebSocket pass-through that times each ``play`` until a newer view comes back."""

    def __init__(self, upstream: str, stats: Stats) -> None:
        self._upstream = upstream
        self._stats = stats
        self._session: ClientSession | None = None
        self.app = web.Application()
        self.app.add_routes([web.get("/ws", self._handle)])

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if self._session is None:
            self._session = ClientSession()
        try:
            upstream = await self._session.ws_connect(
                f"{self._upstream}?{request.query_string}", max_msg_size=0
            )
        except Exception as exc:
            self._stats.errors[f"connect refused: {exc}"] += 1
            return web.Response(status=403)
        client = web.WebSocketResponse(max_msg_size=0)
        await client.prepare(request)
        pending: list[tuple[int, float]] = []

        async def outbound() -> None:
            async for message in client:
                if message.type != WSMsgType.TEXT:
                    break
                data = json.loads(message.data)
                if data.get("action") == "play":
                    now = time.perf_counter()
                    pending.append((int(data["version"]), now))
                    self._stats.plays += 1
                    if self._stats.first_play is None:
                        self._stats.first_play = now
                await upstream.send_str(message.data)
            await upstream.close()

        async def inbound() -> None:
            async for message in upstream:
                if message.type != WSMsgType.TEXT:
                    break
                self._observe(json.loads(message.data), pending)
                if not client.closed:
                    await client.send_str(message.data)
            await client.close()

        await asyncio.gather(outbound(), inbound(), return_exceptions=True)
        return client

    def _observe(self, data: dict[str, Any], pending: list[tuple[int, float]]) -> None:
        kind = data.get("type")
        view = data if kind == "view" else data.get("view") if kind == "error" else None
        if kind == "error":
            self._stats.errors[str(data.get("code"))] += 1
        if kind == "match_result":
            self._stats.finished.add(str(data["table_id"]))
            self._stats.last_result = time.perf_counter()
        if not isinstance(view, dict):
            return
        table_id = str(view["table_id"])
        if table_id not in self._stats.tables:
            self._stats.tables[table_id] = {
                seat: info["player"]["player_id"] for seat, info in view["seats"].items()
            }
        version = int(view["version"])
        while pending and pending[0][0] < version:
            _, sent = pending.pop(0)
            self._stats.latencies.append(time.perf_counter() - sent)


# --- the run ----------------------------------------------------------------------------


@dataclass
class Report:
    tables: int
    mode: str
    finished: int
    actions: int
    seconds: float
    latencies: list[float]
    errors: dict[str, int]
    problems: list[str]
    calls: dict[str, tuple[int, float]]
    wall: float
    peak_rss_mb: float = 0.0

    @property
    def ok(self) -> bool:
        return self.finished == self.tables and not self.errors and not self.problems

    def percentile(self, p: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]

    def as_dict(self) -> dict[str, Any]:
        return {
            "tables": self.tables,
            "mode": self.mode,
            "finished": self.finished,
            "actions": self.actions,
            "seconds": round(self.seconds, 2),
            "actions_per_second": round(self.actions / self.seconds, 1) if self.seconds else 0,
            "p50_ms": round(self.percentile(50) * 1000, 1),
            "p95_ms": round(self.percentile(95) * 1000, 1),
            "p99_ms": round(self.percentile(99) * 1000, 1),
            "max_ms": round(max(self.latencies, default=0) * 1000, 1),
            "errors": self.errors,
            "problems": self.problems,
            "aws_calls": {
                name: {"count": count, "seconds": round(seconds, 2)}
                for name, (count, seconds) in self.calls.items()
            },
            "wall_seconds": round(self.wall, 1),
            "peak_rss_mb": round(self.peak_rss_mb),
            "machine": machine(),
        }


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as info:
        for line in info:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} cores, {cpu}, Python {platform.python_version()}"


# --- the clients: 4·K bots behind the tap, in a process of their own ----------------------


@dataclass(frozen=True)
class ClientPlan:
    gateway_url: str
    tokens: dict[str, str]
    """Player id → a token of the stack's issuer (the private key stays in the parent)."""
    players: list[tuple[str, str]]
    mode: str
    pace: float
    tables: int
    timeout: float
    grace: float


def clients_process(plan: ClientPlan, all_finished: Any, results: Any) -> None:
    """The child process: the tap and the bots; sets ``all_finished`` when K matches ended."""
    logging.basicConfig(level=logging.ERROR)
    stats = asyncio.run(play_clients(plan, all_finished))
    results.put(stats)


async def play_clients(plan: ClientPlan, all_finished: Any) -> Stats:
    from local.bots import play_as_bot

    stats = Stats()
    tap = Tap(plan.gateway_url, stats)
    runner = web.AppRunner(tap.app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    tap_url = f"ws://127.0.0.1:{runner.addresses[0][1]}/ws"
    first = {"action": "queue", "mode": plan.mode}

    async def bot(player_id: str, name: str) -> None:
        try:
            await play_as_bot(tap_url, plan.tokens[player_id], first, plan.pace)
        except Exception as exc:
            stats.bot_failures.append(f"{player_id}: {exc!r}")

    tasks = [asyncio.create_task(bot(*player)) for player in plan.players]
    deadline = time.monotonic() + plan.timeout
    ended_at: float | None = None
    waiting: set[asyncio.Task[None]] = set(tasks)
    while waiting and time.monotonic() < deadline:
        _, waiting = await asyncio.wait(waiting, timeout=0.2)
        if len(stats.finished) >= plan.tables and ended_at is None:
            ended_at = time.monotonic()
            all_finished.set()
        if ended_at is not None and time.monotonic() > ended_at + plan.grace:
            break
    all_finished.set()
    if waiting:
        when = f"within {plan.grace} s of the last match end" if ended_at else "by the timeout"
        stats.bot_failures.append(f"{len(waiting)} bots never heard their match result {when}")
        for task in waiting:
            task.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)
    await tap.close()
    await runner.cleanup()
    return stats


# --- the run ----------------------------------------------------------------------------


def rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class MemoryGuard(threading.Thread):
    """Stops the run (sets ``release``) if this process grows past ``limit`` MB."""

    def __init__(self, limit: float, release: Any) -> None:
        super().__init__(name="memory-guard", daemon=True)
        self._limit = limit
        self._release = release
        self._stop_event = threading.Event()
        self.peak = 0.0
        self.exceeded = False

    def run(self) -> None:
        while not self._stop_event.wait(1.0):
            self.peak = max(self.peak, rss_mb())
            if self.peak > self._limit:
                self.exceeded = True
                self._release.set()
                return

    def stop(self) -> None:
        self._stop_event.set()


class CountingRelay:
    """``local.__main__.Relay`` counting posts to a still-open connection that the gateway
    could not deliver in time (the handlers then get 410 Gone and take the seat for absent).

    Posts to connections that have closed (a bot leaves after its match result) are 410s
    as they should be and are not counted.
    """

    def __init__(self) -> None:
        from local.__main__ import Relay

        self._relay = Relay()
        self.gone = 0

    @property
    def target(self) -> Any:
        return self._relay.target

    @target.setter
    def target(self, gateway: Any) -> None:
        self._relay.target = gateway

    def deliver(self, connection_id: str, data: bytes) -> bool:
        delivered = self._relay.deliver(connection_id, data)
        if not delivered:
            socket = getattr(self.target, "_sockets", {}).get(connection_id)
            if socket is not None and not socket.closed:
                self.gone += 1
        return delivered


@dataclass
class Stack:
    """The local stack of ``python -m local``, running in this process on free ports."""

    aws: Any
    gateway: Any
    gateway_url: str
    issuer: Any
    relay: CountingRelay
    calls: AwsCalls
    close: Any
    """``await stack.close()`` stops every part."""

    async def plan(self, prefix: str, mode: str, args: argparse.Namespace) -> ClientPlan:
        """Four fresh players per table (``args.tables``), welcomed to the ledger, as a plan."""
        from services.common.auth import Identity
        from services.ledger import handler as ledger_handler

        players = [(f"{prefix}-{i:04d}", f"{prefix} {i}") for i in range(4 * args.tables)]
        loop = asyncio.get_running_loop()
        ledger = ledger_handler.service()
        settings = self.aws.settings
        for player_id, _ in players:
            await loop.run_in_executor(
                None, ledger.welcome, player_id, settings.welcome_points, settings.welcome_jokers
            )
        tokens = {
            player_id: self.issuer.issue(Identity(player_id, name), ttl=6 * 3600)
            for player_id, name in players
        }
        return ClientPlan(
            self.gateway_url,
            tokens,
            players,
            mode,
            args.pace,
            args.tables,
            args.timeout,
            args.grace,
        )


async def start_stack(turn_seconds: int, poll: float) -> Stack:
    # Imported here, after main() has set the environment the handlers read at import.
    from local.__main__ import dispatch_forever
    from local.aws import LocalAws, start_moto
    from local.gateway import Gateway
    from local.issuer import LocalIssuer

    calls = AwsCalls()
    calls.install()
    issuer = LocalIssuer().serve()
    server, moto_url = start_moto()
    relay = CountingRelay()
    aws = LocalAws(moto_url, relay.deliver, issuer, turn_seconds=turn_seconds)
    gateway = Gateway(issuer)
    relay.target = gateway
    gateway.loop = asyncio.get_running_loop()
    stop = threading.Event()
    pump = threading.Thread(
        target=dispatch_forever, args=(aws, stop, poll), name="dispatcher", daemon=True
    )
    pump.start()
    runner = web.AppRunner(gateway.app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()

    async def close() -> None:
        stop.set()
        # The dispatcher's pass in flight finishes before the embedded AWS stops: one cut
        # off mid-pass fails against a closed port and reads as a failed delivery.
        await asyncio.to_thread(pump.join, 60)
        await runner.cleanup()
        gateway.close()
        aws.close()
        server.stop()
        issuer.stop()

    url = f"ws://127.0.0.1:{runner.addresses[0][1]}/ws"
    return Stack(aws, gateway, url, issuer, relay, calls, close)


async def play_wave(
    stack: Stack, plan: ClientPlan, max_rss_mb: float
) -> tuple[Stats, list[str], float]:
    """Plays ``plan`` in a clients process; returns their stats, problems and peak RSS."""
    loop = asyncio.get_running_loop()
    context = multiprocessing.get_context("spawn")
    all_finished = context.Event()
    results = context.Queue()
    clients = context.Process(
        target=clients_process, args=(plan, all_finished, results), name="clients", daemon=True
    )
    clients.start()
    problems: list[str] = []
    peak = MemoryGuard(max_rss_mb, all_finished)
    peak.start()
    try:
        await loop.run_in_executor(None, all_finished.wait, plan.timeout + 60)
        if peak.exceeded:
            clients.kill()
            problems.append(f"stopped: this process grew past {max_rss_mb} MB")
            stats = Stats()
        else:
            stats = await loop.run_in_executor(
                None, results.get, True, plan.grace + plan.timeout + 120
            )
    finally:
        peak.stop()
        clients.join(timeout=10)
        if clients.is_alive():
            clients.kill()
    return stats, problems, peak.peak


async def run(args: argparse.Namespace) -> Report:
    began = time.perf_counter()
    stack = await start_stack(args.turn_seconds, args.poll)
    aws = stack.aws
    loop = asyncio.get_running_loop()
    plan = await stack.plan("load", args.mode, args)
    base = stack.calls.snapshot()
    try:
        stats, problems, peak = await play_wave(stack, plan, args.max_rss_mb)
        during = stack.calls.since(base)
        problems += await loop.run_in_executor(None, check_ledgers, aws, stats, args.settle)
        auto = await loop.run_in_executor(None, auto_played, aws, stats)
        if auto:
            problems.append(f"{auto} turns auto-played (their seats had been taken for gone)")
    finally:
        await stack.close()
    if stack.relay.gone:
        problems.append(
            f"{stack.relay.gone} pushes to open connections timed out (answered 410 Gone)"
        )
    problems += stats.bot_failures
    problems += [f"dispatcher: {e}" for e in aws.dispatcher.errors]
    seconds = (stats.last_result or 0) - (stats.first_play or 0)
    return Report(
        tables=args.tables,
        mode=args.mode,
        finished=len(stats.finished),
        actions=len(stats.latencies),
        seconds=max(seconds, 0.0),
        latencies=stats.latencies,
        errors=dict(stats.errors),
        problems=problems,
        calls=during,
        wall=time.perf_counter() - began,
        peak_rss_mb=peak,
    )


def auto_played(aws: Any, stats: Stats) -> int:
    """Turns the server played for a seat it took for absent (none, in a healthy run)."""
    from services.common.dynamo_storage import DynamoStorage
    from services.common.store import GameStore

    store = GameStore(DynamoStorage.of(aws.client("dynamodb"), aws.settings))
    return sum(entry.auto for table_id in stats.tables for entry in store.records(table_id).logs)


def check_ledgers(aws: Any, stats: Stats, wait: float) -> list[str]:
    """Every finished match settled once, zero-sum; every account equals its entries."""
    from services.common.dynamo_storage import DynamoStorage
    from services.common.ledger import Ledger

    book = Ledger(DynamoStorage.of(aws.client("dynamodb"), aws.settings))
    problems: list[str] = []
    deadline = time.time() + wait
    for table_id in sorted(stats.finished):
        players = stats.tables.get(table_id, {})
        while True:
            settled = [
                (player, int(e["points"]))
                for player in players.values()
                for e in book.entries(player)
                if str(e["sk"]).startswith(f"ENTRY#{table_id}:settlement:")
            ]
            if len(settled) >= 4 or time.time() > deadline:
                break
            time.sleep(0.2)
        if len(settled) != 4:
            problems.append(f"{table_id}: {len(settled)} settlement entries, not 4")
        if sum(points for _, points in settled) != 0:
            problems.append(f"{table_id}: settlement not zero-sum: {settled}")
        for player in players.values():
            stored, summed = book.reconcile(player)
            if stored != summed:
                problems.append(f"{player}: balance {stored} but entries sum to {summed}")
    return problems


def render(report: Report) -> str:
    data = report.as_dict()
    lines = [
        f"load: {data['tables']} × {data['mode']} on {data['machine']}",
        f"  matches finished   {data['finished']}/{data['tables']}",
        f"  actions            {data['actions']} in {data['seconds']} s "
        f"= {data['actions_per_second']} actions/s",
        f"  latency (play → newer view)  p50 {data['p50_ms']} ms  p95 {data['p95_ms']} ms  "
        f"p99 {data['p99_ms']} ms  max {data['max_ms']} ms",
        f"  errors             {sum(report.errors.values())} {report.errors or ''}",
        f"  problems           {len(report.problems)}",
    ]
    lines += [f"    - {p}" for p in report.problems[:20]]
    total = sum(s for _, s in report.calls.values())
    count = sum(c for c, _ in report.calls.values())
    per_action = count / report.actions if report.actions else 0
    lines.append(
        f"  AWS calls          {count} ({per_action:.1f} per action), "
        f"{total:.1f} s inside calls (summed over threads; set-up left out)"
    )
    ranked = sorted(report.calls.items(), key=lambda kv: -kv[1][1])
    for name, (n, seconds) in ranked[:12]:
        lines.append(f"    {name:<45} {n:>6} calls {seconds:>7.1f} s {1000 * seconds / n:>7.1f} ms")
    lines.append(f"  wall time          {data['wall_seconds']} s (set-up and checks included)")
    lines.append(f"  peak memory        {data['peak_rss_mb']} MB (the stack's process)")
    return "\n".join(lines)


def quiet_environment() -> None:
    """Only the benchmark's own report on the console; set before the handlers are imported."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    warnings.filterwarnings("ignore", "No application metrics to publish")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.load", description=__doc__)
    parser.add_argument("--tables", type=int, default=1, help="concurrent matches (K)")
    parser.add_argument("--mode", choices=MODES, default="one_round")
    parser.add_argument("--pace", type=float, default=0.0, help="bot thinking time, seconds")
    parser.add_argument("--timeout", type=float, default=300.0, help="stop after this long")
    parser.add_argument("--settle", type=float, default=30.0, help="wait for settlements")
    parser.add_argument(
        "--grace", type=float, default=15.0, help="after the last match ends, wait for stragglers"
    )
    parser.add_argument("--poll", type=float, default=0.2, help="dispatcher idle wait")
    parser.add_argument("--turn-seconds", type=int, default=600)
    parser.add_argument(
        "--max-rss-mb", type=float, default=6000, help="stop if the stack's process grows past"
    )
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.tables < 1:
        parser.error("--tables must be at least 1")
    quiet_environment()
    # With metrics disabled, Powertools still prints each full set of 100 values (it never
    # flushes them): keep that out of the report.
    with contextlib.redirect_stdout(io.StringIO()):
        report = asyncio.run(run(args))
    print(render(report), flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(report.as_dict(), out, indent=2)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
