"""What the infra tests share: whether the CDK can run here, and the synthesis result."""

from __future__ import annotations

import importlib.util
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HAVE_CDK = importlib.util.find_spec("aws_cdk") is not None and shutil.which("node") is not None
SKIP_REASON = "the infra extra (pip install -e '.[infra]') or node is missing"
OIDC_ISSUER = "https://accounts.rummy.example/realms/players"
"""The existing issuer the ``oidc`` stage is configured with."""
OIDC_AUDIENCE = "canasta"
ALARM_EMAIL = "alarms@play.example"
"""The address the ``prod`` stage's alarm topic mails."""
ALARM_TOPIC_ARN = "arn:aws:sns:eu-west-1:111122223333:platform-alarms"
"""The existing topic the ``oidc`` stage's alarms notify (it makes no topic of its own)."""
STAGES = ("dev", "prod")
"""The stages every template test runs against (the session also synthesizes "oidc")."""
SES_FROM_EMAIL = "noreply@example.com"
"""The verified SES sender of the ``prod`` stage's user pool (production requires one)."""


@dataclass(frozen=True)
class Synthesis:
    stacks: dict[str, Any]
    """stage → CanastaStack."""
    templates: dict[str, dict[str, Any]]
    """stage → the synthesized CloudFormation template."""
    outdir: Path
    build_dir: Path
    seconds: float
