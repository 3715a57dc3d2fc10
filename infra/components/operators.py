"""The operators' console's two managed policies (infra/README.md, ``python -m ops``).

Attach the first to support staff, both to those trusted with actions; each is
exactly ``policies.operator_grants``, which the console's tests run under.
"""

from __future__ import annotations

from aws_cdk import aws_iam as iam

from infra import policies
from infra.components.backbone import Backbone
from infra.components.common import pascal
from infra.nag import acknowledge

POLICIES = (
    ("read", False, "reads tables, indexes and dead letters (no writes)"),
    ("act", True, "void, close, credit and kick, each recorded in the audit table"),
)
"""(key, whether it acts, what it lets the console do)."""


class OperatorPolicies:
    def __init__(self, backbone: Backbone) -> None:
        self._backbone = backbone
        self.by_key = {key: self._policy(key, actions, text) for key, actions, text in POLICIES}

    def _policy(self, key: str, actions: bool, text: str) -> iam.ManagedPolicy:
        backbone = self._backbone
        policy = iam.ManagedPolicy(
            backbone.stack,
            f"Operator{pascal(key)}Policy",
            managed_policy_name=backbone.config.name(f"canasta-operator-{key}"),
            description=f"The operators' console (python -m ops) {text}",
            statements=[
                iam.PolicyStatement(
                    actions=list(grant.actions),
                    resources=backbone.operator_resource_arns(grant.resource),
                )
                for grant in policies.operator_grants(actions=actions)
            ],
        )
        for finding in self._wildcards(actions):
            acknowledge(
                policy,
                f"AwsSolutions-IAM5[{finding}]",
                "An operator looks players up by any index entry and closes or posts "
                "to any connection of this stage, all made at run time: the wildcard "
                "is this stage's own indexes or @connections, nothing wider.",
            )
        return policy

    def _wildcards(self, actions: bool) -> list[str]:
        """The cdk-nag findings of the operators' wildcards, as cdk-nag names them."""
        backbone = self._backbone
        if actions:
            return [backbone.websocket.connections_finding(method) for method in ("POST", "DELETE")]
        return [
            f"Resource::<{backbone.stack.get_logical_id(table.node.default_child)}.Arn>/index/*"  # type: ignore[arg-type]
            for spec, table in backbone.tables.items()
            if spec.indexes
        ]
