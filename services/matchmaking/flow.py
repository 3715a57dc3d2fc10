"""The matchmaking state machine: one execution per queue ticket.

Defined once, here: the CDK stack deploys this definition and the local
stack and the tests run the very same one on moto. Each pass sends a
``try_match`` task to the matchmaking queue and waits for the service's answer
(``.waitForTaskToken``): seated, gone (left or disconnected), expired, or
waiting — then it waits ``poll_seconds`` and tries again. The wait is durable:
a deploy or a crashed function loses no ticket; a task that is never answered
is retried, then abandoned, which takes the player out of the queue.

Tables form when players arrive (each new ticket's first pass seats the
oldest four), so the polling only has to notice expiry: ``poll_seconds`` can
be long, and Step Functions transitions are most of matchmaking's cost.
"""

from __future__ import annotations

import json
from typing import Any


def definition(queue_url: str, partition: str = "aws") -> dict[str, Any]:
    """``partition``: the stack passes its own (``aws-cn``, ``aws-us-gov``, ...)."""
    return {
        "Comment": "A matchmaking ticket: try to seat the player until seated, gone or expired.",
        "StartAt": "TryMatch",
        "States": {
            "TryMatch": {
                "Type": "Task",
                "Resource": f"arn:{partition}:states:::sqs:sendMessage.waitForTaskToken",
                "Parameters": {
                    "QueueUrl": queue_url,
                    "MessageBody": {
                        "kind": "try_match",
                        "ticket.$": "$.ticket",
                        "task_token.$": "$$.Task.Token",
                    },
                },
                "ResultPath": "$.outcome",
                "TimeoutSeconds": 300,
                "Retry": [
                    {
                        "ErrorEquals": ["States.Timeout", "States.TaskFailed"],
                        "IntervalSeconds": 5,
                        "MaxAttempts": 2,
                        "BackoffRate": 2.0,
                    }
                ],
                "Catch": [
                    {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Abandon"}
                ],
                "Next": "Outcome",
            },
            "Abandon": {
                "Comment": "No answer came: take the ticket out of the queue, tell the player.",
                "Type": "Task",
                "Resource": f"arn:{partition}:states:::sqs:sendMessage",
                "Parameters": {
                    "QueueUrl": queue_url,
                    "MessageBody": {"kind": "abandon", "ticket.$": "$.ticket"},
                },
                "Next": "Expired",
            },
            "Outcome": {
                "Type": "Choice",
                "Choices": [
                    {"Variable": "$.outcome.status", "StringEquals": "seated", "Next": "Seated"},
                    {"Variable": "$.outcome.status", "StringEquals": "gone", "Next": "Gone"},
                    {"Variable": "$.outcome.status", "StringEquals": "expired", "Next": "Expired"},
                ],
                "Default": "Wait",
            },
            "Wait": {"Type": "Wait", "SecondsPath": "$.ticket.poll_seconds", "Next": "TryMatch"},
            "Seated": {"Type": "Succeed"},
            "Gone": {"Type": "Succeed"},
            "Expired": {"Type": "Succeed"},
        },
    }


def definition_json(queue_url: str, partition: str = "aws") -> str:
    return json.dumps(definition(queue_url, partition), separators=(",", ":"))
