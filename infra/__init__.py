"""The AWS CDK app that deploys the game services (``python -m infra.app``; see infra/README.md)."""

from __future__ import annotations

import os

# jsii starts a node process on the first ``import aws_cdk``; on node 20 it prints an
# end-of-life banner on every synth unless this is set before that import.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
