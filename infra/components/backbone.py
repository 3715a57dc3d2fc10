"""What the functions are wired to, and how a function or an operator reaches each of it.

The functions' environment names these resources and their grants name them by
kind (``infra.policies``); both are rendered here, from the parts that built them,
so the grants' ARNs and the tests that compare them with the local stack's read
the same map.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from aws_cdk import ArnFormat, Stack
from aws_cdk import aws_dynamodb as dynamodb

from infra import policies
from infra.components.common import METRICS_NAMESPACE
from infra.components.matchmaking import Matchmaking
from infra.components.messaging import Messaging
from infra.components.sign_in import SignIn
from infra.components.tables import table_variable
from infra.components.websocket import WebSocket
from infra.config import Config
from infra.manifest import FunctionSpec
from services.common.constants import TableSpec


@dataclass(frozen=True)
class Backbone:
    """The stack's resources that exist before any function: built once, named everywhere."""

    stack: Stack
    config: Config
    tables: dict[TableSpec, dynamodb.Table]
    messaging: Messaging
    matchmaking: Matchmaking
    sign_in: SignIn
    websocket: WebSocket

    def environment(self, spec: FunctionSpec) -> dict[str, str]:
        """A function's settings (``services.common.settings``): what its spec says it uses."""
        config, messaging = self.config, self.messaging
        env = {
            "POWERTOOLS_SERVICE_NAME": spec.service,
            "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
            "POWERTOOLS_TRACE_DISABLED": "false" if config.tracing else "true",
            # No pydantic plugins are used: skip their search through every installed
            # distribution's metadata on a cold start.
            "PYDANTIC_DISABLE_PLUGINS": "__all__",
            "CANASTA_EVENT_BUS": messaging.bus.event_bus_name,
        }
        # Every table name, so that a read the code adds fails on permissions, not on a name.
        env.update({table_variable(s): table.table_name for s, table in self.tables.items()})
        if spec.record_seconds is not None:
            env["CANASTA_RECORD_SECONDS"] = str(spec.record_seconds)
        if spec.pushes:
            env["CANASTA_WEBSOCKET_ENDPOINT"] = self.websocket.stage.callback_url
        if spec.schedules_timers:
            env.update(
                {
                    "CANASTA_TIMER_QUEUE_URL": messaging.timer_queue.queue_url,
                    "CANASTA_TIMER_QUEUE_ARN": messaging.timer_queue.queue_arn,
                    "CANASTA_SCHEDULER_ROLE_ARN": messaging.scheduler_role.role_arn,
                    "CANASTA_SCHEDULE_DEAD_LETTER_ARN": (
                        messaging.schedule_dead_letter_queue.queue_arn
                    ),
                    "CANASTA_SCHEDULE_GROUP": messaging.schedule_group_name,
                    "CANASTA_TURN_SECONDS": str(config.turn_seconds),
                    "CANASTA_INTERMISSION_SECONDS": str(config.intermission_seconds),
                }
            )
        if spec.verifies_tokens:
            issuer = self.sign_in.issuer
            env.update(
                {
                    "CANASTA_OIDC_ISSUER": issuer.issuer,
                    "CANASTA_OIDC_AUDIENCE": issuer.audience,
                    "CANASTA_OIDC_JWKS_URL": issuer.jwks_url,
                }
            )
        if spec.starts_tickets or spec.answers_tickets:
            env.update(self._ticket_settings())
        if spec.external_api:
            # pydantic-settings reads a dict setting as JSON.
            env["CANASTA_LEDGER_CLIENTS"] = json.dumps(
                {c.name: c.limits.model_dump() for c in config.ledger_clients},
                separators=(",", ":"),
            )
        return env

    def _ticket_settings(self) -> dict[str, str]:
        config = self.config
        return {
            "CANASTA_STATE_MACHINE_ARN": self.matchmaking.state_machine.state_machine_arn,
            "CANASTA_MATCHMAKING_QUEUE_URL": self.matchmaking.queue.queue_url,
            "CANASTA_QUEUE_SECONDS": str(config.queue_seconds),
            # The settings read a tuple as JSON (services/common/settings.py).
            "CANASTA_ARENA_STAKES": json.dumps(list(config.arena_stakes), separators=(",", ":")),
        }

    def resource_arn(self, resource: policies.Resource) -> str:
        """The ARN (a CloudFormation reference) of a resource a grant names."""
        kind = resource.kind
        if kind is policies.Kind.TABLE:
            assert resource.table is not None
            return self.tables[resource.table].table_arn
        if kind is policies.Kind.BUS:
            return self.messaging.bus.event_bus_arn
        if kind is policies.Kind.STATE_MACHINE:
            return self.matchmaking.state_machine.state_machine_arn
        if kind is policies.Kind.CONNECTIONS:
            return self.websocket.connections_arn("POST")
        if kind is policies.Kind.CLOSE_CONNECTIONS:
            return self.websocket.connections_arn("DELETE")
        if kind is policies.Kind.TIMER_QUEUE:
            return self.messaging.timer_queue.queue_arn
        if kind is policies.Kind.SCHEDULES:
            return self.stack.format_arn(
                service="scheduler",
                resource="schedule",
                resource_name=f"{self.messaging.schedule_group_name}/*",
                arn_format=ArnFormat.SLASH_RESOURCE_NAME,
            )
        return self.messaging.scheduler_role.role_arn

    def operator_resource_arns(self, resource: policies.Resource) -> list[str]:
        """The ARNs an operators' grant names (the kinds no function is granted)."""
        kind = resource.kind
        if kind is policies.Kind.TABLE_INDEXES:
            assert resource.table is not None
            return [f"{self.tables[resource.table].table_arn}/index/*"]
        if kind is policies.Kind.DEAD_LETTERS:
            return [queue.queue_arn for queue in self.messaging.dead_letter_queues.values()]
        if kind is policies.Kind.STACK:
            return [self.stack.stack_id]
        return [self.resource_arn(resource)]
