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

from google.protobuf import descriptor_pb2
from google.protobuf.message import DecodeError

from pykafkad.schema_registry.errors import invalid_schema

FILE_NAME = "schema.proto"
PROTOC_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ProtobufSchema:
    """A compiled Protobuf file: ``text`` is what is stored and answered, ``parsed`` its descriptor."""

    text: str
    parsed: descriptor_pb2.FileDescriptorProto

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
def _compile(text: str) -> descriptor_pb2.FileDescriptorProto:
    with tempfile.TemporaryDirectory(prefix="pykafkad-proto-") as tmp:
        source, out = Path(tmp) / FILE_NAME, Path(tmp) / "out.pb"
        source.write_text(text)
        try:
            done = subprocess.run(
                [sys.executable, "-m", "grpc_tools.protoc", f"-I{tmp}", f"-I{_include_path()}",
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


def parse(text: str, normalize: bool = False) -> ProtobufSchema:
    """The schema ``text`` holds, or 42201 with protoc's message."""
    if not isinstance(text, str) or not text.strip():
        raise invalid_schema("an empty Protobuf schema")
    descriptor = _from_base64(text)
    if descriptor is None:
        descriptor = _compile(text)
    for dependency in descriptor.dependency:
        if not dependency.startswith("google/protobuf/"):
            raise invalid_schema(f"imports {dependency}: schema references are not supported by this registry yet")
    if normalize:
        return ProtobufSchema(base64.standard_b64encode(descriptor.SerializeToString(deterministic=True))
                              .decode("ascii"), descriptor)
    return ProtobufSchema(text, descriptor)
