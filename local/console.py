"""What the person running the local stack reads: one plain line per event they care about.

A queue of its own on the event bus (as any consumer in AWS would subscribe)
carries the events a person follows: a table formed and who sits at it, a
round started, a round scored with the totals, a match ended and what it did
to the players' points, a seated player gone or back. A handler's error
becomes one line naming its service and table, read from the structured log
record Powertools would have printed. ``python -m local --verbose`` keeps
the structured logs instead.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any, TextIO

DETAIL_TYPES = (
    "TableFormed",
    "RoundStarted",
    "RoundScored",
    "MatchEnded",
    "TableAborted",
    "LedgerSettled",
    "PlayerConnected",
    "PlayerDisconnected",
)
QUEUE = "canasta-local-console"
RULE = "to-local-console"


def short(table_id: str) -> str:
    return table_id[:8]


class Narrator:
    """Turns events into lines; remembers the names at each table to say who is who."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}

    def name(self, player_id: str) -> str:
        return self._names.get(player_id, player_id)

    def line(self, detail_type: str, detail: dict[str, Any]) -> str | None:
        table = short(str(detail.get("table_id") or ""))
        if detail_type == "TableFormed":
            seats = detail["seats"]
            for player in seats.values():
                self._names[player["player_id"]] = player["name"]
            team = {
                label: " & ".join(seats[s]["name"] for s in pair if s in seats)
                for label, pair in TEAMS
            }
            stake = f", stake {detail['stake']}" if detail.get("stake") else ""
            return (
                f"table {table} formed ({detail['mode']}{stake}): "
                f"team A {team['A']} vs team B {team['B']}"
            )
        if detail_type == "RoundStarted":
            return f"table {table}: round {detail['round']} started"
        if detail_type == "RoundScored":
            scores = detail["scores"]
            totals = detail["totals"]
            return (
                f"table {table}: round {detail['round']} scored "
                f"A {_points(scores.get('A'))}, B {_points(scores.get('B'))}; "
                f"totals A {totals.get('A')}, B {totals.get('B')}"
            )
        if detail_type == "MatchEnded":
            totals = detail["totals"]
            return (
                f"table {table}: match over, team {detail['winner']} wins "
                f"{totals.get('A')} to {totals.get('B')} after {detail['rounds_played']} round(s)"
            )
        if detail_type == "TableAborted":
            return f"table {table}: aborted ({detail['reason']})"
        if detail_type == "LedgerSettled":
            changes = ", ".join(
                f"{self.name(player)} {delta:+d}"
                for player, delta in sorted(detail["changes"].items())
                if not player.startswith("escrow")
            )
            return f"table {table}: points {detail['purpose']}: {changes or 'no change'}"
        if detail_type in ("PlayerConnected", "PlayerDisconnected") and detail.get("table_id"):
            verb = "reconnected to" if detail_type == "PlayerConnected" else "disconnected from"
            return f"{self.name(detail['player_id'])} {verb} table {table} (seat {detail['seat']})"
        return None


TEAMS = (("A", ("1", "3")), ("B", ("2", "4")))


def _points(score: dict[str, Any] | None) -> str:
    return str(score.get("total", "?")) if isinstance(score, dict) else "?"


class Console:
    """Subscribes a queue to the bus and prints a line for each event that has one."""

    def __init__(self, client: Callable[[str], Any], event_bus: str, out: TextIO) -> None:
        self._sqs = client("sqs")
        self._out = out
        self.narrator = Narrator()
        self._url = self._sqs.create_queue(QueueName=QUEUE)["QueueUrl"]
        arn = self._sqs.get_queue_attributes(QueueUrl=self._url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        events = client("events")
        events.put_rule(
            Name=RULE,
            EventBusName=event_bus,
            EventPattern=json.dumps({"detail-type": list(DETAIL_TYPES)}),
        )
        events.put_targets(
            Rule=RULE, EventBusName=event_bus, Targets=[{"Id": "console", "Arn": arn}]
        )

    def say(self, text: str) -> None:
        print(text, file=self._out, flush=True)

    def pump(self) -> int:
        messages = self._sqs.receive_message(
            QueueUrl=self._url, MaxNumberOfMessages=10, WaitTimeSeconds=0
        ).get("Messages", [])
        for message in messages:
            try:
                event = json.loads(message["Body"])
                text = self.narrator.line(event["detail-type"], event["detail"])
            except (ValueError, KeyError, TypeError):
                text = None
            if text:
                self.say(text)
            self._sqs.delete_message(QueueUrl=self._url, ReceiptHandle=message["ReceiptHandle"])
        return len(messages)

    def run(self, stop: threading.Event, interval: float = 0.3) -> None:
        while not stop.is_set():
            try:
                read = self.pump()
            except Exception as exc:
                if stop.is_set():
                    return
                self.say(f"console: could not read events ({exc})")
                read = 0
            if not read:
                stop.wait(interval)


class ErrorLines(logging.Handler):
    """A handler's error log record (Powertools JSON) as one line: service, table, message."""

    def __init__(self, formatter: logging.Formatter | None, out: TextIO) -> None:
        super().__init__(level=logging.ERROR)
        self._powertools = formatter
        self._out = out

    def emit(self, record: logging.LogRecord) -> None:
        try:
            fields = json.loads(self._powertools.format(record)) if self._powertools else {}
        except (ValueError, TypeError):
            fields = {}
        service = fields.get("service") or record.name
        table = fields.get("table_id")
        where = f" at table {short(str(table))}" if table else ""
        reason = f": {record.exc_info[1]!r}" if record.exc_info else ""
        print(
            f"error in {service}{where}: {record.getMessage()}{reason}", file=self._out, flush=True
        )


def quiet_handler_logs(out: TextIO) -> None:
    """Every Powertools logger prints only its errors, as one readable line each."""
    from aws_lambda_powertools.logging.formatter import (  # noqa: PLC0415
        BasePowertoolsFormatter,
    )

    for logger in list(logging.root.manager.loggerDict.values()):
        if not isinstance(logger, logging.Logger):
            continue
        formatters = [
            h.formatter for h in logger.handlers if isinstance(h.formatter, BasePowertoolsFormatter)
        ]
        if formatters:
            logger.handlers = [ErrorLines(formatters[0], out)]
            logger.setLevel(logging.ERROR)
