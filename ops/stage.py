"""Where the console works: the local stack or a deployed stage, with the same code.

Only the endpoints, the names and the credentials differ. A deployed stage is
found from its CloudFormation stack's outputs (tables, dead-letter queues, the
operators' function URL), with the operator's own AWS credentials (the default
boto3 chain: a profile, SSO, environment variables), never a function's role:
AWS names that caller to the function, and the audit records it. The local
stack needs no credentials of the operator's: moto accepts any, so its clients
carry fixed dummy ones, and the local gateway takes the signature's access key
as the operator's role (``local/iam.py``) with no IAM authentication, the
operator being who ``--operator`` (or ``$USER``) says.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ops.actions import ActionRefused
from services.common import constants

ClientFactory = Callable[[str], Any]
LOCAL_REGION = "eu-west-1"
LOCAL_SECRET = "local"
"""The dummy key and secret of the local stack's clients (moto checks neither)."""


@dataclass(frozen=True)
class Stage:
    """The clients and names of one deployment of the game."""

    client: ClientFactory
    """``client("dynamodb")``: a boto3 client of this stage's account and region."""
    tables: Mapping[str, str]
    """``TableSpec.name`` → this stage's table name."""
    region: str
    credentials: Callable[[], Any]
    """What the operators' function URL requests are signed with (botocore credentials)."""
    operator_url: str | None = None
    """The operators' function URL: the console's actions."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """What each request to the operators' function carries besides its signature (locally,
    who acts: deployed, AWS names the signer)."""
    dead_letters: Mapping[str, str] = field(default_factory=dict)
    """Consumer → the URL of its dead-letter queue."""

    def table(self, spec: constants.TableSpec) -> str:
        return self.tables[spec.name]

    @classmethod
    def local(
        cls, moto_url: str, gateway_url: str | None = None, operator: str | None = None
    ) -> Stage:
        """The local stack (``make play``): moto at ``moto_url``, its default names, the
        operators' function at the local gateway."""
        import boto3  # noqa: PLC0415 - the console's own dependency, not the handlers'
        from botocore.credentials import Credentials  # noqa: PLC0415

        from local.gateway import OPERATOR_HEADER, OPERATOR_PATH  # noqa: PLC0415 - local only
        from local.iam import ACT_ROLE  # noqa: PLC0415

        def client(service: str) -> Any:
            return boto3.client(
                service,
                endpoint_url=moto_url,
                region_name=LOCAL_REGION,
                aws_access_key_id=LOCAL_SECRET,
                aws_secret_access_key=LOCAL_SECRET,
            )

        return cls(
            client=client,
            tables={spec.name: spec.name for spec in constants.TABLES},
            region=LOCAL_REGION,
            # The local act role, as its access key names it to the local gateway.
            credentials=lambda: Credentials(ACT_ROLE, LOCAL_SECRET),
            operator_url=gateway_url.rstrip("/") + OPERATOR_PATH if gateway_url else None,
            headers={OPERATOR_HEADER: operator or os.environ.get("USER") or "local-operator"},
        )

    @classmethod
    def deployed(cls, stack: str, region: str | None = None, profile: str | None = None) -> Stage:
        """A stage of ``cdk deploy``, read from its stack's outputs."""
        import boto3  # noqa: PLC0415

        session = boto3.Session(profile_name=profile, region_name=region)

        def client(service: str) -> Any:
            return session.client(service)

        described = session.client("cloudformation").describe_stacks(StackName=stack)
        outputs = {o["OutputKey"]: o["OutputValue"] for o in described["Stacks"][0]["Outputs"]}
        return cls(
            client=client,
            tables=tables_of(outputs),
            region=session.region_name,
            credentials=session.get_credentials,
            operator_url=outputs.get("OperatorUrl"),
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
        raise ActionRefused(
            "old_stack", f"the stack has no output {', '.join(missing)}: deploy this version"
        )
    return {spec.name: outputs[output_key(spec)] for spec in constants.TABLES}
