"""Which registry instance on a topic takes the writes: the primary, chosen through a Kafka consumer
group as Confluent's registry chooses its leader, so it works on any Kafka cluster.

Every instance joins the group ``schema-registry-<topic>`` subscribed to its one-partition topic,
with the partition paused (nothing is fetched): the member the group assigns the partition to is
the primary.  The group coordinator does the rest: a primary that stops heartbeating (killed,
partitioned away) is dropped after the session timeout and the partition goes to another member.
Each member's ``client.id`` carries the URL it answers on, so the others find the primary by
describing the group.

The election only decides who should write: every write is still a transaction of the shared
transactional id (``schemas_topic``), so two instances that both believe they are primary for a
moment cannot hand out one id twice.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import trio
from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

log = logging.getLogger(__name__)

CLIENT_ID_PREFIX = "pykafkad-schema-registry "
SESSION_TIMEOUT_MS = 10_000
POLL_S = 0.2
# How long the primary found by describing the group is trusted before it is looked up again.
PRIMARY_CACHE_S = 2.0


class PrimaryElection:
    def __init__(self, client: dict[str, Any], topic: str, url: str) -> None:
        self.client = {"logger": logging.getLogger("librdkafka"), **client}
        self.topic = topic
        self.group_id = f"schema-registry-{topic}"
        self.url = url
        self.is_primary = False
        self._stop = threading.Event()
        self._found: tuple[float, str | None] | None = None

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Take part in the election until cancelled."""
        member = threading.Thread(target=self._member, name="schema-registry-election", daemon=True)
        member.start()
        task_status.started()
        try:
            await trio.sleep_forever()
        finally:
            self._stop.set()
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(member.join, 5.0)

    def _member(self) -> None:
        # Sticky: an instance that joins (or restarts elsewhere) leaves the partition, and so the
        # primary, where it is; with range the member id that sorts first would take it each time.
        consumer = Consumer({**self.client, "group.id": self.group_id, "client.id": CLIENT_ID_PREFIX + self.url,
                             "enable.auto.commit": False, "session.timeout.ms": SESSION_TIMEOUT_MS,
                             "heartbeat.interval.ms": SESSION_TIMEOUT_MS // 10,
                             "partition.assignment.strategy": "cooperative-sticky"})

        def ours(partitions: list[TopicPartition]) -> bool:
            return any(p.topic == self.topic and p.partition == 0 for p in partitions)

        # Cooperative rebalancing: each callback names only the partitions added or taken away.
        def assigned(c: Consumer, partitions: list[TopicPartition]) -> None:
            # Assigned here, so that the pause holds: nothing of the topic is fetched.
            c.incremental_assign(partitions)
            c.pause(partitions)
            if ours(partitions) and not self.is_primary:
                log.info("schema registry: now the primary of %s", self.topic)
                self.is_primary = True
            self._found = None

        def revoked(_c: Consumer, partitions: list[TopicPartition]) -> None:
            if ours(partitions) and self.is_primary:
                log.info("schema registry: no longer the primary of %s", self.topic)
                self.is_primary = False
            self._found = None

        consumer.subscribe([self.topic], on_assign=assigned, on_revoke=revoked, on_lost=revoked)
        try:
            while not self._stop.is_set():
                consumer.poll(POLL_S)
        finally:
            self.is_primary = False
            consumer.close()

    async def primary_url(self) -> str | None:
        """The URL of the primary, if there is one and it is not this instance."""
        if self.is_primary:
            return None
        found = self._found
        if found is None or time.monotonic() - found[0] > PRIMARY_CACHE_S:
            url = await trio.to_thread.run_sync(self._describe)
            found = self._found = (time.monotonic(), url)
        return found[1] if found[1] != self.url else None

    def forget_primary(self) -> None:
        """A forward to the primary failed: look it up again next time."""
        self._found = None

    def _describe(self) -> str | None:
        admin = AdminClient(self.client)
        try:
            described = admin.describe_consumer_groups([self.group_id])[self.group_id].result(10)
        except KafkaException as e:
            log.warning("schema registry: cannot describe group %s: %s", self.group_id, e.args[0].str())
            return None
        for member in described.members:
            partitions = member.assignment.topic_partitions if member.assignment else []
            if any(p.topic == self.topic and p.partition == 0 for p in partitions) \
                    and member.client_id.startswith(CLIENT_ID_PREFIX):
                return member.client_id.removeprefix(CLIENT_ID_PREFIX)
        return None
