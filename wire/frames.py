"""Whole request and response frames: headers plus bodies, looked up by api key and version.

Owns the per-(api key, version, direction) cache of compiled codecs, the request/response header
version rules (including ApiVersions' response header, which is always version 0), the 4-byte length
prefix on encoded frames, and the translation of low-level failures into :class:`DecodeError`,
:class:`UnsupportedVersion` and :class:`EncodeError`.
"""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

from wire.codec import StructDecoder, StructEncoder, message_decoder, message_encoder
from wire.errors import DecodeError, EncodeError, UnsupportedVersion
from wire.messages import APIS, REQUEST_HEADER, RESPONSE_HEADER
from wire.primitives import SegmentedBuffer, read_uvarint
from wire.schema import ApiSchema

_LENGTH = struct.Struct(">i")
_HEADER_FIXED = struct.Struct(">hhih")
_DECODE_FAILURES = (struct.error, IndexError, ValueError, OverflowError)
_ENCODE_FAILURES = (struct.error, TypeError, AttributeError, ValueError, OverflowError)


class RequestHeader(NamedTuple):
    """A decoded request header; ``body_offset`` is where the body starts in the frame."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body_offset: int


_decoders: dict[tuple[int, int, bool], StructDecoder] = {}
_encoders: dict[tuple[int, int, bool], StructEncoder] = {}
# Filled as (api key, version) pairs are first seen, known ones only, so that made-up keys cannot grow it.
_flexible_request_header: dict[tuple[int, int], bool] = {}
_request_header_encoders = {v: message_encoder(REQUEST_HEADER, v) for v in (1, 2)}
_response_header_decoders = {v: message_decoder(RESPONSE_HEADER, v) for v in (0, 1)}
_response_header_encoders = {v: message_encoder(RESPONSE_HEADER, v) for v in (0, 1)}


# The (api key, version) pairs already checked, each with its schema: every frame looks one up.
_checked: dict[tuple[int, int], ApiSchema] = {}


def _api(api_key: int, api_version: int) -> ApiSchema:
    api = _checked.get((api_key, api_version))
    if api is not None:
        return api
    api = APIS.get(api_key)
    if api is None:
        raise UnsupportedVersion(f"unknown api key {api_key}")
    if api_version not in api.valid:
        raise UnsupportedVersion(
            f"{api.name} version {api_version} is outside {api.valid.low}-{api.valid.high}"
        )
    _checked[(api_key, api_version)] = api
    return api


def _decoder(api: ApiSchema, api_version: int, request: bool) -> StructDecoder:
    key = (api.api_key, api_version, request)
    decoder = _decoders.get(key)
    if decoder is None:
        decoder = message_decoder(api.request if request else api.response, api_version)
        _decoders[key] = decoder
    return decoder


def _encoder(api: ApiSchema, api_version: int, request: bool) -> StructEncoder:
    key = (api.api_key, api_version, request)
    encoder = _encoders.get(key)
    if encoder is None:
        encoder = message_encoder(api.request if request else api.response, api_version)
        _encoders[key] = encoder
    return encoder


def _view(frame: bytes | bytearray | memoryview) -> memoryview:
    return frame if isinstance(frame, memoryview) else memoryview(frame)


def _decode_body(
    decoder: StructDecoder, buf: memoryview, offset: int, what: str | tuple[ApiSchema, int, str],
    allow_trailing: bool = False,
) -> dict[str, Any]:
    try:
        body, end = decoder(buf, offset)
    except DecodeError:
        raise
    except _DECODE_FAILURES as exc:
        raise DecodeError(f"malformed {_described(what)}: {exc}") from exc
    if end != len(buf) and not allow_trailing:
        raise DecodeError(f"{len(buf) - end} trailing bytes after {_described(what)}")
    return body


def _described(what: str | tuple[ApiSchema, int, str]) -> str:
    """``what`` a message is, for an error: written only when one is raised."""
    if isinstance(what, str):
        return what
    api, version, kind = what
    return f"{api.name} v{version} {kind}"


def _request_header_is_flexible(api_key: int, api_version: int) -> bool:
    """Whether a request uses header v2; unknown apis and versions are read as v1."""
    api = APIS.get(api_key)
    if api is None or api_version not in api.valid:
        return False
    flexible = _flexible_request_header[(api_key, api_version)] = api.request_header_version(api_version) == 2
    return flexible


def decode_request_header(frame: bytes | memoryview) -> RequestHeader:
    """Decode the header of a request frame (given without its length prefix).

    Uses header version 2 for flexible versions of known APIs, else version 1.  For an unknown api key or
    an unsupported version the header is still returned, parsed as version 1, so that the caller can
    answer with UNSUPPORTED_VERSION.  The layout is fixed by the protocol (the generated header schema is
    checked against it by the tests), so this hot path is written out by hand.
    """
    buf = frame if isinstance(frame, memoryview) else memoryview(frame)
    try:
        api_key, api_version, correlation_id, length = _HEADER_FIXED.unpack_from(buf, 0)
        pos = 10
        client_id = None
        if length >= 0:
            pos += length
            if pos > len(buf):
                raise DecodeError("client id overruns the frame")
            client_id = buf[10:pos].tobytes().decode("utf-8")
        flexible = _flexible_request_header.get((api_key, api_version))
        if flexible is None:
            flexible = _request_header_is_flexible(api_key, api_version)
        if flexible:
            pos = _skip_tagged_fields(buf, pos)
    except DecodeError:
        raise
    except _DECODE_FAILURES as exc:
        raise DecodeError(f"malformed request header: {exc}") from exc
    return RequestHeader(api_key, api_version, correlation_id, client_id, pos)


def _skip_tagged_fields(buf: memoryview, pos: int) -> int:
    count, pos = read_uvarint(buf, pos)
    for _ in range(count):
        _tag, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        pos += size
        if pos > len(buf):
            raise DecodeError("tagged field overruns the frame")
    return pos


def decode_request(api_key: int, api_version: int, frame: bytes | memoryview, offset: int) -> dict:
    """Decode a request body starting at ``offset`` of ``frame``.

    Bytes after the body are ignored, as Kafka's request parser ignores them: librdkafka sends
    some (its all-topics Metadata v12 request ends with three).
    """
    api = _api(api_key, api_version)
    return _decode_body(
        _decoder(api, api_version, True), _view(frame), offset, (api, api_version, "request"),
        allow_trailing=True,
    )


def decode_response(api_key: int, api_version: int, frame: bytes | memoryview) -> tuple[int, dict]:
    """Decode a response frame (without its length prefix) into ``(correlation_id, body)``."""
    api = _api(api_key, api_version)
    buf = _view(frame)
    try:
        header, offset = _response_header_decoders[api.response_header_version(api_version)](buf, 0)
    except DecodeError:
        raise
    except _DECODE_FAILURES as exc:
        raise DecodeError(f"malformed response header: {exc}") from exc
    body = _decode_body(_decoder(api, api_version, False), buf, offset, (api, api_version, "response"))
    return header["correlation_id"], body


def _finish(out: bytearray) -> bytes:
    _LENGTH.pack_into(out, 0, len(out) - 4)
    return bytes(out)


def encode_response(api_key: int, api_version: int, correlation_id: int, body: dict) -> bytearray:
    """Encode a response frame, with its 4-byte length prefix and the right header version.

    The frame is returned as the bytearray it was built in: a Fetch response holding megabytes of
    records is not copied once more into a ``bytes`` on its way to the socket.
    """
    api = _api(api_key, api_version)
    encode_body = _encoder(api, api_version, False)
    out = bytearray(4)
    try:
        _response_header_encoders[api.response_header_version(api_version)](
            out, {"correlation_id": correlation_id}
        )
        encode_body(out, body)
    except EncodeError:
        raise
    except _ENCODE_FAILURES as exc:
        raise EncodeError(f"cannot encode {api.name} v{api_version} response: {exc}") from exc
    _LENGTH.pack_into(out, 0, len(out) - 4)
    return out


def encode_response_segments(api_key: int, api_version: int, correlation_id: int, body: dict) -> list[Any]:
    """Like :func:`encode_response`, as buffers to be written in order: large record sets are not copied.

    The record sets of at least ``wire.primitives.DEFER_RECORDS_MIN`` bytes are the caller's own
    objects, between pieces of one encoded buffer; their concatenation is the frame.
    """
    api = _api(api_key, api_version)
    encode_body = _encoder(api, api_version, False)
    out = SegmentedBuffer(b"\0\0\0\0")
    try:
        _response_header_encoders[api.response_header_version(api_version)](
            out, {"correlation_id": correlation_id}
        )
        encode_body(out, body)
    except EncodeError:
        raise
    except _ENCODE_FAILURES as exc:
        raise EncodeError(f"cannot encode {api.name} v{api_version} response: {exc}") from exc
    _LENGTH.pack_into(out, 0, out.total_length() - 4)
    return out.segments()


def encode_request(
    api_key: int, api_version: int, correlation_id: int, client_id: str | None, body: dict
) -> bytes:
    """Encode a request frame, with its 4-byte length prefix and the right header version."""
    api = _api(api_key, api_version)
    encode_body = _encoder(api, api_version, True)
    header = {
        "request_api_key": api_key,
        "request_api_version": api_version,
        "correlation_id": correlation_id,
        "client_id": client_id,
    }
    out = bytearray(4)
    try:
        _request_header_encoders[api.request_header_version(api_version)](out, header)
        encode_body(out, body)
    except EncodeError:
        raise
    except _ENCODE_FAILURES as exc:
        raise EncodeError(f"cannot encode {api.name} v{api_version} request: {exc}") from exc
    return _finish(out)


def supported_versions(api_key: int) -> tuple[int, int]:
    """The API's ``validVersions`` as ``(min, max)``."""
    api = APIS.get(api_key)
    if api is None:
        raise UnsupportedVersion(f"unknown api key {api_key}")
    return api.valid.low, api.valid.high


def api_name(api_key: int) -> str:
    """The API's name, e.g. ``"Produce"`` for key 0."""
    api = APIS.get(api_key)
    if api is None:
        raise UnsupportedVersion(f"unknown api key {api_key}")
    return api.name


def all_api_keys() -> list[int]:
    """Every api key the generated schemas define, ascending."""
    return sorted(APIS)
