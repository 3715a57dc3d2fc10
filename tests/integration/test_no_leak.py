"""No seat ever receives another seat's tiles, the stock order or the seed (DESIGN: views).

Every message pushed to every connection during a whole one-round match is
checked against the round states rebuilt from the stored history alone.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest
from pydantic import TypeAdapter

from infra.manifest import QUERY
from services.common.protocol import ServerMessage
from shared_engine import (
    MatchMode,
    RoundState,
    apply,
    parse_action,
    player_view,
    score_round,
    start_round,
)
from shared_engine.tiles import NAMES
from tests.integration.clients import play_match
from tests.integration.harness import Harness
from tests.integration.history import Versions, moves_of, states_by_version

pytestmark = pytest.mark.integration

TILE = re.compile(r"^(JK|([1-9]|1[0-3])[RYKB])$")
SERVER_MESSAGE: TypeAdapter[Any] = TypeAdapter(ServerMessage)


def tile_names(value: Any) -> Counter[str]:
    """Every string anywhere in a message that names a tile."""
    found: Counter[str] = Counter()
    if isinstance(value, str):
        if TILE.match(value):
            found[value] += 1
    elif isinstance(value, dict):
        for item in value.values():
            found += tile_names(item)
    elif isinstance(value, list):
        for item in value:
            found += tile_names(item)
    return found


def public_tiles(state: RoundState) -> set[str]:
    tiles = {NAMES[t] for t in state.discard}
    if state.round_over:  # the round's result shows every hand (PlayerView.revealed)
        tiles |= {NAMES[t] for hand in state.hands for t in hand}
    tiles |= {NAMES[t] for team in state.melds for meld in team for t in meld}
    tiles |= {NAMES[t] for team in state.bonus_threes for t in team}
    return tiles


def hidden_from(state: RoundState, seat: int) -> Counter[str]:
    """What ``seat`` must not see: the other hands and the stock."""
    hidden = Counter(NAMES[t] for t in state.stock)
    for other in (1, 2, 3, 4):
        if other != seat:
            hidden.update(NAMES[t] for t in state.hands[other - 1])
    return hidden


def check_view(view_message: dict[str, Any], seat: int, versions: Versions) -> None:
    version = view_message["version"]
    state = versions.at(version)
    assert view_message["seat"] == seat
    view = view_message["view"]
    assert view["seat"] == seat
    own = [NAMES[t] for t in state.hands[seat - 1]]
    # The view is exactly this seat's view of the state at that version ...
    assert sorted(view["hand"]) == sorted(own), f"seat {seat} v{version}: wrong hand"
    expected = player_view(state, seat).model_dump(mode="json")
    for key in ("hand_sizes", "melds", "discard", "bonus_threes", "stock_size", "turn", "phase"):
        assert view[key] == expected[key], f"seat {seat} v{version}: {key}"
    # ... and no tile it names is anything but the seat's own or public.
    allowed = set(own) | public_tiles(state)
    named = set(tile_names(view_message))
    assert named <= allowed, f"seat {seat} v{version} sees {named - allowed}"
    # A tile kind the seat neither holds nor sees in public must not appear at all;
    # for the kinds it does hold, no more copies than its own hand and the public areas.
    public = Counter(NAMES[t] for t in state.discard)
    public.update(NAMES[t] for team in state.melds for meld in team for t in meld)
    public.update(NAMES[t] for team in state.bonus_threes for t in team)
    fields = Counter(view["hand"])
    fields.update(view["discard"])
    fields.update(t for team in view["melds"].values() for m in team for t in m["tiles"])
    fields.update(t for team in view["bonus_threes"].values() for t in team)
    assert fields == Counter(own) + public
    assert "stock" not in view


def test_no_seat_ever_sees_another_seats_tiles(harness: Harness) -> None:
    players = ["n1", "n2", "n3", "n4"]
    conns = harness.start_table("leak", players, MatchMode.ONE_ROUND)
    play_match(harness, conns, "leak", seed=7)

    history = harness.history("leak")
    versions = states_by_version(history)
    table = harness.table("leak")
    assert table.status == "finished"
    seeds = {i["sk"]["S"]: i["seed"]["S"] for i in history if i["sk"]["S"].startswith("ROUND#")}
    assert len(seeds) == table.round

    checked = 0
    for seat, conn in conns.items():
        messages = harness.received(conn)
        assert messages, f"seat {seat} received nothing"
        revealed: set[int] = set()
        for message in messages:
            SERVER_MESSAGE.validate_python(message)
            if message["type"] == "round_result":
                # The round is scored: its seed is revealed now (DEAL-4), and only now.
                assert message["seed"] == seeds[f"ROUND#{message['round']:04d}"]
                revealed.add(message["round"])
            text = json.dumps(message)
            for key, seed in seeds.items():
                number = int(key.split("#")[1])
                if number not in revealed:
                    assert seed not in text, f"seat {seat}: seed of round {number} leaked"
            if message["type"] == "round_result":
                continue
            views = [message] if message["type"] == "view" else []
            if message["type"] == "error" and "view" in message:
                views.append(message["view"])
            for view in views:
                check_view(view, seat, versions)
                state = versions.at(view["version"])
                hidden = hidden_from(state, seat)
                # Nothing hidden appears unless the seat legitimately holds or sees that kind.
                mine_or_public = {NAMES[t] for t in state.hands[seat - 1]} | public_tiles(state)
                assert not (set(tile_names(view)) & (set(hidden) - mine_or_public))
                checked += 1
        assert revealed == set(range(1, table.round + 1))
    turns = [i for i in history if i["sk"]["S"].startswith("LOG#")]
    assert checked >= 4 * len(turns) > 4 * 5, "every seat received a view after every turn"


def test_the_seat_a_message_goes_to_is_the_seat_of_its_connection(harness: Harness) -> None:
    """A reconnect moves the seat: views follow the new connection, never another seat's."""
    conns = harness.start_table("seats", ["s1", "s2", "s3", "s4"])
    view = harness.last(conns[1])
    assert view is not None
    harness.play(
        conns[1], "seats", view["version"], {"type": "discard", "tile": view["view"]["hand"][0]}
    )
    harness.disconnect(conns[3])
    harness.settle()
    again = harness.connect("s3")
    assert again is not None
    harness.settle()
    harness.send(again, {"action": "sync"})
    for seat, conn in {**conns, 3: again}.items():
        for message in harness.received(conn):
            if message["type"] == "view":
                assert message["seat"] == seat
                assert message["view"]["seat"] == seat


def test_the_move_log_of_auto_played_turns_is_public(harness: Harness) -> None:
    """Three seats away: their turns are auto-played in one write (each a draw, then a
    discard), and the view that follows lists those moves for the log, each with the
    version its write made. A draw names no tile; every tile a move names was public at
    its version (or the seat's own)."""
    conns = harness.start_table("log", ["g1", "g2", "g3", "g4"], MatchMode.ONE_ROUND)
    for seat in (2, 3, 4):
        harness.disconnect(conns[seat])
    harness.settle()
    play_match(harness, {1: conns[1]}, "log", seed=3)
    versions = states_by_version(harness.history("log"))
    logged: list[dict[str, Any]] = []
    for message in harness.received(conns[1]):
        if message["type"] != "view" or not message["moves"]:
            continue
        last = {k: v for k, v in message["moves"][-1].items() if k != "version"}
        assert last == message["last_action"]
        for move in message["moves"]:
            assert move["version"] <= message["version"]
            if move["type"] in ("draw", "joker_button"):
                shown = {"seat", "type", "auto", "bonus_threes", "went_out", "version"}
                assert set(move) <= shown, move
            named = set(tile_names(move))
            state = versions.at(move["version"])
            assert named <= public_tiles(state), f"v{move['version']}: {move}"
            logged.append(move)
    others = [m for m in logged if m["seat"] != 1]
    assert others and all(m["auto"] for m in others)
    kinds = {(m["seat"], m["type"]) for m in others}
    assert {(s, t) for s in (2, 3, 4) for t in ("draw", "discard")} <= kinds, kinds


def round_states(items: list[dict[str, Any]]) -> dict[int, list[RoundState]]:
    """Each round's state at the deal and after every logged move, from the items alone."""
    by_round: dict[int, list[RoundState]] = {}
    totals = (0, 0)
    for item in sorted((i for i in items if i["sk"]["S"].startswith("ROUND#")), key=str):
        number = int(item["sk"]["S"].split("#")[1])
        state = start_round(item["seed"]["S"], dealer=int(item["dealer"]["N"]), match_scores=totals)
        states = [state]
        for move in moves_of(items, number):
            state, _ = apply(state, move.seat, parse_action(move.action))
            states.append(state)
        by_round[number] = states
        a, b = score_round(state)
        totals = (totals[0] + a.total, totals[1] + b.total)
    return by_round


def test_no_frame_of_a_replay_shows_a_tile_its_seat_could_not_see(harness: Harness) -> None:
    """Each seat replays the finished match page by page: every frame is exactly its
    view after that move, and names nothing but its own tiles and public ones (the
    hands only after the round's last move). No one else may replay it."""
    players = ["y1", "y2", "y3", "y4"]
    conns = harness.start_table("replayed", players, MatchMode.ONE_ROUND)
    live = harness.connect("y5")
    assert live is not None
    harness.send(conns[1], {"action": "replay", "table_id": "replayed", "cid": "early"})
    assert (harness.last(conns[1], "error") or {}).get("code") == "not_over"
    play_match(harness, conns, "replayed", seed=11)
    states = round_states(harness.history("replayed"))
    checked = 0
    for seat, conn in conns.items():
        start, more = 0, True
        while more:
            harness.send(conn, {"action": "replay", "table_id": "replayed", "start": start})
            page = harness.last(conn, "replay")
            assert page is not None and page["start"] == start and page["seat"] == seat
            SERVER_MESSAGE.validate_python(page)
            assert len(json.dumps(page)) < 128 * 1024, "a page fits a WebSocket frame"
            for ply, frame in enumerate(page["frames"], start=start):
                state = states[1][ply]
                check_view(
                    {"version": ply, "seat": seat, **frame}, seat, Versions([ply], [state], [1])
                )
                assert (frame["move"] is None) == (ply == 0)
                assert frame["view"]["legal_actions"] == []
                assert (frame["view"]["revealed"] is not None) == state.round_over
                checked += 1
            start += len(page["frames"])
            more = page["more"]
        assert start == len(states[1]), "every move of the round, once"
    assert checked == 4 * len(states[1])
    harness.send(live, {"action": "replay", "table_id": "replayed", "cid": "not-mine"})
    refused = harness.last(live, "error")
    assert refused is not None and refused["code"] == "no_table"
    assert "replay" not in {m["type"] for m in harness.received(live)}
    games = harness.aws.iam.arns.table(harness.aws.settings.games_table)
    assert ("matchmaking-ws", QUERY, games) in harness.aws.iam.used, "read with its own grant"
