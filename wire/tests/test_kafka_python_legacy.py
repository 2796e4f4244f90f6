"""Our bytes against kafka-python's hand-written (pre-JSON, 2.x style) protocol classes.

These classes (``kafka.protocol.old``) spell each version's layout out by hand, independently of Kafka's
JSON definitions, so they check the generated schemas themselves as well as the codec.  They only cover
classic (non-flexible) versions, and take their values positionally.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import pytest

import wire
from wire.messages import APIS
from wire.schema import ArrayOf, Struct
from wire.tests.samples import SampleMaker, present_only

old = pytest.importorskip("kafka.protocol.old")
from kafka.protocol.old.api import Request, Response  # noqa: E402

# Layouts that are wire-identical but shaped differently in kafka-python, so positional values don't fit.
SHAPE_MISMATCH = {
    (3, 8, "response"): "authorized operations as a bit set",
    (15, 3, "response"): "authorized operations as a bit set",
    (37, 0, "request"): "assignments nested in an extra struct",
    (37, 1, "request"): "assignments nested in an extra struct",
}


def _legacy_classes() -> dict[tuple[int, int, str], type]:
    found: dict[tuple[int, int, str], type] = {}
    for info in pkgutil.iter_modules(old.__path__):
        module = importlib.import_module(f"{old.__name__}.{info.name}")
        for obj in vars(module).values():
            if not (isinstance(obj, type) and issubclass(obj, Request | Response)):
                continue
            key, version = getattr(obj, "API_KEY", None), getattr(obj, "API_VERSION", None)
            if isinstance(key, int) and isinstance(version, int):
                found[(key, version, "request" if issubclass(obj, Request) else "response")] = obj
    return found


CLASSES = _legacy_classes()
CASES = sorted(
    case
    for case in CLASSES
    if case[0] in APIS and case[1] in APIS[case[0]].valid and case[1] not in APIS[case[0]].flexible
)


def _positional(value: Any, ftype: Any, version: int) -> Any:
    if value is None:
        return None
    if isinstance(ftype, ArrayOf):
        return [_positional(v, ftype.item, version) for v in value]
    if isinstance(ftype, Struct):
        present = [f for f in ftype.fields if version in f.versions]
        return tuple(_positional(value[f.name], f.type, version) for f in present)
    return value


def test_enough_cases() -> None:
    assert len(CASES) > 150
    assert {0, 1, 2, 3, 8, 9, 10, 11, 12, 14, 18} <= {key for key, _, _ in CASES}


@pytest.mark.parametrize("case", CASES, ids=[f"{APIS[k].name}-v{v}-{d}" for k, v, d in CASES])
def test_same_bytes_as_legacy_kafka_python(case: tuple[int, int, str]) -> None:
    key, version, direction = case
    if case in SHAPE_MISMATCH:
        pytest.skip(f"kafka-python shapes this differently: {SHAPE_MISMATCH[case]}")
    api = APIS[key]
    schema = api.request if direction == "request" else api.response
    sample = SampleMaker(seed=version, ascii_only=True).struct(schema.struct, version)
    args = list(_positional(sample, schema.struct, version))
    if key == 3 and direction == "request":  # kafka-python takes metadata topics as bare names
        args[0] = [name for (name,) in args[0]]
    theirs_obj = CLASSES[case](*args)
    if direction == "request":
        theirs_obj.with_header(correlation_id=3, client_id="c")
        ours = wire.encode_request(key, version, 3, "c", sample)
    else:
        theirs_obj.with_header(correlation_id=3)
        ours = wire.encode_response(key, version, 3, sample)
    theirs = theirs_obj.encode(header=True, framed=True)
    assert ours == theirs
    if direction == "request":
        header = wire.decode_request_header(theirs[4:])
        body = wire.decode_request(key, version, theirs[4:], header.body_offset)
    else:
        body = wire.decode_response(key, version, theirs[4:])[1]
    assert present_only(body, schema.struct, version) == sample
