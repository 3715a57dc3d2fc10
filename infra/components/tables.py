"""The DynamoDB tables, one per ``constants.TABLES`` entry, as the local stack creates them."""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_dynamodb as dynamodb

from infra.components.common import pascal, removal_policy, short_name
from infra.config import Config
from services.common import constants
from services.common.constants import TableSpec


def table_variable(spec: TableSpec) -> str:
    """The settings variable that names a table: ``CANASTA_GAMES_TABLE``."""
    return f"CANASTA_{short_name(spec).replace('-', '_').upper()}_TABLE"


def build_tables(stack: Stack, config: Config) -> dict[TableSpec, dynamodb.Table]:
    return {spec: _table(stack, config, spec) for spec in constants.TABLES}


def _key(name: str | None) -> dynamodb.Attribute | None:
    return dynamodb.Attribute(name=name, type=dynamodb.AttributeType.STRING) if name else None


def _table(stack: Stack, config: Config, spec: TableSpec) -> dynamodb.Table:
    table = dynamodb.Table(
        stack,
        f"{pascal(short_name(spec))}Table",
        table_name=config.name(spec.name),
        partition_key=_key(spec.partition_key),
        sort_key=_key(spec.sort_key),
        billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
        time_to_live_attribute=spec.ttl_attribute,
        stream=dynamodb.StreamViewType.NEW_IMAGE if spec.stream else None,
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=True
        ),
        deletion_protection=config.protect_tables,
        removal_policy=removal_policy(config),
    )
    for index in spec.indexes:
        table.add_global_secondary_index(
            index_name=index.name,
            partition_key=_key(index.partition_key),
            sort_key=_key(index.sort_key),
            projection_type=(
                dynamodb.ProjectionType.KEYS_ONLY
                if index.keys_only
                else dynamodb.ProjectionType.ALL
            ),
        )
    return table
