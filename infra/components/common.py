"""What several parts share: construct ids and names, log retention, the removal policy."""

from __future__ import annotations

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_logs as logs

from infra.config import Config
from services.common import constants
from services.common.constants import TableSpec

METRICS_NAMESPACE = "Canasta"
"""The services' custom metrics (Powertools' namespace), graphed and alarmed on."""

RETENTION = {
    1: logs.RetentionDays.ONE_DAY,
    3: logs.RetentionDays.THREE_DAYS,
    5: logs.RetentionDays.FIVE_DAYS,
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    60: logs.RetentionDays.TWO_MONTHS,
    90: logs.RetentionDays.THREE_MONTHS,
    120: logs.RetentionDays.FOUR_MONTHS,
    150: logs.RetentionDays.FIVE_MONTHS,
    180: logs.RetentionDays.SIX_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
    400: logs.RetentionDays.THIRTEEN_MONTHS,
    545: logs.RetentionDays.EIGHTEEN_MONTHS,
    731: logs.RetentionDays.TWO_YEARS,
    1096: logs.RetentionDays.THREE_YEARS,
    1827: logs.RetentionDays.FIVE_YEARS,
    2192: logs.RetentionDays.SIX_YEARS,
    2557: logs.RetentionDays.SEVEN_YEARS,
    2922: logs.RetentionDays.EIGHT_YEARS,
    3288: logs.RetentionDays.NINE_YEARS,
    3653: logs.RetentionDays.TEN_YEARS,
}


def pascal(name: str) -> str:
    """``turn-events`` → ``TurnEvents``: construct ids and output names."""
    return "".join(part.capitalize() for part in name.replace("_", "-").split("-") if part)


def short_name(spec: TableSpec) -> str:
    """``canasta-games`` → ``games``."""
    return spec.name.removeprefix(f"{constants.EVENT_SOURCE}-")


def function_name(config: Config, key: str) -> str:
    return config.name(f"canasta-{key}")


def account_wide_name(stack: Stack, config: Config, base: str) -> str:
    """The name of a resource whose names are the account's, not the region's (an IAM
    managed policy): with the region, so that one stage can be deployed in two regions."""
    return f"{config.name(base)}-{stack.region}"


def alarm_name(config: Config, name: str) -> str:
    """``dev-canasta-turn-errors``; ``*`` names every alarm of the stage (the topic's policy)."""
    return config.name(f"canasta-{name}")


def removal_policy(config: Config) -> RemovalPolicy:
    """What deleting the stack does to its data: tables, the user pool, log groups."""
    # A failed first create rolls back without leaving retained resources behind (the
    # retry would fail on their names); once created, they outlive the stack.
    return RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE if config.retain_data else RemovalPolicy.DESTROY
