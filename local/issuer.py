"""The local stack's OpenID Connect issuer: its own RSA key pair, JWKS and RS256 tokens.

The ``$connect`` authorizer verifies these tokens with the very code that
verifies Cognito's on AWS (``services.common.auth``), configured by the same
three settings (issuer, audience, JWKS URL); only the issuer differs. The key
pair is made at start and lives as long as the process: a restarted local
stack no longer accepts the tokens of the one before.

The local gateway serves ``/.well-known/jwks.json`` and the discovery document
on its own port (``local.gateway``); tests and benchmarks that run without a
gateway call ``serve()``, which serves them from a small server of its own
(and may keep another issuer's name, e.g. a Cognito pool's URL, in ``iss``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from local.connections import send_json
from services.common.auth import Identity
from services.common.names import prototypes, skeleton, skeletons
from services.common.settings import Settings

AUDIENCE = "canasta-local"
JWKS_PATH = "/.well-known/jwks.json"
DISCOVERY_PATH = "/.well-known/openid-configuration"
TOKEN_SECONDS: int = Settings.model_fields["token_ttl_seconds"].default


class SigningKey:
    """One RSA key pair and its key id."""

    def __init__(self) -> None:
        self.kid = secrets.token_hex(8)
        self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def jwk(self) -> dict[str, Any]:
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.private.public_key()))
        return {**public, "kid": self.kid, "alg": "RS256", "use": "sig"}

    def sign(self, claims: dict[str, Any], headers: dict[str, Any] | None = None) -> str:
        return jwt.encode(
            claims, self.private, algorithm="RS256", headers={"kid": self.kid, **(headers or {})}
        )


class LocalIssuer:
    """Issues player tokens for the local sign-in and the local bots."""

    def __init__(
        self, url: str | None = None, audience: str = AUDIENCE, ttl: int = TOKEN_SECONDS
    ) -> None:
        """``url``: where the issuer is reached (the gateway's ``http://host:port``), or
        None until ``serve()`` gives it one."""
        self._url = url
        self.audience = audience
        self.ttl = ttl
        self.keys = [SigningKey()]
        """The published keys, the one that signs first."""
        self.fetches = 0
        """How often the JWKS was served (tests of the verifier's key cache)."""
        self._server: ThreadingHTTPServer | None = None
        self._served: str | None = None

    @property
    def url(self) -> str:
        """The issuer's name, ``iss`` in its tokens."""
        url = self._url or self._served
        if url is None:
            raise RuntimeError("the issuer has no address yet: pass url or call serve()")
        return url

    @property
    def jwks_url(self) -> str:
        return (self._served or self.url) + JWKS_PATH

    def environment(self) -> dict[str, str]:
        """The connect functions' settings for this issuer, as the stack sets them for Cognito."""
        return {
            "CANASTA_OIDC_ISSUER": self.url,
            "CANASTA_OIDC_AUDIENCE": self.audience,
            "CANASTA_OIDC_JWKS_URL": self.jwks_url,
        }

    def jwks(self) -> dict[str, Any]:
        self.fetches += 1
        return {"keys": [key.jwk() for key in self.keys]}

    def discovery(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "jwks_uri": self.jwks_url,
            "id_token_signing_alg_values_supported": ["RS256"],
            "subject_types_supported": ["public"],
            "response_types_supported": ["id_token"],
        }

    def rotate(self) -> SigningKey:
        """A new signing key, published before the old one (which stays, as issuers do)."""
        key = SigningKey()
        self.keys.insert(0, key)
        return key

    def sign(self, claims: dict[str, Any], headers: dict[str, Any] | None = None) -> str:
        """Any claims, signed with the current key (tests shape them like Cognito's)."""
        return self.keys[0].sign(claims, headers)

    def issue(self, identity: Identity, now: float | None = None, ttl: int | None = None) -> str:
        """An ID token for the player, like an OIDC issuer's: ``sub``, ``name``, ``aud``."""
        issued = int(time.time() if now is None else now)
        return self.sign(
            {
                "iss": self.url,
                "aud": self.audience,
                "sub": identity.player_id,
                "name": identity.name,
                "iat": issued,
                "exp": issued + (self.ttl if ttl is None else ttl),
            }
        )

    def serve(self) -> LocalIssuer:
        """Serve the JWKS and the discovery document on 127.0.0.1 (a free port); without
        a ``url``, that address is the issuer's name too."""
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                documents = {JWKS_PATH: issuer.jwks, DISCOVERY_PATH: issuer.discovery}
                page = documents.get(self.path)
                body = json.dumps(page()).encode() if page else b"{}"
                send_json(self, 200 if page else 404, body, {})

            def log_message(self, format: str, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        host, port = self._server.server_address[:2]
        self._served = f"http://{host!s}:{port}"
        threading.Thread(target=self._server.serve_forever, name="issuer", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
            self._served = None


def player_id_for(name: str) -> str:
    """Local sign-in: a name is the same account, under the same id, while the stack runs."""
    return "p-" + hashlib.sha256(skeleton(name).encode()).hexdigest()[:12]


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class Account:
    identity: Identity
    digest: str
    """The SHA-256 of the secret the account's first sign-in got."""


class Accounts:
    """The local sign-in's accounts: a name is an account, and so is every name like it.

    The first sign-in under a name makes the account and gets a secret the
    browser keeps; a later sign-in under that name, or under any name that
    shares a skeleton with it (``services.common.names``: the same letters
    from another script, fullwidth, another case, a doubled space, a trailing
    dot), must show that secret, so nobody takes over another's seat, points
    or table, nor displays as them, by typing their name or a look-alike.
    """

    def __init__(self) -> None:
        prototypes()  # the confusables data, read now: without it the stack does not start
        self._by_skeleton: dict[str, Account] = {}

    def sign_in(self, name: str, secret: str | None) -> tuple[Identity, str] | None:
        """The account ``name`` reaches and its secret (a fresh one for a new account), or
        None when the name is, or looks like, an account's and ``secret`` is not its own."""
        keys = skeletons(name)
        found = {self._by_skeleton[key] for key in keys if key in self._by_skeleton}
        if not found:
            fresh = secrets.token_urlsafe(18)
            account = Account(Identity(player_id_for(name), name), _digest(fresh))
            self._by_skeleton.update(dict.fromkeys(keys, account))
            return account.identity, fresh
        if len(found) == 1 and secret is not None:
            (account,) = found
            if hmac.compare_digest(account.digest, _digest(secret)):
                return account.identity, secret
        return None
