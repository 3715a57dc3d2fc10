"""Where the console works: the local stack or a deployed stage, with the same code.

Only the endpoints, the names and the credentials differ. A deployed stage is
found from its CloudFormation stack's outputs (tables, dead-letter queues, the
``@connections`` URL), with the operator's own AWS credentials (the default
boto3 chain: a profile, SSO, environment variables), never a function's role.
The local stack's names are the specs' own (``services.common.constants``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from services.common import constants

ClientFactory = Callable[[str], Any]
LOCAL_REGION = "eu-west-1"


@dataclass(frozen=True)
class Stage:
    """The clients and names of one deployment of the game."""

    client: ClientFactory
    """``client("dynamodb")``: a boto3 client of this stage's account and region."""
    client_at: Callable[[str, str], Any]
    """``client_at(service, url)``: the same, at another endpoint (``@connections``)."""
    tables: Mapping[str, str]
    """``TableSpec.name`` → this stage's table name."""
    operator: str
    """Who acts, as the audit trail records it (the caller's IAM ARN when deployed)."""
    connections_url: str | None = None
    """The ``@connections`` management endpoint: needed to push views and to kick."""
    dead_letters: Mapping[str, str] = field(default_factory=dict)
    """Consumer → the URL of its dead-letter queue."""

    def table(self, spec: constants.TableSpec) -> str:
        return self.tables[spec.name]

    def connections(self) -> Any:
        """The management API client of the stage's ``@connections``."""
        if self.connections_url is None:
            raise LookupError("no @connections endpoint: give --connections")
        return self.client_at("apigatewaymanagementapi", self.connections_url)

    @classmethod
    def local(
        cls, moto_url: str, connections_url: str | None = None, operator: str | None = None
    ) -> Stage:
        """The local stack (``make play``): moto at ``moto_url``, its default names."""
        import boto3  # noqa: PLC0415 - the console's own dependency, not the handlers'

        def client(service: str) -> Any:
            return boto3.client(service, endpoint_url=moto_url, region_name=LOCAL_REGION)

        def at(service: str, url: str) -> Any:
            return boto3.client(service, endpoint_url=url, region_name=LOCAL_REGION)

        return cls(
            client=client,
            client_at=at,
            tables={spec.name: spec.name for spec in constants.TABLES},
            operator=operator or os.environ.get("USER") or "local-operator",
            connections_url=connections_url,
        )

    @classmethod
    def deployed(cls, stack: str, region: str | None = None, profile: str | None = None) -> Stage:
        """A stage of ``cdk deploy``, read from its stack's outputs."""
        import boto3  # noqa: PLC0415

        session = boto3.Session(profile_name=profile, region_name=region)

        def client(service: str) -> Any:
            return session.client(service)

        def at(service: str, url: str) -> Any:
            return session.client(service, endpoint_url=url)

        described = session.client("cloudformation").describe_stacks(StackName=stack)
        outputs = {o["OutputKey"]: o["OutputValue"] for o in described["Stacks"][0]["Outputs"]}
        return cls(
            client=client,
            client_at=at,
            tables=tables_of(outputs),
            operator=session.client("sts").get_caller_identity()["Arn"],
            connections_url=outputs.get("WebSocketManagementUrl"),
            dead_letters=json.loads(outputs.get("DeadLetterQueueUrls", "{}")),
        )


def output_key(spec: constants.TableSpec) -> str:
    """The stack output naming a table: ``canasta-games`` → ``GamesTableName``."""
    short = spec.name.removeprefix(f"{constants.EVENT_SOURCE}-")
    return "".join(part.capitalize() for part in short.split("-")) + "TableName"


def tables_of(outputs: Mapping[str, str]) -> dict[str, str]:
    """Each table's name from the stack's outputs; a missing one is an old stack."""
    missing = [output_key(spec) for spec in constants.TABLES if output_key(spec) not in outputs]
    if missing:
        raise LookupError(f"the stack has no output {', '.join(missing)}: deploy this version")
    return {spec.name: outputs[output_key(spec)] for spec in constants.TABLES}
