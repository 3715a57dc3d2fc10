"""Issue a player token for a deployed stage, and print the URL a client connects to.

    python -m infra.player_token --name Ann                 # stack canasta-dev
    python -m infra.player_token --stage prod --name Ann --hours 2

The stack's outputs give the WebSocket URL and the signing key's secret; the
token is signed like the connect service checks it (services.common.auth).
Needs AWS credentials that may read the stack and that secret. Until a sign-in
service exists, this is how testers and the web client get a token.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from services.common.auth import Identity, issue_token


def player_id_for(name: str) -> str:
    """A stable id per name (the same rule as the local sign-in), unless one is given."""
    return "p-" + hashlib.sha256(name.strip().lower().encode()).hexdigest()[:12]


def stack_outputs(cloudformation: Any, stack: str) -> dict[str, str]:
    described = cloudformation.describe_stacks(StackName=stack)["Stacks"][0]
    return {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}


def connect_url(websocket_url: str, token: str) -> str:
    return f"{websocket_url}?token={quote(token, safe='')}"


def web_query(websocket_url: str, token: str) -> str:
    """What to append to the web client's address (``web/index.html``)."""
    return f"?ws={quote(websocket_url, safe='')}&token={quote(token, safe='')}"


def main(argv: Sequence[str] | None = None, clients: Any = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.player_token", description=__doc__)
    parser.add_argument("--name", required=True, help="the player's display name")
    parser.add_argument("--player-id", help="default: derived from the name")
    parser.add_argument("--stage", default="dev")
    parser.add_argument("--stack", help="default: canasta-<stage>")
    parser.add_argument("--hours", type=float, default=12.0, help="validity (default 12)")
    parser.add_argument("--region", help="default: the AWS profile's region")
    args = parser.parse_args(argv)

    if clients is None:
        import boto3  # noqa: PLC0415 - only this command needs it

        session = boto3.session.Session(region_name=args.region)
        clients = session.client
    outputs = stack_outputs(clients("cloudformation"), args.stack or f"canasta-{args.stage}")
    secret = clients("secretsmanager").get_secret_value(SecretId=outputs["TokenSecretArn"])
    identity = Identity(args.player_id or player_id_for(args.name), args.name)
    token = issue_token(
        str(secret["SecretString"]).encode(), identity, time.time(), int(args.hours * 3600)
    )
    print(f"player:  {identity.player_id} ({identity.name})")
    print(f"url:     {outputs['WebSocketUrl']}")
    print(f"token:   {token}")
    print(f"connect: {connect_url(outputs['WebSocketUrl'], token)}")
    print(f"web:     {web_query(outputs['WebSocketUrl'], token)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
