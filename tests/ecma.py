"""JSON Schema reads ``pattern`` (and ``format: regex``) as ECMA-262 regular expressions.

The contract writes its Unicode classes as JavaScript reads them with the ``u``
flag (``\\p{L}``: a letter of any script). Python's ``re`` knows no ``\\p{...}``
and refuses such a schema; the ``regex`` module reads them as JavaScript
does, so the contract's schemas are checked here as a client in another
language checks them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema
import regex

FORMATS = jsonschema.FormatChecker()


@FORMATS.checks("regex", raises=regex.error)
def _is_regex(instance: object) -> bool:
    if isinstance(instance, str):
        regex.compile(instance)
    return True


def _pattern(
    validator: Any, pattern: str, instance: object, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    if validator.is_type(instance, "string") and not regex.search(pattern, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


Draft202012 = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, {"pattern": _pattern}, format_checker=FORMATS
)


def check_schema(schema: dict[str, Any]) -> None:
    """A valid JSON Schema (Draft 7, AsyncAPI's), its regular expressions read as ECMA-262."""
    jsonschema.Draft7Validator.check_schema(schema, format_checker=FORMATS)
