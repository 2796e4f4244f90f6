"""The controller election when the store fails half-way: a claim whose answer was lost, or whose
epoch bump failed, still makes this broker the controller (it was left holding the node that every
other broker defers to); and a winner that vanished before the cache saw it is raced again.

The store is the real single-node store, with one call made to fail as a dropped ZooKeeper
connection does; the cluster tests kill controllers for real.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

from pykafkad.controller.election import ControllerElection
from pykafkad.metadata import znodes
from pykafkad.metadata.cluster_metadata import ClusterMetadata
from pykafkad.metadata.local_store import LocalMetadataStore
from pykafkad.metadata.store import Node, NodeExistsError, StoreUnavailableError

# A guard against a hang, not a timing assertion: a correct election is done in milliseconds.
HANG_GUARD_S = 10


class _LosesOneAnswer(LocalMetadataStore):
    """Makes the change of the first call of ``method`` on ``path``, then answers as if the
    connection dropped before the reply arrived (or fails before it, with ``applied=False``)."""

    def __init__(self, log_dir: Path, method: str, path: str, applied: bool) -> None:
        super().__init__(log_dir)
        self._fault = (method, path)
        self._applied = applied
        self.failed = False

    async def _maybe_fail(self, method: str, path: str) -> None:
        if not self.failed and (method, path) == self._fault:
            self.failed = True
            raise StoreUnavailableError("ZooKeeper connection lost")

    async def create(self, path: str, data: bytes, ephemeral: bool = False) -> None:
        if not self._applied:
            await self._maybe_fail("create", path)
        await super().create(path, data, ephemeral=ephemeral)
        if self._applied:
            await self._maybe_fail("create", path)

    async def set(self, path: str, data: bytes, version: int = -1) -> int:
        if not self._applied:
            await self._maybe_fail("set", path)
        written = await super().set(path, data, version)
        if self._applied:
            await self._maybe_fail("set", path)
        return written


async def _elect(store: LocalMetadataStore, node_id: int = 1) -> ControllerElection:
    metadata = ClusterMetadata(store, node_id)
    election = ControllerElection(store, metadata, node_id)
    async with trio.open_nursery() as nursery:
        await metadata.start(nursery)
        await store.create(znodes.CONTROLLER_EPOCH, b"4")  # a cluster that had controllers before
        with trio.fail_after(HANG_GUARD_S):
            await nursery.start(election.run)
            await metadata.wait_for(lambda: election.is_controller)
        nursery.cancel_scope.cancel()
    metadata.close()
    return election


@pytest.mark.parametrize(("method", "path", "applied"), [
    ("create", znodes.CONTROLLER, True),
    ("set", znodes.CONTROLLER_EPOCH, False),
    ("set", znodes.CONTROLLER_EPOCH, True),
], ids=["claim-answer-lost", "epoch-bump-failed", "epoch-bump-answer-lost"])
def test_a_claim_interrupted_by_a_lost_connection_still_makes_the_broker_controller(
        tmp_path: Path, method: str, path: str, applied: bool) -> None:
    store = _LosesOneAnswer(tmp_path, method, path, applied)
    election = trio.run(_elect, store)
    assert store.failed
    # A bump whose answer was lost is made again: the epoch only ever grows.
    assert election.epoch == (6 if applied and method == "set" else 5)


class _LosesOneRace(LocalMetadataStore):
    """The first claim meets another broker's node, which is gone again before any notification
    of it: when the loser reads it (``gone_when_read``), or just after."""

    def __init__(self, log_dir: Path, gone_when_read: bool) -> None:
        super().__init__(log_dir)
        self._gone_when_read = gone_when_read
        self.lost = False
        self._read_after_losing = False

    async def create(self, path: str, data: bytes, ephemeral: bool = False) -> None:
        if path == znodes.CONTROLLER and not self.lost:
            self.lost = True
            raise NodeExistsError(path)
        await super().create(path, data, ephemeral=ephemeral)

    async def get(self, path: str) -> Node | None:
        if path == znodes.CONTROLLER and self.lost and not self._read_after_losing:
            self._read_after_losing = True
            if not self._gone_when_read:
                return Node(znodes.encode_controller(2, 0), 0)
        return await super().get(path)


@pytest.mark.parametrize("gone_when_read", [True, False], ids=["gone-when-read", "gone-after-read"])
def test_a_winner_gone_before_the_cache_saw_it_is_raced_again(tmp_path: Path, gone_when_read: bool) -> None:
    store = _LosesOneRace(tmp_path, gone_when_read)
    election = trio.run(_elect, store)
    assert store.lost
    assert election.epoch == 5


class _AnswersAfterTheCache(LocalMetadataStore):
    """Each write is made and its watches fire at once, but it is answered only once the cache has
    applied them: the order a loaded broker may see (the notification before the reply)."""

    metadata: ClusterMetadata | None = None

    async def set(self, path: str, data: bytes, version: int = -1) -> int:
        written = await super().set(path, data, version)
        assert self.metadata is not None
        await self.metadata.settled()
        return written


def test_a_task_waiting_for_this_broker_to_be_controller_wakes_when_the_cache_saw_it_first(tmp_path: Path) -> None:
    """The partition leadership loop waits on the cache for ``is_controller``, which also reads the
    election's own epoch: when the cache has shown the new controller and epoch before the
    election's write returned, the epoch's arrival must wake the waiter."""
    store = _AnswersAfterTheCache(tmp_path)

    async def main() -> None:
        metadata = store.metadata = ClusterMetadata(store, 1)
        election = ControllerElection(store, metadata, 1)
        async with trio.open_nursery() as nursery:
            await metadata.start(nursery)
            await store.create(znodes.CONTROLLER_EPOCH, b"4")
            became = trio.Event()

            async def controller_duties() -> None:
                await metadata.wait_for(lambda: election.is_controller)
                became.set()

            nursery.start_soon(controller_duties)
            await trio.testing.wait_all_tasks_blocked()
            with trio.fail_after(HANG_GUARD_S):
                await nursery.start(election.run)
                await became.wait()
            nursery.cancel_scope.cancel()
        metadata.close()

    trio.run(main)
