"""Translation of our body dicts into kafka-python 3.x message objects, for cross-checking bytes.

Owns :func:`kafka_python_classes` (kafka-python's request/response classes by api key and direction)
and :func:`to_kafka_python` (our dict -> their object, dropping fields their schema does not know).
"""

from __future__ import annotations

from typing import Any

from wire.schema import ArrayOf, Struct


def kafka_python_classes() -> dict[tuple[int, str], type]:
    """``{(api_key, "request"|"response"): class}`` for every JSON-driven message class of kafka-python."""
    import kafka.protocol.admin  # noqa: F401
    import kafka.protocol.consumer  # noqa: F401
    import kafka.protocol.metadata  # noqa: F401
    import kafka.protocol.producer  # noqa: F401
    from kafka.protocol.api_message import ApiMessage

    found: dict[tuple[int, str], type] = {}
    pending = list(ApiMessage.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if getattr(cls, "_class_version", None) is None and getattr(cls, "_json", None):
            found[(cls.API_KEY, cls.type)] = cls
    return found


# kafka-python renames these int32 bit fields and represents them as a set of bit positions.
# TxnOffsetCommit's generation_id became generation_id_or_member_epoch in Kafka 4.4's definitions
# (the same int32 at the same place); kafka-python's still has the old name.
_THEIR_NAMES = {
    "topic_authorized_operations": "authorized_operations",
    "cluster_authorized_operations": "authorized_operations",
    "generation_id_or_member_epoch": "generation_id",
}


def _bit_set(value: int) -> set[int]:
    return {bit for bit in range(32) if (value & 0xFFFFFFFF) >> bit & 1}


class Unrepresentable(Exception):
    """The sample has a field, present in this version, that kafka-python's schema lacks."""


def to_kafka_python(cls: type, body: dict[str, Any], struct: Struct, version: int) -> tuple[Any, dict]:
    """Build ``cls`` at ``version`` from ``body``; returns it with the body restricted to what it carries."""
    kwargs, kept = _convert_struct(cls._struct, body, struct, version)
    return cls(version=version, **kwargs), kept


def _convert_struct(their: Any, body: dict[str, Any], struct: Struct, version: int) -> tuple[dict, dict]:
    fields = {f.name: f for f in struct.fields}
    theirs = their.fields
    kwargs: dict[str, Any] = {}
    kept: dict[str, Any] = {}
    for name, value in body.items():
        ours = fields[name]
        their_name = name if name in theirs else _THEIR_NAMES.get(name, name)
        their_field = theirs.get(their_name)
        if their_field is None or not their_field.for_version_q(version):
            if ours.tag is not None and version in ours.tagged:
                continue  # a tag newer than kafka-python's definitions: leave it out of both sides
            raise Unrepresentable(f"{struct.name}.{name}")
        kept_value = value
        if isinstance(ours.type, ArrayOf) and isinstance(ours.type.item, Struct) and value is not None:
            items = []
            kept_value = []
            for item in value:
                sub_kwargs, sub_kept = _convert_struct(their_field, item, ours.type.item, version)
                items.append(their_field.data_class(**sub_kwargs))
                kept_value.append(sub_kept)
            value = items
        elif isinstance(ours.type, Struct) and value is not None:
            sub_kwargs, kept_value = _convert_struct(their_field, value, ours.type, version)
            value = their_field.data_class(**sub_kwargs)
        if getattr(their_field, "type_str", None) == "bitfield" and isinstance(value, int):
            value = _bit_set(value)
        kwargs[their_name] = value
        kept[name] = kept_value
    return kwargs, kept
