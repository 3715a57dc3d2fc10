"""The operators' console on the local stack, under the operators' own policies.

Matches are played through the handlers; the console then finds them by player and
by table, replays them, shows a seat's view, and acts on them through the operators'
function, which the local gateway serves as its function URL. Every console read runs
under the role the stack's operator policies grant (``local/iam.py``), and every
request to the function URL is authorized against that role before the function
runs under its own, so a permission the console or the function lacks fails here as
it would on AWS; neither operator role may write a table itself.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest
from aiohttp import web
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from local.aws import REGION
from local.gateway import OPERATOR_HEADER, OPERATOR_PATH, Gateway
from local.iam import acting, acting_as, operator_role
from local.resources import table_names
from ops.__main__ import main
from ops.console import ActionRefused, Console
from ops.stage import LOCAL_SECRET, Stage
from services.common import constants
from services.common.events import MatchEnded, SeatPlayer
from services.common.ledger import Balance
from shared_engine import MatchMode, apply, parse_action, start_round
from shared_engine.tiles import JOKER, NAMES, TILE_KINDS
from tests.integration.clients import play_match
from tests.integration.harness import Harness, served_issuer
from tests.integration.machine import local_harness, settle_until
from tests.integration.test_matchmaking_flow import (
    all_executions_ended,
    fund,
    ledger,
    player_item,
    queue,
    seated_views,
)
from tests.scored import scored_table

pytestmark = pytest.mark.integration

STAKE = 100
FUNDS = 1000
CREDIT_LIMIT = {"CANASTA_OPERATOR_CREDIT_POINTS": "500", "CANASTA_OPERATOR_CREDIT_JOKERS": "2"}


@contextmanager
def serving(gateway: Gateway) -> Iterator[str]:
    """The gateway on 127.0.0.1, its event loop in a thread of its own; its base URL."""
    loop = asyncio.new_event_loop()
    started: list[web.AppRunner] = []
    ready = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        gateway.loop = loop
        runner = web.AppRunner(gateway.app, access_log=None)
        loop.run_until_complete(runner.setup())
        loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", 0).start())
        started.append(runner)
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, name="gateway", daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield f"http://127.0.0.1:{started[0].addresses[0][1]}"
    finally:
        asyncio.run_coroutine_threadsafe(started[0].cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        gateway.close()


class Ops:
    """The local stack with the gateway serving the operators' function URL."""

    def __init__(self, harness: Harness, gateway_url: str) -> None:
        self.harness = harness
        self.gateway_url = gateway_url

    def stage(self, operator: str = "support-ana") -> Stage:
        """The console's stage: its reads under the test's role, its requests to the
        function URL signed as that role (locally the access key names it)."""

        def credentials() -> Credentials:
            role = acting()
            return Credentials(role.function if role else "nobody", LOCAL_SECRET)

        return Stage(
            client=self.harness.aws.client,
            tables=table_names(self.harness.aws.settings),
            region=REGION,
            credentials=credentials,
            operator_url=self.gateway_url + OPERATOR_PATH,
            headers={OPERATOR_HEADER: operator},
        )

    def console(self, clock: Callable[[], float] = time.time) -> Console:
        return Console(self.stage(), clock=clock)

    def reading(self) -> Any:
        return acting_as(operator_role(self.harness.aws.iam.arns, actions=False))

    def acting(self) -> Any:
        return acting_as(operator_role(self.harness.aws.iam.arns, actions=True))

    def denials(self) -> list[str]:
        """The calls IAM denied, taken (every harness fails on any left at its end)."""
        denied = list(self.harness.aws.iam.denials)
        self.harness.aws.iam.denials.clear()
        return denied


@pytest.fixture
def ops(moto_url: str) -> Iterator[Harness]:
    with local_harness(moto_url, **CREDIT_LIMIT) as harness:
        yield harness


@pytest.fixture
def operators(ops: Harness) -> Iterator[Ops]:
    with serving(Gateway(served_issuer(), iam=ops.aws.iam)) as url:
        yield Ops(ops, url)


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


def test_a_played_match_is_found_replayed_and_seen_as_a_seat_saw_it(operators: Ops) -> None:
    ops = operators.harness
    table_id, _ = arena_match(ops, ["ana", "bo", "cy", "di"])
    console = operators.console()
    with operators.reading():
        assert console.find_players("Bo") == ["bo"]  # by name (the index)
        assert console.find_players("bo") == ["bo"]  # by id
        assert console.find_players("nobody") == []
        report = console.player("bo")
        match = console.match(table_id)
        seat = next(int(s) for s, p in match["seats"].items() if p["player_id"] == "cy")
        after = 7
        seen = console.match(table_id, seat=seat, after=after, round_number=1)["seat_view"]
        assert console.match(table_id[:8]) == match  # the short id the local console prints
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
    # Their rating, updated once by this rated match, and their arena stats.
    assert report["rated_matches"] == 1
    (rated,) = report["rating_history"]
    assert rated["table_id"] == table_id and rated["before"] is None
    assert (rated["mode"], rated["after"]) == ("arena", report["stats"]["arena"]["rating"])
    assert report["stats"]["arena"]["matches"] == 1
    assert report["stats"]["arena"]["wins"] == int(won)

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
        state, _ = apply(state, entry.seat, parse_action(entry.action))
    assert sorted(seen["hand"]) == sorted(NAMES[t] for t in state.hands[seat - 1])


def test_a_practice_match_is_found_from_its_player_though_it_booked_nothing(
    operators: Ops,
) -> None:
    """MATCH-3: practice books no entry, so only the player's history lists it."""
    ops = operators.harness
    fund(ops, "pia", FUNDS)
    ops.connect("pia", token=ops.token("pia", "Pia"))
    seats = {
        seat: SeatPlayer(player_id=f"bot:PRAC-{seat}", name=f"Bot {seat}", bot=True)
        for seat in (2, 3, 4)
    }
    seats[1] = SeatPlayer(player_id="pia", name="Pia")
    scored_table(ops.store, "practice-pia", MatchMode.ONE_ROUND, [(900, 100)], seats, at=1e9)
    ended = MatchEnded(
        table_id="practice-pia",
        mode=MatchMode.ONE_ROUND,
        stake=0,
        winner="A",
        totals={"A": 900, "B": 100},
        rounds_played=1,
        seats={str(seat): player for seat, player in seats.items()},  # type: ignore[misc]
    )
    ops.publish("MatchEnded", ended.model_dump(mode="json"), "canasta.score")
    ops.settle()
    with operators.reading():
        report = operators.console().player("pia")
    (found,) = report["matches"]
    assert found["table_id"] == "practice-pia" and found["entries"] == []
    assert report["stats"] == {} and report["rating_history"] == []
    # A short id finds its table, unless it starts two.
    scored_table(ops.store, "practice-pib", MatchMode.ONE_ROUND, [(900, 100)], seats, at=1e9)
    with operators.reading():
        assert operators.console().match("practice-pia")["table_id"] == "practice-pia"
        with pytest.raises(ActionRefused) as refused:
            operators.console().match("practice-pi")
    assert refused.value.code == "ambiguous_table"


def test_a_tampered_log_entry_or_commitment_is_reported_not_passed(operators: Ops) -> None:
    ops = operators.harness
    table_id, _ = arena_match(ops, ["eve", "fay", "gus", "hal"])
    console = operators.console()
    db = ops.aws.client("dynamodb")
    games = ops.aws.settings.games_table
    first = ops.items(table_id, "LOG#0001#")[0]  # the first turn's item
    moves = json.loads(first["moves"]["S"])
    shown = moves[0]["public"]
    assert shown["type"] == "discard"  # the round opens with the first player's discard
    (round_item,) = ops.items(table_id, "ROUND#0001")
    dealt = start_round(round_item["seed"]["S"], dealer=int(round_item["dealer"]["N"]))
    held = {NAMES[t] for t in dealt.hands[shown["seat"] - 1]}
    other = next(NAMES[t] for t in sorted(TILE_KINDS) if t != JOKER and NAMES[t] not in held)
    moves[0] = {**moves[0], "public": {**shown, "tile": other}}
    tampered = {**first, "moves": {"S": json.dumps(moves)}}
    db.put_item(TableName=games, Item=tampered)
    with operators.reading():
        report = console.match(table_id)
    assert report["replay"]["verified"] is False
    assert any("move 1 " in line for line in report["replay"]["mismatches"]), report["replay"]

    db.put_item(TableName=games, Item=first)  # the log restored, the commitment changed
    db.put_item(TableName=games, Item={**round_item, "commitment": {"S": "0" * 64}})
    with operators.reading():
        report = console.match(table_id)
    assert report["replay"]["mismatches"] == [
        "round 1: the seed does not produce the published commitment"
    ]
    out = Lines()
    with operators.reading():
        status = main(["--local", ops.aws.moto_url, "match", table_id], out=out, console=console)
    assert status == 3 and "MISMATCH" in out.text


# --- no operator writes a table: the attacks of a policy that granted table writes --------

WRITES = ("PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems")


def direct_write(db: Any, operation: str, table: str, key: dict[str, Any]) -> None:
    """The write an operator's own credentials would make, bypassing the function: an
    unconditioned put over a record, a balance raised with no entry, a delete."""
    item = {**key, "operator": {"S": "mallory"}, "points": {"N": str(10**9)}}
    add = {"UpdateExpression": "ADD points :p", "ExpressionAttributeValues": {":p": {"N": "1"}}}
    if operation == "PutItem":
        db.put_item(TableName=table, Item=item)
    elif operation == "UpdateItem":
        db.update_item(TableName=table, Key=key, **add)
    elif operation == "DeleteItem":
        db.delete_item(TableName=table, Key=key)
    else:
        db.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": table, "Item": item}},
                {"Update": {"TableName": table, "Key": key, **add}},
                {"Delete": {"TableName": table, "Key": key}},
            ][: 1 + WRITES.index(operation) % 3]
        )


@pytest.mark.parametrize("acts", [False, True], ids=["read role", "act role"])
def test_no_operator_role_may_write_the_audit_the_ledger_or_the_games_table(
    operators: Ops, acts: bool
) -> None:
    """IAM cannot require a condition expression (AWS-LOCAL-NOTES, trap 22): under a
    policy that grants table writes, an unconditioned put rewrote an audit record and an
    update added 10^9 points with no entry. Neither role grants any table write now:
    each write, and each item of a transaction, is denied before it is sent."""
    ops = operators.harness
    fund(ops, "quin", 100)
    assert ops.connect("quin") is not None
    console = operators.console()
    with operators.acting():
        plan = console.plan_credit("quin", 10, 0, "ticket 7")
        console.carry_out(plan)
    audit = ops.aws.client("dynamodb").scan(TableName=constants.AUDIT.name)["Items"]
    (record,) = [i for i in audit if i["pk"]["S"].startswith("AUDIT#")]
    settings = ops.aws.settings
    targets = {
        settings.audit_table: {"pk": record["pk"], "sk": record["sk"]},
        settings.ledger_table: {"pk": {"S": "ACCOUNT#quin"}, "sk": {"S": "BALANCE"}},
        settings.games_table: {"pk": {"S": "TABLE#t1"}, "sk": {"S": "TABLE"}},
    }
    before = {table: item_at(ops, table, key) for table, key in targets.items()}
    db = ops.aws.client("dynamodb")
    role = operator_role(ops.aws.iam.arns, actions=acts)
    refused = []
    with acting_as(role):
        for table, key in targets.items():
            for operation in (*WRITES, "TransactPut", "TransactUpdate"):
                kind = {"TransactPut": WRITES[3], "TransactUpdate": WRITES[3]}.get(operation)
                with pytest.raises(ClientError, match="AccessDenied"):
                    direct_write(db, kind or operation, table, key)
                refused.append((table, operation))
    assert len(refused) == 3 * 6
    denied = operators.denials()
    assert len(denied) == len(refused)
    assert all(d.startswith(f"{role.function}: ") for d in denied)
    assert {table: item_at(ops, table, key) for table, key in targets.items()} == before
    assert ledger(ops).balance("quin") == Balance(110, 0)


def item_at(harness: Harness, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
    found = harness.aws.client("dynamodb").get_item(TableName=table, Key=key, ConsistentRead=True)
    return found.get("Item")


def test_the_read_role_may_not_invoke_the_operators_function(operators: Ops) -> None:
    """The function URL is authorized as AWS does before the function runs: the read
    policy grants neither ``lambda:InvokeFunctionUrl`` nor ``lambda:InvokeFunction``."""
    ops = operators.harness
    table_id, _ = arena_match(ops, ["ike", "jo", "kim", "lu"], play=False)
    console = operators.console()
    with operators.reading(), pytest.raises(ActionRefused) as refused:
        console.plan_void(table_id, "read-only staff cannot act")
    assert refused.value.code == "access_denied"
    (denied,) = operators.denials()
    assert denied.startswith("operator-read: ") and "lambda:InvokeFunctionUrl" in denied
    assert "lambda:InvokeFunction " in denied
    with pytest.raises(ActionRefused) as unknown:
        console.plan_void(table_id, "no role at all")
    assert unknown.value.code == "access_denied"
    assert operators.denials() == ["nobody: The security token included in the request is invalid."]
    assert ops.table(table_id).status == "playing"


# --- the actions, end to end through the function -----------------------------------------


def test_voiding_an_arena_match_returns_every_stake_once(operators: Ops) -> None:
    ops = operators.harness
    players = ["ike", "jo", "kim", "lu"]
    table_id, _ = arena_match(ops, players)
    book = ledger(ops)
    before = {p: len(book.entries(p)) for p in players}
    assert {p: book.balance(p).points for p in players} != dict.fromkeys(players, FUNDS)
    console = operators.console()
    with operators.acting():
        plan = console.plan_void(table_id, "ticket 4711: the player was disconnected by us")
        assert plan.done_before is False and plan.changes["sum"] == 0
        applied = console.carry_out(plan)
        assert applied["outcome"] == "applied"
        assert console.carry_out(plan) == applied, "a repeat of the request answers the first"
        again = console.plan_void(table_id, "ticket 4711, twice")
        assert again.done_before is True
        assert console.carry_out(again)["outcome"] == "done before"
    assert {p: book.balance(p).points for p in players} == dict.fromkeys(players, FUNDS)
    assert book.balance(f"escrow:{table_id}").points == 0
    for player in players:
        assert len(book.entries(player)) > before[player]  # reversed, never deleted
        stored, summed = book.reconcile(player)
        assert stored == summed
    with operators.reading():
        trail = console.audit()
    assert [(a["action"], a["target"], a["outcome"]) for a in trail] == [
        ("void", table_id, "applied"),
        ("void", table_id, "done before"),
    ]
    assert trail[0]["operator"] == "support-ana" and trail[0]["reason"].startswith("ticket 4711")


def test_closing_a_stuck_table_frees_its_players_and_refunds_the_stakes(operators: Ops) -> None:
    ops = operators.harness
    players = ["mo", "ned", "oz", "pam"]
    table_id, seats = arena_match(ops, players, play=False)
    later = operators.console(clock=lambda: time.time() + 3600)  # the turn is overdue
    with operators.reading():
        stuck = later.stuck()
    assert [t["table_id"] for t in stuck["tables"]] == [table_id]
    with operators.acting():
        closed = later.carry_out(later.plan_close(table_id, "stuck for an hour"))
        assert closed["outcome"] == "applied"
        assert later.carry_out(later.plan_close(table_id, "again"))["outcome"] == "done before"
    assert ops.table(table_id).status == "aborted"
    (closing,) = ops.items(table_id, constants.CLOSED_SK)
    assert closing["operator"]["S"] == "support-ana"
    settle_until(ops, lambda: all("table_id" not in player_item(ops, p) for p in players))
    settle_until(ops, lambda: all(ledger(ops).balance(p).points == FUNDS for p in players))
    view = ops.last(seats[1])
    assert view is not None and view["match"]["status"] == "aborted"  # the players were shown
    with operators.reading():
        assert later.stuck()["tables"] == []
        # The audit is kept by the day it was written, not by the overdue clock's day.
        actions = [(a["action"], a["outcome"]) for a in operators.console().audit()]
    assert actions == [("close", "applied"), ("close", "done before")]


def test_a_close_confirmed_before_a_move_refuses_and_the_table_plays_on(operators: Ops) -> None:
    ops = operators.harness
    table_id, seats = arena_match(ops, ["rae", "sol", "tam", "uma"], play=False)
    console = operators.console()
    with operators.acting():
        plan = console.plan_close(table_id, "looks stuck")
    table = ops.table(table_id)
    (conn, view) = next(
        (c, v)
        for seat, c in seats.items()
        if (v := ops.last(c)) and v["view"]["turn"] == seat and v["view"]["legal_actions"]
    )
    ops.play(conn, table_id, view["version"], view["view"]["legal_actions"][0])
    assert ops.table(table_id).version == table.version + 1
    with operators.acting(), pytest.raises(ActionRefused) as refused:
        console.carry_out(plan)
    assert refused.value.code == "plan_changed"
    assert ops.table(table_id).status == "playing"
    with operators.reading():
        (record,) = console.audit()
    assert (record["outcome"], record["changes"]["error"]) == ("refused", "plan_changed")


def test_credits_within_the_limit_once_and_kicks_are_audited(operators: Ops) -> None:
    ops = operators.harness
    fund(ops, "quin", 100)
    conn = ops.connect("quin")
    assert conn is not None
    console = operators.console()
    with operators.acting():
        with pytest.raises(ActionRefused, match="limit"):
            console.plan_credit("quin", 501, 0, "too generous")
        with pytest.raises(ActionRefused, match="limit"):
            console.plan_credit("quin", -501, 0, "too stern")
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
    with operators.reading():
        trail = [(a["action"], a["outcome"], a["operator"]) for a in console.audit()]
    assert trail == [
        ("credit", "applied", "support-ana"),
        ("credit", "done before", "support-ana"),
        ("credit", "refused", "support-ana"),
        ("kick", "applied", "support-ana"),
        ("kick", "done before", "support-ana"),
    ]
    audit = ops.aws.client("dynamodb").scan(TableName=constants.AUDIT.name)["Items"]
    records = [i for i in audit if i["pk"]["S"].startswith("AUDIT#")]
    assert len(records) == len(trail) == len(audit) // 2  # each beside its action id's marker


class Lines:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> None:
        self.text += text


def test_the_command_line_confirms_before_it_acts_and_prints_for_a_person(
    operators: Ops,
) -> None:
    ops = operators.harness
    fund(ops, "rex", 50)
    assert ops.connect("rex", token=ops.token("rex", "Rex")) is not None
    console = operators.console()
    local = ["--local", ops.aws.moto_url]
    credit = [*local, "credit", "rex", "--points", "25", "--reason", "ticket 9"]
    out = Lines()
    with operators.acting():
        refused = main(credit, out=out, ask=lambda _: "no", console=console)
    assert refused == 3 and "not applied" in out.text
    assert ledger(ops).balance("rex").points == 50 and console.audit() == []
    out = Lines()
    with operators.acting():
        applied = main(credit, out=out, ask=lambda _: "yes", console=console)
    assert applied == 0 and "credit rex: applied" in out.text
    assert ledger(ops).balance("rex").points == 75
    out = Lines()
    with operators.reading():
        assert main([*local, "player", "Rex"], out=out, console=console) == 0
        assert main([*local, "player", "nobody"], out=Lines(), console=console) == 1
    assert "Rex (rex): nowhere" in out.text and "75 points" in out.text
    out = Lines()
    with operators.reading():
        assert main([*local, "--json", "audit"], out=out, console=console) == 0
    (record,) = json.loads(out.text)
    assert (record["action"], record["target"], record["outcome"]) == ("credit", "rex", "applied")


def test_every_refusal_is_one_line_never_a_traceback(
    operators: Ops, capsys: pytest.CaptureFixture[str]
) -> None:
    ops = operators.harness
    fund(ops, "vic", 10)
    assert ops.connect("vic") is not None
    console = operators.console()
    local = ["--local", ops.aws.moto_url]
    cases = {
        "insufficient_balance": (
            operators.acting(),
            [*local, "credit", "vic", "--points", "-20", "--reason", "r", "--yes"],
        ),
        "access_denied": (
            operators.reading(),
            [*local, "credit", "vic", "--points", "5", "--reason", "r", "--yes"],
        ),
        "no_table": (operators.acting(), [*local, "close", "t-none", "--reason", "r", "--yes"]),
        "no_player": (operators.reading(), [*local, "player", "nobody"]),
    }
    for code, (role, argv) in cases.items():
        with role:
            assert main(argv, out=Lines(), console=console) == 1
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith(f"error: {code}: "), line
    operators.denials()
    gone = Console(replace(operators.stage(), operator_url="http://127.0.0.1:9/operator"))
    assert main([*local, "kick", "c1", "--reason", "r", "--yes"], console=gone) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: unreachable: cannot reach http://127.0.0.1:9/operator/plan")
    old = Console(replace(operators.stage(), operator_url=None))
    assert main([*local, "kick", "c1", "--reason", "r", "--yes"], console=old) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: no_operator_url: ")


def test_the_local_console_needs_no_aws_credentials_of_the_operator(operators: Ops) -> None:
    """``python -m ops --local`` with no AWS credentials anywhere in its environment: its
    clients carry dummy ones (moto accepts any), and its actions are signed as the local
    act role; before, it died with a ``NoCredentialsError`` traceback."""
    ops = operators.harness
    fund(ops, "wes", 10)
    assert ops.connect("wes") is not None
    bare = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "CANASTA_"))}
    bare.update(
        AWS_CONFIG_FILE=os.devnull,
        AWS_SHARED_CREDENTIALS_FILE=os.devnull,
        AWS_EC2_METADATA_DISABLED="true",
    )
    command = [sys.executable, "-m", "ops", "--local", ops.aws.moto_url]
    command += ["--gateway", operators.gateway_url, "--operator", "local-ana"]

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command, *argv], env=bare, capture_output=True, text=True, timeout=60, check=False
        )

    read = run("player", "wes")
    assert read.returncode == 0, read.stderr
    assert "wes (wes)" in read.stdout and "10 points" in read.stdout
    missing = run("player", "nobody")
    assert missing.returncode == 1 and missing.stderr.splitlines() == [
        "error: no_player: no player with the id or name 'nobody'"
    ]
    acted = run("credit", "wes", "--points", "5", "--reason", "ticket 3", "--yes")
    assert acted.returncode == 0, acted.stderr
    assert "credit wes: applied" in acted.stdout
    assert ledger(ops).balance("wes").points == 15
    with operators.reading():
        (record,) = operators.console().audit()
    assert record["operator"] == "local-ana"


def test_stuck_names_the_tables_of_dead_letters_without_taking_them(operators: Ops) -> None:
    ops = operators.harness
    sqs = ops.aws.client("sqs")
    url = sqs.create_queue(QueueName="canasta-deal-dlq")["QueueUrl"]
    event = {"detail-type": "TableFormed", "source": "canasta.matchmaking"}
    for table_id in ("t-stuck-1", "t-stuck-2"):
        sqs.send_message(
            QueueUrl=url, MessageBody=json.dumps({**event, "detail": {"table_id": table_id}})
        )
    sqs.send_message(QueueUrl=url, MessageBody="not json")
    console = Console(replace(operators.stage(), dead_letters={"deal": url}))
    with operators.reading():
        (letters,) = console.stuck()["dead_letters"]
        again = console.stuck()["dead_letters"]
    assert letters == {"queue": "deal", "messages": 3, "tables": ["t-stuck-1", "t-stuck-2"]}
    assert again == [letters], "a look takes nothing: the letters wait for their redrive"
