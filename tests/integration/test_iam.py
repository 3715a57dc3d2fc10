"""Handlers run with their own role's permissions, as the template grants them.

Every harness checks at its end that no call was denied (``assert_none_denied``),
so each flow of this tier is also a check of its functions' grants. These
tests pin the evaluator itself: the deal defect, that a missing grant is
caught and named, and how each kind of request is authorized.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace

import pytest
from botocore.exceptions import ClientError

from infra.manifest import FUNCTIONS, GET, PUT, UPDATE, emitted
from infra.policies import EVENT_DETAIL_TYPE, EVENT_SOURCE
from local.aws import LocalAws, reset
from local.dispatcher import LambdaContext
from local.iam import (
    ACCOUNT,
    Call,
    LocalArns,
    Unmodelled,
    acting_as,
    calls,
    role,
)
from services.common import constants
from services.common.events import EMITTERS, EVENT_TYPES, OPERATOR_EMITS, source_of
from tests.integration.harness import Harness, Inbox, served_issuer

pytestmark = pytest.mark.integration

PLAYERS = ["p1", "p2", "p3", "p4"]
ARNS = LocalArns(
    region="eu-west-1",
    tables={t.name: f"dev-{t.name}" for t in constants.TABLES},
    event_bus="dev-canasta-events",
    schedule_group="dev-canasta-turn-timers",
    state_machine=f"arn:aws:states:eu-west-1:{ACCOUNT}:stateMachine:dev-canasta-tickets",
    scheduler_role=f"arn:aws:iam::{ACCOUNT}:role/dev-scheduler",
    timer_queue=f"arn:aws:sqs:eu-west-1:{ACCOUNT}:dev-canasta-turn-timers",
)


ALL_SOURCES = sorted(
    {source_of(d) for d in EMITTERS} | {source_of(d, e) for d, e in OPERATOR_EMITS.items()}
)


def table_arn(spec: constants.TableSpec) -> str:
    return ARNS.table(ARNS.tables[spec.name])


def test_deal_reads_the_players_table_before_seating_them(harness: Harness) -> None:
    """The first real match: deal reads each player's guard item on ``TableFormed``.

    Granted only UpdateItem there, deal was denied GetItem, round 1 was never
    dealt and the table's players could never queue again.
    """
    harness.start_table("t1", PLAYERS)
    assert harness.table("t1").round == 1
    players = harness.aws.iam.arns.table(harness.aws.settings.players_table)
    assert ("deal", GET, players) in harness.aws.iam.used


@pytest.fixture
def without_deal_player_reads(moto_url: str) -> Iterator[Harness]:
    """A stack whose deal role lacks GetItem on the players table (the defect, put back)."""
    reset(moto_url)
    saved = dict(os.environ)
    deal = FUNCTIONS["deal"]
    tables = {**deal.tables, constants.PLAYERS: (UPDATE,)}
    inbox = Inbox()
    aws = LocalAws(
        moto_url,
        inbox.deliver,
        served_issuer(),
        functions={**FUNCTIONS, "deal": replace(deal, tables=tables)},
    )
    try:
        yield Harness(aws, inbox)
    finally:
        aws.close()
        os.environ.clear()
        os.environ.update(saved)


def test_a_grant_removed_from_a_spec_fails_the_check_naming_the_denied_action(
    without_deal_player_reads: Harness,
) -> None:
    harness = without_deal_player_reads
    harness.start_table("t1", PLAYERS)
    assert harness.table("t1").round == 0, "deal was denied: round 1 is never dealt"
    with pytest.raises(AssertionError) as failure:
        harness.aws.iam.assert_none_denied()
    message = str(failure.value)
    assert "deal: User: arn:aws:sts::123456789012:assumed-role/deal-role/deal" in message
    assert "is not authorized to perform: dynamodb:GetItem on resource: " in message
    assert harness.aws.settings.players_table in message
    assert harness.aws.dispatcher.errors, "the denied message is retried, as AWS would"


def test_a_denied_call_raises_access_denied_as_aws_answers(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from services.common.settings import LedgerClient
    from services.ledger import handler as ledger_handler

    client = LedgerClient(points_per_booking=1, points_per_day=1)
    monkeypatch.setattr(ledger_handler.service(), "_clients", {"rummy": client})
    iam = harness.aws.iam
    iam.roles["ledger-api"] = replace(iam.roles["ledger-api"], statements=())
    with pytest.raises(ClientError) as denied:
        ledger_handler.api(
            {"op": "balance", "account": "p1"}, LambdaContext("ledger-api", alias="rummy")
        )
    assert denied.value.response["Error"]["Code"] == "AccessDeniedException"
    assert iam.denials == [
        f"ledger-api: User: {iam.roles['ledger-api'].arn} is not authorized to perform: "
        f"dynamodb:GetItem on resource: {iam.arns.table(harness.aws.settings.ledger_table)} "
        "because no identity-based policy allows the dynamodb:GetItem action"
    ]
    iam.denials.clear()


# --- how requests are authorized -----------------------------------------------------


def test_a_transaction_is_authorized_item_by_item() -> None:
    requested = calls(
        "dynamodb",
        "TransactWriteItems",
        {
            "TransactItems": [
                {"Update": {"TableName": "dev-canasta-games"}},
                {"Put": {"TableName": "dev-canasta-games"}},
                {"Put": {"TableName": "dev-canasta-ledger"}},
                {"ConditionCheck": {"TableName": "dev-canasta-players"}},
            ]
        },
        ARNS,
    )
    assert requested == [
        Call(UPDATE, table_arn(constants.GAMES)),
        Call(PUT, table_arn(constants.GAMES)),
        Call(PUT, table_arn(constants.LEDGER)),
        Call("dynamodb:ConditionCheckItem", table_arn(constants.PLAYERS)),
    ]
    turn = role("turn-events", FUNCTIONS["turn-events"], ARNS)
    # turn-events may write games items but not the ledger (the joker button is turn-ws's).
    assert turn.denied(requested) == [requested[2], requested[3]]


def test_a_query_on_an_index_needs_the_index_arn() -> None:
    (call,) = calls("dynamodb", "Query", {"TableName": "dev-canasta-games", "IndexName": "i"}, ARNS)
    assert call.resource == table_arn(constants.GAMES) + "/index/i"
    assert role("turn-ws", FUNCTIONS["turn-ws"], ARNS).denied([call]) == [call]


def test_a_push_is_manage_connections_on_this_stages_connection() -> None:
    (call,) = calls("execute-api", "PostToConnection", {"ConnectionId": "abc="}, ARNS)
    assert call == Call(
        "execute-api:ManageConnections",
        f"arn:aws:execute-api:eu-west-1:{ACCOUNT}:local/local/POST/@connections/abc=",
    )
    pusher = role("score", FUNCTIONS["score"], ARNS)
    assert pusher.denied([call]) == []
    other_stage = replace(call, resource=call.resource.replace("/local/POST/", "/prod/POST/"))
    deleting = replace(call, resource=call.resource.replace("/POST/", "/DELETE/"))
    assert pusher.denied([other_stage, deleting]) == [other_stage, deleting]
    assert role("relay", FUNCTIONS["relay"], ARNS).denied([call]) == [call]


def test_a_timer_needs_its_schedule_and_to_pass_the_scheduler_role_to_the_scheduler() -> None:
    requested = calls(
        "scheduler",
        "CreateSchedule",
        {
            "Name": "turn-t1-3",
            "GroupName": "dev-canasta-turn-timers",
            "Target": {"RoleArn": ARNS.scheduler_role},
        },
        ARNS,
    )
    assert [c.action for c in requested] == ["scheduler:CreateSchedule", "iam:PassRole"]
    assert requested[1].context == {"iam:PassedToService": "scheduler.amazonaws.com"}
    turn = role("turn-timers", FUNCTIONS["turn-timers"], ARNS)
    assert turn.denied(requested) == []
    elsewhere = replace(requested[1], context={"iam:PassedToService": "lambda.amazonaws.com"})
    other_group = replace(requested[0], resource=ARNS.schedule("default", "turn-t1-3"))
    assert turn.denied([elsewhere, other_group]) == [elsewhere, other_group]
    assert role("relay", FUNCTIONS["relay"], ARNS).denied(requested) == requested


def test_tickets_are_started_and_answered_on_the_state_machine_only_by_matchmaking() -> None:
    """The route that queues starts a ticket and, on ``leave``, ends it; the queue's consumer
    ends the tickets it seats; no other function touches the state machine."""
    start = calls("states", "StartExecution", {"stateMachineArn": ARNS.state_machine}, ARNS)
    answer = calls("states", "SendTaskSuccess", {"taskToken": "x", "output": "{}"}, ARNS)
    assert role("matchmaking-ws", FUNCTIONS["matchmaking-ws"], ARNS).denied(start + answer) == []
    for key, spec in FUNCTIONS.items():
        if not key.startswith("matchmaking"):
            assert role(key, spec, ARNS).denied(start + answer) == start + answer, key
    assert (
        role("matchmaking-events", FUNCTIONS["matchmaking-events"], ARNS).denied(start + answer)
        == start
    )


def test_a_timer_message_is_sent_only_to_the_timer_queue() -> None:
    url = f"https://sqs.eu-west-1.amazonaws.com/{ACCOUNT}/dev-canasta-turn-timers"
    (call,) = calls("sqs", "SendMessage", {"QueueUrl": url, "MessageBody": "{}"}, ARNS)
    assert call == Call("sqs:SendMessage", ARNS.timer_queue)
    other = replace(call, resource=call.resource.replace("turn-timers", "deal"))
    assert role("turn-ws", FUNCTIONS["turn-ws"], ARNS).denied([call, other]) == [other]
    assert role("relay", FUNCTIONS["relay"], ARNS).denied([call]) == [call]


def test_a_call_with_no_authorization_model_is_refused() -> None:
    with pytest.raises(Unmodelled, match="sqs:DeleteMessage"):
        calls("sqs", "DeleteMessage", {"QueueUrl": "q", "ReceiptHandle": "h"}, ARNS)


# --- who may put which event on the bus ------------------------------------------------


def put(*pairs: tuple[str, str]) -> list[Call]:
    """The authorizations of one PutEvents call with an entry per (source, detail-type)."""
    entries = [
        {"EventBusName": ARNS.event_bus, "Source": s, "DetailType": d, "Detail": "{}"}
        for s, d in pairs
    ]
    return calls("events", "PutEvents", {"Entries": entries}, ARNS)


def test_each_entry_of_put_events_is_authorized_with_its_source_and_detail_type() -> None:
    requested = put(("canasta.score", "MatchEnded"), ("canasta.ledger", "LedgerSettled"))
    bus = ARNS.bus(ARNS.event_bus)
    assert requested == [
        Call("events:PutEvents", bus, {EVENT_SOURCE: s, EVENT_DETAIL_TYPE: d})
        for s, d in (("canasta.score", "MatchEnded"), ("canasta.ledger", "LedgerSettled"))
    ]
    ledger = role("ledger-events", FUNCTIONS["ledger-events"], ARNS)
    assert ledger.denied(requested) == [requested[0]]


@pytest.mark.parametrize("key", sorted(FUNCTIONS))
def test_only_the_relay_may_put_match_ended_as_the_score_service(key: str) -> None:
    """The attack: connect, disconnect, relay and ledger-events could all put a
    ``MatchEnded`` of ``canasta.score``; only the relay publishes the score's outbox."""
    forged = put(("canasta.score", "MatchEnded"))
    denied = role(key, FUNCTIONS[key], ARNS).denied(forged)
    assert denied == ([] if key == "relay" else forged)


@pytest.mark.parametrize("key", sorted(k for k, spec in FUNCTIONS.items() if emitted(spec)))
def test_each_function_may_put_its_own_events_and_no_other_pairing(key: str) -> None:
    own = [(s, d) for s, types in emitted(FUNCTIONS[key]).items() for d in types]
    function = role(key, FUNCTIONS[key], ARNS)
    assert function.denied(put(*own)) == []
    sources = {s for s, _ in own}
    types = {d for _, d in own}
    # Each of its detail-types under any other source, and any other detail-type under
    # each of its sources, is refused.
    others = [(s, d) for s in ALL_SOURCES for d in types if (s, d) not in own]
    others += [(s, d) for s in sources for d in EVENT_TYPES if (s, d) not in own]
    assert others, key
    assert function.denied(put(*others)) == put(*others)


def test_an_entry_without_source_or_detail_type_never_matches_a_condition() -> None:
    """StringEquals on a key the request does not carry does not match, as on AWS."""
    connect = role("connect", FUNCTIONS["connect"], ARNS)
    (call,) = put(("canasta.connect", "PlayerConnected"))
    missing = [replace(call, context={EVENT_SOURCE: "canasta.connect"}), replace(call, context={})]
    assert connect.denied(missing) == missing
    # Keys ignore case; values do not.
    upper = replace(call, context={k.upper(): v for k, v in call.context.items()})
    assert connect.denied([upper]) == []
    other_case = replace(call, context={**call.context, EVENT_SOURCE: "Canasta.Connect"})
    assert connect.denied([other_case]) == [other_case]


def test_a_handler_putting_another_service_s_event_is_denied_on_the_bus(
    harness: Harness,
) -> None:
    """Through the boto3 client a handler uses, under the ledger's role: the forged
    ``MatchEnded`` is refused before it reaches the bus, and named."""
    iam = harness.aws.iam
    capture = harness.capture()
    entry = {
        "EventBusName": harness.aws.settings.event_bus,
        "Source": "canasta.score",
        "DetailType": "MatchEnded",
        "Detail": "{}",
    }
    with acting_as(iam.roles["ledger-events"]), pytest.raises(ClientError) as denied:
        harness.aws.client("events").put_events(Entries=[entry])
    assert denied.value.response["Error"]["Code"] == "AccessDeniedException"
    (denial,) = iam.denials
    assert denial.startswith("ledger-events: User: ") and "events:PutEvents" in denial
    iam.denials.clear()
    assert capture.of_type("MatchEnded") == []
