"""Recording fakes for the ports the application code depends on (services/common/adapters)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.common.adapters import Unpublished
from services.common.records import Outbound


class FakeClock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.t = now

    def now(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


class SeededEntropy:
    """Seeds ``seed-1``, ``seed-2``, … so that every deal is reproducible."""

    def __init__(self, prefix: str = "seed") -> None:
        self.prefix = prefix
        self.issued: list[str] = []

    def new_seed(self, table_id: str = "", round_number: int = 0) -> str:
        seed = f"{self.prefix}-{len(self.issued) + 1}"
        self.issued.append(seed)
        return seed


class RecordingPusher:
    """Keeps every message; connections in ``gone`` answer as API Gateway does for 410."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.gone: set[str] = set()
        self.refused: list[str] = []

    def send(self, connection_id: str, message: dict[str, Any]) -> bool:
        if connection_id in self.gone:
            self.refused.append(connection_id)
            return False
        self.sent.append((connection_id, message))
        return True

    def to(self, connection_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        return [m for c, m in self.sent if c == connection_id and kind in (None, m["type"])]

    def clear(self) -> None:
        self.sent.clear()


class RecordingTimers:
    def __init__(self) -> None:
        self.scheduled: list[tuple[str, int, float]] = []

    def schedule(self, table_id: str, turn_started: int, at: float) -> None:
        self.scheduled.append((table_id, turn_started, at))


class RecordingPublisher:
    """Publishes into a list, a call at a time; ``takes``: the bus takes that many events
    in all, then refuses the next one (``Unpublished``, as PutEvents refuses an entry)."""

    def __init__(self, takes: int | None = None) -> None:
        self.published: list[Outbound] = []
        self.calls: list[int] = []
        """The events handed over by each call."""
        self.takes = takes

    def publish(self, events: Sequence[Outbound]) -> None:
        self.calls.append(len(events))
        room = len(events) if self.takes is None else self.takes - len(self.published)
        self.published.extend(events[: max(room, 0)])
        if room < len(events):
            raise Unpublished(max(room, 0), "EventBridge refused 1 event(s)")

    def of_type(self, detail_type: str) -> list[dict[str, Any]]:
        return [e.detail for e in self.published if e.detail_type == detail_type]


class RecordingCloser:
    """Closes the connections in ``open``; any other is gone, as API Gateway answers 410."""

    def __init__(self, *open_connections: str) -> None:
        self.open = set(open_connections)
        self.closed: list[str] = []

    def close(self, connection_id: str) -> bool:
        if connection_id not in self.open:
            return False
        self.open.discard(connection_id)
        self.closed.append(connection_id)
        return True
