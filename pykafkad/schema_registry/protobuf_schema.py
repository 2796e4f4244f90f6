"""Protobuf schemas as the registry holds them: a ``.proto`` file compiled by protoc (grpcio-tools'
bundled compiler, with Google's well-known types on its import path), or the base64
``FileDescriptorProto`` that confluent-kafka's Python serializer sends.  Either way the registry
keeps the file's descriptor, to check compatibility and to answer ``format=serialized``.

protoc runs as a subprocess (a tenth of a second), so its messages never reach the broker's own
output and a crash of the compiler cannot take the broker down.
"""

from __future__ import annotations

import base64
import binascii
import functools
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2
from google.protobuf.message import DecodeError

from pykafkad.schema_registry.errors import RegistryError, invalid_schema

FILE_NAME = "schema.proto"
PROTOC_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ProtobufSchema:
    """A compiled Protobuf file: ``text`` is what is stored and answered, ``parsed`` its descriptor."""

    text: str
    parsed: descriptor_pb2.FileDescriptorProto
    # The files it imports through references, and theirs, each after what it imports.
    imports: tuple[descriptor_pb2.FileDescriptorProto, ...] = ()

    @property
    def schema_type(self) -> str:
        return "PROTOBUF"

    def serialized(self) -> str:
        """The descriptor as base64, Confluent's ``format=serialized``."""
        return base64.standard_b64encode(self.parsed.SerializeToString()).decode("ascii")


def _from_base64(text: str) -> descriptor_pb2.FileDescriptorProto | None:
    stripped = text.strip()
    if not stripped or any(c.isspace() for c in stripped) or "{" in stripped or ";" in stripped:
        return None
    try:
        raw = base64.b64decode(stripped.encode("ascii"), validate=True)
        found = descriptor_pb2.FileDescriptorProto.FromString(raw)
    except (binascii.Error, UnicodeEncodeError, DecodeError, ValueError):
        return None
    return found if found.name else None


def _include_path() -> str:
    import grpc_tools

    return str(Path(grpc_tools.__file__).parent / "_proto")


@functools.lru_cache(maxsize=256)
def _compile(text: str, imports: tuple[bytes, ...] = ()) -> descriptor_pb2.FileDescriptorProto:
    """``text`` compiled by protoc; ``imports`` (serialized FileDescriptorProtos named as the file
    imports them) satisfy its imports besides Google's well-known types."""
    with tempfile.TemporaryDirectory(prefix="pykafkad-proto-") as tmp:
        source, out, given = Path(tmp) / FILE_NAME, Path(tmp) / "out.pb", Path(tmp) / "imports.pb"
        source.write_text(text)
        extra = []
        if imports:
            found_set = descriptor_pb2.FileDescriptorSet()
            for raw in imports:
                found_set.file.add().MergeFromString(raw)
            given.write_bytes(found_set.SerializeToString())
            extra = [f"--descriptor_set_in={given}"]
        try:
            done = subprocess.run(
                [sys.executable, "-m", "grpc_tools.protoc", f"-I{tmp}", f"-I{_include_path()}", *extra,
                 f"--descriptor_set_out={out}", FILE_NAME],
                capture_output=True, text=True, timeout=PROTOC_TIMEOUT_S, check=False,
                env={**os.environ, "PYTHONWARNINGS": "ignore"})
        except subprocess.TimeoutExpired:
            raise invalid_schema(f"protoc did not finish within {PROTOC_TIMEOUT_S:.0f} s") from None
        if done.returncode != 0:
            lines = [line.replace(f"{tmp}/", "") for line in done.stderr.splitlines() if line.strip()]
            raise invalid_schema("; ".join(lines[:5]) or f"protoc failed ({done.returncode})")
        found = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    return found.file[0]


def _imports(deps: Any) -> list[descriptor_pb2.FileDescriptorProto]:
    """The referenced files, compiled, each after those it imports, named as they are imported."""
    found: list[descriptor_pb2.FileDescriptorProto] = []
    for name, _, text, inner in deps:
        below = _imports(inner)
        found += [f for f in below if f.name not in {g.name for g in found}]
        try:
            file = parse(text, False, inner).parsed
        except RegistryError as e:
            raise invalid_schema(f"reference {name} does not compile: {e.message}") from None
        named = descriptor_pb2.FileDescriptorProto()
        named.CopyFrom(file)
        named.name = name
        if named.name not in {g.name for g in found}:
            found.append(named)
    return found


def parse(text: str, normalize: bool = False, deps: Any = ()) -> ProtobufSchema:
    """The schema ``text`` holds, or 42201 with protoc's message; its imports other than Google's
    well-known types are the schemas its references name (``deps``)."""
    if not isinstance(text, str) or not text.strip():
        raise invalid_schema("an empty Protobuf schema")
    imports = _imports(deps)
    descriptor = _from_base64(text)
    if descriptor is None:
        descriptor = _compile(text, tuple(f.SerializeToString(deterministic=True) for f in imports))
    given = {f.name for f in imports}
    for dependency in descriptor.dependency:
        if not dependency.startswith("google/protobuf/") and dependency not in given:
            raise invalid_schema(f"imports {dependency}, which no reference names: add a reference "
                                 f"{{\"name\": \"{dependency}\", \"subject\": ..., \"version\": ...}}")
    if normalize:
        return ProtobufSchema(base64.standard_b64encode(descriptor.SerializeToString(deterministic=True))
                              .decode("ascii"), descriptor, tuple(imports))
    return ProtobufSchema(text, descriptor, tuple(imports))
