"""Logs and metrics as the application code sees them.

Application code reports through this small port; in Lambda it is backed by
Powertools (structured JSON logs with the table, round and seat as
correlation keys, and EMF metrics), in tests by a recorder.
"""

from __future__ import annotations

from typing import Any, Protocol


class Telemetry(Protocol):
    def annotate(self, **keys: Any) -> None:
        """Correlation keys for every later log line of this invocation."""
        ...

    def info(self, message: str, **fields: Any) -> None: ...

    def warning(self, message: str, **fields: Any) -> None: ...

    def exception(self, message: str, **fields: Any) -> None:
        """An error with the current exception's traceback."""
        ...

    def count(self, metric: str, value: float = 1, unit: str = "Count") -> None: ...


class PowertoolsTelemetry:
    def __init__(self, logger: Any, metrics: Any) -> None:
        self._logger = logger
        self._metrics = metrics

    def annotate(self, **keys: Any) -> None:
        self._logger.append_keys(**{k: v for k, v in keys.items() if v is not None})

    def info(self, message: str, **fields: Any) -> None:
        self._logger.info(message, extra=fields)

    def warning(self, message: str, **fields: Any) -> None:
        self._logger.warning(message, extra=fields)

    def exception(self, message: str, **fields: Any) -> None:
        self._logger.exception(message, extra=fields)

    def count(self, metric: str, value: float = 1, unit: str = "Count") -> None:
        self._metrics.add_metric(name=metric, unit=unit, value=value)


class RecordingTelemetry:
    """Keeps what was reported, for tests and for the local stack's console."""

    def __init__(self) -> None:
        self.keys: dict[str, Any] = {}
        self.lines: list[tuple[str, str, dict[str, Any]]] = []
        self.metrics: dict[str, float] = {}

    def annotate(self, **keys: Any) -> None:
        self.keys.update(keys)

    def info(self, message: str, **fields: Any) -> None:
        self.lines.append(("info", message, {**self.keys, **fields}))

    def warning(self, message: str, **fields: Any) -> None:
        self.lines.append(("warning", message, {**self.keys, **fields}))

    def exception(self, message: str, **fields: Any) -> None:
        self.lines.append(("error", message, {**self.keys, **fields}))

    def count(self, metric: str, value: float = 1, unit: str = "Count") -> None:
        self.metrics[metric] = self.metrics.get(metric, 0) + value
