"""Readers and writers for Kafka's primitive wire types.

A *reader* is ``read(buf: memoryview, pos: int) -> (value, new_pos)``; a *writer* is
``write(out: bytearray, value) -> None``.  This module owns unsigned varints, the fixed-width
``struct`` formats, and the length-prefixed types (string, bytes, records) in both their classic
(int16/int32 length, -1 = null) and compact (unsigned varint length + 1, 0 = null) encodings, plus uuid.
Readers raise :class:`~wire.errors.DecodeError` for lengths that overrun the buffer; a read past the end
of a fixed-width value surfaces as ``struct.error``/``IndexError``, which the caller turns into
``DecodeError``.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from typing import Any

from wire.errors import DecodeError, EncodeError

Reader = Callable[[memoryview, int], tuple[Any, int]]
Writer = Callable[[bytearray, Any], None]

#: ``struct`` format characters of the fixed-width types (all big-endian on the wire).
FIXED_FORMATS: dict[str, str] = {
    "int8": "b",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
    "float64": "d",
    "bool": "?",
}

INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
_UUID_SIZE = 16


def read_uvarint(buf: memoryview, pos: int) -> tuple[int, int]:
    """Read an unsigned varint of at most 5 bytes."""
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    result = b & 0x7F
    shift = 7
    pos += 1
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift >= 35:
            raise DecodeError("unsigned varint longer than 5 bytes")


def write_uvarint(out: bytearray, value: int) -> None:
    """Append ``value`` as an unsigned varint."""
    if value < 0:
        raise EncodeError(f"negative unsigned varint {value}")
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _read_length(buf: memoryview, pos: int, compact: bool, wide: bool) -> tuple[int, int]:
    """Read a length prefix; -1 (any negative) means null."""
    if compact:
        n, pos = read_uvarint(buf, pos)
        return n - 1, pos
    if wide:
        return INT32.unpack_from(buf, pos)[0], pos + 4
    return INT16.unpack_from(buf, pos)[0], pos + 2


def _write_length(out: bytearray, n: int, compact: bool, wide: bool) -> None:
    if compact:
        write_uvarint(out, n + 1)
    elif wide:
        out += INT32.pack(n)
    else:
        out += INT16.pack(n)


def fixed_reader(type_name: str) -> Reader:
    unpack_from = struct.Struct(">" + FIXED_FORMATS[type_name]).unpack_from
    size = struct.calcsize(">" + FIXED_FORMATS[type_name])

    def read(buf: memoryview, pos: int) -> tuple[Any, int]:
        return unpack_from(buf, pos)[0], pos + size

    return read


def fixed_writer(type_name: str) -> Writer:
    pack = struct.Struct(">" + FIXED_FORMATS[type_name]).pack

    def write(out: bytearray, value: Any) -> None:
        out += pack(value)

    return write


def _span_reader(
    compact: bool, nullable: bool, wide: bool, what: str, convert: Callable[[memoryview], Any]
) -> Reader:
    """Reader of a length-prefixed run of bytes, turned into a value by ``convert``."""
    if compact:

        def read_compact(buf: memoryview, pos: int) -> tuple[Any, int]:
            n = buf[pos]
            if n < 0x80:
                pos += 1
            else:
                n, pos = read_uvarint(buf, pos)
            if n == 0:
                if nullable:
                    return None, pos
                raise DecodeError(f"null {what} in a non-nullable field")
            end = pos + n - 1
            if end > len(buf):
                raise DecodeError(f"{what} of {n - 1} bytes overruns the frame")
            return convert(buf[pos:end]), end

        return read_compact

    unpack_length = (INT32 if wide else INT16).unpack_from
    width = 4 if wide else 2

    def read_classic(buf: memoryview, pos: int) -> tuple[Any, int]:
        n = unpack_length(buf, pos)[0]
        pos += width
        if n < 0:
            if nullable:
                return None, pos
            raise DecodeError(f"null {what} in a non-nullable field")
        end = pos + n
        if end > len(buf):
            raise DecodeError(f"{what} of {n} bytes overruns the frame")
        return convert(buf[pos:end]), end

    return read_classic


def _decode_utf8(view: memoryview) -> str:
    return view.tobytes().decode("utf-8")


def string_reader(compact: bool, nullable: bool) -> Reader:
    return _span_reader(compact, nullable, False, "string", _decode_utf8)


def bytes_reader(compact: bool, nullable: bool) -> Reader:
    return _span_reader(compact, nullable, True, "bytes", bytes)


def records_reader(compact: bool, nullable: bool) -> Reader:
    """Records are returned as a memoryview slice of the frame: no copy."""
    return _span_reader(compact, nullable, True, "records", memoryview)


def _null_marker(compact: bool, wide: bool) -> bytes:
    if compact:
        return b"\x00"
    return INT32.pack(-1) if wide else INT16.pack(-1)


def string_writer(compact: bool, nullable: bool) -> Writer:
    null = _null_marker(compact, False)

    def write(out: bytearray, value: Any) -> None:
        if value is None:
            if not nullable:
                raise EncodeError("null string in a non-nullable field")
            out += null
            return
        data = value.encode("utf-8")
        if not compact and len(data) > 0x7FFF:
            raise EncodeError(f"string of {len(data)} bytes is too long")
        _write_length(out, len(data), compact, False)
        out += data

    return write


def bytes_writer(compact: bool, nullable: bool) -> Writer:
    """Writer for bytes and records; accepts any bytes-like value."""
    null = _null_marker(compact, True)

    def write(out: bytearray, value: Any) -> None:
        if value is None:
            if not nullable:
                raise EncodeError("null bytes in a non-nullable field")
            out += null
            return
        n = value.nbytes if isinstance(value, memoryview) else len(value)
        _write_length(out, n, compact, True)
        out += value

    return write


class SegmentedBuffer(bytearray):
    """An output buffer that may leave large record sets out of itself, to be sent as they are.

    A record set may also be an object with ``len()`` and ``read()`` that is not a buffer (the
    broker's range of a log file, sent from the file): deferred, it reaches the writer as it is.

    A records writer that meets a value of at least :data:`DEFER_RECORDS_MIN` bytes writes its
    length prefix and, instead of copying the value in, notes ``(position, value)`` in
    ``deferred``: the encoded message is this buffer with each deferred value inserted at its
    position (see :meth:`segments`).  A Fetch response then reaches the socket without its
    records being copied into the response first.
    """

    __slots__ = ("deferred",)

    def __init__(self, initial: bytes = b"") -> None:
        super().__init__(initial)
        self.deferred: list[tuple[int, Any]] = []

    def total_length(self) -> int:
        return len(self) + sum(_nbytes(v) for _, v in self.deferred)

    def segments(self) -> list[Any]:
        """The message as buffers to be written in order (this buffer's pieces and the deferred values)."""
        if not self.deferred:
            return [self]
        view = memoryview(self)
        out: list[Any] = []
        start = 0
        for pos, value in self.deferred:
            if pos > start:
                out.append(view[start:pos])
            out.append(value)
            start = pos
        if start < len(self):
            out.append(view[start:])
        return out


#: Record sets at least this large are left out of a :class:`SegmentedBuffer` rather than copied in.
DEFER_RECORDS_MIN = 32 * 1024


def _nbytes(value: Any) -> int:
    return value.nbytes if isinstance(value, memoryview) else len(value)


def records_writer(compact: bool, nullable: bool) -> Writer:
    """Writer for records: like bytes, but a large value is deferred when writing to a SegmentedBuffer."""
    null = _null_marker(compact, True)

    def write(out: bytearray, value: Any) -> None:
        if value is None:
            if not nullable:
                raise EncodeError("null records in a non-nullable field")
            out += null
            return
        n = _nbytes(value)
        _write_length(out, n, compact, True)
        if n >= DEFER_RECORDS_MIN and type(out) is SegmentedBuffer:
            out.deferred.append((len(out), value))
        else:
            try:
                out += value
            except TypeError:
                # A record set that is not a buffer (a range of a log file: it has read()) is copied here.
                out += value.read()

    return write


def read_uuid(buf: memoryview, pos: int) -> tuple[uuid.UUID, int]:
    end = pos + _UUID_SIZE
    if end > len(buf):
        raise DecodeError("uuid overruns the frame")
    return uuid.UUID(bytes=bytes(buf[pos:end])), end


def write_uuid(out: bytearray, value: uuid.UUID) -> None:
    out += value.bytes


def read_array_length(buf: memoryview, pos: int, compact: bool) -> tuple[int, int]:
    """Read an array's element count; negative means null."""
    return _read_length(buf, pos, compact, True)


def write_array_length(out: bytearray, n: int, compact: bool) -> None:
    _write_length(out, n, compact, True)


def null_array_marker(compact: bool) -> bytes:
    return _null_marker(compact, True)
