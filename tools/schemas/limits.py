"""How fast a client may send, and how its connection may end, in both documents.

The figures are the ones the code runs with: the settings' defaults (flood control, invite
codes), the stack's default stage throttle and the protocol's close codes, so that no
document spells a number of its own. AsyncAPI's WebSocket bindings have no field for
either, hence the channel's ``x-rate-limits`` and ``x-close-codes``, and the same in prose.
"""

from __future__ import annotations

from typing import Any, Final

from infra.config import Config
from services.common.protocol import CLOSE_MEANINGS
from services.common.settings import Settings
from tools.schemas.common import prose

_DEFAULTS = Settings.model_fields
BURST: Final[int] = _DEFAULTS["message_burst"].default
PER_SECOND: Final[float] = _DEFAULTS["messages_per_second"].default
JOIN_ATTEMPTS: Final[int] = _DEFAULTS["join_attempts"].default
JOIN_WINDOW_SECONDS: Final[int] = _DEFAULTS["join_window_seconds"].default
STAGE_RATE: Final[int] = Config().message_rate
STAGE_BURST: Final[int] = Config().message_burst


def rate_limits() -> dict[str, Any]:
    """The channel's ``x-rate-limits``: each limit, what it counts, and its refusal."""
    return {
        "per_connection": {
            "burst": BURST,
            "per_second": PER_SECOND,
            "refusal": "rate_limited",
            "description": (
                "A token bucket per connection, whoever's it is: a message over it is refused "
                "before it is read, and one message's worth comes back every 1/per_second s."
            ),
        },
        "invite_codes": {
            "attempts": JOIN_ATTEMPTS,
            "window_seconds": JOIN_WINDOW_SECONDS,
            "refusal": "rate_limited",
            "description": (
                "Invite codes (`join_table`) each player may try per window, whatever the "
                "connection; the count starts again with the next window."
            ),
        },
        "stage": {
            "burst": STAGE_BURST,
            "per_second": STAGE_RATE,
            "description": (
                "API Gateway's throttle of the whole stage (the stack's defaults, set per "
                "deployment): beyond it, messages are refused before any service reads them."
            ),
        },
    }


def close_codes() -> dict[str, str]:
    """The channel's ``x-close-codes``: close code → what it asks of the client."""
    return {str(int(code)): meaning for code, meaning in CLOSE_MEANINGS.items()}


RATE_TEXT: Final = prose(
    "limits.md",
    {
        "burst": BURST,
        "per_second": f"{PER_SECOND:g}",
        "refill_ms": round(1000 / PER_SECOND),
        "join_attempts": JOIN_ATTEMPTS,
        "join_minutes": JOIN_WINDOW_SECONDS // 60,
        "stage_rate": STAGE_RATE,
        "stage_burst": STAGE_BURST,
    },
)
"""The rate limits in prose, for the AsyncAPI document and docs/protocol.md alike."""
CLOSE_INTRO: Final = (
    "The server never closes a connection to refuse a message: every refusal is an `error` "
    "message, and no close code is the application's own (4000-4999). A connection ends with "
    "one of these close codes (in the AsyncAPI document, the channel's `x-close-codes`):"
)
CLOSE_TEXT: Final = f"{CLOSE_INTRO} " + " ".join(
    f"`{code}`: {meaning}" for code, meaning in close_codes().items()
)
"""The close codes in prose, in the order of ``CLOSE_MEANINGS``."""
