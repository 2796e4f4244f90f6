"""The replica manager: every partition replica this broker holds, and the reads and writes on them.

Handlers call it to append (with the acks wait), fetch (with the long-poll), look up offsets and
delete records; they never touch a log or the cluster metadata's partition states themselves.
The partition states come in from the controller's decisions (``apply``, Kafka's LeaderAndIsr,
called by the metadata cache for each partition it shows or changes) and the logs from the log
manager.  A partition placed on this broker whose log does not exist yet (created by another
broker's request, or while this one was down) gets its log created here, on a worker thread, once
``run`` has started (after the logs on disk are loaded).

Appends and reads run in Rust with the GIL released.  Those that may be slow run on a worker
thread, so they do not hold every other connection: an append to a topic that recompresses or
fsyncs per append (flush.messages), or of more than ``INLINE_APPEND_BYTES``; a read from a segment
other than the active one (maybe not in the page cache).  The rest, appends to the page cache
and reads of the newest data, run on the Trio thread: a thread hop per request costs more than
they do (it took a third off single-partition acks=all throughput).  The partitions' state
(roles, high watermarks, waiters) is only touched on the Trio thread, around those calls.

With several log dirs, a dir whose write fails (a full disk, an I/O error) takes its replicas
offline here, as Kafka's JBOD handling does: produce to them answers KAFKA_STORAGE_ERROR at once,
their followers stop fetching, their high watermarks are no longer checkpointed there, and the
replicas are reported to the controller (``replica/offline_replicas.py``), which moves their
leadership to another in-sync replica and takes them out of the ISR; the partitions in the other
dirs are untouched.  The failed dir is probed every ``PROBE_INTERVAL_S``; once it takes writes
again its replicas come back online without a restart (Kafka needs one): the report is withdrawn,
followers fetch again and the leader adds them back to the ISR once they have caught up.  A
broker with one log dir keeps its replicas online instead (produce to them fails at the log
until there is room again, reads go on).
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import trio

from pykafkad._rust_log import LogError, PartitionLog
from pykafkad.config import LONG_MAX, BrokerConfig
from pykafkad.errors import KafkaError
from pykafkad.java_hash import java_string_hash
from pykafkad.log.dir_failures import PROBE_INTERVAL_S, os_error_is_full
from pykafkad.log.manager import LogManager
from pykafkad.metadata.cluster_metadata import ClusterMetadata, PartitionInfo, TopicInfo
from pykafkad.observability import kafka_metrics as metrics
from pykafkad.observability.request_timing import off_loop, waiting_remotely
from pykafkad.replica.delayed_fetch import DelayedFetch
from pykafkad.replica.fetch_session import FetchSessions
from pykafkad.replica.high_watermark_checkpoint import HighWatermarks, read_checkpoint, write_checkpoint
from pykafkad.replica.isr_changes import IsrWriter
from pykafkad.replica.offline_replicas import OfflineReplicasReport
from pykafkad.replica.partition import (
    INLINE_APPEND_BYTES,
    QUIET,
    AppendInfo,
    FetchedData,
    Partition,
    check_leader_epoch,
)
from pykafkad.replica.replica_fetcher import ReplicaFetcher
from pykafkad.replica.replication_quota import ReplicationQuota
from pykafkad.replica.watchers import Watchers, parked_on
from pykafkad.topic_config import topic_int
from wire.error_codes import ErrorCode

log = logging.getLogger(__name__)

NOT_HOSTED = "This server does not host this topic-partition."


@dataclass(frozen=True)
class ProduceEntry:
    """One partition's batch of a Produce request."""

    topic: str
    index: int
    records: bytes | memoryview


class FetchEntry(NamedTuple):
    """One partition of a Fetch request (a tuple: a session of thousands of partitions builds one
    per partition per fetch, and a frozen dataclass cost three times as much to make)."""

    topic: str
    index: int
    fetch_offset: int
    current_leader_epoch: int
    max_bytes: int
    # A follower's (Fetch v12+): the epoch of its last record, for the divergence check.
    last_fetched_epoch: int = -1
    # A session partition the fetcher's request left unchanged: the (high watermark, last stable
    # offset, log start offset) it was last sent.  While it stays caught up and those stay the
    # same, it has nothing to be told, and is not read (QUIET).
    told: tuple[int, int, int] | None = None
    # A follower's log start offset, as its request or its fetch session last gave it (-1: a consumer).
    log_start_offset: int = -1
    # False for a follower's session partition that its incremental request left unchanged, between
    # the session's periodic refreshes: its position is recorded already, and recording thousands of
    # them again on every fetch was about a quarter of what a follower's fetch cost the leader.
    position_changed: bool = True




AppendOutcome = AppendInfo | KafkaError | LogError


class ReplicaManager:
    """The partitions of this broker, keyed by (topic, partition)."""

    def __init__(self, config: BrokerConfig, logs: LogManager, metadata: ClusterMetadata) -> None:
        self.config = config
        self.logs = logs
        self._topics = metadata.topics.get
        self._brokers = metadata.brokers
        self._isr = IsrWriter(metadata, config.node_id)
        # Replication quotas (kafka-reassign-partitions --throttle): what this broker sends to
        # followers being moved, and what it copies as one.
        self.leader_quota = ReplicationQuota("leader", config, metadata.topics.get)
        # The fetch sessions (KIP-227) of followers and consumers on this broker as their leader.
        self.fetch_sessions = FetchSessions(config["max.incremental.fetch.session.cache.slots"])
        self.follower_quota = ReplicationQuota("follower", config, metadata.topics.get)
        self._partitions: dict[tuple[str, int], Partition] = {}
        self._nursery: trio.Nursery | None = None
        self._creating: set[tuple[str, int]] = set()
        # ``num.replica.fetchers`` fetchers per leader broker this broker follows partitions of, keyed
        # by (leader, fetcher id); a partition goes to the fetcher Kafka's hash picks.
        self._fetchers: dict[tuple[int, int], ReplicaFetcher] = {}
        # Woken at shutdown, so long-polls answer with what they have.
        self._shutdown = Watchers()
        self.shutting_down = False
        # Told when this broker starts or stops leading a partition (Kafka's onLeadershipChange: the
        # group coordinator loads and unloads the groups of a ``__consumer_offsets`` partition).
        self.leadership_listeners: list[Callable[[Partition, bool], None]] = []
        # Told of each transaction marker written (and replicated) here as leader: (partition,
        # producer id, commit).
        self.marker_listeners: list[Callable[[Partition, int, bool], None]] = []
        # The checkpointed high watermarks, read when the first partition is made (after the logs
        # are loaded), and what was last written to each log directory.
        self._checkpointed: HighWatermarks | None = None
        self._written_checkpoints: dict[Path, HighWatermarks] = {}
        # Per topic name, the removals of a deleted topic's logs still under way.
        self._removals: dict[str, list[trio.Event]] = {}
        # The controller's turn to change a topic (set by the broker): logs created here for another
        # broker's topic take it too, so they are never opened beside the logs this broker's own
        # create of the same name has open (two PartitionLogs on one directory).
        self.topic_turn: Callable[[str], AbstractAsyncContextManager[None]] | None = None
        # Replicas being moved to another log dir, and where to.
        self._moving: dict[tuple[str, int], Path] = {}
        # With several log dirs, those whose replicas are offline (their dir failed), as configured;
        # woken (from any thread) when a dir fails or recovers.
        self._jbod = len(config.log_dirs) > 1
        self._offline_dirs: set[Path] = set()
        self._dirs_changed = trio.Event()
        self._trio_token: trio.lowlevel.TrioToken | None = None
        self._offline_report = OfflineReplicasReport(metadata.store, config.node_id)
        logs.dir_failures.listeners.append(self._log_dirs_changed)
        # A new session lost the report's ephemeral node: write it again.
        metadata.store.on_new_session(self._log_dirs_changed)

    # -- partition states ----------------------------------------------------------------------

    def apply(self, topic: TopicInfo, changed: list[PartitionInfo] | None = None) -> None:
        """Take the controller's state of ``topic``'s ``changed`` partitions (all when None): Kafka's
        LeaderAndIsr.  The metadata cache calls it for each partition it shows or changes."""
        missing = []
        for state in topic.partitions if changed is None else changed:
            key = (topic.name, state.index)
            partition = self._partitions.get(key)
            if partition is not None and self.config.node_id not in state.replicas:
                # A reassignment moved the partition off this broker.
                self._stop_serving(partition)
                self._remove_log(topic.name, state.index)
                continue
            if partition is None:
                plog = self.logs.get(topic.name, state.index)
                if plog is not None and not self.logs.belongs_to(topic.name, topic.topic_id):
                    # This broker's own creation of the name, about to lose to this topic: its logs
                    # are not this topic's. Created once that creation has given up its turn.
                    plog = None
                if plog is None:
                    if self.config.node_id in state.replicas:
                        missing.append(state.index)
                    continue
                if self.config.node_id not in state.replicas:
                    # Created for a replica that left before it was served (a cancelled reassignment).
                    self._remove_log(topic.name, state.index)
                    continue
                partition = Partition(topic.name, state.index, plog, self.config.node_id)
                partition.restore_high_watermark(self._checkpointed_high_watermark(key))
                self._partitions[key] = partition
            was_leader = partition.is_leader
            if state.leader == self.config.node_id:
                if was_leader:
                    # Kafka's IsrShrinksPerSec/IsrExpandsPerSec: ISR changes of a partition led here,
                    # whoever made them (this leader's proposal or the controller's).
                    if len(state.isr) < len(partition.isr):
                        metrics.ISR_SHRINKS.inc()
                    elif len(state.isr) > len(partition.isr):
                        metrics.ISR_EXPANDS.inc()
                partition.make_leader(state.leader_epoch, state.replicas, state.isr)
                self._stop_fetching(partition)
                if not was_leader:
                    self._leadership_changed(partition, True)
            elif partition.is_leader or state.leader_epoch != partition.leader_epoch:
                partition.make_follower(state.leader, state.leader_epoch, state.replicas, state.isr)
                self._stop_fetching(partition)
                self._start_fetching(partition)
                if was_leader:
                    self._leadership_changed(partition, False)
            else:
                # Same leader and epoch (an ISR or assignment change): a fetcher that dropped it
                # takes it back.
                partition.set_replicas(state.replicas, state.isr)
                self._start_fetching(partition)
        missing = [i for i in missing if (topic.name, i) not in self._creating]
        if missing and self._nursery is not None:
            self._creating.update((topic.name, i) for i in missing)
            self._nursery.start_soon(self._create_logs, topic, missing)

    async def _create_logs(self, topic: TopicInfo, wanted: list[int]) -> None:
        """Create the logs of partitions placed here (by another broker's request, or on a cluster by
        this broker's own: ``Controller._logs_first``), then serve them.
        Taken in the controller's turn for the topic's name, so never beside the logs a create or
        add of the same name on this broker has open."""
        indexes: list[int] = []
        try:
            async with self.topic_turn(topic.name) if self.topic_turn is not None else nullcontext():
                await self.wait_removed(topic.name)
                # Registered meanwhile by this broker's own change of the topic: nothing to create.
                indexes = [i for i in wanted if self.logs.get(topic.name, i) is None]
                if not indexes:
                    return
                settings = self.logs.log_settings(topic)
                paths = self.logs.plan_new(topic.name, indexes)
                opened = await trio.to_thread.run_sync(self.logs.open_new, paths, settings, topic.topic_id)
                if self._topics(topic.name) is not topic:
                    # Deleted while its logs were being created: they belong to nothing.
                    await trio.to_thread.run_sync(self.logs.remove_logs, topic, opened)
                    return
                self.logs.register(topic.name, dict(zip(indexes, opened, strict=True)), settings)
        except KafkaError as e:
            log.error("creating logs of %s partitions %s failed: %s", topic.name, wanted, e)
            return
        finally:
            self._creating.difference_update((topic.name, i) for i in wanted)
        if self.shutting_down or trio.current_effective_deadline() == -math.inf:
            # Stopping (the worker thread cannot be cancelled): the logs close with the others, and
            # nothing starts serving them, or loading groups from them, now.
            return
        self.apply(topic, [topic.partitions[i] for i in indexes])
        log.info("created logs of %s partition(s) %s placed on this broker", topic.name, _index_ranges(indexes))

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Create missing logs, shrink ISRs and checkpoint high watermarks from now on, until cancelled."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._shrink_lagging_isrs)
            nursery.start_soon(self._checkpoint_high_watermarks_periodically)
            self._trio_token = trio.lowlevel.current_trio_token()
            nursery.start_soon(self._follow_log_dirs)
            task_status.started()
            await trio.sleep_forever()

    def remove_topic(self, topic: TopicInfo) -> None:
        """Stop serving a deleted topic's partitions (waiters on them answer now) and remove their logs
        in the background, on every broker that held them (Kafka's StopReplica with deletion)."""
        detached = self.logs.detach_topic(topic)
        done = trio.Event()
        self._removals.setdefault(topic.name, []).append(done)
        if self._nursery is not None:
            self._nursery.start_soon(self._remove_logs, topic, detached, done)
        else:
            self.logs.remove_logs(topic, detached)
            self._removed(topic.name, done)
        for state in topic.partitions:
            partition = self._partitions.get((topic.name, state.index))
            if partition is not None:
                self._stop_serving(partition)

    def _stop_serving(self, partition: Partition) -> None:
        """Forget a replica: no more fetching for it, and its waiters answer now."""
        del self._partitions[(partition.topic, partition.index)]
        if self.is_offline(partition):
            self._dirs_changed.set()  # the controller's report of offline replicas loses it
        self._stop_fetching(partition)
        was_leader = partition.is_leader
        partition.leader_id = -1
        partition.watchers.wake_all()
        if was_leader:
            self._leadership_changed(partition, False)

    def _remove_log(self, topic: str, index: int) -> None:
        """Stop serving a replica's log and remove it in the background (Kafka's StopReplica with
        deletion)."""
        plog = self.logs.detach(topic, index)
        if plog is None:
            return
        done = trio.Event()
        self._removals.setdefault(topic, []).append(done)
        self._start_removal(topic, plog, done)

    def _start_removal(self, topic: str, plog: PartitionLog, done: trio.Event) -> None:
        """Remove a detached log in the background; at shutdown (no nursery to run it), the next start
        sets its directory aside as stray."""
        try:
            if self._nursery is None:
                raise RuntimeError("not started")
            self._nursery.start_soon(self._remove_replica_log, topic, plog, done)
        except RuntimeError:
            try:
                plog.close()
            except LogError as e:
                log.warning("closing the log in %s failed: %s", plog.dir, e)
            self._removed(topic, done)

    async def _remove_replica_log(self, topic: str, plog: PartitionLog, done: trio.Event) -> None:
        try:
            await trio.to_thread.run_sync(self.logs.remove_log, plog)
        finally:
            self._removed(topic, done)
        log.info("removed the replica in %s: it was moved off this broker", plog.dir)

    # -- moving a replica between log dirs (AlterReplicaLogDirs) -------------------------------------

    def moving_to(self, topic: str, index: int) -> Path | None:
        """The log dir a replica is being moved to, if it is."""
        return self._moving.get((topic, index))

    def move_replica(self, topic: str, index: int, dest: Path) -> ErrorCode:
        """Start moving this broker's replica of ``topic``-``index`` into log dir ``dest``."""
        partition = self._partitions.get((topic, index))
        if partition is None:
            return (ErrorCode.REPLICA_NOT_AVAILABLE if self._topics(topic) is not None
                    else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        source = Path(partition.log.dir)
        if source.parent.resolve() == dest.resolve() or (topic, index) in self._moving:
            return ErrorCode.NONE
        if self._nursery is None:
            return ErrorCode.KAFKA_STORAGE_ERROR
        if not self.logs.same_filesystem(source, dest):
            # Kafka copies into a future log while serving; a copy with the log closed would take the
            # replica away for as long as the copy runs, so it is refused.
            log.warning("moving %s-%d to %s refused: log dirs on different filesystems are not supported yet",
                        topic, index, dest)
            return ErrorCode.KAFKA_STORAGE_ERROR
        self._moving[(topic, index)] = dest
        self._nursery.start_soon(self._move_replica, partition, dest)
        return ErrorCode.NONE

    async def _move_replica(self, partition: Partition, dest: Path) -> None:
        """Close the replica's log, move its directory, open it there and serve it again.  Meanwhile
        requests on it get KAFKA_STORAGE_ERROR, which clients retry (Kafka copies into a future log
        while serving; this closes the log for the move: a rename on one filesystem)."""
        key = (partition.topic, partition.index)
        old = partition.log
        source = Path(old.dir)
        moved = source
        try:
            await trio.to_thread.run_sync(old.close)
            try:
                moved = await trio.to_thread.run_sync(self.logs.relocate, source, dest)
            except OSError as e:
                # The rename did not happen: the directory is whole where it was.
                log.error("moving %s-%d to %s failed: %s; it stays in %s", *key, dest, e, source.parent)
            # Settings read now, after the awaits: a config change made during the move is kept.
            topic = self._topics(partition.topic)
            settings = self.logs.log_settings(topic) if topic else self.logs.topic_settings.get(partition.topic, {})
            new = await trio.to_thread.run_sync(lambda: PartitionLog(str(moved), clean_shutdown=True, **settings))
        except (LogError, OSError) as e:
            log.error("reopening %s-%d in %s after a move failed: %s", *key, moved.parent, e)
            return
        finally:
            self._moving.pop(key, None)
        if self._partitions.get(key) is not partition:
            # Stopped or deleted meanwhile: its removal took the old directory, this one goes too.
            try:
                await trio.to_thread.run_sync(self.logs.remove_log, new)
            except OSError as e:
                log.error("removing the moved replica %s failed: %s", moved, e)
            return
        partition.log = new
        self.logs.replace(partition.topic, partition.index, new)
        partition.watchers.wake_all()
        # A follower's fetcher drops a partition whose log failed under it: take it back.
        self._start_fetching(partition)
        log.info("moved the replica of %s-%d from %s to %s", *key, source.parent, dest)

    async def _remove_logs(self, topic: TopicInfo, detached: list[PartitionLog], done: trio.Event) -> None:
        try:
            await trio.to_thread.run_sync(self.logs.remove_logs, topic, detached)
        finally:
            self._removed(topic.name, done)
        log.info("removed the logs of deleted topic %s", topic.name)

    def _removed(self, name: str, done: trio.Event) -> None:
        done.set()
        pending = self._removals.get(name, [])
        if done in pending:
            pending.remove(done)
        if not pending:
            self._removals.pop(name, None)

    async def wait_removed(self, name: str) -> None:
        """Until every removal of an earlier topic ``name``'s logs is done (a topic created again under
        the name makes its directories only then)."""
        for done in list(self._removals.get(name, ())):
            await done.wait()

    def _leadership_changed(self, partition: Partition, leads: bool) -> None:
        for listener in self.leadership_listeners:
            listener(partition, leads)

    # -- log dir failures (JBOD) -------------------------------------------------------------------

    def is_offline(self, partition: Partition) -> bool:
        """Whether the replica's log dir failed on this broker of several log dirs."""
        return bool(self._offline_dirs) and self._log_dir(partition) in self._offline_dirs

    def _log_dir(self, partition: Partition) -> Path:
        return self.logs.dir_failures.configured(partition.log_dir)

    def _log_dirs_changed(self) -> None:
        """A log dir failed or recovered (maybe told on a worker thread): wake ``_follow_log_dirs``."""
        token = self._trio_token
        if token is None:
            return  # not running yet: ``_follow_log_dirs`` looks when it starts
        try:
            token.run_sync_soon(self._wake_log_dirs)
        except trio.RunFinishedError:
            pass

    def _wake_log_dirs(self) -> None:
        self._dirs_changed.set()  # the event of now: ``_follow_log_dirs`` replaces it each round

    async def _follow_log_dirs(self) -> None:
        """Take the replicas of failed log dirs offline and bring them back once their dir recovers;
        probe the failed dirs meanwhile (nothing else may write there)."""
        failures = self.logs.dir_failures
        while True:
            self._dirs_changed = trio.Event()
            failed = set(failures.failed()) if self._jbod else set()
            gone = failed - self._offline_dirs
            back = self._offline_dirs - failed
            if gone:
                self._take_offline(gone)
            if back:
                self._offline_dirs -= back
            # Reported before the replicas that came back fetch again, so the controller does not
            # take them out of the ISR as their leader adds them.
            reported = await self._report_offline_replicas()
            if back:
                self._bring_online(back)
            wait_s = PROBE_INTERVAL_S if failures.any_failed() or not reported else math.inf
            with trio.move_on_after(wait_s):
                await self._dirs_changed.wait()
            if failures.any_failed() and not self._dirs_changed.is_set():
                await trio.to_thread.run_sync(failures.probe)

    def _take_offline(self, dirs: set[Path]) -> None:
        self._offline_dirs |= dirs
        offline = [p for p in self._partitions.values() if self._log_dir(p) in dirs]
        for partition in offline:
            # A follower stops fetching (its appends cannot land); a leader refuses produce until the
            # controller moves its leadership (reads go on meanwhile).
            self._stop_fetching(partition)
            partition.watchers.wake_all()
        led = sum(1 for p in offline if p.is_leader)
        log.warning("log dir(s) %s offline: %d replica(s) offline on this broker, %d of them led here (the "
                    "controller moves each to another in-sync replica if one is alive; until then, or if none is, "
                    "produce to it answers KAFKA_STORAGE_ERROR and reads go on)", ", ".join(sorted(map(str, dirs))),
                    len(offline), led)

    def _bring_online(self, dirs: set[Path]) -> None:
        back = [p for p in self._partitions.values() if self._log_dir(p) in dirs]
        for partition in back:
            self._start_fetching(partition)
        log.info("log dir(s) %s online again: %d replica(s) back (followers fetch again and rejoin the ISR "
                 "once caught up)", ", ".join(sorted(map(str, dirs))), len(back))

    async def _report_offline_replicas(self) -> bool:
        offline = [(p.topic, p.index) for p in self._partitions.values() if self.is_offline(p)]
        return await self._offline_report.write([str(d) for d in self._offline_dirs], offline)

    # -- followers -----------------------------------------------------------------------------

    def _start_fetching(self, partition: Partition) -> None:
        leader = partition.leader_id
        if leader < 0 or leader == self.config.node_id or self._nursery is None or self.is_offline(partition):
            return
        key = (leader, fetcher_id(partition.topic, partition.index, self.config["num.replica.fetchers"]))
        fetcher = self._fetchers.get(key)
        if fetcher is None:
            fetcher = self._fetchers[key] = ReplicaFetcher(leader, self.config, self._brokers.get,
                                                           self.follower_quota, self.logs.dir_failures)
            self._nursery.start_soon(fetcher.run, name=f"replica fetcher from {leader}")
        if (partition.topic, partition.index) not in fetcher.partitions:
            fetcher.add(partition)

    def _stop_fetching(self, partition: Partition) -> None:
        for fetcher in self._fetchers.values():
            fetcher.remove(partition)

    async def _shrink_lagging_isrs(self) -> None:
        """Kafka's isr-expiration task: every half ``replica.lag.time.max.ms``, drop followers that
        have not caught up within it from the ISR of each partition this broker leads."""
        max_lag_ms = self.config["replica.lag.time.max.ms"]
        while True:
            await trio.sleep(max_lag_ms / 2000)
            now = int(time.time() * 1000)
            for partition in list(self._partitions.values()):
                isr = partition.lagging_isr(now, max_lag_ms)
                if isr is not None and self._nursery is not None:
                    self._nursery.start_soon(self._isr.propose, partition, isr, "followers fell behind")

    # -- high watermark checkpoint -------------------------------------------------------------

    def _checkpointed_high_watermark(self, key: tuple[str, int]) -> int:
        if self._checkpointed is None:
            self._checkpointed = {}
            for d in self.config.log_dirs:
                self._checkpointed.update(read_checkpoint(d))
        return self._checkpointed.get(key, 0)

    def _due_checkpoints(self) -> dict[Path, HighWatermarks]:
        """Each log directory's high watermarks, where they changed since last written."""
        # An offline log dir is left alone, as Kafka checkpoints only its live dirs: the write would
        # fail every few seconds (its probe sees when it takes writes again).
        offline = {d.resolve() for d in self._offline_dirs}
        by_dir: dict[Path, HighWatermarks] = {r: {} for d in self.config.log_dirs if (r := d.resolve()) not in offline}
        # Resolved once per log directory, not per partition: this runs every few seconds over
        # every partition, and resolving a path is several system calls.
        resolved: dict[str, Path] = {}
        for partition in self._partitions.values():
            parent = os.path.dirname(partition.log.dir)
            d = resolved.get(parent)
            if d is None:
                d = resolved[parent] = Path(parent).resolve()
            if d in offline:
                continue
            by_dir.setdefault(d, {})[(partition.topic, partition.index)] = partition.high_watermark
        return {d: hws for d, hws in by_dir.items() if self._written_checkpoints.get(d) != hws}

    def _write_checkpoints(self, due: dict[Path, HighWatermarks]) -> None:
        for d, hws in due.items():
            try:
                write_checkpoint(d, hws)
            except OSError as e:
                log.error("writing the high watermark checkpoint in %s failed: %s", d, e)
                self.logs.dir_failures.write_failed(d, str(e), full=os_error_is_full(e))
                continue
            self.logs.dir_failures.write_succeeded(d)
            self._written_checkpoints[d] = hws

    async def _checkpoint_high_watermarks_periodically(self) -> None:
        interval_s = self.config["replica.high.watermark.checkpoint.interval.ms"] / 1000
        while True:
            await trio.sleep(interval_s)
            due = self._due_checkpoints()
            if due:
                await trio.to_thread.run_sync(self._write_checkpoints, due)

    def checkpoint_high_watermarks(self) -> None:
        """Write every changed high watermark now (a clean shutdown, before the logs close).  Nothing
        before ``run`` started: the logs may not be this process's (a start that failed on a log
        directory another broker holds must not touch that broker's files)."""
        if self._nursery is not None:
            self._write_checkpoints(self._due_checkpoints())

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
        topic = self._topics(partition.topic)
        configured = topic_int(topic.configs if topic else {}, self.config, "min.insync.replicas")
        return min(configured, max(1, len(partition.replicas)))

    @property
    def shutdown_watchers(self) -> Watchers:
        """Woken at shutdown: a long-poll parks on them to answer at once then."""
        return self._shutdown

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
                if self._offline_dirs and self.is_offline(partition):
                    # Kafka's message for a partition in an offline log dir.
                    raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR,
                                     f"Partition {entry.topic}-{entry.index} is in an offline log directory")
                if required_acks == -1:
                    partition.check_min_isr(self.min_insync_replicas(partition))
            except KafkaError as e:
                outcomes[i] = e
                continue
            accepted.append((i, partition, entry))
        if accepted:
            batches = [(p, e.records, p.leader_epoch) for _, p, e in accepted]
            if self._append_may_block(accepted):
                with off_loop("append"):
                    results = await trio.to_thread.run_sync(_append_all, batches, now_ms)
            else:
                results = _append_all(batches, now_ms)
            woken = False
            for (i, partition, _), result in zip(accepted, results, strict=True):
                woken = woken or partition.watchers.waiting()
                outcomes[i] = result if isinstance(result, LogError) else partition.appended(result)
            self._note_dir_health(accepted, results)
            if woken:
                # The fetches these records woke (consumers' long-polls, followers') answer first: the
                # records' end-to-end latency runs through them, not through this produce response.
                # Twice: Trio runs each batch of ready tasks in random order, so after one yield this
                # task may still go first; after the second, every fetch woken here has run.
                await trio.lowlevel.cancel_shielded_checkpoint()
                await trio.lowlevel.cancel_shielded_checkpoint()
        if required_acks == -1:
            with waiting_remotely():
                await self._wait_for_acks(accepted, outcomes, timeout_ms)
        return outcomes  # type: ignore[return-value]

    def _note_dir_health(self, accepted: list[tuple[int, Partition, ProduceEntry]],
                         results: list[tuple[int, int, int, bool] | LogError]) -> None:
        """A storage error marks its partition's log dir failed (full); a later append there that
        succeeds clears it: the dir is retried by each produce, no restart needed."""
        failures = self.logs.dir_failures
        for (_, partition, _), result in zip(accepted, results, strict=True):
            failed = isinstance(result, LogError) and result.code == ErrorCode.KAFKA_STORAGE_ERROR
            if failed or failures.any_failed():
                log_dir = partition.log_dir
                if failed:
                    failures.write_failed(log_dir, result.message)  # type: ignore[union-attr]
                elif not isinstance(result, LogError):
                    failures.write_succeeded(log_dir)

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

    # -- transaction markers ---------------------------------------------------------------------

    async def write_marker(self, topic: str, index: int, producer_id: int, producer_epoch: int, commit: bool,
                           coordinator_epoch: int, timeout_s: float) -> ErrorCode:
        """WriteTxnMarkers on the leader: append the marker and wait until it is replicated (Kafka
        appends markers with acks=all).  Kafka's error code on failure."""
        partition = self._partitions.get((topic, index))
        if partition is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        try:
            partition.check_min_isr(self.min_insync_replicas(partition))
            offset = partition.write_marker(producer_id, producer_epoch, commit, coordinator_epoch)
        except KafkaError as e:
            return ErrorCode(e.code)
        except LogError as e:
            log.warning("%s-%d: marker for producer %d refused: %s", topic, index, producer_id, e)
            return _error_code(e.code)
        code = await partition.wait_for_acks(offset + 1, self.min_insync_replicas(partition), timeout_s)
        if code == ErrorCode.NONE:
            for listener in self.marker_listeners:
                listener(partition, producer_id, commit)
        return code

    # -- delete records -------------------------------------------------------------------------

    async def delete_records(self, wanted: Sequence[tuple[str, int, int]], timeout_ms: int
                             ) -> list[tuple[int, ErrorCode]]:
        """DeleteRecords: each (topic, partition, offset) has its log start moved on its leader here,
        and is answered (low watermark, error) once every replica on a live broker has moved its log
        start that far too, as Kafka's delayed DeleteRecords waits for, or REQUEST_TIMED_OUT (with the
        low watermark of the delete) when ``timeout_ms`` passes first."""
        answers: list[tuple[int, ErrorCode]] = []
        pending: dict[int, tuple[Partition, int]] = {}
        for i, (topic, index, offset) in enumerate(wanted):
            try:
                partition = self.leader(topic, index)
                required = partition.delete_records(offset)
            except (KafkaError, LogError) as e:
                answers.append((-1, ErrorCode(e.code)))
                continue
            low = partition.low_watermark(self._brokers)
            # Kafka's delayed DeleteRecords: what has not reached its offset by the timeout says so.
            answers.append((low, ErrorCode.NONE if low >= required else ErrorCode.REQUEST_TIMED_OUT))
            if low < required:
                pending[i] = (partition, required)
        deadline = trio.current_time() + max(0, timeout_ms) / 1000
        while pending:
            with parked_on([p.watchers for p, _ in pending.values()] + [self._shutdown]) as waiter:
                for i, (partition, required) in list(pending.items()):
                    if not partition.is_leader:
                        answers[i] = (-1, ErrorCode.NOT_LEADER_OR_FOLLOWER)
                        del pending[i]
                    elif (low := partition.low_watermark(self._brokers)) >= required:
                        answers[i] = (low, ErrorCode.NONE)
                        del pending[i]
                left = deadline - trio.current_time()
                if not pending or left <= 0 or self.shutting_down:
                    break
                await waiter.wait(left)
        return answers

    # -- fetch ---------------------------------------------------------------------------------

    async def fetch_messages(self, entries: Sequence[FetchEntry], max_bytes: int, min_bytes: int,
                             max_wait_ms: int, allow_zstd: bool, replica_id: int = -1,
                             read_committed: bool = False, zero_copy: bool = False,
                             delayed: DelayedFetch | None = None) -> list[FetchedData]:
        """A fetch: read every entry, and long-poll until ``min_bytes`` are there, a partition errors,
        or ``max_wait_ms`` passes; woken by the appends and high-watermark moves of the partitions
        asked for only.  A consumer reads below the high watermark (``read_committed``: below the
        last stable offset, with the aborted transactions of the range); a follower (``replica_id``)
        reads up to the log end, and its fetch offsets are its log end offsets, which move the high
        watermark and may bring it back into the ISR.  ``zero_copy``: large record sets come back as
        LogSlices of the segment files, for a connection that sends them with sendfile.  ``delayed``:
        a parked fetch may be answered by the log itself (``replica/delayed_fetch.py``); when it was,
        this returns nothing and ``delayed.sent`` says what went."""
        deadline = trio.current_time() + max(0, max_wait_ms) / 1000
        follower = replica_id >= 0
        if follower:
            self._follower_fetched(replica_id, entries)
            # A follower's fetch only parks, and what it may have woken (the consumer's fetch and the
            # acks=all produce a high-watermark move is for) or what is already in (the other
            # follower's fetch, which moves it) goes first: twice, as after an append.
            await trio.lowlevel.cancel_shielded_checkpoint()
            await trio.lowlevel.cancel_shielded_checkpoint()
        # Taken after those yields, with no yield before the first look: a partition made meanwhile
        # (a new topic's, on the broker that created it) is read there and must be watched too, or
        # its first append would not wake this long poll.
        watchers = [p.watchers if (p := self._partitions.get((e.topic, e.index))) is not None else None
                    for e in entries]
        watched = [self._shutdown] + [w for w in watchers if w is not None]
        # After a pass that read nothing: each partition's answer and the wake-up count it was made at.
        quiet: list[FetchedData] | None = None
        generations: list[int] = []
        waiting_answer = False
        try:
            while True:
                with parked_on(watched, replica=follower) as waiter:
                    if waiting_answer:
                        waiting_answer = False
                        if delayed is not None and delayed.close():
                            return []
                    if quiet is None:
                        targets = [self._fetch_target(e, replica_id, read_committed) for e in entries]
                    else:
                        # Woken again: only a partition woken since has anything new (an append, a high
                        # watermark, a log start, a leader change all wake it); the others answer as before.
                        targets = [self._fetch_target(e, replica_id, read_committed)
                                   if w is None or w.generation != g else q
                                   for e, w, g, q in zip(entries, watchers, generations, quiet, strict=True)]
                    generations = [-1 if w is None else w.generation for w in watchers]
                    throttled = self._leader_throttled(targets, replica_id) if follower else []
                    if throttled and self.leader_quota.is_exceeded():
                        # Over the leader quota: replicas being moved get nothing this time (Kafka
                        # leaves their bytes out of the response).
                        targets = [_nothing_read(t) if i in throttled else t for i, t in enumerate(targets)]
                    if _read_may_block(targets):
                        with off_loop("read"):
                            results, total = await trio.to_thread.run_sync(_read_all, targets, max_bytes, allow_zstd,
                                                                           follower, read_committed, zero_copy, True)
                    else:
                        results, total = _read_all(targets, max_bytes, allow_zstd, follower, read_committed, zero_copy)
                    for i in throttled:
                        self.leader_quota.record(len(results[i].records))
                    left = deadline - trio.current_time()
                    errored = any(r.error != ErrorCode.NONE for r in results)
                    if total >= min_bytes or errored or left <= 0 or self.shutting_down:
                        return results
                    quiet = results if total == 0 else None
                    if delayed is not None and not throttled:
                        waiting_answer = True  # whatever wait_on left must be closed, even if it raises
                        waiting_answer = delayed.wait_on(targets, results, max_bytes)
                    with waiting_remotely():
                        await waiter.wait(left)
        finally:
            if waiting_answer and delayed is not None:
                delayed.close()

    def _leader_throttled(self, targets: list[tuple[Partition, FetchEntry] | FetchedData],
                          replica_id: int) -> list[int]:
        """The targets a follower out of the ISR reads under this broker's leader quota."""
        return [i for i, t in enumerate(targets) if not isinstance(t, FetchedData)
                and replica_id not in t[0].isr and self.leader_quota.is_throttled(t[0].topic, t[0].index)]

    def _fetch_target(self, entry: FetchEntry, replica_id: int, read_committed: bool = False
                      ) -> tuple[Partition, FetchEntry] | FetchedData:
        partition = self._partitions.get((entry.topic, entry.index))
        if partition is None:
            return FetchedData(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if not partition.is_leader or (replica_id >= 0 and replica_id not in partition.replicas):
            # Only the partition's own replicas may read past the high watermark.
            return FetchedData(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        error = check_leader_epoch(entry.current_leader_epoch, partition.leader_epoch)
        if error is not None:
            return FetchedData(error)
        told = entry.told
        if told is not None and partition.told_all_since(told, entry.fetch_offset, replica_id >= 0, read_committed):
            # A follower's divergence was checked when it last moved; the leader's log has only
            # grown at its end since (it is still the leader at the follower's epoch).
            return QUIET
        if replica_id >= 0 and entry.last_fetched_epoch >= 0:
            # The follower's last epoch must end on this leader where the follower's log ends, or later.
            try:
                epoch, end = partition.end_offset_for_epoch(entry.last_fetched_epoch)
            except LogError as e:
                # The log is closed for a move between log dirs: this partition only, retriable.
                return FetchedData(e.code)
            if epoch < entry.last_fetched_epoch or end < entry.fetch_offset:
                return partition.nothing_read(diverging_epoch=(epoch, end))
        return partition, entry

    @property
    def position_refresh_ms(self) -> int:
        """How often a follower's fetch session records the positions of the partitions its requests
        leave unchanged (their caught-up time for the ISR): a fraction of ``replica.lag.time.max.ms``,
        so that a follower keeping up on a quiet partition never looks lagging."""
        return max(10, min(1000, self.config["replica.lag.time.max.ms"] // 4))

    def _follower_fetched(self, replica_id: int, entries: Sequence[FetchEntry]) -> None:
        """Record a follower's positions (its ISR membership and the high watermarks they move)."""
        now = int(time.time() * 1000)
        for entry in entries:
            if not entry.position_changed:
                continue
            partition = self._partitions.get((entry.topic, entry.index))
            try:
                if partition is None or (entry.last_fetched_epoch >= 0 and
                                         partition.end_offset_for_epoch(entry.last_fetched_epoch)[1]
                                         < entry.fetch_offset):
                    continue  # a diverging follower's offset says nothing about what it shares
            except LogError:
                continue  # closed for a move between log dirs: its position is recorded at the next fetch
            isr = partition.follower_fetched(replica_id, entry.fetch_offset, now, entry.log_start_offset)
            # Only a registered broker joins the ISR: one in its controlled shutdown still fetches
            # until it stops, and would otherwise be added back after the controller took it out.
            if isr is not None and replica_id in self._brokers and self._nursery is not None:
                self._nursery.start_soon(self._isr.propose, partition, isr, f"broker {replica_id} caught up")

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


def _error_code(code: int) -> ErrorCode:
    try:
        return ErrorCode(code)
    except ValueError:
        return ErrorCode.UNKNOWN_SERVER_ERROR


def fetcher_id(topic: str, index: int, fetchers: int) -> int:
    """Kafka's ``AbstractFetcherManager.getFetcherId``: abs(31 * topic.hashCode + partition) % fetchers."""
    h = (31 * java_string_hash(topic) + index) & 0xFFFFFFFF
    h = h - (1 << 32) if h >= 1 << 31 else h
    return (0 if h == -(1 << 31) else abs(h)) % fetchers


def _append_all(batches: list[tuple[Partition, bytes | memoryview, int]],
                now_ms: int) -> list[tuple[int, int, int, bool] | LogError]:
    """Each batch written to its partition's log, or the LogError it failed with (on the Trio thread
    or a worker)."""
    results: list[tuple[int, int, int, bool] | LogError] = []
    for partition, records, epoch in batches:
        try:
            results.append(partition.write_to_log(records, epoch, now_ms))
        except LogError as e:
            results.append(e)
    return results


def _nothing_read(target: tuple[Partition, FetchEntry] | FetchedData) -> FetchedData:
    return target if isinstance(target, FetchedData) else target[0].nothing_read()


def _read_may_block(targets: list[tuple[Partition, FetchEntry] | FetchedData]) -> bool:
    return any(not isinstance(t, FetchedData) and t[0].read_may_block(t[1].fetch_offset) for t in targets)


def _read_all(targets: list[tuple[Partition, FetchEntry] | FetchedData], max_bytes: int,
              allow_zstd: bool, follower: bool = False, read_committed: bool = False,
              zero_copy: bool = False, cold: bool = False) -> tuple[list[FetchedData], int]:
    """One pass over the fetch targets within the response's ``max_bytes`` (on the Trio thread or a
    worker); the first partition with records gets at least one batch, whatever its size."""
    remaining, total = max_bytes, 0
    results = []
    for target in targets:
        if isinstance(target, FetchedData):
            results.append(target)
            continue
        partition, entry = target
        data = partition.read_records(entry.fetch_offset, max(0, min(entry.max_bytes, remaining)),
                                      min_one=(total == 0), allow_zstd=allow_zstd, follower=follower,
                                      read_committed=read_committed, zero_copy=zero_copy, cold=cold)
        total += len(data.records)
        remaining -= len(data.records)
        results.append(data)
    return results, total


def _index_ranges(indexes: list[int]) -> str:
    """``[0, 1, 2, 5]`` as ``0-2, 5``: a log line for a topic of thousands of partitions stays one line."""
    runs: list[list[int]] = []
    for index in sorted(indexes):
        if runs and index == runs[-1][1] + 1:
            runs[-1][1] = index
        else:
            runs.append([index, index])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
