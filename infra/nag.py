"""cdk-nag: the AWS Solutions checks, and acknowledgements that always carry their reason.

A finding that is not acknowledged makes synthesis fail (the report is in
``cdk.out/validation-report.json``). Acknowledge on the narrowest construct and,
for granular rules (IAM4, IAM5), the exact finding (``AwsSolutions-IAM5[Resource::…]``).
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, App, Validations
from cdk_nag import AwsSolutionsChecks
from constructs import IConstruct

MIN_REASON_WORDS = 10
"""A reason is a sentence that says why, not a label."""


def acknowledge(scope: IConstruct, rule: str, reason: str) -> None:
    """Acknowledge one rule (or one finding of it) on ``scope`` and below, with a reason."""
    if len(reason.split()) < MIN_REASON_WORDS:
        raise ValueError(f"acknowledging {rule} needs a written reason")
    Validations.of(scope).acknowledge(Acknowledgment(id=rule, reason=reason))


def add_checks(app: App) -> None:
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
