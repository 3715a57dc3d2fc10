"""Player tokens (services/common/auth.py): issued, checked, refused."""

from __future__ import annotations

import base64
import json

import pytest

from services.common.auth import Identity, InvalidToken, issue_token, verify_token

pytestmark = pytest.mark.unit

SECRET = b"unit-secret"
NOW = 1_800_000_000.0


def _token() -> str:
    return issue_token(SECRET, Identity("p1", "Ann"), NOW, 600)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _signed(claims: object) -> str:
    """A correctly signed token around arbitrary claims (as if the key had issued it)."""
    from services.common.auth import _sign

    payload = _b64(json.dumps(claims).encode())
    return f"v1.{payload}.{_sign(SECRET, payload)}"


def test_a_fresh_token_names_its_player() -> None:
    assert verify_token(SECRET, _token(), NOW + 1) == Identity("p1", "Ann")


def test_a_token_is_valid_until_its_expiry_second() -> None:
    token = issue_token(SECRET, Identity("p1", "Ann"), NOW, 600)
    assert verify_token(SECRET, token, NOW + 600) == Identity("p1", "Ann")
    with pytest.raises(InvalidToken, match="expired"):
        verify_token(SECRET, token, NOW + 601)


def test_a_token_signed_with_another_key_is_refused() -> None:
    forged = issue_token(b"another-key", Identity("p1", "Ann"), NOW, 600)
    with pytest.raises(InvalidToken, match="bad signature"):
        verify_token(SECRET, forged, NOW)


def test_a_tampered_payload_is_refused() -> None:
    version, payload, signature = _token().split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["sub"] = "p2"
    tampered = f"{version}.{_b64(json.dumps(claims).encode())}.{signature}"
    with pytest.raises(InvalidToken, match="bad signature"):
        verify_token(SECRET, tampered, NOW)


def test_a_tampered_signature_is_refused() -> None:
    token = _token()
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    with pytest.raises(InvalidToken):
        verify_token(SECRET, flipped, NOW)


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        "garbage",
        "v1",
        "v1.",
        "v1..",
        "v2.abc.def",
        "v1.a.b.c",
        "v1.!!!.???",
        "x" * 5000,
        "v1.abc.\u00e9t\u00e9",  # a non-ASCII signature
        "v1.\u00e9.abc",
        "v1.abc.\x00",
    ],
)
def test_garbage_is_refused_with_invalid_token(garbage: str) -> None:
    """Whatever a client puts in the query string is refused cleanly, never a crash."""
    with pytest.raises(InvalidToken):
        verify_token(SECRET, garbage, NOW)


@pytest.mark.parametrize(
    "claims",
    [
        [],
        None,
        "text",
        {"name": "Ann", "exp": NOW + 60},
        {"sub": "p1", "exp": NOW + 60},
        {"sub": "p1", "name": "Ann"},
        {"sub": "p1", "name": "Ann", "exp": "soon"},
        {"sub": "", "name": "Ann", "exp": NOW + 60},
        {"sub": "p1", "name": "", "exp": NOW + 60},
        {"sub": "p" * 65, "name": "Ann", "exp": NOW + 60},
        {"sub": "p1", "name": "n" * 33, "exp": NOW + 60},
    ],
)
def test_signed_but_malformed_claims_are_refused(claims: object) -> None:
    with pytest.raises(InvalidToken):
        verify_token(SECRET, _signed(claims), NOW)


def test_signed_claims_at_the_limits_are_accepted() -> None:
    claims = {"sub": "p" * 64, "name": "n" * 32, "exp": int(NOW) + 60}
    assert verify_token(SECRET, _signed(claims), NOW) == Identity("p" * 64, "n" * 32)
