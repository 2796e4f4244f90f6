"""Compiling schemas into decoders and encoders.

:func:`compile_decoder` and :func:`compile_encoder` turn one :class:`~wire.schema.Struct` at one version
into one Python function, once: its source is written from the schema (a line per field, calling the
field's reader or writer) and compiled, so the per-message work is one call per field.  Runs of adjacent
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
    """Build the decoder of ``struct_schema`` at ``version`` (``flexible``: is it a flexible version).

    The decoder is one function written for this struct and version (see ``_compiled``): a line
    per field or run of fixed-width fields calling that field's reader, so a message costs one call
    per field, not a loop over steps that each call a reader."""
    template: dict[str, Any] = {}
    fresh: list[tuple[str, Callable[[], Any]]] = []
    tagged: dict[int, tuple[str, Reader]] = {}
    names: dict[str, Any] = {"copy": None}
    lines: list[str] = []
    run_names: list[str] = []
    run_formats: list[str] = []

    def flush_run() -> None:
        if run_names:
            layout = struct.Struct(">" + "".join(run_formats))
            unpack = _bind(names, "unpack", layout.unpack_from)
            targets = ", ".join(f"d[{n!r}]" for n in run_names)
            lines.append(f"    {targets}{',' if len(run_names) == 1 else ''} = {unpack}(buf, pos)")
            lines.append(f"    pos += {layout.size}")
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
        reader = _bind(names, "read", _value_reader(f.type, version, flexible, form.compact, form.nullable))
        lines.append(f"    d[{f.name!r}], pos = {reader}(buf, pos)")
    flush_run()
    if flexible:
        # Most messages carry no tagged fields: one byte, checked here without a call.
        read_tagged = _bind(names, "tagged", _tagged_section_decoder(tagged))
        lines.append(f"    pos = pos + 1 if buf[pos] == 0 else {read_tagged}(buf, pos, d)")
    names["copy"] = template.copy
    for name, make in fresh:
        lines.insert(0, f"    d[{name!r}] = {_bind(names, 'make', make)}()")
    lines.insert(0, "    d = copy()")
    lines.append("    return d, pos")
    return _compiled("decode_" + struct_schema.name, "buf, pos", lines, names)


def _bind(names: dict[str, Any], prefix: str, value: Any) -> str:
    """Put ``value`` in a generated function's globals under a new name, and return the name."""
    name = f"{prefix}_{len(names)}"
    names[name] = value
    return name


def _compiled(name: str, params: str, body: list[str], names: dict[str, Any]) -> Callable[..., Any]:
    """The function ``name(params)`` with ``body``, its free names looked up in ``names``: the
    schemas' field names only ever appear in it as string literals (repr)."""
    identifier = "".join(c if c.isalnum() else "_" for c in name)
    source = f"def {identifier}({params}):\n" + "\n".join(body) + "\n"
    namespace = dict(names)
    exec(compile(source, f"<wire codec {identifier}>", "exec"), namespace)  # noqa: S102 - our own generated code
    return namespace[identifier]


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

    return write_tagged


def compile_encoder(struct_schema: Struct, version: int, flexible: bool) -> StructEncoder:
    """Build the encoder of ``struct_schema`` at ``version`` (``flexible``: is it a flexible version):
    one function written for this struct and version, as the decoder is."""
    names: dict[str, Any] = {}
    lines = ["    get = d.get"]
    run_names: list[str] = []
    run_formats: list[str] = []
    run_defaults: list[Any] = []
    tagged: list[tuple[int, str, Any, Writer]] = []

    def flush_run() -> None:
        if run_names:
            pack = _bind(names, "pack", struct.Struct(">" + "".join(run_formats)).pack)
            values = ", ".join(f"get({n!r}, {_bind(names, 'default', v)})" for n, v in zip(run_names, run_defaults,
                                                                                          strict=True))
            lines.append(f"    out += {pack}({values})")
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
        writer = _bind(names, "write", _value_writer(*writer_args))
        lines.append(f"    {writer}(out, get({f.name!r}, {_bind(names, 'default', f.default_value())}))")
    flush_run()
    if flexible:
        if tagged:
            lines.append(f"    {_bind(names, 'tagged', _tagged_section_encoder(tagged))}(out, d)")
        else:
            lines.append("    out.append(0)")
    return _compiled("encode_" + struct_schema.name, "out, d", lines, names)


def message_decoder(schema: MessageSchema, version: int) -> StructDecoder:
    """Decoder of a whole message (request, response or header) at ``version``."""
    return compile_decoder(schema.struct, version, version in schema.flexible)


def message_encoder(schema: MessageSchema, version: int) -> StructEncoder:
    """Encoder of a whole message (request, response or header) at ``version``."""
    return compile_encoder(schema.struct, version, version in schema.flexible)
