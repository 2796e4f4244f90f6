"""The embedded formats of REST Proxy v2: how a record's key and value appear in JSON.  ``binary``
is base64 of the bytes, ``json`` any JSON value (its UTF-8 text on Kafka).  The schema formats
(avro, jsonschema, protobuf) go through the schema registry (``schema_formats``).  Each format has
its media type (``application/vnd.kafka.<format>.v2+json``), which names it in Content-Type when
producing and in Accept when consuming."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import orjson

from pykafkad.rest_proxy import rest_errors

FORMATS = ("binary", "json", "avro", "jsonschema", "protobuf")
SCHEMA_FORMATS = ("avro", "jsonschema", "protobuf")
V2_JSON = "application/vnd.kafka.v2+json"


def media_type(fmt: str) -> str:
    return f"application/vnd.kafka.{fmt}.v2+json"


def format_of(media: str) -> str | None:
    """The embedded format a media type names (None: not one of REST Proxy's)."""
    media = media.split(";")[0].strip().lower()
    for fmt in FORMATS:
        if media == media_type(fmt) or media == f"application/vnd.kafka.{fmt}+json":
            return fmt
    return None


def encode_plain(fmt: str, field: str, index: int, data: Any) -> bytes | None:
    """A key or value of a ``binary`` or ``json`` record as Kafka bytes (None stays None)."""
    if data is None:
        return None
    if fmt == "binary":
        if not isinstance(data, str):
            raise rest_errors.bad_data(f"records[{index}].{field}: data={json.dumps(data)} is not a base64 string.")
        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError) as e:
            raise rest_errors.bad_data(f"records[{index}].{field}: data={json.dumps(data)} is not a valid base64 "
                                       f"string ({e}).") from None
    return json_bytes(data)


def json_bytes(data: Any) -> bytes:
    """``data`` as compact UTF-8 JSON: orjson, or the standard library for what orjson refuses (an
    integer beyond 64 bits)."""
    try:
        return orjson.dumps(data)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


def parse_json(raw: bytes) -> Any:
    """A JSON document; json.JSONDecodeError (or UnicodeDecodeError) when it is not JSON.  The
    standard library's parser, not orjson's: orjson reads an integer beyond 64 bits as a float, and
    telling such a body apart first costs more than orjson saves."""
    return json.loads(raw)


def decode_plain(fmt: str, data: bytes | None) -> Any:
    """Kafka bytes as a ``binary`` or ``json`` consumer sees them."""
    if data is None:
        return None
    if fmt == "binary":
        return base64.b64encode(data).decode()
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise rest_errors.deserialization(f"a record is not JSON, as this json consumer instance needs ({e}); "
                                          "read the topic with a binary instance") from None
