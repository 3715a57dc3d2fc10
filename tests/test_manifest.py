"""The services agree with the manifest (``infra.manifest``): what they route, parse and emit.

The stack, the local stack and the docs are built from the manifest; the
handlers' routing tables, the protocol's unions and the services' outboxes
are code of their own, so these tests hold them to it.
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import replace
from pathlib import Path
from typing import Any, get_args

import pytest

from infra import manifest
from local import aws, dispatcher, gateway
from services.common import constants, events, protocol
from services.common.events import EVENT_TYPES
from services.common.runtime import BATCH_RESPONSE_MARGIN_MS, EventRoutes

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


SHARED_CODE = {"deal": ("services/common/dealing.py",)}
"""Code of a service kept in ``services/common`` for another to run too: dealing, which the
turn service also does when an intermission ends (its events still leave as the deal
service's)."""


def _calls(service: str) -> list[str]:
    """The name of everything a service's code calls."""
    paths = [
        *sorted((ROOT / "services" / service).glob("*.py")),
        *(ROOT / shared for shared in SHARED_CODE.get(service, ())),
    ]
    return [
        getattr(node.func, "id", getattr(node.func, "attr", ""))
        for path in paths
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
    ]


@pytest.mark.parametrize("service", SERVICES)
def test_each_service_emits_what_the_manifest_says(service: str) -> None:
    """The event models a service builds are what it emits, each through ``Outbound.of``:
    a service that spelled an ``Outbound(...)`` could name any detail-type and source. The
    operators' function emits what ``OPERATOR_EMITS`` lets the operators publish."""
    calls = _calls(service)
    built = {name for name in calls if name in EVENT_TYPES}
    emitted = [*events.EMITTERS.items(), *events.OPERATOR_EMITS.items()]
    assert built == {d for d, s in emitted if s == service}
    assert "Outbound" not in calls


@pytest.mark.parametrize("detail_type", sorted(EVENT_TYPES))
def test_an_event_leaves_under_its_emitter_s_source_only(detail_type: str) -> None:
    emitter = events.EMITTERS[detail_type]
    assert events.source_of(detail_type) == f"{constants.EVENT_SOURCE}.{emitter}"
    others = set(SERVICES) - {emitter, events.OPERATOR_EMITS.get(detail_type)}
    for other in others:
        with pytest.raises(ValueError, match="does not emit"):
            events.source_of(detail_type, other)


def test_the_console_may_end_a_table_as_the_score_service_does() -> None:
    assert events.source_of("TableAborted", "ops") == f"{constants.EVENT_SOURCE}.ops"


def test_every_event_has_one_emitter() -> None:
    assert set(events.EMITTERS) == set(EVENT_TYPES)
    assert set(events.EMITTERS.values()) <= set(SERVICES)


def test_every_event_is_put_on_the_bus_by_one_function_under_its_emitter_s_source() -> None:
    """Directly (presence, ``LedgerSettled``) or from an outbox (the relay): either way by
    exactly one function, whose ``events:PutEvents`` grants name it (infra/policies.py)."""
    every = {(events.source_of(d), d) for d in events.EMITTERS}
    every |= {(events.source_of(d, e), d) for d, e in events.OPERATOR_EMITS.items()}
    put = [
        (source, detail_type)
        for spec in manifest.FUNCTIONS.values()
        for source, detail_types in manifest.emitted(spec).items()
        for detail_type in detail_types
    ]
    assert sorted(put) == sorted(every)
    relayed = {d for types in manifest.relayed().values() for d in types}
    assert relayed == set(events.EMITTERS) - {
        "PlayerConnected",
        "PlayerDisconnected",
        "LedgerSettled",
    }


def test_every_event_is_read_by_a_consumer_or_by_the_readers_it_is_listed_for() -> None:
    """An event nobody reads still costs its PutEvents and, from an outbox, a relay
    invocation: each detail-type is routed by a rule here, or listed with the reason it is
    published for readers outside the stack (and leaves that list once a rule routes it)."""
    consumed = {d for types in manifest.CONSUMERS.values() for d in types}
    outside = set(manifest.OUTSIDE_READERS)
    assert set(events.EMITTERS) - consumed - outside == set(), "published, read by nobody"
    assert outside <= set(events.EMITTERS), "listed, but nobody emits it"
    assert consumed & outside == set(), "consumed here: no longer only for outside readers"
    assert all(reason.strip() for reason in manifest.OUTSIDE_READERS.values())


def test_a_function_may_publish_only_its_own_service_s_events() -> None:
    spec = manifest.FUNCTIONS["ledger-events"]
    with pytest.raises(ValueError, match="ledger does not emit MatchEnded"):
        manifest.emitted(replace(spec, publishes=("MatchEnded",)))


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


QUEUE_CONSUMERS = {key: spec for key, spec in manifest.FUNCTIONS.items() if spec.queue}


@pytest.mark.parametrize("key", sorted(QUEUE_CONSUMERS))
def test_one_record_of_each_queue_consumer_fits_its_timeout(key: str) -> None:
    """A batch stops starting records while it can still answer (process_batch), so a whole
    batch may outlast the timeout; one record at its worst, and the margin, may not."""
    spec = QUEUE_CONSUMERS[key]
    assert spec.record_seconds is not None, f"{key}: a queue consumer names its record budget"
    assert spec.record_seconds * 1000 + BATCH_RESPONSE_MARGIN_MS <= spec.timeout_seconds * 1000


@pytest.mark.parametrize("key", sorted(QUEUE_CONSUMERS))
def test_a_queue_outlasts_six_times_its_consumer_s_timeout(key: str) -> None:
    """AWS's advice for an SQS event source: a batch still running (or its retries) is never
    handed to another invocation meanwhile."""
    spec = QUEUE_CONSUMERS[key]
    assert spec.queue is not None
    assert manifest.visibility_timeout_seconds(spec.queue) >= 6 * spec.timeout_seconds


def test_only_queue_consumers_have_a_record_budget() -> None:
    """The budget is read by the SQS batches alone: elsewhere it would say nothing."""
    assert {k for k, s in manifest.FUNCTIONS.items() if s.record_seconds is not None} == set(
        QUEUE_CONSUMERS
    )
