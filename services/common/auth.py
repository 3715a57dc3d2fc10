"""Player tokens: RS256 JWTs from an OpenID Connect issuer, checked on connect.

The issuer is Amazon Cognito (the stack's user pool) by default, or the
platform's existing OIDC issuer, or locally the local stack's own issuer
(``local/issuer.py``): the same code verifies all three, configured by
issuer URL, audience and JWKS URL alone.

A browser cannot set headers on a WebSocket, so the token travels in the
query string of the connect request; the identity of every later message
comes from the connection, never the body.

What a token must be, every rule a refusal (``InvalidToken``) and never
another exception:

- at most ``MAX_TOKEN_CHARS`` long, checked before anything is parsed;
- three segments of canonical unpadded base64url (RFC 7515), checked before
  PyJWT decodes anything: PyJWT also takes ``=`` padding, and one token has
  one spelling;
- signed with RS256 (``none``, HS256, RS384, PS256 and every other algorithm
  are refused before a key is looked up, so a public key can never be used as
  an HMAC secret) by a key of the issuer's JWKS, named by the header's ``kid``;
- ``iss`` the configured issuer; ``exp`` a finite number in the future (a
  small leeway for clock skew) and no more than ``MAX_LIFETIME`` away;
- for Cognito (``iss`` on ``cognito-idp``): ``token_use`` ``id`` with
  ``aud`` the app client, or ``access`` with ``client_id`` the app client;
  for any other issuer ``aud`` holds the configured audience;
- ``sub`` a subject: 1-255 characters of letters, digits and ``._@|+=-``
  (``services.common.identities``). No colon, so no token names a ledger account
  such as ``house:bots`` or a bot a host seated.

The player id is the one ``sub`` maps to (``player_id_of``: most subjects are
their own); the display name the first of ``preferred_username``, ``name``,
``cognito:username``, ``username`` (Cognito's ID tokens carry
``cognito:username``, access tokens ``username``) that, cut to 24 characters, is
a display name (``services.common.names``: no invisible, control or symbol
character gets to the table from any issuer), else ``Player``.

PyJWT (with cryptography) is imported where a token is verified, not with this
module: the connect and disconnect functions import the identity types but never
verify, and would otherwise pay its ~0.2 s import on every cold start.
"""

from __future__ import annotations

import base64
import math
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from services.common.frozen import Frozen
from services.common.identities import player_id_of
from services.common.names import display_name

if TYPE_CHECKING:
    import jwt

MAX_URL_CHARS = 4096
"""API Gateway's limit on a WebSocket API's URL (a fixed quota): the token rides in it."""
URL_PREFIX_CHARS = 320
"""The rest of the connect URL: ``wss://``, a host of up to 253 characters (a custom
domain), ``/<stage>`` and ``?token=``."""
MAX_TOKEN_CHARS = MAX_URL_CHARS - URL_PREFIX_CHARS
"""Cognito's ID tokens are 1-2 KB (more with many groups); a longer token could not reach
the authorizer through any URL API Gateway accepts, and anything longer is not parsed."""
LEEWAY_SECONDS = 30
MAX_LIFETIME_SECONDS = 24 * 3600 + 300
"""Cognito's longest ID or access token lives a day; a later ``exp`` is not a real token."""
REFRESH_SECONDS = 60
"""The least time between two JWKS fetches for an unknown ``kid``: a key the issuer
rotated in is found within a minute, and no stream of made-up key ids makes us
fetch more than once a minute."""
MAX_KEY_AGE_SECONDS = 3600
"""Known keys are fetched again after an hour, so a key the issuer withdrew stops working."""
FETCH_TIMEOUT_SECONDS = 3.0
NAME_CLAIMS = ("preferred_username", "name", "cognito:username", "username")
SEGMENT = re.compile(r"[A-Za-z0-9_-]+")
COGNITO_ISSUER = re.compile(r"https://cognito-idp\.[a-z0-9-]+\.amazonaws\.com/[\w-]+")


class InvalidToken(Exception):
    pass


class ExpiredToken(InvalidToken):
    """Well formed and signed by the issuer, but past ``exp``: the client should get a new one."""


class Identity(Frozen):
    player_id: str
    name: str


class Issuer(Frozen):
    """Whose tokens open a connection: the issuer's URL, the audience we are, its keys."""

    url: str
    audience: str
    jwks_url: str

    @property
    def cognito(self) -> bool:
        """Cognito's tokens name their use, and its access tokens carry no ``aud``."""
        return bool(COGNITO_ISSUER.fullmatch(self.url))


class KeySet:
    """The issuer's signing keys by ``kid``, fetched on first use and kept per container.

    An unknown ``kid`` fetches the set again at most once every
    ``REFRESH_SECONDS`` (rotation works; an attacker's made-up key ids cost
    one fetch a minute, not one per connect), and the whole set is fetched
    again once it is ``MAX_KEY_AGE_SECONDS`` old.
    """

    def __init__(self, jwks_url: str, now: Callable[[], float]) -> None:
        import jwt  # noqa: PLC0415 - paid by the authorizer only

        self._client = jwt.PyJWKClient(jwks_url, cache_jwk_set=False, timeout=FETCH_TIMEOUT_SECONDS)
        self._now = now
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched_at = -math.inf
        self._attempted_at = -math.inf
        self._lock = threading.Lock()

    def key(self, kid: str) -> jwt.PyJWK | None:
        with self._lock:
            now = self._now()
            stale = now - self._fetched_at >= MAX_KEY_AGE_SECONDS
            unknown = kid not in self._keys
            if (stale or unknown) and now - self._attempted_at >= REFRESH_SECONDS:
                self._attempted_at = now
                self._fetch(now)
            return self._keys.get(kid)

    def _fetch(self, now: float) -> None:
        """Replace the keys with the issuer's current set; keep the old ones if it fails."""
        import jwt  # noqa: PLC0415 - paid by the authorizer only

        try:
            fetched = self._client.get_jwk_set()
        except jwt.PyJWTError:
            return
        self._keys = {
            k.key_id: k
            for k in fetched.keys
            if k.key_id and k.key_type == "RSA" and k.public_key_use in (None, "sig")
        }
        self._fetched_at = now


class TokenVerifier:
    """Checks a player token against one issuer; see the module's docstring for the rules."""

    def __init__(self, issuer: Issuer, now: Callable[[], float]) -> None:
        self.issuer = issuer
        self._now = now
        self._keys = KeySet(issuer.jwks_url, now)

    def verify(self, token: object) -> Identity:
        """The identity a token names, or ``InvalidToken`` (``ExpiredToken`` if only late)."""
        if not isinstance(token, str) or not 0 < len(token) <= MAX_TOKEN_CHARS:
            raise InvalidToken("missing or oversized")
        if not _canonical(token):
            raise InvalidToken("not three segments of canonical base64url")
        import jwt  # noqa: PLC0415 - paid by the authorizer only

        try:
            claims = self._claims(token)
        except (jwt.PyJWTError, ValueError, TypeError, OverflowError, RecursionError) as exc:
            raise InvalidToken(type(exc).__name__) from None
        return self._identity(claims)

    def _claims(self, token: str) -> dict[str, Any]:
        import jwt  # noqa: PLC0415 - paid by the authorizer only

        header = jwt.get_unverified_header(token)
        kid = header.get("kid")
        if header.get("alg") != "RS256" or not isinstance(kid, str):
            raise InvalidToken("not an RS256 token with a key id")
        key = self._keys.key(kid)
        if key is None:
            raise InvalidToken("unknown kid")
        issuer = self.issuer
        claims: dict[str, Any] = jwt.decode(
            token,
            key.key,
            algorithms=["RS256"],
            issuer=issuer.url,
            audience=None if issuer.cognito else issuer.audience,
            options={
                "require": ["exp", "iss", "sub"],
                "verify_aud": not issuer.cognito,
                # Times are checked below against the service's clock, with finite numbers only.
                "verify_exp": False,
                "verify_iat": False,
                "verify_nbf": False,
            },
        )
        self._check_times(claims)
        if issuer.cognito:
            self._check_cognito(claims)
        return claims

    def _check_times(self, claims: dict[str, Any]) -> None:
        now = self._now()
        times = {name: claims[name] for name in ("exp", "iat", "nbf") if name in claims}
        for value in times.values():
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
            ):
                raise InvalidToken("a time claim is not a number")
        if times["exp"] > now + MAX_LIFETIME_SECONDS:
            raise InvalidToken("exp too far ahead")
        if max(times.get("iat", now), times.get("nbf", now)) > now + LEEWAY_SECONDS:
            raise InvalidToken("not valid yet")
        if times["exp"] <= now - LEEWAY_SECONDS:
            raise ExpiredToken("expired")

    def _check_cognito(self, claims: dict[str, Any]) -> None:
        use = claims.get("token_use")
        if use == "id":
            audience = claims.get("aud")
            audiences = audience if isinstance(audience, list) else [audience]
            if self.issuer.audience not in audiences:
                raise InvalidToken("wrong audience")
        elif use == "access":
            if claims.get("client_id") != self.issuer.audience:
                raise InvalidToken("wrong client_id")
        else:
            raise InvalidToken("token_use is neither id nor access")

    def _identity(self, claims: dict[str, Any]) -> Identity:
        subject = claims.get("sub")
        player_id = player_id_of(subject) if isinstance(subject, str) else None
        if player_id is None:
            raise InvalidToken("sub is not a subject")
        names = (display_name(claims.get(claim)) for claim in NAME_CLAIMS)
        return Identity(player_id, next((name for name in names if name), "Player"))


def _canonical(token: str) -> bool:
    """Header, claims and signature each in the one base64url spelling of its bytes."""
    segments = token.split(".")
    return len(segments) == 3 and all(_canonical_segment(s) for s in segments)


def _canonical_segment(segment: str) -> bool:
    """No padding, no other alphabet, no spare bits set (a last character that decodes
    like another)."""
    if not SEGMENT.fullmatch(segment) or len(segment) % 4 == 1:
        return False
    data = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode() == segment
