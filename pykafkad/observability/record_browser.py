"""Reading records for people: a page of a partition's records from an offset or a time, decoded
as text, JSON or hex with their headers; and searches ("was this message there?") by key, header
or value substring over an offset range, run in the background with their progress.

Only replicas hosted by this broker are read (decoded by the Rust codec, off the event loop);
for others the reader is told which broker leads the partition.
"""

from __future__ import annotations

import itertools
import json
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import trio

from pykafkad._rust_log import LogError, decode_batch_headers, decode_batches
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker
    from pykafkad.replica.partition import FetchedData, Partition
    from pykafkad.schema_registry.registry_state import RegistryState

log = logging.getLogger(__name__)

READ_BYTES = 1 << 20
SEARCH_CHUNK_BYTES = 4 << 20
MAX_MATCHES = 100
# Searches scanning at once; more are refused until one ends (each reads and decodes whole chunks).
MAX_RUNNING_SEARCHES = 2
KEPT_SEARCHES = 50
# "schema": decoded through the schema registry (the registry's wire format), beside the raw bytes.
FORMATS = ("string", "json", "hex", "schema")


# The message browser's reads, in a thread of their own (see Searches.limiter).
_BROWSE_LIMITER = trio.CapacityLimiter(1)


class BrowseError(Exception):
    """Why records cannot be shown (the message says what to do)."""


def render(data: bytes | None, fmt: str) -> str | None:
    if data is None:
        return None
    if fmt == "hex":
        return data.hex(" ")
    text = data.decode("utf-8", "replace")
    if fmt == "json":
        try:
            return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            return text
    return text


def _replica(broker: Broker, topic: str, partition: int) -> Partition:
    info = broker.topic(topic)
    if info is None or not 0 <= partition < len(info.partitions):
        raise BrowseError(f"{topic}-{partition} does not exist")
    replica = broker.replicas.get(topic, partition)
    if replica is None:
        leader = info.partitions[partition].leader
        raise BrowseError(f"{topic}-{partition} has no replica on this broker; open the console of broker {leader}")
    return replica


def _records(data: bytes, aborted: list[tuple[int, int]] = ()) -> list[
        tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]]:
    """The committed data records of ``data``, as a read_committed consumer sees them: control
    batches (transaction markers) and the batches of ``aborted`` transactions ((producer id, first
    offset), from the log) left out."""
    headers = decode_batch_headers(data)
    if not aborted and not any(h["is_control"] for h in headers):
        return decode_batches(data)
    starts = sorted(aborted, key=lambda a: a[1])
    open_aborts: set[int] = set()
    out = []
    for header, batch in _split(data, headers):
        pid = int(header["producer_id"])
        while starts and starts[0][1] <= int(header["base_offset"]):
            open_aborts.add(starts.pop(0)[0])
        if header["is_control"]:
            open_aborts.discard(pid)  # this producer's transaction ended here
        elif not (header["is_transactional"] and pid in open_aborts):
            out += decode_batches(batch)
    return out


def _split(data: bytes, headers: list[dict[str, Any]]) -> list[tuple[dict[str, Any], bytes]]:
    out, pos = [], 0
    for header in headers:
        size = int(header["size"])
        out.append((header, data[pos:pos + size]))
        pos += size
    return out


async def read_page(broker: Broker, topic: str, partition: int, offset: int | None, timestamp: int | None,
                    count: int, fmt: str) -> dict[str, Any]:
    """Up to ``count`` records from ``offset`` (or the first at or after ``timestamp``, or the start)."""
    replica = _replica(broker, topic, partition)
    state = None
    if fmt == "schema":
        # Imported here: the schema libraries (fastavro, protobuf, jsonschema) load only for a
        # console that decodes through the registry, not at every broker start.
        from pykafkad.observability import registry_decoding
        try:
            state = await registry_decoding.registry_state(broker)
        except registry_decoding.RegistryUnavailable as e:
            raise BrowseError(str(e)) from None
    log = replica.log
    # Only what a read_committed consumer may see: below the last stable offset, aborted batches out.
    end = log.last_stable_offset(replica.high_watermark)
    if timestamp is not None:
        found = log.offset_for_timestamp(timestamp)
        offset = found[0] if found is not None else end
    start = max(log.log_start_offset, offset if offset is not None else log.log_start_offset)
    found: list[tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]] = []
    position = start
    while len(found) < count and position < end:
        fetched = await trio.to_thread.run_sync(_read_committed, replica, position, READ_BYTES,
                                                limiter=_BROWSE_LIMITER)
        if fetched.error != ErrorCode.NONE:
            raise BrowseError(f"cannot read {topic}-{partition} at {position}: {ErrorCode(fetched.error).name}")
        data = fetched.records
        decoded = await trio.to_thread.run_sync(_records, data, fetched.aborted_transactions or [],
                                                limiter=_BROWSE_LIMITER)
        if not data:
            break
        headers = decode_batch_headers(data)
        if not headers:
            break
        found += [r for r in decoded if start <= r[0] < end][:count - len(found)]
        position = max(position + 1, int(headers[-1]["last_offset"]) + 1) if headers else end
    if state is not None:
        records = await _through_registry(broker, state, found)
    else:
        records = [{"offset": o, "timestamp": ts, "key": render(key, fmt), "value": render(value, fmt),
                    "headers": [(k, render(v, fmt)) for k, v in hdrs]} for o, ts, key, value, hdrs in found]
    return {"topic": topic, "partition": partition, "start": start, "log_start_offset": log.log_start_offset,
            "high_watermark": end, "format": fmt, "records": records,
            "next_offset": records[-1]["offset"] + 1 if records else start}


async def _through_registry(broker: Broker, state: RegistryState, found: list[tuple[
        int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]]) -> list[dict[str, Any]]:
    """The records with keys and values decoded through the registry; an id it does not know yet
    makes it read the registry's topic to its end once first."""
    from pykafkad.observability import registry_decoding

    ids = registry_decoding.wanted_ids([p for r in found for p in (r[2], r[3])])
    if any(i not in state.by_id for i in ids):
        try:
            state = await registry_decoding.registry_state(broker, ids)
        except registry_decoding.RegistryUnavailable as e:
            raise BrowseError(str(e)) from None

    schemas = registry_decoding.page_schemas(state, ids)

    def decode_all() -> list[dict[str, Any]]:
        out = []
        for o, ts, key, value, hdrs in found:
            k, v = registry_decoding.decode(schemas, key), registry_decoding.decode(schemas, value)
            out.append({"offset": o, "timestamp": ts, "key": k.text, "key_schema": k.schema, "key_raw": k.raw,
                        "value": v.text, "value_schema": v.schema, "value_raw": v.raw,
                        "headers": [(name, render(data, "string")) for name, data in hdrs]})
        return out

    return await trio.to_thread.run_sync(decode_all, limiter=_BROWSE_LIMITER)


@dataclass
class Search:
    """One search's progress and what it found so far."""

    id: int
    topic: str
    partition: int
    start: int
    end: int
    key: str | None
    value: str | None
    header: str | None
    scanned_to: int = 0
    matches: list[dict[str, Any]] = field(default_factory=list)
    done: bool = False
    error: str | None = None
    started: float = field(default_factory=time.time)
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)

    def matches_record(self, key: bytes | None, value: bytes | None, headers: list[tuple[str, bytes | None]]) -> bool:
        def has(data: bytes | None, needle: str | None) -> bool:
            return needle is None or (data is not None and needle.encode() in data)
        header_ok = self.header is None or any(self.header in k or (v is not None and self.header.encode() in v)
                                               for k, v in headers)
        return has(key, self.key) and has(value, self.value) and header_ok

    def progress(self) -> dict[str, Any]:
        total = max(1, self.end - self.start)
        return {"id": self.id, "topic": self.topic, "partition": self.partition, "start": self.start, "end": self.end,
                "scanned_to": self.scanned_to, "percent": round(100 * (self.scanned_to - self.start) / total, 1),
                "done": self.done, "error": self.error, "matches": self.matches}


class Searches:
    """The searches of this broker's console, run one task each."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.searches: dict[int, Search] = {}
        self._ids = itertools.count(1)
        self._nursery: trio.Nursery | None = None
        # The console's reads and decoding in threads of their own, so a search never takes the
        # worker threads that produce, fetch and ZooKeeper calls use.
        self.limiter = trio.CapacityLimiter(1)

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            task_status.started()
            await trio.sleep_forever()

    def start(self, topic: str, partition: int, start: int | None, end: int | None, key: str | None,
              value: str | None, header: str | None) -> Search:
        replica = _replica(self.broker, topic, partition)
        if sum(1 for s in self.searches.values() if not s.done) >= MAX_RUNNING_SEARCHES:
            raise BrowseError(f"{MAX_RUNNING_SEARCHES} searches are running already; wait for one to finish")
        stable = replica.log.last_stable_offset(replica.high_watermark)
        first = max(replica.log.log_start_offset, start if start is not None else 0)
        last = min(stable, end if end is not None else stable)
        search = Search(next(self._ids), topic, partition, first, max(first, last), key or None, value or None,
                        header or None, scanned_to=first)
        self.searches[search.id] = search
        while len(self.searches) > KEPT_SEARCHES:
            self.searches.pop(min(self.searches)).scope.cancel()
        assert self._nursery is not None, "the console is not running"
        self._nursery.start_soon(self._scan, search, replica)
        return search

    async def _scan(self, search: Search, replica: Partition) -> None:
        position = search.start
        with search.scope:
            try:
                while position < search.end and len(search.matches) < MAX_MATCHES:
                    found, next_position = await trio.to_thread.run_sync(
                        _scan_chunk, search, replica, position, limiter=self.limiter)
                    search.matches.extend(found[:MAX_MATCHES - len(search.matches)])
                    position = next_position
                    search.scanned_to = min(position, search.end)
            except (LogError, BrowseError) as e:
                search.error = f"cannot read at {position}: {e}"
            except Exception as e:  # noqa: BLE001 - a search must never take the broker down
                log.exception("console search %d failed", search.id)
                search.error = f"failed: {e!r}"
        search.done = True


def _read_committed(replica: Partition, position: int, max_bytes: int) -> FetchedData:
    """In a worker thread: what a read_committed consumer would be sent from ``position``."""
    return replica.read_records(position, max_bytes, min_one=True, allow_zstd=True, read_committed=True)


def _scan_chunk(search: Search, replica: Partition, position: int) -> tuple[list[dict[str, Any]], int]:
    """In a worker thread: read one chunk from ``position``, decode it and match its records; the
    matches and where the next chunk starts."""
    fetched = _read_committed(replica, position, SEARCH_CHUNK_BYTES)
    if fetched.error != ErrorCode.NONE:
        raise BrowseError(ErrorCode(fetched.error).name)
    data = fetched.records
    if not data:
        return [], search.end
    aborted = fetched.aborted_transactions or []
    found = [{"offset": o, "timestamp": ts, "key": render(key, "string"), "value": render(value, "string")}
             for o, ts, key, value, hdrs in _records(data, aborted)
             if search.start <= o < search.end and search.matches_record(key, value, hdrs)]
    headers = decode_batch_headers(data)
    return found, (max(position + 1, int(headers[-1]["last_offset"]) + 1) if headers else search.end)
