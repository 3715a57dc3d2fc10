"""The ledger API's callers: one alias per configured client of another mode.

The function learns its caller from the alias it was invoked through (Lambda
sets the invoked ARN): each client's managed policy allows
``lambda:InvokeFunction`` on its own alias only, and a configured principal (any
account) gets a resource policy on that alias. The unqualified function answers
every request ``unknown_client``.
"""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_

from infra.components.common import account_wide_name, function_name, pascal
from infra.config import Config

ClientAlias = tuple[lambda_.Alias, iam.ManagedPolicy]
"""A client's alias, and the policy its mode's role attaches to invoke it."""


def client_aliases(
    stack: Stack, config: Config, key: str, function: lambda_.Function
) -> dict[str, ClientAlias]:
    """``<key>-<client>`` → that client's alias and invoke policy."""
    aliases = {}
    for client in config.ledger_clients:
        alias = function.add_alias(client.name, description=f"The {client.name} mode's calls")
        if client.principal is not None:
            alias.add_permission(
                f"{pascal(client.name)}Invoke",
                principal=iam.ArnPrincipal(client.principal),
                action="lambda:InvokeFunction",
            )
        aliases[f"{key}-{client.name}"] = (
            alias,
            iam.ManagedPolicy(
                stack,
                f"{pascal(key)}{pascal(client.name)}InvokePolicy",
                managed_policy_name=account_wide_name(
                    stack, config, f"canasta-{key}-{client.name}-invoke"
                ),
                description=f"Invoke {function_name(config, key)}:{client.name} "
                "(the alias of one mode): attach to that mode's role",
                statements=[
                    iam.PolicyStatement(
                        actions=["lambda:InvokeFunction"], resources=[alias.function_arn]
                    )
                ],
            ),
        )
    return aliases
