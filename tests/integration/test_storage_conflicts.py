"""The DynamoDB storage against botocore's Stubber: writes that collide with a transaction.

moto never reports a collision, so these answers are stubbed as DynamoDB gives them: a
``TransactWriteItems`` cancelled with ``TransactionConflict`` for the item another
transaction held (``None`` for the others), and a single write refused with
``TransactionConflictException``. Neither wrote anything: the storage sends the same
request again, and a commit that collides on every try is a lost race
(``VersionConflict``), never the write's own refusal.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from services.common.dynamo_storage import Backoff, DynamoStorage, to_item
from services.common.unit_of_work import (
    Absent,
    AlreadyDone,
    Committed,
    ConditionFailed,
    Delete,
    Equals,
    Item,
    Key,
    Put,
    Update,
    VersionConflict,
    Write,
)

pytestmark = pytest.mark.integration

TABLE: Key = {"pk": "TABLE#t1", "sk": "TABLE"}
MOVE = Update("games", TABLE, set={"version": 8}, when=Equals("version", 7))
LOGGED = Put("games", {"pk": "TABLE#t1", "sk": "LOG#0001#000008"}, when=Absent())
SEAT = Update(
    "games",
    TABLE,
    set={"conn1": "c2"},
    when=Equals("conn1", "c1"),
    refusal=ConditionFailed("seat taken"),
)


class Stubbed:
    """A storage over a stubbed client, with the pauses it took instead of sleeping them."""

    def __init__(self, client: Any, stubber: Stubber) -> None:
        self.stubber = stubber
        self.pauses: list[float] = []
        self.storage = DynamoStorage.default(
            client, Backoff(pause=self.pauses.append, draw=lambda: 0.5)
        )

    def cancelled(self, writes: list[Write], *reasons: str) -> None:
        """The transaction of ``writes`` answered as cancelled, one reason per item."""
        self.stubber.add_client_error(
            "transact_write_items",
            service_error_code="TransactionCanceledException",
            service_message=f"Transaction cancelled [{', '.join(reasons)}]",
            http_status_code=400,
            modeled_fields={"CancellationReasons": [{"Code": r} for r in reasons]},
            expected_params=self.transaction(writes),
        )

    def committed(self, writes: list[Write]) -> None:
        self.stubber.add_response("transact_write_items", {}, self.transaction(writes))

    def transaction(self, writes: list[Write]) -> dict[str, Any]:
        return {"TransactItems": [{type(w).__name__: self.storage.request(w)} for w in writes]}

    def held(self, operation: str, request: dict[str, Any]) -> None:
        """A single write refused: a transaction in progress holds its item."""
        self.stubber.add_client_error(
            operation,
            service_error_code="TransactionConflictException",
            service_message="Transaction is ongoing for the item",
            http_status_code=400,
            expected_params=request,
        )


@pytest.fixture
def stubbed() -> Iterator[Stubbed]:
    client = boto3.client(
        "dynamodb", region_name="eu-west-1", aws_access_key_id="unit", aws_secret_access_key="unit"
    )
    with Stubber(client) as stubber:
        yield Stubbed(client, stubber)
        stubber.assert_no_pending_responses()


def test_a_collided_transaction_is_sent_again_and_commits(stubbed: Stubbed) -> None:
    writes: list[Write] = [MOVE, LOGGED]
    stubbed.cancelled(writes, "None", "TransactionConflict")
    stubbed.committed(writes)
    assert stubbed.storage.commit(writes) == Committed()
    assert stubbed.pauses == [pytest.approx(0.0075)]


def test_a_transaction_that_collides_every_time_is_a_lost_race(stubbed: Stubbed) -> None:
    writes: list[Write] = [MOVE, LOGGED]
    for _ in range(3):
        stubbed.cancelled(writes, "TransactionConflict", "None")
    assert stubbed.storage.commit(writes) == VersionConflict()
    assert stubbed.pauses == [pytest.approx(0.0075), pytest.approx(0.015)]


def test_a_failed_condition_wins_over_a_collision_in_the_same_cancellation(
    stubbed: Stubbed,
) -> None:
    """Sent again, the condition would fail again: the refusal is the answer, at once."""
    writes: list[Write] = [MOVE, LOGGED]
    stubbed.cancelled(writes, "TransactionConflict", "ConditionalCheckFailed")
    assert stubbed.storage.commit(writes) == AlreadyDone()
    assert stubbed.pauses == []


def test_a_cancellation_for_another_reason_is_raised_not_retried(stubbed: Stubbed) -> None:
    writes: list[Write] = [MOVE, LOGGED]
    stubbed.cancelled(writes, "ThrottlingError", "None")
    with pytest.raises(ClientError):
        stubbed.storage.commit(writes)


def test_a_single_write_a_transaction_held_is_sent_again(stubbed: Stubbed) -> None:
    returning = Delete("connections", {"connection_id": "c1"}, returning="old")
    request = {**stubbed.storage.request(returning), "ReturnValues": "ALL_OLD"}
    stubbed.held("delete_item", request)
    old: Item = {"connection_id": "c1", "player_id": "p1"}
    stubbed.stubber.add_response("delete_item", {"Attributes": to_item(old)}, request)
    assert stubbed.storage.commit([returning]) == Committed(before=old)
    assert stubbed.pauses == [pytest.approx(0.0075)]


def test_a_single_write_held_every_time_is_a_lost_race_not_its_refusal(
    stubbed: Stubbed,
) -> None:
    """The seat was not taken: the write never reached its condition."""
    for _ in range(3):
        stubbed.held("update_item", stubbed.storage.request(SEAT))
    assert stubbed.storage.commit([SEAT]) == VersionConflict()
    assert len(stubbed.pauses) == 2
