"""Sign-in as synthesized: a Cognito user pool by default, an existing OIDC issuer if configured.

Only the ``$connect`` authorizer is told whose tokens to accept (issuer,
audience, JWKS URL); no stage holds a token signing secret.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from infra.manifest import FUNCTIONS
from tests.infra._support import (
    HAVE_CDK,
    OIDC_AUDIENCE,
    OIDC_ISSUER,
    SES_FROM_EMAIL,
    SKIP_REASON,
    Synthesis,
)
from tests.infra.test_stack import function_id, of_type, props

pytestmark = [pytest.mark.infra, pytest.mark.skipif(not HAVE_CDK, reason=SKIP_REASON)]

COGNITO = ("AWS::Cognito::UserPool", "AWS::Cognito::UserPoolClient", "AWS::Cognito::UserPoolDomain")
OIDC = ("CANASTA_OIDC_ISSUER", "CANASTA_OIDC_AUDIENCE", "CANASTA_OIDC_JWKS_URL")


def _environment(template: dict[str, Any], stage: str, key: str) -> dict[str, Any]:
    function = props(template["Resources"][function_id(template, stage, key)])
    return dict(function["Environment"]["Variables"])


def _only(template: dict[str, Any], kind: str) -> tuple[str, dict[str, Any]]:
    ((logical_id, resource),) = of_type(template, kind).items()
    return logical_id, props(resource)


def _web_config(template: dict[str, Any]) -> str:
    """The ``WebClientConfig`` output with every reference written ``<Ref:Id>``."""

    def text(part: Any) -> str:
        if isinstance(part, str):
            return part
        if "Ref" in part:
            return f"<Ref:{part['Ref']}>"
        return f"<GetAtt:{'.'.join(part['Fn::GetAtt'])}>"

    value = template["Outputs"]["WebClientConfig"]["Value"]
    return "".join(text(p) for p in value["Fn::Join"][1])


@pytest.mark.parametrize("stage", ["dev", "prod"])
def test_by_default_a_user_pool_signs_players_in(synthesis: Synthesis, stage: str) -> None:
    template = synthesis.templates[stage]
    pool_id, pool = _only(template, "AWS::Cognito::UserPool")
    client_id, client = _only(template, "AWS::Cognito::UserPoolClient")
    domain_id, domain = _only(template, "AWS::Cognito::UserPoolDomain")
    assert pool["UserPoolName"] == f"{stage}-canasta-players"
    assert pool["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"] is False
    assert pool["Policies"]["PasswordPolicy"]["MinimumLength"] >= 12
    assert pool["DeletionProtection"] == "INACTIVE", "a first create's rollback deletes it"
    # Production sends its sign-up codes through SES (Cognito's own sender: 50 a day).
    email = pool.get("EmailConfiguration", {})
    if stage == "prod":
        assert email["EmailSendingAccount"] == "DEVELOPER"
        assert email["From"] == SES_FROM_EMAIL
        assert SES_FROM_EMAIL in json.dumps(email["SourceArn"])
    else:
        assert email.get("EmailSendingAccount", "COGNITO_DEFAULT") == "COGNITO_DEFAULT"
    # A public client in the browser: no secret, the authorization code flow (with PKCE).
    assert client["UserPoolId"] == {"Ref": pool_id}
    assert client["GenerateSecret"] is False
    assert client["AllowedOAuthFlows"] == ["code"]
    assert set(client["AllowedOAuthScopes"]) == {"openid", "profile"}
    assert client["CallbackURLs"] == ["http://localhost:8080/"]
    assert client["IdTokenValidity"] == 60 and client["TokenValidityUnits"]["IdToken"] == "minutes"
    assert client["EnableTokenRevocation"] is True
    assert domain["UserPoolId"] == {"Ref": pool_id}

    env = _environment(template, stage, "connect-authorizer")
    assert env["CANASTA_OIDC_ISSUER"] == {"Fn::GetAtt": [pool_id, "ProviderURL"]}
    assert env["CANASTA_OIDC_AUDIENCE"] == {"Ref": client_id}
    assert env["CANASTA_OIDC_JWKS_URL"] == {
        "Fn::Join": ["", [{"Fn::GetAtt": [pool_id, "ProviderURL"]}, "/.well-known/jwks.json"]]
    }
    config = _web_config(template)
    assert f'"user_pool_id":"<Ref:{pool_id}>"' in config
    assert f'"client_id":"<Ref:{client_id}>"' in config
    assert (
        f'"domain":"https://<Ref:{domain_id}>.auth.<Ref:AWS::Region>.amazoncognito.com"' in config
    )


def test_an_existing_issuer_is_configured_and_no_pool_is_made(synthesis: Synthesis) -> None:
    template = synthesis.templates["oidc"]
    for kind in COGNITO:
        assert of_type(template, kind) == {}, kind
    env = _environment(template, "oidc", "connect-authorizer")
    assert {name: env[name] for name in OIDC} == {
        "CANASTA_OIDC_ISSUER": OIDC_ISSUER,
        "CANASTA_OIDC_AUDIENCE": OIDC_AUDIENCE,
        "CANASTA_OIDC_JWKS_URL": f"{OIDC_ISSUER}/.well-known/jwks.json",
    }
    auth = json.loads(_web_config(template).split('"auth":', 1)[1][:-1])
    assert auth == {"kind": "oidc", "issuer": OIDC_ISSUER, "client_id": OIDC_AUDIENCE}
    outputs = template["Outputs"]
    assert outputs["TokenIssuer"]["Value"] == OIDC_ISSUER
    assert "UserPoolId" not in outputs


@pytest.mark.parametrize("stage", ["dev", "prod", "oidc"])
def test_only_the_authorizer_knows_the_issuer_and_no_stage_has_a_signing_secret(
    synthesis: Synthesis, stage: str
) -> None:
    template = synthesis.templates[stage]
    assert of_type(template, "AWS::SecretsManager::Secret") == {}
    assert "secretsmanager" not in json.dumps(template["Resources"])
    for key, spec in FUNCTIONS.items():
        env = _environment(template, stage, key)
        assert bool(set(OIDC) & env.keys()) is (key == "connect-authorizer"), key
        assert spec.verifies_tokens is (key == "connect-authorizer")
