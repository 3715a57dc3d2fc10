"""Whose tokens sign players in: an existing OpenID Connect issuer, or the stack's user pool.

The ``$connect`` authorizer and the token-verifying functions only need the
issuer, its audience and its keys (``TokenIssuer``); the web client also needs
to know how to sign in there (``web_auth``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aws_cdk import Aws, Duration, Stack
from aws_cdk import aws_cognito as cognito

from infra.components.common import removal_policy
from infra.config import Config
from infra.nag import acknowledge


@dataclass(frozen=True)
class TokenIssuer:
    """What the authorizer is configured with (CloudFormation references for a new pool)."""

    issuer: str
    audience: str
    jwks_url: str


@dataclass(frozen=True)
class UserPool:
    """The stack's own sign-in: the pool, the web client's app client, the hosted domain."""

    pool: cognito.UserPool
    web_client: cognito.UserPoolClient
    domain: cognito.UserPoolDomain


class SignIn:
    """The configured issuer, else a new user pool: with the platform's issuer players keep
    the one account they use for its other modes, and a stage without it still signs in."""

    def __init__(self, stack: Stack, config: Config) -> None:
        self._stack = stack
        self.user_pool: UserPool | None = None
        if config.oidc_issuer is not None:
            assert config.oidc_audience is not None
            issuer = config.oidc_issuer.rstrip("/")
            self.issuer = TokenIssuer(
                issuer=issuer,
                audience=config.oidc_audience,
                jwks_url=config.oidc_jwks_url or f"{issuer}/.well-known/jwks.json",
            )
            return
        self.user_pool = _user_pool(stack, config)
        provider = self.user_pool.pool.user_pool_provider_url
        self.issuer = TokenIssuer(
            issuer=provider,
            audience=self.user_pool.web_client.user_pool_client_id,
            jwks_url=f"{provider}/.well-known/jwks.json",
        )

    def web_auth(self) -> dict[str, Any]:
        """The ``auth`` of the web client's ``config.json`` (``web/signin.js`` reads it)."""
        if self.user_pool is None:
            return {
                "kind": "oidc",
                "issuer": self.issuer.issuer,
                "client_id": self.issuer.audience,
            }
        return {
            "kind": "cognito",
            "region": self._stack.region,
            "user_pool_id": self.user_pool.pool.user_pool_id,
            "client_id": self.user_pool.web_client.user_pool_client_id,
            "domain": self.user_pool.domain.base_url(),
        }


def _user_pool(stack: Stack, config: Config) -> UserPool:
    pool = cognito.UserPool(
        stack,
        "UserPool",
        user_pool_name=config.name("canasta-players"),
        self_sign_up_enabled=True,
        sign_in_aliases=cognito.SignInAliases(username=True, email=True),
        sign_in_case_sensitive=False,
        auto_verify=cognito.AutoVerifiedAttrs(email=True),
        standard_attributes=cognito.StandardAttributes(
            email=cognito.StandardAttribute(required=True, mutable=True)
        ),
        password_policy=cognito.PasswordPolicy(
            min_length=12,
            require_lowercase=True,
            require_uppercase=True,
            require_digits=True,
            require_symbols=True,
        ),
        mfa=cognito.Mfa.OPTIONAL,
        mfa_second_factor=cognito.MfaSecondFactor(otp=True, sms=False),
        account_recovery=cognito.AccountRecovery.EMAIL_ONLY,
        feature_plan=cognito.FeaturePlan.ESSENTIALS,
        # Sign-up codes and password resets: Cognito's own sender allows 50 a day, below a
        # production stage's volume (Config requires SES there; make preflight checks it).
        email=(
            # The identity in the stack's own region (an environment-agnostic stack's
            # region is a token, which CDK accepts only when named).
            cognito.UserPoolEmail.with_ses(from_email=config.ses_from_email, ses_region=Aws.REGION)
            if config.ses_from_email
            else None
        ),
        deletion_protection=config.protect_tables,
        removal_policy=removal_policy(config),
    )
    acknowledge(
        pool,
        "AwsSolutions-COG2",
        "MFA is optional, not required: players sign in to play a card game, and a second "
        "factor on every account would keep most of them out; each may turn TOTP on.",
    )
    acknowledge(
        pool,
        "AwsSolutions-COG8",
        "Threat protection (advanced security) is a paid feature plan, billed per active "
        "user; the pool holds game accounts with no payment data, and sign-in abuse is "
        "bounded by Cognito's own quotas.",
    )
    return UserPool(pool, _web_client(pool, config), _domain(stack, config, pool))


def _web_client(pool: cognito.UserPool, config: Config) -> cognito.UserPoolClient:
    """The web client's app client: authorization code with PKCE, no secret (a browser)."""
    return pool.add_client(
        "WebClient",
        user_pool_client_name=config.name("canasta-web"),
        generate_secret=False,
        auth_flows=cognito.AuthFlow(user_srp=True),
        o_auth=cognito.OAuthSettings(
            flows=cognito.OAuthFlows(authorization_code_grant=True),
            scopes=[cognito.OAuthScope.OPENID, cognito.OAuthScope.PROFILE],
            callback_urls=list(config.web_urls),
            logout_urls=list(config.web_urls),
        ),
        supported_identity_providers=[cognito.UserPoolClientIdentityProvider.COGNITO],
        id_token_validity=Duration.hours(1),
        access_token_validity=Duration.hours(1),
        refresh_token_validity=Duration.days(30),
        enable_token_revocation=True,
        prevent_user_existence_errors=True,
    )


def _domain(stack: Stack, config: Config, pool: cognito.UserPool) -> cognito.UserPoolDomain:
    """The hosted sign-in; its prefix must be unique in the region, hence the account id."""
    prefix = config.auth_domain_prefix or f"{config.name('canasta')}-{stack.account}"
    return pool.add_domain(
        "SignInDomain",
        cognito_domain=cognito.CognitoDomainOptions(domain_prefix=prefix),
    )
