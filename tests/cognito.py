"""Tokens shaped exactly as Amazon Cognito issues them, signed by a test key pair.

The claims are those of a user pool's hosted sign-in (scopes ``openid
profile``): an ID token names the app client in ``aud`` and the user in
``cognito:username``; an access token names it in ``client_id`` and has no
``aud``. ``local.issuer`` signs them and serves the JWKS on 127.0.0.1, so the
verifier fetches keys as it fetches a pool's.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from local.issuer import LocalIssuer

REGION = "eu-west-1"
POOL_ID = f"{REGION}_Ab12Cd34E"
POOL = f"https://cognito-idp.{REGION}.amazonaws.com/{POOL_ID}"
CLIENT = "3n4b5urk1ft4fl3mg5e62d9ado"
SUB = "7c1e6a52-8f3b-4d9e-9a61-2b0c4d5e6f70"


def pool_issuer() -> LocalIssuer:
    """The user pool's name and app client, its keys served from here (call ``stop()``)."""
    return LocalIssuer(POOL, audience=CLIENT).serve()


def _drop_none(claims: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``changes`` applied; a change to None removes the claim."""
    return {k: v for k, v in {**claims, **changes}.items() if v is not None}


def id_claims(now: float, **changes: Any) -> dict[str, Any]:
    issued = int(now)
    claims = {
        "sub": SUB,
        "email_verified": True,
        "iss": POOL,
        "cognito:username": "ann",
        "origin_jti": "1d2e3f40-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
        "aud": CLIENT,
        "event_id": "0f1e2d3c-4b5a-4968-8776-655443322110",
        "token_use": "id",
        "auth_time": issued,
        "exp": issued + 3600,
        "iat": issued,
        "jti": "9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d",
        "email": "ann@example.com",
    }
    return _drop_none(claims, changes)


def access_claims(now: float, **changes: Any) -> dict[str, Any]:
    issued = int(now)
    claims = {
        "sub": SUB,
        "iss": POOL,
        "version": 2,
        "client_id": CLIENT,
        "origin_jti": "1d2e3f40-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
        "event_id": "0f1e2d3c-4b5a-4968-8776-655443322110",
        "token_use": "access",
        "scope": "openid profile",
        "auth_time": issued,
        "exp": issued + 3600,
        "iat": issued,
        "jti": "2b3c4d5e-6f70-4a1b-8c2d-3e4f5a6b7c8d",
        "username": "ann",
    }
    return _drop_none(claims, changes)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(header: dict[str, Any], payload: str, signature: bytes = b"") -> str:
    """A token with any header and claims text, and any (usually no) signature."""
    return f"{b64(json.dumps(header).encode())}.{b64(payload.encode())}.{b64(signature)}"


def resigned(issuer: LocalIssuer, payload: str) -> str:
    """Claims as raw JSON text (``1e400``, ``NaN``), correctly signed with the issuer's key.

    PyJWT writes only what JSON allows; a hostile issuer, or a bug, need not.
    """
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    key = issuer.keys[0]
    header = b64(json.dumps({"alg": "RS256", "kid": key.kid, "typ": "JWT"}).encode())
    body = b64(payload.encode())
    signature = key.private.sign(f"{header}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{header}.{body}.{b64(signature)}"


def with_exp(now: float, exp_text: str) -> str:
    """An ID token's claims as JSON text whose ``exp`` is ``exp_text`` verbatim."""
    return json.dumps(id_claims(now, exp=0)).replace('"exp": 0', f'"exp": {exp_text}')


def public_key_as_secret(issuer: LocalIssuer, payload: str, alg: str = "HS256") -> str:
    """The classic confusion: claims MACed with the issuer's published public key (PEM)."""
    import hashlib
    import hmac

    from cryptography.hazmat.primitives import serialization

    public = (
        issuer.keys[0]
        .private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    header = b64(json.dumps({"alg": alg, "kid": issuer.keys[0].kid}).encode())
    body = b64(payload.encode())
    mac = hmac.new(public, f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{b64(mac)}"
