"""The $connect authorizer: only a valid, fresh token signed with the key opens a connection."""

from __future__ import annotations

import time

import pytest

from local.dispatcher import LambdaContext
from services.common.auth import Identity, issue_token
from services.connect import handler as connect_handler
from tests.integration.harness import Harness

pytestmark = pytest.mark.integration


def _refused(harness: Harness, token: str | None) -> None:
    policy = harness.authorize(token)
    statement = policy["policyDocument"]["Statement"][0]
    assert statement["Effect"] == "Deny"
    assert policy.get("context") in ({}, None), "a refused connection carries no identity"
    assert harness.connect("eve", token) is None


BAD_TOKENS = {
    "garbage": "garbage",
    "empty": "",
    "three dots": "v1..",
    "wrong version": "v9.e30.AAAA",
    "too long": "v1." + "A" * 3000 + ".sig",
    "non-ascii signature": "v1.eyJzdWIiOiJldmUifQ.\u00e9\u00e9",
    "non-ascii payload": "v1.\u00e9.abc",
}


@pytest.mark.parametrize("token", BAD_TOKENS.values(), ids=BAD_TOKENS.keys())
def test_garbage_tokens_are_denied(harness: Harness, token: str) -> None:
    _refused(harness, token)
    assert harness.connection_items() == []


def test_a_missing_token_is_denied(harness: Harness) -> None:
    _refused(harness, None)
    assert harness.connection_items() == []


def test_a_forged_signature_is_denied(harness: Harness) -> None:
    forged = issue_token(b"not-the-key", Identity("eve", "Eve"), time.time(), 600)
    _refused(harness, forged)
    version, _, signature = harness.token("eve").split(".")
    other = harness.token("mallory").split(".")[1]
    _refused(harness, f"{version}.{other}.{signature}")
    assert harness.connection_items() == []


def test_an_expired_token_is_unauthorized_not_forbidden(harness: Harness) -> None:
    """API Gateway answers the authorizer's ``Unauthorized`` error with 401 (get a new
    token) and a Deny policy with 403 (forged): the contract tells the two apart."""
    expired = harness.token("eve", ttl=60, now=time.time() - 3600)
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        harness.authorize(expired)
    assert harness.connection_items() == []


def test_a_valid_token_connects(harness: Harness) -> None:
    connection = harness.connect("ann", harness.token("ann", "Ann"))
    assert connection is not None
    (item,) = harness.connection_items()
    assert item["connection_id"]["S"] == connection
    assert item["player_id"]["S"] == "ann"
    player = harness.presence.get_player("ann")
    assert player is not None and player.connection_id == connection


def test_connect_without_an_authorized_identity_is_refused(harness: Harness) -> None:
    """$connect reached without the authorizer's context (misconfiguration): 401, nothing stored."""
    event = {
        "requestContext": {
            "connectionId": "c-anon",
            "routeKey": "$connect",
            "eventType": "CONNECT",
        },
        "isBase64Encoded": False,
    }
    assert connect_handler.connect(event, LambdaContext("connect")) == {"statusCode": 401}
    assert harness.connection_items() == []
