"""Compiling schemas into decoders and encoders.

:func:`compile_decoder` and :func:`compile_encoder` turn one :class:`~wire.schema.Struct` at one version
into a chain of closures, once; the per-message work is then only running the chain.  Runs of adjacent
fixed-width fields are merged into a single ``struct.Struct`` so they are read or written in one call.

Decoded structs are dicts holding *every* field of the struct: fields absent from the version (and tagged
fields not sent) carry their schema default.  When encoding, a missing key takes the schema default,
fields absent from the version are skipped, and a tagged field is written only if its value differs from
its default.  Unknown tagged fields are skipped when decoding.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from wire.errors import DecodeError, EncodeError
from wire.primitives import (
    FIXED_FORMATS,
    Reader,
    Writer,
    bytes_reader,
    bytes_writer,
    fixed_reader,
    fixed_writer,
    null_array_marker,
    read_array_length,
    read_uuid,
    read_uvarint,
    records_reader,
    records_writer,
    string_reader,
    string_writer,
    write_array_length,
    write_uuid,
    write_uvarint,
)
from wire.schema import ArrayOf, Field, FieldType, MessageSchema, Struct

StructDecoder = Callable[[memoryview, int], tuple[dict[str, Any], int]]
StructEncoder = Callable[[bytearray, dict[str, Any]], None]
_DecodeStep = Callable[[memoryview, int, dict[str, Any]], int]
_EncodeStep = Callable[[bytearray, dict[str, Any]], None]


class _FieldForm:
    """How one field is carried in one version: absent, in place, or tagged; compact or not; nullable."""

    __slots__ = ("field", "present", "tagged", "compact", "nullable")

    def __init__(self, f: Field, version: int, flexible: bool) -> None:
        self.field = f
        self.present = version in f.versions
        self.tagged = self.present and flexible and f.tag is not None and version in f.tagged
        self.compact = flexible and (f.flexible is None or version in f.flexible)
        self.nullable = version in f.nullable


def _is_mutable(value: Any) -> bool:
    return isinstance(value, list | dict)


# ---------------------------------------------------------------------------------------------- decoding


def _value_reader(ftype: FieldType, version: int, flexible: bool, compact: bool, nullable: bool) -> Reader:
    if isinstance(ftype, str):
        if ftype in FIXED_FORMATS:
            return fixed_reader(ftype)
        if ftype == "string":
            return string_reader(compact, nullable)
        if ftype == "bytes":
            return bytes_reader(compact, nullable)
        if ftype == "records":
            return records_reader(compact, nullable)
        if ftype == "uuid":
            return read_uuid
        raise ValueError(f"unknown type {ftype!r}")
    if isinstance(ftype, ArrayOf):
        return _array_reader(ftype, version, flexible, compact, nullable)
    inner = compile_decoder(ftype, version, flexible)
    if not nullable:
        return inner

    def read_nullable_struct(buf: memoryview, pos: int) -> tuple[Any, int]:
        if buf[pos] >= 0x80:  # int8 presence marker: negative means null
            return None, pos + 1
        return inner(buf, pos + 1)

    return read_nullable_struct


def _array_reader(ftype: ArrayOf, version: int, flexible: bool, compact: bool, nullable: bool) -> Reader:
    item = ftype.item
    fixed = FIXED_FORMATS.get(item) if isinstance(item, str) else None
    item_reader = None if fixed else _value_reader(item, version, flexible, compact, False)
    item_size = struct.calcsize(">" + fixed) if fixed else 0

    def read_array(buf: memoryview, pos: int) -> tuple[Any, int]:
        n, pos = read_array_length(buf, pos, compact)
        if n < 0:
            if nullable:
                return None, pos
            raise DecodeError("null array in a non-nullable field")
        if n > len(buf) - pos:
            raise DecodeError(f"array of {n} elements overruns the frame")
        if fixed:
            return list(struct.unpack_from(f">{n}{fixed}", buf, pos)), pos + n * item_size
        items = []
        append = items.append
        for _ in range(n):
            value, pos = item_reader(buf, pos)
            append(value)
        return items, pos

    return read_array


def _fixed_run_decoder(names: list[str], formats: list[str]) -> _DecodeStep:
    layout = struct.Struct(">" + "".join(formats))
    unpack_from = layout.unpack_from
    size = layout.size
    if len(names) == 1:
        (name,) = names

        def read_one(buf: memoryview, pos: int, d: dict[str, Any]) -> int:
            d[name] = unpack_from(buf, pos)[0]
            return pos + size

        return read_one
    if len(names) == 2:
        first, second = names

        def read_two(buf: memoryview, pos: int, d: dict[str, Any]) -> int:
            d[first], d[second] = unpack_from(buf, pos)
            return pos + size

        return read_two
    if len(names) == 3:
        first, second, third = names

        def read_three(buf: memoryview, pos: int, d: dict[str, Any]) -> int:
            d[first], d[second], d[third] = unpack_from(buf, pos)
            return pos + size

        return read_three
    keys = tuple(names)

    def read_run(buf: memoryview, pos: int, d: dict[str, Any]) -> int:
        d.update(zip(keys, unpack_from(buf, pos)))  # noqa: B905 - lengths equal by construction
        return pos + size

    return read_run


def _field_decoder(name: str, reader: Reader) -> _DecodeStep:
    def read_field(buf: memoryview, pos: int, d: dict[str, Any]) -> int:
        d[name], pos = reader(buf, pos)
        return pos

    return read_field


def _tagged_section_decoder(known: dict[int, tuple[str, Reader]]) -> _DecodeStep:
    def read_tagged(buf: memoryview, pos: int, d: dict[str, Any]) -> int:
        count, pos = read_uvarint(buf, pos)
        for _ in range(count):
            tag, pos = read_uvarint(buf, pos)
            size, pos = read_uvarint(buf, pos)
            end = pos + size
            if end > len(buf):
                raise DecodeError(f"tagged field {tag} overruns the frame")
            entry = known.get(tag)
            if entry is not None:
                name, reader = entry
                value, stop = reader(buf, pos)
                if stop != end:
                    raise DecodeError(f"tagged field {tag} has size {size} but its value took {stop - pos}")
                d[name] = value
            pos = end
        return pos

    return read_tagged


def compile_decoder(struct_schema: Struct, version: int, flexible: bool) -> StructDecoder:
    """Build the decoder of ``struct_schema`` at ``version`` (``flexible``: is it a flexible version)."""
    template: dict[str, Any] = {}
    fresh: list[tuple[str, Callable[[], Any]]] = []
    steps: list[_DecodeStep] = []
    run_names: list[str] = []
    run_formats: list[str] = []
    tagged: dict[int, tuple[str, Reader]] = {}

    def flush_run() -> None:
        if run_names:
            steps.append(_fixed_run_decoder(run_names[:], run_formats[:]))
            run_names.clear()
            run_formats.clear()

    for f in struct_schema.fields:
        form = _FieldForm(f, version, flexible)
        if not form.present or form.tagged:
            default = f.default_value()
            if _is_mutable(default):
                fresh.append((f.name, f.default_value))
                template[f.name] = None
            else:
                template[f.name] = default
            if form.tagged:
                assert f.tag is not None
                tagged[f.tag] = (
                    f.name,
                    _value_reader(f.type, version, flexible, form.compact, form.nullable),
                )
            continue
        template[f.name] = None
        if isinstance(f.type, str) and f.type in FIXED_FORMATS:
            run_names.append(f.name)
            run_formats.append(FIXED_FORMATS[f.type])
            continue
        flush_run()
        steps.append(
            _field_decoder(f.name, _value_reader(f.type, version, flexible, form.compact, form.nullable))
        )
    flush_run()
    if flexible:
        steps.append(_tagged_section_decoder(tagged))

    copy = template.copy
    steps_t = tuple(steps)
    fresh_t = tuple(fresh)

    if fresh_t:

        def decode_struct(buf: memoryview, pos: int) -> tuple[dict[str, Any], int]:
            d = copy()
            for name, make in fresh_t:
                d[name] = make()
            for step in steps_t:
                pos = step(buf, pos, d)
            return d, pos

        return decode_struct

    def decode_plain_struct(buf: memoryview, pos: int) -> tuple[dict[str, Any], int]:
        d = copy()
        for step in steps_t:
            pos = step(buf, pos, d)
        return d, pos

    return decode_plain_struct


# ---------------------------------------------------------------------------------------------- encoding


def _value_writer(ftype: FieldType, version: int, flexible: bool, compact: bool, nullable: bool) -> Writer:
    if isinstance(ftype, str):
        if ftype in FIXED_FORMATS:
            return fixed_writer(ftype)
        if ftype == "string":
            return string_writer(compact, nullable)
        if ftype == "bytes":
            return bytes_writer(compact, nullable)
        if ftype == "records":
            return records_writer(compact, nullable)
        if ftype == "uuid":
            return write_uuid
        raise ValueError(f"unknown type {ftype!r}")
    if isinstance(ftype, ArrayOf):
        return _array_writer(ftype, version, flexible, compact, nullable)
    inner = compile_encoder(ftype, version, flexible)
    if not nullable:

        def write_struct(out: bytearray, value: Any) -> None:
            if value is None:
                raise EncodeError("null struct in a non-nullable field")
            inner(out, value)

        return write_struct

    def write_nullable_struct(out: bytearray, value: Any) -> None:
        if value is None:
            out.append(0xFF)
            return
        out.append(1)
        inner(out, value)

    return write_nullable_struct


def _array_writer(ftype: ArrayOf, version: int, flexible: bool, compact: bool, nullable: bool) -> Writer:
    item = ftype.item
    fixed = FIXED_FORMATS.get(item) if isinstance(item, str) else None
    item_writer = None if fixed else _value_writer(item, version, flexible, compact, False)
    null = null_array_marker(compact)

    def write_array(out: bytearray, value: Any) -> None:
        if value is None:
            if not nullable:
                raise EncodeError("null array in a non-nullable field")
            out += null
            return
        write_array_length(out, len(value), compact)
        if fixed:
            out += struct.pack(f">{len(value)}{fixed}", *value)
            return
        for element in value:
            item_writer(out, element)

    return write_array


def _fixed_run_encoder(names: list[str], formats: list[str], defaults: list[Any]) -> _EncodeStep:
    pack = struct.Struct(">" + "".join(formats)).pack
    if len(names) == 1:
        name, default = names[0], defaults[0]

        def write_one(out: bytearray, d: dict[str, Any]) -> None:
            out += pack(d.get(name, default))

        return write_one
    pairs = tuple(zip(names, defaults, strict=True))

    def write_run(out: bytearray, d: dict[str, Any]) -> None:
        get = d.get
        out += pack(*[get(name, default) for name, default in pairs])

    return write_run


def _field_encoder(name: str, default: Any, writer: Writer) -> _EncodeStep:
    def write_field(out: bytearray, d: dict[str, Any]) -> None:
        writer(out, d.get(name, default))

    return write_field


def _tagged_section_encoder(tagged: list[tuple[int, str, Any, Writer]]) -> _EncodeStep:
    entries = tuple(sorted(tagged, key=lambda t: t[0]))

    def write_tagged(out: bytearray, d: dict[str, Any]) -> None:
        present = []
        for tag, name, default, writer in entries:
            value = d.get(name, default)
            if value is default or value == default:
                continue
            body = bytearray()
            writer(body, value)
            present.append((tag, body))
        write_uvarint(out, len(present))
        for tag, body in present:
            write_uvarint(out, tag)
            write_uvarint(out, len(body))
            out += body

    if not entries:

        def write_no_tags(out: bytearray, d: dict[str, Any]) -> None:
            out.append(0)

        return write_no_tags
    return write_tagged


def compile_encoder(struct_schema: Struct, version: int, flexible: bool) -> StructEncoder:
    """Build the encoder of ``struct_schema`` at ``version`` (``flexible``: is it a flexible version)."""
    steps: list[_EncodeStep] = []
    run_names: list[str] = []
    run_formats: list[str] = []
    run_defaults: list[Any] = []
    tagged: list[tuple[int, str, Any, Writer]] = []

    def flush_run() -> None:
        if run_names:
            steps.append(_fixed_run_encoder(run_names[:], run_formats[:], run_defaults[:]))
            run_names.clear()
            run_formats.clear()
            run_defaults.clear()

    for f in struct_schema.fields:
        form = _FieldForm(f, version, flexible)
        if not form.present:
            continue
        writer_args = (f.type, version, flexible, form.compact, form.nullable)
        if form.tagged:
            assert f.tag is not None
            tagged.append((f.tag, f.name, f.default_value(), _value_writer(*writer_args)))
            continue
        if isinstance(f.type, str) and f.type in FIXED_FORMATS:
            run_names.append(f.name)
            run_formats.append(FIXED_FORMATS[f.type])
            run_defaults.append(f.default_value())
            continue
        flush_run()
        steps.append(_field_encoder(f.name, f.default_value(), _value_writer(*writer_args)))
    flush_run()
    if flexible:
        steps.append(_tagged_section_encoder(tagged))
    steps_t = tuple(steps)

    def encode_struct(out: bytearray, d: dict[str, Any]) -> None:
        for step in steps_t:
            step(out, d)

    return encode_struct


def message_decoder(schema: MessageSchema, version: int) -> StructDecoder:
    """Decoder of a whole message (request, response or header) at ``version``."""
    return compile_decoder(schema.struct, version, version in schema.flexible)


def message_encoder(schema: MessageSchema, version: int) -> StructEncoder:
    """Encoder of a whole message (request, response or header) at ``version``."""
    return compile_encoder(schema.struct, version, version in schema.flexible)
