"""The web client in a headless browser, against a scripted server.

The page, its config and the sign-in are served from ``web/`` by request
routing, and the WebSocket is answered by the test (Playwright's WebSocket
routes): every server message of ``services/common/protocol.py`` can be
played to the client, and every message it sends is checked.

Needs the ``playwright`` package and a Chromium (``CHROMIUM`` or
/usr/bin/chromium); skipped without them.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, get_args

import pytest

from services.common.protocol import LobbyView
from shared_engine.state import TEAMS, team_of
from shared_engine.tiles import NAMES, VALUES, parse_tiles
from shared_engine.view import pile_state

pytestmark = pytest.mark.browser

sync_api = pytest.importorskip("playwright.sync_api")

WEB = Path(__file__).resolve().parents[2] / "web"
ORIGIN = "http://canasta.test"
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
LANGS = ("en", "fr", "it", "pl", "hu", "ro")
TYPES = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".css": "text/css",
    ".json": "application/json",
}


def token(player_id: str = "p-ana", name: str = "Ana", ttl: int = 3600) -> str:
    claims = {"sub": player_id, "name": name, "exp": int(time.time()) + ttl}
    payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"v1.{payload}.signature"


class Server:
    """The scripted game server: records what the client sends, sends what a test says."""

    def __init__(self) -> None:
        self.sockets: list[Any] = []
        self.received: list[dict[str, Any]] = []
        self.urls: list[str] = []
        self.on_message: Callable[[Server, dict[str, Any]], None] | None = None
        self.refuse = False
        self.page_errors: list[str] = []

    def accept(self, ws: Any) -> None:
        self.urls.append(ws.url)
        if self.refuse:
            ws.close(code=1006)
            return
        self.sockets.append(ws)

        def message(raw: str | bytes) -> None:
            body = json.loads(raw)
            self.received.append(body)
            if self.on_message is not None:
                self.on_message(self, body)

        ws.on_message(message)

    def push(self, message: dict[str, Any]) -> None:
        self.sockets[-1].send(json.dumps(message))

    def actions(self, action: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("action") == action]

    def drop(self) -> None:
        self.sockets[-1].close()


def serve(route: Any, config: dict[str, Any]) -> None:
    url = route.request.url
    path = url.split(ORIGIN, 1)[1].split("?", 1)[0]
    if path == "/config.json":
        route.fulfill(json=config)
    elif path == "/api/signin":
        name = json.loads(route.request.post_data or "{}").get("name", "")
        route.fulfill(
            json={
                "token": token("p-" + name.lower(), name),
                "player_id": "p-" + name.lower(),
                "name": name,
            }
        )
    elif path in ("/", "/index.html"):
        route.fulfill(path=WEB / "index.html", content_type="text/html")
    elif path.startswith("/web/") and (WEB / path[5:]).is_file():
        file = WEB / path[5:]
        route.fulfill(path=file, content_type=TYPES.get(file.suffix, "application/octet-stream"))
    else:
        route.fulfill(status=404, body="not found")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip("no Chromium to drive")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        yield launched
        launched.close()


@pytest.fixture
def server() -> Server:
    return Server()


@pytest.fixture
def open_client(browser: Any, server: Server) -> Iterator[Callable[..., Any]]:
    contexts: list[Any] = []

    def start(
        query: str = "",
        *,
        signed_in: bool = True,
        config: dict[str, Any] | None = None,
        width: int = 390,
        height: int = 844,
        touch: bool = False,
        lang: str = "en",
    ) -> Any:
        context = browser.new_context(
            viewport={"width": width, "height": height},
            locale="en-US",
            has_touch=touch,
            is_mobile=touch,
        )
        contexts.append(context)
        settings = (
            config
            if config is not None
            else {"ws_url": "ws://canasta.test/ws", "signin_url": "/api/signin", "turn_seconds": 60}
        )
        context.route(f"{ORIGIN}/**", lambda route: serve(route, settings))
        context.route_web_socket(re.compile(r"^wss?://"), server.accept)
        page = context.new_page()
        page.on("pageerror", lambda exc: server.page_errors.append(str(exc)))
        init = f"localStorage.setItem('canasta.lang', '{lang}');"
        if signed_in:
            init += f"sessionStorage.setItem('canasta.token', '{token()}');"
        once = "if (!sessionStorage.getItem('canasta.init')) {"
        page.add_init_script(f"{once} sessionStorage.setItem('canasta.init', '1'); {init} }}")
        page.goto(f"{ORIGIN}/{query}")
        return page

    yield start
    for context in contexts:
        context.close()


def seats(connected: tuple[bool, bool, bool, bool] = (True, True, True, True)) -> dict[str, Any]:
    names = ["Ana", "Bob", "Cy", "Dee"]
    return {
        str(i + 1): {
            "player": {"player_id": f"p-{n.lower()}", "name": n, "bot": i > 0},
            "connected": c,
        }
        for i, (n, c) in enumerate(zip(names, connected, strict=True))
    }


def meld(rank: int, tiles: list[str], canasta: str | None = None) -> dict[str, Any]:
    size = len(tiles)
    stripe = "red" if size >= 7 else "yellow" if size == 6 else None
    wilds = sum(1 for t in tiles if t == "JK" or (t.startswith("2") and len(t) == 2 and rank != 2))
    return {
        "rank": rank,
        "tiles": tiles,
        "canasta": canasta,
        "compact": size > 5,
        "stripe": stripe,
        "wilds": wilds,
    }


def with_rule_facts(player_view: dict[str, Any]) -> dict[str, Any]:
    """The figures the server adds about rules (shared_engine/view.py), from the engine."""
    hand = parse_tiles(player_view["hand"])
    blocked, pair = pile_state(hand, parse_tiles(player_view["discard"]))
    facts = {
        "tile_points": {NAMES[t]: VALUES[t] for t in hand},
        "wild_ranks": [0, 2],
        "teams": {str(seat): TEAMS[team_of(seat)] for seat in (1, 2, 3, 4)},
        "wilds_meld_rank": 2 if player_view["variant"] == "twos-meld" else None,
        "pile_blocked": blocked,
        "pile_pair": pair,
    }
    return {**facts, **player_view}


def view(version: int = 3, **changes: Any) -> dict[str, Any]:
    """A ViewMessage for seat 1 (Ana, team A), its turn in the play phase."""
    player_view: dict[str, Any] = {
        "seat": 1,
        "team": "A",
        "variant": "twos-meld",
        "phase": "play",
        "turn": 1,
        "hand": ["9K", "2Y", "7R", "JK", "7B", "13Y", "3B", "7Y", "1R", "9R"],
        "hand_sizes": {"1": 10, "2": 12, "3": 9, "4": 14},
        "melds": {
            "A": [meld(5, ["5R", "5Y", "5K", "5B", "5R", "2K"]), meld(8, ["8R"] * 7, "clean")],
            "B": [
                meld(11, ["11R", "11Y", "11K"]),
                meld(6, ["6R", "6Y", "6K", "6B", "6R", "JK", "2B"], "dirty"),
            ],
        },
        "bonus_threes": {"A": ["3R"], "B": ["3Y", "3R"]},
        "opened": {"A": True, "B": False},
        "thresholds": {"A": 50, "B": 90},
        "match_scores": {"A": 120, "B": 1600},
        "discard": ["4K", "2R"],
        "stock_size": 41,
        "account_jokers": 2,
        "joker_button_cost": 1,
        "joker_button_used": False,
        "went_out": None,
        "round_scores": None,
        "legal_actions": [
            {"type": "meld", "melds": [{"rank": 7, "tiles": ["7R", "7Y", "7B"]}]},
            {"type": "meld", "melds": [{"rank": 9, "tiles": ["9R", "9K", "2Y"]}]},
            {"type": "discard", "tile": "9K"},
            {"type": "discard", "tile": "7R"},
        ],
    }
    player_view.update(changes.pop("view", {}))
    player_view = with_rule_facts(player_view)
    message: dict[str, Any] = {
        "type": "view",
        "protocol": 1,
        "table_id": "t1",
        "version": version,
        "seat": 1,
        "seats": seats(),
        "match": {
            "mode": "three_rounds",
            "variant": "twos-meld",
            "stake": 0,
            "round": 2,
            "totals": {"A": 120, "B": 1600},
            "status": "playing",
        },
        "turn_deadline": time.time() + 42,
        "view": player_view,
        "last_action": {"seat": 4, "type": "discard", "tile": "2R", "auto": False},
    }
    message.update(changes)
    return message


def connected(page: Any, server: Server) -> None:
    page.wait_for_selector('[data-testid="connection-status"][data-state="online"]')
    deadline = time.time() + 5
    while len(server.actions("balance")) < 1 and time.time() < deadline:
        page.wait_for_timeout(50)


def at_table(page: Any, server: Server, message: dict[str, Any] | None = None) -> None:
    connected(page, server)
    server.push(message or view())
    page.wait_for_selector('[data-testid="table-screen"]:not([hidden])')


def hand(page: Any) -> list[str]:
    return page.eval_on_selector_all(
        '[data-testid="hand-tile"]', "els => els.map(e => e.dataset.tile)"
    )


def test_sign_in_then_lobby_with_balance(open_client: Callable[..., Any], server: Server) -> None:
    page = open_client(signed_in=False)
    page.wait_for_selector('[data-testid="signin-screen"]:not([hidden])')
    page.fill('[data-testid="signin-name"]', "Zoe")
    page.click('[data-testid="signin-button"]')
    connected(page, server)
    assert "token=v1." in server.urls[-1]
    assert server.received[:2] == [{"action": "sync"}, {"action": "balance"}]
    server.push({"type": "error", "code": "no_table", "message": "you are not seated at a table"})
    server.push({"type": "balance", "points": 12500, "jokers": 3})
    page.wait_for_selector('[data-testid="lobby-screen"]:not([hidden])')
    assert page.inner_text('[data-testid="balance-points"]') == "12,500"
    assert page.inner_text('[data-testid="balance-jokers"]') == "3"
    # the answer to the automatic sync is not an error to show
    assert page.is_hidden('[data-testid="error-banner"]')


def test_a_phone_lobby_shows_find_a_table_on_its_first_screen(
    open_client: Callable[..., Any], server: Server
) -> None:
    """390x844: finding a table is what a player opens the lobby for; their records and
    the leaderboard come after it, never between the balance and the quick start."""
    page = open_client(width=390, height=844, touch=True)
    connected(page, server)
    server.push({"type": "balance", "points": 12500, "jokers": 3})
    page.wait_for_selector('[data-testid="lobby-screen"]:not([hidden])')
    assert in_viewport(page, '[data-testid="quick-start-button"]')
    assert in_viewport(page, '[data-testid="balance-points"]')


def test_lobby_messages(open_client: Callable[..., Any], server: Server) -> None:
    page = open_client()
    connected(page, server)
    page.click('#quick-form input[value="to_10000"]', force=True)
    page.click('#quick-form input[value="classic"]', force=True)
    page.click('[data-testid="quick-start-button"]')
    page.select_option('[data-testid="arena-stake"]', "500")
    page.click('[data-testid="arena-button"]')
    page.click('[data-testid="create-table-button"]')
    page.fill('[data-testid="join-code"]', "K7Q2P")
    page.click('[data-testid="join-button"]')
    page.wait_for_timeout(200)
    assert server.actions("queue") == [
        {"action": "queue", "mode": "to_10000", "variant": "classic"},
        {"action": "queue", "mode": "arena", "variant": "twos-meld", "stake": 500},
    ]
    assert server.actions("create_table") == [
        {"action": "create_table", "mode": "three_rounds", "variant": "twos-meld"}
    ]
    assert server.actions("join_table") == [{"action": "join_table", "code": "K7Q2P"}]

    server.push(
        {
            "type": "queued",
            "mode": "arena",
            "variant": "twos-meld",
            "stake": 500,
            "expires_at": time.time() + 75,
        }
    )
    page.wait_for_selector('[data-testid="queued"]:not([hidden])')
    assert page.inner_text('[data-testid="queued-countdown"]') in ("1:15", "1:14")
    assert "500" in page.inner_text('[data-testid="queued-detail"]')
    server.push({"type": "queue_left", "reason": "timeout"})
    page.wait_for_selector('[data-testid="queued"]', state="hidden")
    page.wait_for_selector('[data-testid="queue-expired"]:not([hidden])')
    assert "No table formed in time" in page.inner_text('[data-testid="queue-expired"]')
    page.click('[data-testid="wait-on-button"]')  # the same queue again
    assert server.actions("queue")[-1] == {
        "action": "queue",
        "mode": "arena",
        "variant": "twos-meld",
        "stake": 500,
    }
    page.wait_for_selector('[data-testid="queue-expired"]', state="hidden")

    lobby = LobbyView.model_validate(
        {
            "code": "K7Q2P",
            "host": "p-ana",
            "you": "p-ana",
            "mode": "one_round",
            "variant": "twos-meld",
            "seats": {
                "1": {"player_id": "p-ana", "name": "Ana", "bot": False},
                "2": None,
                "3": {"player_id": "p-cy", "name": "Cy", "bot": False},
                "4": None,
            },
        }
    ).model_dump(mode="json")
    server.push(lobby)
    page.wait_for_selector('[data-testid="friends-lobby"]:not([hidden])')
    assert page.inner_text('[data-testid="invite-code"]') == "K7Q2P"
    assert "Cy" in page.inner_text('[data-testid="lobby-seat-3"]')
    assert "Empty seat" in page.inner_text('[data-testid="lobby-seat-2"]')
    assert page.input_value('[data-testid="bot-level"]') == "normal"
    page.select_option('[data-testid="bot-level"]', "hard")
    page.click('[data-testid="fill-bots-button"]')
    page.wait_for_timeout(100)
    assert server.actions("fill_bots") == [{"action": "fill_bots", "level": "hard"}]
    server.push({**lobby, "host": "p-cy"})
    page.wait_for_selector('[data-testid="fill-bots-button"]', state="hidden")
    assert page.is_hidden('[data-testid="bot-level"]')
    page.click('[data-testid="lobby-leave-button"]')
    page.wait_for_timeout(100)
    assert server.actions("leave") == [{"action": "leave"}]


def test_table_renders_the_view(open_client: Callable[..., Any], server: Server) -> None:
    page = open_client()
    at_table(page, server)
    # rank then colour R, Y, K, B; 2s and jokers last
    assert hand(page) == ["1R", "3B", "7R", "7Y", "7B", "9R", "9K", "13Y", "2Y", "JK"]
    enabled = {
        name: page.is_enabled(f'[data-testid="{name}-button"]')
        for name in ("draw", "take-pile", "meld", "discard", "joker")
    }
    assert enabled == {
        "draw": False,
        "take-pile": False,
        "meld": True,
        "discard": True,
        "joker": False,
    }
    assert page.get_attribute('[data-testid="seat-count-4"]', "data-count") == "14"
    assert page.inner_text('[data-testid="seat-count-3"]') == "9 tiles"
    assert page.get_attribute('[data-testid="seat-3"]', "data-role") == "partner"
    assert page.get_attribute('[data-testid="seat-2"]', "data-role") == "opponent"
    assert page.inner_text('[data-testid="stock-count"]') == "41"
    assert page.inner_text('[data-testid="discard-count"]') == "2"
    assert page.get_attribute('[data-testid="discard-top"] .tile', "data-tile") == "2R"
    assert page.is_visible('[data-testid="pile-blocked"]')
    # UI-1: six tiles compact with a yellow stripe, seven a red one
    five = page.locator('[data-testid="meld-A-5"]')
    assert five.get_attribute("data-compact") == "true"
    assert five.get_attribute("data-stripe") == "yellow"
    assert five.locator('[data-testid="meld-count"]').inner_text() == "×6"
    assert page.get_attribute('[data-testid="meld-A-8"]', "data-stripe") == "red"
    assert page.inner_text('[data-testid="meld-A-8"] [data-testid="meld-kind"]') == "Clean canasta"
    assert page.inner_text('[data-testid="meld-B-6"] [data-testid="meld-kind"]') == "Dirty canasta"
    assert page.get_attribute('[data-testid="meld-B-11"]', "data-compact") == "false"
    assert page.get_attribute('[data-testid="bonus-threes-B"]', "data-count") == "2"
    assert page.inner_text('[data-testid="opening-B"]') == "Opening needs 90 points"
    assert page.get_attribute('[data-testid="opening-A"]', "data-opened") == "true"
    assert page.inner_text('[data-testid="turn-indicator"]') == "Your turn"
    assert re.fullmatch(r"0:4[0-2]", page.inner_text('[data-testid="turn-timer"]'))
    assert page.get_attribute('[data-testid="seat-connected-2"]', "data-connected") == "true"
    assert page.locator('[data-testid="suggestion"]').count() == 2
    assert server.page_errors == []


def test_moves_built_from_the_selection(open_client: Callable[..., Any], server: Server) -> None:
    page = open_client()

    def answer(server: Server, message: dict[str, Any]) -> None:
        if message.get("action") == "play":
            server.push(view())

    server.on_message = answer
    at_table(page, server)

    def pick(*tiles: str) -> None:
        if page.is_visible('[data-testid="clear-selection"]'):
            page.click('[data-testid="clear-selection"]')
        for tile in tiles:
            page.locator(
                f'[data-testid="hand-tile"][data-tile="{tile}"]:not(.selected)'
            ).first.click()

    def staged(rank: int) -> str:
        """The tiles laid out unsent on the team's meld of ``rank`` (TURN-1: the discard
        sends them)."""
        meld = f'[data-testid="meld-A-{rank}"]'
        assert page.get_attribute(meld, "data-staged") == "true", rank
        return page.get_attribute(f'{meld} [data-testid="meld-staged"]', "data-count") or ""

    def take_back() -> None:
        page.click('[data-testid="take-back-button"]')
        assert page.locator('[data-testid="hand-tile"]').count() == held
        assert page.locator('[data-staged="true"]').count() == 0

    held = page.locator('[data-testid="hand-tile"]').count()
    pick("7R", "7B", "JK")
    page.click('[data-testid="meld-button"]')
    assert staged(7) == "3" and page.get_attribute('[data-testid="meld-A-7"]', "data-size") == "3"
    assert page.locator('[data-testid="hand-tile"]').count() == held - 3, "the hand lost them"
    take_back()
    pick("9R", "9K", "7R", "7Y", "7B", "2Y", "JK")  # two new melds with wilds, at once
    page.click('[data-testid="meld-button"]')
    assert (staged(7), staged(9)) == ("4", "3")
    take_back()
    pick("2Y", "JK")  # only wilds: the meld of twos
    page.click('[data-testid="meld-button"]')
    assert staged(2) == "2"
    take_back()
    page.locator('[data-testid="suggestion"]').first.click()
    pick("2Y")  # then a tap on the team's meld of 8s: the 2 extends it
    page.click('[data-testid="meld-A-8"]')
    assert (staged(7), staged(8)) == ("3", "1")
    assert server.actions("play") == [], "melds are laid out, not sent"
    pick("9K")
    page.click('[data-testid="discard-button"]')
    page.wait_for_timeout(200)
    (sent,) = server.actions("play")
    assert sent["table_id"] == "t1" and sent["version"] == 3
    assert sent["move"] == {
        "type": "meld",
        "melds": [{"rank": 7, "tiles": ["7R", "7Y", "7B"]}, {"rank": 8, "tiles": ["2Y"]}],
    }
    assert sent["then"] == [{"type": "discard", "tile": "9K"}], "one message: melds, then discard"


@pytest.mark.parametrize("move", ["discard", "meld"])
def test_the_other_of_two_identical_tiles_is_not_left_selected(
    open_client: Callable[..., Any], server: Server, move: str
) -> None:
    """Two 7Rs are two tiles: the one melded or discarded leaves, the other stays unselected."""
    page = open_client()
    after = {"discard": ["7R", "7Y", "7B", "9K"], "meld": ["7R"]}[move]

    def answer(server: Server, message: dict[str, Any]) -> None:
        if message.get("action") == "play":
            server.push(view(version=4, view={"hand": after, "legal_actions": []}))

    server.on_message = answer
    at_table(page, server, view(view={"hand": ["7R", "7R", "7Y", "7B", "9K"]}))
    tiles = ["7R"] if move == "discard" else ["7R", "7Y", "7B"]
    for tile in tiles:
        page.locator(f'[data-testid="hand-tile"][data-tile="{tile}"]:not(.selected)').first.click()
    page.click(f'[data-testid="{move}-button"]')
    if move == "meld":  # laid out, then sent with the discard
        page.locator('[data-testid="hand-tile"][data-tile="9K"]').click()
        page.click('[data-testid="discard-button"]')
    page.wait_for_function("() => document.getElementById('table-screen').dataset.version === '4'")
    assert page.locator('[data-testid="hand-tile"].selected').count() == 0
    assert page.locator('[data-testid="hand-tile"][data-tile="7R"]').count() == 1


def test_disabled_buttons_say_why(open_client: Callable[..., Any], server: Server) -> None:
    """A button is off only for a reason the page can see, and it says so."""
    page = open_client()
    draw = [{"type": "draw"}]
    phase = {"phase": "draw", "legal_actions": draw}
    at_table(page, server, view(view={**phase, "discard": ["11B"], "joker_button_used": True}))
    take, joker = '[data-testid="take-pile-button"]', '[data-testid="joker-button"]'
    assert page.is_disabled(take) and page.is_disabled(joker)
    assert page.get_attribute(take, "title") == "No matching pair for the top tile."
    assert page.get_attribute(joker, "title") == "Joker button used this round."
    why = page.inner_text('[data-testid="action-why"]')
    assert "No matching pair for the top tile." in why and "Joker button used" in why
    server.push(view(version=4, view={**phase, "discard": ["11B"], "account_jokers": 0}))
    page.wait_for_function("() => document.getElementById('table-screen').dataset.version === '4'")
    assert page.get_attribute(joker, "title") == "No spare joker on your account."
    # A pair of the top's rank is held though no pickup is suggested: the button is on,
    # the pickup is sent, and the server judges it.
    server.push(view(version=5, view={**phase, "discard": ["11B", "9B"]}))
    page.wait_for_function("() => document.getElementById('table-screen').dataset.version === '5'")
    assert page.is_enabled(take) and page.get_attribute(take, "title") is None
    page.locator('[data-testid="hand-tile"][data-tile="9R"]').click()
    page.locator('[data-testid="hand-tile"][data-tile="9K"]').click()
    page.click(take)
    page.wait_for_timeout(100)
    moves = [m["move"] for m in server.actions("play")]
    assert moves == [{"type": "take_pile", "melds": [{"rank": 9, "tiles": ["9R", "9K"]}]}]


def test_take_pile_and_draw(open_client: Callable[..., Any], server: Server) -> None:
    page = open_client()
    legal = [
        {"type": "draw"},
        {"type": "take_pile", "melds": [{"rank": 7, "tiles": ["7R", "7Y", "7B"]}]},
        {"type": "joker_button"},
    ]
    at_table(
        page, server, view(view={"phase": "draw", "discard": ["4K", "7K"], "legal_actions": legal})
    )
    assert page.is_enabled('[data-testid="take-pile-button"]')
    assert page.is_enabled('[data-testid="joker-button"]')
    # JOKER-1: what a press spends, before it is pressed.
    joker_title = page.get_attribute('[data-testid="joker-button"]', "title")
    assert joker_title == "Joker button — uses 1 of your 2 jokers"
    page.locator('[data-testid="hand-tile"][data-tile="7R"]').click()
    page.locator('[data-testid="hand-tile"][data-tile="7Y"]').click()
    page.locator('[data-testid="hand-tile"][data-tile="2Y"]').click()
    page.click('[data-testid="take-pile-button"]')
    page.wait_for_timeout(100)
    server.push(
        view(version=4, view={"phase": "draw", "discard": ["4K", "7K"], "legal_actions": legal})
    )
    page.wait_for_timeout(100)
    page.click('[data-testid="stock"]')
    page.wait_for_timeout(100)
    moves = [m["move"] for m in server.actions("play")]
    assert moves == [
        {"type": "take_pile", "melds": [{"rank": 7, "tiles": ["7R", "7Y", "2Y"]}]},
        {"type": "draw"},
    ]


def test_refusals_are_translated_and_stale_views_adopted(
    open_client: Callable[..., Any], server: Server
) -> None:
    page = open_client()
    at_table(page, server)
    server.push({"type": "error", "code": "pile_blocked", "message": "PILE-2", "table_id": "t1"})
    page.wait_for_selector('[data-testid="error-banner"]:not([hidden])')
    assert (
        page.inner_text('[data-testid="error-text"]')
        == "The pile is blocked: a 2, 3 or joker is on top."
    )
    page.click("#error-close")
    server.push(
        {
            "type": "error",
            "code": "stale_version",
            "message": "the table is at version 9",
            "table_id": "t1",
            "view": view(version=9, view={"stock_size": 30}),
        }
    )
    page.wait_for_function("() => document.getElementById('table-screen').dataset.version === '9'")
    assert page.inner_text('[data-testid="stock-count"]') == "30"
    assert page.is_hidden('[data-testid="error-banner"]')
    # an older view never replaces a newer one
    server.push(view(version=8, view={"stock_size": 31}))
    page.wait_for_timeout(150)
    assert page.inner_text('[data-testid="stock-count"]') == "30"
    page.select_option('[data-testid="language-select"]', "fr")
    server.push({"type": "error", "code": "cannot_go_out", "message": "OUT-1"})
    page.wait_for_function(
        "() => document.getElementById('error-text').textContent.includes('canasta')"
    )
    assert "Votre équipe" in page.inner_text('[data-testid="error-text"]')
    server.push({"type": "error", "code": "some_new_code", "message": "?"})
    page.wait_for_function(
        "() => document.getElementById('error-text').textContent.includes('some_new_code')"
    )
    assert page.inner_text('[data-testid="error-text"]') != "some_new_code"
    # The next move that goes through (a newer version) clears the stale refusal at once.
    server.push(view(version=10, view={"stock_size": 29}))
    page.wait_for_selector('[data-testid="error-banner"]', state="hidden", timeout=1000)


def test_results(open_client: Callable[..., Any], server: Server) -> None:
    page = open_client()
    at_table(page, server)
    revealed = {"1": ["9K", "3B"], "2": ["JK", "5R", "5Y"], "3": [], "4": ["13Y"]}
    over = {"phase": "round_over", "went_out": 3, "revealed": revealed, "legal_actions": []}
    server.push(view(version=4, view=over))
    score = {
        "melded": 455,
        "canastas": 300,
        "bonus_threes": 100,
        "going_out": 100,
        "hands": 0,
        "total": 955,
    }
    other = {
        "melded": 120,
        "canastas": 0,
        "bonus_threes": -200,
        "going_out": 0,
        "hands": -85,
        "total": -165,
    }
    server.push(
        {
            "type": "round_result",
            "table_id": "t1",
            "round": 3,
            "scores": {"A": score, "B": other},
            "totals": {"A": 3200, "B": 1800},
            "next": "end",
            "seed": "s",
            "commitment": "c",
        }
    )
    server.push(
        {
            "type": "match_result",
            "table_id": "t1",
            "winner": "A",
            "totals": {"A": 3200, "B": 1800},
            "rounds_played": 3,
            "rewards": {"1": 3000, "2": -3000, "3": 3000, "4": -3000},
        }
    )
    page.wait_for_selector('[data-testid="round-result"]', state="visible")
    assert page.inner_text('[data-testid="score-A-total"]') == "+955"
    assert page.inner_text('[data-testid="score-B-hands"]') == "-85"
    assert page.inner_text('[data-testid="total-A"]') == "3,200"
    assert page.inner_text('[data-testid="round-next"]') == "The match is over."
    # The round's end shows who went out and every seat's tiles left in hand.
    assert page.inner_text('[data-testid="round-went-out"]') == "Cy went out."
    left = {
        seat: page.eval_on_selector_all(
            f'[data-testid="revealed-{seat}"] .tile', "els => els.map(e => e.dataset.tile)"
        )
        for seat in "1234"
    }
    assert left == revealed
    page.click('[data-testid="round-result-close"]')
    page.wait_for_selector('[data-testid="match-result"]', state="visible")
    assert page.inner_text('[data-testid="match-verdict"]') == "Your team won!"
    assert page.inner_text('[data-testid="match-reward"]') == "Your account: +3,000 points"
    server.push(view(version=5, match={**view()["match"], "status": "finished"}))
    page.click('[data-testid="play-again"]')
    page.wait_for_selector('[data-testid="lobby-screen"]:not([hidden])')
    # The same length and variant again (this page did not start the match itself).
    assert server.actions("queue") == [
        {"action": "queue", "mode": "three_rounds", "variant": "twos-meld"}
    ]


def test_a_friends_table_plays_again_with_the_same_four(
    open_client: Callable[..., Any], server: Server
) -> None:
    """ "Play again" at a friends table asks for the same four (``rematch``); an offer
    from another of the four shows in the lobby, and taking it asks for that seat."""
    page = open_client()
    at_table(page, server)
    friends = {**view()["match"], "status": "finished", "rematch": True}
    server.push(view(version=5, table_id="f-K7Q2P-1", match=friends))
    result = {"type": "match_result", "table_id": "f-K7Q2P-1", "winner": "B"}
    server.push({**result, "totals": {"A": 1, "B": 2}, "rounds_played": 1, "rewards": {}})
    page.wait_for_selector('[data-testid="match-result"]', state="visible")
    page.click('[data-testid="play-again"]')
    page.wait_for_selector('[data-testid="lobby-screen"]:not([hidden])')
    assert server.actions("rematch") == [{"action": "rematch", "table_id": "f-K7Q2P-1"}]
    assert server.actions("queue") == [] and server.actions("create_table") == []

    ana, cy = (
        {"player_id": p, "name": n, "bot": False} for p, n in (("p-ana", "Ana"), ("p-cy", "Cy"))
    )
    offer = LobbyView.model_validate(
        {
            "code": "W4HN7P",
            "host": "p-cy",
            "you": "p-ana",
            "mode": "three_rounds",
            "variant": "twos-meld",
            "seats": {"1": None, "2": None, "3": cy, "4": None},
            "rematch_of": "f-K7Q2P-2",
            "awaiting": {"1": ana},
        }
    ).model_dump(mode="json")
    server.push(offer)
    page.wait_for_selector('[data-testid="rematch-offer"]:not([hidden])')
    assert "Cy wants to play again" in page.inner_text('[data-testid="rematch-text"]')
    page.click('[data-testid="rematch-join"]')
    page.wait_for_timeout(100)
    assert server.actions("rematch")[-1] == {"action": "rematch", "table_id": "f-K7Q2P-2"}
    server.push({**offer, "seats": {**offer["seats"], "1": ana}, "awaiting": {}})
    page.wait_for_selector('[data-testid="friends-lobby"]:not([hidden])')
    assert page.is_hidden('[data-testid="rematch-offer"]')
    assert "Ana" in page.inner_text('[data-testid="lobby-seat-1"]')


def test_reconnects_and_resyncs(open_client: Callable[..., Any], server: Server) -> None:
    page = open_client()
    at_table(page, server)
    server.drop()
    page.wait_for_selector('[data-testid="reconnect-banner"]:not([hidden])')
    assert page.is_disabled('[data-testid="discard-button"]')
    page.wait_for_selector('[data-testid="reconnect-banner"]', state="hidden", timeout=5000)
    assert len(server.sockets) == 2
    assert server.actions("sync") == [{"action": "sync"}, {"action": "sync"}]
    server.push(view(version=4))
    page.wait_for_function("() => document.getElementById('table-screen').dataset.version === '4'")
    assert page.is_enabled('[data-testid="discard-button"]')


def test_opened_elsewhere_stops_reconnecting_until_play_here(
    open_client: Callable[..., Any], server: Server
) -> None:
    page = open_client()
    at_table(page, server)
    server.push({"type": "opened_elsewhere"})
    page.wait_for_selector('[data-testid="elsewhere-banner"]:not([hidden])')
    assert "another tab" in page.inner_text('[data-testid="elsewhere-banner"]')
    page.wait_for_timeout(1500)  # longer than the first reconnect's back-off
    assert len(server.sockets) == 1, "a replaced tab must not take the seat back on its own"
    assert page.is_hidden('[data-testid="reconnect-banner"]')
    page.click('[data-testid="play-here"]')
    page.wait_for_selector('[data-testid="elsewhere-banner"]', state="hidden", timeout=5000)
    online = "() => document.getElementById('conn-status').dataset.state === 'online'"
    page.wait_for_function(online)
    assert len(server.sockets) == 2
    assert server.actions("sync") == [{"action": "sync"}, {"action": "sync"}]


def test_url_parameters_override_the_config(
    open_client: Callable[..., Any], server: Server
) -> None:
    page = open_client(
        f"?ws=wss://game.example/prod&token={token('p-x', 'Xena')}", signed_in=False, config={}
    )
    connected(page, server)
    assert server.urls[-1].startswith("wss://game.example/prod?token=v1.")
    assert "token=" not in page.url
    assert page.inner_text('[data-testid="connection-status"]') == "Online"


def test_every_language_is_complete(open_client: Callable[..., Any], server: Server) -> None:
    """Each language's table (web/i18n/<lang>.json) has exactly English's keys, the page's
    markup names only keys that exist, and every refusal code has a sentence."""
    tables = {lang: json.loads((WEB / "i18n" / f"{lang}.json").read_text()) for lang in LANGS}
    keys = set(tables["en"])
    assert {lang: set(table) ^ keys for lang, table in tables.items()} == {
        lang: set() for lang in LANGS
    }
    page = open_client(signed_in=False)
    page.wait_for_selector('[data-testid="signin-screen"]:not([hidden])')
    named = page.evaluate(
        """() => ['data-i18n', 'data-i18n-aria', 'data-i18n-placeholder'].flatMap((a) =>
            [...document.querySelectorAll(`[${a}]`)].map((el) => el.getAttribute(a)))"""
    )
    assert named and set(named) <= keys
    codes = {k.removeprefix("error.") for k in keys if k.startswith("error.")}
    from services.common.protocol import ServiceErrorCode
    from shared_engine.errors import ERROR_CODES

    assert set(ERROR_CODES) | set(get_args(ServiceErrorCode)) <= codes


@pytest.mark.parametrize("lang", LANGS)
def test_language_switch_is_kept(
    open_client: Callable[..., Any], server: Server, lang: str
) -> None:
    page = open_client()
    at_table(page, server)
    page.select_option('[data-testid="language-select"]', lang)
    assert page.evaluate("localStorage.getItem('canasta.lang')") == lang
    assert page.evaluate("document.documentElement.lang") == lang
    text = page.inner_text("body")
    assert "{" not in text and "error." not in text and "seat." not in text
    page.reload()
    page.wait_for_selector('[data-testid="connection-status"][data-state="online"]')
    assert page.input_value('[data-testid="language-select"]') == lang


def test_fits_a_phone(open_client: Callable[..., Any], server: Server) -> None:
    page = open_client(width=390)
    at_table(page, server)
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0


def test_sign_in_explains_what_is_missing(open_client: Callable[..., Any], server: Server) -> None:
    page = open_client(signed_in=False, config={})
    page.wait_for_selector('[data-testid="signin-error"]:not([hidden])')
    assert "?ws=wss://" in page.inner_text('[data-testid="signin-error"]')
    page = open_client(signed_in=False)
    page.fill('[data-testid="signin-name"]', "<script>")
    page.click('[data-testid="signin-button"]')
    page.wait_for_selector('[data-testid="signin-error"]:not([hidden])')
    page.select_option('[data-testid="language-select"]', "it")
    assert page.inner_text('[data-testid="signin-error"]') == (
        "Un nome ha da 1 a 24 lettere, cifre o spazi."
    )
    assert server.urls == []


ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "web"
FULL_HAND = [
    "1R",
    "4Y",
    "5K",
    "6B",
    "7R",
    "7Y",
    "8K",
    "9B",
    "10R",
    "11Y",
    "12K",
    "13B",
    "13R",
    "2Y",
    "JK",
]
BIG_MELDS = {
    "A": [
        meld(10, ["10R", "10Y", "10K", "10B", "2K"]),
        meld(11, ["11R", "11Y", "11K", "11B", "11R"]),
        meld(12, ["12R", "12Y", "12K", "12B", "12R", "12Y", "JK"], "dirty"),
        meld(8, ["8R"] * 7, "clean"),
        meld(4, ["4R", "4Y", "4K"]),
    ],
    "B": [
        meld(13, ["13R", "13Y", "13K", "13B"]),
        meld(6, ["6R", "6Y", "6K", "6B", "6R", "JK", "2B"], "dirty"),
        meld(9, ["9R", "9Y", "9K", "2R"]),
        meld(1, ["1R", "1Y", "1K", "1B", "1R", "1Y"]),
        meld(7, ["7R", "7Y", "7K", "7B", "7R", "7Y", "7K", "2Y"], "dirty"),
        meld(5, ["5R", "5Y", "5K"]),
        meld(2, ["2R", "2Y", "2K", "2B", "JK"]),
    ],
}
"""Late in a round: twelve melds between the teams, canastas of both kinds, the meld of twos."""


def screenshot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def boxes(page: Any, selector: str) -> list[dict[str, float]]:
    return page.eval_on_selector_all(
        selector,
        """els => els.map(e => { const r = e.getBoundingClientRect();
            return {x: r.x, y: r.y, w: r.width, h: r.height}; })""",
    )


def in_viewport(page: Any, selector: str) -> bool:
    size = page.viewport_size
    found = boxes(page, selector)
    return bool(found) and all(
        b["x"] >= 0
        and b["y"] >= 0
        and b["x"] + b["w"] <= size["width"] + 0.5
        and b["y"] + b["h"] <= size["height"] + 0.5
        for b in found
    )


def no_rank_overlap(page: Any) -> None:
    """Inside each meld, no tile's rank is covered by the next tile (drawn over it); a meld
    shown in its compact form (no tile drawn) has none to cover."""
    for meld_el in page.query_selector_all('[data-testid^="meld-"]'):
        tiles = [tile for tile in meld_el.query_selector_all(".tile") if tile.is_visible()]
        for a, b in itertools.pairwise(tiles):
            rank = a.query_selector(".tn")
            rank_box, next_box = rank.bounding_box() if rank else None, b.bounding_box()
            assert rank_box and next_box, meld_el.get_attribute("data-testid")
            assert rank_box["x"] + rank_box["width"] <= next_box["x"] + 0.5, (
                meld_el.get_attribute("data-testid"),
                rank_box,
                next_box,
            )


TOUCH_TARGETS = (
    '[data-testid="hand-tile"]',
    ".actions button:not([hidden])",
    '[data-testid="suggestion"]',
    '[data-testid="stock"]',
    '[data-testid="pile"]',
    'button[data-testid^="meld-A-"]',
)


def big_view(**changes: Any) -> dict[str, Any]:
    legal = [
        {"type": "meld", "melds": [{"rank": 7, "tiles": ["7R", "7Y", "JK"]}]},
        {"type": "meld", "melds": [{"rank": 13, "tiles": ["13B", "13R", "2Y"]}]},
    ] + [{"type": "discard", "tile": t} for t in FULL_HAND]
    return view(view={"hand": FULL_HAND, "melds": BIG_MELDS, "legal_actions": legal, **changes})


def test_phone_first_screen_shows_the_hand(open_client: Callable[..., Any], server: Server) -> None:
    """390x844, touch: the hand and the actions are on the first screen of a round, and
    stay there while the table and both teams' melds scroll above them."""
    page = open_client(width=390, height=844, touch=True)
    at_table(page, server, big_view())
    page.wait_for_timeout(100)
    assert page.evaluate("scrollY") == 0
    assert len(hand(page)) == 15
    assert in_viewport(page, '[data-testid="hand-tile"]')
    assert in_viewport(page, ".actions button:not([hidden])")
    assert in_viewport(page, '[data-testid="turn-indicator"]')
    assert in_viewport(page, '[data-testid="pile"]')
    assert in_viewport(page, '[data-testid="move-log"] li:last-child'), "the newest move is shown"
    dock_top = boxes(page, '[data-testid="dock"]')[0]["y"]
    newest = boxes(page, '[data-testid="move-log"] li:last-child')[0]
    assert newest["y"] + newest["h"] <= dock_top, "the newest move is not under the dock"
    screenshot(page, "phone-390x844")
    for selector in TOUCH_TARGETS:
        small = [b for b in boxes(page, selector) if b["w"] < 44 or b["h"] < 44]
        assert small == [], selector
    for team in ("A", "B"):
        page.locator(f'[data-testid="team-{team}"]').scroll_into_view_if_needed()
        assert page.locator(f'[data-testid="team-{team}"]').is_visible()
        assert in_viewport(page, '[data-testid="hand-tile"]'), f"team {team}'s melds hide the hand"
    screenshot(page, "phone-390x844-melds")
    no_rank_overlap(page)
    overflow = page.evaluate("document.documentElement.scrollWidth - innerWidth")
    assert overflow <= 0


def test_phone_sideways(open_client: Callable[..., Any], server: Server) -> None:
    page = open_client(width=844, height=390, touch=True)
    at_table(page, server, big_view())
    page.wait_for_timeout(100)
    screenshot(page, "phone-844x390")
    assert in_viewport(page, '[data-testid="hand-tile"]')
    assert in_viewport(page, ".actions button:not([hidden])")
    assert in_viewport(page, '[data-testid="pile"]')
    assert page.evaluate("document.documentElement.scrollWidth - innerWidth") <= 0


def test_laptop_turn_fits_without_scrolling(
    open_client: Callable[..., Any], server: Server
) -> None:
    """1366x768: hand, actions, pile, both teams' melds, scores and thresholds at once."""
    page = open_client(width=1366, height=768)
    at_table(page, server, big_view())
    page.wait_for_timeout(100)
    screenshot(page, "laptop-1366x768")
    assert page.evaluate("document.documentElement.scrollHeight - innerHeight") <= 0
    for selector in (
        '[data-testid="hand-tile"]',
        ".actions button:not([hidden])",
        '[data-testid="suggestion"]',
        '[data-testid="pile"]',
        '[data-testid="stock"]',
        '[data-testid="match-totals"]',
        '[data-testid="opening-A"]',
        '[data-testid="opening-B"]',
        '[data-testid^="meld-A-"]',
        '[data-testid^="meld-B-"]',
        '[data-testid^="seat-count-"]',
    ):
        assert in_viewport(page, selector), selector
    no_rank_overlap(page)


def test_pile_hints_confirmations_and_the_background_title(
    open_client: Callable[..., Any], server: Server
) -> None:
    page = open_client()
    legal = [
        {"type": "meld", "melds": [{"rank": 8, "tiles": ["2Y"]}]},
        {"type": "meld", "melds": [{"rank": 7, "tiles": ["7R", "7Y", "7B"]}]},
        {"type": "discard", "tile": "JK"},
    ]
    at_table(page, server, view(view={"legal_actions": legal}))
    # Hints from the legal moves: the 2 extends the team's 8s; the new 7s are not marked.
    hinted = page.eval_on_selector_all(
        '[data-testid="hand-tile"][data-hint]',
        "els => els.map(e => e.dataset.tile + ':' + e.dataset.hint)",
    )
    assert hinted == ["2Y:extend"]
    # The pile is public: every tile of it, oldest first.
    page.click('[data-testid="pile-browse"]')
    page.wait_for_selector('[data-testid="pile-dialog"]', state="visible")
    shown = page.eval_on_selector_all(
        '[data-testid="pile-tiles"] .tile', "els => els.map(e => e.dataset.tile)"
    )
    assert shown == ["4K", "2R"]
    page.click('[data-testid="pile-dialog-close"]')
    # A wild is discarded only once confirmed.
    page.locator('[data-testid="hand-tile"][data-tile="JK"]').click()
    page.click('[data-testid="discard-button"]')
    page.wait_for_selector('[data-testid="confirm-dialog"]', state="visible")
    assert "wild" in page.inner_text('[data-testid="confirm-text"]')
    page.click('[data-testid="confirm-no"]')
    page.wait_for_timeout(100)
    assert server.actions("play") == []
    page.click('[data-testid="discard-button"]')
    page.click('[data-testid="confirm-yes"]')
    page.wait_for_timeout(100)
    assert [m["move"] for m in server.actions("play")] == [{"type": "discard", "tile": "JK"}]
    # The player's turn coming round in a background tab shows in its title.
    page.evaluate("Object.defineProperty(document, 'visibilityState', {get: () => 'hidden'})")
    server.push(view(version=4, view={"turn": 2, "legal_actions": []}))
    server.push(view(version=5))
    page.wait_for_function("() => document.title.startsWith('●')")
    assert page.evaluate("document.title") == "● Your turn — Tile Canasta"


def test_quick_messages(open_client: Callable[..., Any], server: Server) -> None:
    page = open_client(touch=True)
    at_table(page, server)
    page.tap('[data-testid="quick-messages"] summary')
    page.tap('[data-testid="say-well_played"]')
    page.wait_for_timeout(100)
    assert server.actions("say") == [{"action": "say", "table_id": "t1", "phrase": "well_played"}]
    assert page.is_hidden('[data-testid="say-well_played"]')
    server.push({"type": "said", "table_id": "t1", "seat": 3, "phrase": "hurry_up"})
    page.wait_for_selector('[data-testid="said-3"]')
    assert page.inner_text('[data-testid="said-3"]') == "Hurry up, please!"
    page.select_option('[data-testid="language-select"]', "pl")
    assert page.inner_text('[data-testid="said-3"]') == "Pospiesz się, proszę!"


@pytest.mark.parametrize("lang", ["en", "ro"])
def test_how_to_play_from_the_table(
    open_client: Callable[..., Any], server: Server, lang: str
) -> None:
    page = open_client(lang=lang)
    at_table(page, server)
    page.click('[data-testid="howto-button"]')
    page.wait_for_selector('[data-testid="howto"]', state="visible")
    text = page.inner_text('[data-testid="howto"]')
    table = json.loads((WEB / "i18n" / f"{lang}.json").read_text())
    for key in ("howto.pile", "howto.canastas", "howto.opening"):
        assert table[key] in text
    rows = page.eval_on_selector_all(
        '[data-testid="howto-thresholds"] li', "els => els.map(e => e.textContent)"
    )
    assert len(rows) == 5 and rows[-1].endswith("150")
    page.click('[data-testid="howto-close"]')
    assert page.is_hidden('[data-testid="howto"]')


SCORE_A = {"melded": 455, "canastas": 300, "bonus_threes": 100, "going_out": 100, "hands": 0}
SCORE_B = {"melded": 120, "canastas": 0, "bonus_threes": -200, "going_out": 0, "hands": -85}
LEFT = {"1": [], "2": ["JK", "5R", "5Y"], "3": ["9K", "3B"], "4": ["13Y"]}


def round_over(version: int, round_: int, **intermission: Any) -> dict[str, Any]:
    """The table at round ``round_``'s end, waiting (``intermission``) for the next deal."""
    over = {"phase": "round_over", "went_out": 1, "revealed": LEFT, "legal_actions": []}
    message = view(version=version, view=over, turn_deadline=None)
    message["match"] = {**message["match"], "round": round_}
    message["intermission"] = intermission or None
    return message


def round_result(round_: int, until: float | None, a: int = 955, b: int = -165) -> dict[str, Any]:
    scores = {"A": {**SCORE_A, "total": a}, "B": {**SCORE_B, "total": b}}
    return {
        "type": "round_result",
        "table_id": "t1",
        "round": round_,
        "scores": scores,
        "totals": {"A": 3200, "B": 1800},
        "next": "round" if until else "end",
        "seed": "s",
        "commitment": "c",
        "went_out": 1,
        "hands": LEFT,
        "intermission_until": until,
    }


def test_round_result_between_rounds(open_client: Callable[..., Any], server: Server) -> None:
    """Every round's result (not only the last) shows the leftover tiles, who went out and
    the breakdown; during the intermission a countdown and a Continue sent once, then whom
    the table waits for; the next round's first view closes it."""
    page = open_client()
    at_table(page, server)
    until = time.time() + 25
    server.push(round_over(4, 2, until=until, continued=[], awaited=[1, 3]))
    server.push(round_result(2, until))
    page.wait_for_selector('[data-testid="round-result"]', state="visible")
    assert page.inner_text('[data-testid="round-went-out"]') == "You went out."
    left = {
        seat: page.eval_on_selector_all(
            f'[data-testid="round-hands"] [data-testid="revealed-{seat}"] .tile',
            "els => els.map(e => e.dataset.tile)",
        )
        for seat in "1234"
    }
    assert left == LEFT
    assert page.inner_text('[data-testid="score-A-canastas"]') == "300"
    assert page.inner_text('[data-testid="score-B-bonus_threes"]') == "-200"
    assert page.inner_text('[data-testid="score-B-total"]') == "-165"
    assert page.inner_text('[data-testid="total-B"]') == "1,800"
    countdown = page.inner_text('[data-testid="round-countdown"]')
    assert countdown in ("0:24", "0:25", "0:26"), countdown
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"round-countdown\"]').textContent < '0:24'"
    )
    button = page.locator('[data-testid="round-continue"]')
    box = button.bounding_box()
    assert box and box["height"] >= 44
    assert page.is_hidden('[data-testid="intermission-waiting"]')
    button.click()
    page.wait_for_selector('[data-testid="intermission-waiting"]')
    assert page.inner_text('[data-testid="intermission-waiting"]') == "Waiting for Cy…"
    assert page.is_disabled('[data-testid="round-continue"]')
    button.click(force=True)
    page.wait_for_timeout(100)
    assert server.actions("continue") == [{"action": "continue", "table_id": "t1", "round": 2}]
    # The server's answer: still waiting for seat 3; then every one has read it.
    server.push(round_over(5, 2, until=until, continued=[1], awaited=[3]))
    page.wait_for_timeout(100)
    assert page.is_visible('[data-testid="round-result"]')
    deal = view(version=6, view={"phase": "draw", "legal_actions": [{"type": "draw"}]})
    deal["match"] = {**deal["match"], "round": 3}
    server.push(deal)
    page.wait_for_selector('[data-testid="round-result"]', state="hidden")
    page.wait_for_timeout(100)
    assert len(server.actions("continue")) == 1, "a result closed by the next deal says nothing"
    assert page.inner_text('[data-testid="match-round"]') == "Round 3"


@pytest.mark.parametrize(("width", "height"), [(390, 844), (360, 640), (844, 390)])
def test_continue_and_who_went_out_are_in_reach_on_a_phone(
    open_client: Callable[..., Any], server: Server, width: int, height: int
) -> None:
    """However long the result, its buttons stay on screen (the result scrolls under them)
    and it opens at its top, with who went out."""
    page = open_client(width=width, height=height, touch=True)
    at_table(page, server)
    until = time.time() + 25
    server.push(round_over(4, 1, until=until, continued=[], awaited=[1, 3]))
    server.push(round_result(1, until))
    page.wait_for_selector('[data-testid="round-continue"]', state="visible")
    page.wait_for_timeout(200)
    for selector in ('[data-testid="round-continue"]', '[data-testid="round-went-out"]'):
        box = page.locator(selector).bounding_box()
        assert box is not None, selector
        inside = box["y"] >= 0 and box["y"] + box["height"] <= height
        assert inside and box["x"] + box["width"] <= width, (selector, box)


def test_round_result_again_after_a_reload(open_client: Callable[..., Any], server: Server) -> None:
    """A reload during the intermission shows the result again (the server sends it after
    the sync's view); closing it early says Continue."""
    page = open_client()
    until = time.time() + 40

    def answer(server: Server, message: dict[str, Any]) -> None:
        if message.get("action") == "sync":
            server.push(round_over(4, 1, until=until, continued=[], awaited=[1]))
            server.push(round_result(1, until))

    server.on_message = answer
    connected(page, server)
    page.wait_for_selector('[data-testid="round-result"]', state="visible")
    page.reload()
    page.wait_for_selector('[data-testid="round-result"]', state="visible")
    assert page.is_visible('[data-testid="round-countdown"]')
    assert server.actions("continue") == []
    page.keyboard.press("Escape")
    page.wait_for_selector('[data-testid="round-result"]', state="hidden")
    page.wait_for_timeout(100)
    assert server.actions("continue") == [{"action": "continue", "table_id": "t1", "round": 1}]


def test_score_sheet_and_practice(open_client: Callable[..., Any], server: Server) -> None:
    """The match's result lists each round's team scores (the server's ``rounds``, else
    the round results seen); a practice match says the account did not change (MATCH-3)."""
    page = open_client()
    practice = {**view()["match"], "round": 1, "practice": True}
    at_table(page, server, view(match=practice))
    badge = page.wait_for_selector('[data-testid="practice-badge"]')
    assert badge.inner_text() == "Practice"
    for round_, (a, b) in enumerate([(955, -165), (400, 610)], start=1):
        server.push(round_result(round_, None if round_ == 2 else time.time() + 30, a, b))
        page.wait_for_selector('[data-testid="round-result"]', state="visible")
        page.click('[data-testid="round-result-close"]')
        page.wait_for_selector('[data-testid="round-result"]', state="hidden")
    result = {
        "type": "match_result",
        "table_id": "t1",
        "winner": "A",
        "totals": {"A": 1355, "B": 445},
        "rounds_played": 2,
        "rewards": {"1": 0, "2": 0, "3": 0, "4": 0},
        "practice": True,
    }
    server.push(result)
    page.wait_for_selector('[data-testid="match-result"]', state="visible")
    sheet = '[data-testid="score-sheet"]'
    rows = page.eval_on_selector_all(
        f"{sheet} tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    assert rows == [["Round 1", "+955", "-165"], ["Round 2", "+400", "+610"]]
    assert page.inner_text('[data-testid="match-total-A"]') == "1,355"
    assert page.inner_text('[data-testid="match-reward"]') == "Practice: account points unchanged."
    assert "0 points" not in page.inner_text('[data-testid="match-result"]')
    page.click('[data-testid="match-result-close"]')
    page.wait_for_selector('[data-testid="match-result"]', state="hidden")
    server.push({**result, "rounds": [{"A": 1, "B": 2}, {"A": 3, "B": 4}, {"A": 5, "B": 6}]})
    page.wait_for_selector('[data-testid="match-result"]', state="visible")
    cells = page.eval_on_selector_all(f"{sheet} tbody td", "els => els.map(e => e.textContent)")
    assert cells == ["+1", "+2", "+3", "+4", "+5", "+6"], "the server's sheet when it sends one"


def test_log_restored_after_a_reload(open_client: Callable[..., Any], server: Server) -> None:
    page = open_client()
    log = [
        {"seat": 1, "type": "draw", "auto": False, "version": 2},
        {"seat": 1, "type": "discard", "tile": "9K", "auto": False, "version": 3},
        {"seat": 2, "type": "draw", "auto": True, "version": 4},
        {
            "seat": 2,
            "type": "meld",
            "auto": True,
            "melds": [{"rank": 11, "tiles": ["11B"]}],
            "version": 4,
        },
        {"seat": 2, "type": "discard", "tile": "4K", "auto": True, "version": 4},
    ]

    def answer(server: Server, message: dict[str, Any]) -> None:
        if message.get("action") == "sync":
            server.push(view(version=4, last_action=None, moves=[], log=log))

    server.on_message = answer
    connected(page, server)
    entries = '[data-testid="log-entry"]'
    page.wait_for_selector(entries)
    read = "els => els.map(e => [e.dataset.seat, e.dataset.type, e.dataset.version, e.textContent])"
    before = page.eval_on_selector_all(entries, read)
    assert [e[:3] for e in before] == [[str(m["seat"]), m["type"], str(m["version"])] for m in log]
    assert before[3][3] == "Bob melded 11s ×1."
    page.reload()
    page.wait_for_selector(entries)
    assert page.eval_on_selector_all(entries, read) == before


@pytest.mark.parametrize("reduced", [False, True])
def test_other_seats_moves_are_shown_one_by_one(
    open_client: Callable[..., Any], server: Server, reduced: bool
) -> None:
    """A bot's turn arrives as several moves in one view: each is shown in turn where it
    went, while the buttons already follow the newest view; moves are still shown under
    prefers-reduced-motion, without the motion."""
    page = open_client()
    page.emulate_media(reduced_motion="reduce" if reduced else "no-preference")
    at_table(page, server, view(view={"turn": 2, "legal_actions": []}, last_action=None))
    bot = [
        {"seat": 2, "type": "draw", "auto": True},
        {"seat": 2, "type": "meld", "auto": True, "melds": [{"rank": 11, "tiles": ["11B"]}]},
        {"seat": 2, "type": "discard", "tile": "4K", "auto": True},
    ]
    draw = {"phase": "draw", "turn": 1, "legal_actions": [{"type": "draw"}]}
    server.push(view(version=4, view=draw, moves=bot, last_action=bot[2]))
    page.wait_for_function("() => document.getElementById('table-screen').dataset.version === '4'")
    assert page.is_enabled('[data-testid="draw-button"]'), "the player's turn does not wait"
    marked = """() => [...document.querySelectorAll('.presented')].map(e =>
        e.dataset.testid + (e.classList.contains('moving') ? '*' : ''))"""
    star = "" if reduced else "*"
    first = page.evaluate(marked)
    assert sorted(first) == sorted([f"seat-2{star}", f"log-entry{star}", f"stock{star}"])
    assert page.eval_on_selector_all(".log-entry.upcoming", "els => els.length") == 2
    page.click('[data-testid="draw-button"]')
    assert server.actions("play")[-1]["move"] == {"type": "draw"}
    page.wait_for_function("() => document.querySelector('[data-testid=\"meld-B-11\"].presented')")
    page.wait_for_function("() => document.querySelector('#pile.presented')")
    page.wait_for_function("() => !document.querySelector('.presented')", timeout=3000)
    assert page.eval_on_selector_all(".log-entry.upcoming", "els => els.length") == 0


def test_draw_phase_buttons_and_a_replaced_tab(
    open_client: Callable[..., Any], server: Server
) -> None:
    page = open_client()
    at_table(page, server, view(view={"phase": "draw", "legal_actions": [{"type": "draw"}]}))
    for button in ("meld-button", "discard-button"):
        assert page.get_attribute(f'[data-testid="{button}"]', "title") == (
            "Draw first (or take the pile)."
        )
    assert page.inner_text('[data-testid="action-why"]').count("Draw first") == 1
    assert page.inner_text('[data-testid="turn-indicator"]') == "Your turn"
    assert page.is_visible('[data-testid="turn-timer"]')
    server.push({"type": "opened_elsewhere"})
    page.wait_for_selector('[data-testid="elsewhere-banner"]:not([hidden])')
    assert page.inner_text('[data-testid="turn-indicator"]') != "Your turn"
    page.wait_for_timeout(300)
    assert page.is_hidden('[data-testid="turn-timer"]')
    assert page.get_attribute('[data-testid="table-screen"]', "data-my-turn") == "false"


def test_the_queue_card_says_who_plays(open_client: Callable[..., Any], server: Server) -> None:
    """MATCH-3: a queue seats players only, so its match is never practice."""
    page = open_client()
    connected(page, server)
    server.push({"type": "error", "code": "no_table", "message": "not seated"})
    queued = {"type": "queued", "mode": "three_rounds", "variant": "twos-meld", "stake": 0}
    server.push({**queued, "expires_at": time.time() + 60})
    page.wait_for_selector('[data-testid="queued"]:not([hidden])')
    hint = page.inner_text('[data-testid="queued-hint"]')
    assert "not a bot seat" in hint and "not practice" in hint


PHONES = {"390x844": (390, 844), "360x640": (360, 640), "844x390": (844, 390)}
# What a player must see at once on a phone, none of it scrolled away or under the dock.
AT_ONCE = (
    '[data-testid="hand-tile"]',
    ".actions button:not([hidden])",
    '[data-testid^="meld-A-"]',
    '[data-testid^="meld-B-"]',
    '[data-testid="discard-top"] .tile',
    '[data-testid="discard-count"]',
    '[data-testid="stock-count"]',
    '[data-testid="turn-indicator"]',
    '[data-testid="turn-timer"]',
    '[data-testid="seat-count-2"]',
    '[data-testid="seat-count-3"]',
    '[data-testid="seat-count-4"]',
)
# The centre of each matching element is the element itself, not something drawn over it.
UNCOVERED_JS = """sel => [...document.querySelectorAll(sel)].filter((e) => {
  const r = e.getBoundingClientRect();
  const top = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
  return !(top && (e === top || e.contains(top)));
}).map((e) => e.dataset.testid || e.className)"""


def seen_at_once(page: Any, state: str) -> None:
    """``state`` names the round's moment: its first hand has no melds yet, and the pile
    just taken has no top."""
    assert page.evaluate("document.documentElement.scrollHeight - innerHeight") <= 0
    assert page.evaluate("scrollY") == 0
    for box in ("#melds", "#dock"):
        scrolled = page.locator(box).evaluate("e => e.scrollHeight - e.clientHeight")
        assert scrolled <= 0, f"{box} scrolls"
    absent = {"first-hand": "meld-", "pile-taken": "discard-top"}.get(state)
    for selector in [s for s in AT_ONCE if not (absent and absent in s)]:
        assert in_viewport(page, selector), selector
        assert page.evaluate(UNCOVERED_JS, selector) == [], selector


def round_states() -> dict[str, dict[str, Any]]:
    """A round as a phone shows it: its first hand, after a meld, the pile taken, late on."""
    first = {"phase": "draw", "melds": {"A": [], "B": []}, "bonus_threes": {"A": [], "B": []}}
    draw = [{"type": "draw"}, {"type": "joker_button"}]
    melded = {"A": [meld(7, ["7R", "7Y", "JK"])], "B": [meld(11, ["11R", "11Y", "11K"])]}
    taken = [*FULL_HAND, "4K", "4B", "6R", "6Y", "9K", "9R", "11B", "12R"]
    return {
        "first-hand": view(view={"hand": FULL_HAND, "legal_actions": draw, **first}),
        "after-meld": view(view={"hand": FULL_HAND[:12], "melds": melded}),
        "pile-taken": view(view={"hand": sorted(taken), "discard": [], "melds": melded}),
        "late-round": big_view(),
    }


@pytest.mark.parametrize("size", PHONES)
def test_phone_table_without_scrolling(
    open_client: Callable[..., Any], server: Server, size: str
) -> None:
    """At each phone size, in every state of a round: the whole hand, both teams' melds in
    their compact form, the pile's top and size, the stock, the turn, the timer and the
    actions at once, nothing scrolled, nothing under the opaque dock. The screenshots go to
    artifacts/web/phone-<size>-<state>.png."""
    width, height = PHONES[size]
    page = open_client(width=width, height=height, touch=True)
    connected(page, server)
    for version, (state, message) in enumerate(round_states().items(), start=3):
        server.push({**message, "version": version})
        page.wait_for_function(
            f"() => document.getElementById('table-screen').dataset.version === '{version}'"
        )
        page.wait_for_timeout(100)
        screenshot(page, f"phone-{size}-{state}")
        seen_at_once(page, state)
    compact = page.locator('[data-testid="meld-B-7"] .meld-sum')
    assert compact.is_visible() and compact.inner_text().split() == ["7", "×8", "★1"]
    assert page.locator('[data-testid="meld-B-7"] .meld-tiles').is_hidden()
    alpha = page.eval_on_selector(
        '[data-testid="dock"]', "e => getComputedStyle(e).backgroundColor"
    )
    assert alpha.startswith("rgb("), f"the dock shows the table through: {alpha}"


def small_targets(page: Any) -> list[str]:
    return page.evaluate(
        """() => [...document.querySelectorAll(
            'button, select, summary, input:not([type=radio]), .seg span')].filter((e) => {
          const r = e.getBoundingClientRect();
          const shown = r.width > 1 && r.height > 1 && r.right > 0 && r.bottom > 0
            && r.left < innerWidth && getComputedStyle(e).visibility !== 'hidden';
          return shown && (r.width < 44 || r.height < 44);
        }).map((e) => `${e.dataset.testid || e.id || e.textContent.trim()}`
          + ` ${Math.round(e.getBoundingClientRect().width)}x`
          + `${Math.round(e.getBoundingClientRect().height)}`)"""
    )


@pytest.mark.parametrize("size", ["390x844", "360x640"])
def test_every_touch_target_is_44_px(
    open_client: Callable[..., Any], server: Server, size: str
) -> None:
    """Every visible button, select, chip and hand tile of the lobby, the table and the
    banners is at least 44x44 CSS px on a phone."""
    width, height = PHONES[size]
    page = open_client(width=width, height=height, touch=True)
    connected(page, server)
    page.wait_for_selector('[data-testid="lobby-screen"]:not([hidden])')
    assert small_targets(page) == []
    at_table(page, server, big_view())
    page.locator('[data-testid="hand-tile"]').first.click()
    server.push({"type": "error", "code": "pile_blocked", "message": "PILE-2", "table_id": "t1"})
    server.push({"type": "opened_elsewhere"})
    page.wait_for_selector('[data-testid="play-here"]')
    page.wait_for_selector('[data-testid="error-banner"]:not([hidden])')
    assert small_targets(page) == []
    page.click("#error-close")
    page.click('[data-testid="play-here"]')
    page.wait_for_selector('[data-testid="elsewhere-banner"]', state="hidden")
    page.locator('[data-testid="quick-messages"] summary').click()
    assert small_targets(page) == []


# The lines a text takes on screen, from its own boxes.
LINES_JS = """e => { const range = document.createRange(); range.selectNodeContents(e);
  return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size; }"""


@pytest.mark.parametrize("lang", ["fr", "hu"])
def test_turn_hint_reads_as_a_sentence_on_a_small_phone(
    open_client: Callable[..., Any], server: Server, lang: str
) -> None:
    """360x640: the phase hint has the turn bar's width, two lines at most, never one word a
    line; the turn itself stays on one line."""
    page = open_client(width=360, height=640, touch=True, lang=lang)
    for phase in ("draw", "play", "first_discard"):
        message = view(version=3, view={"phase": phase})
        if phase == "draw":
            at_table(page, server, message)
        else:
            server.push({**message, "version": 3 + len(phase)})
            page.wait_for_timeout(150)
        hint = page.locator('[data-testid="phase-hint"]')
        text = hint.inner_text()
        assert len(text.split()) > 4, text
        assert hint.evaluate(LINES_JS) <= 2, text
        assert page.locator('[data-testid="turn-indicator"]').evaluate(LINES_JS) == 1


CUT_OFF_JS = """sel => [...document.querySelectorAll(sel)].filter((e) => {
  const r = e.getBoundingClientRect(), box = e.parentElement.getBoundingClientRect();
  return e.scrollWidth > e.clientWidth || r.right > box.right + 0.5 || r.right > innerWidth;
}).map((e) => e.textContent)"""


@pytest.mark.parametrize("lang", LANGS)
def test_match_chips_are_never_cut_off(
    open_client: Callable[..., Any], server: Server, lang: str
) -> None:
    """At 360 px, every chip of the table's match bar and of the lobby's choices is whole."""
    page = open_client(width=360, height=640, touch=True, lang=lang)
    connected(page, server)
    page.wait_for_selector('[data-testid="lobby-screen"]:not([hidden])')
    assert page.evaluate(CUT_OFF_JS, ".seg span") == []
    at_table(page, server, view(match={**view()["match"], "mode": "one_round"}))
    assert page.evaluate(CUT_OFF_JS, "#match-info .chip") == []
    bar = page.locator("#match-info")
    assert bar.evaluate("e => e.scrollWidth - e.clientWidth") <= 0


def test_colour_blind_marks_are_kept(open_client: Callable[..., Any], server: Server) -> None:
    """The header's toggle gives every tile's colour a plain shape, on the hand, the melds
    and the pile, and the choice outlives a reload."""
    page = open_client(width=1366, height=768)
    at_table(page, server, big_view())
    size_js = "e => parseFloat(getComputedStyle(e).fontSize)"
    places = {
        "hand": '[data-testid="hand-tile"] .tm',
        "meld": '[data-testid="meld-A-10"] .tile .tm',
        "pile": '[data-testid="discard-top"] .tile .tm',
    }
    before = {place: page.locator(sel).first.evaluate(size_js) for place, sel in places.items()}
    toggle = page.locator('[data-testid="colour-marks-toggle"]')
    assert toggle.get_attribute("aria-pressed") == "false"
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "true"
    assert page.evaluate("localStorage.getItem('canasta.colourMarks')") == "on"
    page.reload()
    at_table(page, server, big_view())
    assert page.locator('[data-testid="colour-marks-toggle"]').get_attribute("aria-pressed") == (
        "true"
    )
    marks = {place: page.locator(sel).first for place, sel in places.items()}
    for place, mark in marks.items():
        assert mark.is_visible() and mark.evaluate(size_js) >= 11, place
        assert mark.evaluate(size_js) > before[place], place
    shapes = page.eval_on_selector_all(
        '[data-testid="hand-tile"]', "els => els.map(e => e.querySelector('.tm').textContent)"
    )
    by_colour = dict(zip([t[-1] for t in FULL_HAND if t != "JK"], shapes, strict=False))
    assert len(set(by_colour.values())) == 4, by_colour


MOTION_JS = """() => [...document.querySelectorAll('*')].flatMap((e) =>
  [null, '::before', '::after'].map((pseudo) => [e, getComputedStyle(e, pseudo)]))
  .filter(([, cs]) => cs.animationName !== 'none'
    || cs.transitionDuration.split(',').some((d) => parseFloat(d) > 0))
  .map(([e]) => e.dataset.testid || e.className || e.tagName)"""


def test_reduced_motion_turns_off_every_animation(
    open_client: Callable[..., Any], server: Server
) -> None:
    """Under prefers-reduced-motion no element (nor its ::before, ::after) animates or
    transitions, including the highlights that come as classes."""
    page = open_client()
    page.emulate_media(reduced_motion="reduce")
    at_table(page, server, big_view())
    page.evaluate(
        """() => { document.querySelector('[data-testid="hand-tile"]').classList.add('new');
          document.getElementById('pile-top').classList.add('flash');
          document.querySelector('.meld').classList.add('fresh'); }"""
    )
    server.drop()
    page.wait_for_selector('[data-testid="reconnect-banner"]:not([hidden])')
    assert page.evaluate(MOTION_JS) == []


@pytest.fixture
def gateway_url() -> Iterator[str]:
    """The local stack's gateway (local/gateway.py) serving web/ on a free port of 127.0.0.1,
    an origin a service worker may register on."""
    import asyncio
    import threading

    from aiohttp import web

    from local.gateway import Gateway
    from local.issuer import LocalIssuer

    # The browser's driver runs an event loop of its own on this thread: the gateway's is
    # on another one.
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    served = Gateway(LocalIssuer())
    runner = web.AppRunner(served.app, access_log=None)

    async def start() -> None:
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()

    asyncio.run_coroutine_threadsafe(start(), loop).result(10)
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        served.close()


def png_size(body: bytes) -> tuple[int, int]:
    assert body[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(body[16:20], "big"), int.from_bytes(body[20:24], "big")


def test_installable_and_offline(browser: Any, gateway_url: str) -> None:
    """The manifest is linked, valid and its icons are the PNGs it names; Chromium finds the
    page installable; the service worker controls the page after a reload and serves the
    app shell offline, but never config.json."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        page.goto(f"{gateway_url}/")
        href = page.wait_for_selector('link[rel="manifest"]', state="attached")
        manifest_url = page.evaluate(
            "h => new URL(h, location.href).href", href.get_attribute("href")
        )
        response = context.request.get(manifest_url)
        assert response.headers["content-type"].startswith("application/manifest+json")
        manifest = response.json()
        assert manifest["display"] == "standalone" and manifest["short_name"]
        assert manifest["name"] == "Tile Canasta" and manifest["theme_color"]
        assert manifest["background_color"] and manifest["start_url"]
        icons = {(i["sizes"], i.get("purpose", "any")): i for i in manifest["icons"]}
        assert {("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")} <= set(icons)
        for (sizes, _), icon in icons.items():
            body = context.request.get(f"{manifest_url.rsplit('/', 1)[0]}/{icon['src']}")
            assert body.headers["content-type"] == "image/png"
            assert "x".join(map(str, png_size(body.body()))) == sizes
        assert page.get_attribute('meta[name="theme-color"]', "content")
        worker = context.request.get(f"{gateway_url}/web/sw.js")
        assert worker.headers["content-type"].startswith("text/javascript")
        page.wait_for_function("navigator.serviceWorker.ready.then(() => true)")
        page.reload()
        page.wait_for_function("() => navigator.serviceWorker.controller !== null")
        cdp = context.new_cdp_session(page)
        errors = cdp.send("Page.getInstallabilityErrors")["installabilityErrors"]
        # A test's browser context is a private one, where nothing installs.
        assert [e["errorId"] for e in errors if e["errorId"] != "in-incognito"] == []
        assert cdp.send("Page.getAppManifest")["errors"] == []
        context.set_offline(True)
        page.reload()
        page.wait_for_selector('[data-testid="signin-screen"]:not([hidden])')
        assert page.evaluate("getComputedStyle(document.body).margin") == "0px", "no styles"
        cached = page.evaluate(
            """async () => (await (await caches.open('canasta-shell')).keys()).map((r) => r.url)"""
        )
        assert not [url for url in cached if url.endswith("config.json") or "/api/" in url]
        assert f"{gateway_url}/web/ui/table.js" in cached
    finally:
        context.close()


def test_the_service_worker_caches_every_file_of_the_shell() -> None:
    """A module, a language or an icon added to web/ and missing from sw.js's SHELL would be
    missing offline; and the icons are the ones tools/web_icons.py draws."""
    from tools.web_icons import FILES, ICONS, draw

    listed = set(re.findall(r'^  "\./([^"]+)",$', (WEB / "sw.js").read_text(), re.MULTILINE))
    shipped = {
        str(p.relative_to(WEB))
        for p in WEB.rglob("*")
        if p.suffix in (".js", ".json", ".css", ".png", ".webmanifest")
        and p.name not in ("sw.js", "package.json")
    }
    assert listed == shipped
    for name, (size, maskable) in FILES.items():
        assert (ICONS / name).read_bytes() == draw(size, maskable=maskable), name


def test_profile_leaderboard_and_a_replay(open_client: Callable[..., Any], server: Server) -> None:
    """From the lobby: the profile with its stats and last matches, a leaderboard with
    the player's own place, and a replay stepped from the deal (every language's words)."""
    page = open_client()
    connected(page, server)
    page.click('[data-testid="profile-button"]')
    page.wait_for_timeout(100)
    assert server.actions("profile") == [{"action": "profile"}]
    rated = {"shown": 4.21, "mu": 27.3, "sigma": 7.7}
    server.push(
        {
            "type": "profile",
            "rated_matches": 2,
            "stats": {
                "three_rounds": {
                    "rating": rated,
                    "matches": 2,
                    "wins": 1,
                    "win_rate": 0.5,
                    "average_round": 1210.5,
                    "canasta_points": 1300,
                    "canastas": {"clean": 2, "dirty": 1, "twos": 0},
                    "rounds_out_first": 2,
                }
            },
            "matches": [
                {
                    "table_id": "t1",
                    "ended_at": time.time() - 600,
                    "mode": "three_rounds",
                    "stake": 0,
                    "practice": False,
                    "seat": 1,
                    "partner": "Cy",
                    "opponents": ["Bo", "Di"],
                    "rounds": [[1500, 300], [900, 1200], [1400, 800]],
                    "result": "won",
                    "points": 1000,
                    "rating_before": None,
                    "rating_after": rated,
                }
            ],
        }
    )
    page.wait_for_selector('[data-testid="profile"][open]')
    assert "4.2" in page.inner_text('[data-testid="profile-rating"]')
    assert page.locator('[data-testid="profile-match"]').count() == 1
    assert "2 clean, 1 dirty, 0 of twos" in page.inner_text('[data-testid="profile-canastas"]')
    screenshot(page, "profile")
    page.click('[data-testid="replay-button"]')
    page.wait_for_timeout(100)
    assert server.actions("replay") == [
        {"action": "replay", "table_id": "t1", "round": 1, "start": 0}
    ]
    table_view = view()["view"] | {"legal_actions": []}
    after = table_view | {"hand": table_view["hand"][1:], "discard": [*table_view["discard"], "9K"]}
    discarded = {"seat": 1, "auto": False, "type": "discard", "tile": "9K", "version": 4}
    revealed = {"1": after["hand"], "2": ["5R"], "3": [], "4": ["JK"]}
    server.push(
        {
            "type": "replay",
            "table_id": "t1",
            "seat": 1,
            "round": 1,
            "rounds": 3,
            "moves": 1,
            "start": 0,
            "frames": [
                {"move": None, "view": table_view},
                {"move": discarded, "view": after | {"revealed": revealed}},
            ],
            "more": False,
        }
    )
    page.wait_for_selector('[data-testid="replay"][open]')
    assert page.is_hidden('[data-testid="profile"]')
    shown = page.eval_on_selector_all('[data-testid="replay-hand"] .tile', "els => els.length")
    assert shown == len(table_view["hand"])
    assert page.is_hidden("#replay-revealed-box")
    page.click('[data-testid="replay-next"]')
    assert "9K" in page.inner_text('[data-testid="replay-move"]')
    assert page.locator('[data-testid="replay-revealed-hand"]').count() == 4
    screenshot(page, "replay")
    page.click('[data-testid="replay-next"]')
    page.wait_for_timeout(100)
    assert server.actions("replay")[-1] == {
        "action": "replay",
        "table_id": "t1",
        "round": 2,
        "start": 0,
    }
    page.keyboard.press("Escape")

    page.select_option('[data-testid="board-mode"]', "arena")
    page.wait_for_timeout(100)
    server.push(
        {
            "type": "leaderboard",
            "mode": "arena",
            "period": "all",
            "top": [
                {"rank": 1, "name": "Bea", "shown": 31.4, "you": False},
                {"rank": 2, "name": "Cy", "shown": 29.9, "you": False},
            ],
            "own": {"rank": 5210, "name": "Ana", "shown": 3.1, "you": True},
        }
    )
    page.wait_for_selector('[data-testid="leaderboard"][open]')
    assert server.actions("leaderboard")[-1] == {
        "action": "leaderboard",
        "mode": "arena",
        "period": "all",
    }
    assert page.locator('[data-testid="board-row"]').count() == 2
    assert "5,210" in page.inner_text('[data-testid="board-you"]')
    screenshot(page, "leaderboard")
    page.keyboard.press("Escape")
    for lang in ("fr", "hu", "it", "pl", "ro"):
        words = json.loads((WEB / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
        page.select_option("#lang", lang)
        title = page.locator('[data-testid="records"] h3')
        title.wait_for()
        page.wait_for_function(
            "want => document.querySelector('[data-testid=\"records\"] h3').textContent === want",
            arg=words["records.title"],
        )
