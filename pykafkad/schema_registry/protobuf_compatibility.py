"""Protobuf compatibility, by Confluent's rules: messages are matched by full name and fields by
number; adding or removing a field or a message type is compatible, as is adding or removing an
enum value.  What breaks a reader of the other schema's bytes is a reason, with Confluent's error
type: a message removed (MESSAGE_REMOVED), a field whose kind (scalar, message, enum) or wire type
changed (FIELD_KIND_CHANGED, FIELD_SCALAR_KIND_CHANGED, FIELD_NAMED_TYPE_CHANGED), a repeated field
made singular or the reverse (FIELD_LABEL_CHANGED), a proto2 required field added or removed
(REQUIRED_FIELD_ADDED, REQUIRED_FIELD_REMOVED: both, in either direction, as Confluent's registry
counts them, though only the first breaks the reader), fields moved into a oneof
(MULTIPLE_FIELDS_MOVED_TO_ONEOF, FIELD_MOVED_TO_EXISTING_ONEOF), and a changed package or syntax
(PACKAGE_CHANGED, SYNTAX_VERSION_CHANGED)."""

from __future__ import annotations

from google.protobuf import descriptor_pb2

F = descriptor_pb2.FieldDescriptorProto
# Scalar types that read each other's encoding (the same wire type and compatible values).
_WIRE_GROUPS = [
    {F.TYPE_INT32, F.TYPE_UINT32, F.TYPE_INT64, F.TYPE_UINT64, F.TYPE_BOOL},
    {F.TYPE_SINT32, F.TYPE_SINT64},
    {F.TYPE_FIXED32, F.TYPE_SFIXED32},
    {F.TYPE_FIXED64, F.TYPE_SFIXED64},
    {F.TYPE_STRING, F.TYPE_BYTES},
]
_NAMED = {F.TYPE_MESSAGE, F.TYPE_GROUP, F.TYPE_ENUM}


def _messages(file: descriptor_pb2.FileDescriptorProto) -> dict[str, descriptor_pb2.DescriptorProto]:
    found: dict[str, descriptor_pb2.DescriptorProto] = {}

    def walk(prefix: str, messages: list[descriptor_pb2.DescriptorProto]) -> None:
        for message in messages:
            name = f"{prefix}.{message.name}"
            if message.options.map_entry:
                continue
            found[name] = message
            walk(name, list(message.nested_type))

    walk(f".{file.package}" if file.package else "", list(file.message_type))
    return found


def _kind(field: descriptor_pb2.FieldDescriptorProto) -> str:
    if field.type == F.TYPE_ENUM:
        return "enum"
    if field.type in (F.TYPE_MESSAGE, F.TYPE_GROUP):
        return "message"
    return "scalar"


def _same_wire(a: int, b: int) -> bool:
    return a == b or any(a in group and b in group for group in _WIRE_GROUPS)


def _reason(kind: str, path: str, description: str) -> str:
    return f"{{errorType:'{kind}', description:'{description}', path:'{path}'}}"


def _oneof_of(message: descriptor_pb2.DescriptorProto, field: descriptor_pb2.FieldDescriptorProto) -> str | None:
    if not field.HasField("oneof_index") or field.proto3_optional:
        return None
    return message.oneof_decl[field.oneof_index].name


def _fields(reader: descriptor_pb2.DescriptorProto, writer: descriptor_pb2.DescriptorProto, path: str) -> list[str]:
    reasons: list[str] = []
    written = {f.number: f for f in writer.field}
    read = {f.number: f for f in reader.field}
    for number, field in read.items():
        old = written.get(number)
        where = f"{path}.{field.name}"
        if old is None:
            if field.label == F.LABEL_REQUIRED:
                reasons.append(_reason("REQUIRED_FIELD_ADDED", where, f"required field {field.name} added"))
            continue
        if _kind(field) != _kind(old):
            reasons.append(_reason("FIELD_KIND_CHANGED", where, f"field {number} is now a {_kind(field)}"))
        elif _kind(field) == "scalar" and not _same_wire(field.type, old.type):
            reasons.append(_reason("FIELD_SCALAR_KIND_CHANGED", where, f"field {number} changed its scalar type"))
        elif field.type in _NAMED and field.type_name != old.type_name:
            reasons.append(_reason("FIELD_NAMED_TYPE_CHANGED", where,
                                   f"field {number} changed from {old.type_name} to {field.type_name}"))
        if (field.label == F.LABEL_REPEATED) != (old.label == F.LABEL_REPEATED):
            reasons.append(_reason("FIELD_LABEL_CHANGED", where, f"field {number} changed between repeated and not"))
    for number, old in written.items():
        if number not in read and old.label == F.LABEL_REQUIRED:
            reasons.append(_reason("REQUIRED_FIELD_REMOVED", f"{path}.{old.name}",
                                   f"required field {old.name} removed"))
    moved: dict[str, list[int]] = {}
    for number, field in read.items():
        new_oneof, old = _oneof_of(reader, field), written.get(number)
        if new_oneof is not None and old is not None and _oneof_of(writer, old) is None:
            moved.setdefault(new_oneof, []).append(number)
    existing = {_oneof_of(writer, f) for f in writer.field} - {None}
    for oneof, numbers in moved.items():
        if oneof in existing:
            reasons.append(_reason("FIELD_MOVED_TO_EXISTING_ONEOF", f"{path}.{oneof}", f"fields {numbers} moved"))
        elif len(numbers) > 1:
            reasons.append(_reason("MULTIPLE_FIELDS_MOVED_TO_ONEOF", f"{path}.{oneof}", f"fields {numbers} moved"))
    return reasons


def reader_problems(reader: descriptor_pb2.FileDescriptorProto,
                    writer: descriptor_pb2.FileDescriptorProto) -> list[str]:
    """Why a reader with ``reader`` may misread bytes written with ``writer`` (empty: it will not)."""
    reasons: list[str] = []
    if reader.package != writer.package:
        reasons.append(_reason("PACKAGE_CHANGED", "#/", f"package {writer.package!r} became {reader.package!r}"))
    if (reader.syntax or "proto2") != (writer.syntax or "proto2"):
        reasons.append(_reason("SYNTAX_VERSION_CHANGED", "#/", "the syntax changed"))
    read = _messages(reader)
    for name, message in _messages(writer).items():
        if name not in read:
            reasons.append(_reason("MESSAGE_REMOVED", name, f"message {name} removed"))
        else:
            reasons += _fields(read[name], message, name)
    return reasons
