"""Player tokens (services/common/auth.py): RS256 JWTs checked against the issuer's JWKS.

Tokens are signed by a test key pair whose JWKS is served over HTTP on
127.0.0.1 (``local.issuer``), so the verifier fetches keys as it fetches
Cognito's. Every bad token is refused with ``InvalidToken`` and nothing else.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from local.issuer import LocalIssuer, SigningKey
from services.common.auth import (
    LEEWAY_SECONDS,
    MAX_KEY_AGE_SECONDS,
    MAX_LIFETIME_SECONDS,
    MAX_TOKEN_CHARS,
    MAX_URL_CHARS,
    REFRESH_SECONDS,
    URL_PREFIX_CHARS,
    ExpiredToken,
    Identity,
    InvalidToken,
    Issuer,
    TokenVerifier,
)
from services.common.identities import MAX_SUBJECT, player_id_of
from services.common.names import MAX_NAME_CHARS
from tests import cognito
from tests.cognito import (
    CLIENT,
    POOL,
    SUB,
    b64,
    pool_issuer,
    public_key_as_secret,
    resigned,
    unsigned,
    with_exp,
)
from tests.services.fakes import FakeClock

pytestmark = pytest.mark.unit


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def verifier(pool: LocalIssuer, clock: FakeClock) -> TokenVerifier:
    return TokenVerifier(Issuer(pool.url, pool.audience, pool.jwks_url), clock.now)


def id_claims(clock: FakeClock, **changes: Any) -> dict[str, Any]:
    return cognito.id_claims(clock.now(), **changes)


def access_claims(clock: FakeClock, **changes: Any) -> dict[str, Any]:
    return cognito.access_claims(clock.now(), **changes)


def refused(verifier: TokenVerifier, token: object) -> InvalidToken:
    with pytest.raises(InvalidToken) as caught:
        verifier.verify(token)
    assert not isinstance(caught.value, ExpiredToken)
    return caught.value


# --- what connects ----------------------------------------------------------------------


def test_a_cognito_id_token_names_its_player(
    verifier: TokenVerifier, pool: LocalIssuer, clock: FakeClock
) -> None:
    assert verifier.verify(pool.sign(id_claims(clock))) == Identity(SUB, "ann")


def test_a_cognito_access_token_is_checked_on_client_id(
    verifier: TokenVerifier, pool: LocalIssuer, clock: FakeClock
) -> None:
    assert verifier.verify(pool.sign(access_claims(clock))) == Identity(SUB, "ann")


def test_the_display_name_prefers_the_players_chosen_name(
    verifier: TokenVerifier, pool: LocalIssuer, clock: FakeClock
) -> None:
    token = pool.sign(id_claims(clock, preferred_username="  Ann the Bold  ", name="Ann B."))
    assert verifier.verify(token).name == "Ann the Bold"
    assert verifier.verify(pool.sign(id_claims(clock, name="Ann B."))).name == "Ann B."
    long = verifier.verify(pool.sign(id_claims(clock, preferred_username="x" * 80)))
    assert long.name == "x" * MAX_NAME_CHARS
    nameless = id_claims(clock, **{"cognito:username": None})
    assert verifier.verify(pool.sign(nameless)).name == "Player"


@pytest.mark.parametrize(
    "subject", ["auth0|abc", "user=42", "bot-x", "google-oauth2|" + "1" * (MAX_SUBJECT - 14)]
)
def test_every_subject_connects_as_the_player_it_maps_to(
    verifier: TokenVerifier, pool: LocalIssuer, clock: FakeClock, subject: str
) -> None:
    """Auth0's ``auth0|…``, a ``user=42``, a subject of 255 characters: each is a player,
    under the one id the ledger API books for too (``services.common.identities``)."""
    identity = verifier.verify(pool.sign(id_claims(clock, sub=subject)))
    assert identity == Identity(player_id_of(subject) or "", "ann")
    assert len(identity.player_id) <= 64 and ":" not in identity.player_id


@pytest.mark.parametrize(
    "chosen",
    ["A\u200bnn", "Ann\u202e", "Ann (bot)", "Ann\U0001f480", "<b>Ann</b>", "   ", 12345],
    ids=repr,
)
def test_a_claimed_name_that_is_no_display_name_is_passed_over(
    verifier: TokenVerifier, pool: LocalIssuer, clock: FakeClock, chosen: object
) -> None:
    """Every issuer's names meet the one rule of display names (services.common.names): no
    invisible, control or bidi character and no bot's name reaches the table."""
    token = pool.sign(id_claims(clock, preferred_username=chosen, name=chosen))
    assert verifier.verify(token).name == "ann"
    nameless = id_claims(clock, preferred_username=chosen, **{"cognito:username": None})
    assert verifier.verify(pool.sign(nameless)).name == "Player"


def test_a_generic_issuer_checks_aud_and_needs_no_token_use(clock: FakeClock) -> None:
    issuer = LocalIssuer("https://id.rummy.example/realms/players", audience="canasta").serve()
    try:
        verifier = TokenVerifier(Issuer(issuer.url, "canasta", issuer.jwks_url), clock.now)
        assert verifier.verify(issuer.issue(Identity("u-1", "Ann"), now=clock.now())) == (
            Identity("u-1", "Ann")
        )
        both = {"iss": issuer.url, "sub": "u-1", "aud": ["other", "canasta"]}
        assert verifier.verify(issuer.sign({**both, "exp": clock.now() + 60})).player_id == "u-1"
        for audience in ("other", ["other"], None):
            claims = {"iss": issuer.url, "sub": "u-1", "exp": clock.now() + 60, "aud": audience}
            refused(verifier, issuer.sign({k: v for k, v in claims.items() if v is not None}))
    finally:
        issuer.stop()


def test_a_token_is_valid_until_its_expiry_plus_the_leeway(
    verifier: TokenVerifier, pool: LocalIssuer, clock: FakeClock
) -> None:
    token = pool.sign(id_claims(clock))
    clock.advance(3600 + LEEWAY_SECONDS - 1)
    assert verifier.verify(token).player_id == SUB
    clock.advance(1)
    with pytest.raises(ExpiredToken):
        verifier.verify(token)


def test_a_token_may_live_the_longest_lifetime_and_not_a_second_more(
    verifier: TokenVerifier, pool: LocalIssuer, clock: FakeClock
) -> None:
    """Cognito's longest token lives a day: an ``exp`` further ahead is no real token."""
    furthest = int(clock.now()) + MAX_LIFETIME_SECONDS
    assert verifier.verify(pool.sign(id_claims(clock, exp=furthest))).player_id == SUB
    refused(verifier, pool.sign(id_claims(clock, exp=furthest + 1)))


# --- what is refused --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "changes"),
    [
        ("another issuer", {"iss": "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Other"}),
        ("no issuer", {"iss": None}),
        ("another app client", {"aud": "someone-elses-client"}),
        ("no audience", {"aud": None}),
        ("a refresh token's use", {"token_use": "refresh"}),
        ("no token_use", {"token_use": None}),
        ("no exp", {"exp": None}),
        ("exp as text", {"exp": "1800003600"}),
        ("exp true", {"exp": True}),
        ("exp a year ahead", {"exp": 1_800_000_000 + 365 * 86400}),
        ("exp absurdly far", {"exp": 10**30}),
        ("issued in the future", {"iat": 1_800_000_000 + 3600}),
        ("not valid before a later time", {"nbf": 1_800_000_000 + 3600}),
        ("iat as text", {"iat": "now"}),
        ("no sub", {"sub": None}),
        ("sub a number", {"sub": 42}),
        ("sub empty", {"sub": ""}),
        ("sub longer than a subject", {"sub": "p" * (MAX_SUBJECT + 1)}),
        ("sub with a trailing newline", {"sub": "p-a\n"}),
        ("sub a host's bot", {"sub": "bot:KQ7M2X-2"}),
        ("sub a ledger account", {"sub": "house:bots"}),
        ("sub with a space", {"sub": "ann smith"}),
    ],
)
def test_a_signed_id_token_with_a_bad_claim_is_refused(
    verifier: TokenVerifier, pool: LocalIssuer, clock: FakeClock, label: str, changes: Any
) -> None:
    refused(verifier, pool.sign(id_claims(clock, **changes)))


@pytest.mark.parametrize(
    "changes",
    [{"client_id": "someone-elses-client"}, {"client_id": None}, {"token_use": "id"}],
)
def test_an_access_token_for_another_client_is_refused(
    verifier: TokenVerifier, pool: LocalIssuer, clock: FakeClock, changes: Any
) -> None:
    refused(verifier, pool.sign(access_claims(clock, **changes)))


@pytest.mark.parametrize("exp", ["1e400", "-1e400", "NaN", "Infinity", "1" + "0" * 5000])
def test_an_absurd_exp_is_refused_not_raised(
    verifier: TokenVerifier, pool: LocalIssuer, clock: FakeClock, exp: str
) -> None:
    refused(verifier, resigned(pool, with_exp(clock.now(), exp)))


def test_an_expired_token_is_told_apart(
    verifier: TokenVerifier, pool: LocalIssuer, clock: FakeClock
) -> None:
    """Expired but genuine: 401 upstream, so the client signs in again (403 otherwise)."""
    with pytest.raises(ExpiredToken):
        verifier.verify(pool.sign(id_claims(clock, exp=int(clock.now()) - 3600)))


def test_a_foreign_signature_or_a_changed_payload_is_refused(
    verifier: TokenVerifier, pool: LocalIssuer, clock: FakeClock
) -> None:
    impostor = SigningKey()
    impostor.kid = pool.keys[0].kid
    refused(verifier, impostor.sign(id_claims(clock)))
    header, _, signature = pool.sign(id_claims(clock)).split(".")
    other = pool.sign(id_claims(clock, sub="mallory")).split(".")[1]
    refused(verifier, f"{header}.{other}.{signature}")
    flipped = signature[:-2] + ("AA" if signature[-2:] != "AA" else "BB")
    refused(verifier, f"{header}.{pool.sign(id_claims(clock)).split('.')[1]}.{flipped}")


def test_the_same_signature_spelled_another_way_is_refused(
    verifier: TokenVerifier, pool: LocalIssuer, clock: FakeClock
) -> None:
    """A 256-byte signature leaves 4 spare bits in its last base64url character: one
    token, one spelling, so no two strings pass as the same token."""
    token = pool.sign(id_claims(clock))
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = alphabet[alphabet.index(token[-1]) ^ 1]
    assert verifier.verify(token).player_id == SUB
    refused(verifier, token[:-1] + last)


def test_alg_none_and_hs256_with_the_public_key_are_refused(
    verifier: TokenVerifier, pool: LocalIssuer, clock: FakeClock
) -> None:
    kid = pool.keys[0].kid
    payload = json.dumps(id_claims(clock))
    refused(verifier, unsigned({"alg": "none", "kid": kid}, payload))
    refused(verifier, unsigned({"alg": "RS256", "kid": kid}, payload))
    for alg in ("HS256", "HS384", "HS512"):
        refused(verifier, public_key_as_secret(pool, payload, alg))


@pytest.mark.parametrize("alg", ["RS384", "RS512", "PS256"])
def test_a_token_signed_by_the_issuers_key_with_another_algorithm_is_refused_unread(
    pool: LocalIssuer, clock: FakeClock, alg: str
) -> None:
    """RS256 only, read from the header before any key is looked up: the issuer's own key
    under another algorithm is no token of ours."""
    import jwt

    key = pool.keys[0]
    token = jwt.encode(id_claims(clock), key.private, algorithm=alg, headers={"kid": key.kid})
    assert jwt.get_unverified_header(token)["alg"] == alg
    verifier = TokenVerifier(Issuer(pool.url, pool.audience, pool.jwks_url), clock.now)
    fetched = pool.fetches
    refused(verifier, token)
    assert pool.fetches == fetched, "no key was looked up for it"
    assert verifier.verify(pool.sign(id_claims(clock))).player_id == SUB


def test_the_longest_token_accepted_fits_in_a_websocket_url() -> None:
    """The token comes in the connect URL's query string, which API Gateway bounds at 4,096
    characters: a token the authorizer would accept must fit beside the longest stage URL
    (base64url needs no percent-encoding, so its length in the URL is its own)."""
    longest = "wss://" + "d" * 253 + "/" + "s" * 12 + "?token="
    assert len(longest) <= URL_PREFIX_CHARS
    assert MAX_TOKEN_CHARS + URL_PREFIX_CHARS <= MAX_URL_CHARS == 4096


def _padded(segment: str) -> str:
    return segment + "=" * (-len(segment) % 4)


def test_a_padded_token_is_refused_though_pyjwt_would_decode_it(
    verifier: TokenVerifier, pool: LocalIssuer, clock: FakeClock
) -> None:
    """Canonical unpadded base64url only (RFC 7515): one token, one spelling. PyJWT accepts
    ``=`` padding on any segment; the signature covers the first two as written."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    token = pool.sign(id_claims(clock))
    header, payload, signature = token.split(".")
    assert len(signature) % 4 and verifier.verify(token).player_id == SUB
    refused(verifier, f"{header}.{payload}.{signature}==")
    refused(verifier, f"{header}.{payload}.{_padded(signature)}")
    key = pool.keys[0]
    while len(payload) % 4 == 0:  # a payload that needs padding
        payload = pool.sign(id_claims(clock, padding="x" * (len(payload) % 7))).split(".")[1]
    signing_input = f"{_padded(header)}.{_padded(payload)}"
    mac = key.private.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    refused(verifier, f"{signing_input}.{b64(mac)}")


def test_a_token_without_a_known_kid_is_refused(
    verifier: TokenVerifier, pool: LocalIssuer, clock: FakeClock
) -> None:
    claims = id_claims(clock)
    stranger = SigningKey()
    refused(verifier, stranger.sign(claims))
    body = pool.sign(claims).split(".", 1)[1]
    numeric = b64(json.dumps({"alg": "RS256", "kid": 7}).encode())
    refused(verifier, f"{numeric}.{body}")
    headerless = b64(json.dumps({"alg": "RS256", "typ": "JWT"}).encode())
    refused(verifier, f"{headerless}.{body}")


GARBAGE: dict[str, object] = {
    "empty": "",
    "not text": b"eyJ.eyJ.sig",
    "none": None,
    "a number": 12,
    "garbage": "garbage",
    "three dots": "...",
    "the old home-made form": "v1.eyJzdWIiOiJldmUifQ.c2ln",
    "a header that is a list": f"{b64(b'[1]')}.{b64(b'{}')}.",
    "a header that is not JSON": f"{b64(b'{')}.{b64(b'{}')}.",
    "claims that are a list": unsigned({"alg": "RS256", "kid": "x"}, "[]"),
    "non-ascii": "\u00e9\u00e9.\u00e9.\u00e9",
    "deeply nested header": b64(b"[" * 50_000)[: MAX_TOKEN_CHARS - 4] + ".e30.",
}


@pytest.mark.parametrize("token", GARBAGE.values(), ids=GARBAGE.keys())
def test_garbage_is_refused(verifier: TokenVerifier, token: object) -> None:
    refused(verifier, token)


def test_an_oversized_token_is_refused_before_it_is_parsed(
    pool: LocalIssuer, clock: FakeClock
) -> None:
    verifier = TokenVerifier(Issuer(pool.url, pool.audience, pool.jwks_url), clock.now)
    fetched = pool.fetches
    token = pool.sign(id_claims(clock, padding="x" * MAX_TOKEN_CHARS))
    assert len(token) > MAX_TOKEN_CHARS
    assert "missing or oversized" in str(refused(verifier, token))
    assert pool.fetches == fetched, "no key was looked up for it"


# --- the key cache -------------------------------------------------------------------


def test_keys_are_fetched_once_and_a_rotated_key_is_found_within_the_refresh_bound(
    fresh_pool: LocalIssuer, clock: FakeClock
) -> None:
    issuer = fresh_pool
    verifier = TokenVerifier(Issuer(issuer.url, CLIENT, issuer.jwks_url), clock.now)
    for _ in range(5):
        verifier.verify(issuer.sign(id_claims(clock)))
    assert issuer.fetches == 1
    issuer.rotate()
    rotated = issuer.sign(id_claims(clock))
    clock.advance(REFRESH_SECONDS)
    assert verifier.verify(rotated).player_id == SUB
    assert issuer.fetches == 2
    # The old key is still published: its tokens keep working without another fetch.
    assert verifier.verify(issuer.keys[1].sign(id_claims(clock))).player_id == SUB
    assert issuer.fetches == 2


def test_made_up_key_ids_cost_one_fetch_per_refresh_bound(
    fresh_pool: LocalIssuer, clock: FakeClock
) -> None:
    issuer = fresh_pool
    verifier = TokenVerifier(Issuer(issuer.url, CLIENT, issuer.jwks_url), clock.now)
    claims = id_claims(clock)
    for n in range(50):
        refused(verifier, issuer.keys[0].sign(claims, {"kid": f"made-up-{n}"}))
    assert issuer.fetches == 1
    # A key rotated in meanwhile is found once the bound has passed.
    issuer.rotate()
    rotated = issuer.sign(claims)
    refused(verifier, rotated)
    clock.advance(REFRESH_SECONDS)
    assert verifier.verify(rotated).player_id == SUB
    assert issuer.fetches == 2


def test_a_withdrawn_key_stops_working_once_the_keys_are_fetched_again(
    fresh_pool: LocalIssuer, clock: FakeClock
) -> None:
    issuer = fresh_pool
    verifier = TokenVerifier(Issuer(issuer.url, CLIENT, issuer.jwks_url), clock.now)
    old = issuer.keys[0]
    assert verifier.verify(old.sign(id_claims(clock))).player_id == SUB
    issuer.rotate()
    issuer.keys.remove(old)
    clock.advance(MAX_KEY_AGE_SECONDS)
    refused(verifier, old.sign(id_claims(clock)))
    assert verifier.verify(issuer.sign(id_claims(clock))).player_id == SUB


def test_an_unreachable_jwks_refuses_and_raises_nothing(clock: FakeClock) -> None:
    issuer = pool_issuer()
    jwks_url = issuer.jwks_url
    issuer.stop()
    verifier = TokenVerifier(Issuer(POOL, CLIENT, jwks_url), clock.now)
    refused(verifier, issuer.sign(id_claims(clock)))


def test_only_verifying_imports_pyjwt() -> None:
    """connect and disconnect share the handler module and never verify: their cold
    starts do not pay for PyJWT and cryptography."""
    import subprocess
    import sys

    code = "import sys, services.connect.handler; print('jwt' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "False"
