"""The console's side of the operators' function: each action sent as a signed request.

The console writes no table: it asks the function (``services/ops``) through its
function URL (AuthType ``AWS_IAM``), signing each request with the operator's own
credentials (SigV4, service ``lambda``), so that AWS authorizes it against the
operator's act policy and names the operator to the function. Every way a
request can fail comes back as one ``ActionRefused`` with a code.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ops.stage import Stage

TIMEOUT_SECONDS = 35
"""A little over the function's own timeout."""


class ActionRefused(Exception):
    """The console cannot do what was asked; ``code`` says why, and nothing was changed
    (but the audit record of a refused action)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class OperatorFunction:
    """The operators' function of a stage, as its URL answers."""

    def __init__(self, stage: Stage) -> None:
        self._stage = stage

    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` to ``path`` of the URL, signed; the answer, or ``ActionRefused``."""
        from botocore.auth import SigV4Auth  # noqa: PLC0415 - only actions sign
        from botocore.awsrequest import AWSRequest  # noqa: PLC0415

        stage = self._stage
        if stage.operator_url is None:
            raise ActionRefused(
                "no_operator_url",
                "this stage has no operators' function URL (a stack output OperatorUrl; "
                "locally --gateway): deploy this version or give it",
            )
        credentials = stage.credentials()
        if credentials is None:
            raise ActionRefused(
                "no_credentials", "no AWS credentials to sign with: a profile, SSO or variables"
            )
        url = stage.operator_url.rstrip("/") + path
        headers = {"Content-Type": "application/json", **stage.headers}
        request = AWSRequest("POST", url, data=json.dumps(body).encode(), headers=headers)
        SigV4Auth(credentials, "lambda", stage.region).add_auth(request)
        prepared = request.prepare()
        sent = urllib.request.Request(
            prepared.url, data=prepared.body, headers=dict(prepared.headers), method="POST"
        )
        try:
            with urllib.request.urlopen(sent, timeout=TIMEOUT_SECONDS) as answer:
                return dict(json.loads(answer.read() or b"{}"))
        except urllib.error.HTTPError as failed:
            raise refusal(failed.code, failed.read()) from None
        except (urllib.error.URLError, OSError) as unreachable:
            reason = getattr(unreachable, "reason", unreachable)
            raise ActionRefused("unreachable", f"cannot reach {url}: {reason}") from None


def refusal(status: int, body: bytes) -> ActionRefused:
    """The function's own refusal (``error``, ``message``), or what AWS answered for it."""
    try:
        answer = json.loads(body)
    except ValueError:
        answer = None
    if isinstance(answer, dict) and isinstance(answer.get("error"), str):
        return ActionRefused(answer["error"], str(answer.get("message", "")))
    said = answer.get("Message", "") if isinstance(answer, dict) else body.decode(errors="replace")
    if status == 403:
        return ActionRefused("access_denied", f"AWS refused the call: {said or 'Forbidden'}")
    return ActionRefused("internal", f"the operators' function failed ({status}): {said}")
