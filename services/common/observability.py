"""Powertools Logger, Metrics and (when switched on) Tracer for one service.

Tracing is off unless ``POWERTOOLS_TRACE_DISABLED`` is ``false``: the X-Ray SDK
costs about 0.15 s of import at every cold start, so it is imported only when
it will be used.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

from aws_lambda_powertools import Logger, Metrics

from services.common.telemetry import PowertoolsTelemetry

NAMESPACE = "Canasta"
F = TypeVar("F", bound=Callable[..., Any])


class Observability:
    def __init__(self, service: str) -> None:
        self.logger = Logger(service=service)
        self.metrics = Metrics(
            namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE", NAMESPACE), service=service
        )
        self.telemetry = PowertoolsTelemetry(self.logger, self.metrics)
        self._tracing = os.environ.get("POWERTOOLS_TRACE_DISABLED", "true").lower() == "false"

    def handler(self, function: F) -> F:
        """Log context, flush metrics, and trace when enabled: every handler's decorators."""
        wrapped = self.metrics.log_metrics(raise_on_empty_metrics=False)(function)
        wrapped = self.logger.inject_lambda_context(clear_state=True)(wrapped)
        if self._tracing:
            from aws_lambda_powertools import Tracer  # noqa: PLC0415 - only when tracing

            wrapped = Tracer().capture_lambda_handler(wrapped)
        return wrapped  # type: ignore[no-any-return]
