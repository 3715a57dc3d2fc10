"""The services agree with the manifest (``infra.manifest``): what they route, parse and emit.

The stack, the local stack and the docs are built from the manifest; the
handlers' routing tables, the protocol's unions and the services' outboxes
are code of their own, so these tests hold them to it.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any, get_args

import pytest

from infra import manifest
from local import aws, dispatcher, gateway
from services.common import constants, protocol
from services.common.events import EVENT_TYPES
from services.common.runtime import EventRoutes

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
CONSUMERS = {key: spec for key, spec in manifest.FUNCTIONS.items() if spec.consumes}
SERVICES = sorted({spec.service for spec in manifest.FUNCTIONS.values()})


def _routes_of(module: str) -> EventRoutes:
    routes = importlib.import_module(module).EVENTS
    assert isinstance(routes, EventRoutes)
    return routes


@pytest.mark.parametrize("key", sorted(CONSUMERS))
def test_each_consumer_routes_exactly_what_its_rule_sends(key: str) -> None:
    spec = CONSUMERS[key]
    assert set(spec.consumes) <= set(EVENT_TYPES), key
    assert _routes_of(spec.handler.rpartition(".")[0]).detail_types == set(spec.consumes)


def test_every_routing_table_belongs_to_a_consumer() -> None:
    consumer_modules = {spec.handler.rpartition(".")[0] for spec in CONSUMERS.values()}
    with_tables = {
        module
        for module in manifest.handler_modules()
        if isinstance(getattr(importlib.import_module(module), "EVENTS", None), EventRoutes)
    }
    assert with_tables == consumer_modules


def _members(union: Any) -> list[type[Any]]:
    return list(get_args(get_args(union)[0]))


def _action(model: type[Any]) -> str:
    (value,) = get_args(model.model_fields["action"].annotation)
    return str(value)


@pytest.mark.parametrize(
    ("union", "service"),
    [(protocol.TurnMessage, "turn"), (protocol.LobbyMessage, "matchmaking")],
    ids=["turn", "matchmaking"],
)
def test_each_service_parses_the_messages_of_its_routes(union: Any, service: str) -> None:
    """A service's message union holds the messages the manifest's routes bring it: each
    action with a route of its own, and the others only on the service owning ``$default``."""
    routes = manifest.websocket_routes()
    own = {r for r in routes if not r.startswith("$") and manifest.service_of_route(r) == service}
    actions = {_action(m) for m in _members(union)}
    assert {a for a in actions if a in routes} == own
    if actions - own:
        assert manifest.service_of_route("$default") == service


def test_every_client_message_is_parsed_by_one_service() -> None:
    actions = [
        _action(m) for u in (protocol.TurnMessage, protocol.LobbyMessage) for m in _members(u)
    ]
    assert sorted(actions) == sorted(_action(m) for m in _members(protocol.ClientMessage))
    assert len(set(actions)) == len(actions)


def _outbounds(service: str) -> list[ast.expr]:
    """The first argument (the detail-type) of every ``Outbound(...)`` in a service's code."""
    found = []
    for path in sorted((ROOT / "services" / service).glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Outbound"
                and node.args
            ):
                found.append(node.args[0])
    return found


RELAY = manifest.stream_handler().split(".")[1]
"""The relay publishes the others' events as the stream brings them, and none of its own."""


@pytest.mark.parametrize("service", SERVICES)
def test_each_service_emits_what_the_manifest_says(service: str) -> None:
    outbounds = _outbounds(service)
    named = {node.value for node in outbounds if isinstance(node, ast.Constant)}
    assert named == {d for d, s in manifest.EMITTERS.items() if s == service}
    if service != RELAY:
        assert all(isinstance(node, ast.Constant) for node in outbounds), (
            f"the {service} service names each detail-type it emits"
        )


@pytest.mark.parametrize("service", sorted(set(manifest.EMITTERS.values())))
def test_each_emitter_publishes_under_its_own_source(service: str) -> None:
    app = importlib.import_module(f"services.{service}.app")
    assert f"{constants.EVENT_SOURCE}.{service}" == app.SOURCE


def test_every_event_has_one_emitter() -> None:
    assert set(manifest.EMITTERS) == set(EVENT_TYPES)
    assert set(manifest.EMITTERS.values()) <= set(SERVICES)


def test_the_local_stack_wires_what_the_manifest_lists() -> None:
    routes = manifest.websocket_routes()
    assert (routes) == {
        **gateway.ROUTES,
        "$connect": gateway.CONNECT,
        "$disconnect": gateway.DISCONNECT,
    }
    assert manifest.authorizer() == gateway.AUTHORIZER
    assert manifest.queue_handlers() == dispatcher.ROUTES
    assert manifest.stream_handler() == dispatcher.RELAY
    assert set(aws.HANDLER_MODULES) == {
        s.handler.rpartition(".")[0] for s in manifest.FUNCTIONS.values()
    }


def test_every_handler_the_manifest_names_exists() -> None:
    for key, spec in manifest.FUNCTIONS.items():
        entry = dispatcher.load(spec.handler)
        assert callable(entry), key
