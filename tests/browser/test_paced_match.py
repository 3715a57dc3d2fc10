"""A three-round match on a phone, played at a person's pace against the real local stack.

``python -m local`` runs as ``make play`` runs it; headless Chromium at 390x844 with touch
signs in, starts a quick three-round table that the local bots fill, and plays every turn
of every round by tapping, waiting 3 to 8 s before each of its own moves and 20 s on each
round's result, as a person reading it would. The stack's intermission is 30 s, so the
next round is dealt by the player's Continue (the bots continue at once), never by the
clock while the result is read.

What a script that clicks fast never sees is asserted: no move of the player is
auto-played (TABLE-2: the server's log holds none for the seat); every round's result is
seen with every seat's leftover tiles and who went out, while the table waits (no turn
runs, the round stays where it was); the melds, the pile, the stock, whose turn it is, the
timer, the hand and the actions are on screen without scrolling at every turn; a reload in
round 2 shows the same move log as before it. Round 1 holds a meld and a pile taken (the
position is arranged as ``test_local_game`` arranges it). Screenshots of each phase at the
three sizes (390x844, 360x640, 844x390) go to ``artifacts/browser/paced-*.png``, the
timings to ``artifacts/browser/paced-timings.json``.
"""

from __future__ import annotations

import contextlib
import json
import random
import time
from collections.abc import Iterator
from typing import Any

import pytest

from shared_engine.state import team_of
from tests.browser.test_local_game import (
    ARTIFACTS,
    STACK_START_S,
    UI_MS,
    Games,
    LocalStack,
    Player,
    _require_browser,
    chromium_page,
    seen,
    sync_api,
)

pytestmark = pytest.mark.browser

SIZES = ((390, 844), (360, 640), (844, 390))
PHONE = {"width": SIZES[0][0], "height": SIZES[0][1]}
READ_S = 20.0
"""How long the player reads each round's result before pressing Continue."""
THINK_S = (3.0, 8.0)
"""How long the player thinks before each of their own moves."""
INTERMISSION_S = 30
MATCH_S = 1500
"""A bound on the whole match (about 9 minutes measured): a stuck table fails, never hangs."""

# Everything a player needs at their turn, each inside the viewport: missing or off-screen
# ones by name (an empty list per kind is a pass).
OFF_SCREEN_JS = """() => {
  const shown = (e) => e && e.getClientRects().length > 0;
  const inside = (e) => {
    const r = e.getBoundingClientRect();
    return r.top >= 0 && r.left >= 0
      && r.bottom <= innerHeight + 0.5 && r.right <= innerWidth + 0.5;
  };
  const one = (id) => [document.querySelector(`[data-testid="${id}"]`)];
  const all = (selector) => [...document.querySelectorAll(selector)].filter(shown);
  const needed = {
    hand: all('[data-testid="hand-tile"]'),
    melds: all('[data-testid^="meld-A-"], [data-testid^="meld-B-"]'),
    actions: all('#actions button'),
    pile: one('pile'),
    stock: one('stock-count'),
    turn: one('turn-indicator'),
    timer: one('turn-timer'),
  };
  return Object.fromEntries(Object.entries(needed).map(([kind, elements]) => [kind,
    elements.filter((e) => !shown(e) || !inside(e))
      .map((e) => (e && e.dataset.testid) || 'missing')]));
}"""
# The log's entries after a version: seat, move and the sentence shown.
LOG_SINCE_JS = """v => [...document.querySelectorAll('[data-testid="log-entry"]')]
  .filter((e) => Number(e.dataset.version) > v)
  .map((e) => ({seat: e.dataset.seat, type: e.dataset.type, text: e.textContent}))"""
LAST_DISCARD_JS = """s => Math.max(0, ...[...document.querySelectorAll('[data-testid="log-entry"]')]
  .filter((e) => e.dataset.seat === String(s) && e.dataset.type === 'discard')
  .map((e) => Number(e.dataset.version)))"""
"""The version of the seat's last discard, from the log: the table's version may already be
past it when it is read (the next seat's turn pushed in the meantime)."""
LOG_JS = """() => [...document.querySelectorAll('[data-testid="log-entry"]')].map((e) =>
  [Number(e.dataset.version), e.dataset.seat, e.dataset.type])"""
ROUND_JS = "() => Number(document.getElementById('table-screen').dataset.round || 0)"


@pytest.fixture(scope="module", autouse=True)
def fresh_screenshots() -> None:
    for old in ARTIFACTS.glob("paced-*.png"):
        old.unlink(missing_ok=True)


@pytest.fixture
def paced_stack() -> Iterator[LocalStack]:
    _require_browser()
    started = LocalStack(CANASTA_INTERMISSION_SECONDS=str(INTERMISSION_S))
    try:
        started.wait_ready(STACK_START_S)
        yield started
    finally:
        started.stop()


class PacedPlayer(Player):
    """The player at a person's pace: thinks before each move, reads each result."""

    def __init__(self, page: Any, stack: LocalStack, games: Games, seed: int) -> None:
        super().__init__(page, stack, games)
        self.touch = True
        self.rng = random.Random(seed)
        self.shots: list[str] = []
        self.turns_checked = 0
        self.between: list[dict[str, str]] = []
        """The log's entries between two of this seat's turns in round 1."""

    def think(self) -> None:
        started = time.monotonic()
        self.page.wait_for_timeout(self.rng.uniform(*THINK_S) * 1000)
        self.timed("thinking before a move", started)

    def still_mine(self, phase: str) -> None:
        """After thinking, the turn is still this seat's, where it was: nothing played it."""
        _, state = self.games.read(self.table_id)
        if (state.turn, state.phase) != (self.seat, phase):
            table = self.games.table(self.table_id)
            logs = [(e.version, e.seat, e.auto, e.at) for e in self.games.logs(self.table_id)][:4]
            pytest.fail(
                f"the turn moved on while the player thought: {state.turn}, {state.phase}; "
                f"connections {table.connections}; log {logs}; now {time.time()}; "
                f"deadline {table.turn_deadline}; {seen(self.page, 'moved-on')}"
            )

    def everything_on_screen(self, moment: str) -> None:
        off = self.page.evaluate(OFF_SCREEN_JS)
        assert not any(off.values()), f"{moment}: off screen {off}; {seen(self.page, moment)}"
        self.turns_checked += 1

    def shoot(self, phase: str) -> None:
        """The phase at each size, as the screen shows it (no scrolling), then back."""
        page = self.page
        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(400)
            name = f"paced-{phase}-{width}x{height}.png"
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / name))
            self.shots.append(name)
        page.set_viewport_size(PHONE)
        page.wait_for_timeout(200)

    def take_turns(self, round_number: int) -> None:
        """Every turn of this seat in the round, each move after thinking about it."""
        arranged = {"meld": round_number != 1, "pile": round_number != 1}
        reloaded = round_number != 2
        discards = 0
        last_discard = 0
        deadline = time.monotonic() + MATCH_S
        while (phase := self.my_turn()) != "round_over":
            assert time.monotonic() < deadline, seen(self.page, "round-too-long")
            self.everything_on_screen(f"round-{round_number}-{phase}")
            if round_number == 1 and discards == 2 and not self.between:
                self.between = self.page.evaluate(LOG_SINCE_JS, arg=last_discard)
            self.think()
            self.still_mine(phase)
            if phase == "first_discard" and round_number == 1:
                self.keep_partner_from_opening()
            sent = False
            if phase == "play" and not arranged["meld"]:
                # Laid out (and shot at each size), then sent with the turn's discard.
                self.two_melds_by_hand(staged=lambda: (self.shoot("after-meld"), self.think()))
                arranged["meld"] = sent = True
            elif phase == "draw" and arranged["meld"] and not arranged["pile"]:
                _, state = self.games.read(self.table_id)
                if state.discard:
                    self.pickup_with_two_of_three()
                    arranged["pile"] = True
                    self.shoot("pile-taken")
                    continue
            if phase == "draw":
                self.draw()
                continue
            if not sent:
                self.discard()
            last_discard = self.page.evaluate(LAST_DISCARD_JS, arg=self.seat)
            discards += 1
            if not reloaded and discards == 2:
                self.reload_keeps_the_log()
                reloaded = True

    def reload_keeps_the_log(self) -> None:
        """Right after this seat's discard (three seats play before its next turn)."""
        page = self.page
        before = page.evaluate(LOG_JS)
        assert len(before) > 4, before
        started = time.monotonic()
        page.reload()
        page.wait_for_selector('[data-testid="hand-tile"]', timeout=UI_MS)
        page.wait_for_function(f"() => ({LOG_JS})().length >= {len(before)}", timeout=UI_MS)
        self.timed("reload to the table", started)
        after = page.evaluate(LOG_JS)
        assert after[: len(before)] == before, f"{before} -> {after}; {seen(page, 'reload')}"
        self.upstream.clear()

    def read_the_result(self, round_number: int) -> bool:
        """The round's result, read for ``READ_S`` while the table waits; True if the match
        goes on (then Continue is pressed and the next round's hand arrives)."""
        page = self.page
        page.wait_for_selector('[data-testid="round-result"]', state="visible", timeout=UI_MS)
        shown_at = time.monotonic()
        table = self.games.table(self.table_id)
        assert table.round == round_number, (table.round, round_number)
        hands = page.locator('[data-testid="round-hands"] [data-testid^="revealed-"]')
        assert hands.count() == 4, seen(page, f"round-{round_number}-hands")
        state = self.games.read(self.table_id)[1]
        for seat in (1, 2, 3, 4):
            tiles = page.locator(f'[data-testid="revealed-{seat}"] [data-tile]').count()
            assert tiles == len(state.hands[seat - 1]), seen(page, f"round-{round_number}-left")
        went_out = page.inner_text('[data-testid="round-went-out"]')
        assert went_out, seen(page, f"round-{round_number}-went-out")
        goes_on = table.intermission_until is not None
        if round_number == 1:
            self.shoot("intermission")
        while (left := READ_S - (time.monotonic() - shown_at)) > 0:
            page.wait_for_timeout(min(left, 2.0) * 1000)
            assert page.is_visible('[data-testid="round-result"]'), seen(page, "result-closed")
            now = self.games.table(self.table_id)
            assert (now.round, now.turn_deadline) == (round_number, None), (
                f"the table went on while its result was read; {seen(page, 'went-on')}"
            )
        self.timed("round result shown before Continue", shown_at)
        if not goes_on:
            self.press('[data-testid="round-result-close"]')
            return False
        pressed = time.monotonic()
        self.press('[data-testid="round-continue"]')
        page.wait_for_function(f"() => ({ROUND_JS})() === {round_number + 1}", timeout=UI_MS)
        page.wait_for_selector('[data-testid="round-result"]', state="hidden", timeout=UI_MS)
        self.timed("Continue to the next round's hand", pressed)
        return True


def test_a_three_round_match_on_a_phone_at_a_person_s_pace(paced_stack: LocalStack) -> None:
    assert paced_stack.aws_url is not None and sync_api is not None
    games = Games(paced_stack.aws_url)
    with chromium_page(viewport=PHONE, has_touch=True, is_mobile=True) as (context, page, errors):
        player = PacedPlayer(page, paced_stack, games, seed=29)
        started = time.monotonic()
        try:
            player.route_socket(context)
            player.sit_down("three_rounds", lobby=lambda: player.shoot("lobby"))
            player.shoot("first-hand")
            round_number = 1
            while True:
                round_started = time.monotonic()
                player.take_turns(round_number)
                player.timed("round played", round_started)
                if not player.read_the_result(round_number):
                    break
                round_number += 1
            page.wait_for_selector('[data-testid="match-result"]', state="visible")
            sheet = page.locator('[data-testid="score-sheet"] [data-testid^="sheet-round-"]')
            assert sheet.count() == round_number, seen(page, "score-sheet")
            player.shoot("match-result")
            # Between two of this seat's turns, the log showed each other seat's draw and
            # discard, each in words.
            between = player.between
            others = {entry["seat"] for entry in between if entry["seat"] != str(player.seat)}
            kinds = {entry["type"] for entry in between}
            assert len(others) == 3 and {"draw", "discard"} <= kinds, between
            assert all(e["text"] and "{" not in e["text"] for e in between), between
            player.press('[data-testid="match-result-lobby"]')
            page.wait_for_selector('[data-testid="lobby-screen"]:not([hidden])')
            logs = games.logs(player.table_id)
            auto = [e for e in logs if e.seat == player.seat and e.auto]
            assert auto == [], f"moves of the player auto-played: {auto}"
            own = [e for e in logs if e.seat == player.seat]
            assert own and round_number >= 3, (len(own), round_number)
            assert team_of(player.seat) in (0, 1) and errors == [], errors
            timings = {
                name: {"n": len(v), "median_s": sorted(v)[len(v) // 2], "max_s": max(v)}
                for name, v in player.timings.items()
            }
            report = {
                "rounds": round_number,
                "own_moves": len(own),
                "turns_checked_on_screen": player.turns_checked,
                "match_s": round(time.monotonic() - started, 1),
                "timings": timings,
                "screenshots": player.shots,
            }
            (ARTIFACTS / "paced-timings.json").write_text(json.dumps(report, indent=2) + "\n")
            print(json.dumps(report))
        except BaseException as exc:
            exc.add_note(seen(page, "paced-failure"))
            with contextlib.suppress(Exception):
                exc.add_note(f"the server holds version {games.read(player.table_id)[0]}")
            exc.add_note(f"python -m local said:\n{paced_stack.tail()}")
            raise
