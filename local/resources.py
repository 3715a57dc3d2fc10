"""Creates, on the embedded AWS, every resource the handlers use.

Names and keys come from ``services.common.constants``, the module the CDK
stack builds from, so the local stack and production cannot disagree.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from infra import manifest
from services.common import constants
from services.common.settings import Settings
from services.matchmaking.flow import definition_json


@dataclass(frozen=True)
class LocalResources:
    queues: dict[str, str]
    """Consumer name → queue URL (including the turn timers' queue under ``timers``)."""
    timer_queue_arn: str
    scheduler_role_arn: str
    schedule_dead_letter_arn: str
    stream_arn: str
    state_machine_arn: str

    def environment(self) -> dict[str, str]:
        """The settings the stack gives the functions that name these resources."""
        return {
            "CANASTA_TIMER_QUEUE_URL": self.queues["timers"],
            "CANASTA_TIMER_QUEUE_ARN": self.timer_queue_arn,
            "CANASTA_SCHEDULER_ROLE_ARN": self.scheduler_role_arn,
            "CANASTA_SCHEDULE_DEAD_LETTER_ARN": self.schedule_dead_letter_arn,
            "CANASTA_STATE_MACHINE_ARN": self.state_machine_arn,
            "CANASTA_MATCHMAKING_QUEUE_URL": self.queues["matchmaking"],
        }


def table_names(settings: Settings) -> dict[str, str]:
    """``TableSpec.name`` → the table's name in these settings."""
    return {
        constants.GAMES.name: settings.games_table,
        constants.CONNECTIONS.name: settings.connections_table,
        constants.PLAYERS.name: settings.players_table,
        constants.LEDGER.name: settings.ledger_table,
        constants.MATCHMAKING.name: settings.matchmaking_table,
        constants.AUDIT.name: settings.audit_table,
        constants.PROFILES.name: settings.profiles_table,
    }


def _queue_arn(sqs: Any, url: str) -> str:
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
    return str(attributes["Attributes"]["QueueArn"])


def create_resources(settings: Settings, client: Any) -> LocalResources:
    """Create tables, bus, rules, queues and the schedule group; ``client(name)`` builds clients."""
    dynamodb = client("dynamodb")
    names = table_names(settings)
    for spec in constants.TABLES:
        dynamodb.create_table(**constants.create_table_request(spec, names[spec.name]))
    stream_arn = dynamodb.describe_table(TableName=settings.games_table)["Table"]["LatestStreamArn"]

    sqs = client("sqs")
    events = client("events")
    events.create_event_bus(Name=settings.event_bus)
    queues: dict[str, str] = {}
    for consumer in manifest.CONSUMERS:
        url = sqs.create_queue(QueueName=constants.queue_name(consumer))["QueueUrl"]
        arn = _queue_arn(sqs, url)
        rule = f"to-{consumer}"
        events.put_rule(
            Name=rule,
            EventBusName=settings.event_bus,
            EventPattern=json.dumps(manifest.consumer_pattern(consumer)),
        )
        events.put_targets(
            Rule=rule, EventBusName=settings.event_bus, Targets=[{"Id": consumer, "Arn": arn}]
        )
        queues[consumer] = url
    timer_url = sqs.create_queue(QueueName=constants.TIMER_QUEUE)["QueueUrl"]
    queues["timers"] = timer_url
    schedule_dead_letters = sqs.create_queue(QueueName=constants.SCHEDULE_DEAD_LETTER_QUEUE)
    client("scheduler").create_schedule_group(Name=settings.schedule_group)
    role_arn = "arn:aws:iam::123456789012:role/canasta-local"
    machine = client("stepfunctions").create_state_machine(
        name=constants.STATE_MACHINE,
        definition=definition_json(queues["matchmaking"]),
        roleArn=role_arn,
    )["stateMachineArn"]
    return LocalResources(
        queues=queues,
        timer_queue_arn=_queue_arn(sqs, timer_url),
        scheduler_role_arn=role_arn,
        schedule_dead_letter_arn=_queue_arn(sqs, schedule_dead_letters["QueueUrl"]),
        stream_arn=stream_arn,
        state_machine_arn=machine,
    )
