"""The storage contract and the book on DynamoDB (the moto server), the in-memory storage
beside it.

``tests/services`` runs the same cases on the in-memory storage alone; here each
runs on ``DynamoStorage`` too, and that is what holds the fake the fast tier
trusts to DynamoDB's semantics.
"""

from __future__ import annotations

from typing import Any

import pytest

from services.common.dynamo_storage import DynamoStorage
from services.common.memory_storage import MemoryStorage
from services.common.unit_of_work import Storage
from tests.services.test_ledger import BookContract
from tests.services.test_unit_of_work import StorageContract

pytestmark = pytest.mark.integration


class TestBothStorages(StorageContract):
    @pytest.fixture(params=["memory", "dynamodb"])
    def storage(self, request: pytest.FixtureRequest) -> Storage:
        if request.param == "memory":
            return MemoryStorage()
        return DynamoStorage.default(request.getfixturevalue("dynamodb"))


class TestBookOnDynamoDB(BookContract):
    @pytest.fixture
    def storage(self, dynamodb: Any) -> Storage:
        return DynamoStorage.default(dynamodb)
