"""Which partitions of a coordinator's internal topic (``__consumer_offsets`` for groups,
``__transaction_state`` for transactions) this broker coordinates, as Kafka's coordinators follow
leadership of them.

When this broker starts leading one, the partition is replayed on a worker thread; requests for
its keys wait up to a second for that, then get COORDINATOR_LOAD_IN_PROGRESS.  Once replayed, the
coordinator takes what was read (``loaded``) and the partition is owned, with the leader epoch it
was loaded at as its coordinator epoch.  When the broker stops leading it, the coordinator drops
its state (``dropped``) and its keys get NOT_COORDINATOR.  A load overtaken by a later change of
leadership is thrown away.  Everything here runs on the Trio thread.

For the tests only (undocumented, not a broker setting): while the file named by env
``PYKAFKAD_TEST_HOLD_COORDINATOR_LOADS`` exists, loads wait before they read, so a test can see
what a partition being loaded is answered without racing a load of milliseconds.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

import trio

from pykafkad._rust_log import LogError
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad._rust_log import PartitionLog
    from pykafkad.replica.partition import Partition
    from pykafkad.replica.replica_manager import ReplicaManager

log = logging.getLogger(__name__)

# A request for a key whose partition is being loaded waits this long before it is answered
# COORDINATOR_LOAD_IN_PROGRESS (a partition just created, or a small one, loads in milliseconds).
LOAD_WAIT_S = 1.0

# The test harness's hold on loads (see the module docstring), and how often it is looked at.
HOLD_LOADS_ENV = "PYKAFKAD_TEST_HOLD_COORDINATOR_LOADS"
HOLD_POLL_S = 0.05

T = TypeVar("T")


async def _test_hold() -> None:
    hold = os.environ.get(HOLD_LOADS_ENV)
    while hold and os.path.exists(hold):
        await trio.sleep(HOLD_POLL_S)


class CoordinatorPartitions(Generic[T]):
    """The partitions of ``topic`` this broker coordinates, and those being loaded."""

    def __init__(self, topic: str, read: Callable[[PartitionLog], T],
                 loaded: Callable[[Partition, T, int], None], dropped: Callable[[int], None]) -> None:
        self.topic = topic
        self._read = read
        self._loaded = loaded
        self._dropped = dropped
        # Owned partition -> its coordinator epoch; partitions being loaded (set when done).
        self._owned: dict[int, int] = {}
        self._loading: dict[int, trio.Event] = {}
        self._nursery: trio.Nursery | None = None

    def epoch(self, index: int) -> int | None:
        """The coordinator epoch of an owned partition, else None."""
        return self._owned.get(index)

    def owns(self, index: int) -> bool:
        return index in self._owned

    async def load_led(self, nursery: trio.Nursery, replicas: ReplicaManager) -> None:
        """At start-up: load every partition this broker leads, and follow leadership from now on."""
        self._nursery = nursery
        for partition in replicas.partitions():
            if partition.topic == self.topic and partition.is_leader:
                self._begin_load(partition)
        for done in list(self._loading.values()):
            await done.wait()

    def on_leadership(self, partition: Partition, leads: bool) -> None:
        """The replica manager's news that this broker started or stopped leading ``partition``."""
        if partition.topic != self.topic:
            return
        if not leads:
            self.resign(partition.index)
        elif self._nursery is not None:  # before ``load_led``, that loads what this broker leads
            self._begin_load(partition)

    def _begin_load(self, partition: Partition) -> None:
        assert self._nursery is not None
        self.resign(partition.index)
        done = trio.Event()
        self._loading[partition.index] = done
        self._nursery.start_soon(self._load, partition, done, name=f"load {self.topic}-{partition.index}")

    async def _load(self, partition: Partition, done: trio.Event) -> None:
        index = partition.index
        await _test_hold()
        try:
            data = await trio.to_thread.run_sync(self._read, partition.log)
        except (LogError, OSError, ValueError) as e:
            # Not owned, so its keys' requests get NOT_COORDINATOR until leadership changes.
            log.error("loading %s-%d failed: %s", self.topic, index, e)
            if self._loading.get(index) is done:
                del self._loading[index]
            done.set()
            return
        if self._loading.get(index) is not done or not partition.is_leader:
            done.set()
            return  # resigned (or elected again) meanwhile: that took over
        epoch = partition.leader_epoch
        self._loaded(partition, data, epoch)
        del self._loading[index]
        self._owned[index] = epoch
        done.set()

    def resign(self, index: int) -> None:
        """Stop coordinating partition ``index``'s keys: the coordinator drops their state."""
        self._owned.pop(index, None)
        loading = self._loading.pop(index, None)
        if loading is not None:
            loading.set()
        self._dropped(index)

    async def loads_finished(self) -> bool:
        """Whether no partition is being loaded, after waiting a little (as ``check``) for the loads
        under way."""
        with trio.move_on_after(LOAD_WAIT_S):
            for done in list(self._loading.values()):
                await done.wait()
        return not self._loading

    async def check(self, index: int) -> ErrorCode | None:
        """None when this broker coordinates partition ``index``'s keys now (after waiting a little
        for a load under way), else the error to answer."""
        loading = self._loading.get(index)
        if loading is not None:
            with trio.move_on_after(LOAD_WAIT_S):
                await loading.wait()
            if index in self._loading:
                return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        return None if index in self._owned else ErrorCode.NOT_COORDINATOR
