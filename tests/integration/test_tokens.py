"""The $connect authorizer: only a genuine, fresh JWT of the configured issuer opens a connection.

The issuer here is shaped as a Cognito user pool (``tests/cognito.py``): its
name and app client, tokens with exactly Cognito's claims, signed by a test
key pair whose JWKS the authorizer fetches over HTTP. Every bad token gets a
Deny (403) or, when only expired, ``Unauthorized`` (401), and stores nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import jwt
import pytest

from local.dispatcher import LambdaContext
from local.issuer import LocalIssuer, SigningKey
from services.common.auth import MAX_TOKEN_CHARS
from services.common.identities import player_id_of
from services.connect import handler as connect_handler
from tests.cognito import (
    CLIENT,
    POOL,
    SUB,
    access_claims,
    b64,
    id_claims,
    public_key_as_secret,
    resigned,
    unsigned,
    with_exp,
)
from tests.integration.harness import Harness
from tests.integration.machine import fresh_harness

pytestmark = pytest.mark.integration


@pytest.fixture
def cognito(moto_url: str, pool: LocalIssuer) -> Iterator[Harness]:
    """A fresh account whose authorizer accepts the user pool's tokens."""
    with fresh_harness(moto_url, issuer=pool) as harness:
        yield harness


def _refused(harness: Harness, token: str | None) -> None:
    policy = harness.authorize(token)
    statement = policy["policyDocument"]["Statement"][0]
    assert statement["Effect"] == "Deny"
    assert policy.get("context") in ({}, None), "a refused connection carries no identity"
    assert harness.connection_items() == []


def test_a_cognito_id_token_connects_as_its_sub(cognito: Harness, pool: LocalIssuer) -> None:
    policy = cognito.authorize(pool.sign(id_claims(time.time())))
    assert policy["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    assert policy["principalId"] == SUB
    assert policy["context"] == {"player_id": SUB, "name": "ann"}
    connection = cognito.connect(SUB, pool.sign(id_claims(time.time())))
    assert connection is not None
    (item,) = cognito.connection_items()
    assert item["connection_id"]["S"] == connection and item["player_id"]["S"] == SUB
    welcome = cognito.send(connection, {"action": "hello"})
    assert welcome.get("statusCode") == 200
    (message,) = [m for m in cognito.inbox.messages[connection] if m.get("type") == "welcome"]
    assert (message["player_id"], message["name"]) == (SUB, "ann")


@pytest.mark.parametrize("subject", ["auth0|abc", "user=42", "bot-x", "u" * 255])
def test_every_subject_connects_as_the_player_id_it_maps_to(
    cognito: Harness, pool: LocalIssuer, subject: str
) -> None:
    """The connection, its record and every later message carry the mapped player id:
    the one the ledger API books for when another mode names the subject."""
    player_id = player_id_of(subject)
    assert player_id is not None
    connection = cognito.connect(subject, pool.sign(id_claims(time.time(), sub=subject)))
    assert connection is not None
    (item,) = cognito.connection_items()
    assert item["player_id"]["S"] == player_id
    cognito.send(connection, {"action": "hello"})
    (message,) = [m for m in cognito.inbox.messages[connection] if m.get("type") == "welcome"]
    assert (message["player_id"], message["name"]) == (player_id, "ann")


def test_a_cognito_access_token_connects_too(cognito: Harness, pool: LocalIssuer) -> None:
    assert cognito.connect(SUB, pool.sign(access_claims(time.time()))) is not None


def _bad_tokens(pool: LocalIssuer) -> dict[str, str]:
    now = time.time()
    impostor = SigningKey()
    impostor.kid = pool.keys[0].kid
    header, _, signature = pool.sign(id_claims(now)).split(".")
    spliced = pool.sign(id_claims(now, sub="mallory")).split(".")[1]
    key = pool.keys[0]
    return {
        "bad signature": impostor.sign(id_claims(now)),
        "spliced payload": f"{header}.{spliced}.{signature}",
        "unknown kid": SigningKey().sign(id_claims(now)),
        "the pool's key under a made-up kid": pool.keys[0].sign(id_claims(now), {"kid": "k-0"}),
        "wrong issuer": pool.sign(id_claims(now, iss=POOL.replace("Ab12Cd34E", "Zz99Yy88X"))),
        "wrong audience": pool.sign(id_claims(now, aud="another-app-client")),
        "access token of another client": pool.sign(access_claims(now, client_id="other")),
        "no token_use": pool.sign(id_claims(now, token_use=None)),
        "exp 1e400": resigned(pool, with_exp(now, "1e400")),
        "exp NaN": resigned(pool, with_exp(now, "NaN")),
        "exp as text": pool.sign(id_claims(now, exp=str(int(now) + 600))),
        "exp a year ahead": pool.sign(id_claims(now, exp=int(now) + 365 * 86400)),
        "iat as text": pool.sign(id_claims(now, iat="today")),
        "oversized": pool.sign(id_claims(now, padding="x" * MAX_TOKEN_CHARS)),
        "alg none": unsigned({"alg": "none", "kid": pool.keys[0].kid}, json.dumps(id_claims(now))),
        "HS256 confusion": public_key_as_secret(pool, json.dumps(id_claims(now))),
        "sub names the house": pool.sign(id_claims(now, sub="house:bots")),
        "sub with a trailing newline": pool.sign(id_claims(now, sub="p-a\n")),
        "padded signature": f"{pool.sign(id_claims(now))}==",
        "RS384 by the pool's key": jwt.encode(
            id_claims(now), key.private, algorithm="RS384", headers={"kid": key.kid}
        ),
        "garbage": "garbage",
        "empty": "",
        "the old home-made form": "v1." + b64(b'{"sub":"eve","exp":9999999999}') + ".sig",
        "non-ascii": "\u00e9\u00e9.\u00e9.\u00e9",
    }


BAD = (
    "bad signature",
    "spliced payload",
    "unknown kid",
    "the pool's key under a made-up kid",
    "wrong issuer",
    "wrong audience",
    "access token of another client",
    "no token_use",
    "exp 1e400",
    "exp NaN",
    "exp as text",
    "exp a year ahead",
    "iat as text",
    "oversized",
    "alg none",
    "HS256 confusion",
    "sub names the house",
    "sub with a trailing newline",
    "padded signature",
    "RS384 by the pool's key",
    "garbage",
    "empty",
    "the old home-made form",
    "non-ascii",
)


@pytest.mark.parametrize("label", BAD)
def test_every_bad_token_is_denied_and_nothing_raises(
    cognito: Harness, pool: LocalIssuer, label: str
) -> None:
    token = _bad_tokens(pool)[label]
    _refused(cognito, token)
    assert cognito.connect(SUB, token) is None


def test_the_list_of_bad_tokens_is_the_one_tested() -> None:
    assert set(BAD) == set(_bad_tokens(LocalIssuer("https://x.example")))


def test_a_missing_token_is_denied(cognito: Harness) -> None:
    _refused(cognito, None)
    event: dict[str, Any] = {"type": "REQUEST", "methodArn": "arn:aws:execute-api:x"}
    denied = connect_handler.authorize(event, LambdaContext("connect-authorizer"))
    assert denied["policyDocument"]["Statement"][0]["Effect"] == "Deny"


def test_an_expired_token_is_unauthorized_not_forbidden(
    cognito: Harness, pool: LocalIssuer
) -> None:
    """API Gateway answers the authorizer's ``Unauthorized`` error with 401 (get a new
    token) and a Deny policy with 403 (forged): the contract tells the two apart."""
    expired = pool.sign(id_claims(time.time() - 7200))
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        cognito.authorize(expired)
    assert cognito.connection_items() == []


def test_the_local_issuers_token_connects(harness: Harness) -> None:
    connection = harness.connect("ann", harness.token("ann", "Ann"))
    assert connection is not None
    (item,) = harness.connection_items()
    assert item["connection_id"]["S"] == connection
    assert item["player_id"]["S"] == "ann"
    player = harness.presence.get_player("ann")
    assert player is not None and player.connection_id == connection


def test_another_issuers_tokens_do_not_open_this_stack(harness: Harness, pool: LocalIssuer) -> None:
    """The stack trusts one issuer: a genuine Cognito token is nobody here."""
    _refused(harness, pool.sign(id_claims(time.time())))
    assert harness.aws.issuer.audience != CLIENT


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
