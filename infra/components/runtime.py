"""The Lambda runtime every function runs on, and the dependency layer built for it.

The layer's pydantic-core is compiled for one CPython: the runtime, the layer's
build (``infra.assets``) and cdk-nag's runtime check all follow ``RUNTIME``.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import Stack
from aws_cdk import aws_lambda as lambda_

from infra.assets import PLACEHOLDER, Assets

RUNTIME = getattr(lambda_.Runtime, "PYTHON_3_13", None) or lambda_.Runtime.PYTHON_3_12
PYTHON_VERSION = RUNTIME.name.removeprefix("python")
ARCHITECTURE = lambda_.Architecture.ARM_64


def latest_python() -> lambda_.Runtime:
    """The newest Python runtime this aws-cdk-lib knows (what cdk-nag's L1 compares with)."""
    pythons = [r for r in lambda_.Runtime.ALL if r.name.startswith("python3.")]
    return max(pythons, key=lambda r: int(r.name.removeprefix("python3.")))


def dependency_layer(stack: Stack, assets: Assets) -> lambda_.LayerVersion:
    if not assets.bundled:
        cdk.Annotations.of(stack).add_warning_v2(
            "canasta:placeholder-layer",
            f"The dependency layer is a placeholder ({PLACEHOLDER}): "
            "this template cannot be deployed; synthesize without bundle=false.",
        )
        # CloudFormation checks rules before it creates anything: such a stack is
        # refused at deploy, instead of deploying functions that fail on import.
        cdk.CfnRule(
            stack,
            "LayerIsBundled",
            assertions=[
                cdk.CfnRuleAssertion(
                    assert_=cdk.Fn.condition_equals("placeholder-layer", "bundled-layer"),
                    assert_description="Synthesized with bundle=false: the dependency "
                    "layer is a placeholder. Synthesize with bundle=true to deploy.",
                )
            ],
        )
    return lambda_.LayerVersion(
        stack,
        "Dependencies",
        code=lambda_.Code.from_asset(str(assets.layer)),
        compatible_runtimes=[RUNTIME],
        compatible_architectures=[ARCHITECTURE],
        description="pydantic, aws-lambda-powertools, PyJWT, cryptography",
    )
