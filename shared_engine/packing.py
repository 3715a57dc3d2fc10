"""The round state in its packed binary form: what the games table stores.

A move rewrites the table's item, and DynamoDB bills that write per started KB
of the item, so its state is kept in bytes rather than in the JSON of
``dumps`` (about 1 KB, every tile named as text): one byte per tile, in counted
groups, the small fields in a few bytes, a hex seed and commitment as their raw
bytes. ``unpack(pack(s)) == s`` for every state ``from_json`` accepts.

The first byte names the format, so a later form can be read beside this one.
The JSON form stays the engine's text for scenarios, positions and replays.
"""

from __future__ import annotations

from typing import Final

from shared_engine.errors import EngineError
from shared_engine.state import EMPTY_MELDS, PHASES, RoundState, new_state
from shared_engine.tiles import TILE_KINDS

PACKED_FORMAT: Final = 2
"""The first byte of a packed state (format 1 is the JSON of ``dumps``)."""

_KINDS: Final = frozenset(TILE_KINDS)
_NO_TEXT, _HEX_TEXT, _UTF8_TEXT = 0, 1, 2


def pack(state: RoundState) -> bytes:
    """The state as bytes, in this order:

    format; flags (bit 0 the twos' meld, bits 1-2 teams A and B opened, bits 3-6
    seats 1-4 used the joker button); turn and dealer (a nibble each); phase and
    the seat that went out (0: none); ply, thresholds, match scores and account
    jokers as varints (the thresholds and scores zigzag, they may be negative);
    the four hands, stock, discard and both teams' bonus threes, each a count
    and one byte per tile in order; each team's melds, a 14-bit mask of the
    ranks it has melded then each meld counted like a group; the seed, then the
    commitment, each absent, raw hex bytes or UTF-8 text.
    """
    out = bytearray((PACKED_FORMAT,))
    flags = state.twos | state.opened[0] << 1 | state.opened[1] << 2
    for seat, used in enumerate(state.joker_used):
        flags |= used << (3 + seat)
    out += bytes(
        (
            flags,
            state.turn | state.dealer << 4,
            PHASES.index(state.phase) | (state.went_out or 0) << 4,
        )
    )
    _varint(out, state.ply)
    for number in (*state.thresholds, *state.match_scores):
        _varint(out, _zigzag(number))
    for jokers in state.account_jokers:
        _varint(out, jokers)
    for group in (*state.hands, state.stock, state.discard, *state.bonus_threes):
        _group(out, group)
    for team in state.melds:
        mask = sum(1 << rank for rank, meld in enumerate(team) if meld)
        out += mask.to_bytes(2, "little")
        for meld in team:
            if meld:
                _group(out, meld)
    _text(out, state.seed)
    _text(out, state.commitment)
    return bytes(out)


def unpack(data: bytes) -> RoundState:
    """The state ``pack`` wrote; anything else is ``malformed``."""
    if not data or data[0] != PACKED_FORMAT:
        raise EngineError("malformed", "not a packed round state")
    try:
        return _Reader(data).state()
    except (IndexError, ValueError, UnicodeDecodeError):
        raise EngineError("malformed", "a packed round state cut short or damaged") from None


class _Reader:
    """A cursor over the bytes of ``pack``, read in the order it wrote them."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._at = 1

    def state(self) -> RoundState:
        flags, seats, phase = self._take(3)
        turn, dealer, went_out = seats & 15, seats >> 4, phase >> 4
        if not (1 <= turn <= 4 and 1 <= dealer <= 4 and went_out <= 4):
            raise ValueError("a seat out of range")
        ply = self._varint()
        thresholds = (self._signed(), self._signed())
        match_scores = (self._signed(), self._signed())
        account_jokers = tuple(self._varint() for _ in range(4))
        hands = tuple(self._group() for _ in range(4))
        stock, discard = self._group(), self._group()
        bonus_threes = (self._group(), self._group())
        melds = (self._melds(), self._melds())
        seed, commitment = self._text(), self._text()
        if self._at != len(self._data):
            raise ValueError("bytes after the state")
        return new_state(
            variant="twos-meld" if flags & 1 else "classic",
            turn=turn,
            phase=PHASES[phase & 15],
            hands=hands,
            stock=stock,
            discard=discard,
            melds=melds,
            bonus_threes=bonus_threes,
            opened=(bool(flags & 2), bool(flags & 4)),
            thresholds=thresholds,
            match_scores=match_scores,
            account_jokers=account_jokers,
            joker_used=tuple(bool(flags & 1 << (3 + seat)) for seat in range(4)),
            went_out=went_out or None,
            dealer=dealer,
            seed=seed,
            commitment=commitment,
            ply=ply,
        )

    def _take(self, count: int) -> bytes:
        start, self._at = self._at, self._at + count
        if self._at > len(self._data):
            raise IndexError("past the end")
        return self._data[start : self._at]

    def _varint(self) -> int:
        value = shift = 0
        while True:
            byte = self._data[self._at]
            self._at += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7

    def _signed(self) -> int:
        value = self._varint()
        return -((value + 1) >> 1) if value & 1 else value >> 1

    def _group(self) -> tuple[int, ...]:
        tiles = tuple(self._take(self._take(1)[0]))
        if not _KINDS.issuperset(tiles):
            raise ValueError("not a tile")
        return tiles

    def _melds(self) -> tuple[tuple[int, ...], ...]:
        mask = int.from_bytes(self._take(2), "little")
        if mask >> len(EMPTY_MELDS):
            raise ValueError("a meld of no rank")
        return tuple(self._group() if mask >> rank & 1 else () for rank in range(len(EMPTY_MELDS)))

    def _text(self) -> str | None:
        kind = self._take(1)[0]
        if kind == _NO_TEXT:
            return None
        raw = self._take(self._varint())
        if kind == _HEX_TEXT:
            return raw.hex()
        if kind == _UTF8_TEXT:
            return raw.decode()
        raise ValueError("an unknown kind of text")


def _varint(out: bytearray, value: int) -> None:
    """Seven bits a byte, lowest first, the high bit set on every byte but the last."""
    if value < 0:
        raise ValueError("a varint is never negative")
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)


def _zigzag(value: int) -> int:
    """A signed number as a varint's: 0, -1, 1, -2, ... become 0, 1, 2, 3, ..."""
    return value << 1 if value >= 0 else (-value << 1) - 1


def _group(out: bytearray, tiles: tuple[int, ...]) -> None:
    out.append(len(tiles))
    out += bytes(tiles)


def _text(out: bytearray, text: str | None) -> None:
    """A seed or commitment: the seeds the services draw and every commitment are
    lower-case hex, kept as half as many raw bytes; any other text as UTF-8."""
    if text is None:
        out.append(_NO_TEXT)
        return
    raw = _hex_bytes(text)
    kind = _HEX_TEXT
    if raw is None:
        raw, kind = text.encode(), _UTF8_TEXT
    out.append(kind)
    _varint(out, len(raw))
    out += raw


def _hex_bytes(text: str) -> bytes | None:
    """The bytes ``text`` spells in lower-case hex, if it reads back as exactly ``text``."""
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        return None
    return raw if raw.hex() == text else None
