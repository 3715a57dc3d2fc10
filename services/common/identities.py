"""Player ids: the one name each account goes by, whoever issued its token.

An identity provider chooses its subjects (``sub``): Cognito's are UUIDs, Auth0's
``auth0|…``, another's ``user=42`` or longer than a key should be. The game keys
connections, seats and ledger accounts by a player id instead, and this is the
only mapping from one to the other: the authorizer uses it on every token, the
ledger API on every account the platform's other modes name, so a subject is one
account whichever way it arrives.

- A subject is 1-255 characters (OpenID Connect's bound) of letters, digits and
  ``._@|+=-``, the first a letter or digit. Nothing else names a player.
- A subject of at most 64 letters, digits and ``._@+-`` is its own player id, so
  Cognito's, the local sign-in's (``p-<hash>``) and every id stored so far stay
  what they were.
- Any other subject's player id is ``sub=`` and the base32 of its SHA-256: the
  same every time, 56 characters, and never another subject's: a plain id holds
  no ``=``, and two hashed ones differ unless SHA-256 collides.
- No player id holds a ``:``; the game's own ids do: the ledger's accounts
  (``house:…``, ``escrow:…``, ``match:…``) and the bots a host seats
  (``bot:<code>-<seat>``). So no token and no booking can name one of them, and a
  bot is known by its seat (``SeatPlayer.bot``), never by how its id is spelled.
"""

from __future__ import annotations

import base64
import hashlib
import re

MAX_SUBJECT = 255
SUBJECT = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._@|+=-]{{0,{MAX_SUBJECT - 1}}}")
PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}")
HASHED = "sub="


def player_id_of(subject: str) -> str | None:
    """The player id a subject stands for, or None if it is no subject at all."""
    if not SUBJECT.fullmatch(subject):
        return None
    if PLAIN.fullmatch(subject):
        return subject
    digest = base64.b32encode(hashlib.sha256(subject.encode()).digest())
    return HASHED + digest.decode().rstrip("=").lower()


def host_bot_id(code: str, seat: int) -> str:
    """The id of the bot a host seats at their lobby ``code``: outside every player's."""
    return f"bot:{code}-{seat}"
