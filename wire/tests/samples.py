"""Sample message bodies for tests, generated from the schemas.

Owns :class:`SampleMaker` (deterministic, non-trivial values for every field present in a version) and
:func:`present_only` (a decoded body cut down to the fields a version carries, for comparisons).
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from wire.schema import ArrayOf, Field, FieldType, Struct

_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


class SampleMaker:
    """Builds a body with a value for every field present in ``version``.

    With ``nulls`` true, nullable fields are null; otherwise every field gets a non-default value
    (so tagged fields are sent).  Struct arrays get two elements, primitive arrays three.
    """

    def __init__(self, seed: int, nulls: bool = False, ascii_only: bool = False) -> None:
        self.rng = random.Random(seed)
        self.nulls = nulls
        self.ascii_only = ascii_only

    def struct(self, struct: Struct, version: int) -> dict[str, Any]:
        return {f.name: self.field(f, version) for f in struct.fields if version in f.versions}

    def field(self, f: Field, version: int) -> Any:
        if self.nulls and version in f.nullable:
            return None
        return self.value(f.type, version)

    def value(self, ftype: FieldType, version: int) -> Any:
        if isinstance(ftype, ArrayOf):
            count = 2 if isinstance(ftype.item, Struct) else 3
            return [self.value(ftype.item, version) for _ in range(count)]
        if isinstance(ftype, Struct):
            return self.struct(ftype, version)
        rng = self.rng
        if ftype in _INT_RANGES:
            low, high = _INT_RANGES[ftype]
            value = 0
            while value == 0:
                value = rng.randint(low, high)
            return value
        if ftype == "float64":
            return rng.uniform(-1e6, 1e6)
        if ftype == "bool":
            return True
        if ftype == "string":
            text = f"s{rng.randint(0, 99999)}"
            return text if self.ascii_only else text + "-\u00e9\u4e2d"
        if ftype == "bytes":
            return rng.randbytes(rng.randint(1, 12))
        if ftype == "records":
            return rng.randbytes(rng.randint(10, 40))
        if ftype == "uuid":
            return uuid.UUID(int=rng.getrandbits(128))
        raise ValueError(ftype)


def present_only(value: Any, ftype: FieldType, version: int) -> Any:
    """Cut a decoded value down to the fields present in ``version`` (recursively)."""
    if value is None:
        return None
    if isinstance(ftype, ArrayOf):
        return [present_only(v, ftype.item, version) for v in value]
    if isinstance(ftype, Struct):
        return {
            f.name: present_only(value[f.name], f.type, version)
            for f in ftype.fields
            if version in f.versions
        }
    if isinstance(value, memoryview):
        return bytes(value)
    return value


def absent_fields_at_default(value: Any, ftype: FieldType, version: int) -> list[str]:
    """Paths of fields absent from ``version`` whose decoded value is not the schema default."""
    wrong: list[str] = []
    if value is None:
        return wrong
    if isinstance(ftype, ArrayOf):
        for item in value:
            wrong += absent_fields_at_default(item, ftype.item, version)
    elif isinstance(ftype, Struct):
        for f in ftype.fields:
            if f.name not in value:
                wrong.append(f"{ftype.name}.{f.name} (missing)")
            elif version not in f.versions:
                if value[f.name] != f.default_value():
                    wrong.append(f"{ftype.name}.{f.name}")
            else:
                wrong += absent_fields_at_default(value[f.name], f.type, version)
    return wrong
