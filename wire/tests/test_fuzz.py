"""Malformed input must only ever raise DecodeError: random bytes, truncated and mutated real frames."""

from __future__ import annotations

import random

import pytest

import wire
from wire import DecodeError
from wire.messages import APIS
from wire.tests.samples import SampleMaker

FUZZ_APIS = [0, 1, 2, 3, 8, 9, 10, 11, 12, 14, 18, 19, 20, 32, 36, 60, 68, 75]


def _valid_frames(key: int) -> list[tuple[int, bytes, bytes]]:
    """(version, request frame, response frame), all without length prefix, for a few versions."""
    api = APIS[key]
    versions = sorted({api.valid.low, api.valid.high, (api.valid.low + api.valid.high) // 2})
    frames = []
    for version in versions:
        maker = SampleMaker(seed=version)
        request = wire.encode_request(key, version, 1, "c", maker.struct(api.request.struct, version))
        response = wire.encode_response(key, version, 1, maker.struct(api.response.struct, version))
        frames.append((version, request[4:], response[4:]))
    return frames


def _decode_request(frame: bytes) -> None:
    try:
        header = wire.decode_request_header(frame)
        wire.decode_request(header.api_key, header.api_version, frame, header.body_offset)
    except (DecodeError, wire.UnsupportedVersion):
        pass


def _decode_body(key: int, version: int, frame: bytes, offset: int) -> None:
    try:
        wire.decode_request(key, version, frame, offset)
    except DecodeError:
        pass


def _decode_response(key: int, version: int, frame: bytes) -> None:
    try:
        wire.decode_response(key, version, frame)
    except DecodeError:
        pass


@pytest.mark.parametrize("key", FUZZ_APIS, ids=[APIS[k].name for k in FUZZ_APIS])
def test_truncated_and_mutated_frames(key: int) -> None:
    rng = random.Random(key)
    for version, request, response in _valid_frames(key):
        offset = wire.decode_request_header(request).body_offset
        for cut in range(len(request)):
            _decode_request(request[:cut])
            if cut >= offset:
                _decode_body(key, version, request[:cut], offset)
        for cut in range(len(response)):
            _decode_response(key, version, response[:cut])
        for _ in range(300):
            mutated = bytearray(request)
            for _ in range(rng.randint(1, 4)):
                mutated[rng.randrange(len(mutated))] = rng.randrange(256)
            _decode_body(key, version, bytes(mutated), offset)
            mutated = bytearray(response)
            for _ in range(rng.randint(1, 4)):
                mutated[rng.randrange(len(mutated))] = rng.choice(
                    (0x00, 0x7F, 0x80, 0xFF, rng.randrange(256))
                )
            _decode_response(key, version, bytes(mutated))


def test_random_bytes() -> None:
    rng = random.Random(1234)
    keys = sorted(APIS)
    for _ in range(3000):
        junk = rng.randbytes(rng.randint(0, 64))
        _decode_request(junk)
        key = rng.choice(keys)
        api = APIS[key]
        version = rng.randint(api.valid.low, api.valid.high)
        _decode_body(key, version, junk, 0)
        _decode_response(key, version, junk)


def test_huge_lengths_fail_fast() -> None:
    # ApiVersions v0 response claiming 2**31-1 elements in a few bytes
    with pytest.raises(DecodeError):
        wire.decode_response(18, 0, bytes.fromhex("00000001 0000 7fffffff 0000"))
    # compact array with a 5-byte varint count
    with pytest.raises(DecodeError):
        wire.decode_response(18, 3, bytes.fromhex("00000001 0000 ffffffff0f 00"))
    # varint longer than 5 bytes
    with pytest.raises(DecodeError):
        wire.decode_response(18, 3, bytes.fromhex("00000001 0000 ffffffffff01"))
