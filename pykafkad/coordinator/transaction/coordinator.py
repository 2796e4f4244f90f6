"""The transaction coordinator: this broker coordinates the transactional ids of the
``__transaction_state`` partitions it leads, in transaction version 1 (librdkafka, and Kafka's Java
client when the cluster finalizes no version 2) and 2 (KIP-890 part 2: partitions added by their
leaders, an epoch bump at every end), each request served in the version its API version says.

Like the group coordinator it follows leadership of its topic's partitions: when this broker starts
leading one it replays the partition on a worker thread (COORDINATOR_LOAD_IN_PROGRESS meanwhile) and
finishes every transaction found committing or aborting; when it stops, requests for those ids get
NOT_COORDINATOR.  Each change of an id is written to its partition and takes effect, and is
answered, once the write is replicated; while it is under way other requests for the id get
CONCURRENT_TRANSACTIONS (``transaction_metadata``).  The coordinator epoch is the leader epoch of
the id's partition, so markers from a coordinator that lost the partition are refused.  A
transaction left open past its timeout is aborted at a bumped epoch, which fences its producer; an
id left unused for ``transactional.id.expiration.ms`` is removed.
Everything here runs on the Trio thread; ids' states are touched only between awaits.
"""

from __future__ import annotations

import logging
import os
import time
from typing import TYPE_CHECKING

import trio

from pykafkad._rust_log import LogError
from pykafkad.coordinator.coordinator_partitions import CoordinatorPartitions
from pykafkad.coordinator.group.coordinator import coordinator_error
from pykafkad.coordinator.internal_topic_log import encode_batch, read_partition
from pykafkad.coordinator.transaction.transaction_log import (
    TRANSACTION_TOPIC,
    TRANSACTION_TOPIC_CONFIGS,
    TransactionLogError,
    decode_key,
    decode_value,
    key,
    partition_for,
    value,
)
from pykafkad.coordinator.transaction.transaction_markers import TransactionMarkers
from pykafkad.coordinator.transaction.transaction_metadata import (
    COMPLETE,
    EXHAUSTED_EPOCH,
    PREPARING,
    TransactionError,
    TransactionMetadata,
    TransactionState,
)
from pykafkad.errors import KafkaError
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad._rust_log import PartitionLog
    from pykafkad.config import BrokerConfig
    from pykafkad.controller import Controller
    from pykafkad.metadata.cluster_metadata import ClusterMetadata
    from pykafkad.producer_ids import ProducerIdAllocator
    from pykafkad.replica.partition import Partition
    from pykafkad.replica.replica_manager import ReplicaManager

log = logging.getLogger(__name__)

COMPLETE_RETRY_S = 0.5
# Test-only: while the file this names exists, a transaction's Complete state waits after its markers
# are written, so a test can make that one write fail (a full disk) without racing it.
HOLD_COMPLETION_ENV = "PYKAFKAD_TEST_HOLD_TXN_COMPLETION"
# Test-only: while the file this names exists, an ended transaction's markers wait to be written, so
# a test sees what a client does between EndTxn's answer and its last stable offset moving on (which,
# with replicas on a loaded cluster, can take a while).
HOLD_MARKERS_ENV = "PYKAFKAD_TEST_HOLD_TXN_MARKERS"


async def _held(env: str) -> None:
    hold = os.environ.get(env)
    while hold and os.path.exists(hold):
        await trio.sleep(0.05)


def now_ms() -> int:
    return int(time.time() * 1000)


def read_states(plog: PartitionLog) -> dict[str, TransactionMetadata | None]:
    """Replay one ``__transaction_state`` partition: each id's last state (None: removed).  Touches
    nothing but the log, so it runs on a worker thread."""
    states: dict[str, TransactionMetadata | None] = {}
    for rec in read_partition(plog):
        if rec.key is None or rec.control:
            continue
        try:
            txn_id = decode_key(rec.key)
            states[txn_id] = (None if rec.value is None
                              else TransactionMetadata.from_stored(txn_id, decode_value(rec.value)))
        except TransactionLogError as e:
            log.error("skipping a %s record that does not decode: %s", TRANSACTION_TOPIC, e)
    return states


class TransactionCoordinator:
    """This broker's coordinator for the transactional ids of the partitions it leads."""

    def __init__(self, config: BrokerConfig, metadata: ClusterMetadata, replicas: ReplicaManager,
                 controller: Controller, producer_ids: ProducerIdAllocator) -> None:
        self.config = config
        self.metadata = metadata
        self.replicas = replicas
        self.controller = controller
        self.producer_ids = producer_ids
        self.markers = TransactionMarkers(config, metadata, replicas)
        self._txns: dict[str, TransactionMetadata] = {}
        # The partitions whose ids this broker coordinates, with the coordinator epoch of each.
        self.partitions = CoordinatorPartitions(TRANSACTION_TOPIC, read_states, self._loaded, self._dropped)
        self._nursery: trio.Nursery | None = None

    # -- the internal topic ------------------------------------------------------------------------

    @property
    def num_partitions(self) -> int:
        topic = self.metadata.topics.get(TRANSACTION_TOPIC)
        if topic is not None:
            return len(topic.partitions)
        return self.config["transaction.state.log.num.partitions"]

    def partition_for(self, transactional_id: str) -> int:
        return partition_for(transactional_id, self.num_partitions)

    async def create_topic(self) -> None:
        """Create ``__transaction_state`` on first use (from FindCoordinator), as Kafka does."""
        if self.metadata.topics.get(TRANSACTION_TOPIC) is None:
            c = self.config
            configs: dict[str, str | None] = {
                **TRANSACTION_TOPIC_CONFIGS, "min.insync.replicas": str(c["transaction.state.log.min.isr"]),
                "segment.bytes": str(c["transaction.state.log.segment.bytes"])}
            await self.controller.create_topic(TRANSACTION_TOPIC, c["transaction.state.log.num.partitions"],
                                               c["transaction.state.log.replication.factor"], configs,
                                               internal=True)

    # -- leadership ----------------------------------------------------------------------------------

    def on_leadership(self, partition: Partition, leads: bool) -> None:
        self.partitions.on_leadership(partition, leads)

    def _loaded(self, partition: Partition, states: dict[str, TransactionMetadata | None], epoch: int) -> None:
        """A ``__transaction_state`` partition this broker now leads was replayed: its ids' states,
        and every commit or abort found under way is finished."""
        for txn_id, meta in states.items():
            if meta is None:
                self._txns.pop(txn_id, None)
            else:
                self._txns[txn_id] = meta
        loaded = [m for m in states.values() if m is not None]
        if loaded:
            log.info("loaded %d transactional id(s) from %s-%d", len(loaded), TRANSACTION_TOPIC, partition.index)
        for meta in loaded:
            if meta.state in PREPARING:
                self._start_completion(meta, epoch)

    def _dropped(self, index: int) -> None:
        for txn_id in [t for t in self._txns if self.partition_for(t) == index]:
            del self._txns[txn_id]

    async def _check(self, transactional_id: str) -> ErrorCode | None:
        """None when this broker coordinates ``transactional_id`` now, else the error to answer."""
        if TRANSACTION_TOPIC not in self.metadata.topics:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        return await self.partitions.check(self.partition_for(transactional_id))

    # -- writing states --------------------------------------------------------------------------

    async def _write(self, meta: TransactionMetadata, transit: TransactionMetadata | None,
                     tombstone: bool = False) -> ErrorCode:
        """Write ``transit`` (or the id's removal) and wait until it is replicated; then it becomes
        the id's state, or, on failure, nothing changes.  Kafka's error mapping."""
        index = self.partition_for(meta.transactional_id)
        epoch = self.partitions.epoch(index)
        partition = self.replicas.get(TRANSACTION_TOPIC, index)
        code = ErrorCode.NONE
        if epoch is None or partition is None:
            code = ErrorCode.NOT_COORDINATOR
        else:
            record = None if tombstone or transit is None else value(transit.stored())
            min_isr = self.replicas.min_insync_replicas(partition)
            try:
                now = now_ms()
                info = partition.append_as_leader(encode_batch([(key(meta.transactional_id), record)], now),
                                                  now, min_isr)
                timeout_s = max(meta.timeout_ms, 1000) / 1000
                code = await partition.wait_for_acks(info.last_offset + 1, min_isr, timeout_s)
            except KafkaError as e:
                code = ErrorCode(e.code)
            except LogError as e:
                log.error("writing %s to %s-%d failed: %s", meta.transactional_id, TRANSACTION_TOPIC, index, e)
                code = ErrorCode(e.code)
            code = coordinator_error(code)
            if code == ErrorCode.NONE and self.partitions.epoch(index) != epoch:
                code = ErrorCode.NOT_COORDINATOR  # the partition moved away (and maybe back) meanwhile
        if transit is not None:
            if code == ErrorCode.NONE:
                meta.complete(transit)
            else:
                meta.abandon()
        if code != ErrorCode.NONE:
            log.warning("transactional id %s: state not written: %s", meta.transactional_id, code.name)
        return code

    # -- the APIs ----------------------------------------------------------------------------------

    async def _existing(self, transactional_id: str) -> TransactionMetadata | ErrorCode:
        """The state of an id a producer already initialised here, or the error to answer."""
        if not transactional_id:
            return ErrorCode.INVALID_REQUEST
        error = await self._check(transactional_id)
        if error is not None:
            return error
        meta = self._txns.get(transactional_id)
        return ErrorCode.INVALID_PRODUCER_ID_MAPPING if meta is None else meta

    async def init_producer_id(self, transactional_id: str, timeout_ms: int,
                               expected: tuple[int, int] | None) -> tuple[ErrorCode, int, int]:
        """InitProducerId with a transactional id: (error, producer id, epoch)."""
        if not 0 < timeout_ms <= self.config["transaction.max.timeout.ms"]:
            return ErrorCode.INVALID_TRANSACTION_TIMEOUT, -1, -1
        error = await self._check(transactional_id)
        if error is not None:
            return error, -1, -1
        meta = self._txns.get(transactional_id)
        if meta is None:
            pid = await self.producer_ids.next_id()
            meta = self._txns.setdefault(transactional_id,
                                         TransactionMetadata(transactional_id, pid, -1, timeout_ms))
        spare = await self.producer_ids.next_id() if meta.producer_epoch >= EXHAUSTED_EPOCH else -1
        try:
            transit = meta.prepare_init(timeout_ms, now_ms(), expected, lambda: spare)
            if transit is None:
                # An open transaction: abort it at a new epoch; the producer retries meanwhile.
                fence = meta.prepare_fence(now_ms(), self.metadata.features.transaction_version)
                code = await self._write(meta, fence)
                if code == ErrorCode.NONE:
                    self._start_completion(meta)
                    code = ErrorCode.CONCURRENT_TRANSACTIONS
                return code, -1, -1
        except TransactionError as e:
            return e.code, -1, -1
        code = await self._write(meta, transit)
        if code != ErrorCode.NONE:
            return code, -1, -1
        log.info("transactional id %s: producer %d epoch %d", transactional_id, meta.producer_id,
                 meta.producer_epoch)
        return ErrorCode.NONE, meta.producer_id, meta.producer_epoch

    async def add_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                             partitions: set[tuple[str, int]], client_version: int = 0) -> ErrorCode:
        """AddPartitionsToTxn and AddOffsetsToTxn (the group's offsets partition); a partition
        leader's add for a TV2 producer (``client_version`` 2)."""
        meta = await self._existing(transactional_id)
        if isinstance(meta, ErrorCode):
            return meta
        try:
            transit = meta.prepare_add_partitions(producer_id, producer_epoch, partitions, now_ms(), client_version)
        except TransactionError as e:
            return e.code
        if transit is None:
            return ErrorCode.NONE
        return await self._write(meta, transit)

    async def end_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int,
                              commit: bool, bump_epoch: bool = False) -> tuple[ErrorCode, int, int]:
        """EndTxn: answered once the PrepareCommit / PrepareAbort state is written; the markers
        and the Complete state follow.  With ``bump_epoch`` (v5, transaction version 2) the epoch
        moves on and the answer carries the producer id and epoch to continue with; else -1, -1."""
        meta = await self._existing(transactional_id)
        if isinstance(meta, ErrorCode):
            return meta, -1, -1
        spare = (await self.producer_ids.next_id()
                 if bump_epoch and meta.producer_epoch >= EXHAUSTED_EPOCH else -1)
        try:
            if bump_epoch:
                transit = meta.prepare_end_bumping(producer_id, producer_epoch, commit, now_ms(), lambda: spare)
            else:
                transit = meta.prepare_end(producer_id, producer_epoch, commit, now_ms())
        except TransactionError as e:
            return e.code, -1, -1
        if transit is not None:
            code = await self._write(meta, transit)
            if code != ErrorCode.NONE:
                return code, -1, -1
            self._start_completion(meta)
        if not bump_epoch:
            return ErrorCode.NONE, -1, -1
        return ErrorCode.NONE, *meta.answer()

    async def verify(self, transactional_id: str, producer_id: int, producer_epoch: int,
                     partitions: set[tuple[str, int]]) -> dict[tuple[str, int], ErrorCode]:
        """AddPartitionsToTxn ``verify_only`` (KIP-890): whether each partition is in the producer's
        open transaction (INVALID_TXN_STATE when not); nothing is written."""
        meta = await self._existing(transactional_id)
        if isinstance(meta, ErrorCode):
            return dict.fromkeys(partitions, meta)
        try:
            meta.check_producer(producer_id, producer_epoch)
        except TransactionError as e:
            return dict.fromkeys(partitions, e.code)
        ongoing = meta.state == TransactionState.ONGOING
        return {tp: ErrorCode.NONE if ongoing and tp in meta.partitions else ErrorCode.INVALID_TXN_STATE
                for tp in partitions}

    async def describe(self, transactional_id: str) -> tuple[ErrorCode, TransactionMetadata | None]:
        """DescribeTransactions: the id's state, or why there is none here."""
        error = await self._check(transactional_id) if transactional_id else ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
        if error is not None:
            return error, None
        meta = self._txns.get(transactional_id)
        return (ErrorCode.NONE, meta) if meta is not None else (ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, None)

    def transactions(self) -> list[TransactionMetadata]:
        """The states of every id coordinated here (ListTransactions)."""
        return [m for t, m in self._txns.items() if self.partitions.owns(self.partition_for(t))]

    # -- completing: markers, then the Complete state --------------------------------------------

    def _start_completion(self, meta: TransactionMetadata, coordinator_epoch: int | None = None) -> None:
        """Write the markers of ``meta``'s ended transaction, then its Complete state, as the
        coordinator of its partition (at ``coordinator_epoch``, by default the current one)."""
        if coordinator_epoch is None:
            coordinator_epoch = self.partitions.epoch(self.partition_for(meta.transactional_id))
        if self._nursery is not None and coordinator_epoch is not None:
            self._nursery.start_soon(self._complete, meta, coordinator_epoch,
                                     name=f"complete {meta.transactional_id}")

    async def _complete(self, meta: TransactionMetadata, coordinator_epoch: int) -> None:
        commit = meta.state == TransactionState.PREPARE_COMMIT
        await _held(HOLD_MARKERS_ENV)
        await self.markers.write(meta.producer_id, meta.producer_epoch, commit, coordinator_epoch,
                                 set(meta.partitions))
        await _held(HOLD_COMPLETION_ENV)
        index = self.partition_for(meta.transactional_id)
        while self.partitions.epoch(index) == coordinator_epoch and self._txns.get(meta.transactional_id) is meta:
            if meta.pending is not None:
                await trio.sleep(COMPLETE_RETRY_S)
                continue
            try:
                transit = meta.prepare_complete(now_ms())
            except TransactionError:
                return  # completed already
            code = await self._write(meta, transit)
            if code == ErrorCode.NONE:
                log.info("transactional id %s: %s producer %d epoch %d", meta.transactional_id,
                         meta.state.kafka_name, meta.producer_id, meta.producer_epoch)
                return
            # Retried while this broker still coordinates the id (the loop's condition): a write
            # refused by a full log dir answers NOT_COORDINATOR too, but Kafka would have taken the
            # dir offline and moved the partition, where pykafkad keeps it and waits for room.
            # Giving up here left the id in Prepare* for good: CONCURRENT_TRANSACTIONS forever.
            await trio.sleep(COMPLETE_RETRY_S)

    # -- timeouts ----------------------------------------------------------------------------------

    async def _abort_timed_out(self) -> None:
        interval_s = self.config["transaction.abort.timed.out.transaction.cleanup.interval.ms"] / 1000
        while True:
            await trio.sleep(interval_s)
            now = now_ms()
            for meta in self.transactions():
                if (meta.state == TransactionState.ONGOING and meta.pending is None
                        and meta.start_ms + meta.timeout_ms < now):
                    log.info("transactional id %s: transaction of producer %d open for more than %d ms; "
                             "aborting it", meta.transactional_id, meta.producer_id, meta.timeout_ms)
                    try:
                        fence = meta.prepare_fence(now, self.metadata.features.transaction_version)
                    except TransactionError:
                        continue
                    if await self._write(meta, fence) == ErrorCode.NONE:
                        self._start_completion(meta)

    async def _remove_expired(self) -> None:
        """Forget ids idle (no transaction open or ending) for ``transactional.id.expiration.ms``:
        a tombstone removes each from ``__transaction_state`` and the cache, as Kafka does."""
        interval_s = self.config["transaction.remove.expired.transaction.cleanup.interval.ms"] / 1000
        expiration_ms = self.config["transactional.id.expiration.ms"]
        while True:
            await trio.sleep(interval_s)
            now = now_ms()
            for meta in self.transactions():
                if (meta.state in COMPLETE and meta.pending is None
                        and meta.last_update_ms + expiration_ms < now):
                    meta.pending = TransactionState.DEAD
                    code = await self._write(meta, None, tombstone=True)
                    meta.pending = None
                    if code == ErrorCode.NONE and self._txns.get(meta.transactional_id) is meta:
                        del self._txns[meta.transactional_id]
                        log.info("transactional id %s expired after %d ms without use", meta.transactional_id,
                                 expiration_ms)

    # -- running -----------------------------------------------------------------------------------

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Load the partitions this broker leads, then follow leadership and abort timed-out
        transactions until cancelled."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            await self.partitions.load_led(nursery, self.replicas)
            nursery.start_soon(self._abort_timed_out)
            nursery.start_soon(self._remove_expired)
            task_status.started()
            await trio.sleep_forever()
