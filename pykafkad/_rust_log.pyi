"""Type stubs for ``pykafkad._rust_log``, the Rust storage core (crate ``rust_log``).

A ``PartitionLog`` owns one ``<topic>-<partition>`` directory in Kafka's on-disk
format: ``%020d.log`` segments of verbatim magic-2 record batches, sparse
``.index`` / ``.timeindex`` files, ``%020d.snapshot`` producer-state snapshots and
the ``leader-epoch-checkpoint`` file. Every method releases the GIL for its I/O and
instances may be used from several threads (an internal mutex serialises them).
"""

import os
from typing import Literal

class LogSlice:
    """A range of a segment file (whole batches), held open until this object goes: sent to a socket
    with ``os.sendfile(sock, fileno(), position, len())``, or copied with ``read()``."""

    position: int
    cold: bool

    def fileno(self) -> int: ...
    def __len__(self) -> int: ...
    def read(self) -> bytes: ...


class DelayedFetch:
    """A fetch waiting on a plain socket (``fd``), that the log may answer itself: a follower's by the
    leader's next append (``PartitionLog.answer_on_append``), a consumer's by the next high-watermark
    move (``PartitionLog.answer_on_high_watermark``)."""

    def __init__(self, fd: int) -> None: ...
    def close(self) -> tuple[int, int, bytes, int, int] | None:
        """Ends the wait: None when the log did not answer (the broker answers the fetch), else (tag,
        the records' length, the frame's bytes the socket did not take, for the broker to send, and
        the high watermark and last stable offset written into a consumer's answer, else -1).
        Nothing more is written to the socket from here once it returns."""


class LogError(Exception):
    """A log failure carrying a Kafka protocol error code.

    ``args == (code, message)``; ``str(exc)`` is a readable message.

    Codes raised: 1 OFFSET_OUT_OF_RANGE, 2 CORRUPT_MESSAGE (bad framing / CRC),
    10 MESSAGE_TOO_LARGE (a batch over ``max_message_bytes``), 18 RECORD_LIST_TOO_LARGE
    (an append larger than ``segment_bytes``), 43 UNSUPPORTED_FOR_MESSAGE_FORMAT
    (magic != 2), 40 INVALID_CONFIG, 76 UNSUPPORTED_COMPRESSION_TYPE (zstd for
    ``allow_zstd=False``), 45 OUT_OF_ORDER_SEQUENCE_NUMBER, 47 INVALID_PRODUCER_EPOCH,
    56 KAFKA_STORAGE_ERROR (I/O failure, or use after ``close()``), 87 INVALID_RECORD
    (empty request, count/offset mismatch, unparsable records, control batch from a
    client, unknown codec, several batches in an idempotent produce, inner records of
    a compressed batch with wrong offsets, keyless records on a compacted topic:
    each named in ``record_errors`` as "Compacted topic cannot accept message without
    key in topic partition T-P", with Kafka's summary as ``message``), 32 INVALID_TIMESTAMP
    (CreateTime records outside ``message_timestamp_before_max_ms`` /
    ``message_timestamp_after_max_ms`` of now, each named in ``record_errors``).
    """

    code: int
    message: str
    record_errors: list[tuple[int, str]]
    def __init__(self, code: int, message: str, record_errors: list[tuple[int, str]] = ...) -> None: ...

def set_max_open_files(n: int) -> None:
    """Cap the segment/index file descriptors all logs of the process keep open
    together (default 256; least recently used ones are closed beyond it)."""

class PartitionLog:
    """The log of one partition."""

    def __init__(
        self,
        dir: str | os.PathLike[str],
        *,
        segment_bytes: int = 1073741824,
        index_interval_bytes: int = 4096,
        segment_index_bytes: int = 10485760,
        max_message_bytes: int = 1048588,
        timestamp_type: Literal["CreateTime", "LogAppendTime"] = "CreateTime",
        message_timestamp_before_max_ms: int = ...,
        message_timestamp_after_max_ms: int = 3600000,
        clean_shutdown: bool = False,
        recovery_point: int | None = None,
        cleanup_policy: Literal["delete", "compact", "compact,delete"] = "delete",
        compression_type: Literal["producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"] = "producer",
        compression_level: int | None = None,
        retention_ms: int = 604800000,
        retention_bytes: int = -1,
        segment_ms: int = 604800000,
        delete_retention_ms: int = 86400000,
        min_cleanable_dirty_ratio: float = 0.5,
        min_compaction_lag_ms: int = 0,
        max_compaction_lag_ms: int = 9223372036854775807,
        flush_messages: int = 9223372036854775807,
        flush_ms: int = 9223372036854775807,
    ) -> None:
        """Open (creating if missing) the partition directory ``dir``.

        Loads all segments. With ``clean_shutdown=False`` every segment that may hold
        an offset at or above ``recovery_point`` (Kafka's recovery point: all offsets
        below it were fsynced; ``None`` recovers every segment) is re-validated batch
        by batch and its torn tail cut off (see ``recovery_report()``); any segment
        failing the cheap open-time sanity check is recovered the same way in either
        mode, and segments after a segment that lost data are deleted. An interrupted cleaner swap is completed (if its
        ``.log.swap`` was committed) or rolled back (``.cleaned`` leftovers removed).

        The configuration keywords are Kafka's topic settings (``cleanup.policy`` ->
        ``cleanup_policy``, ...) with Kafka's defaults; ``compression_level`` is the
        level of ``compression_type`` (gzip 1-9, lz4 1-17 accepted but lz4 always uses
        the fast compressor, zstd -131072..22; ``None`` = codec default). An unknown
        keyword raises ``TypeError``, a bad string ``ValueError``, an out-of-range value
        ``LogError(40 INVALID_CONFIG)``. Producer state is loaded from the newest snapshot and
        completed by replaying batch headers. Raises ``LogError`` (56) on I/O errors
        and ``ValueError`` for an unknown ``timestamp_type``.
        """

    @staticmethod
    def create_many(
        dirs: list[str | os.PathLike[str]],
        partition_metadata: bytes | None = None,
        **config: object,
    ) -> list[PartitionLog]:
        """The logs of a new topic's partitions, in one call without the GIL: each
        directory created, ``partition_metadata`` written into it as Kafka's
        ``partition.metadata``, every parent directory fsynced once.  A directory that
        already exists is opened and recovered whole, as the constructor does after an
        unclean shutdown.  ``config``: the constructor's keywords.  Raises ``LogError``
        (the logs opened so far are closed)."""

    @property
    def log_start_offset(self) -> int:
        """First offset in the log (base offset of the first segment)."""

    @property
    def log_end_offset(self) -> int:
        """Next offset to be assigned (the high watermark on a single broker)."""

    @property
    def closed(self) -> bool:
        """True once ``close()`` has run."""

    @property
    def dir(self) -> str:
        """The partition directory."""

    def append(
        self, records: bytes | bytearray | memoryview, leader_epoch: int = 0, now_ms: int | None = None,
        from_coordinator: bool = False,
    ) -> tuple[int, int, int, bool]:
        """Validate and append the ``records`` field of a Produce request (``from_coordinator``: a
        coordinator's own write, whose transactional batches carry no sequence).

        Returns ``(base_offset, last_offset, log_append_time, is_duplicate)``;
        ``log_append_time`` is ``now_ms`` for LogAppendTime topics, else -1. A retried
        idempotent batch matching one of the producer's last 5 batches is not written
        again: its original offsets (and append time or -1) are returned with
        ``is_duplicate=True``. ``now_ms`` defaults to the current wall clock.
        The bytes are in the OS page cache when this returns (no fsync).
        Raises ``LogError`` (see its codes); nothing is written on error.
        """

    def answer_on_append(self, fetch: DelayedFetch, tag: int, head: bytes, tail: bytes,
                         fetch_offset: int, leader_epoch: int, max_bytes: int) -> None:
        """Let the next ``append`` at ``fetch_offset`` in ``leader_epoch`` answer ``fetch``: it writes the
        frame's size, ``head``, the records' length, up to ``max_bytes`` of whole batches from there and
        ``tail`` to the fetch's socket, without waiting, then returns (more than 256 KiB: left to the
        broker).  An append elsewhere leaves it waiting; ``fetch.close()`` ends it."""

    def answer_on_high_watermark(self, fetch: DelayedFetch, tag: int, head: bytes, tail: bytes,
                                 fetch_offset: int, max_bytes: int, watermarks_at: int,
                                 read_committed: bool) -> None:
        """Let the next ``high_watermark_moved`` above ``fetch_offset`` answer ``fetch``: it writes the
        frame's size, ``head`` with the new high watermark and last stable offset at ``watermarks_at``
        (8 bytes each), the records' length, up to ``max_bytes`` of whole batches below the high
        watermark (``read_committed``: below the last stable offset, and never over an aborted
        transaction) from ``fetch_offset`` and ``tail`` to the fetch's socket, without waiting.  A
        range of more than 256 KiB is left to the broker."""

    def high_watermark_moved(self, high_watermark: int) -> None:
        """The leader's high watermark moved: consumers' fetches waiting below it are answered now."""

    def read_slice(self, offset: int, max_bytes: int, min_one: bool = True, allow_zstd: bool = True,
                   max_offset: int | None = None, min_slice: int = 0, cold: bool = False) -> bytes | LogSlice:
        """``read`` for a zero-copy send: the same whole batches, as a :class:`LogSlice` of the segment
        file when they are at least ``min_slice`` bytes, else as bytes.  ``cold`` marks a range read
        below the active segment (it may not be in the page cache)."""

    def read(self, offset: int, max_bytes: int, min_one: bool = True, allow_zstd: bool = True) -> bytes:
        """Batch-aligned bytes starting at the batch that contains ``offset``.

        Further whole batches follow while the total stays <= ``max_bytes``; a single
        read never spans two segments (as in Kafka), so read again from the next
        offset. If the first batch alone exceeds ``max_bytes`` it is returned whole
        when ``min_one`` (KIP-74), else ``b""``. ``offset == log_end_offset`` gives
        ``b""``; outside ``[log_start_offset, log_end_offset]`` raises ``LogError(1)``.
        With ``allow_zstd=False`` (Fetch < v10) a zstd first batch raises
        ``LogError(76 UNSUPPORTED_COMPRESSION_TYPE)`` and the result stops before any
        later zstd batch.
        """

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """``(offset, timestamp)`` of the first record with timestamp >= ``timestamp``.

        Looks inside compressed batches (gzip, snappy raw/xerial, lz4, zstd).
        ``timestamp`` is taken literally: the ListOffsets sentinels -1/-2/-3 are the
        caller's job (use ``log_end_offset``, ``log_start_offset``, ``max_timestamp()``).
        ``None`` if no record qualifies.
        """

    def max_timestamp(self) -> tuple[int, int] | None:
        """``(offset, timestamp)`` of the first record with the largest timestamp
        (ListOffsets MAX_TIMESTAMP, KIP-734); ``None`` for an empty log."""

    def assign_leader_epoch(self, leader_epoch: int) -> bool:
        """A new leader's epoch starts at the log end (Kafka's ``maybeAssignEpochStartOffset``);
        True if the epoch cache changed."""
        ...
    def end_offset_for_epoch(self, leader_epoch: int) -> tuple[int, int]:
        """OffsetForLeaderEpoch answer ``(epoch, end_offset)``, as Kafka's
        ``LeaderEpochFileCache.endOffsetFor``: the latest epoch gives
        ``(epoch, log_end_offset)``; an epoch between known ones gives
        ``(largest known epoch <= it, start offset of the next higher epoch)``; an epoch
        below the first known one gives ``(leader_epoch, start offset of the first
        epoch)``; an epoch above every known one, a negative one, or an empty cache
        gives ``(-1, -1)``."""

    def leader_epochs(self) -> list[tuple[int, int]]:
        """The leader epoch cache: ``[(epoch, start_offset), ...]``."""

    def flush(self) -> None:
        """fsync the segments written since the last flush, their indexes, and the
        directory after a segment roll; the recovery point moves to the log end."""

    def flush_rolled(self) -> bool:
        """fsync the rolled segments (all but the active one) written since the last
        flush, as Kafka does after a roll; the recovery point moves to the active
        segment's base offset. True if there was anything to flush."""

    @property
    def recovery_point(self) -> int:
        """Offset below which every record is fsynced: after a crash, only segments
        holding offsets at or above it need recovery. Moved only by a flush."""

    def close(self) -> None:
        """Flush, write the final time-index entry, trim index files, write the
        producer-state snapshot and epoch checkpoint. Idempotent; afterwards every
        other method raises ``LogError(56)``."""

    def segment_base_offsets(self) -> list[int]:
        """Base offsets of the segments, ascending."""

    def size_bytes(self) -> int:
        """Total size of the ``.log`` files."""

    def recovery_report(self) -> list[str]:
        """What opening the log did: recovered/truncated/deleted segments, removed
        orphan files, ignored snapshots. Empty after a clean open of a healthy log."""

    def update_config(
        self,
        *,
        segment_bytes: int = ...,
        index_interval_bytes: int = ...,
        segment_index_bytes: int = ...,
        max_message_bytes: int = ...,
        timestamp_type: Literal["CreateTime", "LogAppendTime"] = ...,
        message_timestamp_before_max_ms: int = ...,
        message_timestamp_after_max_ms: int = ...,
        cleanup_policy: Literal["delete", "compact", "compact,delete"] = ...,
        compression_type: Literal["producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"] = ...,
        compression_level: int | None = ...,
        retention_ms: int = ...,
        retention_bytes: int = ...,
        segment_ms: int = ...,
        delete_retention_ms: int = ...,
        min_cleanable_dirty_ratio: float = ...,
        min_compaction_lag_ms: int = ...,
        max_compaction_lag_ms: int = ...,
        flush_messages: int = ...,
        flush_ms: int = ...,
    ) -> None:
        """Apply any subset of the constructor's settings live (same errors; nothing
        changes on error). Segment sizing applies to segments created afterwards."""

    def config(self) -> dict[str, int | float | str | None]:
        """The settings in force, keyed like the constructor's keywords."""

    def enforce_retention(self, now_ms: int) -> tuple[int, int]:
        """Retention pass: ``(segments_deleted, bytes_freed)``.

        Rolls the active segment first if it is older than ``segment_ms``. Then, from the
        oldest segment, deletes while the segment lies wholly below ``log_start_offset``
        (any policy), or (policies with ``delete``) while the log stays >=
        ``retention_bytes`` without it, or while its largest timestamp is more than
        ``retention_ms`` before ``now_ms``. As in Kafka, a non-empty active segment that
        qualifies is rolled and deleted too; an empty active segment never is. The log
        start offset moves to the next segment's base and is persisted."""

    def maybe_roll(self, now_ms: int) -> bool:
        """Roll the active segment if ``now_ms`` is more than ``segment_ms`` past its
        first batch's timestamp (appends do this on their own, using the batch
        timestamp, as Kafka). True if a segment was rolled."""

    def append_marker(self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int,
                      leader_epoch: int) -> tuple[int, int]:
        """Writes a COMMIT or ABORT transaction marker for the producer.  Returns (marker offset, first
        offset of the transaction it ended, or -1 when none was open here); LogError
        INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED for a stale marker."""

    def last_stable_offset(self, hw: int) -> int:
        """The last stable offset for high watermark ``hw``: below every open transaction and every
        ended one whose marker is not below ``hw`` yet."""

    def aborted_transactions(self, start: int, upper: int) -> list[tuple[int, int]]:
        """Aborted transactions overlapping ``[start, upper)`` as (producer id, first offset)."""

    def producer_states(self) -> list[tuple[int, int, int, int, int, int]]:
        """Every producer as (id, epoch, last sequence, last timestamp, coordinator epoch, first
        offset of its open transaction or -1), by id."""

    def producer_state_of(self, producer_id: int) -> tuple[int, int] | None:
        """(epoch, first offset of its open transaction or -1), or None for an unknown producer."""

    def open_transactions(self) -> list[tuple[int, int]]:
        """Open transactions as (producer id, first offset), oldest first."""

    def append_as_follower(self, records: bytes | bytearray | memoryview) -> tuple[int, int]:
        """A follower's append of the leader's batches, unchanged: offsets, leader epochs and producer
        state are kept.  Returns (first offset, last offset); LogError OFFSET_OUT_OF_RANGE when they
        start below the log end offset, CORRUPT_MESSAGE for a bad batch."""
        ...
    def truncate_to(self, offset: int) -> int:
        """Remove the batches at and after ``offset`` (a batch containing it goes whole), their leader
        epochs and producer state; returns the new log end offset."""
        ...
    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Empty the log and start it (log start and end) at ``offset``."""
        ...
    def delete_records(self, offset: int) -> int:
        """DeleteRecords: raise the log start offset to ``offset`` (-1 = high
        watermark = log end) and delete segments wholly below it; returns the new low
        watermark. ``offset`` above the log end raises ``LogError(1)``; below the current
        start it changes nothing. Persisted in ``log-start-offset-checkpoint``."""

    def clean(self, now_ms: int, dedupe_buffer_bytes: int | None = None) -> dict[str, int] | None:
        """One compaction pass (policies with ``compact``); ``None`` when not due.

        ``dedupe_buffer_bytes`` bounds the pass's key -> offset map (each key costs its length plus
        64 bytes); where it fills, the pass ends and the next one goes on from there.

        Due when the dirty ratio >= ``min_cleanable_dirty_ratio``, a dirty segment's
        first record is older than ``max_compaction_lag_ms``, or a retained tombstone's
        delete horizon has passed. Cleans closed segments with records older than
        ``min_compaction_lag_ms``; keeps the newest record per key with offsets
        preserved; tombstones live ``delete_retention_ms`` after the pass that first
        saw them; producers' last batches are kept (possibly empty). Runs without the
        GIL and holds the log's lock only to plan and to swap (crash-safely), so
        produce and fetch continue meanwhile. Returns ``{"segments", "bytes_before",
        "bytes_after", "records_removed"}``."""

    def remove_expired_producers(self, now_ms: int, expiration_ms: int) -> int:
        """Forget producers whose last batch or marker is ``expiration_ms`` or more before ``now_ms``
        and that have no open transaction; how many (``producer.id.expiration.ms``)."""

    def flush_if_due(self, now_ms: int) -> bool:
        """fsync if ``flush_ms`` has passed since the last flush and something was
        appended since; True if it flushed. (``flush_messages`` is applied on append.)"""

    def open_file_count(self) -> int:
        """How many of this log's files currently hold a descriptor (segment and
        index files are opened lazily and shared through a process-wide LRU cache)."""

# --- record batch codec (crate module ``batch_codec``) -------------------------------

_Header = tuple[str, bytes | None]

def encode_batch(
    records: list[tuple[bytes | None, bytes | None]] | list[tuple[bytes | None, bytes | None, list[_Header]]],
    timestamp_ms: int,
    *,
    base_offset: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
    control: bool = False,
    compression: Literal["none", "gzip", "snappy", "lz4", "zstd"] = "none",
) -> bytes:
    """Encode one Kafka magic-2 record batch.

    ``records`` are ``(key, value)`` or ``(key, value, headers)`` tuples (lists work
    too); keys/values are bytes-like or ``None``, header keys ``str`` (or bytes).
    Every record gets ``timestamp_ms`` (timestampDelta 0) and offsetDelta = its index;
    the header has baseOffset ``base_offset``, partitionLeaderEpoch -1, CreateTime,
    base/max timestamp ``timestamp_ms``, lastOffsetDelta/recordsCount from the list,
    and the CRC-32C. Compression: gzip (level 6), snappy (snappy-java/xerial framing,
    32 KiB blocks, as the Java producer writes), lz4 (lz4 frame, 64 KiB independent
    blocks), zstd (level 3). The GIL is released while encoding.
    Raises ``ValueError`` for an empty ``records``, an unknown ``compression`` or
    sizes beyond the int32 fields, ``TypeError`` for wrongly typed fields.
    """

def decode_batches(
    data: bytes | bytearray | memoryview,
) -> list[tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]]:
    """Every record of the (concatenated) magic-2 batches in ``data``.

    Returns ``(offset, timestamp, key, value, headers)`` per record, where
    ``offset = baseOffset + offsetDelta`` and ``timestamp = baseTimestamp +
    timestampDelta`` (``maxTimestamp`` for LogAppendTime batches). Header keys are
    decoded as UTF-8 (invalid sequences replaced). Any codec (gzip, snappy raw or
    xerial, lz4, zstd). A trailing partial batch (as a fetch may return) is ignored;
    control batches are included (tell them by ``decode_batch_headers`` or the key).
    The GIL is released while decoding. Malformed data (bad length, magic, CRC,
    record framing, record count, undecompressable payload, more than 256 MiB
    decompressed per batch) raises ``LogError`` with code 2 (CORRUPT_MESSAGE).
    """

def decode_batch_headers(data: bytes | bytearray | memoryview) -> list[dict[str, int | bool]]:
    """Header fields of each whole batch in ``data`` (cheap: no CRC check, records
    not read; a trailing partial batch is ignored).

    Keys: ``base_offset``, ``last_offset``, ``partition_leader_epoch``,
    ``producer_id``, ``producer_epoch``, ``base_sequence``, ``is_transactional``,
    ``is_control``, ``compression`` (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd),
    ``is_log_append_time``, ``base_timestamp``, ``max_timestamp``, ``record_count``,
    ``size`` (bytes of the batch). Bad framing or magic raises ``LogError`` (2).
    """

def schema_id_problems(
    data: bytes | bytearray | memoryview,
    key_ids: list[int] | None = None,
    value_ids: list[int] | None = None,
) -> list[tuple[int, bool, int | None]]:
    """The keys (with ``key_ids``) and values (with ``value_ids``) of the batches in
    ``data`` that are not framed as Confluent's serializers frame them (magic byte 0,
    then a big-endian 4-byte schema id) with one of the given ids.

    Returns ``(record index, is_key, schema id or None when not framed)`` per refused
    field, in record order; null keys and values pass; control batches are skipped.
    The GIL is released while checking. Malformed batches raise ``LogError`` (2).
    """

# --- Kafka's default partitioner (crate module ``partitioner``) ------------------------

def partition_of_key(key: bytes, partitions: int) -> int:
    """The partition Kafka's default partitioner gives a record with this key among ``partitions``
    (``toPositive(murmur2(key)) % partitions``); ValueError for fewer than 1 partition."""
