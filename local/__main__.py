"""``python -m local``: the whole game on this machine, no AWS account needed.

Starts moto in server mode as the embedded AWS with every table, bus, rule,
queue and schedule group; the local gateway (WebSocket, ``@connections``,
web client, sign-in); the dispatcher that plays the event source mappings;
and bots that fill seats. Ctrl-C stops everything.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import socket
import sys
import threading
import time
import warnings
from collections.abc import Sequence
from typing import TextIO

from aiohttp import web

from local import DEFAULT_PORT
from local.aws import LocalAws, start_moto
from local.bots import BotFiller
from local.console import Console, quiet_handler_logs
from local.gateway import OPERATOR_PATH, Gateway
from local.issuer import Accounts, LocalIssuer
from services.common.auth import Identity
from services.common.dynamo_storage import DynamoStorage
from services.ledger import handler as ledger_handler
from services.matchmaking.store import QueueStore

log = logging.getLogger("canasta.local")
HOUSEKEEPING_SECONDS = 30


class Relay:
    """Hands ``@connections`` posts to the gateway once it exists (the AWS side starts first)."""

    def __init__(self) -> None:
        self.target: Gateway | None = None

    def deliver(self, connection_id: str, data: bytes) -> bool:
        return self.target is not None and self.target.deliver(connection_id, data)

    def close(self, connection_id: str) -> bool:
        return self.target is not None and self.target.close_connection(connection_id)


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def dispatch_forever(aws: LocalAws, stop: threading.Event, interval: float) -> None:
    """What AWS event source mappings do, as a polling loop; errors are logged, never fatal."""
    tidied = time.monotonic()
    while not stop.is_set():
        try:
            delivered = aws.dispatcher.pump()
            if time.monotonic() - tidied > HOUSEKEEPING_SECONDS:
                aws.housekeeping()
                tidied = time.monotonic()
        except Exception:
            log.exception("dispatcher pass failed")
            delivered = 0
        if not delivered:
            stop.wait(interval)


async def serve(args: argparse.Namespace, out: TextIO) -> None:
    # The issuer is the gateway: it serves the keys on the port it listens on.
    issuer = LocalIssuer(f"http://{args.host}:{args.port}")
    server, moto_url = start_moto()
    relay = Relay()
    aws = LocalAws(
        moto_url,
        relay.deliver,
        issuer,
        turn_seconds=args.turn_seconds,
        intermission_seconds=args.intermission_seconds,
        close=relay.close,
    )
    settings = aws.settings
    ledger = ledger_handler.service()
    queues = QueueStore(DynamoStorage.of(aws.client("dynamodb"), settings))

    def welcome(identity: Identity) -> None:
        ledger.welcome(identity.player_id, settings.welcome_points, settings.welcome_jokers)

    accounts = Accounts()
    filler = BotFiller(
        f"ws://{args.host}:{args.port}/ws",
        issuer,
        waiting=lambda queue: len(queues.waiting(queue, 8)),
        welcome=welcome,
        accounts=accounts,
    )
    gateway = Gateway(
        issuer,
        on_signin=welcome,
        on_queue=filler.on_queue if args.bots else None,
        fillers=filler.players,
        config={"turn_seconds": args.turn_seconds, "stakes": list(settings.arena_stakes)},
        iam=aws.iam,
        accounts=accounts,
    )
    relay.target = gateway
    gateway.loop = asyncio.get_running_loop()
    stop = threading.Event()
    pump = threading.Thread(
        target=dispatch_forever, args=(aws, stop, 0.2), name="dispatcher", daemon=True
    )
    pump.start()
    if not args.verbose:
        quiet_handler_logs(out)
    console = Console(aws.client, settings.event_bus, out)
    threading.Thread(target=console.run, args=(stop,), name="console", daemon=True).start()
    runner = web.AppRunner(gateway.app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, args.host, args.port, shutdown_timeout=5).start()
    url = f"http://{args.host}:{args.port}/"
    print(
        "\n".join(
            [
                "Tile Canasta is running locally.",
                f"  open            {url}",
                f"  WebSocket       ws://{args.host}:{args.port}/ws?token=…",
                f"  token issuer    {issuer.url} (its keys: {issuer.jwks_url})",
                f"  embedded AWS    {moto_url} (moto: DynamoDB, EventBridge, SQS, Scheduler)",
                f"  @connections    {aws.endpoint.url}",
                f"  operators       http://{args.host}:{args.port}{OPERATOR_PATH} "
                f"(python -m ops --local {moto_url} --gateway http://{args.host}:{args.port})",
                f"  turn timer      {args.turn_seconds} s",
                f"  between rounds  {settings.intermission_seconds} s, or until everyone continues",
                f"  bots            {'fill waiting queues' if args.bots else 'off'}",
                "Press Ctrl-C to stop.",
            ]
        ),
        file=out,
        flush=True,
    )
    try:
        await asyncio.Event().wait()
    finally:
        stop.set()
        await filler.close()
        await gateway.close_sockets()
        await runner.cleanup()
        gateway.close()
        aws.close()
        server.stop()


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m local", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--turn-seconds", type=int, default=60)
    parser.add_argument(
        "--intermission-seconds",
        type=int,
        default=None,
        help="how long a round's result stays before the next round (default 20)",
    )
    parser.add_argument(
        "--no-bots", dest="bots", action="store_false", help="do not fill waiting queues with bots"
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="the handlers' structured logs and metrics too, instead of one line per event",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    out = sys.stdout
    if args.verbose:
        os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "INFO")
    else:
        os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
        warnings.filterwarnings("ignore", module="aws_lambda_powertools")
        # Powertools prints metrics with print() even when they are disabled (each full set
        # of 100 values): what the handlers print goes nowhere, the console's lines to ``out``.
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    if not port_free(args.host, args.port):
        print(
            f"Port {args.port} on {args.host} is already in use. "
            f"Stop what uses it, or choose another: make play PORT=8081",
            file=sys.stderr,
        )
        return 2
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args, out))
    print("stopped.", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
