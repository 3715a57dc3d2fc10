"""The AsyncAPI 3.1 document of the WebSocket API, from the client's point of view.

Its schemas follow two rules of the contract that no single model states: every
schema that only server messages reach is open (``additionalProperties`` is left
out, so clients built from it tolerate added fields), and every tag property
(``type``, ``action``) carries a title of its own, so that code generators make one
type per message and per move instead of merging them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Final

from pydantic import TypeAdapter

from local import DEFAULT_PORT as LOCAL_PORT
from local import STAGE as LOCAL_STAGE
from services.common.auth import MAX_TOKEN_CHARS
from services.common.protocol import (
    IDLE_SECONDS,
    PROTOCOL_VERSION,
    ClientMessage,
    ServerMessage,
    SignInError,
    SignInRequest,
    SignInResponse,
    TokenClaims,
)
from shared_engine.actions import ActionModel
from tools.schemas.common import (
    CLIENT_MESSAGES,
    COMMAND,
    DEFAULT_REGION,
    MAX_MESSAGE_BYTES,
    REF_TEMPLATE,
    SERVER_MESSAGES,
    TOKEN_TEXT,
    VERSION_RULE,
    describe_properties,
    models_by_name,
    prose,
    replies_to,
    route_of,
    routed_to,
    summary_of,
    tag_of,
)
from tools.schemas.examples import examples
from tools.schemas.limits import CLOSE_TEXT, RATE_TEXT, close_codes, rate_limits

CHANNEL: Final = "table"
SERVER: Final = "aws"
LOCAL_SERVER: Final = "local"


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
    models = models_by_name([*CLIENT_MESSAGES, *SERVER_MESSAGES])
    for name, definition in defs.items():
        if name in models:
            describe_properties(definition, models[name])
    for name, definition in defs.items():
        defs[name] = _named_unions(definition, {n: defs[n] for n in UNIONS if n != name})
    from_client = _reaches(defs, ["ClientMessage"])
    for name, definition in defs.items():
        _as_contract(name, definition, open_=name not in from_client)
    return {name: _asyncapi_schema(defs[name]) for name in sorted(defs)}


def identity_schemas() -> dict[str, Any]:
    """The token's claims and the local sign-in, beside the messages."""
    out: dict[str, Any] = {}
    for model in (TokenClaims, SignInRequest, SignInResponse, SignInError):
        schema = model.model_json_schema(ref_template=REF_TEMPLATE)
        describe_properties(schema, model)
        out[model.__name__] = schema
    return out


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
        summary = summary_of(model)
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
        replies = replies_to(name)
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
            "description": prose(
                "asyncapi.template.md",
                {
                    "max_message_bytes": MAX_MESSAGE_BYTES,
                    "idle_minutes": IDLE_SECONDS // 60,
                    "version_rule": VERSION_RULE,
                    "command": COMMAND,
                    "rate_limits": RATE_TEXT,
                    "close_codes": CLOSE_TEXT,
                    "local_stage": LOCAL_STAGE,
                },
            ),
        },
        "defaultContentType": "application/json",
        "servers": {
            SERVER: {
                "host": "{apiId}.execute-api.{region}.amazonaws.com",
                "protocol": "wss",
                "title": "API Gateway WebSocket API",
                "description": "The deployed API: its stage URL is an output of the CDK stack.",
                "variables": {
                    "apiId": {
                        "description": "The WebSocket API's id (an output of the CDK stack).",
                        "examples": ["a1b2c3d4e5"],
                    },
                    "region": {"default": DEFAULT_REGION, "description": "The AWS region."},
                },
                "security": [{"$ref": "#/components/securitySchemes/token"}],
            },
            LOCAL_SERVER: {
                "host": "127.0.0.1:{port}",
                "protocol": "ws",
                "title": "The local stack",
                "description": (
                    "`python -m local`: the same handlers on an embedded AWS, at "
                    f"ws://127.0.0.1:{LOCAL_PORT}/{LOCAL_STAGE} (the stage `{LOCAL_STAGE}`); "
                    "its own token issuer signs in a name at `POST /api/signin`."
                ),
                "variables": {
                    "port": {
                        "default": str(LOCAL_PORT),
                        "description": "The port given to `python -m local --port`.",
                    }
                },
                "security": [{"$ref": "#/components/securitySchemes/token"}],
            },
        },
        "channels": {
            CHANNEL: {
                "address": "/{stage}",
                "parameters": {
                    "stage": {
                        "default": "prod",
                        "examples": ["prod", "dev", LOCAL_STAGE],
                        "description": f"The API stage (`{LOCAL_STAGE}` on the local stack).",
                    }
                },
                "title": "The player's connection",
                "description": (
                    "One connection per client, opened on the stage URL itself. Client "
                    "messages are routed on `action`; the server pushes its messages to "
                    "the connection through the `@connections` management API."
                ),
                "servers": [{"$ref": f"#/servers/{name}"} for name in (SERVER, LOCAL_SERVER)],
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
                "x-rate-limits": rate_limits(),
                "x-close-codes": close_codes(),
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
