"""Player tokens: HMAC-signed, carrying the player's id and name, checked on connect.

A browser cannot set headers on a WebSocket, so the token travels in the
query string of the connect request; it is short-lived for that reason. The
identity of every later message comes from the connection, never the body.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass

TOKEN_VERSION = "v1"


class InvalidToken(Exception):
    pass


class ExpiredToken(InvalidToken):
    """Well formed and signed by us, but past ``exp``: the client should get a new one."""


@dataclass(frozen=True)
class Identity:
    player_id: str
    name: str


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sign(secret: bytes, payload: str) -> str:
    return _b64(hmac.new(secret, f"{TOKEN_VERSION}.{payload}".encode(), hashlib.sha256).digest())


def issue_token(secret: bytes, identity: Identity, now: float, ttl_seconds: int) -> str:
    claims = {"sub": identity.player_id, "name": identity.name, "exp": int(now) + ttl_seconds}
    payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
    return f"{TOKEN_VERSION}.{payload}.{_sign(secret, payload)}"


def verify_token(secret: bytes, token: str, now: float) -> Identity:
    """The identity in a token, or ``InvalidToken`` (forged, malformed or expired)."""
    if not isinstance(token, str) or len(token) > 2048:
        raise InvalidToken("malformed")
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != TOKEN_VERSION:
        raise InvalidToken("malformed")
    _, payload, signature = parts
    if not hmac.compare_digest(_sign(secret, payload).encode(), signature.encode()):
        raise InvalidToken("bad signature")
    try:
        claims = json.loads(_unb64(payload))
        player_id, name, expires = str(claims["sub"]), str(claims["name"]), int(claims["exp"])
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidToken("malformed") from exc
    if expires < now:
        raise ExpiredToken("expired")
    if not (0 < len(player_id) <= 64 and 0 < len(name) <= 32):
        raise InvalidToken("malformed")
    return Identity(player_id=player_id, name=name)
