"""A follower's fetcher: copies the partitions this broker follows from one leader broker.

One task per leader broker sends Fetch requests (v12, with this broker's id as ``replica_id``)
for every partition it follows there, each from the follower's log end offset, naming the leader
epoch it knows and the epoch of its last record.  Answers are appended unchanged
(``append_as_follower``), and the follower's high watermark becomes the leader's, up to what it has.

Divergence (KIP-320/KIP-595 style, Fetch v12+): when the follower's last epoch ends earlier on the
leader, the leader answers with a diverging epoch and end offset, and the follower truncates to
that point before fetching again, so replicas never diverge.  A follower behind the leader's log
start starts its log over there.  A partition whose epoch the leader calls fenced is dropped until
the metadata names its leader again.  Replicas named in the topic's
``follower.replication.throttled.replicas`` and out of the ISR (being moved here) are held back
while the follower quota is exceeded.  One the leader cannot serve yet (it has not applied the new
topic or leadership from ZooKeeper, which each broker does on its own) is asked for again soon:
after 10 ms, doubling each time up to ``replica.fetch.backoff.ms``, so the first acks=all writes on a
new partition are not held for the whole backoff.  Other errors wait the whole backoff.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any

import trio

from pykafkad._rust_log import LogError
from pykafkad.config import BrokerConfig
from pykafkad.log.dir_failures import LogDirFailures
from pykafkad.metadata.model import BrokerInfo
from pykafkad.network.tls import inter_broker_context
from pykafkad.replica.broker_link import BrokerLink, BrokerLinkError
from pykafkad.replica.fetch_session import INITIAL_EPOCH, next_epoch
from pykafkad.replica.partition import Partition
from pykafkad.replica.replication_quota import ReplicationQuota
from pykafkad.security.sasl_client import inter_broker_sasl
from wire.error_codes import ErrorCode

log = logging.getLogger(__name__)

FETCH = 1
FETCH_VERSION = 12
# What a leader answers while it is still applying the metadata that made it leader.
NOT_YET_LEADING = frozenset({ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_LEADER_OR_FOLLOWER,
                             ErrorCode.UNKNOWN_LEADER_EPOCH})
FIRST_RETRY_S = 0.01
# How often a leader that stays unreachable is reported again.
FAILURE_REPORT_INTERVAL_S = 30.0


class ReplicaFetcher:
    """Fetches from broker ``leader_id`` for the partitions added to it."""

    def __init__(self, leader_id: int, config: BrokerConfig, broker: Callable[[int], BrokerInfo | None],
                 quota: ReplicationQuota | None = None, dir_failures: LogDirFailures | None = None) -> None:
        self.leader_id = leader_id
        # Where a follower append refused by a full disk is reported (and its recovery seen).
        self._dir_failures = dir_failures
        self.config = config
        self._broker = broker
        # follower.replication.throttled.*: replicas out of the ISR that are being moved here.
        self._quota = quota
        # Partitions held back by the quota (their ``_delayed`` time does not cut a long poll short:
        # a link torn down on every throttled round would cost more than it saves).
        self._quota_held: set[tuple[str, int]] = set()
        self.partitions: dict[tuple[str, int], Partition] = {}
        # Partitions the leader could not serve yet, and when to ask again (trio clock).
        self._delayed: dict[tuple[str, int], float] = {}
        # Answers in a row that said the leader is not leading yet, per partition.
        self._not_yet: dict[tuple[str, int], int] = {}
        self._changed = trio.Event()
        # The long poll out now; cut short when a partition joins, so its first fetch is not parked
        # behind up to replica.fetch.wait.max.ms of waiting for the others.
        self._in_flight: trio.CancelScope | None = None
        # The fetch session with the leader (KIP-227): its id (0: none), the epoch of the next
        # incremental request, and what the leader was last told of each partition.
        self._session_id = 0
        self._session_epoch = INITIAL_EPOCH
        self._session_sent: dict[tuple[str, int], tuple[int, int, int, int]] = {}

    def reset_session(self) -> None:
        """Back to full fetches: the next request opens a new session (and names the old one to close)."""
        self._session_id = 0
        self._session_epoch = INITIAL_EPOCH
        self._session_sent = {}

    def add(self, partition: Partition) -> None:
        key = (partition.topic, partition.index)
        self.partitions[key] = partition
        self._delayed.pop(key, None)
        self._not_yet.pop(key, None)
        self._changed.set()
        if self._in_flight is not None:
            self._in_flight.cancel()

    def remove(self, partition: Partition) -> None:
        if self.partitions.get((partition.topic, partition.index)) is partition:
            del self.partitions[(partition.topic, partition.index)]

    async def run(self) -> None:
        backoff_s = self.config["replica.fetch.backoff.ms"] / 1000
        link: BrokerLink | None = None
        failures = 0
        # A leader that is down is retried every backoff; the log says so once, then now and then,
        # so that what else happened meanwhile (its replacement, say) stays readable.
        next_report = 0.0
        try:
            while True:
                if not self.partitions:
                    self._changed = trio.Event()
                    await self._changed.wait()
                    continue
                now = trio.current_time()
                if all(self._delayed.get(key, 0) > now for key in self.partitions):
                    self._changed = trio.Event()
                    with trio.move_on_at(min(self._delayed[key] for key in self.partitions)):
                        await self._changed.wait()
                    continue
                leader = self._broker(self.leader_id)
                if leader is None:
                    await trio.sleep(backoff_s)
                    continue
                try:
                    if link is None:
                        self.reset_session()  # a session lives on one link
                        link = await BrokerLink.connect(leader.host, leader.port,
                                                        f"replica-fetcher-{self.config.node_id}", 30,
                                                        inter_broker_context(self.config),
                                                        inter_broker_sasl(self.config))
                        if failures:
                            log.info("fetching from broker %d again after %d failed attempt(s)",
                                     self.leader_id, failures)
                            failures, next_report = 0, 0.0
                    if not await self._fetch_once(link):
                        await link.aclose()
                        link = None
                except BrokerLinkError as e:
                    failures += 1
                    if trio.current_time() >= next_report:
                        log.info("fetching from broker %d: %s; retrying every %.1fs (attempt %d)",
                                 self.leader_id, e, backoff_s, failures)
                        next_report = trio.current_time() + FAILURE_REPORT_INTERVAL_S
                    link = None
                    await trio.sleep(backoff_s)
        finally:
            if link is not None:
                await link.aclose()

    async def _fetch_once(self, link: BrokerLink) -> bool:
        """One fetch, its answers applied; False when it was cut short (the link is then mid-frame)."""
        now = trio.current_time()
        asked = {key: p for key, p in self.partitions.items() if self._delayed.get(key, 0) <= now}
        if self._quota is not None and self._quota.is_exceeded():
            # Over the follower quota: throttled replicas sit this fetch out (Kafka leaves them out
            # of the request) and are asked for again once the rate is back under it.
            held = [key for key, p in asked.items() if self._throttled(p)]
            if held:
                due_at = now + self._quota.delay_s()
                for key in held:
                    self._delayed[key] = due_at
                    self._quota_held.add(key)
                    del asked[key]
                if not asked:
                    return True
        # (fetch offset, leader epoch, last fetched epoch, log start offset) of each partition asked for.
        positions = {key: (p.log_end_offset, p.leader_epoch, p.last_fetched_epoch(), p.log_start_offset)
                     for key, p in asked.items()}
        # In the session (KIP-227), only what changed since the last request is named; the first
        # request of a session (epoch 0) names every partition.
        incremental = self._session_id != 0
        topics: dict[str, list[dict[str, Any]]] = {}
        sent = self._session_sent
        max_bytes = self.config["replica.fetch.max.bytes"]
        for key, position in positions.items():
            if incremental and sent.get(key) == position:
                continue
            fetch_offset, leader_epoch, last_epoch, log_start = position
            topics.setdefault(key[0], []).append({
                "partition": key[1],
                "current_leader_epoch": leader_epoch,
                "fetch_offset": fetch_offset,
                "last_fetched_epoch": last_epoch,
                "log_start_offset": log_start,
                "partition_max_bytes": max_bytes,
            })
        forgotten: dict[str, list[int]] = {}
        if incremental:
            for topic, index in self._session_sent.keys() - positions.keys():
                forgotten.setdefault(topic, []).append(index)
        body = {
            "replica_id": self.config.node_id,
            "max_wait_ms": self.config["replica.fetch.wait.max.ms"],
            "min_bytes": self.config["replica.fetch.min.bytes"],
            "max_bytes": self.config["replica.fetch.response.max.bytes"],
            "isolation_level": 0,
            "session_id": self._session_id,
            "session_epoch": self._session_epoch if incremental else INITIAL_EPOCH,
            "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
            "forgotten_topics_data": [{"topic": t, "partitions": ps} for t, ps in forgotten.items()],
            "rack_id": "",
        }
        timeout_s = self.config["replica.fetch.wait.max.ms"] / 1000 + 30
        # A partition held back now is due again at its time: the long poll ends then, not later.
        self._quota_held.difference_update(asked)
        due = min((self._delayed[key] for key in self.partitions
                   if key not in asked and key in self._delayed and key not in self._quota_held), default=math.inf)
        with trio.CancelScope(deadline=due) as scope:
            self._in_flight = scope
            try:
                response = await link.request(FETCH, FETCH_VERSION, body, timeout_s)
            finally:
                self._in_flight = None
        if scope.cancelled_caught:
            return False
        if response["error_code"] in (ErrorCode.FETCH_SESSION_ID_NOT_FOUND, ErrorCode.INVALID_FETCH_SESSION_EPOCH):
            # The leader lost the session (it restarted, or evicted it): start a new one at once.
            log.info("fetch session %d with broker %d ended (%s); opening a new one", self._session_id,
                     self.leader_id, ErrorCode(response["error_code"]).name)
            self.reset_session()
            return True
        if response["error_code"] != ErrorCode.NONE:
            raise BrokerLinkError(f"fetch answered {ErrorCode(response['error_code']).name}")
        if incremental:
            self._session_epoch = next_epoch(self._session_epoch)
            self._session_sent = positions
        else:
            self._session_id = response.get("session_id", 0)
            self._session_epoch = 1
            self._session_sent = positions if self._session_id else {}
        for topic_entry in response["responses"]:
            for answer in topic_entry["partitions"]:
                key = (topic_entry["topic"], answer["partition_index"])
                partition = self.partitions.get(key)
                if partition is None or partition is not asked.get(key) or partition.leader_epoch != positions[key][1]:
                    continue  # removed or moved to another term while the fetch was out
                await self._apply(partition, positions[key][0], answer)
        return True

    async def _apply(self, partition: Partition, fetch_offset: int, answer: dict[str, Any]) -> None:
        error = answer["error_code"]
        key = (partition.topic, partition.index)
        if error not in NOT_YET_LEADING:
            self._not_yet.pop(key, None)
        try:
            if error == ErrorCode.NONE:
                diverging = answer.get("diverging_epoch") or {}
                if diverging.get("epoch", -1) >= 0:
                    self._truncate_to_divergence(partition, diverging["epoch"], diverging["end_offset"])
                    return
                records = answer["records"]
                await partition.append_as_follower(records, answer["high_watermark"], answer["log_start_offset"])
                if records:
                    if self._quota is not None and self._throttled(partition):
                        self._quota.record(len(records))
                    if self._dir_failures is not None and self._dir_failures.any_failed():
                        self._dir_failures.write_succeeded(partition.log_dir)
            elif error == ErrorCode.OFFSET_OUT_OF_RANGE:
                if fetch_offset < answer["log_start_offset"]:
                    log.info("%s-%d: fetch offset %d is below the leader's log start %d: starting over there",
                             partition.topic, partition.index, fetch_offset, answer["log_start_offset"])
                    partition.truncate_fully_and_start_at(answer["log_start_offset"])
                else:
                    # Past the leader's log end: what this replica has beyond the leader's high watermark
                    # is not the leader's, whatever this replica's own (older) high watermark says.
                    # Truncating only to that made no progress and fetched the same offset forever.
                    self._truncate_to(partition, answer["high_watermark"], fetch_offset,
                                      "the fetch offset is past the leader's log end")
            elif error == ErrorCode.FENCED_LEADER_EPOCH:
                log.info("%s-%d: leader %d has a newer epoch than %d; waiting for the metadata to change",
                         partition.topic, partition.index, self.leader_id, partition.leader_epoch)
                self.remove(partition)
            else:
                backoff_s = self.config["replica.fetch.backoff.ms"] / 1000
                if error in NOT_YET_LEADING:
                    tries = self._not_yet.get(key, 0)
                    self._not_yet[key] = tries + 1
                    backoff_s = min(backoff_s, FIRST_RETRY_S * 2 ** min(tries, 20))
                log.log(logging.DEBUG if backoff_s < 0.5 else logging.INFO,
                        "%s-%d: leader %d answers %s; asking again in %.2fs", partition.topic,
                        partition.index, self.leader_id, ErrorCode(error).name, backoff_s)
                self._delayed[key] = trio.current_time() + backoff_s
        except LogError as e:
            if e.code == ErrorCode.KAFKA_STORAGE_ERROR:
                # A full (or failing) log dir: keep the partition and ask again after the backoff, so
                # replication resumes by itself once there is room; the leader drops this replica from
                # the ISR meanwhile, as it lags.
                if self._dir_failures is not None:
                    self._dir_failures.write_failed(partition.log_dir, e.message)
                self._delayed[key] = trio.current_time() + self.config["replica.fetch.backoff.ms"] / 1000
                return
            log.error("%s-%d: replicating from broker %d failed: %s", partition.topic, partition.index,
                      self.leader_id, e)
            self.remove(partition)

    def _throttled(self, partition: Partition) -> bool:
        assert self._quota is not None
        return self.config.node_id not in partition.isr and self._quota.is_throttled(partition.topic,
                                                                                    partition.index)

    def _truncate_to(self, partition: Partition, offset: int, fetch_offset: int, why: str) -> None:
        new_end = partition.truncate_to(min(offset, fetch_offset))
        log.warning("%s-%d: %s (leader %d): truncated from %d to %d and fetching from there", partition.topic,
                    partition.index, why, self.leader_id, fetch_offset, new_end)

    def _truncate_to_divergence(self, partition: Partition, epoch: int, end_offset: int) -> None:
        """Truncate to where this log and the leader's part: the end of ``epoch`` on the leader, or on
        this replica if it ends sooner here."""
        local_epoch, local_end = partition.local_end_offset_for_epoch(epoch)
        target = min(end_offset, local_end) if local_epoch == epoch else end_offset
        before = partition.log_end_offset
        new_end = partition.truncate_to(target)
        log.info("%s-%d: truncated from %d to %d, where it diverges from leader %d (epoch %d ends at %d)",
                 partition.topic, partition.index, before, new_end, self.leader_id, epoch, end_offset)
