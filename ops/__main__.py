"""``python -m ops``: the operators' console, against the local stack or a deployed stage.

    python -m ops --local http://127.0.0.1:MOTO [--gateway http://127.0.0.1:8080] COMMAND ...
    python -m ops --stack canasta-prod [--region R] [--profile P] COMMAND ...

Commands: ``player NAME|ID``, ``match TABLE_ID [--as SEAT [N]] [--round R]``,
``stuck``, ``audit [--day YYYY-MM-DD]``, and the actions ``void TABLE_ID``, ``close
TABLE_ID``, ``credit PLAYER --points N --jokers N``, ``kick CONNECTION``, each with
``--reason`` (required) and ``--yes`` (else the plan is shown and confirmed by typing
``yes``). Output is for a person; ``--json`` prints JSON for scripts. A refusal is one
line, ``error: <code>: <message>``. Exit status: 0 done, 1 refused or not found, 2
usage, 3 a mismatch in a replay or an action not confirmed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TextIO

from ops.console import ActionRefused, Console, Plan
from ops.stage import Stage

MISMATCH = 3
LOCAL_GATEWAY = "http://127.0.0.1:8080"
"""Where ``python -m local`` serves by default (``make play``)."""


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m ops", description=__doc__.split("\n\n")[0])
    where = top.add_mutually_exclusive_group(required=True)
    where.add_argument("--local", metavar="URL", help="the local stack's embedded AWS (moto)")
    where.add_argument("--stack", help="a deployed stage's CloudFormation stack name")
    top.add_argument(
        "--gateway",
        default=LOCAL_GATEWAY,
        help="the local gateway, which serves the operators' function (local only)",
    )
    top.add_argument("--region")
    top.add_argument("--profile")
    top.add_argument("--operator", help="your name in the audit trail (local only)")
    top.add_argument("--json", action="store_true", help="JSON output for scripts")
    commands = top.add_subparsers(dest="command", required=True)
    commands.add_parser("player", help="balance, last matches, where now").add_argument("query")
    match = commands.add_parser("match", help="a table: moves, replay, a seat's view")
    match.add_argument("table_id")
    match.add_argument(
        "--as",
        dest="seen",
        nargs="+",
        type=int,
        metavar=("SEAT", "N"),
        help="what SEAT saw after move N of the round (default: every move so far)",
    )
    match.add_argument("--round", dest="round_number", type=int)
    commands.add_parser("stuck", help="overdue turns, old tickets, dead letters")
    commands.add_parser("audit", help="the operators' actions of a day").add_argument("--day")
    for name, target, text in (
        ("void", "table_id", "refund the stakes and reverse the settlement"),
        ("close", "table_id", "end a stuck table and free its players"),
        ("credit", "player", "give or take points or jokers, within the limit"),
        ("kick", "connection", "close a connection"),
    ):
        action = commands.add_parser(name, help=text)
        action.add_argument(target)
        action.add_argument("--reason", required=True)
        action.add_argument("--yes", action="store_true", help="do not ask")
        if name == "credit":
            action.add_argument("--points", type=int, default=0)
            action.add_argument("--jokers", type=int, default=0)
            action.add_argument("--key", help="makes the credit happen once (default: derived)")
    return top


def stage_of(args: argparse.Namespace) -> Stage:
    if args.local:
        return Stage.local(args.local, args.gateway, args.operator)
    return Stage.deployed(args.stack, args.region, args.profile)


def main(
    argv: Sequence[str],
    out: TextIO = sys.stdout,
    ask: Callable[[str], str] = input,
    console: Console | None = None,
) -> int:
    """Run one command; every refusal, whatever refused, is one line on stderr."""
    args = parser().parse_args(argv)
    try:
        return run(args, console or Console(stage_of(args)), out, ask)
    except Exception as exc:
        refused = refusal_of(exc)
        if refused is None:
            raise
        print(f"error: {refused.code}: {refused.message}", file=sys.stderr)
        return 1


def refusal_of(exc: Exception) -> ActionRefused | None:
    """What an operator reads of a failure: the console's own refusal, or AWS's answer."""
    from botocore.exceptions import (  # noqa: PLC0415
        BotoCoreError,
        ClientError,
        EndpointConnectionError,
        NoCredentialsError,
        NoRegionError,
    )

    if isinstance(exc, ActionRefused):
        return exc
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", "aws_error"))
        denied = "AccessDenied" in code or "UnauthorizedOperation" in code
        return ActionRefused("access_denied" if denied else code, str(error.get("Message", exc)))
    if isinstance(exc, NoCredentialsError):
        return ActionRefused("no_credentials", "no AWS credentials: a profile, SSO or variables")
    if isinstance(exc, NoRegionError):
        return ActionRefused("no_region", "give --region (or a profile with one)")
    if isinstance(exc, EndpointConnectionError):
        return ActionRefused("unreachable", str(exc))
    if isinstance(exc, BotoCoreError):
        return ActionRefused("aws_error", str(exc))
    return None


def run(args: argparse.Namespace, console: Console, out: TextIO, ask: Callable[[str], str]) -> int:
    show = (
        (lambda data: print(json.dumps(data, indent=2, default=str), file=out))
        if args.json
        else None
    )
    if args.command == "player":
        ids = console.find_players(args.query)
        if not ids:
            raise ActionRefused("no_player", f"no player with the id or name {args.query!r}")
        reports = [console.player(pid) for pid in ids]
        (show or (lambda r: print_players(r, out)))(reports)
        return 0
    if args.command == "match":
        seat, after = seen_of(args.seen)
        report = console.match(
            args.table_id, seat=seat, after=after, round_number=args.round_number
        )
        (show or (lambda r: print_match(r, out)))(report)
        return 0 if report["replay"]["verified"] else MISMATCH
    if args.command == "stuck":
        (show or (lambda r: print_stuck(r, out)))(console.stuck())
        return 0
    if args.command == "audit":
        (show or (lambda r: print_audit(r, out)))(console.audit(args.day))
        return 0
    return act(console, args, out, ask, show)


def seen_of(values: list[int] | None) -> tuple[int | None, int | None]:
    """``--as SEAT [N]``."""
    if not values:
        return None, None
    if len(values) > 2 or values[0] not in (1, 2, 3, 4) or (len(values) == 2 and values[1] < 0):
        raise SystemExit("--as takes a seat (1-4) and, optionally, a number of moves")
    return values[0], values[1] if len(values) == 2 else None


def act(
    console: Console,
    args: argparse.Namespace,
    out: TextIO,
    ask: Callable[[str], str],
    show: Callable[[Any], None] | None,
) -> int:
    plan = plan_of(console, args)
    if not args.yes:
        print(f"{plan.action} {plan.target}: {json.dumps(plan.changes, default=str)}", file=out)
        if plan.done_before:
            print("(done before: applying it again changes nothing)", file=out)
        if args.json or ask("Type yes to apply: ").strip().lower() != "yes":
            print("not applied", file=out)
            return MISMATCH
    result = console.carry_out(plan)
    if show:
        show(result)
    else:
        print(f"{result['action']} {result['target']}: {result['outcome']}", file=out)
    return 0


def plan_of(console: Console, args: argparse.Namespace) -> Plan:
    if args.command == "void":
        return console.plan_void(args.table_id, args.reason)
    if args.command == "close":
        return console.plan_close(args.table_id, args.reason)
    if args.command == "credit":
        return console.plan_credit(args.player, args.points, args.jokers, args.reason, args.key)
    return console.plan_kick(args.connection, args.reason)


# --- for a person ----------------------------------------------------------------------


def when(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S")


def print_players(reports: list[dict[str, Any]], out: TextIO) -> None:
    for r in reports:
        place = r["place"]
        where = place["at"] + "".join(f" {k} {v}" for k, v in place.items() if k != "at")
        connection = r["connection"]
        online = "no connection" if connection is None else connection["connection_id"]
        print(f"{r['name']} ({r['player_id']}): {where}; {online}", file=out)
        balance = r["balance"]
        print(f"  balance: {balance['points']:,} points, {balance['jokers']} jokers", file=out)
        print(f"  {r['rated_matches']} rated matches", file=out)
        for mode, stats in r["stats"].items():
            rating = stats["rating"]
            print(
                f"  {mode}: rating {rating['shown']} (mu {rating['mu']:.2f}, "
                f"sigma {rating['sigma']:.2f}), {stats['matches']} matches, "
                f"{stats['wins']} won, average round {stats['average_round']}",
                file=out,
            )
        for change in r["rating_history"]:
            before = change["before"]["shown"] if change["before"] else "new"
            after = change["after"]["shown"]
            print(f"    {change['table_id']} {change['mode']}: {before} -> {after}", file=out)
        for m in r["matches"]:
            result = m.get("winner") or m["status"]
            totals = m.get("totals", {})
            print(
                f"  {m['table_id']}: {m.get('mode')} stake {m.get('stake')}, seat {m.get('seat')}, "
                f"{result}, A {totals.get('A')} B {totals.get('B')}",
                file=out,
            )
            for e in m["entries"]:
                print(
                    f"    {when(e['at'])} {e['purpose']:<10} {e['points']:+,} points "
                    f"{e['jokers']:+} jokers  ({e['key']})",
                    file=out,
                )
        for e in r["other_entries"]:
            print(f"  {when(e['at'])} {e['purpose']:<10} {e['points']:+,} points", file=out)


def print_match(r: dict[str, Any], out: TextIO) -> None:
    seats = ", ".join(
        f"{k} {p['name']}{' (bot)' if p['bot'] else ''}" for k, p in r["seats"].items()
    )
    print(
        f"{r['table_id']}: {r['mode']} {r['variant']} stake {r['stake']}, {r['status']}, "
        f"round {r['round']}, A {r['totals']['A']} B {r['totals']['B']}",
        file=out,
    )
    print(f"  seats: {seats}", file=out)
    for rnd in r["rounds"]:
        scored = rnd["totals"] or "not scored"
        print(f"  round {rnd['round']} (dealer {rnd['dealer']}): {scored}", file=out)
        print(
            f"    commitment {rnd['commitment']}  seed {rnd['seed'] or '(hidden in play)'}",
            file=out,
        )
        for m in rnd["moves"]:
            auto = " (auto)" if m["auto"] else ""
            print(
                f"    {m['n']:>3} v{m['version']:<4} {when(m['at'])} seat {m['seat']} "
                f"{m['player']}{auto}: {json.dumps(m['action'])}",
                file=out,
            )
    replay = r["replay"]
    verdict = "verified" if replay["verified"] else "MISMATCH"
    print(f"  replay: {verdict} ({replay['rounds']} rounds, {replay['moves']} moves)", file=out)
    for line in replay["mismatches"]:
        print(f"    ! {line}", file=out)
    view = r.get("seat_view")
    if view:
        print(
            f"  seat {view['seat']} after move {view['after']} of round {view['round']}:", file=out
        )
        print(f"    hand: {' '.join(view['hand'])}", file=out)
        print(
            f"    others hold: {view['hand_sizes']}; pile: {' '.join(view['discard'][-5:])}",
            file=out,
        )
        for team, melds in view["melds"].items():
            print(f"    melds {team}: {[' '.join(m['tiles']) for m in melds]}", file=out)


def print_stuck(r: dict[str, Any], out: TextIO) -> None:
    print(f"overdue turns: {len(r['tables'])}", file=out)
    for t in r["tables"]:
        print(f"  {t['table_id']}: {t['overdue_seconds']} s past the deadline", file=out)
    print(f"tickets past their time: {len(r['tickets'])}", file=out)
    for t in r["tickets"]:
        print(f"  {t['player_id']} in {t['queue']}: {t['overdue_seconds']} s", file=out)
    for q in r["dead_letters"]:
        print(f"dead letters of {q['queue']}: {q['messages']} ({', '.join(q['tables'])})", file=out)


def print_audit(records: list[dict[str, Any]], out: TextIO) -> None:
    for a in records:
        print(
            f"{a['at']} {a['operator']}: {a['action']} {a['target']} -> {a['outcome']} "
            f"({a['reason']})",
            file=out,
        )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
