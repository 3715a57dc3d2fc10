"""What the three documents share: which messages there are, and what the models say.

The models' own words (docstrings, field docstrings, ``Field(description=...)``)
come first; ``notes.toml`` fills in what they leave unsaid. The prose files beside
this module are read from the checkout (``tools`` is not an installed package).
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import re
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, get_args, get_origin

from pydantic import BaseModel

from infra import manifest
from services.common import protocol
from services.common.protocol import ClientMessage, ServerMessage
from services.common.settings import Settings
from shared_engine import actions

HERE: Final = Path(__file__).parent
COMMAND: Final = "python -m tools.schemas"
REF_TEMPLATE: Final = "#/components/schemas/{model}"
MAX_MESSAGE_BYTES: Final[int] = Settings.model_fields["max_message_bytes"].default
TURN_SECONDS: Final[int] = Settings.model_fields["turn_seconds"].default
DEFAULT_REGION: Final[str] = Settings.model_fields["region"].default
TOKEN_LIFETIME: Final[str] = f"{Settings.model_fields['token_ttl_seconds'].default // 60} minutes"

PLACEHOLDER: Final = re.compile(r"\{\{(\w+)\}\}")


def substitute(text: str, values: Mapping[str, object]) -> str:
    """``text`` with every ``{{key}}`` replaced; a key without a value is a ``KeyError``."""
    return PLACEHOLDER.sub(lambda match: str(values[match[1]]), text)


def fill(name: str, values: Mapping[str, object]) -> str:
    """The text file ``name``, substituted; a value without a placeholder is an error too,
    so that file and caller cannot drift apart."""
    text = (HERE / name).read_text(encoding="utf-8")
    unused = set(values) - set(PLACEHOLDER.findall(text))
    if unused:
        raise ValueError(f"{name} has no placeholder for {sorted(unused)}")
    return substitute(text, values)


def prose(name: str, values: Mapping[str, object] | None = None) -> str:
    """A Markdown file of wrapped paragraphs, filled in, each paragraph on one line."""
    return md(fill(name, values or {}))


def table(name: str) -> dict[str, Any]:
    """A TOML file beside this module."""
    return tomllib.loads((HERE / name).read_text(encoding="utf-8"))


def md(text: str) -> str:
    """Docstring text as Markdown: ````x```` as ```x```, wrapped lines joined."""
    paragraphs = [" ".join(p.split("\n")) for p in text.strip().split("\n\n")]
    return re.sub(r"``([^`]+)``", r"`\1`", "\n\n".join(paragraphs))


TOKEN_TEXT: Final = prose("token.md", {"token_lifetime": TOKEN_LIFETIME})
VERSION_RULE: Final = prose("versions.md")
"""Which changes of the protocol are compatible: what the schemas' openness encodes."""

# --- the messages -------------------------------------------------------------------------


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


REPLIES: Final[dict[str, tuple[str, ...]]] = {
    "Play": ("ViewMessage", "ErrorMessage"),
    "Sync": ("ViewMessage", "ErrorMessage"),
    "Say": ("SaidMessage", "ErrorMessage"),
    "ContinueMatch": ("ViewMessage", "ErrorMessage"),
    "Hello": ("WelcomeMessage", "ErrorMessage"),
    "Ping": ("PongMessage", "ErrorMessage"),
    "Queue": ("QueuedMessage", "ErrorMessage"),
    "Leave": ("QueueLeftMessage", "ErrorMessage"),
    "CreateTable": ("LobbyView", "ErrorMessage"),
    "JoinTable": ("LobbyView", "ErrorMessage"),
    "FillBots": ("LobbyView", "ErrorMessage"),
    "Rematch": ("LobbyView", "ErrorMessage"),
    "Balance": ("BalanceMessage", "ErrorMessage"),
    "Profile": ("ProfileMessage", "ErrorMessage"),
    "Leaderboard": ("LeaderboardMessage", "ErrorMessage"),
    "Replay": ("ReplayMessage", "ErrorMessage"),
}
"""What answers each client message, carrying its ``cid``: exactly one of these.

``play``: the sender's view of the version its move made (the other seats get the
same version as pushes, without ``cid``). ``join_table`` and ``fill_bots``: the
sender's ``lobby``, ``started`` if the table is now full (its views follow as
pushes, once the round is dealt)."""


def server_message(name: str) -> type[BaseModel]:
    return next(m for m in SERVER_MESSAGES if m.__name__ == name)


def replies_to(name: str) -> tuple[str, ...]:
    names = {m.__name__ for m in SERVER_MESSAGES}
    return tuple(r for r in REPLIES.get(name, ()) if r in names)


# --- the models' own words ----------------------------------------------------------------

NOTES: Final = table("notes.toml")
SCORES: Final = ("TeamScore", "ScoreView")
"""The models of a team's round score, in the events and in the messages: one text for both."""
FIELD_NOTES: Final[dict[str, dict[str, str]]] = {
    **NOTES["fields"],
    **dict.fromkeys(SCORES, NOTES["score"]["fields"]),
}
SUMMARIES: Final[dict[str, str]] = {
    **NOTES["summaries"],
    **dict.fromkeys(SCORES, NOTES["score"]["summary"]),
}


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
            source = inspect.getsourcefile(cls)
        except TypeError:
            continue
        body = _class_bodies(source).get(cls.__qualname__, []) if source else []
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


@functools.cache
def _class_bodies(source: str) -> dict[str, list[ast.stmt]]:
    """Each class's statements in one source file, by qualified name: the file is parsed
    once for all its models (``inspect.getsource`` parses it again for every class, which
    made the documents' generation take seconds)."""
    bodies: dict[str, list[ast.stmt]] = {}

    def visit(nodes: list[ast.stmt], prefix: str) -> None:
        for node in nodes:
            if isinstance(node, ast.ClassDef):
                bodies[prefix + node.name] = node.body
                visit(node.body, f"{prefix}{node.name}.")

    visit(ast.parse(Path(source).read_text(encoding="utf-8")).body, "")
    return bodies


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


def models_by_name(roots: Sequence[type[BaseModel]]) -> dict[str, type[BaseModel]]:
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


def describe_properties(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """Give ``schema`` and each of its properties without a description the model's words."""
    summary = summary_of(model)
    if summary and "description" not in schema:
        schema["description"] = summary
    notes = _model_notes(model)
    for name, prop in schema.get("properties", {}).items():
        if name in notes and "description" not in prop:
            prop["description"] = notes[name]


def describe_fields(
    schema: dict[str, Any], model: type[BaseModel], models: dict[str, type[BaseModel]]
) -> None:
    """``describe_properties`` on a schema and on each of its ``$defs``, in place."""
    describe_properties(schema, model)
    for name, definition in schema.get("$defs", {}).items():
        if name in models:
            describe_properties(definition, models[name])


def summary_of(model: type[BaseModel]) -> str:
    """What a model is: its docstring, else ``SUMMARIES``, else its engine action's docstring."""
    own = model.__dict__.get("__doc__")
    if isinstance(own, str) and own:
        return md(inspect.cleandoc(own))
    if model.__name__ in SUMMARIES:
        return SUMMARIES[model.__name__]
    engine = getattr(actions, model.__name__.removesuffix("Model"), None)
    if model.__name__.endswith("Model") and engine is not None and engine.__doc__:
        return md(inspect.cleandoc(engine.__doc__))
    return ""
