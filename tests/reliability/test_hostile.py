"""Hostile clients: whatever a connected player sends, it gets an error frame and changes nothing.

Hypothesis generates WebSocket messages (wrong types, payloads up to 200 KB,
unknown actions, deep nesting, other tables' ids, other seats' moves,
replayed old versions, Unicode junk) and sends them through the real
handlers, routed on ``action`` as API Gateway routes them, to a live table
a few moves into its round. For every message:

- the sender gets exactly one frame, an error, and nobody else hears anything;
- no handler raises, none answers ``internal``;
- the table's items (version, state, log, rounds) and every ledger, player,
  matchmaking and connection item are unchanged;
- the error frame names no tile the sender may not see (other hands, the
  stock) and never the round's seed; a ``stale_version`` view is the sender's own.

Forged, expired and tampered tokens are refused at ``$connect``: the
authorizer denies them and no connection is recorded.
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import jwt
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from local.dispatcher import LambdaContext, load
from local.gateway import ROUTES
from services.common.auth import LEEWAY_SECONDS
from shared_engine import unpack
from shared_engine.tiles import NAMES
from tests.integration.harness import Harness
from tests.reliability._support import Seats, fresh_stack, start_match

pytestmark = pytest.mark.integration

TABLE = "hostile"
OTHER = "elsewhere"
PLAYERS = ["h1", "h2", "h3", "h4"]
OTHERS = ["o1", "o2", "o3", "o4"]
MOVES_BEFORE = 9
TILE = re.compile(r"(?<![0-9A-Z])(JK|1[0-3][RYKB]|[1-9][RYKB])(?![0-9A-Za-z])")
EXAMPLES = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@dataclass
class Live:
    harness: Harness = field(repr=False)
    conns: dict[int, str]
    version: int
    turn: int
    snapshot: dict[str, Any] = field(repr=False)


def snapshot(harness: Harness) -> dict[str, Any]:
    """Every item of every table the game keeps (the connections table included)."""
    db = harness.aws.client("dynamodb")
    settings_ = harness.aws.settings
    tables = (
        settings_.games_table,
        settings_.ledger_table,
        settings_.players_table,
        settings_.matchmaking_table,
        settings_.connections_table,
    )
    found: dict[str, Any] = {}
    for name in tables:
        items = db.scan(TableName=name, ConsistentRead=True)["Items"]
        # A binary value (the TABLE item's packed state) compares as its hex.
        found[name] = sorted(json.dumps(i, sort_keys=True, default=bytes.hex) for i in items)
    return found


@pytest.fixture(scope="module")
def live(moto_endpoint: str) -> Iterator[Live]:
    """A table a few moves into its round (a discard pile, maybe melds), and another table."""
    with fresh_stack(moto_endpoint) as harness:
        seats = start_match(harness, TABLE, PLAYERS)
        start_match(harness, OTHER, OTHERS)
        play_some(seats, MOVES_BEFORE)
        harness.settle()
        table = harness.table(TABLE)
        assert table.state is not None
        yield Live(harness, seats.conns, table.version, unpack(table.state).turn, snapshot(harness))
        harness.settle()
        assert harness.aws.dispatcher.errors == []


def play_some(seats: Seats, moves: int) -> None:
    for _ in range(moves):
        seats.read()
        found = seats.mover()
        assert found is not None
        seats.play(*found)


# --- what every hostile message must leave behind -------------------------------------


def named_tiles(value: Any) -> Counter[str]:
    found: Counter[str] = Counter()
    if isinstance(value, str):
        found.update(TILE.findall(value))
    elif isinstance(value, dict):
        for key, item in value.items():
            found += named_tiles(key) + named_tiles(item)
    elif isinstance(value, list):
        for item in value:
            found += named_tiles(item)
    return found


def decoded(body: str) -> Any:
    """The frame as the server read it, if it is JSON at all."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def send_hostile(live: Live, seat: int, body: str) -> None:
    """Send ``body`` from ``seat``'s connection, routed on its ``action`` as API Gateway
    routes it, and check everything listed above."""
    harness = live.harness
    before = {c: len(harness.received(c)) for c in live.conns.values()}
    connection = live.conns[seat]
    message: Any
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):  # API Gateway routes what it cannot read to $default
        message = None
    action = message.get("action") if isinstance(message, dict) else None
    route = action if isinstance(action, str) and action in ROUTES else "$default"
    request = {
        "requestContext": {
            "connectionId": connection,
            "routeKey": route,
            "eventType": "MESSAGE",
            "authorizer": harness.authorized[connection],
            "apiId": "hostile",
            "stage": "local",
        },
        "body": body,
        "isBase64Encoded": False,
    }
    response = load(ROUTES[route])(request, LambdaContext(route))
    assert response == {"statusCode": 200}

    replies = harness.received(connection)[before[connection] :]
    assert len(replies) == 1, f"{len(replies)} replies to {body[:200]!r}: {replies}"
    (reply,) = replies
    assert reply["type"] == "error", reply
    assert reply["code"] != "internal", (body[:200], reply)
    event(f"refused: {reply['code']}")
    for other, conn in live.conns.items():
        if other != seat:
            assert harness.received(conn)[before[conn] :] == [], f"seat {other} heard something"
    assert snapshot(harness) == live.snapshot, f"{body[:200]!r} changed a stored item"
    check_no_leak(live, seat, reply, body)


def check_no_leak(live: Live, seat: int, reply: dict[str, Any], body: str) -> None:
    table = live.harness.table(TABLE)
    assert table.state is not None
    state = unpack(table.state)
    text = json.dumps(reply)
    assert state.seed is not None and state.seed not in text, "the seed reached a client"
    own = Counter(NAMES[t] for t in state.hands[seat - 1])
    public: Counter[str] = Counter(NAMES[t] for t in state.discard)
    for team in state.melds:
        for meld in team:
            public.update(NAMES[t] for t in meld)
    for team in state.bonus_threes:
        public.update(NAMES[t] for t in team)
    # Tile kinds: a view names its own tiles many times (legal actions), which is fine; a
    # refusal may quote what was sent, read as text (``"\u00072R"`` in the frame is the
    # characters BEL, 2, R once decoded, which the reply quotes decoded, or escaped as
    # Python writes it: ``'\x13K'`` names 13K).
    sent = decoded(body)
    quoted = set(named_tiles(body)) | set(named_tiles(sent)) | set(named_tiles(repr(sent)))
    allowed = set(own) | set(public) | quoted
    named = set(named_tiles(reply))
    assert named <= allowed, f"seat {seat} was told of {named - allowed}: {reply}"
    view = reply.get("view")
    if view is not None:
        assert reply["code"] == "stale_version"
        assert view["seat"] == seat and view["view"]["seat"] == seat
        assert sorted(view["view"]["hand"]) == sorted(own.elements())


# --- strategies ---------------------------------------------------------------------------

JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
JSON = st.recursive(
    JSON_LEAF,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=30,
)
TILE_NAMES = st.sampled_from([n for n in NAMES if n])
MOVE_TYPES = st.sampled_from(["draw", "take_pile", "joker_button", "meld", "discard", "pass", ""])


def _move() -> st.SearchStrategy[Any]:
    """Mostly well-formed moves (so that the refusal is about who, where and when), some junk."""
    meld = st.fixed_dictionaries(
        {"rank": st.integers(-3, 20) | JSON, "tiles": st.lists(TILE_NAMES | JSON, max_size=9)}
    )
    well_formed = st.one_of(
        st.sampled_from([{"type": "draw"}, {"type": "joker_button"}]),
        st.builds(lambda t: {"type": "discard", "tile": t}, TILE_NAMES),
        st.builds(
            lambda melds: {"type": "take_pile", "melds": melds},
            st.lists(
                st.fixed_dictionaries(
                    {"rank": st.integers(1, 13), "tiles": st.lists(TILE_NAMES, max_size=4)}
                ),
                max_size=2,
            ),
        ),
    )
    junk = st.one_of(
        JSON,
        st.fixed_dictionaries(
            {"type": MOVE_TYPES},
            optional={
                "tile": TILE_NAMES | JSON,
                "melds": st.lists(meld, max_size=4) | JSON,
                "extra": JSON,
            },
        ),
    )
    return st.one_of(well_formed, well_formed, well_formed, junk)


def _version(live_version: int) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.integers(min_value=0, max_value=live_version - 1),  # replayed old versions
        st.integers(min_value=live_version + 1, max_value=2**63),  # from the future
        st.integers(max_value=-1),
        JSON,
    )


def plays(version: int, turn: int) -> st.SearchStrategy[tuple[int, dict[str, Any]]]:
    """(sender seat, play message) that must be refused; the seat to play never sends at the
    live version (any move of its own might be legal there)."""

    def build(seat: int, table_id: Any, v: Any, move: Any, junk: Any = None) -> tuple[int, dict]:
        message = {"action": "play", "table_id": table_id, "version": v, "move": move}
        if junk is not None:
            message["junk"] = junk
        return seat, message

    anyone = st.integers(1, 4)
    others = st.sampled_from([s for s in (1, 2, 3, 4) if s != turn])
    old = st.integers(min_value=0, max_value=version - 1)
    future = st.integers(min_value=version + 1, max_value=2**63 - 1)
    elsewhere = st.sampled_from([OTHER, "nope", "HOSTILE", "hostile-2", "TABLE"])
    return st.one_of(
        # another seat's move, on the live version: not its turn
        st.builds(build, others, st.just(TABLE), st.just(version), _move()),
        # a replayed old version, or one from the future, from anyone
        st.builds(build, anyone, st.just(TABLE), old | future, _move()),
        # another table's id, or a table that does not exist
        st.builds(build, anyone, elsewhere, st.just(version) | old, _move()),
        # wrong types and junk anywhere
        st.builds(
            build,
            anyone,
            st.just(TABLE) | JSON | st.sampled_from(["", "x" * 65, "../TABLE#x", "hostile "]),
            _version(version),
            _move(),
            st.none() | JSON,
        ),
        st.builds(build, anyone, st.just(TABLE), st.just(version) | old, _move(), JSON),
    )


# --- the tests ------------------------------------------------------------------------------


def test_the_live_table_is_mid_round(live: Live) -> None:
    table = live.harness.table(TABLE)
    assert table.status == "playing" and table.version == live.version > MOVES_BEFORE
    state = unpack(table.state or b"")
    assert state.discard or any(m for team in state.melds for m in team)


@settings(EXAMPLES, max_examples=100)
@given(data=st.data())
def test_hostile_plays_are_refused_and_change_nothing(live: Live, data: st.DataObject) -> None:
    seat, message = data.draw(plays(live.version, live.turn))
    send_hostile(live, seat, json.dumps(message))


@EXAMPLES
@given(
    seat=st.integers(1, 4),
    action=st.one_of(
        st.text(max_size=30).filter(lambda a: a not in ROUTES),
        st.sampled_from(sorted(ROUTES)),
        JSON,
    ),
    fields=st.dictionaries(
        st.text(min_size=1, max_size=10).filter(lambda k: k != "action"), JSON, max_size=4
    ),
)
# The refusal quotes the action as Python writes it, ``'\x13K'``: the tile it seems to name
# came from the sender.
@example(seat=1, action=["\x13K"], fields={})
def test_unknown_actions_and_wrong_types_are_refused(
    live: Live, seat: int, action: Any, fields: dict[str, Any]
) -> None:
    message = {"action": action, **fields, "junk!": True}
    send_hostile(live, seat, json.dumps(message))


@settings(EXAMPLES, max_examples=15)
@given(
    seat=st.integers(1, 4),
    size=st.integers(min_value=8 * 1024 + 1, max_value=200 * 1024),
    filler=st.characters(codec="utf-8", exclude_categories=("Cs",)),
    route=st.sampled_from(["play", "sync", "queue", "nothing"]),
)
def test_huge_payloads_are_refused(
    live: Live, seat: int, size: int, filler: str, route: str
) -> None:
    pad = filler * (size // max(1, len(filler.encode())))
    message = {"action": route, "table_id": TABLE, "version": live.version, "pad": pad}
    send_hostile(live, seat, json.dumps(message, ensure_ascii=False))


@settings(EXAMPLES, max_examples=20)
@given(
    seat=st.integers(1, 4),
    depth=st.integers(min_value=50, max_value=3000),
    shape=st.sampled_from(["list", "dict"]),
    where=st.sampled_from(["move", "version", "table_id", "top"]),
)
def test_deep_nesting_is_refused(live: Live, seat: int, depth: int, shape: str, where: str) -> None:
    open_, close = ("[", "]") if shape == "list" else ('{"a":', "}")
    nested = open_ * depth + "1" + close * depth
    if where == "top":
        body = nested
    else:
        message = {"action": "play", "table_id": TABLE, "version": live.version, "move": {}}
        message[where] = "@@"
        body = json.dumps(message).replace('"@@"', nested)
    send_hostile(live, seat, body)


@EXAMPLES
@given(seat=st.integers(1, 4), body=st.text(max_size=2000) | st.binary(max_size=500).map(repr))
def test_unicode_junk_is_refused(live: Live, seat: int, body: str) -> None:
    send_hostile(live, seat, body)


# --- tokens at $connect -----------------------------------------------------------------------


def _refused(live: Live, token: str | None) -> None:
    harness = live.harness
    try:
        policy = harness.authorize(token)
    except Exception as exc:  # expired: API Gateway answers the authorizer's error with 401
        assert str(exc) == "Unauthorized", token
    else:
        assert policy["policyDocument"]["Statement"][0]["Effect"] == "Deny", token
        assert policy.get("context") in ({}, None)
    assert harness.connect("intruder", token) is None
    assert snapshot(harness) == live.snapshot


@EXAMPLES
@given(data=st.data())
def test_forged_expired_and_tampered_tokens_are_refused(live: Live, data: st.DataObject) -> None:
    harness = live.harness
    player = data.draw(st.sampled_from(PLAYERS + OTHERS + ["intruder"]))
    valid = harness.token(player)
    kind = data.draw(st.sampled_from(["tamper", "forge", "expired", "splice", "junk"]))
    if kind == "tamper":
        position = data.draw(st.integers(0, len(valid) - 1))
        char = data.draw(
            st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=")
        )
        if char == valid[position]:
            char = "A" if valid[position] != "A" else "B"
        token = valid[:position] + char + valid[position + 1 :]
    elif kind == "forge":
        # Claims the issuer would sign, MACed with a guessed key under its key id.
        key = data.draw(st.binary(min_size=1, max_size=64))
        claims = jwt.decode(valid, options={"verify_signature": False})
        kid = jwt.get_unverified_header(valid)["kid"]
        token = jwt.encode(claims, key, algorithm="HS256", headers={"kid": kid})
    elif kind == "expired":
        age = data.draw(st.integers(min_value=LEEWAY_SECONDS + 2, max_value=10**7))
        token = harness.token(player, ttl=1, now=time.time() - age)
    elif kind == "splice":
        version, _, signature = valid.split(".")
        other = harness.token(data.draw(st.sampled_from(PLAYERS + OTHERS))).split(".")[1]
        claims = data.draw(
            st.fixed_dictionaries(
                {"sub": st.text(max_size=70) | JSON, "name": JSON, "exp": JSON | st.integers()}
            )
        )
        forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
        payload = data.draw(st.sampled_from([other, forged]))
        if payload == valid.split(".")[1]:
            payload = forged + "x"
        token = f"{version}.{payload}.{signature}"
    else:
        token = data.draw(st.text(max_size=300))
    _refused(live, token)
