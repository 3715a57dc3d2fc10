"""docs/protocol.md: the WebSocket protocol written for people, with examples.

The hand-written parts are ``protocol.template.md``; this module fills in what the
models give (routes, message sections, types, error codes) and the settings' numbers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Final, get_args

from pydantic import BaseModel

from local import DEFAULT_PORT as LOCAL_PORT
from local import STAGE as LOCAL_STAGE
from services.common.protocol import (
    ARENA_STAKES,
    IDLE_SECONDS,
    PROTOCOL_VERSION,
    ServiceErrorCode,
    TokenClaims,
)
from shared_engine import ERROR_CODES
from tools.schemas.asyncapi import message_schemas
from tools.schemas.common import (
    CLIENT_MESSAGES,
    COMMAND,
    MAX_MESSAGE_BYTES,
    SERVER_MESSAGES,
    TOKEN_TEXT,
    TURN_SECONDS,
    VERSION_RULE,
    describe_properties,
    fill,
    md,
    replies_to,
    route_of,
    routed_to,
    server_message,
    substitute,
    summary_of,
    table,
    tag_of,
)
from tools.schemas.examples import examples
from tools.schemas.limits import CLOSE_INTRO, RATE_TEXT, close_codes

ERRORS: Final = table("errors.toml")
ENGINE_ERRORS: Final[dict[str, str]] = ERRORS["engine"]
SERVICE_ERRORS: Final[dict[str, str]] = {
    code: substitute(
        meaning, {"max_message_bytes": MAX_MESSAGE_BYTES, "arena_stakes": list(ARENA_STAKES)}
    )
    for code, meaning in ERRORS["service"].items()
}

TYPE_TEXT: Final[dict[tuple[str, str], str]] = {
    ("ErrorMessage", "code"): "string: an [error code](#error-codes)",
}
"""How a field's type reads in docs/protocol.md, where the schema would be too long."""


def _check_codes(meanings: dict[str, str], codes: Sequence[str], what: str) -> None:
    missing = [c for c in codes if c not in meanings]
    extra = sorted(set(meanings) - set(codes))
    if missing or extra:
        raise ValueError(f"{what} meanings: missing {missing}, unknown {extra}")


def _fields_of(model: type[BaseModel]) -> list[str]:
    """The field table of a model outside the messages (the token's claims)."""
    schema = model.model_json_schema()
    describe_properties(schema, model)
    return _field_table(model.__name__, schema)


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
        meaning = md(str(prop.get("description", "")))
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
    lines += [f"{summary_of(model)}{route}".strip(), ""]
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
    routes = []
    for model in CLIENT_MESSAGES:
        service = routed_to(model.__name__)
        route = route_of(model)
        if route != tag_of(model):
            service += f" (route `{route}`)"
        answers = ", ".join(f"`{tag_of(server_message(r))}`" for r in replies_to(model.__name__))
        routes.append(
            f"| `{tag_of(model)}` | [{model.__name__}](#{_anchor(model.__name__)}) | {service} "
            f"| {answers} |"
        )
    client: list[str] = []
    for model in CLIENT_MESSAGES:
        client += _message_section(model, schemas, cases[model.__name__], routed_to(model.__name__))
    server: list[str] = []
    for model in SERVER_MESSAGES:
        server += _message_section(model, schemas, cases[model.__name__], None)
    types: list[str] = []
    for name, schema in schemas.items():
        if name in message_names:
            continue
        types += [f"### {_heading(name)}", ""]
        if schema.get("description"):
            types += [md(str(schema["description"])), ""]
        if "enum" in schema:
            types += ["One of " + ", ".join(f"`{json.dumps(v)}`" for v in schema["enum"]) + ".", ""]
        elif "properties" in schema:
            types += [*_field_table(name, schema), ""]
        elif "oneOf" in schema:
            types += [f"{_type_of(schema)}.", ""]
    codes = [f"| `{c}` | engine | {_cell(ENGINE_ERRORS[c])} |" for c in ERROR_CODES]
    codes += [f"| `{c}` | service | {_cell(SERVICE_ERRORS[c])} |" for c in service_codes]
    return fill(
        "protocol.template.md",
        {
            "command": COMMAND,
            "token": TOKEN_TEXT,
            "token_claims": "\n".join(_fields_of(TokenClaims)),
            "routes": "\n".join(routes),
            "idle_minutes": IDLE_SECONDS // 60,
            "client_messages": "\n".join(client),
            "server_messages": "\n".join(server),
            "types": "\n".join(types),
            "error_codes": "\n".join(codes),
            "protocol_version": PROTOCOL_VERSION,
            "version_rule": VERSION_RULE,
            "turn_seconds": TURN_SECONDS,
            "max_message_bytes": MAX_MESSAGE_BYTES,
            "max_message_kb": MAX_MESSAGE_BYTES // 1024,
            "local_url": f"ws://127.0.0.1:{LOCAL_PORT}/{LOCAL_STAGE}",
            "local_stage": LOCAL_STAGE,
            "rate_limits": RATE_TEXT,
            "close_codes": CLOSE_INTRO,
            "close_table": "\n".join(f"| `{c}` | {_cell(m)} |" for c, m in close_codes().items()),
        },
    )
