"""The roles the local stack enforces are exactly the roles the template deploys.

``local/iam.py`` checks every handler call against ``infra.policies.grants``;
that is only as strict as AWS if the synthesized template grants each function
those statements and nothing else a handler could use. The statements the
platform itself needs (the function's logs, its event source mapping's reads
and on-failure destination, tracing) may be there besides, and nothing else.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from infra.manifest import FUNCTIONS, GET, PUT, operator_function
from infra.policies import grants, operator_grants
from services.common import constants
from tests.infra._support import HAVE_CDK, SKIP_REASON, Synthesis
from tests.infra.test_stack import (
    actions,
    function_id,
    function_statements,
    logical_ids,
    of_type,
    props,
    table_id,
)

pytestmark = [pytest.mark.infra, pytest.mark.skipif(not HAVE_CDK, reason=SKIP_REASON)]

PLATFORM_ACTIONS = {
    # The function's own log group.
    "logs:CreateLogStream",
    "logs:PutLogEvents",
    # The SQS event source mapping polls with the function's role.
    "sqs:ReceiveMessage",
    "sqs:ChangeMessageVisibility",
    "sqs:GetQueueUrl",
    "sqs:DeleteMessage",
    "sqs:GetQueueAttributes",
    # The stream event source mapping, and its on-failure destination.
    "dynamodb:ListStreams",
    "dynamodb:DescribeStream",
    "dynamodb:GetRecords",
    "dynamodb:GetShardIterator",
    "sqs:SendMessage",
    # Tracing.
    "xray:PutTraceSegments",
    "xray:PutTelemetryRecords",
}

Triple = tuple[str, str, str]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _triples(statement: dict[str, Any]) -> set[Triple]:
    assert statement["Effect"] == "Allow", statement
    resources = statement["Resource"]
    resources = resources if isinstance(resources, list) else [resources]
    condition = _canonical(statement.get("Condition"))
    return {(a, _canonical(r), condition) for a in actions(statement) for r in resources}


def _rendered(stack: Any, key: str) -> set[Triple]:
    return {
        (
            action,
            _canonical(stack.resolve(stack.backbone.resource_arn(g.resource))),
            _canonical({op: dict(values) for op, values in g.conditions.items()} or None),
        )
        for g in grants(FUNCTIONS[key])
        for action in g.actions
    }


@pytest.mark.parametrize("stage", ["dev", "prod"])
@pytest.mark.parametrize("key", sorted(FUNCTIONS))
def test_each_role_holds_exactly_the_grants_the_local_stack_enforces(
    synthesis: Synthesis, stage: str, key: str
) -> None:
    template = synthesis.templates[stage]
    deployed = set().union(*(_triples(s) for s in function_statements(template, stage, key)))
    rendered = _rendered(synthesis.stacks[stage], key)
    assert rendered <= deployed, "every grant the local stack allows is deployed"
    extra = {t for t in deployed - rendered if t[0] not in PLATFORM_ACTIONS}
    assert extra == set(), "the role allows a handler more than the local stack does"


def _operator_statements(template: dict[str, Any], key: str) -> list[dict[str, Any]]:
    (policy,) = [
        r["Properties"]
        for logical, r in template["Resources"].items()
        if r["Type"] == "AWS::IAM::ManagedPolicy" and logical.startswith(f"Operator{key}Policy")
    ]
    return list(policy["PolicyDocument"]["Statement"])


@pytest.mark.parametrize("stage", ["dev", "prod"])
@pytest.mark.parametrize("actions", [False, True])
def test_the_operators_policies_hold_exactly_what_the_local_stack_lets_the_console_do(
    synthesis: Synthesis, stage: str, actions: bool
) -> None:
    """``tests/integration/test_ops_console.py`` runs the console under roles made of
    ``operator_grants``; the stack's two managed policies are those grants, no more."""
    stack = synthesis.stacks[stage]
    deployed = set().union(
        *(
            _triples(s)
            for s in _operator_statements(synthesis.templates[stage], "Act" if actions else "Read")
        )
    )
    rendered = {
        (
            action,
            _canonical(stack.resolve(arn)),
            _canonical({op: dict(values) for op, values in g.conditions.items()} or None),
        )
        for g in operator_grants(actions=actions)
        for arn in stack.operators.resource_arns(g.resource)
        for action in g.actions
    }
    assert deployed == rendered
    writes = {
        a
        for a, _, _ in deployed
        if not a.startswith(("dynamodb:Get", "dynamodb:Query", "dynamodb:Scan"))
    }
    if not actions:
        assert writes == {
            "sqs:GetQueueAttributes",
            "sqs:ReceiveMessage",
            "cloudformation:DescribeStacks",
        }, "the read policy writes nothing"


@pytest.mark.parametrize("stage", ["dev", "prod"])
def test_the_act_policy_writes_no_table_and_only_invokes_the_operators_function_url(
    synthesis: Synthesis, stage: str
) -> None:
    """IAM cannot require a condition expression, so a policy that may write a table may
    overwrite an audit record or add points with no ledger entry: the act policy may only
    invoke the operators' function, through its AWS_IAM URL (both grants a function URL
    needs since October 2025), and that function alone writes."""
    template = synthesis.templates[stage]
    function = {"Fn::GetAtt": [function_id(template, stage, operator_function()), "Arn"]}
    statements = _operator_statements(template, "Act")
    assert sorted((actions(s), s["Resource"], s["Condition"]) for s in statements) == [
        (["lambda:InvokeFunction"], function, {"Bool": {"lambda:InvokedViaFunctionUrl": "true"}}),
        (
            ["lambda:InvokeFunctionUrl"],
            function,
            {"StringEquals": {"lambda:FunctionUrlAuthType": "AWS_IAM"}},
        ),
    ]
    (url,) = of_type(template, "AWS::Lambda::Url").values()
    assert props(url)["AuthType"] == "AWS_IAM"
    assert props(url)["TargetFunctionArn"] == function
    assert logical_ids(template["Outputs"]["OperatorUrl"]["Value"]) <= set(
        of_type(template, "AWS::Lambda::Url")
    )


@pytest.mark.parametrize("stage", ["dev", "prod"])
def test_only_the_operators_function_writes_the_audit_and_only_adds_to_it(
    synthesis: Synthesis, stage: str
) -> None:
    template = synthesis.templates[stage]
    audit = table_id(template, stage, constants.AUDIT)
    touching = {
        key: {
            a
            for s in function_statements(template, stage, key)
            for a in actions(s)
            if audit in logical_ids(s["Resource"])
        }
        for key in FUNCTIONS
    }
    assert {key: acts for key, acts in touching.items() if acts} == {
        operator_function(): {"dynamodb:GetItem", "dynamodb:PutItem"}
    }
    assert {spec.tables.get(constants.AUDIT) for spec in FUNCTIONS.values()} == {
        None,
        (GET, PUT),
    }
