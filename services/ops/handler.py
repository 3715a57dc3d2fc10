"""Lambda entry point of the operators' function: its function URL (AuthType ``AWS_IAM``).

The console signs each request with the operator's own credentials (SigV4,
service ``lambda``); Lambda authenticates it and authorizes it against the
operator's policy before the function runs, and names the caller in
``requestContext.authorizer.iam.userArn``: the audit's operator is that ARN,
never anything the request says. ``POST /plan`` answers what an action would
change; ``POST /apply`` carries out a confirmed plan once.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from aws_lambda_powertools.event_handler import LambdaFunctionUrlResolver, Response
from aws_lambda_powertools.event_handler.content_types import APPLICATION_JSON
from pydantic import ValidationError

from services.common.observability import Observability
from services.common.runtime import Clients
from services.common.settings import Settings
from services.ops.app import PLAN, ActionRefused, Apply, OperatorService, answer, shown
from services.ops.root import build

obs = Observability("ops")
app = LambdaFunctionUrlResolver()


@cache
def service() -> OperatorService:
    settings = Settings()
    return build(settings, Clients(settings), obs.telemetry)


def _body() -> str:
    return app.current_event.decoded_body or ""


def _caller() -> str:
    """The caller as AWS authenticated it (AuthType ``AWS_IAM``: no request gets here
    unsigned)."""
    caller = app.current_event.request_context.authorizer.iam.user_arn
    if not caller:
        raise ActionRefused("unauthenticated", "the function acts only for a signed request")
    return caller


@app.post("/plan")
def plan() -> Response[dict[str, Any]]:
    def planned() -> dict[str, Any]:
        request = PLAN.validate_json(_body())
        return shown(service().plan(request), request.reason)

    return _answered(planned)


@app.post("/apply")
def apply() -> Response[dict[str, Any]]:
    return _answered(lambda: answer(service().apply(Apply.model_validate_json(_body()), _caller())))


def _answered(call: Callable[[], dict[str, Any]]) -> Response[dict[str, Any]]:
    """The answer, or the refusal with its code: ``malformed`` for a request of no known
    shape, the action's own code for an action refused (nothing changed)."""
    try:
        return Response(200, APPLICATION_JSON, call())
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        message = f"{where}: {first['msg']}" if where else first["msg"]
        return Response(400, APPLICATION_JSON, {"error": "malformed", "message": message})
    except ActionRefused as refused:
        obs.telemetry.count(f"refused_{refused.code}")
        status = 403 if refused.code == "unauthenticated" else 409
        return Response(
            status, APPLICATION_JSON, {"error": refused.code, "message": refused.message}
        )


@obs.handler
def url(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return app.resolve(event, context)
