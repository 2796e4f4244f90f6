"""Round trip of every version of every request and response defined by the generated schemas."""

from __future__ import annotations

import pytest

import wire
from wire.messages import APIS
from wire.tests.samples import SampleMaker, absent_fields_at_default, present_only

CASES = [
    (key, version, direction)
    for key, api in sorted(APIS.items())
    for version in range(api.valid.low, api.valid.high + 1)
    for direction in ("request", "response")
]


def _id(case: tuple[int, int, str]) -> str:
    key, version, direction = case
    return f"{APIS[key].name}-v{version}-{direction}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
@pytest.mark.parametrize("nulls", [False, True], ids=["values", "nulls"])
def test_round_trip(case: tuple[int, int, str], nulls: bool) -> None:
    key, version, direction = case
    api = APIS[key]
    schema = api.request if direction == "request" else api.response
    sample = SampleMaker(seed=key * 1000 + version, nulls=nulls).struct(schema.struct, version)

    if direction == "request":
        frame = wire.encode_request(key, version, 12345, "client-1", sample)
        header = wire.decode_request_header(frame[4:])
        assert header[:4] == (key, version, 12345, "client-1")
        body = wire.decode_request(key, version, frame[4:], header.body_offset)
        again = wire.encode_request(key, version, 12345, "client-1", body)
    else:
        frame = wire.encode_response(key, version, 12345, sample)
        correlation_id, body = wire.decode_response(key, version, frame[4:])
        assert correlation_id == 12345
        again = wire.encode_response(key, version, 12345, body)

    assert int.from_bytes(frame[:4], "big", signed=True) == len(frame) - 4
    assert present_only(body, schema.struct, version) == sample
    assert absent_fields_at_default(body, schema.struct, version) == []
    assert again == frame


def test_every_api_is_covered() -> None:
    assert len(APIS) > 80
    assert {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 18, 19, 20} <= set(APIS)
