"""The operators' console on the local stack, under the operators' own policies.

Matches are played through the handlers; the console then finds them by player and
by table, replays them, shows a seat's view, and acts on them. Every console call
runs under the role the stack's operator policies grant (``local/iam.py``), read
only unless the test acts, so a permission the console lacks fails here as it would
on AWS.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from local.aws import REGION
from local.iam import acting_as, operator_role
from local.resources import table_names
from ops.__main__ import main
from ops.console import ActionRefused, Console, CreditLimit
from ops.stage import Stage
from services.common import constants
from shared_engine import apply, parse_action, start_round
from shared_engine.tiles import JOKER, NAMES, TILE_KINDS
from tests.integration.clients import play_match
from tests.integration.harness import Harness
from tests.integration.machine import local_harness, settle_until
from tests.integration.test_matchmaking_flow import (
    all_executions_ended,
    fund,
    ledger,
    player_item,
    queue,
    seated_views,
)

pytestmark = pytest.mark.integration

STAKE = 100
FUNDS = 1000


@pytest.fixture
def ops(moto_url: str) -> Iterator[Harness]:
    with local_harness(moto_url) as harness:
        yield harness


def stage_of(harness: Harness) -> Stage:
    return Stage(
        client=harness.aws.client,
        client_at=lambda service, url: boto3.client(service, endpoint_url=url, region_name=REGION),
        tables=table_names(harness.aws.settings),
        operator="support-ana",
        connections_url=harness.aws.endpoint.url,
    )


def console_of(harness: Harness, clock: Any = time.time) -> Console:
    return Console(stage_of(harness), clock=clock, credit_limit=CreditLimit(points=500, jokers=2))


def reading(harness: Harness) -> Any:
    return acting_as(operator_role(harness.aws.iam.arns, actions=False))


def acting(harness: Harness) -> Any:
    return acting_as(operator_role(harness.aws.iam.arns, actions=True))


def arena_match(
    harness: Harness, players: list[str], *, play: bool = True
) -> tuple[str, dict[int, str]]:
    """Four funded players (``Name`` is each id capitalized) at an arena table."""
    for player in players:
        fund(harness, player, FUNDS)
    conns = {}
    for player in players:
        conn = harness.connect(player, token=harness.token(player, player.capitalize()))
        assert conn is not None
        conns[player] = conn
        queue(harness, conn, mode="arena", stake=STAKE)
    settle_until(
        harness,
        lambda: seated_views(harness, list(conns.values()))() and all_executions_ended(harness)(),
    )
    view = harness.last(conns[players[0]])
    assert view is not None
    table_id = str(view["table_id"])
    table = harness.table(table_id)
    seats = {seat: conns[p.player_id] for seat, p in table.seats.items()}
    if play:
        play_match(harness, seats, table_id)
        settle_until(harness, lambda: ledger(harness).balance(f"escrow:{table_id}").points == 0)
    return table_id, seats


def test_a_played_match_is_found_replayed_and_seen_as_a_seat_saw_it(ops: Harness) -> None:
    table_id, _ = arena_match(ops, ["ana", "bo", "cy", "di"])
    console = console_of(ops)
    with reading(ops):
        assert console.find_players("Bo") == ["bo"]  # by name (the index)
        assert console.find_players("bo") == ["bo"]  # by id
        assert console.find_players("nobody") == []
        report = console.player("bo")
        match = console.match(table_id)
        seat = next(int(s) for s, p in match["seats"].items() if p["player_id"] == "cy")
        after = 7
        seen = console.match(table_id, seat=seat, after=after, round_number=1)["seat_view"]
        printed = Lines()
        command = ["--local", ops.aws.moto_url, "match", table_id, "--as", str(seat), str(after)]
        assert main([*command, "--round", "1"], out=printed, console=console) == 0
    assert f"seat {seat} after move {after} of round 1:" in printed.text
    assert "replay: verified" in printed.text

    # By player: the balance, and the match with each entry it booked.
    (found,) = [m for m in report["matches"] if m["table_id"] == table_id]
    assert found["status"] == "finished" and found["mode"] == "arena"
    purposes = sorted(e["purpose"] for e in found["entries"])
    won = found["winner"] == "AB"[(found["seat"] + 1) % 2]
    assert purposes == (["escrow", "payout"] if won else ["escrow"])
    assert report["balance"]["points"] == ledger(ops).balance("bo").points
    assert report["balance"]["points"] == FUNDS + (STAKE if won else -STAKE)

    # By table: every logged move in order, and a replay that meets every stored fact.
    logs = ops.logs(table_id)
    assert sum(len(r["moves"]) for r in match["rounds"]) == len(logs) > after
    assert match["replay"] == {
        "verified": True,
        "rounds": len(match["rounds"]),
        "moves": len(logs),
        "mismatches": [],
    }
    assert all(r["seed"] for r in match["rounds"])  # scored: the seeds are public now

    # A seat's view after move N: its own tiles, only counts of the others'.
    assert (seen["seat"], seen["after"]) == (seat, after)
    assert seen["revealed"] is None
    assert sorted(seen["hand_sizes"]) == ["1", "2", "3", "4"]
    assert "hands" not in seen and "stock" not in seen
    assert len(seen["hand"]) == seen["hand_sizes"][str(seat)]
    assert {k for k in seen if "hand" in k} == {"hand", "hand_sizes"}
    (round_item,) = ops.items(table_id, "ROUND#0001")
    state = start_round(round_item["seed"]["S"], dealer=int(round_item["dealer"]["N"]))
    for entry in ops.logs(table_id, 1)[:after]:
        state, _ = apply(
            state, int(entry["seat"]["N"]), parse_action(json.loads(entry["action"]["S"]))
        )
    assert sorted(seen["hand"]) == sorted(NAMES[t] for t in state.hands[seat - 1])


def test_a_tampered_log_entry_or_commitment_is_reported_not_passed(ops: Harness) -> None:
    table_id, _ = arena_match(ops, ["eve", "fay", "gus", "hal"])
    console = console_of(ops)
    db = ops.aws.client("dynamodb")
    games = ops.aws.settings.games_table
    first = ops.logs(table_id, 1)[0]
    action = json.loads(first["action"]["S"])
    assert action["type"] == "discard"  # the round opens with the first player's discard
    (round_item,) = ops.items(table_id, "ROUND#0001")
    dealt = start_round(round_item["seed"]["S"], dealer=int(round_item["dealer"]["N"]))
    held = {NAMES[t] for t in dealt.hands[int(first["seat"]["N"]) - 1]}
    other = next(NAMES[t] for t in sorted(TILE_KINDS) if t != JOKER and NAMES[t] not in held)
    tampered = {**first, "action": {"S": json.dumps({**action, "tile": other})}}
    db.put_item(TableName=games, Item=tampered)
    with reading(ops):
        report = console.match(table_id)
    assert report["replay"]["verified"] is False
    assert any("move 1 " in line for line in report["replay"]["mismatches"]), report["replay"]

    db.put_item(TableName=games, Item=first)  # the log restored, the commitment changed
    db.put_item(TableName=games, Item={**round_item, "commitment": {"S": "0" * 64}})
    with reading(ops):
        report = console.match(table_id)
    assert report["replay"]["mismatches"] == [
        "round 1: the seed does not produce the published commitment"
    ]
    out = Lines()
    with reading(ops):
        status = main(["--local", ops.aws.moto_url, "match", table_id], out=out, console=console)
    assert status == 3 and "MISMATCH" in out.text


def test_voiding_an_arena_match_returns_every_stake_once(ops: Harness) -> None:
    players = ["ike", "jo", "kim", "lu"]
    table_id, _ = arena_match(ops, players)
    book = ledger(ops)
    before = {p: len(book.entries(p)) for p in players}
    console = console_of(ops)

    with reading(ops), pytest.raises(ClientError, match="AccessDenied"):
        console.carry_out(console.plan_void(table_id, "read-only staff cannot act"))
    # The read policy denied the ledger's writes (and so nothing was booked): expected.
    denied = ops.aws.iam.denials
    assert denied and all(d.startswith("operator-read: ") and "canasta-ledger" in d for d in denied)
    denied.clear()
    assert {p: book.balance(p).points for p in players} != dict.fromkeys(players, FUNDS)

    with acting(ops):
        plan = console.plan_void(table_id, "ticket 4711: the player was disconnected by us")
        assert plan.done_before is False and plan.changes["sum"] == 0
        assert console.carry_out(plan)["outcome"] == "applied"
        again = console.plan_void(table_id, "ticket 4711, twice")
        assert again.done_before is True
        assert console.carry_out(again)["outcome"] == "done before"
    assert {p: book.balance(p).points for p in players} == dict.fromkeys(players, FUNDS)
    assert book.balance(f"escrow:{table_id}").points == 0
    for player in players:
        assert len(book.entries(player)) > before[player]  # reversed, never deleted
        stored, summed = book.reconcile(player)
        assert stored == summed
    with reading(ops):
        trail = console.audit()
    assert [(a["action"], a["target"], a["outcome"]) for a in trail] == [
        ("void", table_id, "applied"),
        ("void", table_id, "done before"),
    ]
    assert trail[0]["operator"] == "support-ana" and trail[0]["reason"].startswith("ticket 4711")


def test_closing_a_stuck_table_frees_its_players_and_refunds_the_stakes(ops: Harness) -> None:
    players = ["mo", "ned", "oz", "pam"]
    table_id, seats = arena_match(ops, players, play=False)
    later = console_of(ops, clock=lambda: time.time() + 3600)  # an hour on: the turn is overdue
    with reading(ops):
        stuck = later.stuck()
    assert [t["table_id"] for t in stuck["tables"]] == [table_id]
    with acting(ops):
        closed = later.carry_out(later.plan_close(table_id, "stuck for an hour"))
        assert closed["outcome"] == "applied"
        assert later.carry_out(later.plan_close(table_id, "again"))["outcome"] == "done before"
    assert ops.table(table_id).status == "aborted"
    settle_until(ops, lambda: all("table_id" not in player_item(ops, p) for p in players))
    settle_until(ops, lambda: all(ledger(ops).balance(p).points == FUNDS for p in players))
    view = ops.last(seats[1])
    assert view is not None and view["match"]["status"] == "aborted"  # the players were shown
    with reading(ops):
        assert later.stuck()["tables"] == []
        actions = [(a["action"], a["outcome"]) for a in later.audit()]
    assert actions == [("close", "applied"), ("close", "done before")]


def test_credits_within_the_limit_once_and_kicks_are_audited(ops: Harness) -> None:
    fund(ops, "quin", 100)
    conn = ops.connect("quin")
    assert conn is not None
    console = console_of(ops)
    with acting(ops):
        with pytest.raises(ActionRefused, match="limit"):
            console.plan_credit("quin", 501, 0, "too generous")
        with pytest.raises(ActionRefused, match="not a player"):
            console.plan_credit("bot:X-1", 10, 0, "a bot")
        plan = console.plan_credit("quin", 300, 1, "ticket 12: lost points in an outage")
        assert console.carry_out(plan)["balance"] == {"points": 400, "jokers": 1}
        twice = console.plan_credit("quin", 300, 1, "ticket 12: lost points in an outage")
        assert twice.done_before and console.carry_out(twice)["outcome"] == "done before"
        with pytest.raises(ActionRefused, match="does not cover"):
            console.carry_out(console.plan_credit("quin", -500, 0, "take back too much"))
        kicked = console.carry_out(console.plan_kick(conn, "abusive messages"))
        assert kicked["outcome"] == "applied" and kicked["changes"] == {"player_id": "quin"}
        assert console.carry_out(console.plan_kick(conn, "again"))["outcome"] == "done before"
    assert ledger(ops).balance("quin").points == 400
    assert ledger(ops).balance("house:support").points == -300
    assert conn not in ops.inbox.open
    assert "connection_id" not in player_item(ops, "quin")
    with reading(ops):
        trail = [(a["action"], a["outcome"]) for a in console.audit()]
    assert trail == [
        ("credit", "applied"),
        ("credit", "done before"),
        ("credit", "refused"),
        ("kick", "applied"),
        ("kick", "done before"),
    ]
    audit = ops.aws.client("dynamodb").scan(TableName=constants.AUDIT.name)["Items"]
    assert len(audit) == len(trail)


class Lines:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> None:
        self.text += text


def test_the_command_line_confirms_before_it_acts_and_prints_for_a_person(ops: Harness) -> None:
    fund(ops, "rex", 50)
    assert ops.connect("rex", token=ops.token("rex", "Rex")) is not None
    console = console_of(ops)
    local = ["--local", ops.aws.moto_url]
    credit = [*local, "credit", "rex", "--points", "25", "--reason", "ticket 9"]
    out = Lines()
    with acting(ops):
        refused = main(credit, out=out, ask=lambda _: "no", console=console)
    assert refused == 3 and "not applied" in out.text
    assert ledger(ops).balance("rex").points == 50 and console.audit() == []
    out = Lines()
    with acting(ops):
        applied = main(credit, out=out, ask=lambda _: "yes", console=console)
    assert applied == 0 and "credit rex: applied" in out.text
    assert ledger(ops).balance("rex").points == 75
    out = Lines()
    with reading(ops):
        assert main([*local, "player", "Rex"], out=out, console=console) == 0
        assert main([*local, "player", "nobody"], out=Lines(), console=console) == 1
    assert "Rex (rex): nowhere" in out.text and "75 points" in out.text
    out = Lines()
    with reading(ops):
        assert main([*local, "--json", "audit"], out=out, console=console) == 0
    (record,) = json.loads(out.text)
    assert (record["action"], record["target"], record["outcome"]) == ("credit", "rex", "applied")


def test_stuck_names_the_tables_of_dead_letters_without_taking_them(ops: Harness) -> None:
    sqs = ops.aws.client("sqs")
    url = sqs.create_queue(QueueName="canasta-deal-dlq")["QueueUrl"]
    event = {"detail-type": "TableFormed", "source": "canasta.matchmaking"}
    for table_id in ("t-stuck-1", "t-stuck-2"):
        sqs.send_message(
            QueueUrl=url, MessageBody=json.dumps({**event, "detail": {"table_id": table_id}})
        )
    sqs.send_message(QueueUrl=url, MessageBody="not json")
    console = Console(replace(stage_of(ops), dead_letters={"deal": url}))
    with reading(ops):
        (letters,) = console.stuck()["dead_letters"]
        again = console.stuck()["dead_letters"]
    assert letters == {"queue": "deal", "messages": 3, "tables": ["t-stuck-1", "t-stuck-2"]}
    assert again == [letters], "a look takes nothing: the letters wait for their redrive"
