"""The contracts: event samples against their models, generated files against the models.

Every event type has a sample (a full EventBridge envelope) and a generated
JSON Schema in ``events/``; the samples tell one consistent story; the
AsyncAPI document and docs/protocol.md are what ``tools.schemas``
generates from the models today. Each check is shown to fail on a broken input.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import local
from infra import manifest
from infra.config import Config
from services.common.events import EVENT_TYPES, EventEnvelope
from services.common.protocol import (
    ARENA_STAKES,
    CLOSE_MEANINGS,
    PROTOCOL_VERSION,
    CloseCode,
    ServiceErrorCode,
)
from services.common.settings import Settings
from shared_engine import ERROR_CODES, commitment, shuffled
from shared_engine.rules import JOKER_BUTTON_COST
from tools import schemas
from tools.schemas import asyncapi, common, events, protocol

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
EVENTS = ROOT / "events"
SAMPLES = sorted(EVENTS.glob("*.sample.json"))
ENVELOPE_KEYS = {"version", "id", "detail-type", "source", "account", "time", "region", "resources"}


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _detail_type(path: Path) -> str:
    return path.name.split(".", 1)[0]


def _samples() -> dict[str, dict[str, Any]]:
    return {_detail_type(p): _load(p) for p in SAMPLES}


# --- samples against the models ---------------------------------------------------------


def test_every_event_type_has_a_sample_and_a_schema() -> None:
    assert {_detail_type(p) for p in SAMPLES} >= set(EVENT_TYPES)
    for detail_type in EVENT_TYPES:
        assert (ROOT / schemas.SCHEMA_DIR / f"{detail_type}.json").is_file(), detail_type


def test_every_sample_names_an_event_type() -> None:
    assert SAMPLES, "no samples found"
    assert {_detail_type(p) for p in SAMPLES} <= set(EVENT_TYPES)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_a_sample_is_a_full_envelope_that_its_model_accepts(path: Path) -> None:
    raw = _load(path)
    assert set(raw) == {*ENVELOPE_KEYS, "detail"}
    envelope = EventEnvelope.model_validate(raw)
    assert envelope.detail_type == _detail_type(path)
    assert envelope.source == events.source_of(envelope.detail_type)
    detail = envelope.parsed()
    assert isinstance(detail, EVENT_TYPES[envelope.detail_type])
    # What a service publishes is the model's own JSON form: the sample is exactly that.
    assert detail.model_dump(mode="json") == raw["detail"]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_a_sample_matches_its_generated_json_schema(path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    raw = _load(path)
    schema = _load(ROOT / schemas.SCHEMA_DIR / f"{raw['detail-type']}.json")
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(raw["detail"])
    tampered = {**raw["detail"], "unexpected": True}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(tampered)


def _tamperings(detail: dict[str, Any], required: list[str]) -> Iterator[dict[str, Any]]:
    yield {**detail, "unexpected": 1}
    for field in required:
        yield {k: v for k, v in detail.items() if k != field}
    for field, value in detail.items():
        if isinstance(value, (int, str)) and not isinstance(value, bool):
            yield {**detail, field: [value]}


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_a_tampered_sample_is_refused(path: Path) -> None:
    raw = _load(path)
    model = EVENT_TYPES[raw["detail-type"]]
    required = [name for name, field in model.model_fields.items() if field.is_required()]
    cases = list(_tamperings(raw["detail"], required))
    assert len(cases) > len(required)
    for detail in cases:
        broken = {**copy.deepcopy(raw), "detail": detail}
        with pytest.raises(ValidationError):
            EventEnvelope.model_validate(broken).parsed()


def test_a_sample_with_a_bad_value_is_refused() -> None:
    raw = _samples()["RoundStarted"]
    for dealer in (0, 5):
        broken = copy.deepcopy(raw)
        broken["detail"]["dealer"] = dealer
        with pytest.raises(ValidationError):
            EventEnvelope.model_validate(broken).parsed()


def test_an_envelope_without_account_still_parses() -> None:
    """The local stack's bus delivers EventBridge events without ``account`` (and the tolerant
    model allows it)."""
    for raw in _samples().values():
        trimmed = {k: v for k, v in raw.items() if k not in ("account", "region", "resources")}
        detail = EventEnvelope.model_validate(trimmed).parsed()
        assert detail.model_dump(mode="json") == raw["detail"]


def test_an_envelope_without_detail_type_is_refused() -> None:
    raw = _samples()["RoundStarted"]
    with pytest.raises(ValidationError):
        EventEnvelope.model_validate({k: v for k, v in raw.items() if k != "detail-type"})


# --- the samples tell one story -----------------------------------------------------------

ONE_MATCH = [t for t in EVENT_TYPES if t != "TableAborted"]
"""A table either ends or is aborted: TableAborted's sample is another table's."""


def test_the_samples_are_one_match() -> None:
    s = {t: raw["detail"] for t, raw in _samples().items()}
    assert len({s[t]["table_id"] for t in ONE_MATCH}) == 1
    formed, ended = s["TableFormed"], s["MatchEnded"]
    assert formed["seats"] == ended["seats"]
    assert formed["mode"] == ended["mode"]
    assert sorted(formed["seats"]) == ["1", "2", "3", "4"]
    seat_of = {p["player_id"]: int(seat) for seat, p in formed["seats"].items()}
    for presence in ("PlayerConnected", "PlayerDisconnected"):
        assert seat_of[s[presence]["player_id"]] == s[presence]["seat"]


def test_the_samples_round_is_verifiable() -> None:
    s = {t: raw["detail"] for t, raw in _samples().items()}
    scored = s["RoundScored"]
    assert len(scored["commitment"]) == 64 and int(scored["commitment"], 16) >= 0
    assert s["RoundStarted"]["commitment"] == scored["commitment"]
    assert commitment(scored["seed"], shuffled(scored["seed"])) == scored["commitment"]
    assert s["RoundStarted"]["version"] < s["RoundEnded"]["version"]
    for team, score in scored["scores"].items():
        parts = sum(v for k, v in score.items() if k != "total")
        assert parts == score["total"] == scored["totals"][team]
    assert s["MatchEnded"]["totals"] == scored["totals"]
    assert sum(s["LedgerSettled"]["changes"].values()) == 0
    times = [_samples()[t]["time"] for t in ("TableFormed", "RoundStarted", "RoundEnded")]
    assert times == sorted(times)


# --- where events come from and go to (against the services: tests/test_manifest.py) ----


def test_a_schema_names_its_source_and_consumers() -> None:
    scored = events.event_schema("RoundScored")
    assert scored["x-source"] == "canasta.score"
    assert scored["x-consumers"] == ["canasta-deal"]
    assert "canasta-deal" in scored["description"]
    settled = events.event_schema("LedgerSettled")
    assert settled["x-consumers"] == []
    assert manifest.OUTSIDE_READERS["LedgerSettled"] in settled["description"]


# --- generated files ----------------------------------------------------------------------


def test_the_generated_files_are_up_to_date() -> None:
    stale = schemas.stale()
    assert stale == [], f"run `{common.COMMAND}`; stale: {[str(p) for p in stale]}"


def test_the_check_sees_a_changed_a_missing_and_an_orphaned_file(tmp_path: Path) -> None:
    assert schemas.stale(tmp_path) == sorted(schemas.render())
    written = schemas.write(tmp_path)
    assert written == sorted(schemas.render())
    assert schemas.stale(tmp_path) == []
    assert schemas.write(tmp_path) == []
    target = tmp_path / schemas.ASYNCAPI
    target.write_text(target.read_text(encoding="utf-8") + " ", encoding="utf-8")
    (tmp_path / schemas.PROTOCOL_MD).unlink()
    orphan = tmp_path / schemas.SCHEMA_DIR / "Gone.json"
    orphan.write_text("{}\n", encoding="utf-8")
    assert schemas.stale(tmp_path) == sorted(
        [schemas.ASYNCAPI, schemas.PROTOCOL_MD, schemas.SCHEMA_DIR / "Gone.json"]
    )
    schemas.write(tmp_path)
    assert not orphan.exists()
    assert schemas.stale(tmp_path) == []


def test_the_generator_is_deterministic() -> None:
    assert schemas.render() == schemas.render()


# --- the AsyncAPI document ----------------------------------------------------------------


def _asyncapi() -> dict[str, Any]:
    return _load(ROOT / schemas.ASYNCAPI)


def _resolve(document: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = document
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def test_asyncapi_is_a_3_1_document_with_every_message() -> None:
    document = _asyncapi()
    assert document["asyncapi"] == "3.1.0"
    assert document["info"]["version"] == str(PROTOCOL_VERSION)
    channel = document["channels"][asyncapi.CHANNEL]
    operations = document["operations"]
    for models, action in ((common.CLIENT_MESSAGES, "send"), (common.SERVER_MESSAGES, "receive")):
        assert models
        for model in models:
            name = model.__name__
            assert name in document["components"]["messages"]
            assert name in document["components"]["schemas"]
            assert name in channel["messages"]
            operation = operations[f"{action}{name}"]
            assert operation["action"] == action
            assert operation["messages"] == [
                {"$ref": f"#/channels/{asyncapi.CHANNEL}/messages/{name}"}
            ]


def test_asyncapi_names_the_client_and_server_messages() -> None:
    messages = _asyncapi()["components"]["messages"]
    for name in ("Play", "Sync", "ViewMessage", "ErrorMessage"):
        assert name in messages
    for name in ("RoundResultMessage", "MatchResultMessage"):
        assert name in messages


def test_every_asyncapi_reference_resolves() -> None:
    document = _asyncapi()
    refs = set(asyncapi._refs_in(document))
    assert "#/components/schemas/TableView" in refs
    for ref in refs:
        _resolve(document, ref)
    with pytest.raises(KeyError):
        _resolve(document, "#/components/schemas/NoSuchModel")


def test_asyncapi_says_how_to_connect_and_route() -> None:
    document = _asyncapi()
    server = document["servers"][asyncapi.SERVER]
    assert server["protocol"] == "wss"
    assert "{apiId}" in server["host"] and "apiId" in server["variables"]
    query = document["channels"][asyncapi.CHANNEL]["bindings"]["ws"]["query"]
    assert query["required"] == ["token"]
    assert "$request.body.action" in document["info"]["description"]
    scheme = document["components"]["securitySchemes"]["token"]
    assert (scheme["in"], scheme["name"]) == ("query", "token")


def test_asyncapi_examples_are_accepted_by_their_models() -> None:
    document = _asyncapi()
    for model in (*common.CLIENT_MESSAGES, *common.SERVER_MESSAGES):
        examples = document["components"]["messages"][model.__name__]["examples"]
        assert examples
        for example in examples:
            model.model_validate(example["payload"])
            with pytest.raises(ValidationError):
                model.model_validate({**example["payload"], "unexpected": 1})


def test_asyncapi_schemas_are_json_schemas() -> None:
    pytest.importorskip("jsonschema")
    from tests.ecma import check_schema

    for schema in _asyncapi()["components"]["schemas"].values():
        check_schema(schema)
        discriminator = schema.get("discriminator")
        assert discriminator is None or isinstance(discriminator, str)


# --- docs/protocol.md ---------------------------------------------------------------------


def test_protocol_md_covers_every_message_and_code() -> None:
    text = (ROOT / schemas.PROTOCOL_MD).read_text(encoding="utf-8")
    for model in (*common.CLIENT_MESSAGES, *common.SERVER_MESSAGES):
        assert f"### {model.__name__} (`{common.tag_of(model)}`)" in text
    for code in (*ERROR_CODES, *ServiceErrorCode.__args__):
        assert f"| `{code}` |" in text
    for phrase in ("?token=", "$request.body.action", "`sync`", "stale_version", "8 KB"):
        assert phrase in text


def test_every_error_code_has_a_meaning() -> None:
    assert set(protocol.ENGINE_ERRORS) == set(ERROR_CODES)
    assert set(protocol.SERVICE_ERRORS) == set(ServiceErrorCode.__args__)
    with pytest.raises(ValueError, match="missing"):
        protocol._check_codes(protocol.ENGINE_ERRORS, [*ERROR_CODES, "new_code"], "engine error")


# --- what a client generated from the contract relies on ------------------------------------


def _schemas() -> dict[str, Any]:
    schemas_: dict[str, Any] = _asyncapi()["components"]["schemas"]
    return schemas_


MOVES = ("DrawModel", "TakePileModel", "JokerButtonModel", "MeldModel", "DiscardModel")


def test_every_tag_is_required_single_valued_and_titled_apart() -> None:
    """Generators switch on ``type``/``action``: each union member must define its own."""
    found = _schemas()
    titles = []
    for union, tag in (("ServerMessage", "type"), ("ClientMessage", "action")):
        assert found[union]["discriminator"] == tag
        members = [ref["$ref"].rsplit("/", 1)[-1] for ref in found[union]["oneOf"]]
        assert members == [
            m.__name__
            for m in (common.SERVER_MESSAGES if tag == "type" else common.CLIENT_MESSAGES)
        ]
        for name in members:
            schema = found[name]
            assert tag in schema["required"], name
            assert "const" in schema["properties"][tag], name
            titles.append(schema["properties"][tag]["title"])
    assert found["Play"]["properties"]["move"]["$ref"].endswith("/Move")
    move = found["Move"]
    assert move["discriminator"] == "type"
    assert [ref["$ref"].rsplit("/", 1)[-1] for ref in move["oneOf"]] == list(MOVES)
    for name in MOVES:
        assert "type" in found[name]["required"]
        titles.append(found[name]["properties"]["type"]["title"])
    assert len(titles) == len(set(titles)), "two tags share a title: generators merge them"


def test_server_schemas_are_open_and_client_schemas_strict() -> None:
    """The versioning rule: fields may be added to what the server sends, never to moves."""
    found = _schemas()
    client_side = asyncapi._reaches(found, ["ClientMessage"])
    assert set(MOVES) | {"MeldSpecModel", "Play", "Queue"} <= client_side
    for name, schema in found.items():
        if schema.get("type") != "object" or name in asyncapi.identity_schemas():
            continue
        if name in client_side:
            assert schema.get("additionalProperties") is False, name
        else:
            assert "additionalProperties" not in schema, name
    assert {"ViewMessage", "TableView", "SeatPlayer", "ScoreView"} <= set(found) - client_side


def test_the_view_is_typed_down_to_moves_seats_and_tiles() -> None:
    found = _schemas()
    view = found["TableView"]["properties"]
    assert view["legal_actions"]["items"] == {"$ref": "#/components/schemas/Move"}
    assert view["hand_sizes"]["propertyNames"]["enum"] == ["1", "2", "3", "4"]
    for field in ("seat", "turn"):
        assert (view[field]["minimum"], view[field]["maximum"]) == (1, 4)
    assert (
        view["hand"]["items"]["pattern"] == found["DiscardModel"]["properties"]["tile"]["pattern"]
    )
    last = found["ViewMessage"]["properties"]["last_action"]["anyOf"][0]["$ref"]
    assert last.endswith("/LastAction")
    assert {"seat", "auto", "type"} <= set(found["LastAction"]["required"])
    # One score model, in the view and in the round result.
    score = found["RoundResultMessage"]["properties"]["scores"]["additionalProperties"]["$ref"]
    assert score.endswith("/ScoreView") and "TeamScore" not in found


def test_the_view_says_what_the_joker_button_costs_before_it_is_pressed() -> None:
    """JOKER-1: every view carries the button's cost beside the account's spare jokers (a
    practice table's too), and ``legal_actions`` says when it lists ``joker_button``."""
    view = _schemas()["TableView"]
    assert {"joker_button_cost", "account_jokers", "joker_button_used"} <= set(view["required"])
    cost = view["properties"]["joker_button_cost"]
    assert cost["type"] == "integer" and "JOKER-1" in cost["description"]
    assert "practice" in cost["description"]
    legal = view["properties"]["legal_actions"]["description"]
    for named in ("`joker_button`", "JOKER-1", "`account_jokers`", "`joker_button_cost`"):
        assert named in legal, named
    for example in _asyncapi()["components"]["messages"]["ViewMessage"]["examples"]:
        assert example["payload"]["view"]["joker_button_cost"] == JOKER_BUTTON_COST


def test_enums_are_named_and_complete() -> None:
    found = _schemas()
    code = found["ErrorMessage"]["properties"]["code"]
    assert code["title"] == "ErrorCode"
    assert code["enum"] == [*ERROR_CODES, *ServiceErrorCode.__args__]
    reason = found["QueueLeftMessage"]["properties"]["reason"]
    assert (reason["title"], reason["enum"]) == (
        "QueueLeftReason",
        ["left", "timeout", "disconnected", "closed"],
    )
    stake = found["Queue"]["properties"]["stake"]
    assert stake["enum"] == [0, *ARENA_STAKES]


def test_descriptions_stand_alone() -> None:
    """No schema points into a section that only docs/protocol.md has."""
    text = json.dumps(_schemas())
    for phrase in ("(see Versions)", "(see Error codes)", "(see Limits)", "see the `"):
        assert phrase not in text


def test_the_channel_and_the_identity_are_in_the_contract() -> None:
    document = _asyncapi()
    channel = document["channels"][asyncapi.CHANNEL]
    assert channel["address"] == "/{stage}" and "stage" in channel["parameters"]
    token = document["components"]["securitySchemes"]["token"]["description"]
    for phrase in ("POST /api/signin", "401", "403", "`exp`", "JWKS", "RS256"):
        assert phrase in token
    for name in ("TokenClaims", "SignInRequest", "SignInResponse", "SignInError"):
        assert name in document["components"]["schemas"]
    description = document["info"]["description"]
    assert "`cid`" in description and "`ping`" in description and "Versioning" in description


def test_the_contract_names_the_local_server_too() -> None:
    """A client built from the contract alone finds ``python -m local`` in ``servers``."""
    document = _asyncapi()
    local_server = document["servers"][asyncapi.LOCAL_SERVER]
    assert (local_server["protocol"], local_server["host"]) == ("ws", "127.0.0.1:{port}")
    assert local_server["variables"]["port"]["default"] == str(local.DEFAULT_PORT)
    assert local_server["security"] == document["servers"][asyncapi.SERVER]["security"]
    channel = document["channels"][asyncapi.CHANNEL]
    assert {"$ref": f"#/servers/{asyncapi.LOCAL_SERVER}"} in channel["servers"]
    assert local.STAGE in channel["parameters"]["stage"]["examples"]
    url = f"ws://127.0.0.1:{local.DEFAULT_PORT}/{local.STAGE}"
    assert url in local_server["description"]
    assert url in (ROOT / schemas.PROTOCOL_MD).read_text(encoding="utf-8")


def test_rate_limits_and_close_codes_are_the_ones_the_code_runs_with() -> None:
    """The figures in the contract are the settings', the stage's and the protocol's, in
    its extensions and in its prose alike; no close code is an application code."""
    settings, stage = Settings(), Config()
    channel = _asyncapi()["channels"][asyncapi.CHANNEL]
    limits = channel["x-rate-limits"]
    connection, invites = limits["per_connection"], limits["invite_codes"]
    assert (connection["burst"], connection["per_second"]) == (
        settings.message_burst,
        settings.messages_per_second,
    )
    assert (invites["attempts"], invites["window_seconds"]) == (
        settings.join_attempts,
        settings.join_window_seconds,
    )
    assert (limits["stage"]["burst"], limits["stage"]["per_second"]) == (
        stage.message_burst,
        stage.message_rate,
    )
    assert {connection["refusal"], invites["refusal"]} == {"rate_limited"}
    codes = channel["x-close-codes"]
    assert codes == {str(int(code)): CLOSE_MEANINGS[code] for code in CloseCode}
    assert not [code for code in codes if 4000 <= int(code) <= 4999]
    burst = f"{settings.message_burst} messages at once, then {settings.messages_per_second:g}"
    protocol_md = (ROOT / schemas.PROTOCOL_MD).read_text(encoding="utf-8")
    for text in (_asyncapi()["info"]["description"], protocol_md):
        assert burst in text and "`rate_limited`" in text
        assert all(f"`{code}`" in text for code in codes)


def test_the_contract_says_how_generators_of_asyncapi_3_0_read_it() -> None:
    """tests/contract checks the claim itself (the relabeled copy is valid 3.0, same models)."""
    protocol_md = (ROOT / schemas.PROTOCOL_MD).read_text(encoding="utf-8")
    for text in (_asyncapi()["info"]["description"], protocol_md):
        assert "`3.0.0`" in text and "@asyncapi/modelina" in text and "file URL" in text


def test_every_client_message_names_its_answers() -> None:
    operations = _asyncapi()["operations"]
    for model in common.CLIENT_MESSAGES:
        reply = operations[f"send{model.__name__}"]["reply"]["messages"]
        names = [r["$ref"].rsplit("/", 1)[-1] for r in reply]
        assert names[-1] == "ErrorMessage" and len(names) == 2, model.__name__
    joins = operations["sendJoinTable"]["reply"]["messages"]
    assert joins[0]["$ref"].endswith("/LobbyView")


def test_routes_without_their_own_reach_the_turn_service_by_default() -> None:
    """``hello`` and ``ping`` have no API Gateway route: ``$default`` is the turn service's."""
    routes = {r for spec in manifest.FUNCTIONS.values() for r in spec.routes}
    for model in common.CLIENT_MESSAGES:
        route = common.route_of(model)
        assert route in routes, model.__name__
    turn = next(spec for spec in manifest.FUNCTIONS.values() if "$default" in spec.routes)
    assert {"play", "sync"} <= set(turn.routes)
