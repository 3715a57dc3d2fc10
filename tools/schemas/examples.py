"""Named examples of every message, built from the engine with a fixed seed.

Played rather than written out, so that a view, its ``legal_actions`` and the
commitment are what the server would send; each is validated by its model.
"""

from __future__ import annotations

from typing import Any, Final

from services.common.events import SeatPlayer
from services.common.protocol import ARENA_STAKES, IDLE_SECONDS, PROTOCOL_VERSION, ViewMessage
from services.common.records import TableRecord
from services.common.tableviews import view_message
from shared_engine import (
    MatchMode,
    account_rewards,
    action_to_wire,
    actions,
    apply,
    auto_discard,
    start_round,
)
from shared_engine.actions import DISCARDS, DRAW
from tools.schemas.common import CLIENT_MESSAGES, SERVER_MESSAGES, TURN_SECONDS

EXAMPLE_SEED: Final = "94c167080aaf44ae3a6f7bee6479a4b10587444992c03aac6c8c4d75b7ada0cc"
"""The seed of the samples in events/: the examples show the same round of the same table."""
EXAMPLE_TABLE: Final = "7c3e9a1f5b2d4e86"
EXAMPLE_TIME: Final = 1773514950.0
EXAMPLE_PLAYERS: Final = {
    1: SeatPlayer(player_id="p-3f9a1c2e7b10", name="Ayla"),
    2: SeatPlayer(player_id="p-8d02b6e4a951", name="Bora"),
    3: SeatPlayer(player_id="p-c47e19f0d388", name="Cem"),
    4: SeatPlayer(player_id="p-51ab7d6c2e04", name="Deniz"),
}
EXAMPLE_CONNECTIONS: Final = {
    1: "Ku3cOfQtDoECFxw=",
    2: "Ku3cVeBQjoECFjA=",
    3: "Ku3cXc1SDoECFaQ=",
    4: "Ku3cZfKBjoECFtg=",
}


def _example_view(seat: int, *, drawn: bool = False) -> ViewMessage:
    """Round 1 of the example table after seat 1's opening discard (and, if ``drawn``, seat
    2's draw), as ``seat`` sees it."""
    state = start_round(EXAMPLE_SEED, variant="twos-meld", dealer=4)
    first = state.turn
    moves: list[tuple[int, actions.Action]] = [(first, DISCARDS[auto_discard(state, first)])]
    if drawn:
        moves.append((2, DRAW))
    for mover, move in moves:
        state, _ = apply(state, mover, move)
    table = TableRecord(
        table_id=EXAMPLE_TABLE,
        mode=MatchMode.ONE_ROUND,
        variant="twos-meld",
        stake=0,
        seats=dict(EXAMPLE_PLAYERS),
        version=1 + len(moves),
        round=1,
        connections=dict(EXAMPLE_CONNECTIONS),
        turn_started=2,
        turn_deadline=EXAMPLE_TIME + TURN_SECONDS,
        updated_at=EXAMPLE_TIME,
    )
    mover, move = moves[-1]
    last = {"seat": mover, **action_to_wire(move), "auto": False}
    return view_message(table, state, seat, last)


def _client_examples() -> dict[str, list[tuple[str, dict[str, Any]]]]:
    legal = _example_view(2).model_dump(mode="json")["view"]["legal_actions"]
    draw = next((a for a in legal if a["type"] == "draw"), legal[0])
    state = start_round(EXAMPLE_SEED, variant="twos-meld", dealer=4)
    state, _ = apply(state, 1, DISCARDS[auto_discard(state, 1)])
    state, _ = apply(state, 2, DRAW)
    discard = action_to_wire(DISCARDS[auto_discard(state, 2)])
    meld = {"type": "meld", "melds": [{"rank": 2, "tiles": ["2Y", "2K", "2B", "JK"]}]}
    return {
        "Play": [
            (
                "seat 2 draws (see the `view` example), with a correlation id",
                {
                    "action": "play",
                    "table_id": EXAMPLE_TABLE,
                    "version": 2,
                    "move": draw,
                    "cid": "m-41",
                },
            ),
            (
                "then discards",
                {"action": "play", "table_id": EXAMPLE_TABLE, "version": 3, "move": discard},
            ),
            (
                "seat 4 lays the meld of twos and discards: the turn's rest in one message",
                {
                    "action": "play",
                    "table_id": EXAMPLE_TABLE,
                    "version": 7,
                    "move": meld,
                    "then": [{"type": "discard", "tile": "9K"}],
                },
            ),
        ],
        "Sync": [("after every open", {"action": "sync"})],
        "Say": [
            (
                "a quick message to the table",
                {"action": "say", "table_id": EXAMPLE_TABLE, "phrase": "well_played", "cid": "s-1"},
            )
        ],
        "ContinueMatch": [
            (
                "done reading round 1's result",
                {"action": "continue", "table_id": EXAMPLE_TABLE, "round": 1, "cid": "c-1"},
            )
        ],
        "Hello": [("who am I", {"action": "hello", "cid": "h-1"})],
        "Ping": [("keep the connection open", {"action": "ping"})],
        "Queue": [
            ("quick start", {"action": "queue", "mode": "three_rounds"}),
            ("arena", {"action": "queue", "mode": "arena", "stake": ARENA_STAKES[1]}),
        ],
        "Leave": [("leave the queue", {"action": "leave"})],
        "CreateTable": [("a friends table", {"action": "create_table", "mode": "to_10000"})],
        "JoinTable": [("with the invite code", {"action": "join_table", "code": "KQ7M2X"})],
        "FillBots": [("start with bots", {"action": "fill_bots", "cid": "fb-1"})],
        "Rematch": [
            (
                "play again with the same four",
                {"action": "rematch", "table_id": "f-KQ7M2X-3b9e0c1d", "cid": "r-1"},
            )
        ],
        "Balance": [("ask", {"action": "balance"})],
        "Profile": [("ask", {"action": "profile", "cid": "pr-1"})],
        "Replay": [
            ("a round's first page", {"action": "replay", "table_id": "3f9a61c0b2d44e17"}),
            (
                "round 2 from its 40th move",
                {"action": "replay", "table_id": "3f9a61c0b2d44e17", "round": 2, "start": 40},
            ),
        ],
        "Leaderboard": [
            ("all time", {"action": "leaderboard", "mode": "three_rounds", "cid": "lb-1"}),
            (
                "this month",
                {"action": "leaderboard", "mode": "arena", "period": "month", "cid": "lb-2"},
            ),
        ],
    }


def _server_examples() -> dict[str, list[tuple[str, dict[str, Any]]]]:
    view = _example_view(2)
    state = start_round(EXAMPLE_SEED, variant="twos-meld", dealer=4)
    totals = {"A": 635, "B": 1155}
    rewards = account_rewards(MatchMode.ONE_ROUND, 1, 1)
    stale = _example_view(2, drawn=True)
    host = EXAMPLE_PLAYERS[1]
    lobby: dict[str, Any] = {
        "type": "lobby",
        "code": "KQ7M2X",
        "host": host.player_id,
        "you": host.player_id,
        "mode": "to_10000",
        "variant": "twos-meld",
        "seats": {
            "1": host.model_dump(mode="json"),
            "2": None,
            "3": EXAMPLE_PLAYERS[3].model_dump(mode="json"),
            "4": None,
        },
        "status": "forming",
        "table_id": None,
    }
    return {
        "ViewMessage": [("seat 2, whose turn it is", view.model_dump(mode="json"))],
        "ReplayMessage": [
            (
                "the deal and the first move of round 1, from seat 2",
                {
                    "type": "replay",
                    "cid": "rp-1",
                    "table_id": "3f9a61c0b2d44e17",
                    "seat": 2,
                    "round": 1,
                    "rounds": 3,
                    "moves": 212,
                    "start": 0,
                    "frames": [
                        {"move": None, "view": view.view.model_dump(mode="json")},
                        {
                            "move": {"seat": 1, "auto": False, "type": "draw", "version": 2},
                            "view": stale.view.model_dump(mode="json"),
                        },
                    ],
                    "more": True,
                },
            )
        ],
        "WelcomeMessage": [
            (
                "the answer to `hello`",
                {
                    "type": "welcome",
                    "player_id": EXAMPLE_PLAYERS[2].player_id,
                    "name": EXAMPLE_PLAYERS[2].name,
                    "protocol": PROTOCOL_VERSION,
                    "idle_seconds": IDLE_SECONDS,
                    "cid": "h-1",
                },
            )
        ],
        "PongMessage": [("the answer to `ping`", {"type": "pong"})],
        "SaidMessage": [
            (
                "seat 2's quick message, as the other seats get it",
                {"type": "said", "table_id": EXAMPLE_TABLE, "seat": 2, "phrase": "well_played"},
            )
        ],
        "OpenedElsewhereMessage": [
            (
                "pushed to the older connection when the player connects again elsewhere",
                {"type": "opened_elsewhere"},
            )
        ],
        "ErrorMessage": [
            (
                "a refused move",
                {
                    "type": "error",
                    "code": "not_your_turn",
                    "message": "seat 2 is to play",
                    "table_id": EXAMPLE_TABLE,
                    "cid": "m-40",
                },
            ),
            (
                "the same draw sent twice: the second was chosen on version 2",
                {
                    "type": "error",
                    "code": "stale_version",
                    "message": "the table is at version 3",
                    "table_id": EXAMPLE_TABLE,
                    "view": stale.model_dump(mode="json"),
                },
            ),
        ],
        "RoundResultMessage": [
            (
                "the round is scored",
                {
                    "type": "round_result",
                    "table_id": EXAMPLE_TABLE,
                    "round": 1,
                    "scores": {
                        "A": {
                            "melded": 300,
                            "canastas": 300,
                            "bonus_threes": 100,
                            "going_out": 0,
                            "hands": -65,
                            "total": 635,
                        },
                        "B": {
                            "melded": 475,
                            "canastas": 300,
                            "bonus_threes": 300,
                            "going_out": 100,
                            "hands": -20,
                            "total": 1155,
                        },
                    },
                    "totals": totals,
                    "next": "end",
                    "seed": EXAMPLE_SEED,
                    "commitment": state.commitment,
                    "went_out": 4,
                    "hands": {"1": ["7R", "JK"], "2": ["13B", "4Y", "4Y"], "3": ["9K"], "4": []},
                    "intermission_until": None,
                },
            )
        ],
        "MatchResultMessage": [
            (
                "team B won",
                {
                    "type": "match_result",
                    "table_id": EXAMPLE_TABLE,
                    "winner": "B",
                    "totals": totals,
                    "rounds_played": 1,
                    "rewards": {str(seat): amount for seat, amount in rewards.items()},
                },
            )
        ],
        "QueuedMessage": [
            (
                "waiting for players",
                {
                    "type": "queued",
                    "mode": "three_rounds",
                    "variant": "twos-meld",
                    "stake": 0,
                    "expires_at": EXAMPLE_TIME + 120,
                },
            )
        ],
        "QueueLeftMessage": [("left", {"type": "queue_left", "reason": "left"})],
        "LobbyView": [
            ("two of four seated, as the host sees it", lobby),
            (
                "the answer to the host's `fill_bots`: the table is full and starts",
                {
                    **lobby,
                    "seats": {
                        **lobby["seats"],
                        "2": {"player_id": "bot:KQ7M2X-2", "name": "Bot 2", "bot": True},
                        "4": {"player_id": "bot:KQ7M2X-4", "name": "Bot 4", "bot": True},
                    },
                    "status": "started",
                    "table_id": "f-KQ7M2X-3b9e0c1d",
                    "cid": "fb-1",
                },
            ),
            (
                "the offer to play again, as seat 3 gets it: seat 1 asked first",
                {
                    **lobby,
                    "code": "W4HN7P",
                    "you": EXAMPLE_PLAYERS[3].player_id,
                    "seats": {
                        **lobby["seats"],
                        "2": {"player_id": "bot:KQ7M2X-2", "name": "Bot 2", "bot": True},
                        "3": None,
                        "4": {"player_id": "bot:KQ7M2X-4", "name": "Bot 4", "bot": True},
                    },
                    "rematch_of": "f-KQ7M2X-3b9e0c1d",
                    "awaiting": {"3": EXAMPLE_PLAYERS[3].model_dump(mode="json")},
                },
            ),
        ],
        "BalanceMessage": [("the account", {"type": "balance", "points": 12000, "jokers": 2})],
        "ProfileMessage": [
            (
                "after one rated match",
                {
                    "type": "profile",
                    "cid": "pr-1",
                    "rated_matches": 1,
                    "stats": {
                        "one_round": {
                            "rating": {"shown": 2.39, "mu": 26.96, "sigma": 8.19},
                            "matches": 1,
                            "wins": 1,
                            "win_rate": 1.0,
                            "average_round": 2500.0,
                            "canasta_points": 800,
                            "canastas": {"clean": 1, "dirty": 1, "twos": 0},
                            "rounds_out_first": 1,
                        }
                    },
                    "matches": [
                        {
                            "table_id": "3f9a61c0b2d44e17",
                            "ended_at": 1796609270.4,
                            "mode": "one_round",
                            "stake": 0,
                            "practice": False,
                            "seat": 1,
                            "partner": "Bea",
                            "opponents": ["Cy", "Di"],
                            "rounds": [[2500, 400]],
                            "result": "won",
                            "points": 1000,
                            "rating_before": None,
                            "rating_after": {"shown": 2.39, "mu": 26.96, "sigma": 8.19},
                        }
                    ],
                },
            )
        ],
        "LeaderboardMessage": [
            (
                "the player is not in the top",
                {
                    "type": "leaderboard",
                    "cid": "lb-1",
                    "mode": "three_rounds",
                    "period": "all",
                    "top": [
                        {"rank": 1, "name": "Ana", "shown": 31.4, "you": False},
                        {"rank": 2, "name": "Bea", "shown": 29.87, "you": False},
                    ],
                    "own": {"rank": 5210, "name": "Cy", "shown": 3.12, "you": True},
                },
            ),
            (
                "a month the player has not played",
                {
                    "type": "leaderboard",
                    "cid": "lb-2",
                    "mode": "arena",
                    "period": "2026-12",
                    "top": [{"rank": 1, "name": "Ana", "shown": 12.5, "you": False}],
                    "own": None,
                },
            ),
        ],
    }


def examples() -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Named examples of every message, each validated by its model."""
    found = {**_client_examples(), **_server_examples()}
    for model in (*CLIENT_MESSAGES, *SERVER_MESSAGES):
        cases = found.get(model.__name__)
        if not cases:
            raise ValueError(f"no example for {model.__name__}")
        for _, payload in cases:
            model.model_validate(payload)
    return {m.__name__: found[m.__name__] for m in (*CLIENT_MESSAGES, *SERVER_MESSAGES)}
