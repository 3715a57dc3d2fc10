"""Bots that join as ordinary WebSocket clients, to fill quick-start and arena queues.

They sign in, connect through the gateway like any browser, queue, and play
from their own views with the engine's search bot at ``normal``, the level
quick-start seat fill uses (each decision runs off the event loop, which the
gateway shares). The filler watches for
people waiting in a queue and sends bots after a short grace period, so a
person alone on a laptop gets a table.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Callable
from typing import Any

from aiohttp import ClientSession, WSMsgType
from pydantic import ValidationError

from local.issuer import Accounts, LocalIssuer
from services.common.auth import Identity
from services.common.protocol import Queue
from shared_engine import MatchMode, action_to_wire
from shared_engine.match import rounds_after
from shared_engine.observation import state_from_view
from shared_engine.search import level_policy
from shared_engine.view import PlayerView

log = logging.getLogger("canasta.local.bots")
QUICK_START_LEVEL = "normal"
NAMES = ("Ada", "Bela", "Cleo", "Dora", "Emil", "Fero", "Gina", "Hugo")


async def play_as_bot(ws_url: str, token: str, first: dict[str, Any], pace: float) -> None:
    """Connect, send ``first`` (e.g. a queue request) and play until the match ends."""
    async with ClientSession() as session, session.ws_connect(f"{ws_url}?token={token}") as ws:
        await ws.send_json(first)
        answered = -1
        async for message in ws:
            if message.type != WSMsgType.TEXT:
                return
            data = json.loads(message.data)
            kind = data.get("type")
            if kind in ("match_result", "queue_left"):
                return
            if kind == "round_result" and data.get("intermission_until") is not None:
                # Bots never keep a table waiting between two rounds.
                await ws.send_json(
                    {"action": "continue", "table_id": data["table_id"], "round": data["round"]}
                )
                continue
            if kind == "error":
                if not data.get("view"):
                    log.warning("bot refused: %s", data)
                    continue
                data = data["view"]
            elif kind != "view":
                continue
            if data["version"] <= answered:
                continue
            view = PlayerView.model_validate(data["view"])
            if view.turn != view.seat or not view.legal_actions:
                continue
            await asyncio.sleep(pace)
            answered = data["version"]
            match = data["match"]
            totals = (view.match_scores["A"], view.match_scores["B"])
            later = rounds_after(MatchMode(match["mode"]), match["round"], totals)
            policy = level_policy(
                QUICK_START_LEVEL, f"{data['table_id']}:{answered}", rounds_after=later
            )
            loop = asyncio.get_running_loop()
            action = await loop.run_in_executor(None, policy, state_from_view(view), view.seat)
            move = action_to_wire(action)
            await ws.send_json(
                {"action": "play", "table_id": data["table_id"], "version": answered, "move": move}
            )


class BotFiller:
    """Sends bots to a queue where a person has waited ``grace`` seconds without a table."""

    def __init__(
        self,
        ws_url: str,
        issuer: LocalIssuer,
        *,
        waiting: Callable[[str], int],
        welcome: Callable[[Identity], None],
        grace: float = 2.0,
        pace: float = 0.4,
        settle: float = 10.0,
        accounts: Accounts | None = None,
    ) -> None:
        """``accounts``: the local sign-in's, shared with the gateway, so that each bot's
        name is an account's and no person signs in under it or a look-alike of it."""
        self._ws_url = ws_url
        self._accounts = accounts or Accounts()
        self._issuer = issuer
        self._waiting = waiting
        self._welcome = welcome
        self._grace = grace
        self._pace = pace
        self._names = itertools.cycle(NAMES)
        self._settle = settle
        self._tasks: set[asyncio.Task[None]] = set()
        self._filling: set[str] = set()
        """Queues with a fill under way."""
        self.players: set[str] = set()
        """The player ids of the bots sent so far (plain subjects: the ids the services see).
        The services cannot tell them from people, and need not: their matches settle like
        any. Only the gateway asks, so that a bot's own ``queue`` sends no more bots."""

    def on_queue(self, message: object) -> None:
        """Called by the gateway on the event loop whenever a person asks to queue.

        The frame is read with the server's own model (``Queue``): one the
        server refuses as malformed queues nobody, so it sends no bots and
        raises nothing. One fill per queue at a time: frames that arrive while
        a fill is pending (a second tab, a resent or refused ``queue``) send no
        more bots.
        """
        try:
            request = Queue.model_validate(message)
        except ValidationError:
            return
        mode, variant = request.mode.value, request.variant
        stake = request.stake if request.mode is MatchMode.ARENA else 0
        queue = f"{mode}:{variant}:{stake}"
        if queue in self._filling:
            return
        self._filling.add(queue)
        task = asyncio.get_running_loop().create_task(self._fill_later(queue, mode, variant, stake))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(lambda _: self._filling.discard(queue))

    async def _fill_later(self, queue: str, mode: Any, variant: Any, stake: int) -> None:
        await asyncio.sleep(self._grace)
        loop = asyncio.get_running_loop()
        waiting = await loop.run_in_executor(None, self._waiting, queue)
        if waiting == 0:
            return
        for _ in range((4 - waiting % 4) % 4):
            identity = self._account()
            self.players.add(identity.player_id)
            await loop.run_in_executor(None, self._welcome, identity)
            token = self._issuer.issue(identity, ttl=6 * 3600)
            first = {"action": "queue", "mode": mode, "variant": variant, "stake": stake}
            task = loop.create_task(self._run(token, first))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        # The fill is done once its bots are in the queue and the table formed.
        deadline = loop.time() + self._settle
        while loop.time() < deadline:
            await asyncio.sleep(0.2)
            if await loop.run_in_executor(None, self._waiting, queue) % 4 == 0:
                return

    def _account(self) -> Identity:
        """A new account for the next bot, under the next free name (``Ada bot``, then
        ``Ada bot 2`` once every name has been taken)."""
        for count in itertools.count(1):
            base = f"{next(self._names)} bot"
            round_ = (count - 1) // len(NAMES) + 1
            name = base if round_ == 1 else f"{base} {round_}"
            made = self._accounts.sign_in(name, None)
            if made is not None:
                return made[0]
        raise AssertionError("unreachable: itertools.count never ends")

    async def _run(self, token: str, first: dict[str, Any]) -> None:
        try:
            await play_as_bot(self._ws_url, token, first, self._pace)
        except Exception:
            log.exception("a bot stopped")

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
