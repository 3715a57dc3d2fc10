"""The operators' function's composition root."""

from __future__ import annotations

from services.common.adapters import ApiGatewayPusher, Clock, Closer, Pusher, SystemClock
from services.common.afterwrite import AfterWrite
from services.common.dynamo_storage import DynamoStorage
from services.common.runtime import Clients
from services.common.settings import Settings
from services.common.store import GameStore
from services.common.tableviews import ViewPusher
from services.common.telemetry import Telemetry
from services.common.unit_of_work import Storage
from services.ops.app import OperatorService
from services.ops.audit import AuditTrail
from services.ops.plans import CreditLimit, Planner


def build(settings: Settings, clients: Clients, telemetry: Telemetry) -> OperatorService:
    connections = ApiGatewayPusher(clients.connections)
    return compose(
        storage=DynamoStorage.of(clients.dynamodb, settings),
        pusher=connections,
        closer=connections,
        clock=SystemClock(),
        telemetry=telemetry,
        limit=CreditLimit(settings.operator_credit_points, settings.operator_credit_jokers),
    )


def compose(
    *,
    storage: Storage,
    pusher: Pusher,
    closer: Closer,
    clock: Clock,
    telemetry: Telemetry,
    limit: CreditLimit,
) -> OperatorService:
    """The use case over its ports: the one graph the Lambda and the fast tests share."""
    # A closed table is shown to its seats as every write of a table is; no turn starts.
    after_write = AfterWrite(GameStore(storage), ViewPusher(pusher), None)
    return OperatorService(
        Planner(storage, after_write, closer, clock, limit), AuditTrail(storage), clock, telemetry
    )
