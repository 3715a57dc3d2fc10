"""Display names: what a person may be called at the table, and when two names are one.

A name is what the other three read beside a seat, so the game must keep anyone
from displaying as another player. Two rules, each stated once, here:

- The shape (``DisplayName``): after Unicode NFC and with every run of
  whitespace read as one space (none at either end), 1 to 24 letters of any
  script, digits, spaces and ``_ . ' -`` (``NAME_PATTERN``). No control,
  format or invisible character (a zero-width space, a right-to-left
  override) and no symbol gets through, and no parentheses, so no person
  is called "Ada (bot)" like the local stack's bots. The pattern is written
  so that it means the same to the server (pydantic's regex engine) and to
  ECMA-262 with the ``u`` flag, which is how JSON Schema's ``pattern`` and the
  web client read it.
- Sameness (``skeletons``): two names are one when they look alike. Each
  name is folded (NFKC, so a fullwidth A, U+FF21, is ``A``; whitespace collapsed;
  spaces and ``_ . ' -`` at either end dropped, so ``Ann.`` is ``Ann``), then
  mapped to its skeleton as Unicode Technical Standard #39 defines it (NFD,
  each character to its prototype in the standard's confusables data, NFD
  again: a Cyrillic A, U+0410, is the Latin ``A``, ``rn`` is ``m``), case folded, and
  mapped again. Folding case before the prototypes would lose that a capital
  ``I`` looks like a small ``L``; folding it after them would keep ``IAN``
  apart from ``ian``: a name has both skeletons, and two names are one when
  any of theirs meet.

Where a name must be unique (the local sign-in's accounts) it is unique by
skeleton. The confusables data is read from the ``confusables`` package's
copy of the standard's ``confusables.txt`` when a skeleton is first asked
for; only the local stack asks, so the Lambda layer does not carry it.
"""

from __future__ import annotations

import functools
import unicodedata
from importlib import metadata
from pathlib import Path
from typing import Annotated, Final

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)

MAX_NAME_CHARS: Final = 24
NAME_MARKS: Final = "_ .'-"
"""What a name may hold beside letters and digits: the space and four marks."""
NAME_PATTERN: Final = rf"^[\p{{L}}\p{{N}}{NAME_MARKS}]{{1,{MAX_NAME_CHARS}}}$"
"""Letters and digits of any script and the marks (the web client checks a name with this
very pattern before it signs in)."""
NAME_RULE: Final = (
    f"1 to {MAX_NAME_CHARS} Unicode letters (any script), digits, spaces and "
    f"{' '.join(NAME_MARKS.replace(' ', ''))}; read in NFC with each run of whitespace as "
    "one space and none at either end"
)
CONFUSABLES: Final = ("confusables", "confusables/assets/confusables.txt")
"""The distribution that ships the Unicode confusables data, and the file's path in it."""


def tidy(value: object) -> object:
    """The name as it is kept and shown: NFC, whitespace runs as one space, trimmed.

    Anything but text comes back as it came, for the string check to refuse.
    """
    if not isinstance(value, str):
        return value
    return " ".join(unicodedata.normalize("NFC", value).split())


DisplayName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_NAME_CHARS, pattern=NAME_PATTERN),
    BeforeValidator(tidy),
    Field(
        description=f"A display name: {NAME_RULE}. The pattern is Unicode: read it as ECMA-262 "
        "with the `u` flag (`\\p{L}` a letter of any script, `\\p{N}` a digit of any)."
    ),
]
DISPLAY_NAME: Final[TypeAdapter[str]] = TypeAdapter(
    DisplayName, config=ConfigDict(strict=True, defer_build=True)
)


def display_name(value: object) -> str | None:
    """``value`` as a display name if it is one (cut to the longest allowed), else None.

    For names the game does not choose itself, such as a token's claims: a name
    too long is cut rather than lost, anything else that breaks the rule is no name.
    """
    text = tidy(value)
    if not isinstance(text, str):
        return None
    try:
        return DISPLAY_NAME.validate_python(text[:MAX_NAME_CHARS])
    except ValidationError:
        return None


@functools.cache
def prototypes() -> dict[int, str]:
    """Code point → its prototype, from UTS #39's ``confusables.txt`` (``source ; target ;``)."""
    distribution, path = CONFUSABLES
    data = Path(str(metadata.distribution(distribution).locate_file(path)))
    table: dict[int, str] = {}
    for line in data.read_text(encoding="utf-8-sig").splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) >= 3:
            source, target = fields[0].split(), fields[1].split()
            table[int(source[0], 16)] = "".join(chr(int(code, 16)) for code in target)
    return table


def _skeleton(text: str) -> str:
    """UTS #39's skeleton: NFD, every character to its prototype, NFD again."""
    mapped = unicodedata.normalize("NFD", text).translate(prototypes())
    return unicodedata.normalize("NFD", mapped)


def _folded(name: str) -> str:
    """NFKC, whitespace collapsed, no space or mark at either end (``Ann.`` reads ``Ann``)."""
    return " ".join(unicodedata.normalize("NFKC", name).split()).strip(NAME_MARKS)


def skeleton(name: str) -> str:
    """The skeleton of ``name`` with the prototypes mapped before the case is folded."""
    return _skeleton(_skeleton(_folded(name)).casefold())


def skeletons(name: str) -> frozenset[str]:
    """The forms under which ``name`` is compared: two names are one when theirs meet."""
    return frozenset({skeleton(name), skeleton(name.casefold())})
