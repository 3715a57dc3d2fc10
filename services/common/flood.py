"""Per-connection flood control, in the memory of a warm container: no write per message.

A token bucket per connection id: ``burst`` messages at once, refilled at
``rate`` a second. A message over it is refused ``rate_limited`` before it is
parsed or anything is read. The buckets live as long as the container and
are bounded (the least recently seen connection goes first), so a flood of
new connection ids cannot grow them without end.

What it does not catch, and what does: a connection whose messages land on
several warm containers at once gets a bucket in each (at most the function's
concurrency times the rate); a client that opens connection after connection
starts each with a full bucket (each ``$connect`` goes through the authorizer);
and the turn and matchmaking functions keep their own buckets. The stage-wide
API Gateway throttle (``throttleRate``/``throttleBurst``) is the outer bound
on all of them together.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from services.common.routing import Refusal, salvaged_cid
from services.common.settings import Settings


class _Bucket:
    __slots__ = ("at", "tokens")

    def __init__(self, tokens: float, at: float) -> None:
        self.tokens = tokens
        self.at = at


class FloodControl:
    def __init__(self, rate: float, burst: int, kept: int, clock: Callable[[], float]) -> None:
        self._rate = rate
        self._burst = float(burst)
        self._kept = kept
        self._clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def allow(self, connection_id: str) -> bool:
        """Take one message from the connection's bucket; False: over the rate, refuse it."""
        now = self._clock()
        bucket = self._buckets.pop(connection_id, None)
        if bucket is None:
            bucket = _Bucket(self._burst, now)
        else:
            bucket.tokens = min(self._burst, bucket.tokens + (now - bucket.at) * self._rate)
            bucket.at = now
        self._buckets[connection_id] = bucket
        if len(self._buckets) > self._kept:
            self._buckets.popitem(last=False)
        if bucket.tokens < 1:
            return False
        bucket.tokens -= 1
        return True

    def __len__(self) -> int:
        return len(self._buckets)


def flood_control(settings: Settings) -> FloodControl:
    return FloodControl(
        settings.messages_per_second,
        settings.message_burst,
        settings.flood_connections_kept,
        time.monotonic,
    )


def over_rate(flood: FloodControl | None, connection_id: str, body: str | None) -> Refusal | None:
    """The refusal of a message over its connection's rate (echoing a valid ``cid``)."""
    if flood is None or flood.allow(connection_id):
        return None
    cid = salvaged_cid(body) if body is not None and len(body) <= SALVAGE_BYTES else None
    return Refusal("rate_limited", "too many messages: wait a moment and send again", cid)


SALVAGE_BYTES = 8 * 1024
"""A refused message's ``cid`` is read only from a body this small (a flood stays cheap)."""
