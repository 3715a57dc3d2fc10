"""Frozen value classes, declared as dataclasses are, without their cost at import.

``@dataclass`` compiles an ``__init__``, ``__eq__``, ``__repr__``, ``__hash__``
and the frozen ``__setattr__`` for every class it decorates: half a
millisecond each on CPython 3.13, the runtime's. The records, the unit of
work's conditions, writes and outcomes and the other values a handler
imports are some forty classes, which made the turn handler's cold start
the slowest against ``import boto3`` (docs/performance.md, "Cold start as
deployed"). A ``Frozen`` subclass is declared the same way (annotated
fields, defaults, ``field(default_factory=...)``) and gets the same
behaviour from methods written once, here: keyword or positional
construction, equality only between instances of the same class, hashing,
``repr``, immutability (``dataclasses.FrozenInstanceError``),
``__match_args__`` and ``replace``. Type checkers read it as a frozen
dataclass (``dataclass_transform``), so a wrong field or an assignment is
still a type error.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import FrozenInstanceError
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast, dataclass_transform

T = TypeVar("T")
F = TypeVar("F", bound="Frozen")


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], object]) -> None:
        self.make = make


def field(*, default_factory: Callable[[], T]) -> T:
    """A default made anew for each instance (a dict, an outcome)."""
    return cast(T, _Factory(default_factory))


_MISSING = object()


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class Frozen:
    """The base of a frozen value class: its fields are its annotations, in order, its
    bases' first (``ClassVar`` ones excepted); a class attribute is a field's default."""

    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, object]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        annotations = inspect.get_annotations(cls)
        own = [
            name
            for name, annotation in annotations.items()
            if not str(annotation).startswith(("ClassVar", "typing.ClassVar"))
        ]
        defaults = dict(cls._defaults)
        for name in own:
            value = cls.__dict__.get(name, _MISSING)
            if value is _MISSING:
                defaults.pop(name, None)
                continue
            defaults[name] = value
            if isinstance(value, _Factory):
                delattr(cls, name)
        cls._fields = (*(f for f in cls._fields if f not in own), *own)
        cls._defaults = defaults
        type.__setattr__(cls, "__match_args__", cls._fields)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        names = cls._fields
        if len(args) > len(names):
            raise TypeError(f"{cls.__name__}() takes {len(names)} arguments, {len(args)} given")
        values: dict[str, object] = dict(zip(names, args, strict=False))
        for name in names[len(args) :]:
            value = kwargs.pop(name, _MISSING)
            if value is _MISSING:
                value = cls._defaults.get(name, _MISSING)
                if value is _MISSING:
                    raise TypeError(f"{cls.__name__}() is missing the argument {name!r}")
                if isinstance(value, _Factory):
                    value = value.make()
            values[name] = value
        if kwargs:
            raise TypeError(f"{cls.__name__}() got unexpected arguments {sorted(kwargs)}")
        object.__setattr__(self, "__dict__", values)

    def _values(self) -> tuple[object, ...]:
        return tuple(self.__dict__.values())

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self.__dict__.items())
        return f"{type(self).__qualname__}({shown})"

    if not TYPE_CHECKING:  # seen by a type checker, they would allow any attribute

        def __setattr__(self, name: str, value: object) -> None:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")

        def __delattr__(self, name: str) -> None:
            raise FrozenInstanceError(f"cannot delete field {name!r}")


def replace(value: F, /, **changes: Any) -> F:
    """A copy of ``value`` with ``changes`` (``dataclasses.replace`` for ``Frozen``)."""
    unknown = set(changes).difference(value._fields)
    if unknown:
        raise TypeError(f"{type(value).__name__} has no fields {sorted(unknown)}")
    return type(value)(**{**value.__dict__, **changes})
