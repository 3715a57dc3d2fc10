"""Small helpers for the low-level DynamoDB client, shared by the stores."""

from __future__ import annotations

from typing import Any, Protocol


class DynamoClient(Protocol):
    def get_item(self, **kwargs: Any) -> dict[str, Any]: ...
    def put_item(self, **kwargs: Any) -> dict[str, Any]: ...
    def update_item(self, **kwargs: Any) -> dict[str, Any]: ...
    def delete_item(self, **kwargs: Any) -> dict[str, Any]: ...
    def transact_write_items(self, **kwargs: Any) -> dict[str, Any]: ...
    def query(self, **kwargs: Any) -> dict[str, Any]: ...


def s(value: str) -> dict[str, str]:
    return {"S": value}


def n(value: float) -> dict[str, str]:
    return {"N": repr(value) if isinstance(value, float) else str(value)}


def error_code(exc: Exception) -> str:
    """The AWS error code of a botocore ``ClientError`` ('' for anything else)."""
    response = getattr(exc, "response", None) or {}
    return str(response.get("Error", {}).get("Code", ""))


def cancelled_on(exc: Exception, index: int) -> bool:
    """Whether a cancelled transaction failed on the condition of item ``index``."""
    reasons = (getattr(exc, "response", None) or {}).get("CancellationReasons") or []
    return index < len(reasons) and reasons[index].get("Code") == "ConditionalCheckFailed"


CONDITION_FAILED = "ConditionalCheckFailedException"
TRANSACTION_CANCELLED = "TransactionCanceledException"
