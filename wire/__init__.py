"""The Kafka wire protocol: schemas generated from kafka-clients and a codec driven by them.

Public API: decode/encode of request and response frames, header decoding, and version/name lookups.
Bodies are dicts with snake_case keys; see :mod:`wire.codec` for the conventions on defaults.
"""

from wire.error_codes import ErrorCode
from wire.errors import DecodeError, EncodeError, UnsupportedVersion
from wire.frames import (
    RequestHeader,
    all_api_keys,
    api_name,
    decode_request,
    decode_request_header,
    decode_response,
    encode_request,
    encode_response,
    supported_versions,
)

__all__ = [
    "DecodeError",
    "EncodeError",
    "ErrorCode",
    "RequestHeader",
    "UnsupportedVersion",
    "all_api_keys",
    "api_name",
    "decode_request",
    "decode_request_header",
    "decode_response",
    "encode_request",
    "encode_response",
    "supported_versions",
]
