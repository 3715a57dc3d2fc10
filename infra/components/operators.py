"""The operators' console's two managed policies (infra/README.md, ``python -m ops``).

Attach the first to support staff, both to those trusted with actions; each is
exactly ``policies.operator_grants``, which the console's tests run under. The
act policy writes nothing itself: it invokes the operators' function's URL.
"""

from __future__ import annotations

from aws_cdk import aws_iam as iam

from infra import policies
from infra.components.backbone import Backbone
from infra.components.common import account_wide_name, pascal
from infra.components.functions import Functions
from infra.nag import acknowledge

POLICIES = (
    ("read", False, "reads tables, indexes and dead letters (no writes)"),
    ("act", True, "void, close, credit and kick through the operators' function URL"),
)
"""(key, whether it acts, what it lets the console do)."""


class OperatorPolicies:
    def __init__(self, backbone: Backbone, functions: Functions) -> None:
        self._backbone = backbone
        self._functions = functions
        self.by_key = {key: self._policy(key, actions, text) for key, actions, text in POLICIES}

    def resource_arns(self, resource: policies.Resource) -> list[str]:
        """The ARNs an operators' grant names: the stage's resources, or a function."""
        if resource.kind is policies.Kind.FUNCTION:
            assert resource.function is not None
            return [self._functions.by_key[resource.function].function_arn]
        return self._backbone.operator_resource_arns(resource)

    def _policy(self, key: str, actions: bool, text: str) -> iam.ManagedPolicy:
        backbone = self._backbone
        policy = iam.ManagedPolicy(
            backbone.stack,
            f"Operator{pascal(key)}Policy",
            managed_policy_name=account_wide_name(
                backbone.stack, backbone.config, f"canasta-operator-{key}"
            ),
            description=f"The operators' console (python -m ops) {text}",
            statements=[
                iam.PolicyStatement(
                    actions=list(grant.actions),
                    resources=self.resource_arns(grant.resource),
                    conditions=dict(grant.conditions) or None,
                )
                for grant in policies.operator_grants(actions=actions)
            ],
        )
        for finding in [] if actions else self._index_wildcards():
            acknowledge(
                policy,
                f"AwsSolutions-IAM5[{finding}]",
                "An operator looks players up by any entry of an index, made at run time: "
                "the wildcard is this stage's own indexes, nothing wider.",
            )
        return policy

    def _index_wildcards(self) -> list[str]:
        """The cdk-nag findings of the read policy's index wildcards, as cdk-nag names them."""
        backbone = self._backbone
        return [
            f"Resource::<{backbone.stack.get_logical_id(table.node.default_child)}.Arn>/index/*"  # type: ignore[arg-type]
            for spec, table in backbone.tables.items()
            if spec.indexes
        ]
