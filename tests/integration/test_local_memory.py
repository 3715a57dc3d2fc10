"""The embedded AWS stays small and fast however long it runs, and stays as strict as DynamoDB.

moto rolls a cancelled transaction back by putting back a copy of each table
it wrote to; ``local.aws`` copies only the partitions the transaction writes
and the local stack trims stream records the relay has read. These tests
hold both to DynamoDB's semantics: a cancelled transaction changes nothing,
a committed one changes exactly its items, and the relay reads every record
once, in order.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from local.aws import REGION, reset

pytestmark = pytest.mark.integration

TABLE = "memory-check"


@pytest.fixture
def db(moto_url: str) -> Iterator[Any]:
    reset(moto_url)
    client = boto3.client(
        "dynamodb",
        endpoint_url=moto_url,
        region_name=REGION,
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    client.create_table(
        TableName=TABLE,
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    yield client


def _put(pk: str, sk: str, value: int) -> dict[str, Any]:
    return {
        "Put": {
            "TableName": TABLE,
            "Item": {"pk": {"S": pk}, "sk": {"S": sk}, "v": {"N": str(value)}},
        }
    }


def _bump(pk: str, sk: str, expected: int) -> dict[str, Any]:
    return {
        "Update": {
            "TableName": TABLE,
            "Key": {"pk": {"S": pk}, "sk": {"S": sk}},
            "UpdateExpression": "SET v = v + :one",
            "ConditionExpression": "v = :expected",
            "ExpressionAttributeValues": {":one": {"N": "1"}, ":expected": {"N": str(expected)}},
        }
    }


def _value(db: Any, pk: str, sk: str) -> int | None:
    item = db.get_item(TableName=TABLE, Key={"pk": {"S": pk}, "sk": {"S": sk}}).get("Item")
    return int(item["v"]["N"]) if item else None


def _table() -> Any:
    from moto.dynamodb.models import dynamodb_backends

    return next(
        backend.tables[TABLE]
        for regions in dynamodb_backends.values()
        for backend in regions.values()
        if TABLE in backend.tables
    )


def _stream_count() -> int:
    return len(_table().stream_shard.items)


def test_a_cancelled_transaction_changes_nothing_and_later_writes_survive(db: Any) -> None:
    db.transact_write_items(TransactItems=[_put("A", "1", 1), _put("B", "1", 1)])
    records = _stream_count()
    with pytest.raises(db.exceptions.TransactionCanceledException):
        db.transact_write_items(
            TransactItems=[_bump("A", "1", 1), _put("A", "2", 7), _bump("B", "1", 99)]
        )
    assert (_value(db, "A", "1"), _value(db, "A", "2"), _value(db, "B", "1")) == (1, None, 1)
    assert _stream_count() == records, "a cancelled write left a stream record"
    # A write to another partition, then a cancelled one here: the first stays.
    db.put_item(TableName=TABLE, Item={"pk": {"S": "C"}, "sk": {"S": "1"}, "v": {"N": "5"}})
    with pytest.raises(db.exceptions.TransactionCanceledException):
        db.transact_write_items(TransactItems=[_bump("A", "1", 2)])
    assert _value(db, "C", "1") == 5
    db.transact_write_items(TransactItems=[_bump("A", "1", 1), _put("B", "2", 3)])
    assert (_value(db, "A", "1"), _value(db, "B", "2"), _value(db, "C", "1")) == (2, 3, 5)
    assert _stream_count() == records + 3


def test_a_transaction_copies_only_the_partitions_it_writes(db: Any) -> None:
    """The rollback copy of a table shares every partition the transaction does not name,
    so a move costs the same at the thousandth match as at the first."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    from local.aws import _PARTITIONS

    db.transact_write_items(TransactItems=[_put("old-match", str(i), i) for i in range(50)])
    db.transact_write_items(TransactItems=[_put("live-match", "1", 1)])
    table = _table()
    token = _PARTITIONS.set({TABLE: {DynamoType({"S": "live-match"})}})
    try:
        rollback = copy.deepcopy(table)
    finally:
        _PARTITIONS.reset(token)
    old, live = DynamoType({"S": "old-match"}), DynamoType({"S": "live-match"})
    assert rollback.items[old] is table.items[old]
    assert rollback.items[live] is not table.items[live]
    assert (
        rollback.items[live][DynamoType({"S": "1"})]
        is not table.items[live][DynamoType({"S": "1"})]
    )
    assert rollback.stream_shard.items == table.stream_shard.items
    assert rollback.stream_shard.items is not table.stream_shard.items


def test_the_embedded_aws_keeps_no_object_it_has_let_go(db: Any) -> None:
    """moto's dashboard list of every object it ever made is not kept: a rolled-back copy
    of a table is garbage once its transaction ends."""
    import gc

    from moto.dynamodb.models.table import Table

    db.transact_write_items(TransactItems=[_put("A", "1", 1)])
    for _ in range(20):
        with pytest.raises(db.exceptions.TransactionCanceledException):
            db.transact_write_items(TransactItems=[_bump("A", "1", 99)])
        db.transact_write_items(TransactItems=[_put("B", "1", 1)])
    gc.collect()
    tables = [o for o in gc.get_objects() if isinstance(o, Table) and o.name == TABLE]
    assert len(tables) == 1, f"{len(tables)} copies of the table are still alive"


def test_housekeeping_forgets_the_stream_records_the_relay_has_read(harness: Any) -> None:
    """Records the relay has read go; the relay then reads every later record once, in order."""
    aws = harness.aws
    games = aws.client("dynamodb")
    table = aws.settings.games_table

    def put(i: int) -> None:
        games.put_item(
            TableName=table,
            Item={"pk": {"S": "TABLE#trim"}, "sk": {"S": f"LOG#{i:04d}"}, "v": {"N": str(i)}},
        )

    def shard() -> Any:
        from moto.dynamodb.models import dynamodb_backends

        return next(
            b.tables[table].stream_shard
            for regions in dynamodb_backends.values()
            for b in regions.values()
            if table in b.tables
        )

    relayed: list[str] = []
    real_relay = aws.dispatcher._relay

    def relay(event: dict[str, Any], context: Any) -> dict[str, Any]:
        relayed.extend(r["dynamodb"]["Keys"]["sk"]["S"] for r in event["Records"])
        return {"batchItemFailures": []}

    aws.dispatcher._relay = relay
    try:
        for i in range(5):
            put(i)
        aws.dispatcher.pump_stream()
        put(5)  # written, not yet read
        aws.housekeeping()
        assert len(shard().items) == 1, "read records were kept, or an unread one was dropped"
        for i in range(6, 9):
            put(i)
        aws.dispatcher.pump_stream()
        aws.housekeeping()
        assert shard().items == []
        put(9)
        aws.dispatcher.pump_stream()
    finally:
        aws.dispatcher._relay = real_relay
    assert relayed == [f"LOG#{i:04d}" for i in range(10)]
