"""The contract files, generated from the models so that code and documentation cannot drift.

``python -m tools.schemas`` writes

- ``events/schemas/<DetailType>.json``: the JSON Schema of each EventBridge
  event's ``detail`` (``services.common.events``), naming the service that
  emits it and the consumers that receive it;
- ``docs/asyncapi.json``: the AsyncAPI 3.1 document of the WebSocket API
  (``services.common.protocol``);
- ``docs/protocol.md``: the same protocol written for people, with examples.

``python -m tools.schemas --check`` writes nothing, lists the files
that differ from what the models give, and exits 1 if there are any. The
contract tests run the same check (``stale``).

The protocol's schemas follow two rules of the contract that no single model
states: every schema that only server messages reach is open (``additionalProperties``
is left out, so clients built from it tolerate added fields), and every tag
property (``type``, ``action``) carries a title of its own, so that code
generators make one type per message and per move instead of merging them.

The output is deterministic: sorted keys in JSON, a fixed seed for the
examples, no clock. A development tool: no Lambda handler imports it.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import itertools
import json
import re
import sys
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final, get_args, get_origin

from pydantic import BaseModel, TypeAdapter

from infra import manifest
from services.common import constants, events, protocol
from services.common.auth import MAX_TOKEN_CHARS
from services.common.events import EVENT_TYPES, SeatPlayer
from services.common.protocol import (
    ARENA_STAKES,
    IDLE_SECONDS,
    PROTOCOL_VERSION,
    ClientMessage,
    ServerMessage,
    ServiceErrorCode,
    SignInRequest,
    SignInResponse,
    TokenClaims,
    ViewMessage,
)
from services.common.records import TableRecord
from services.common.settings import Settings
from services.common.tableviews import view_message
from shared_engine import (
    ERROR_CODES,
    MatchMode,
    account_rewards,
    action_to_wire,
    actions,
    apply,
    auto_discard,
    start_round,
)
from shared_engine.actions import DISCARDS, DRAW, ActionModel

ROOT: Final = Path(__file__).resolve().parents[1]
SCHEMA_DIR: Final = Path("events/schemas")
ASYNCAPI: Final = Path("docs/asyncapi.json")
PROTOCOL_MD: Final = Path("docs/protocol.md")
COMMAND: Final = "python -m tools.schemas"

JSON_SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
REF_TEMPLATE: Final = "#/components/schemas/{model}"
MAX_MESSAGE_BYTES: Final[int] = Settings.model_fields["max_message_bytes"].default
TURN_SECONDS: Final[int] = Settings.model_fields["turn_seconds"].default
DEFAULT_REGION: Final[str] = Settings.model_fields["region"].default
TOKEN_LIFETIME: Final[str] = f"{Settings.model_fields['token_ttl_seconds'].default // 60} minutes"

# --- events -----------------------------------------------------------------------

OBSERVERS: Final = "published for observers (analytics, spectators)"


def source_of(detail_type: str) -> str:
    if detail_type not in events.EMITTERS:
        raise ValueError(f"no emitting service for {detail_type}: add it to events.EMITTERS")
    return events.source_of(detail_type)


def consumers_of(detail_type: str) -> list[str]:
    """The consumers (``manifest.CONSUMERS``) whose rule matches this detail-type."""
    return sorted(name for name, types in manifest.CONSUMERS.items() if detail_type in types)


def _consumer_text(consumer: str) -> str:
    # A consumer is named after its queue: "turn-events" is the turn service's event queue.
    service = consumer.removesuffix("-events")
    return f"the {service} service (queue `{constants.queue_name(consumer)}`)"


def event_schema(detail_type: str) -> dict[str, Any]:
    """The JSON Schema of one event's ``detail``, with where it comes from and goes to."""
    model = EVENT_TYPES[detail_type]
    schema = model.model_json_schema()
    _describe_fields(schema, model, _models_by_name([model]))
    source = source_of(detail_type)
    consumers = consumers_of(detail_type)
    heard_by = (
        "Consumed by " + "; ".join(_consumer_text(c) for c in consumers) + "."
        if consumers
        else f"No consumer yet: {OBSERVERS}."
    )
    summary = schema.pop("description", "")
    emitted = (
        f"Emitted by the {events.EMITTERS[detail_type]} service (source `{source}`). {heard_by}"
    )
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "$id": f"urn:canasta:events:{detail_type}",
        **schema,
        "title": f"{source}@{detail_type}",
        "description": f"{summary}\n\n{emitted}" if summary else emitted,
        "x-detail-type": detail_type,
        "x-source": source,
        "x-consumers": [constants.queue_name(c) for c in consumers],
    }


# --- the models' own words ----------------------------------------------------------


def _attribute_docs(model: type[BaseModel]) -> dict[str, str]:
    """Docstrings written under fields (``x: int`` then ``\"\"\"...\"\"\"``), base classes first.

    Read here, when the documents are generated, rather than by pydantic's
    ``use_attribute_docstrings``: pydantic reads them when each class is created,
    so every handler's cold start would read and parse the models' sources
    (measured: 16 ms of importing the protocol and event models on CPython 3.13,
    the runtime's, against about 0.2 s for a whole handler), for descriptions that
    only these documents use.
    """
    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls is BaseModel:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in itertools.pairwise(body):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[node.target.id] = inspect.cleandoc(after.value.value)
    return docs


SCORE_NOTES: Final[dict[str, str]] = {
    "melded": "Points of the tiles melded.",
    "canastas": "Canasta bonuses.",
    "bonus_threes": "Bonus threes: +100 each if the team opened, else -100 (THREE-1).",
    "going_out": "The bonus for going out.",
    "hands": "Tiles left in the team's hands, zero or negative.",
    "total": "The round score: the sum of the parts.",
}
"""A team's round score, in the events (``TeamScore``) as in the messages (``ScoreView``)."""

FIELD_NOTES: Final[dict[str, dict[str, str]]] = {
    "Play": {
        "table_id": "The table the move is for; the player must hold a seat at it.",
        "version": "The `version` of the view the move was chosen on.",
        "move": "The move, in the form the view lists in `legal_actions`.",
    },
    "ViewMessage": {
        "protocol": "The version of the message shapes; it grows only on an incompatible change.",
        "version": "Grows by one with every change of the game; send it back in `play`.",
        "seat": "The receiving player's seat, 1–4. Seats 1 and 3 are team A, 2 and 4 team B.",
        "seats": "Every seat's player and whether a live connection holds the seat.",
        "match": "The match around the round.",
        "view": "The round as this seat may see it: its own tiles, counts of the others.",
    },
    "ErrorMessage": {
        "code": "Why, as a code to translate (`ErrorCode`).",
        "message": "Why, in English, for logs and developers; not for display.",
        "table_id": "The table concerned, when there is one.",
        "view": "With `stale_version` only: the table's current view, to choose again from.",
    },
    "RoundResultMessage": {
        "scores": "Each team's round score and its parts (SCORE-1).",
        "totals": "The match totals after this round.",
        "next": "What follows: another round, a tie-break round, or the end of the match.",
        "commitment": "SHA-256 of the seed and the tile order, fixed before the round began.",
    },
    "MatchResultMessage": {
        "winner": "The winning team.",
        "totals": "The final match totals.",
        "rounds_played": "Rounds played, tie-breaks included.",
    },
    "SeatInfo": {"connected": "Whether a live connection holds the seat (else it is auto-played)."},
    "SeatPlayer": {
        "player_id": "The player's account id.",
        "name": "The name shown at the table.",
        "bot": "Whether a bot fills the seat.",
    },
    "Meld": {
        "rank": "The meld's rank (2 for the meld of twos).",
        "tiles": "Its tiles, naturals first.",
    },
    "MatchInfo": {
        "status": "`playing`, `finished` (after the last round) or `aborted`.",
        "stake": "Account points at stake (arena); 0 otherwise.",
        "round": "The round being played, from 1.",
        "totals": "The match totals before this round's score.",
    },
    "TableView": {
        "seat": "This view's seat.",
        "turn": "The seat to play.",
        "hand": "This seat's tiles. Nobody else's tiles ever appear.",
        "hand_sizes": 'How many tiles each seat holds, by seat (`"1"`–`"4"`).',
        "melds": "Each team's melds.",
        "bonus_threes": "Each team's exposed bonus threes.",
        "opened": "Whether each team has made its opening meld.",
        "thresholds": "Each team's opening threshold (OPEN-2).",
        "match_scores": "The match totals before this round.",
        "discard": "The discard pile, bottom first: the last tile is the top.",
        "stock_size": "Tiles left in the stock (never their order).",
        "account_jokers": "This player's spare account jokers (JOKER-1).",
        "joker_button_used": "Whether this seat used the joker button this round.",
        "went_out": "The seat that went out, once one has.",
        "round_scores": "The round's scores, once the round is over.",
        "team": "This seat's team.",
        "phase": "Where the turn is: `first_discard`, `draw`, `play`, or `round_over`.",
        "legal_actions": (
            "Moves this seat may send now, in `move` form: every draw and discard, and melds "
            "and pickups in one canonical form each. Other combinations may be legal too."
        ),
    },
    "Queue": {
        "mode": "The match length; `arena` for a staked match (MATCH-1, MATCH-4).",
        "variant": "The rules variant.",
        "stake": "Arena only: the stake, one of the configured stakes; ignored otherwise.",
    },
    "CreateTable": {
        "mode": "The match length (no arena between friends).",
        "variant": "The rules variant.",
    },
    "JoinTable": {"code": "The invite code the host shared (case does not matter)."},
    "QueuedMessage": {
        "mode": "The queue's match length.",
        "variant": "The queue's rules variant.",
        "stake": "The arena stake; 0 in the quick-start queues.",
        "expires_at": "Epoch seconds when the ticket expires if no table has formed.",
    },
    "LobbyView": {
        "code": "The invite code to share.",
        "host": "The player id of the host, who may `fill_bots`.",
        "mode": "The match length.",
        "variant": "The rules variant.",
        "seats": "Who sits where; `null` for a free seat.",
        "status": "`forming` while seats are free; `started` once the table is full.",
    },
    "WelcomeMessage": {
        "name": "The player's name, as shown at the table.",
        "protocol": "The version of the message shapes; it grows only on an incompatible change.",
    },
    "BalanceMessage": {
        "points": "The account's points.",
        "jokers": "The account's spare jokers (JOKER-1).",
    },
    "DiscardModel": {"tile": "The tile to discard; discarding the last tile goes out."},
    "TakePileModel": {
        "melds": "The melds taking the pile: one holds the top tile with a pair from the hand.",
    },
    "MeldModel": {"melds": "New melds and extensions of the team's melds, each rank once."},
    "MeldSpecModel": {
        "rank": "The meld's rank, 1–13 (2 for the meld of twos).",
        "tiles": "Tile names: rank then colour letter (`7R`, `13B`), or `JK` for a joker.",
    },
    "TeamScore": SCORE_NOTES,
    "ScoreView": SCORE_NOTES,
}
"""What a field means, where the model says nothing about it."""

SCORE_SUMMARY: Final = "A team's round score and its parts (SCORE-1); `total` is their sum."
SUMMARIES: Final[dict[str, str]] = {
    "RoundEnded": "A round is over: a seat went out or the stock ran out. It is scored next.",
    "TeamScore": SCORE_SUMMARY,
    "ScoreView": SCORE_SUMMARY,
    "PlayerConnected": (
        "A player opened a connection. `table_id` and `seat` are set when the player holds "
        "a seat at a table being played: the seat is connected again."
    ),
    "PlayerDisconnected": (
        "A player's current connection closed. `table_id` and `seat` are set when it held a "
        "seat, which is now absent and auto-played (TABLE-2)."
    ),
    "RoundResultMessage": "A round was scored; sent to every connected seat after its last view.",
    "MatchResultMessage": "The match is over; sent to every connected seat after the round result.",
    "QueueLeftMessage": "The player is out of the queue or the friends table being formed.",
    "SeatInfo": "A seat: its player, and whether a live connection holds it.",
    "MatchInfo": "The match a round belongs to.",
}
"""What a model is, where it has no docstring."""

TYPE_TEXT: Final[dict[tuple[str, str], str]] = {
    ("ErrorMessage", "code"): "string: an [error code](#error-codes)",
}
"""How a field's type reads in docs/protocol.md, where the schema would be too long."""


def _model_notes(model: type[BaseModel]) -> dict[str, str]:
    notes = dict(FIELD_NOTES.get(model.__name__, {}))
    unknown = set(notes) - set(model.model_fields)
    if unknown:
        raise ValueError(f"FIELD_NOTES names fields {model.__name__} lacks: {sorted(unknown)}")
    if model in CLIENT_MESSAGES:
        notes["action"] = f"The route: `{tag_of(model)}`."
    elif model in SERVER_MESSAGES:
        notes["type"] = f"The message type: `{tag_of(model)}`."
    elif "type" in model.model_fields and model.__name__.endswith("Model"):
        notes["type"] = f"The move: `{tag_of(model)}`."
    notes.update(_attribute_docs(model))
    for name, field in model.model_fields.items():
        if field.description:
            notes[name] = field.description
    return notes


def _walk_types(annotation: Any) -> Iterator[type[Any]]:
    """Every class inside an annotation (``dict[str, list[X]] | None`` gives X)."""
    if isinstance(annotation, type) and get_origin(annotation) is None:
        yield annotation
        return
    for arg in get_args(annotation):
        yield from _walk_types(arg)


def _models_by_name(roots: Sequence[type[BaseModel]]) -> dict[str, type[BaseModel]]:
    """The roots and every model their fields reach, by JSON Schema title (the class name)."""
    found: dict[str, type[BaseModel]] = {}
    todo = list(roots)
    while todo:
        model = todo.pop()
        if model.__name__ in found:
            continue
        found[model.__name__] = model
        for field in model.model_fields.values():
            todo.extend(t for t in _walk_types(field.annotation) if issubclass(t, BaseModel))
    return found


def _describe_properties(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """Give ``schema`` and each of its properties without a description the model's words."""
    summary = _summary(model)
    if summary and "description" not in schema:
        schema["description"] = summary
    notes = _model_notes(model)
    for name, prop in schema.get("properties", {}).items():
        if name in notes and "description" not in prop:
            prop["description"] = notes[name]


def _describe_fields(
    schema: dict[str, Any], model: type[BaseModel], models: dict[str, type[BaseModel]]
) -> None:
    """``_describe_properties`` on a schema and on each of its ``$defs``, in place."""
    _describe_properties(schema, model)
    for name, definition in schema.get("$defs", {}).items():
        if name in models:
            _describe_properties(definition, models[name])


# --- the WebSocket protocol ------------------------------------------------------------


def _members(union: Any) -> list[type[BaseModel]]:
    """The models of an ``Annotated[A | B, Field(discriminator=...)]`` union, in order."""
    return [t for t in get_args(get_args(union)[0]) if issubclass(t, BaseModel)]


def _derived(models: list[type[BaseModel]], base: type[BaseModel]) -> list[type[BaseModel]]:
    """``models``, each checked to carry what its base gives every message (``cid``, tag)."""
    for model in models:
        if not issubclass(model, base):
            raise TypeError(f"{model.__name__} must derive from {base.__name__}")
    return models


CLIENT_MESSAGES: Final = _derived(_members(ClientMessage), protocol.ClientMessageBase)
SERVER_MESSAGES: Final = _derived(_members(ServerMessage), protocol.ServerMessageBase)


def route_of(model: type[BaseModel]) -> str:
    """The API Gateway route key a client message arrives on: its ``action``'s route, or
    ``$default`` for a message without a route of its own (``hello``, ``ping``)."""
    tag = tag_of(model)
    return tag if tag in manifest.websocket_routes() else "$default"


def routed_to(name: str) -> str:
    """The service whose function the manifest integrates with the message's route."""
    (model,) = [m for m in CLIENT_MESSAGES if m.__name__ == name]
    return manifest.service_of_route(route_of(model))


def tag_of(model: type[BaseModel]) -> str:
    """The wire name of a message: its ``action`` (client) or ``type`` (server)."""
    field = model.model_fields.get("action") or model.model_fields["type"]
    (value,) = get_args(field.annotation)
    return str(value)


def _summary(model: type[BaseModel]) -> str:
    """What a model is: its docstring, else ``SUMMARIES``, else its engine action's docstring."""
    own = model.__dict__.get("__doc__")
    if isinstance(own, str) and own:
        return _md(inspect.cleandoc(own))
    if model.__name__ in SUMMARIES:
        return SUMMARIES[model.__name__]
    engine = getattr(actions, model.__name__.removesuffix("Model"), None)
    if model.__name__.endswith("Model") and engine is not None and engine.__doc__:
        return _md(inspect.cleandoc(engine.__doc__))
    return ""


ENGINE_ERRORS: Final[dict[str, str]] = {
    "not_your_turn": "The seat is not the one to play.",
    "wrong_phase": (
        "Not allowed now: melding before drawing, drawing twice, anything but a discard as "
        "the first move, anything after the round is over, or no round being played."
    ),
    "tile_not_in_hand": "A named tile is not in the hand (or not often enough).",
    "meld_too_small": "A new meld has fewer than 3 tiles.",
    "mixed_ranks": "A meld names a natural of another rank.",
    "too_many_wilds": (
        "Wilds not outnumbered by naturals, more than 3 wilds, or in the meld of twos more "
        "than 2 jokers or not fewer jokers than twos."
    ),
    "threes_not_meldable": "A three in a meld.",
    "no_twos_meld": "A meld of twos in the `classic` variant.",
    "below_threshold": "An opening worth less than the team's threshold.",
    "pile_empty": "The discard pile is empty.",
    "pile_blocked": "A 2, a 3 or a joker is on top of the pile.",
    "pile_needs_pair": "The hand has no two matching naturals for the pile's top tile.",
    "must_keep_discard": "The melds would leave no tile to discard.",
    "cannot_go_out": "Going out (or melding down to one tile) without a team canasta.",
    "joker_button_unavailable": (
        "Already used this round, no spare account joker, or no joker left in the stock."
    ),
    "malformed": "The message or the move is not well formed (a field, a type, a tile name).",
}
"""The engine's refusal codes (``shared_engine.errors``), as SCENARIOS.md defines them."""

SERVICE_ERRORS: Final[dict[str, str]] = {
    "stale_version": (
        "The table moved on since the view the move was chosen on; `view` holds the "
        "current one. Choose again from it."
    ),
    "not_seated": "The player holds no seat at this table (or the connection has no player).",
    "opened_elsewhere": (
        "A `play`, `sync` or lobby message (all but `balance`) from a connection the player "
        "has since replaced by another "
        "(a second tab or device, told `opened_elsewhere`)."
    ),
    "no_table": (
        "`sync` from a player who is not seated at a table with a round; `rematch` of a "
        "table that is not a friends table."
    ),
    "message_too_large": f"The message is larger than {MAX_MESSAGE_BYTES} bytes.",
    "unknown_action": "`action` names no route.",
    "already_playing": "The player is already queued, in a friends lobby or at a table.",
    "not_queued": "`leave` from a player who is neither queued nor in a friends lobby.",
    "unknown_code": (
        "No friends table is waiting with this invite code (for `fill_bots`: the player has "
        "no friends table waiting)."
    ),
    "table_full": (
        "The friends table already has four players (a `rematch`: the others started it "
        "with a bot in the seat)."
    ),
    "not_host": "Only the host of the friends table may fill its seats with bots.",
    "not_over": "`rematch` names a table whose match is still being played.",
    "invalid_stake": f"The arena stake is not one of {list(ARENA_STAKES)}.",
    "insufficient_balance": (
        "The account's points do not cover the arena stake (on `queue`, or when the table "
        "forms: the player then leaves the queue)."
    ),
    "rate_limited": (
        "The connection sent messages faster than the server accepts (a burst, then a "
        "steady rate per connection), or the player tried too many invite codes "
        "(`join_table`); nothing was read or changed. Wait a moment and send it again."
    ),
    "internal": "The server failed unexpectedly; send `sync` to learn the current state.",
}
"""The services' refusal codes (``ServiceErrorCode``)."""


def _check_codes(meanings: dict[str, str], codes: Sequence[str], what: str) -> None:
    missing = [c for c in codes if c not in meanings]
    extra = sorted(set(meanings) - set(codes))
    if missing or extra:
        raise ValueError(f"{what} meanings: missing {missing}, unknown {extra}")


# --- examples, built from the engine with a fixed seed -----------------------------------

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
                "seat 4 lays the meld of twos",
                {"action": "play", "table_id": EXAMPLE_TABLE, "version": 7, "move": meld},
            ),
        ],
        "Sync": [("after every open", {"action": "sync"})],
        "Say": [
            (
                "a quick message to the table",
                {"action": "say", "table_id": EXAMPLE_TABLE, "phrase": "well_played", "cid": "s-1"},
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
                        "2": {"player_id": "bot-KQ7M2X-2", "name": "Bot 2", "bot": True},
                        "4": {"player_id": "bot-KQ7M2X-4", "name": "Bot 4", "bot": True},
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
                        "2": {"player_id": "bot-KQ7M2X-2", "name": "Bot 2", "bot": True},
                        "3": None,
                        "4": {"player_id": "bot-KQ7M2X-4", "name": "Bot 4", "bot": True},
                    },
                    "rematch_of": "f-KQ7M2X-3b9e0c1d",
                    "awaiting": {"3": EXAMPLE_PLAYERS[3].model_dump(mode="json")},
                },
            ),
        ],
        "BalanceMessage": [("the account", {"type": "balance", "points": 12000, "jokers": 2})],
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


# --- AsyncAPI -----------------------------------------------------------------------------


def _asyncapi_schema(node: Any) -> Any:
    """AsyncAPI's schema format spells ``discriminator`` as the property name alone."""
    if isinstance(node, dict):
        out = {key: _asyncapi_schema(value) for key, value in node.items()}
        if isinstance(out.get("discriminator"), dict):
            out["discriminator"] = out["discriminator"]["propertyName"]
        return out
    if isinstance(node, list):
        return [_asyncapi_schema(item) for item in node]
    return node


UNIONS: Final[dict[str, tuple[Any, str]]] = {
    "ClientMessage": (
        ClientMessage,
        "Any message a client sends, told apart by `action` (the route).",
    ),
    "ServerMessage": (
        ServerMessage,
        "Any message the server sends, told apart by `type`. A client ignores a message "
        "whose `type` it does not know: new types may be added.",
    ),
    "Move": (
        ActionModel,
        "A move, told apart by `type`: what `play` sends and what `legal_actions` lists.",
    ),
}
"""The two directions and the moves as named unions, so that a client decodes every frame
with one type and generators give the move union one name wherever it appears."""
TAGS: Final = ("type", "action")


def _reaches(defs: dict[str, Any], roots: Sequence[str]) -> set[str]:
    """The names of the schemas ``roots`` refer to, directly or not (roots included)."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(ref.rsplit("/", 1)[-1] for ref in _refs_in(defs[name]))
    return seen


def _refs_in(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs_in(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs_in(item)


def _as_contract(name: str, schema: dict[str, Any], open_: bool) -> None:
    """The contract's rules on one schema: tag first and titled, ``cid`` last, open if
    only the server sends it."""
    properties: dict[str, Any] = schema.get("properties", {})
    for tag in TAGS:
        if "const" in properties.get(tag, {}):
            properties[tag]["title"] = f"{name}{tag.title()}"
    if properties:
        order = sorted(properties, key=lambda p: (p not in TAGS, p == "cid"))
        schema["properties"] = {p: properties[p] for p in order}
    if open_:
        schema.pop("additionalProperties", None)


def _named_unions(node: Any, unions: dict[str, Any]) -> Any:
    """``node`` with every inline copy of a named union replaced by a reference to it."""
    if isinstance(node, list):
        return [_named_unions(item, unions) for item in node]
    if not isinstance(node, dict):
        return node
    for name, union in unions.items():
        if "oneOf" in node and node["oneOf"] == union["oneOf"]:
            kept = {k: v for k, v in node.items() if k == "description"}
            return {"$ref": REF_TEMPLATE.format(model=name), **kept}
    return {key: _named_unions(value, unions) for key, value in node.items()}


def message_schemas() -> dict[str, Any]:
    """Every schema the messages use, by name, with ``$ref`` into ``components.schemas``."""
    defs: dict[str, Any] = {}
    for name, (union, summary) in UNIONS.items():
        schema = TypeAdapter(union).json_schema(ref_template=REF_TEMPLATE)
        for key, definition in schema.pop("$defs", {}).items():
            if defs.get(key, definition) != definition:
                raise ValueError(f"two different schemas are named {key}")
            defs[key] = definition
        defs[name] = {"title": name, "description": summary, **schema}
    models = _models_by_name([*CLIENT_MESSAGES, *SERVER_MESSAGES])
    for name, definition in defs.items():
        if name in models:
            _describe_properties(definition, models[name])
    for name, definition in defs.items():
        defs[name] = _named_unions(definition, {n: defs[n] for n in UNIONS if n != name})
    from_client = _reaches(defs, ["ClientMessage"])
    for name, definition in defs.items():
        _as_contract(name, definition, open_=name not in from_client)
    return {name: _asyncapi_schema(defs[name]) for name in sorted(defs)}


VERSION_RULE: Final = (
    "Compatible changes come without notice: a new field in a server message (their "
    "schemas are open: ignore fields you do not know), a new server message `type` (ignore "
    "it), a new client `action`, a new optional field in a client message. Incompatible, "
    "so announced by a new `protocol`: a field removed, renamed, retyped or given another "
    "meaning, a client field made required, a new value in any enum (error codes, moves, "
    "phases, modes, reasons, statuses), a new field in a move (client messages, moves "
    "included, are strict: the server refuses unknown fields with `malformed`)."
)
"""Which changes of the protocol are compatible: what the schemas' openness encodes."""
VERSIONING: Final = (
    "Versioning: `protocol` (in `view` and `welcome`) grows only with an incompatible "
    f"change. {VERSION_RULE}"
)
TOKEN_TEXT: Final = (
    "The player token, in the `token` query parameter of the connect request (browsers "
    "cannot set headers on a WebSocket): a JWT signed with RS256 by the stage's identity "
    "provider, whose keys (JWKS) the `$connect` authorizer fetches. On AWS that is the "
    "stack's Amazon Cognito user pool (send the ID token; an access token of the same app "
    "client is accepted too) or the platform's OpenID Connect issuer; locally the local "
    "stack's own issuer. Its claims (`TokenClaims`) are readable by the client: `sub` is "
    "the player id, the name shown is `preferred_username`, else `name`, else "
    "`cognito:username`, and `exp` ends it (Cognito's tokens last an hour, the local "
    f"issuer's {TOKEN_LIFETIME}). Before `exp`, get a fresh token (Cognito: the refresh "
    "token; locally: sign in again) and use it for the next connection (the token is "
    "checked only on `$connect`; an open connection outlives it). Locally, "
    '`POST /api/signin` with `SignInRequest` (`{"name": "Ann"}`) answers '
    "`SignInResponse` (`token`, `player_id`, `name`); the same name is the same account. "
    "docs/sign-in.md has every rule a token must pass. A refused token fails the handshake "
    "with an HTTP status and no WebSocket: 401 when it is genuine but expired (get a new "
    "one), 403 when it is missing, malformed, forged, for another audience or issuer (do "
    "not retry with it)."
)


def identity_schemas() -> dict[str, Any]:
    """The token's claims and the local sign-in, beside the messages."""
    out: dict[str, Any] = {}
    for model in (TokenClaims, SignInRequest, SignInResponse):
        schema = model.model_json_schema(ref_template=REF_TEMPLATE)
        _describe_properties(schema, model)
        out[model.__name__] = schema
    return out


CHANNEL: Final = "table"
SERVER: Final = "aws"


def asyncapi() -> dict[str, Any]:
    """The AsyncAPI 3.1 document of the WebSocket API, from the client's point of view."""
    cases = examples()
    channel_ref = {"$ref": f"#/channels/{CHANNEL}"}

    def message_ref(name: str) -> dict[str, str]:
        return {"$ref": f"#/channels/{CHANNEL}/messages/{name}"}

    messages: dict[str, Any] = {}
    for model in (*CLIENT_MESSAGES, *SERVER_MESSAGES):
        name = model.__name__
        message: dict[str, Any] = {
            "name": name,
            "title": tag_of(model),
            "contentType": "application/json",
            "payload": {"$ref": REF_TEMPLATE.format(model=name)},
            "examples": [{"name": title, "payload": body} for title, body in cases[name]],
        }
        summary = _summary(model)
        if summary:
            message["summary"] = summary.split("\n\n")[0]
        if model in CLIENT_MESSAGES:
            message["x-route"] = route_of(model)
            message["x-service"] = routed_to(name)
        messages[name] = message

    operations: dict[str, Any] = {}
    for model in CLIENT_MESSAGES:
        name = model.__name__
        operation: dict[str, Any] = {
            "action": "send",
            "channel": channel_ref,
            "title": f"Send {tag_of(model)}",
            "messages": [message_ref(name)],
        }
        replies = _replies(name)
        if replies:
            operation["reply"] = {
                "channel": channel_ref,
                "messages": [message_ref(r) for r in replies],
            }
        operations[f"send{name}"] = operation
    for model in SERVER_MESSAGES:
        name = model.__name__
        operations[f"receive{name}"] = {
            "action": "receive",
            "channel": channel_ref,
            "title": f"Receive {tag_of(model)}",
            "messages": [message_ref(name)],
        }

    return {
        "asyncapi": "3.1.0",
        "info": {
            "title": "Tile Canasta WebSocket API",
            "version": str(PROTOCOL_VERSION),
            "description": (
                "The messages a game client exchanges with the server over one WebSocket "
                "connection, described from the client's side: the client sends the "
                "`send` operations and receives the `receive` ones.\n\n"
                "Connect to the stage URL with the player's token in the `token` query "
                "parameter (see the `token` security scheme: how to get one, its claims, its "
                "lifetime); a REQUEST authorizer checks it on `$connect` and the identity "
                "it returns applies to every later message of the connection. Send `hello` "
                "to learn the player id it names.\n\n"
                "API Gateway selects the route of each client message from its `action` "
                "field (route selection expression `$request.body.action`); a message "
                "whose `action` matches no route reaches `$default` and is refused with "
                f"`unknown_action`. Client messages are limited to {MAX_MESSAGE_BYTES} "
                "bytes.\n\n"
                "Any client message may carry a `cid` (correlation id): every reply and "
                "error it causes carries the same `cid`; pushes (views caused by other "
                "seats, results, timeouts) carry none.\n\n"
                f"API Gateway closes a connection idle for {IDLE_SECONDS // 60} minutes: send "
                "`ping` (answered by `pong`) when nothing else was sent for a while.\n\n"
                f"{VERSIONING}\n\n"
                f"Generated by `{COMMAND}` from `services/common/protocol.py`; "
                "the same protocol for people is docs/protocol.md."
            ),
        },
        "defaultContentType": "application/json",
        "servers": {
            SERVER: {
                "host": "{apiId}.execute-api.{region}.amazonaws.com",
                "protocol": "wss",
                "title": "API Gateway WebSocket API",
                "description": (
                    "The deployed API. Locally, `python -m local` serves the same protocol "
                    "at ws://127.0.0.1:8080/ws."
                ),
                "variables": {
                    "apiId": {
                        "description": "The WebSocket API's id (an output of the CDK stack).",
                        "examples": ["a1b2c3d4e5"],
                    },
                    "region": {"default": DEFAULT_REGION, "description": "The AWS region."},
                },
                "security": [{"$ref": "#/components/securitySchemes/token"}],
            }
        },
        "channels": {
            CHANNEL: {
                "address": "/{stage}",
                "parameters": {
                    "stage": {
                        "default": "prod",
                        "examples": ["prod", "dev", "ws"],
                        "description": "The API stage (`ws` on the local stack).",
                    }
                },
                "title": "The player's connection",
                "description": (
                    "One connection per client, opened on the stage URL itself. Client "
                    "messages are routed on `action`; the server pushes its messages to "
                    "the connection through the `@connections` management API."
                ),
                "servers": [{"$ref": f"#/servers/{SERVER}"}],
                "messages": {name: {"$ref": f"#/components/messages/{name}"} for name in messages},
                "bindings": {
                    "ws": {
                        "method": "GET",
                        "query": {
                            "type": "object",
                            "properties": {
                                "token": {
                                    "type": "string",
                                    "maxLength": MAX_TOKEN_CHARS,
                                    "description": (
                                        "The player's token: a JWT of the stage's identity "
                                        "provider (`eyJ…`)."
                                    ),
                                }
                            },
                            "required": ["token"],
                        },
                        "bindingVersion": "0.1.0",
                    }
                },
                "x-route-selection-expression": "$request.body.action",
            }
        },
        "operations": operations,
        "components": {
            "schemas": {**message_schemas(), **identity_schemas()},
            "messages": messages,
            "securitySchemes": {
                "token": {
                    "type": "httpApiKey",
                    "in": "query",
                    "name": "token",
                    "description": TOKEN_TEXT,
                }
            },
        },
    }


REPLIES: Final[dict[str, tuple[str, ...]]] = {
    "Play": ("ViewMessage", "ErrorMessage"),
    "Sync": ("ViewMessage", "ErrorMessage"),
    "Say": ("SaidMessage", "ErrorMessage"),
    "Hello": ("WelcomeMessage", "ErrorMessage"),
    "Ping": ("PongMessage", "ErrorMessage"),
    "Queue": ("QueuedMessage", "ErrorMessage"),
    "Leave": ("QueueLeftMessage", "ErrorMessage"),
    "CreateTable": ("LobbyView", "ErrorMessage"),
    "JoinTable": ("LobbyView", "ErrorMessage"),
    "FillBots": ("LobbyView", "ErrorMessage"),
    "Rematch": ("LobbyView", "ErrorMessage"),
    "Balance": ("BalanceMessage", "ErrorMessage"),
}
"""What answers each client message, carrying its ``cid``: exactly one of these.

``play``: the sender's view of the version its move made (the other seats get the
same version as pushes, without ``cid``). ``join_table`` and ``fill_bots``: the
sender's ``lobby``, ``started`` if the table is now full (its views follow as
pushes, once the round is dealt)."""


def _server(name: str) -> type[BaseModel]:
    return next(m for m in SERVER_MESSAGES if m.__name__ == name)


def _fields_of(model: type[BaseModel]) -> list[str]:
    """The field table of a model outside the messages (the token's claims)."""
    schema = model.model_json_schema()
    _describe_properties(schema, model)
    return _field_table(model.__name__, schema)


def _replies(name: str) -> tuple[str, ...]:
    server = {m.__name__ for m in SERVER_MESSAGES}
    return tuple(r for r in REPLIES.get(name, ()) if r in server)


# --- docs/protocol.md ---------------------------------------------------------------------


def _md(text: str) -> str:
    """Docstring text as Markdown: ````x```` as ```x```, wrapped lines joined."""
    paragraphs = [" ".join(p.split("\n")) for p in text.strip().split("\n\n")]
    return re.sub(r"``([^`]+)``", r"`\1`", "\n\n".join(paragraphs))


def _heading(name: str) -> str:
    """The heading of a model's section: the wire name beside a message's model name."""
    message = next((m for m in (*CLIENT_MESSAGES, *SERVER_MESSAGES) if m.__name__ == name), None)
    return f"{name} (`{tag_of(message)}`)" if message else name


def _anchor(name: str) -> str:
    """The link target GitHub gives ``_heading(name)``."""
    return re.sub(r"[^a-z0-9_ -]", "", _heading(name).lower()).replace(" ", "-")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _type_of(prop: dict[str, Any]) -> str:
    """A short reading of a JSON Schema property: ``list of string``, ``map "A", "B" → int``."""
    if "$ref" in prop:
        name = str(prop["$ref"]).rsplit("/", 1)[-1]
        return f"[{name}](#{_anchor(name)})"
    if "const" in prop:
        return f"`{json.dumps(prop['const'])}`"
    if "enum" in prop:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in prop["enum"])
    for key in ("anyOf", "oneOf"):
        if key in prop:
            return " or ".join(_type_of(p) for p in prop[key])
    kind = prop.get("type")
    if kind == "array":
        text = f"list of {_type_of(prop.get('items', {}))}"
    elif kind == "object" and isinstance(prop.get("additionalProperties"), dict):
        names = prop.get("propertyNames", {}).get("enum")
        keys = ", ".join(f"`{json.dumps(k)}`" for k in names) if names else "string"
        text = f"map {keys} → {_type_of(prop['additionalProperties'])}"
    elif kind is None:
        text = "any"
    else:
        text = str(kind)
    limits = []
    if "minimum" in prop:
        limits.append(f"≥ {prop['minimum']}")
    if "maximum" in prop:
        limits.append(f"≤ {prop['maximum']}")
    if "minLength" in prop:
        limits.append(f"{prop['minLength']}–{prop.get('maxLength', '…')} chars")
    elif "maxLength" in prop:
        limits.append(f"≤ {prop['maxLength']} chars")
    if "minItems" in prop or "maxItems" in prop:
        limits.append(f"{prop.get('minItems', 0)}–{prop.get('maxItems', '…')} items")
    if "pattern" in prop:
        limits.append(f"`{prop['pattern']}`")
    return f"{text} ({', '.join(limits)})" if limits else text


def _field_table(model_name: str, schema: dict[str, Any]) -> list[str]:
    required = set(schema.get("required", []))
    rows = ["| field | type | required | meaning |", "|---|---|---|---|"]
    for name, prop in schema.get("properties", {}).items():
        need = "yes" if name in required else f"no (default `{json.dumps(prop.get('default'))}`)"
        if name not in required and "default" not in prop:
            need = "no"
        kind = TYPE_TEXT.get((model_name, name)) or _cell(_type_of(prop))
        meaning = _md(str(prop.get("description", "")))
        rows.append(f"| `{name}` | {kind} | {need} | {_cell(meaning)} |")
    return rows


def _pretty(value: Any, indent: int = 0) -> str:
    """JSON for reading: the message opened up, whatever fits on a line kept on one."""
    pad = "  " * indent
    flat = json.dumps(value, ensure_ascii=False)
    if indent and len(flat) <= 92 - len(pad):
        return flat
    if isinstance(value, dict) and value:
        items = [f"{pad}  {json.dumps(k)}: {_pretty(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and value:
        items = [f"{pad}  {_pretty(v, indent + 1)}" for v in value]
        return "[\n" + ",\n".join(items) + f"\n{pad}]"
    return flat


def _message_section(
    model: type[BaseModel],
    schemas: dict[str, Any],
    cases: list[tuple[str, dict[str, Any]]],
    service: str | None,
) -> list[str]:
    name = model.__name__
    lines = [f"### {_heading(name)}", ""]
    route = f" Handled by the {service} service." if service else ""
    lines += [f"{_summary(model)}{route}".strip(), ""]
    lines += _field_table(name, schemas[name])
    for title, payload in cases:
        lines += ["", f"Example, {title}:", "", "```json", _pretty(payload), "```"]
    return [*lines, ""]


def protocol_md() -> str:
    """docs/protocol.md: the WebSocket protocol for people, from the same models."""
    _check_codes(ENGINE_ERRORS, ERROR_CODES, "engine error")
    service_codes: tuple[str, ...] = get_args(ServiceErrorCode)
    _check_codes(SERVICE_ERRORS, service_codes, "service error")
    schemas = message_schemas()
    cases = examples()
    message_names = {m.__name__ for m in (*CLIENT_MESSAGES, *SERVER_MESSAGES)}
    out = [
        "# The WebSocket protocol",
        "",
        f"<!-- Generated by `{COMMAND}` from services/common/protocol.py. Do not edit. -->",
        "",
        "Everything a game client sends and receives. The machine-readable form of the "
        "same contract is [asyncapi.json](asyncapi.json) (AsyncAPI 3.1); both are generated "
        "from the pydantic models the services parse with, so they cannot drift from the code.",
        "",
        "## Connecting",
        "",
        "Open one WebSocket to the API's stage URL with the player's token in the query string:",
        "",
        "```",
        "wss://{apiId}.execute-api.{region}.amazonaws.com/{stage}?token=eyJraWQiOi….eyJzdWIiOi….kQ3…",
        "```",
        "",
        "A REQUEST authorizer checks the token on `$connect`. The identity it returns is "
        "attached by API Gateway to every later message of the connection: no message carries "
        "a player id, and none is trusted to. If the player holds a seat at a table being "
        "played, the seat now points to this connection.",
        "",
        "Locally, `python -m local` serves the same protocol at `ws://127.0.0.1:8080/ws?token=…` "
        "(the stage is `ws`).",
        "",
        "### The token",
        "",
        _md(TOKEN_TEXT),
        "",
        *_fields_of(TokenClaims),
        "",
        "### Who you are",
        "",
        "Send `hello` after opening: `welcome` names the player the token identified "
        "(`player_id`, `name`) and the protocol version. The same id is `you` in every "
        "`lobby` (the host is the player whose id is `host`), and in a `view` it is "
        "`seats[seat].player.player_id`.",
        "",
        "### A match, from the first frame",
        "",
        '1. Get a token (locally `POST /api/signin` with `{"name": "Ann"}`).',
        "2. Open the WebSocket with `?token=`; a 401 asks for a new token, a 403 refuses this one.",
        "3. Send `sync` (answered by a `view` if the player is seated, else by an `error` "
        "`no_table`), and `hello` if the client does not know its player id.",
        "4. Send `queue` (answered by `queued`), or `create_table` / `join_table` (answered by "
        "`lobby`). When four are seated, the table forms: a `lobby` with `status` `started` "
        "for a friends table, nothing for a queue; then every seat receives `view`s.",
        "5. On your turn (`view.turn == view.seat`), send `play` with a move from "
        "`legal_actions` and the view's `version`; the answer is your next `view` (or an "
        "`error`). Other seats' moves arrive as `view`s too.",
        "6. After the round's last `view`, `round_result`; after the last round, "
        "`match_result`. The player may queue again.",
        "",
        "## Sending: routes",
        "",
        "Every client message is a JSON object whose `action` field selects its route "
        "(API Gateway route selection expression `$request.body.action`). A message whose "
        "`action` matches no route goes to `$default` and is refused with `unknown_action`; "
        "a message that is not valid for its route is refused with `malformed`. Unknown "
        "fields are refused too: client messages are strict, and so are their types "
        '(`"version": "5"`, `true` for 1 or `"500"` as a stake are `malformed`). A '
        "connection that sends faster than the server accepts is refused with "
        "`rate_limited` (see docs/reliability.md).",
        "",
        "| `action` | message | handled by | answered by |",
        "|---|---|---|---|",
    ]
    for model in CLIENT_MESSAGES:
        service = routed_to(model.__name__)
        route = route_of(model)
        if route != tag_of(model):
            service += f" (route `{route}`)"
        answers = ", ".join(f"`{tag_of(_server(r))}`" for r in _replies(model.__name__))
        out.append(
            f"| `{tag_of(model)}` | [{model.__name__}](#{_anchor(model.__name__)}) | {service} "
            f"| {answers} |"
        )
    out += [
        "",
        "Every client message is answered by exactly one message of the kinds listed, "
        "sent to the connection that sent it. For `play` the answer is the sender's `view` "
        "of the version its move made; the other seats receive the same version as pushes. "
        "For `join_table` and `fill_bots` it is the sender's `lobby`, with `status` "
        "`started` when the table is full; the table's `view`s follow once the round is "
        "dealt.",
        "",
        "Server messages are JSON objects with a `type` field, always present. Clients must "
        "ignore fields they do not know and messages whose `type` they do not know.",
        "",
        "## Correlation ids",
        "",
        "Any client message may carry `cid`, a string of 1–64 letters, digits or `._:-` "
        "chosen by the client. The answer to that message (and any `error` it causes, even "
        "`malformed` when the `cid` itself is valid) carries the same `cid`. Pushes — other "
        "seats' moves, auto-play, round and match results, a lobby changed by someone else, "
        "a queue timeout — carry none. Messages without `cid` are answered without one.",
        "",
        "## Building a client from the contract",
        "",
        "[asyncapi.json](asyncapi.json) is all a client needs. `components.schemas` has "
        "`ClientMessage` and `ServerMessage`, the unions of each direction (tagged by "
        "`action` and `type`), and every type they use; the moves a view lists in "
        "`legal_actions` are the union `play` takes as `move`. The repository's contract "
        "tests generate models from it with `@asyncapi/modelina` (TypeScript interfaces with "
        '`rawPropertyNames` and `mapType: "record"`, TypeScript classes, Java classes: '
        "`tests/contract/models.mjs`), compile them with `tsc --strict` and `javac -Werror`, "
        "and play whole matches with a client that validates every frame against the "
        "schemas. Decode a frame by its `type`, ignore types and fields you do not know.",
        "",
        "## Keeping the connection open",
        "",
        f"API Gateway closes a connection that stays idle for {IDLE_SECONDS // 60} "
        "minutes (and any connection after two hours). A client with nothing to send sends `ping` "
        "every few minutes; the server answers `pong`. `welcome.idle_seconds` states the "
        "limit.",
        "",
        "## Client messages",
        "",
    ]
    for model in CLIENT_MESSAGES:
        out += _message_section(model, schemas, cases[model.__name__], routed_to(model.__name__))
    out += ["## Server messages", ""]
    for model in SERVER_MESSAGES:
        out += _message_section(model, schemas, cases[model.__name__], None)
    out += ["## Types", "", "The objects the messages above are made of.", ""]
    for name, schema in schemas.items():
        if name in message_names:
            continue
        out += [f"### {_heading(name)}", ""]
        if schema.get("description"):
            out += [_md(str(schema["description"])), ""]
        if "enum" in schema:
            out += ["One of " + ", ".join(f"`{json.dumps(v)}`" for v in schema["enum"]) + ".", ""]
        elif "properties" in schema:
            out += [*_field_table(name, schema), ""]
        elif "oneOf" in schema:
            out += [f"{_type_of(schema)}.", ""]
    out += [
        "## Error codes",
        "",
        "An `error` message refuses a request, and the request changed nothing. `code` is one of:",
        "",
        "| code | from | meaning |",
        "|---|---|---|",
    ]
    out += [f"| `{c}` | engine | {_cell(ENGINE_ERRORS[c])} |" for c in ERROR_CODES]
    out += [f"| `{c}` | service | {_cell(SERVICE_ERRORS[c])} |" for c in service_codes]
    out += [
        "",
        "## Versions",
        "",
        f"- `protocol` (in every `view` and in `welcome`) is the version of these message "
        f"shapes, now {PROTOCOL_VERSION}. It grows only with an incompatible change. "
        f"{VERSION_RULE}",
        "- `version` (in every `view`) is the table's version for optimistic concurrency. It "
        "grows by one with every write that changes the game (a move, an auto-played turn, a "
        "deal, a score); a seat's connection coming or going does not change it. Send in "
        "`play` the `version` of the view the move was chosen on. If the table moved on in "
        "between, nothing is applied and the answer is `stale_version` with the current view "
        "in `view`: choose again from it.",
        "- Views may arrive out of order (they are pushed by different invocations): keep the "
        "one with the highest `version` and ignore older ones.",
        "",
        "## Reconnecting",
        "",
        "Connections drop (mobile networks, API Gateway's idle timeout of 10 minutes and "
        "its two-hour limit per connection). A seat is kept while its player is away; when "
        "its turn comes it is auto-played (TABLE-2), as it is when a connected player's "
        f"turn timer ({TURN_SECONDS} s by default, `turn_deadline`) runs out. To come back, "
        "open a new connection with a valid token and send `sync` after **every** open: it "
        "answers with the current `view` (or `no_table` if the player is not seated), and "
        "the seat's later views go to the new connection. Messages pushed while no "
        "connection was open are not replayed; the view from `sync` replaces them.",
        "",
        "## Limits",
        "",
        f"- A client message may be at most {MAX_MESSAGE_BYTES} bytes ({MAX_MESSAGE_BYTES // 1024} "
        "KB) of UTF-8; a larger one is refused with `message_too_large`. (API Gateway itself "
        "accepts up to 128 KB per message, in frames of up to 32 KB.)",
        "- `legal_actions` lists moves the engine accepts now: every draw and discard, and "
        "melds and pickups in one canonical form each. Other combinations may be legal too; "
        "an illegal move is refused with an engine code.",
        "",
    ]
    return "\n".join(out)


# --- files ----------------------------------------------------------------------------------


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render() -> dict[Path, str]:
    """Every generated file: path relative to the repository → its text."""
    files = {
        SCHEMA_DIR / f"{detail_type}.json": _json(event_schema(detail_type))
        for detail_type in sorted(EVENT_TYPES)
    }
    files[ASYNCAPI] = _json(asyncapi())
    files[PROTOCOL_MD] = protocol_md()
    return files


def _orphans(root: Path, files: dict[Path, str]) -> list[Path]:
    """Schema files of events that no longer exist."""
    folder = root / SCHEMA_DIR
    present = sorted(folder.glob("*.json")) if folder.is_dir() else []
    return [p.relative_to(root) for p in present if p.relative_to(root) not in files]


def stale(root: Path = ROOT) -> list[Path]:
    """The generated files that are missing, differ, or should no longer exist."""
    files = render()
    wrong = [
        path
        for path, text in files.items()
        if not (root / path).is_file() or (root / path).read_text(encoding="utf-8") != text
    ]
    return sorted(wrong + _orphans(root, files))


def write(root: Path = ROOT) -> list[Path]:
    """Write every generated file that changed, remove orphaned schemas; returns the paths."""
    files = render()
    changed = []
    for path, text in files.items():
        target = root / path
        if target.is_file() and target.read_text(encoding="utf-8") == text:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        changed.append(path)
    for path in _orphans(root, files):
        (root / path).unlink()
        changed.append(path)
    return sorted(changed)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 listing stale files"
    )
    args = parser.parse_args(argv)
    if args.check:
        paths = stale()
        for path in paths:
            print(f"stale: {path}")
        if paths:
            print(f"run `{COMMAND}` to regenerate", file=sys.stderr)
        return 1 if paths else 0
    for path in write():
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
