"""``POST /v3/clusters/{cluster_id}/topics/{topic}/records``: records as a stream of JSON objects
in one request (one object, or many written one after another on a connection kept open), each
answered, in order, by one JSON object on its own line (``\\r\\n``) as soon as Kafka has it.

A record's key and value each name their type: BINARY (base64), STRING, JSON, or a schema format
(AVRO, JSONSCHEMA, PROTOBUF) with its ``schema``, registered under ``subject`` (by default
``<topic>-key`` / ``<topic>-value``).  Without a type, the subject's schema is used: the one
``schema_id`` or ``schema_version`` names, else its latest.  A record that cannot be written gets
its own error object; the records after it go on."""

from __future__ import annotations

import base64
import binascii
import datetime
import functools
import json
import math
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import trio
from starlette.requests import Request
from starlette.responses import Response

from pykafkad.rest_proxy import rest_errors
from pykafkad.rest_proxy.api_v3 import V3Api
from pykafkad.rest_proxy.embedded_format import json_bytes, parse_json
from pykafkad.rest_proxy.record_producer import OutgoingRecord, RecordProducer
from pykafkad.rest_proxy.rest_metrics import RECORDS_PRODUCED
from pykafkad.rest_proxy.schema_formats import MAGIC, RegistryLink, writer_for

PLAIN_TYPES = ("BINARY", "STRING", "JSON")
SCHEMA_TYPES = {"AVRO": "AVRO", "JSONSCHEMA": "JSON", "PROTOBUF": "PROTOBUF"}
REGISTRY_NAMES = {v: k for k, v in SCHEMA_TYPES.items()}
SCHEMA_FIELDS = ("subject", "subject_name_strategy", "schema_id", "schema_version", "schema")


Writer = Callable[[bytes], Awaitable[None]]


class RecordStream(Response):
    """A response written chunk by chunk, by ``write_all(write)``, while the request's body is still
    being read: unlike Starlette's StreamingResponse, it does not read the request's messages to
    watch for a disconnect, which would take the body's chunks away from the stream being answered."""

    def __init__(self, write_all: Callable[[Writer], Awaitable[None]]) -> None:
        super().__init__(status_code=200, media_type="application/json")
        # No length: the answer is sent chunked, as long as the stream it answers.
        self.raw_headers = [(k, v) for k, v in self.raw_headers if k != b"content-length"]
        self.write_all = write_all

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})

        async def write(chunk: bytes) -> None:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})

        await self.write_all(write)
        await send({"type": "http.response.body", "body": b"", "more_body": False})


# Handovers of a stream's records to the producer that may await Kafka's answer at once.
STREAM_IN_FLIGHT = 2
# Records of a stream parsed and waiting for their handover, beyond which reading pauses.
STREAM_INBOX_RECORDS = 10_000


class _Signal:
    """Wakes one waiting task; a ``set`` while nobody waits wakes the next ``wait`` at once."""

    def __init__(self) -> None:
        self._event = trio.Event()

    def set(self) -> None:
        self._event.set()

    async def wait(self) -> None:
        await self._event.wait()
        self._event = trio.Event()


@dataclass
class Pending:
    """One chunk's records on their way: its answers once ``done``."""
    answers: list[dict[str, Any]] = field(default_factory=list)
    done: trio.Event = field(default_factory=trio.Event)


def _line(answer: dict[str, Any]) -> bytes:
    return json_bytes(answer) + b"\r\n"


@functools.lru_cache(maxsize=1024)
def _iso(ms: int | None) -> str | None:
    # Cached: the records of a chunk mostly share their millisecond.
    if ms is None or ms < 0:
        return None
    moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _timestamp_ms(text: Any) -> int | None:
    if text is None:
        return None
    if not isinstance(text, str):
        raise rest_errors.bad_request("timestamp must be an ISO-8601 string")
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise rest_errors.bad_request(f"timestamp {text!r} is not ISO-8601") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return int(moment.timestamp() * 1000)


class RecordWriter:
    """One stream's keys and values, encoded as their types say."""

    def __init__(self, topic: str, link: RegistryLink) -> None:
        self.topic = topic
        self.link = link

    def encode_plain(self, field: str, spec: Any) -> tuple[bytes | None, dict[str, Any] | None] | None:
        """``encode`` of a key or value that needs no schema, without waiting; None when it needs one."""
        if spec is None:
            return None, None
        if not isinstance(spec, dict):
            raise rest_errors.bad_request(f"{field} must be an object with type and data")
        kind = spec.get("type")
        kind = kind.upper() if isinstance(kind, str) else kind
        if kind not in PLAIN_TYPES:
            return None
        if len(spec) > 2:
            given = [f for f in SCHEMA_FIELDS if spec.get(f) is not None]
            if given:
                raise rest_errors.bad_request(f"{field}: {', '.join(given)} cannot be given with type {kind}")
        raw = _plain(field, kind, spec.get("data"))
        return raw, {"type": kind, "size": -1 if raw is None else len(raw)}

    async def encode(self, field: str, spec: Any) -> tuple[bytes | None, dict[str, Any] | None]:
        """The bytes of a key or value, and its part of the answer (None when the record had none)."""
        plain = self.encode_plain(field, spec)
        if plain is not None:
            return plain
        kind = spec.get("type")
        data = spec.get("data")
        kind = kind.upper() if isinstance(kind, str) else kind
        if kind is not None and kind not in SCHEMA_TYPES:
            raise rest_errors.bad_request(f"{field}.type must be one of BINARY, STRING, JSON, AVRO, JSONSCHEMA, "
                                          f"PROTOBUF (got {kind!r})")
        strategy = spec.get("subject_name_strategy")
        if strategy not in (None, "TOPIC_NAME"):
            raise rest_errors.bad_request(f"{field}.subject_name_strategy {strategy!r} is not supported; give "
                                          "subject or use TOPIC_NAME")
        subject = spec.get("subject") or f"{self.topic}-{field}"
        schema_id, version, registry_type, text = await self._schema(field, kind, subject, spec)
        raw = None
        if data is not None:
            write = await trio.to_thread.run_sync(writer_for, registry_type, text)
            try:
                raw = MAGIC + struct.pack(">i", schema_id) + write(data)
            except ValueError as e:
                raise rest_errors.bad_request(f"{field} {e}") from None
        return raw, {"type": REGISTRY_NAMES[registry_type], "subject": subject, "schema_id": schema_id,
                     "schema_version": version, "size": -1 if raw is None else len(raw)}

    async def _schema(self, field: str, kind: str | None, subject: str, spec: dict[str, Any]
                      ) -> tuple[int, int, str, str]:
        if kind is not None:
            schema = spec.get("schema")
            if schema is None or spec.get("schema_id") is not None or spec.get("schema_version") is not None:
                raise rest_errors.bad_request(f"{field}: type {kind} takes its schema as schema (its text); "
                                              "leave type out to use schema_id or schema_version")
            if not isinstance(schema, str):
                schema = json.dumps(schema)
            registry_type = SCHEMA_TYPES[kind]
            schema_id = await trio.to_thread.run_sync(self.link.register, subject, registry_type, schema)
            version = await trio.to_thread.run_sync(self.link.lookup, subject, registry_type, schema)
            return schema_id, version, registry_type, schema
        if spec.get("schema_id") is not None:
            schema_id = spec["schema_id"]
            if not isinstance(schema_id, int) or isinstance(schema_id, bool):
                raise rest_errors.bad_request(f"{field}.schema_id must be an integer")
            registry_type, text = await trio.to_thread.run_sync(self.link.schema, schema_id)
            version = await trio.to_thread.run_sync(self.link.lookup, subject, registry_type, text)
            return schema_id, version, registry_type, text
        wanted = spec.get("schema_version", "latest")
        schema_id, version, registry_type, text = await trio.to_thread.run_sync(self.link.version, subject, wanted)
        return schema_id, version, registry_type, text


def _plain(field: str, kind: str, data: Any) -> bytes | None:
    if data is None:
        return None
    if kind == "BINARY":
        if not isinstance(data, str):
            raise rest_errors.bad_request(f"{field}: data={json.dumps(data)} is not a base64 string.")
        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise rest_errors.bad_request(f"{field}: data={json.dumps(data)} is not a valid base64 string.") from None
    if kind == "STRING":
        if not isinstance(data, str):
            raise rest_errors.bad_request(f"{field}: data of type STRING must be a JSON string")
        return data.encode()
    return json_bytes(data)


def _parse_lines(lines: bytes) -> list[Any]:
    """The JSON document on each non-blank line: parsed as one array, one call for them all."""
    rows = [line for line in lines.split(b"\n") if line.strip()]
    if not rows:
        return []
    found = parse_json(b"[" + b",".join(rows) + b"]")
    if len(found) != len(rows):  # a line held more than one document (or none): not one per line
        raise json.JSONDecodeError("not one document per line", "", 0)
    return found


async def _objects(request: Request, max_bytes: int) -> AsyncIterator[list[Any]]:
    """The JSON objects of the body, a chunk's worth at a time, as they arrive; an object that is
    not JSON ends the stream with a RestError (400).  A body of one object per line (as clients
    stream it) is read line by line with orjson; any other layout, by the general parser."""
    decoder = json.JSONDecoder()
    by_lines = True
    lines_left = b""
    buffer = ""
    pending = b""
    async for chunk in request.stream():
        if by_lines:
            lines_left += chunk
            cut = lines_left.rfind(b"\n")
            found = []
            if cut >= 0:
                lines, lines_left = lines_left[:cut], lines_left[cut + 1:]
                try:
                    found = _parse_lines(lines)
                except (UnicodeDecodeError, json.JSONDecodeError):
                    # Not one object per line: the general parser takes over, from these lines on.
                    by_lines = False
                    chunk, lines_left = lines + b"\n" + lines_left, b""
            if by_lines:
                if lines_left.rstrip().endswith(b"}"):
                    # Perhaps a whole object, its newline not sent yet: a client writing records
                    # over time waits for each one's answer.
                    try:
                        found.append(parse_json(lines_left))
                        lines_left = b""
                    except (UnicodeDecodeError, json.JSONDecodeError):
                        pass
                if len(lines_left) > max_bytes:
                    raise rest_errors.too_large("rest.max.request.bytes", max_bytes)
                if found:
                    yield found
                continue
        pending += chunk
        try:
            text = pending.decode()
            pending = b""
        except UnicodeDecodeError:
            continue  # a character split between chunks
        buffer += text
        found = []
        while True:
            buffer = buffer.lstrip()
            if not buffer:
                break
            try:
                value, end = decoder.raw_decode(buffer)
            except json.JSONDecodeError:
                break  # incomplete so far: wait for more
            found.append(value)
            buffer = buffer[end:]
        if len(buffer) > max_bytes:
            raise rest_errors.too_large("rest.max.request.bytes", max_bytes)
        if found:
            yield found
    found = []
    if lines_left.strip():
        try:
            found.append(parse_json(lines_left))
        except (UnicodeDecodeError, json.JSONDecodeError):
            buffer += lines_left.decode(errors="replace")
    if pending:
        raise rest_errors.bad_request("Error processing message: the body ends inside a UTF-8 character")
    rest = buffer.strip()
    while rest:
        try:
            value, end = decoder.raw_decode(rest)
        except json.JSONDecodeError as e:
            if found:
                yield found  # the objects before the broken one are produced, as they would be mid-stream
            raise rest_errors.bad_request(f"Error processing message: {e}") from None
        found.append(value)
        rest = rest[end:].lstrip()
    if found:
        yield found


class V3Records:
    def __init__(self, v3: V3Api, link: RegistryLink, max_request_bytes: int) -> None:
        self.v3 = v3
        self.link = link
        self.max_request_bytes = max_request_bytes

    @property
    def producer(self) -> RecordProducer:
        return self.v3.clients.current().producer

    async def produce(self, request: Request) -> Response:
        """---
        post:
          summary: Records, one JSON object each, streamed; each answered on its own line
          responses: {"200": {description: one answer per record}}
        """
        urls = await self.v3.urls(request)
        kind = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
        if kind not in ("application/json", ""):
            raise rest_errors.unsupported_media_type(kind, "application/json")
        topic = request.path_params["topic"]
        partitions = await self.v3.clients.current().partitions_for_produce(topic)
        writer = RecordWriter(topic, self.link)

        async def write_all(write: Writer) -> None:
            # Records are read and parsed as they come, and handed to the producer in order: all
            # that arrived meanwhile together, once fewer than STREAM_IN_FLIGHT handovers await
            # Kafka's answer, so a fast stream becomes few large Produce requests and a slow one
            # is answered record by record.  Each handover is answered, in order, once done.
            # Neither reading nor handing over ever waits for the answers to be sent: a client
            # that writes its whole body before it reads (curl, httpx) would otherwise deadlock
            # with the proxy once the answers fill the socket's buffers.  Reading pauses while
            # STREAM_INBOX_RECORDS records wait for their handover.
            send, receive = trio.open_memory_channel[Pending](math.inf)
            inbox: list[Any] = []
            arrived, taken = _Signal(), _Signal()
            ended: list[rest_errors.RestError | None] = []
            in_flight = trio.Semaphore(STREAM_IN_FLIGHT)

            async def read() -> None:
                error = None
                try:
                    async for objects in _objects(request, self.max_request_bytes):
                        inbox.extend(objects)
                        arrived.set()
                        while len(inbox) >= STREAM_INBOX_RECORDS:
                            await taken.wait()
                except rest_errors.RestError as e:
                    error = e
                finally:
                    ended.append(error)
                    arrived.set()

            async def answered(pending: Pending) -> None:
                await pending.done.wait()
                in_flight.release()

            async def hand_over(nursery: trio.Nursery) -> None:
                seen = False
                async with send:
                    while True:
                        while not inbox and not ended:
                            await arrived.wait()
                        if not inbox:
                            break
                        await in_flight.acquire()
                        objects = inbox[:]
                        inbox.clear()
                        taken.set()
                        seen = True
                        pending = Pending()
                        await send.send(pending)
                        nursery.start_soon(answered, pending)
                        await self._send(urls.cluster_id, topic, partitions, writer, objects, pending, nursery)
                    error = ended[0]
                    if error is None and not seen:
                        error = rest_errors.payload("Request body is empty. Data is required.")
                    if error is not None:
                        pending = Pending([{"error_code": error.error_code, "message": error.message}])
                        pending.done.set()
                        await send.send(pending)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(read)
                nursery.start_soon(hand_over, nursery)
                async with receive:
                    async for pending in receive:
                        await pending.done.wait()
                        if pending.answers:
                            await write(b"".join(_line(a) for a in pending.answers))

        return RecordStream(write_all)

    async def _send(self, cluster_id: str, topic: str, partitions: set[int], writer: RecordWriter,
                    objects: list[Any], pending: Pending, nursery: trio.Nursery) -> None:
        """Each object encoded and handed to the producer, in order; ``pending`` gets their answers
        (by a task of ``nursery``) once Kafka has them."""
        answers: list[dict[str, Any] | None] = []
        outgoing: list[OutgoingRecord] = []
        parts: list[tuple[int, dict[str, Any] | None, dict[str, Any] | None]] = []
        for record in objects:
            try:
                if not isinstance(record, dict):
                    raise rest_errors.bad_request("a record must be a JSON object")
                partition = record.get("partition_id")
                if partition is not None and (not isinstance(partition, int) or partition not in partitions):
                    raise rest_errors.RestError(404, 40402, f"Partition not found: {topic}-{partition}.")
                key_spec, value_spec = record.get("key"), record.get("value")
                key, key_part = writer.encode_plain("key", key_spec) or await writer.encode("key", key_spec)
                value, value_part = (writer.encode_plain("value", value_spec)
                                     or await writer.encode("value", value_spec))
                headers = _headers(record.get("headers"))
                timestamp = _timestamp_ms(record.get("timestamp"))
            except rest_errors.RestError as e:
                answers.append({"error_code": e.error_code, "message": e.message})
                continue
            parts.append((len(answers), key_part, value_part))
            answers.append(None)
            outgoing.append(OutgoingRecord(partition, key, value, headers, timestamp))
        delivery = await self.producer.send(topic, outgoing)

        async def answer() -> None:
            outcomes = await delivery.outcomes()
            for (at, key_part, value_part), outcome in zip(parts, outcomes, strict=True):
                if outcome.error is not None:
                    answers[at] = {"error_code": outcome.error.rest_code, "message": str(outcome.error)}
                    continue
                done: dict[str, Any] = {"error_code": 200, "cluster_id": cluster_id, "topic_name": topic,
                                        "partition_id": outcome.partition, "offset": outcome.offset,
                                        "timestamp": _iso(outcome.timestamp)}
                if key_part is not None:
                    done["key"] = key_part
                if value_part is not None:
                    done["value"] = value_part
                answers[at] = done
            RECORDS_PRODUCED.labels(topic).inc(sum(1 for o in outcomes if o.error is None))
            pending.answers = [a for a in answers if a is not None]
            pending.done.set()

        nursery.start_soon(answer)


def _headers(given: Any) -> list[tuple[str, bytes | None]] | None:
    if given is None:
        return None
    if not isinstance(given, list):
        raise rest_errors.bad_request("headers must be a list of {\"name\", \"value\"}")
    headers = []
    for i, header in enumerate(given):
        if not isinstance(header, dict) or not isinstance(header.get("name"), str):
            raise rest_errors.bad_request(f"headers[{i}] must be {{\"name\": string, \"value\": base64}}")
        value = header.get("value")
        headers.append((header["name"], None if value is None else _plain(f"headers[{i}]", "BINARY", value)))
    return headers
