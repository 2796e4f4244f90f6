"""Schema types describing Kafka protocol messages.

This module owns the vocabulary that the generated modules under ``wire/messages`` are written in
(:class:`Versions`, :class:`Field`, :class:`Struct`, :class:`ArrayOf`, :class:`MessageSchema`,
:class:`ApiSchema`) and the rules for a field's default value.  It holds no encoding logic; see
:mod:`wire.codec` for that.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, NamedTuple

#: Highest version number a message can have; open-ended ranges ("3+") end here.
MAX_VERSION = 0x7FFF

#: Primitive type names, as spelled in Kafka's message definitions.
PRIMITIVE_TYPES = frozenset(
    {
        "int8",
        "int16",
        "uint16",
        "int32",
        "uint32",
        "int64",
        "float64",
        "bool",
        "string",
        "bytes",
        "records",
        "uuid",
    }
)

ZERO_UUID = uuid.UUID(int=0)


class Versions(NamedTuple):
    """An inclusive range of message versions; ``Versions(3)`` means "3+"."""

    low: int
    high: int = MAX_VERSION

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high

    @property
    def empty(self) -> bool:
        return self.high < self.low

    @classmethod
    def parse(cls, text: str) -> Versions:
        """Parse Kafka's version-range syntax: ``"none"``, ``"3"``, ``"3+"`` or ``"0-2"``."""
        text = text.strip()
        if text == "none":
            return NEVER
        if text.endswith("+"):
            return cls(int(text[:-1]))
        if "-" in text:
            low, high = text.split("-", 1)
            return cls(int(low), int(high))
        return cls(int(text), int(text))

    def __repr__(self) -> str:
        if self.empty:
            return "NEVER"
        if self.high == MAX_VERSION:
            return f"Versions({self.low})"
        return f"Versions({self.low}, {self.high})"


#: The empty version range ("none").
NEVER = Versions(0, -1)


class _TypeDefault:
    """Marker for "no explicit default": the field's type decides (0, "", False, [], ...)."""

    _instance: _TypeDefault | None = None

    def __new__(cls) -> _TypeDefault:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "TYPE_DEFAULT"

    def __reduce__(self) -> str:
        return "TYPE_DEFAULT"


TYPE_DEFAULT: Any = _TypeDefault()


@dataclass(frozen=True, slots=True)
class Struct:
    """A named group of fields: a message body, an array element or a struct-typed field."""

    name: str
    fields: tuple[Field, ...]


@dataclass(frozen=True, slots=True)
class ArrayOf:
    """An array whose elements are a primitive type (by name) or a :class:`Struct`."""

    item: str | Struct


FieldType = str | ArrayOf | Struct


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a struct.

    ``type`` is a primitive type name, an :class:`ArrayOf` or a :class:`Struct`.  A field takes part in
    the versions in ``versions``; in the versions in ``tagged`` it is carried as tagged field ``tag``
    instead of in its position.  ``flexible`` overrides the message's flexible versions for this field
    alone (the request header's client id is never compact).
    """

    name: str
    type: FieldType
    versions: Versions
    nullable: Versions = NEVER
    tag: int | None = None
    tagged: Versions = NEVER
    default: Any = TYPE_DEFAULT
    flexible: Versions | None = None

    def default_value(self) -> Any:
        """A fresh copy of this field's default value (lists and dicts are never shared)."""
        if self.default is not TYPE_DEFAULT:
            return self.default
        return type_default(self.type)


def type_default(ftype: FieldType) -> Any:
    """The default a field of type ``ftype`` takes when its definition names none."""
    if isinstance(ftype, ArrayOf):
        return []
    if isinstance(ftype, Struct):
        return {f.name: f.default_value() for f in ftype.fields}
    if ftype in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
        return 0
    if ftype == "float64":
        return 0.0
    if ftype == "bool":
        return False
    if ftype == "string":
        return ""
    if ftype == "bytes":
        return b""
    if ftype == "records":
        return None
    if ftype == "uuid":
        return ZERO_UUID
    raise ValueError(f"unknown field type {ftype!r}")


@dataclass(frozen=True, slots=True)
class MessageSchema:
    """A request, response or header: its versions and its top-level fields."""

    name: str
    valid: Versions
    flexible: Versions
    fields: tuple[Field, ...]

    @property
    def struct(self) -> Struct:
        return Struct(self.name, self.fields)


@dataclass(frozen=True, slots=True)
class ApiSchema:
    """One API: its key, request and response schemas and header rules.

    Request header: version 2 in flexible versions, else 1.  Response header: version 1 in flexible
    versions, else 0 -- unless ``flexible_response_header`` is false (ApiVersions), in which case it is
    always version 0 so that a client can read it before it knows which versions the broker speaks.
    """

    api_key: int
    name: str
    request: MessageSchema
    response: MessageSchema
    listeners: tuple[str, ...] = ()
    latest_version_unstable: bool = False
    flexible_response_header: bool = True

    @property
    def valid(self) -> Versions:
        return self.request.valid

    @property
    def flexible(self) -> Versions:
        return self.request.flexible

    def request_header_version(self, version: int) -> int:
        return 2 if version in self.request.flexible else 1

    def response_header_version(self, version: int) -> int:
        if self.flexible_response_header and version in self.response.flexible:
            return 1
        return 0
