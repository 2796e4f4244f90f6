"""The replica manager: every partition replica this broker holds, and the reads and writes on them.

Handlers call it to append (with the acks wait), fetch (with the long-poll), look up offsets and
delete records; they never touch a log or the cluster metadata's partition states themselves.
The partition states come in from the controller's decisions (``apply``, Kafka's LeaderAndIsr) and
the logs from the log manager.

Appends and reads run in Rust with the GIL released.  Those that may be slow run on a worker
thread, so they do not hold every other connection: an append to a topic that recompresses or
fsyncs per append (flush.messages), or of more than ``INLINE_APPEND_BYTES``; a read from a segment
other than the active one (maybe not in the page cache).  The rest, appends to the page cache
and reads of the newest data, run on the Trio thread: a thread hop per request costs more than
they do (it took a third off single-partition acks=all throughput).  The partitions' state
(roles, high watermarks, waiters) is only touched on the Trio thread, around those calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import trio

from pykafkad._rust_log import LogError
from pykafkad.config import LONG_MAX, BrokerConfig
from pykafkad.errors import KafkaError
from pykafkad.log.manager import LogManager
from pykafkad.metadata.cluster_metadata import PartitionInfo, TopicInfo
from pykafkad.replica.partition import AppendInfo, Partition, check_leader_epoch
from pykafkad.replica.watchers import Watchers, parked_on
from pykafkad.topic_config import topic_int
from wire.error_codes import ErrorCode

NOT_HOSTED = "This server does not host this topic-partition."
INLINE_APPEND_BYTES = 1 << 20


@dataclass(frozen=True)
class ProduceEntry:
    """One partition's batch of a Produce request."""

    topic: str
    index: int
    records: bytes | memoryview


@dataclass(frozen=True)
class FetchEntry:
    """One partition of a Fetch request."""

    topic: str
    index: int
    fetch_offset: int
    current_leader_epoch: int
    max_bytes: int


@dataclass(frozen=True)
class FetchedData:
    """One partition's answer to a fetch: an error, or its watermarks and record bytes."""

    error: ErrorCode | int
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    records: bytes = b""


AppendOutcome = AppendInfo | KafkaError | LogError


class ReplicaManager:
    """The partitions of this broker, keyed by (topic, partition)."""

    def __init__(self, config: BrokerConfig, logs: LogManager,
                 topic_configs: Callable[[str], dict[str, str] | None]) -> None:
        self.config = config
        self.logs = logs
        self._topic_configs = topic_configs
        self._partitions: dict[tuple[str, int], Partition] = {}
        # Woken at shutdown, so long-polls answer with what they have.
        self._shutdown = Watchers()
        self.shutting_down = False

    # -- partition states ----------------------------------------------------------------------

    def apply(self, topic: TopicInfo, changed: list[PartitionInfo] | None = None) -> None:
        """Take the controller's state of ``topic``'s ``changed`` partitions (all when None): Kafka's
        LeaderAndIsr.  The metadata cache calls it for each partition it shows or changes."""
        for state in topic.partitions if changed is None else changed:
            key = (topic.name, state.index)
            partition = self._partitions.get(key)
            if partition is None:
                plog = self.logs.get(topic.name, state.index)
                if plog is None:
                    continue
                partition = Partition(topic.name, state.index, plog, self.config.node_id)
                self._partitions[key] = partition
            if state.leader == self.config.node_id:
                partition.make_leader(state.leader_epoch, state.replicas, state.isr)

    def remove_topic(self, topic: TopicInfo) -> None:
        """Stop serving a deleted topic's partitions; waiters on them answer now."""
        for state in topic.partitions:
            partition = self._partitions.pop((topic.name, state.index), None)
            if partition is not None:
                partition.leader_id = -1
                partition.watchers.wake_all()

    def get(self, topic: str, index: int) -> Partition | None:
        return self._partitions.get((topic, index))

    def partitions(self) -> list[Partition]:
        return list(self._partitions.values())

    def leader(self, topic: str, index: int, current_leader_epoch: int = -1) -> Partition:
        """The partition if this broker leads it at the epoch the client knows, else KafkaError."""
        partition = self._partitions.get((topic, index))
        if partition is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, NOT_HOSTED)
        partition.check_leader(current_leader_epoch)
        return partition

    def min_insync_replicas(self, partition: Partition) -> int:
        """The ISR size acks=all needs: ``min.insync.replicas``, but never more than the partition has
        replicas (Kafka's effective min ISR), so a topic of replication factor 1 takes acks=all."""
        configured = topic_int(self._topic_configs(partition.topic) or {}, self.config, "min.insync.replicas")
        return min(configured, max(1, len(partition.replicas)))

    def shutdown(self) -> None:
        """Answer every long-poll now and any later one at once."""
        self.shutting_down = True
        self._shutdown.wake_all()

    # -- produce -------------------------------------------------------------------------------

    async def append_records(self, entries: Sequence[ProduceEntry], required_acks: int, timeout_ms: int,
                             now_ms: int) -> list[AppendOutcome]:
        """Append each entry's batch to its leader replica; with acks=all, wait for the ISR.

        Each outcome is the AppendInfo, or the error the partition answers with (KafkaError, or
        the log's LogError with its per-record errors).
        """
        outcomes: list[AppendOutcome | None] = [None] * len(entries)
        accepted: list[tuple[int, Partition, ProduceEntry]] = []
        for i, entry in enumerate(entries):
            try:
                partition = self.leader(entry.topic, entry.index)
                if required_acks == -1:
                    partition.check_min_isr(self.min_insync_replicas(partition))
            except KafkaError as e:
                outcomes[i] = e
                continue
            accepted.append((i, partition, entry))
        if accepted:
            batches = [(p.log, e.records, p.leader_epoch) for _, p, e in accepted]
            if self._append_may_block(accepted):
                results = await trio.to_thread.run_sync(_append_all, batches, now_ms)
            else:
                results = _append_all(batches, now_ms)
            for (i, partition, _), result in zip(accepted, results, strict=True):
                outcomes[i] = result if isinstance(result, LogError) else partition.appended(result)
        if required_acks == -1:
            await self._wait_for_acks(accepted, outcomes, timeout_ms)
        return outcomes  # type: ignore[return-value]

    async def _wait_for_acks(self, accepted: list[tuple[int, Partition, ProduceEntry]],
                             outcomes: list[AppendOutcome | None], timeout_ms: int) -> None:
        pending = [(i, p) for i, p, _ in accepted if isinstance(outcomes[i], AppendInfo)
                   and p.high_watermark <= outcomes[i].last_offset]  # type: ignore[union-attr]
        if not pending:
            return

        async def wait_one(i: int, partition: Partition) -> None:
            info = outcomes[i]
            assert isinstance(info, AppendInfo)
            code = await partition.wait_for_acks(info.last_offset + 1,
                                                 self.min_insync_replicas(partition), timeout_ms / 1000)
            if code != ErrorCode.NONE:
                outcomes[i] = KafkaError(code)

        async with trio.open_nursery() as nursery:
            for i, partition in pending:
                nursery.start_soon(wait_one, i, partition)

    # -- fetch ---------------------------------------------------------------------------------

    async def fetch_messages(self, entries: Sequence[FetchEntry], max_bytes: int, min_bytes: int,
                             max_wait_ms: int, allow_zstd: bool) -> list[FetchedData]:
        """A consumer fetch: read every entry, and long-poll until ``min_bytes`` are there, a partition
        errors, or ``max_wait_ms`` passes; woken by the appends and high-watermark moves of the
        partitions asked for only."""
        deadline = trio.current_time() + max(0, max_wait_ms) / 1000
        watched = [self._shutdown] + [p.watchers for e in entries
                                      if (p := self._partitions.get((e.topic, e.index))) is not None]
        while True:
            with parked_on(watched) as waiter:
                targets = [self._fetch_target(e) for e in entries]
                if _read_may_block(targets):
                    results, total = await trio.to_thread.run_sync(_read_all, targets, max_bytes, allow_zstd)
                else:
                    results, total = _read_all(targets, max_bytes, allow_zstd)
                left = deadline - trio.current_time()
                errored = any(r.error != ErrorCode.NONE for r in results)
                if total >= min_bytes or errored or left <= 0 or self.shutting_down:
                    return results
                await waiter.wait(left)

    def _fetch_target(self, entry: FetchEntry) -> tuple[Partition, FetchEntry] | FetchedData:
        partition = self._partitions.get((entry.topic, entry.index))
        if partition is None:
            return FetchedData(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if not partition.is_leader:
            return FetchedData(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        error = check_leader_epoch(entry.current_leader_epoch, partition.leader_epoch)
        if error is not None:
            return FetchedData(error)
        return partition, entry

    # -- which log work leaves the event loop -------------------------------------------------------

    def _append_may_block(self, accepted: list[tuple[int, Partition, ProduceEntry]]) -> bool:
        size = 0
        for _, _, entry in accepted:
            settings = self.logs.topic_settings.get(entry.topic)
            if (settings is None or settings["compression_type"] != "producer"
                    or settings["flush_messages"] != LONG_MAX):
                return True
            size += len(entry.records)
        return size > INLINE_APPEND_BYTES


def _append_all(batches: list[tuple[object, bytes | memoryview, int]],
                now_ms: int) -> list[tuple[int, int, int, bool] | LogError]:
    """Each batch appended to its log, or the LogError it failed with (on the Trio thread or a worker)."""
    results: list[tuple[int, int, int, bool] | LogError] = []
    for plog, records, epoch in batches:
        try:
            results.append(plog.append(records, leader_epoch=epoch, now_ms=now_ms))  # type: ignore[attr-defined]
        except LogError as e:
            results.append(e)
    return results


def _read_may_block(targets: list[tuple[Partition, FetchEntry] | FetchedData]) -> bool:
    """Whether a read reaches below the active segments, where the page cache may not hold it."""
    return any(not isinstance(t, FetchedData) and t[1].fetch_offset < t[0].log.active_segment_base_offset
               for t in targets)


def _read_all(targets: list[tuple[Partition, FetchEntry] | FetchedData], max_bytes: int,
              allow_zstd: bool) -> tuple[list[FetchedData], int]:
    """One pass over the fetch targets within the response's ``max_bytes`` (on the Trio thread or a
    worker): a target's high watermark is read once, so its records and reported watermark agree."""
    remaining, total = max_bytes, 0
    results = []
    for target in targets:
        if isinstance(target, FetchedData):
            results.append(target)
            continue
        partition, entry = target
        limit = max(0, min(entry.max_bytes, remaining))
        high_watermark = partition.high_watermark
        try:
            data = partition.log.read(entry.fetch_offset, limit, min_one=(total == 0), allow_zstd=allow_zstd,
                                      max_offset=high_watermark)
        except LogError as e:
            results.append(FetchedData(e.code))
            continue
        total += len(data)
        remaining -= len(data)
        results.append(FetchedData(ErrorCode.NONE, high_watermark, high_watermark,
                                   partition.log.log_start_offset, data))
    return results, total
