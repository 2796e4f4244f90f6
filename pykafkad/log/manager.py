"""Owns every partition's log: opening at start-up, creation, deletion, the clean-shutdown marker and
the recovery-point checkpoints.

The storage itself is ``pykafkad._rust_log.PartitionLog``; this module only decides which
directory a partition lives in and with which topic settings it is opened.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import uuid
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from pykafkad._rust_log import LogError, PartitionLog
from pykafkad.config import BrokerConfig
from pykafkad.errors import KafkaError
from pykafkad.log.dir_failures import LogDirFailures, os_error_is_full
from pykafkad.log.recovery_checkpoint import read_recovery_points, write_recovery_points
from pykafkad.metadata.model import TopicInfo
from pykafkad.metadata.znodes import kafka_uuid, parse_kafka_uuid
from pykafkad.topic_config import segment_bytes, topic_int, topic_setting
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.metadata.cluster_metadata import ClusterMetadata

log = logging.getLogger(__name__)

# A partition's directory, as Kafka names it: ``<topic>-<partition>``.
_PARTITION_DIR = re.compile(r"(?P<topic>[a-zA-Z0-9._-]+)-(?P<partition>[0-9]+)")

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"


PARTITION_METADATA = "partition.metadata"


def partition_metadata(topic_id: uuid.UUID) -> bytes:
    """Kafka's ``partition.metadata``: the id of the topic a partition directory belongs to, so a
    directory left by a deleted topic is never taken for a new topic of the same name.  Not
    fsynced: a lost file only means the directory is judged by its name, as before."""
    return f"version: 0\ntopic_id: {kafka_uuid(topic_id)}\n".encode()


def write_topic_id(path: Path | str, topic_id: uuid.UUID) -> None:
    """Write ``partition.metadata`` into an existing partition directory."""
    Path(path, PARTITION_METADATA).write_bytes(partition_metadata(topic_id))


def read_topic_id(path: Path) -> uuid.UUID | None:
    try:
        for line in (path / PARTITION_METADATA).read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "topic_id":
                return parse_kafka_uuid(value.strip())
    except (OSError, ValueError):
        return None
    return None


def _fsync_dir(path: Path) -> None:
    """Make the entries of directory ``path`` (new partition directories) durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _canonical_policy(text: str) -> str:
    """"delete,compact" and "compact, delete" are the same policy: storage takes "compact,delete"."""
    return ",".join(sorted({p.strip() for p in text.split(",") if p.strip()}))


class LogManager:
    """Every partition log of this broker, keyed by (topic, partition)."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.logs: dict[tuple[str, int], PartitionLog] = {}
        # The storage settings each topic's logs run with, so periodic work can skip logs it has
        # nothing to do for without asking every log.
        self.topic_settings: dict[str, dict[str, object]] = {}
        # Topics this broker is creating whose nodes are not written yet, by name: their new logs are
        # registered already, but are the topic's only if this broker's write wins.
        self.creating: dict[str, uuid.UUID] = {}
        self._clean: dict[Path, bool] = {}
        # The recovery points checkpointed in each log dir shut down uncleanly (after a clean shutdown
        # nothing is recovered).
        self._recovery_points: dict[Path, dict[tuple[str, int], int]] = {}
        # Until load_all has run, a close marks clean only the dirs that were clean at start.
        self._loaded = False
        self.dir_failures = LogDirFailures(list(config.log_dirs), int(config["message.max.bytes"]))
        for d in config.log_dirs:
            d.mkdir(parents=True, exist_ok=True)
            marker = d / CLEAN_SHUTDOWN_FILE
            self._clean[d] = marker.exists()
            if marker.exists():
                marker.unlink()
            else:
                self._recovery_points[d] = read_recovery_points(d)

    def _dir_for(self, topic: str, partition: int) -> Path:
        name = f"{topic}-{partition}"
        if len(self.config.log_dirs) == 1:
            return self.config.log_dirs[0] / name
        for d in self.config.log_dirs:
            if (d / name).exists():
                return d / name
        # New partitions go to the log dir holding the fewest partitions, as Kafka places them.
        # Counted from the open logs, not by listing the directories: that made creating N
        # partitions O(N^2) in directory entries (minutes for a few thousand partitions).
        counts = Counter(Path(plog.dir).parent for plog in self.logs.values())
        return min(self._usable_dirs(), key=lambda d: counts[d]) / name

    def _usable_dirs(self) -> list[Path]:
        """The log dirs new partitions may go to: those not failed, as Kafka places new logs only in
        online dirs (all of them when every one failed: the creation then fails there, as it would)."""
        failed = self.dir_failures.failed()
        return [d for d in self.config.log_dirs if d not in failed] or list(self.config.log_dirs)

    def log_settings(self, topic: TopicInfo) -> dict[str, object]:
        """The PartitionLog settings a topic's effective configs give."""
        return self.settings_for(topic.configs)

    def settings_for(self, configs: dict[str, str]) -> dict[str, object]:
        """The PartitionLog settings that topic config overrides ``configs`` give."""
        c, b = configs, self.config
        codec = topic_setting(c, b, "compression.type") or "producer"
        level_key = {"gzip": "compression.gzip.level", "lz4": "compression.lz4.level",
                     "zstd": "compression.zstd.level"}.get(codec)
        level = topic_int(c, b, level_key) if level_key else None
        settings: dict[str, object] = {
            "segment_bytes": segment_bytes(c, b),
            "index_interval_bytes": topic_int(c, b, "index.interval.bytes"),
            "segment_index_bytes": topic_int(c, b, "segment.index.bytes"),
            "max_message_bytes": topic_int(c, b, "max.message.bytes"),
            "timestamp_type": topic_setting(c, b, "message.timestamp.type") or "CreateTime",
            "message_timestamp_before_max_ms": topic_int(c, b, "message.timestamp.before.max.ms"),
            "message_timestamp_after_max_ms": topic_int(c, b, "message.timestamp.after.max.ms"),
            "cleanup_policy": _canonical_policy(topic_setting(c, b, "cleanup.policy") or "delete"),
            "compression_type": codec,
            "compression_level": None if level is None or (codec == "gzip" and level == -1) else level,
            "retention_ms": topic_int(c, b, "retention.ms"),
            "retention_bytes": topic_int(c, b, "retention.bytes"),
            "segment_ms": topic_int(c, b, "segment.ms"),
            "delete_retention_ms": topic_int(c, b, "delete.retention.ms"),
            "min_cleanable_dirty_ratio": float(topic_setting(c, b, "min.cleanable.dirty.ratio") or 0.5),
            "min_compaction_lag_ms": topic_int(c, b, "min.compaction.lag.ms"),
            "max_compaction_lag_ms": topic_int(c, b, "max.compaction.lag.ms"),
            "flush_messages": topic_int(c, b, "flush.messages"),
            "flush_ms": topic_int(c, b, "flush.ms"),
        }
        return settings

    def _recovery_point(self, path: Path) -> int | None:
        """The checkpointed recovery point of the partition in ``path``; None: recover all of it."""
        match = _PARTITION_DIR.fullmatch(path.name)
        if match is None:
            return None
        return self._recovery_points.get(path.parent, {}).get((match["topic"], int(match["partition"])))

    def _open_log(self, path: Path, settings: dict[str, object]) -> PartitionLog:
        clean = self._clean.get(path.parent, False)
        return PartitionLog(str(path), clean_shutdown=clean,
                            recovery_point=None if clean else self._recovery_point(path), **settings)

    def _open(self, topic: TopicInfo, partition: int) -> PartitionLog:
        path = self._dir_for(topic.name, partition)
        settings = self.log_settings(topic)
        plog = self._open_log(path, settings)
        if read_topic_id(path) is None:
            write_topic_id(path, topic.topic_id)  # a directory from before topic ids were kept
        self.logs[(topic.name, partition)] = plog
        self.topic_settings[topic.name] = settings
        return plog

    def apply_settings(self, topic: TopicInfo) -> None:
        """Push a topic's changed configs to its open logs, without a restart."""
        settings = self.log_settings(topic)
        self.topic_settings[topic.name] = settings
        for p in topic.partitions:
            plog = self.logs.get((topic.name, p.index))
            if plog is not None and hasattr(plog, "update_config"):
                try:
                    plog.update_config(**settings)
                except LogError as e:
                    # A log closed for a move takes the settings when it is reopened; the others go on.
                    log.warning("new settings for %s-%d not applied: %s", topic.name, p.index, e)

    def remove_strays(self, metadata: ClusterMetadata) -> None:
        """Set aside the partition directories that belong to no replica of this broker: a topic
        deleted while this broker was down (or a deletion a crash cut short), a replica moved off it
        while it was down.  Kafka marks such stray logs too.  The metadata is complete here (read
        before the logs are opened)."""
        for d in self.config.log_dirs:
            for child in sorted(d.iterdir()) if d.is_dir() else []:
                if not child.is_dir():
                    continue
                reason = self._stray_reason(d, child.name, metadata)
                if reason:
                    # Renamed, not deleted, as Kafka marks stray logs: an operator who started a broker
                    # against the wrong metadata gets the data back by renaming it.
                    stray = d / f"{child.name}.{uuid.uuid4().hex}-stray"
                    log.warning("%s is stray (%s): renamed to %s; remove it once it is not needed",
                                child, reason, stray.name)
                    os.rename(child, stray)

    def _stray_reason(self, d: Path, name: str, metadata: ClusterMetadata) -> str | None:
        match = _PARTITION_DIR.fullmatch(name)
        if match is None:
            return None
        topic = metadata.topics.get(match["topic"])
        index = int(match["partition"])
        if topic is None:
            return f"topic {match['topic']} does not exist (deleted)"
        stored = read_topic_id(d / name)
        if stored is not None and stored != topic.topic_id:
            return f"it belongs to an earlier topic {match['topic']} (id {stored}), deleted and created again"
        if index >= len(topic.partitions):
            return None  # a partition not shown yet: never removed on a guess
        if self.config.node_id not in topic.partitions[index].replicas:
            return f"broker {self.config.node_id} is not a replica of {name} (moved off it)"
        return None

    def load_all(self, metadata: ClusterMetadata) -> None:
        """Open (and, after a crash, recover) every partition the model places on this broker."""
        self.remove_strays(metadata)
        hosted = [(topic, p) for topic in metadata.topics.values() for p in topic.partitions
                  if self.config.node_id in p.replicas]
        total = len(hosted)
        done = recovered = segments = 0
        for topic, p in hosted:
            plog = self._open(topic, p.index)
            report = getattr(plog, "recovery_report", None)
            for line in report() if report else []:
                log.warning("recovery of %s-%d: %s", topic.name, p.index, line)
                recovered += line.startswith("recovered segment")
            if not self._clean.get(Path(plog.dir).parent, True):
                segments += len(plog.segment_base_offsets())
            done += 1
            if total >= 100 and done % 100 == 0:
                log.info("opened %d of %d partition logs", done, total)
        if total:
            log.info("opened %d partition logs", total)
        if segments:
            # Kafka says "Recovering unflushed segment" for each; this is the sum of what it re-read.
            log.info("unclean shutdown: recovered %d of %d segments (those from each log's recovery point)",
                     recovered, segments)
        self._loaded = True

    def plan_new(self, name: str, partitions: Iterable[int]) -> list[Path]:
        """The directories new partitions of ``name`` will have: each in the log dir holding the fewest."""
        if len(self.config.log_dirs) == 1:
            return [self.config.log_dirs[0] / f"{name}-{p}" for p in partitions]
        counts = Counter(Path(plog.dir).parent for plog in self.logs.values())
        usable = self._usable_dirs()
        paths = []
        for p in partitions:
            d = min(usable, key=lambda d: counts[d])
            counts[d] += 1
            paths.append(d / f"{name}-{p}")
        return paths

    def open_new(self, paths: list[Path], settings: dict[str, object],
                 topic_id: uuid.UUID | None = None) -> list[PartitionLog]:
        """Create the logs at ``paths``; reads no state that changes, so it may run on a worker thread.

        One call into the Rust log, which makes the directories, writes each one's topic id and
        fsyncs each log dir once, so the new directories are durable before the creation is
        acknowledged at the cost of one fsync per log dir rather than one per partition; each log
        fsyncs its own directory on its first flush.

        A failure raises KafkaError(KAFKA_STORAGE_ERROR), with nothing left open.
        """
        metadata = None if topic_id is None else partition_metadata(topic_id)
        try:
            return PartitionLog.create_many([str(p) for p in paths], metadata, **settings)
        except (LogError, OSError) as e:
            raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, f"creating partition logs failed: {e}") from e

    def register(self, name: str, opened: dict[int, PartitionLog], settings: dict[str, object]) -> None:
        """Make logs opened by ``open_new`` the given partitions of topic ``name``."""
        self.topic_settings[name] = settings
        for index, plog in opened.items():
            self.logs[(name, index)] = plog

    def unregister(self, name: str, partitions: list[int]) -> list[PartitionLog]:
        """Take back logs registered for partitions whose creation did not happen (to be closed)."""
        taken = [plog for p in partitions if (plog := self.logs.pop((name, p), None)) is not None]
        if not any(topic == name for topic, _ in self.logs):
            self.topic_settings.pop(name, None)
        return taken

    def get(self, topic: str, partition: int) -> PartitionLog | None:
        return self.logs.get((topic, partition))

    def belongs_to(self, topic: str, topic_id: uuid.UUID) -> bool:
        """Whether the logs registered under ``topic`` are those of the topic with ``topic_id``: not when
        they were opened by this broker's own creation of the name, still writing its nodes, and the
        topic is another broker's, whose write came first (this broker's then fails and closes them)."""
        creating = self.creating.get(topic)
        return creating is None or creating == topic_id

    def detach_topic(self, topic: TopicInfo) -> list[PartitionLog]:
        """Stop serving ``topic``'s logs (cheap, on the event loop); `remove_logs` disposes of them."""
        self.topic_settings.pop(topic.name, None)
        return [plog for p in topic.partitions
                if (plog := self.logs.pop((topic.name, p.index), None)) is not None]

    def remove_logs(self, topic: TopicInfo, detached: list[PartitionLog]) -> None:
        """Close and remove a detached topic's logs: seconds for thousands, so run on a worker thread."""
        for plog in detached:
            try:
                plog.close()
            except Exception:  # noqa: BLE001 - its files are removed next; the others must still go
                log.exception("closing a log of deleted topic %s failed", topic.name)
        for p in topic.partitions:
            for d in self.config.log_dirs:
                shutil.rmtree(d / f"{topic.name}-{p.index}", ignore_errors=True)

    def detach(self, topic: str, partition: int) -> PartitionLog | None:
        """Stop serving one partition's log (a replica moved off this broker); `remove_log` disposes of it."""
        taken = self.unregister(topic, [partition])
        return taken[0] if taken else None

    def remove_log(self, plog: PartitionLog) -> None:
        """Close a detached log and remove its directory (on a worker thread)."""
        try:
            plog.close()
        except Exception:  # noqa: BLE001 - its files are removed next
            log.exception("closing the log in %s failed", plog.dir)
        shutil.rmtree(plog.dir, ignore_errors=True)

    def same_filesystem(self, source: Path, dest_dir: Path) -> bool:
        return os.stat(source).st_dev == os.stat(dest_dir).st_dev

    def relocate(self, source: Path, dest_dir: Path) -> Path:
        """Move a closed log's directory into log dir ``dest_dir`` of the same filesystem (on a worker
        thread): one rename, so a crash leaves the directory whole on one side or the other.  Once
        renamed, the new place is the log's whatever follows (an fsync error is only logged)."""
        target = dest_dir / source.name
        os.rename(source, target)
        for d in (dest_dir, source.parent):
            try:
                _fsync_dir(d)
            except OSError as e:
                log.error("fsync of %s after moving %s failed: %s", d, source.name, e)
        return target

    def replace(self, topic: str, partition: int, plog: PartitionLog) -> None:
        """Serve ``plog`` (the same partition reopened elsewhere) from now on."""
        self.logs[(topic, partition)] = plog

    def checkpoint_recovery_points(self, flush_rolled: bool = True) -> int:
        """Write each log dir's ``recovery-point-offset-checkpoint``, after fsyncing the segments rolled
        since the last flush (Kafka flushes a rolled segment soon after the roll), so the recovery points
        move on.  Blocks on fsyncs: run it on a worker thread.  Returns how many logs had rolled segments
        to flush.  A log that fails (closed meanwhile) is left out: it would be recovered whole."""
        by_dir: dict[Path, dict[tuple[str, int], int]] = {d: {} for d in self.config.log_dirs}
        flushed = 0
        for (topic, partition), plog in list(self.logs.items()):
            try:
                if flush_rolled and plog.flush_rolled():
                    flushed += 1
                point = plog.recovery_point
            except LogError as e:
                if not plog.closed:
                    log.error("flushing %s-%d for its recovery point failed: %s", topic, partition, e)
                continue
            by_dir.setdefault(Path(plog.dir).parent, {})[(topic, partition)] = point
        for d, points in by_dir.items():
            if d not in self.config.log_dirs:
                continue
            try:
                write_recovery_points(d, points)
            except OSError as e:
                log.error("writing the recovery-point checkpoint of %s failed: %s", d, e)
                self.dir_failures.write_failed(d, str(e), full=os_error_is_full(e))
            else:
                self.dir_failures.write_succeeded(d)
        return flushed

    def close_all(self) -> None:
        """Flush and close every log, checkpoint their recovery points (their ends, once flushed), then mark
        each log dir as cleanly shut down."""
        failed = False
        for key, plog in self.logs.items():
            try:
                plog.close()
            except LogError as e:  # a full disk: the next start recovers the log; one line says so
                failed = True
                log.error("closing log %s-%d failed: %s", *key, e.message)
            except Exception:  # noqa: BLE001 - one bad partition must not stop the others closing
                failed = True
                log.exception("closing log %s-%d failed", *key)
        if self._loaded:
            self.checkpoint_recovery_points(flush_rolled=False)
        self.logs.clear()
        if not failed:
            for d in self.config.log_dirs:
                if self._loaded or self._clean.get(d):
                    (d / CLEAN_SHUTDOWN_FILE).touch()
