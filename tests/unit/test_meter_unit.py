"""The benchmarks' item sizes, which price every write: DynamoDB's rules, whoever holds
the item (a request's parameters, moto's stored copy)."""

from __future__ import annotations

import base64

import pytest

from benchmarks.meter import item_size, value_size, write_units

pytestmark = pytest.mark.unit


def test_a_binary_value_counts_its_raw_bytes_in_base64_or_not() -> None:
    """A request carries a binary value as bytes; moto's stored items and its stream hold
    it in base64, a third longer, which DynamoDB never bills."""
    raw = bytes(range(256)) * 3
    assert value_size({"B": raw}) == value_size({"B": base64.b64encode(raw).decode()}) == 768


def test_an_item_of_800_binary_bytes_is_one_write_unit() -> None:
    item = {
        "pk": {"S": "TABLE#t1"},
        "sk": {"S": "TABLE"},
        "state": {"B": base64.b64encode(b"\0" * 800).decode()},
    }
    assert item_size(item) == 2 + 8 + 2 + 5 + 5 + 800
    assert write_units(0, item_size(item)) == 1
