"""Our bytes against kafka-python 3.x's independent encoder, for every (api, version) both support.

kafka-python builds its message classes from its own copy of Kafka's definitions, with its own
encoder; identical frames (header, length prefix and body) from both sides are strong evidence that
field order, types, compact encodings, tagged fields and header versions are right.
"""

from __future__ import annotations

import pytest

import wire
from wire.messages import APIS
from wire.tests.samples import SampleMaker, present_only

kafka = pytest.importorskip("kafka")

from wire.tests.kafka_python_bridge import (  # noqa: E402
    Unrepresentable,
    kafka_python_classes,
    to_kafka_python,
)

CLASSES = kafka_python_classes()
CASES = [
    (key, version, direction)
    for (key, direction), cls in sorted(CLASSES.items())
    if key in APIS
    for version in range(APIS[key].valid.low, min(APIS[key].valid.high, cls.max_version) + 1)
]
REQUIRED_APIS = {18, 3, 0, 1, 2, 19, 20, 10, 11, 14, 12, 8, 9}


def _id(case: tuple[int, int, str]) -> str:
    key, version, direction = case
    return f"{APIS[key].name}-v{version}-{direction}"


def test_required_apis_are_compared() -> None:
    compared = {key for key, _, _ in CASES}
    assert REQUIRED_APIS <= compared
    assert len(CASES) > 400


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
@pytest.mark.parametrize("nulls", [False, True], ids=["values", "nulls"])
def test_same_bytes_as_kafka_python(case: tuple[int, int, str], nulls: bool) -> None:
    key, version, direction = case
    api = APIS[key]
    schema = api.request if direction == "request" else api.response
    sample = SampleMaker(seed=key * 100 + version, nulls=nulls).struct(schema.struct, version)
    try:
        theirs_obj, kept = to_kafka_python(CLASSES[(key, direction)], sample, schema.struct, version)
    except Unrepresentable as exc:
        pytest.skip(f"kafka-python's schema lacks {exc}")
    if direction == "request":
        theirs_obj.with_header(correlation_id=77, client_id="cid")
        ours = wire.encode_request(key, version, 77, "cid", kept)
    else:
        theirs_obj.with_header(correlation_id=77)
        ours = wire.encode_response(key, version, 77, kept)
    theirs = bytes(theirs_obj.encode(header=True, framed=True))
    assert ours == theirs

    if direction == "request":
        header = wire.decode_request_header(theirs[4:])
        assert header[:4] == (key, version, 77, "cid")
        body = wire.decode_request(key, version, theirs[4:], header.body_offset)
    else:
        correlation_id, body = wire.decode_response(key, version, theirs[4:])
        assert correlation_id == 77
    decoded = present_only(body, schema.struct, version)
    assert {name: decoded[name] for name in kept} == kept
