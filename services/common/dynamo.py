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


def cancellation(exc: Exception, index: int) -> str:
    """Why a cancelled transaction stopped at item ``index`` ('None' if it did not)."""
    reasons = (getattr(exc, "response", None) or {}).get("CancellationReasons") or []
    return str(reasons[index].get("Code", "None")) if index < len(reasons) else "None"


CONDITION_FAILED = "ConditionalCheckFailedException"
TRANSACTION_CANCELLED = "TransactionCanceledException"
TRANSACTION_CONFLICT = "TransactionConflictException"
"""A single write refused because a transaction in progress holds its item."""
CONFLICT_REASON = "TransactionConflict"
"""A cancelled transaction's reason for an item another transaction or write held."""


def query_all(client: DynamoClient, **kwargs: Any) -> list[dict[str, Any]]:
    """Every item a query matches, following the pages."""
    items: list[dict[str, Any]] = []
    while True:
        page = client.query(**kwargs)
        items.extend(page.get("Items", []))
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
