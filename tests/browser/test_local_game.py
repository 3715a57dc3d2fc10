"""Local play in a real browser: ``python -m local`` started as a player starts it, then a game.

The acceptance test of local play. The whole local stack (embedded AWS,
gateway, dispatcher, bots) runs in a subprocess exactly as ``make play`` runs
it; headless Chromium signs in, starts a quick one-round table that the bots
fill, and plays turns through the page. What the page shows is checked against
what the server holds: the ``TABLE`` item of the games table in the embedded
AWS, read with boto3.

The refusal is made deterministic by arranging the position. On the player's
turn, after the draw, the round state is rewritten so that the hand holds
exactly three tiles of one rank the team may meld now (aces before the opening:
75 points), swapping tiles with the stock or another hand so that the 106 tiles
stay accounted for, conditional on the version read. A meld of one of them plus
a natural of another rank is refused (``meld_too_small``); the suggestion for
the three is then accepted.

The page learns about the rewrite from a ``sync`` sent on its own connection:
the test routes the page's WebSocket through Playwright to the real gateway and
sends on the server side. (Reloading the page sends a ``sync`` too, but closing
the socket makes the seat absent, and an absent seat's turn is auto-played at
once, TABLE-2: a reload in the middle of the turn may lose it.)

Needs the ``playwright`` package and Chromium at /usr/bin/chromium; skipped
without them unless ``CI`` is set, where their absence fails. Screenshots are
written to ``artifacts/browser/``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from local.issuer import player_id_for
from services.common import constants
from services.common.dynamo_storage import DynamoStorage, from_item
from services.common.records import LogEntry, TableRecord, table_key
from services.common.store import GameStore
from services.common.unit_of_work import Committed, Equals, Update
from shared_engine.packing import pack, unpack
from shared_engine.state import RoundState, dumps, from_json, team_of, to_json
from shared_engine.tiles import NATURAL_RANKS, VALUES, names, parse_tile

try:
    from playwright import sync_api
except ImportError:  # the browser extra is not installed
    sync_api = None

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "browser"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PLAYER = "Tess"
REGION = "eu-west-1"
READY = "Press Ctrl-C to stop."
AWS_LINE = re.compile(r"^\s*embedded AWS\s+(http://\S+)")
TEAMS = "AB"
BONUS_THREES = ("3R", "3Y")

STACK_START_S = 90
TABLE_FORMED_MS = 45_000
TURN_MS = 60_000
UI_MS = 20_000

# What the page can act on now: the phase of the player's turn once its button is
# enabled (the view arrived and no move is waiting), "round_over", or null.
MY_TURN_JS = """() => {
  const s = document.getElementById('table-screen');
  if (!s || s.hidden) return null;
  if (s.dataset.phase === 'round_over') return 'round_over';
  if (s.dataset.myTurn !== 'true') return null;
  const button = document.getElementById(s.dataset.phase === 'draw' ? 'act-draw' : 'act-discard');
  return button && !button.disabled ? s.dataset.phase : null;
}"""
SHOWN_JS = """() => ({
  version: Number(document.getElementById('table-screen').dataset.version),
  hand: [...document.querySelectorAll('[data-testid="hand-tile"]')].map((e) => e.dataset.tile),
  counts: Object.fromEntries([1, 2, 3, 4].map((n) => [n, Number(
    document.querySelector(`[data-testid="seat-count-${n}"]`).dataset.count)])),
  stock: document.querySelector('[data-testid="stock-count"]').textContent.trim(),
})"""
VERSION_ABOVE_JS = (
    "v => Number(document.getElementById('table-screen').dataset.version) > v"
    " && !document.getElementById('actions').classList.contains('busy')"
)


def _require_browser() -> None:
    missing = []
    if sync_api is None:
        missing.append("the playwright package")
    if not CHROMIUM.exists():
        missing.append(str(CHROMIUM))
    if not missing:
        return
    reason = f"local browser test needs {' and '.join(missing)}"
    if os.environ.get("CI"):  # set at all (CI=true): a missing browser is a failure
        pytest.fail(f"{reason} (CI is set: this must not be skipped)")
    pytest.skip(reason)


def strings(lang: str) -> dict[str, str]:
    """The plain (non-plural) strings of one language table, web/i18n/<lang>.json."""
    table = json.loads((ROOT / "web" / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
    return {key: value for key, value in table.items() if isinstance(value, str)}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --- the local stack --------------------------------------------------------------


class LocalStack:
    """``python -m local`` in a subprocess; its output is kept for failure reports."""

    def __init__(self, **environment: str) -> None:
        """``environment``: settings of the services (``CANASTA_…``) for this stack."""
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.aws_url: str | None = None
        self.output: deque[str] = deque(maxlen=300)
        self._ready = threading.Event()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "local", "--port", str(self.port), "--turn-seconds", "120"],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **environment},
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, name="local-stack-output", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            line = raw.rstrip("\n")
            self.output.append(line)
            found = AWS_LINE.match(line)
            if found and self.aws_url is None:
                self.aws_url = found.group(1)
            if line.strip() == READY:
                self._ready.set()

    def tail(self, lines: int = 40) -> str:
        return "\n".join(list(self.output)[-lines:])

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.2):
            if self.process.poll() is not None:
                pytest.fail(
                    f"python -m local exited with {self.process.returncode}:\n{self.tail()}"
                )
            if time.monotonic() > deadline:
                pytest.fail(f"python -m local not ready after {timeout} s:\n{self.tail()}")
        assert self.aws_url, f"no embedded AWS address printed:\n{self.tail()}"

    def stop(self) -> None:
        """Ctrl-C, as a player stops it; killed if it does not stop in time."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._reader.join(timeout=5)
        if self.process.stdout is not None:
            self.process.stdout.close()


class Games:
    """The games table of the embedded AWS, read and rigged through the services' own store."""

    def __init__(self, endpoint: str) -> None:
        import boto3

        self._db = boto3.client(
            "dynamodb",
            endpoint_url=endpoint,
            region_name=REGION,
            aws_access_key_id="local",
            aws_secret_access_key="local",
        )
        self._storage = DynamoStorage.default(self._db)
        self._store = GameStore(self._storage)

    def table_ids(self) -> list[str]:
        """Every table's id: a scan, which no service makes, so it is the test's own."""
        ids: list[str] = []
        kwargs: dict[str, Any] = {"TableName": constants.GAMES.name, "ConsistentRead": True}
        while True:
            page = self._db.scan(**kwargs)
            items = map(from_item, page.get("Items", []))
            ids.extend(
                TableRecord.from_item(i).table_id for i in items if i["sk"] == constants.TABLE_SK
            )
            if "LastEvaluatedKey" not in page:
                return ids
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def table(self, table_id: str) -> TableRecord:
        table = self._store.get_table(table_id)
        assert table is not None, table_id
        return table

    def logs(self, table_id: str) -> tuple[LogEntry, ...]:
        """Every move the server logged at the table, every round's, in order."""
        return self._store.history.records(table_id).logs

    def read(self, table_id: str) -> tuple[int, RoundState]:
        table = self.table(table_id)
        assert table.state is not None, table_id
        return table.version, unpack(table.state)

    def write_state(self, table_id: str, expected: int, state: RoundState) -> int:
        """Replace the round state and bump the version, only if still at ``expected``."""
        outcome = self._storage.commit(
            [
                Update(
                    "games",
                    table_key(table_id),
                    set={"state": pack(state), "version": expected + 1},
                    when=Equals("version", expected),
                )
            ]
        )
        assert isinstance(outcome, Committed), outcome
        return expected + 1


# --- arranging the position ----------------------------------------------------------


def _rank(tile: str) -> int:
    return parse_tile(tile) >> 2


def contains(meld: Any, tiles: list[str]) -> bool:
    """Whether ``meld`` (tile ids) holds every one of ``tiles`` (names), as a multiset."""
    return not Counter(tiles) - Counter(names(meld))


def _all_tiles(state: RoundState) -> Counter[str]:
    raw = to_json(state)
    groups = [*raw["hands"].values(), raw["stock"], raw["discard"]]
    groups += [tiles for team in raw["melds"].values() for tiles in team]
    groups += list(raw["bonus_threes"].values())
    return Counter(tile for group in groups for tile in group)


def arrange(state: RoundState, seat: int) -> tuple[RoundState, int, str]:
    """The position with ``seat`` holding exactly three tiles of a rank its team may meld now.

    Aces first (75 points open the team), then, once the team has opened, any
    natural rank it has no meld of; before the opening, if the aces are melded
    elsewhere, the meld of twos (60 points). Returns the new state, that rank and a
    natural of a rank the team has no meld of, kept in the hand. Tiles are swapped
    one for one with the stock (or, failing that, another hand), so every hand and
    the stock keep their sizes and the 106 tiles are unchanged. Everything else
    stays, the ``ply`` too: the log entries of the next moves are keyed by it.
    """
    team = team_of(seat)
    raw = to_json(state)
    hands = {int(key): list(tiles) for key, tiles in raw["hands"].items()}
    mine = hands[seat]
    pools: list[list[str]] = [raw["stock"], *(hands[s] for s in (1, 2, 3, 4) if s != seat)]
    if len(mine) < 5:  # the meld of three must leave two tiles (OUT-1, OUT-2)
        pytest.fail(f"seat {seat} holds too few tiles to arrange a meld: {raw}")

    def held(rank: int, where: list[str]) -> int:
        return sum(1 for tile in where if tile != "JK" and _rank(tile) == rank)

    def meldable(rank: int) -> bool:
        opens = state.opened[team] or 3 * VALUES[rank * 4] >= state.thresholds[team]
        available = held(rank, mine) + sum(held(rank, pool) for pool in pools)
        return opens and not state.melds[team][rank] and available >= 3

    ranks = sorted(NATURAL_RANKS, key=lambda r: -VALUES[r * 4]) + ([2] if state.twos else [])
    rank = next((r for r in ranks if meldable(r)), None)
    if rank is None:
        pytest.fail(f"no rank to arrange three tiles of for seat {seat}: {raw}")

    def natural_other(tile: str) -> bool:
        other_rank = -1 if tile == "JK" else _rank(tile)
        return (
            other_rank in NATURAL_RANKS and other_rank != rank and not state.melds[team][other_rank]
        )

    def swap(give: str, pool: list[str], index: int) -> None:
        mine.remove(give)
        mine.append(pool[index])
        pool[index] = give

    def find(wanted: Any) -> tuple[list[str], int]:
        for pool in pools:
            for index, tile in enumerate(pool):
                if wanted(tile):
                    return pool, index
        pytest.fail(f"no tile to swap in for seat {seat}: {raw}")

    other = next((tile for tile in mine if natural_other(tile)), None)
    if other is None:
        give = next(tile for tile in mine if tile == "JK" or _rank(tile) != rank)
        swap(give, *find(natural_other))
        other = mine[-1]
    while held(rank, mine) > 3:
        give = next(tile for tile in mine if tile != "JK" and _rank(tile) == rank)
        swap(
            give,
            *find(lambda t: t not in BONUS_THREES and (t == "JK" or _rank(t) != rank)),
        )
    while held(rank, mine) < 3:
        spare = [tile for tile in mine if (tile == "JK" or _rank(tile) != rank)]
        spare.remove(other)
        swap(spare[-1], *find(lambda t: t != "JK" and _rank(t) == rank))

    raw["hands"] = {str(s): tiles for s, tiles in hands.items()}
    arranged = from_json(raw)
    assert arranged.tile_count() == 106, arranged
    assert _all_tiles(arranged) == _all_tiles(state)
    assert [len(h) for h in arranged.hands] == [len(h) for h in state.hands]
    assert len(arranged.stock) == len(state.stock)
    return arranged, rank, other


def _kind(tile: str) -> str:
    return "JK" if tile == "JK" else str(_rank(tile))


def gather(
    state: RoundState, seat: int, wants: dict[str, int], top: str | None = None
) -> RoundState:
    """The position with ``seat`` holding exactly ``wants[kind]`` tiles of each kind (a rank
    as a string, or ``JK``), and, with ``top``, a tile of that rank on the discard pile.

    As in ``arrange``: tiles are swapped one for one with the stock (or another hand),
    never a bonus three into a hand, so sizes and the 106 tiles stay as they were.
    """
    raw = to_json(state)
    hands = {int(key): list(tiles) for key, tiles in raw["hands"].items()}
    mine = hands[seat]
    pools: list[list[str]] = [raw["stock"], *(hands[s] for s in (1, 2, 3, 4) if s != seat)]

    def take(wanted: Any) -> tuple[list[str], int]:
        for pool in pools:
            for index, tile in enumerate(pool):
                if tile not in BONUS_THREES and wanted(tile):
                    return pool, index
        pytest.fail(f"no tile to swap in for seat {seat}: {raw}")

    while True:
        held = Counter(_kind(t) for t in mine)
        over = [k for k, n in held.items() if n > wants.get(k, n)]
        under = [k for k, n in wants.items() if held[k] < n]
        if not over and not under:
            break
        spare = over or [k for k in held if k not in wants]
        give = next(t for t in mine if _kind(t) in (spare if under else over[:1]))
        wanted = under[:1] if under else None
        pool, index = take(lambda t, w=wanted: _kind(t) in w if w else _kind(t) not in wants)
        mine[mine.index(give)], pool[index] = pool[index], give
    if top is not None:
        pool, index = take(lambda t: t != "JK" and _kind(t) == top)
        raw["discard"][-1], pool[index] = pool[index], raw["discard"][-1]
    raw["hands"] = {str(s): tiles for s, tiles in hands.items()}
    gathered = from_json(raw)
    assert _all_tiles(gathered) == _all_tiles(state)
    assert [len(h) for h in gathered.hands] == [len(h) for h in state.hands]
    return gathered


def free_ranks(state: RoundState, seat: int, needed: int) -> list[int]:
    """Natural ranks the seat's team has no meld of, with ``needed`` tiles outside melds."""
    raw = to_json(state)
    loose = Counter(_kind(t) for group in [*raw["hands"].values(), raw["stock"]] for t in group)
    team = team_of(seat)
    return [r for r in NATURAL_RANKS if not state.melds[team][r] and loose[str(r)] >= needed]


# --- the test ----------------------------------------------------------------------


def clear_artifacts() -> None:
    """Screenshots of an earlier run must not pass for this one's."""
    for old in ARTIFACTS.glob("local-game-*.png"):
        old.unlink(missing_ok=True)


def snap(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"local-game-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def seen(page: Any, name: str) -> str:
    """For assertion messages: a screenshot of the page as the check failed."""
    try:
        return f"screenshot: {snap(page, name)}"
    except Exception as exc:  # the page itself may be gone
        return f"no screenshot ({exc})"


@pytest.fixture(scope="module", autouse=True)
def fresh_artifacts() -> None:
    """Once per run, so that one test's screenshots do not remove another's."""
    clear_artifacts()


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    _require_browser()
    started = LocalStack()
    try:
        started.wait_ready(STACK_START_S)
        yield started
    finally:
        started.stop()


class Player:
    """The person at the table, acting only through the page; checks against the server."""

    def __init__(self, page: Any, stack: LocalStack, games: Games) -> None:
        self.page = page
        self.stack = stack
        self.games = games
        self.en = strings("en")
        self.fr = strings("fr")
        self.upstream: list[Any] = []
        self.table_id = ""
        self.seat = 0
        self.touch = False  # tap (a phone's touch events) rather than click
        self.timings: dict[str, list[float]] = {}

    def press(self, selector: str) -> None:
        if self.touch:
            self.page.tap(selector)
        else:
            self.page.click(selector)

    def timed(self, name: str, started: float) -> None:
        self.timings.setdefault(name, []).append(round(time.monotonic() - started, 3))

    def route_socket(self, context: Any) -> None:
        """The page's WebSocket reaches the real gateway through a route the test can speak on."""
        context.route_web_socket(
            re.compile(rf"^ws://127\.0\.0\.1:{self.stack.port}/ws"),
            lambda ws: self.upstream.append(ws.connect_to_server()),
        )

    def rest_pointer(self) -> None:
        """The pointer off the table, so that no hover outline is left on the hand's tiles."""
        if not self.touch:
            self.page.mouse.move(0, 0)

    def version(self) -> int:
        return int(self.page.get_attribute('[data-testid="table-screen"]', "data-version") or 0)

    def sit_down(self, mode: str = "one_round", lobby: Callable[[], None] | None = None) -> None:
        """Sign in and start a quick table of ``mode``; bots take the other seats.
        ``lobby``: called once the lobby is shown, before the table is asked for."""
        page = self.page
        started = time.monotonic()
        page.goto(self.stack.url)
        page.wait_for_selector('[data-testid="signin-screen"]:not([hidden])')
        self.timed("page load to sign-in", started)
        page.fill('[data-testid="signin-name"]', PLAYER)
        started = time.monotonic()
        self.press('[data-testid="signin-button"]')
        page.wait_for_selector('[data-testid="lobby-screen"]:not([hidden])')
        page.wait_for_selector('[data-testid="connection-status"][data-state="online"]')
        self.timed("sign-in to lobby online", started)
        if lobby is not None:
            lobby()
        page.check(f'#quick-form input[name="mode"][value="{mode}"]', force=True)
        page.check('#quick-form input[name="variant"][value="twos-meld"]', force=True)
        started = time.monotonic()
        self.press('[data-testid="quick-start-button"]')
        page.wait_for_selector('[data-testid="hand-tile"]', timeout=TABLE_FORMED_MS)
        self.timed("start to first hand", started)
        shown = page.inner_text('[data-testid="match-mode"]')
        assert shown == self.en[f"mode.{mode}"], seen(page, "mode")

        tables = self.games.table_ids()
        assert len(tables) == 1, f"tables in the games table: {tables}; {seen(page, 'tables')}"
        self.table_id = tables[0]
        seats = self.games.table(self.table_id).seats
        you = page.get_attribute('[data-testid^="seat-"][data-role="you"]', "data-seat")
        self.seat = int(you or 0)
        assert seats[self.seat].player_id == player_id_for(PLAYER), (seats, you)
        # The local fillers took the other seats, as players: the match settles (MATCH-3).
        others = [seats[s] for s in (1, 2, 3, 4) if s != self.seat]
        assert all(p.name.endswith(" bot") and not p.bot for p in others), seats

    def agree_with_server(self, moment: str) -> tuple[int, RoundState, list[str]]:
        """The page shows this seat's hand, every hand's size and the stock as the server holds."""
        page = self.page
        deadline = time.monotonic() + 15
        while True:
            shown = page.evaluate(SHOWN_JS)
            version, state = self.games.read(self.table_id)
            if shown["version"] == version:
                break
            assert time.monotonic() < deadline, (
                f"{moment}: the page stays at version {shown['version']}, the server is at "
                f"{version}; {seen(page, moment)}"
            )
            page.wait_for_timeout(150)
        assert sorted(shown["hand"]) == sorted(names(state.hands[self.seat - 1])), (
            f"{moment}: the hand shown is not the server's; {seen(page, moment)}"
        )
        sizes = {str(s): len(state.hands[s - 1]) for s in (1, 2, 3, 4)}
        assert shown["counts"] == sizes, (
            f"{moment}: seat counts differ from the hands; {seen(page, moment)}"
        )
        assert shown["stock"] == str(len(state.stock)), f"{moment}: {seen(page, moment)}"
        return version, state, shown["hand"]

    def my_turn(self) -> str:
        """The phase once this seat can act, or ``round_over``."""
        return str(self.page.wait_for_function(MY_TURN_JS, timeout=TURN_MS).json_value())

    def after(self, version: int) -> None:
        self.page.wait_for_function(VERSION_ABOVE_JS, arg=version, timeout=TURN_MS)

    def draw(self) -> None:
        version = self.version()
        label = self.page.inner_text('[data-testid="draw-button"]')
        assert label == self.en["action.draw"], seen(self.page, "draw")
        started = time.monotonic()
        self.press('[data-testid="draw-button"]')
        self.rest_pointer()
        self.after(version)
        self.timed("move round trip", started)
        self.page.wait_for_function(MY_TURN_JS)

    def discard(self) -> None:
        page = self.page
        version = self.version()
        self.rest_pointer()
        if page.is_visible('[data-testid="clear-selection"]'):
            self.press('[data-testid="clear-selection"]')
        self.press('[data-testid="hand-tile"] >> nth=0')
        started = time.monotonic()
        self.press('[data-testid="discard-button"]')
        self.rest_pointer()
        self.after(version)
        self.timed("move round trip", started)

    def play_until_play_phase(self, label: str, seconds: float) -> bool:
        """Draw or discard on each of this seat's turns until it is in the play phase.

        False if the round ended first (the server agreeing).
        """
        deadline = time.monotonic() + seconds
        while True:
            assert time.monotonic() < deadline, f"no play phase; {seen(self.page, label)}"
            phase = self.my_turn()
            if phase == "round_over":
                _, state = self.games.read(self.table_id)
                assert state.round_over, f"{label}: {seen(self.page, label)}"
                return False
            self.agree_with_server(f"{label}-{phase}")
            if phase == "play":
                return True
            if phase == "draw":
                self.draw()
            else:
                self.discard()

    def rewrite(self, version: int, state: RoundState) -> int:
        """The arranged position written to the server, and the page told to sync."""
        version = self.games.write_state(self.table_id, version, state)
        assert self.upstream, "the page's WebSocket was not routed"
        self.upstream[-1].send(json.dumps({"action": "sync"}))
        self.page.wait_for_function(
            "v => Number(document.getElementById('table-screen').dataset.version) === v",
            arg=version,
        )
        return version

    def pick(self, *tiles: str) -> None:
        """Select these tiles in the hand, one tile each (of two identical, the next one)."""
        self.rest_pointer()
        if self.page.is_visible('[data-testid="clear-selection"]'):
            self.page.click('[data-testid="clear-selection"]')
        for tile in tiles:
            self.page.locator(
                f'[data-testid="hand-tile"][data-tile="{tile}"]:not(.selected)'
            ).first.click()

    def arrange_and_sync(self) -> tuple[int, str, list[str]]:
        """Three tiles of one rank in the hand, written to the server, seen by the page."""
        version, state = self.games.read(self.table_id)
        assert (state.turn, state.phase) == (self.seat, "play"), (state.turn, state.phase)
        arranged, rank, other = arrange(state, self.seat)
        self.rewrite(version, arranged)
        _, _, hand = self.agree_with_server("arranged")
        assert sum(1 for tile in hand if tile != "JK" and _rank(tile) == rank) == 3, hand
        assert self.page.is_enabled('[data-testid="meld-button"]'), seen(self.page, "no-meld")
        return rank, other, hand

    def keep_partner_from_opening(self) -> None:
        """Before the partner's first turn, its hand holds no wild and no two naturals of a
        rank (one of each natural rank, the rest blocking threes): whatever it draws, it
        cannot meld or take the pile, so this seat's first meld is the team's opening.
        The local table seats the player first (seat 1, who opens the round with a
        discard), so this turn comes before the partner's."""
        if self.my_turn() != "first_discard":
            return
        version, state = self.games.read(self.table_id)
        partner = (self.seat + 1) % 4 + 1
        size = len(state.hands[partner - 1])
        wants = {str(r): 1 for r in NATURAL_RANKS} | {"2": 0, "JK": 0, "3": size - 11}
        # A joker kept in this hand for the opening, while no meld can take one yet.
        with_joker = gather(state, self.seat, {"JK": 1})
        self.rewrite(version, gather(with_joker, partner, wants))
        self.page.wait_for_function(MY_TURN_JS)

    def two_melds_by_hand(self, staged: Callable[[], object] = lambda: None) -> None:
        """OPEN-1: two new melds at once, one of them with a joker, selected tile by tile.

        Nothing is suggested for this exact move; the page lays out what was selected,
        sends nothing (``staged`` is called then), and sends it with the discard (TURN-1:
        one message). The team opens with it unless the partner opened earlier in the
        round.
        """
        version, state = self.games.read(self.table_id)
        assert (state.turn, state.phase) == (self.seat, "play"), (state.turn, state.phase)
        team = team_of(self.seat)
        assert not state.opened[team], "the partner opened first"
        low, high = free_ranks(state, self.seat, 3)[:2]
        version = self.rewrite(
            version, gather(state, self.seat, {str(low): 2, "JK": 1, str(high): 3})
        )
        _, _, hand = self.agree_with_server("two-melds")
        by_rank = {r: [t for t in hand if t != "JK" and _rank(t) == r] for r in (low, high)}
        self.pick(*by_rank[low], "JK", *by_rank[high])
        self.page.click('[data-testid="meld-button"]')
        self.rest_pointer()
        for r in (low, high):
            meld = f'[data-testid="meld-{TEAMS[team]}-{r}"]'
            assert self.page.get_attribute(meld, "data-staged") == "true", seen(self.page, "staged")
        assert self.games.read(self.table_id)[0] == version, "laid out, not sent"
        staged()
        self.discard()
        _, after, melded = self.agree_with_server("two-melds-laid")
        # The partner may have added a natural to them since, on its turn after this one.
        assert contains(after.melds[team][low], ["JK", *by_rank[low]])
        assert contains(after.melds[team][high], by_rank[high])
        assert len(melded) == len(hand) - 7 and after.opened[team], "OPEN-1: the team opened"
        for r in (low, high):
            meld = f'[data-testid="meld-{TEAMS[team]}-{r}"]'
            assert self.page.get_attribute(meld, "data-staged") == "false", seen(self.page, "sent")
        opened = self.page.get_attribute(f'[data-testid="opening-{TEAMS[team]}"]', "data-opened")
        assert opened == "true", seen(self.page, "two-melds-opened")

    def pickup_with_two_of_three(self) -> None:
        """PILE-1: three naturals of the top's rank held, the pile taken with two of them."""
        version, state = self.games.read(self.table_id)
        assert (state.turn, state.phase) == (self.seat, "draw"), (state.turn, state.phase)
        assert state.discard, "no pile to take"
        team = team_of(self.seat)
        rank = next(r for r in free_ranks(state, self.seat, 4) if state.opened[team] or r == 1)
        version = self.rewrite(version, gather(state, self.seat, {str(rank): 3}, top=str(rank)))
        _, arranged, hand = self.agree_with_server("pickup")
        pair = [t for t in hand if t != "JK" and _rank(t) == rank][:2]
        self.pick(*pair)
        assert self.page.is_enabled('[data-testid="take-pile-button"]'), seen(self.page, "take")
        self.page.click('[data-testid="take-pile-button"]')
        self.rest_pointer()
        self.after(version)
        _, after, taken = self.agree_with_server("pickup-taken")
        assert len(after.melds[team][rank]) == 3, names(after.melds[team][rank])
        # PILE-4: the rest of the pile comes to the hand, with any tile of that rank in it.
        below = sum(1 for t in names(arranged.discard[:-1]) if t != "JK" and _rank(t) == rank)
        assert sum(1 for t in taken if t != "JK" and _rank(t) == rank) == 1 + below, taken
        assert len(taken) == len(hand) - 2 + len(arranged.discard) - 1
        assert after.discard == ()

    def play_until_draw_phase(self, label: str, seconds: float) -> bool:
        """Discard on each of this seat's turns until it is to draw; False if the round ended."""
        deadline = time.monotonic() + seconds
        while True:
            assert time.monotonic() < deadline, f"no draw phase; {seen(self.page, label)}"
            phase = self.my_turn()
            if phase == "round_over":
                return False
            self.agree_with_server(f"{label}-{phase}")
            if phase == "draw":
                return True
            self.discard()

    def refused_meld(self, rank: int, other: str, hand: list[str]) -> None:
        """One tile of the rank and a natural of another: a two-tile meld, refused in words
        when the discard sends it, and back in the hand; the discard is not applied either.

        The client sends one spec per natural rank (a 2 joins the single natural
        selected), so the server sees a new meld of fewer than three tiles.
        """
        page = self.page
        version = self.version()
        self.rest_pointer()
        if page.is_visible('[data-testid="clear-selection"]'):
            page.click('[data-testid="clear-selection"]')
        one = next(tile for tile in hand if tile != "JK" and _rank(tile) == rank)
        page.locator(f'[data-testid="hand-tile"][data-tile="{one}"]').first.click()
        page.locator(f'[data-testid="hand-tile"][data-tile="{other}"]').first.click()
        page.click('[data-testid="meld-button"]')
        self.press('[data-testid="hand-tile"] >> nth=0')
        page.click('[data-testid="discard-button"]')
        self.rest_pointer()
        page.wait_for_selector('[data-testid="error-banner"]:not([hidden])')
        refusal = snap(page, "refusal")
        text = page.inner_text('[data-testid="error-text"]')
        assert text == self.en["error.meld_too_small"], f"screenshot: {refusal}"
        unchanged, _, still = self.agree_with_server("refused")
        assert (unchanged, sorted(still)) == (version, sorted(hand)), f"screenshot: {refusal}"
        assert page.locator('[data-staged="true"]').count() == 0, f"screenshot: {refusal}"
        if page.is_visible('[data-testid="clear-selection"]'):
            page.click('[data-testid="clear-selection"]')

    def suggested_meld(self, rank: int, hand: list[str]) -> None:
        """The offered meld of exactly those three tiles is laid out, then sent with the
        discard: the hand shrinks by three and the discarded tile."""
        page = self.page
        # Pointing at a suggestion moves it (see rest_pointer): use it from the keyboard
        # (focus, then Enter, which clicks the button).
        if page.is_visible('[data-testid="suggestions-more"]'):
            page.click('[data-testid="suggestions-more"]')
        self.rest_pointer()
        label = self.en["sugg.spec"].replace("{rank}", str(rank)).replace("{n}", "3")
        melds = '[data-testid="suggestion"][data-type="meld"]'
        offered = page.eval_on_selector_all(melds, "els => els.map((e) => e.textContent)")
        assert label in offered, f"offered {offered}, wanted {label!r}; {seen(page, 'offered')}"
        page.locator(melds).nth(offered.index(label)).focus()
        page.keyboard.press("Enter")
        team = TEAMS[team_of(self.seat)]
        meld = f'[data-testid="meld-{team}-{rank}"]'
        assert page.get_attribute(meld, "data-staged") == "true", seen(page, "staged")
        self.discard()
        _, _, melded = self.agree_with_server("melded")
        assert len(melded) == len(hand) - 4, f"{hand} -> {melded}; {seen(page, 'melded')}"
        assert not [tile for tile in melded if tile != "JK" and _rank(tile) == rank], melded
        # The partner may have added a natural to it since, on its turn after this one.
        assert int(page.get_attribute(meld, "data-size") or 0) >= 3, seen(page, "meld")
        opened = page.get_attribute(f'[data-testid="opening-{team}"]', "data-opened")
        assert opened == "true", seen(page, "opened")

    def switch_language(self) -> None:
        """French and back: a visible label follows."""
        page = self.page
        button = '[data-testid="draw-button"]'
        english, french = self.en["action.draw"], self.fr["action.draw"]
        assert english != french
        assert page.inner_text(button) == english, seen(page, "lang-en")
        page.select_option('[data-testid="language-select"]', "fr")
        assert page.inner_text(button) == french, seen(page, "lang-fr")
        assert page.evaluate("document.documentElement.lang") == "fr"
        page.select_option('[data-testid="language-select"]', "en")
        assert page.inner_text(button) == english, seen(page, "lang-back")


@contextlib.contextmanager
def chromium_page(**context: Any) -> Iterator[tuple[Any, Any, list[str]]]:
    """Headless Chromium with one context (``context``: its options) and one page, waiting
    ``UI_MS`` at most, with the errors the page throws; closed on the way out."""
    assert sync_api is not None
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        opened = browser.new_context(locale="en-US", **context)
        page = opened.new_page()
        page.set_default_timeout(UI_MS)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        try:
            yield opened, page, errors
        finally:
            opened.close()
            browser.close()


def test_play_a_local_game_in_the_browser(stack: LocalStack) -> None:
    assert stack.aws_url is not None and sync_api is not None
    games = Games(stack.aws_url)
    with chromium_page(viewport={"width": 1280, "height": 1000}) as (context, page, errors):
        player = Player(page, stack, games)
        try:
            player.route_socket(context)
            player.sit_down()
            player.keep_partner_from_opening()
            started = player.play_until_play_phase("first", 90)
            assert started, f"the round ended before a turn to play; {seen(page, 'first')}"
            player.two_melds_by_hand()
            started = player.play_until_play_phase("second", 60)
            assert started, f"the round ended before a second turn; {seen(page, 'second')}"
            rank, other, hand = player.arrange_and_sync()
            player.refused_meld(rank, other, hand)
            player.suggested_meld(rank, hand)
            player.switch_language()
            assert player.play_until_draw_phase("pickup", 60), "the round ended first"
            player.pickup_with_two_of_three()
            player.discard()
            # Another turn from the rearranged position: the bots played on from it (unless
            # they went out first: a one-round table may end early).
            if player.play_until_play_phase("third", 60):
                player.discard()
            final = snap(page, "table")
            assert errors == [], f"errors in the page: {errors}; screenshot: {final}"
        except BaseException as exc:
            exc.add_note(seen(page, "failure"))
            with contextlib.suppress(Exception):
                version, state = games.read(player.table_id)
                exc.add_note(f"the server holds version {version}: {dumps(state)}")
            exc.add_note(f"python -m local said:\n{stack.tail()}")
            raise
