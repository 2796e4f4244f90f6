"""A broker's metadata cache learns every partition state written, through one watch per topic.

The cache does not watch each state node: each write of a state also writes the states it changed
to the topic's ``partitions`` node (``partition_state_writes``), which the cache watches.
These tests write states from another session, as another broker would, one by one faster than
the cache reads them (so watch events merge and the cache must notice the writes it missed), and
check that the cache ends with every partition's last state.  They run on the local file store
and on a real ZooKeeper.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
import trio

from cluster_tests.zookeeper_server import ZooKeeperServer
from pykafkad.metadata import znodes
from pykafkad.metadata.cluster_metadata import ClusterMetadata
from pykafkad.metadata.local_store import LocalMetadataStore
from pykafkad.metadata.model import PartitionInfo, TopicInfo
from pykafkad.metadata.partition_state_writes import state_writes, write_state
from pykafkad.metadata.store import BadVersionError, Create, MetadataStore, Op, SetData
from pykafkad.metadata.znodes import PartitionState
from pykafkad.metadata.zookeeper_store import ZooKeeperMetadataStore

_chroots = itertools.count(1)
PARTITIONS = 300
# (the writer's session, the cache's session): the same store for the local engine, which has one.
Sessions = Callable[[], tuple[MetadataStore, MetadataStore]]


@pytest.fixture(params=["local", "zookeeper"])
def sessions(request: pytest.FixtureRequest, tmp_path: Path) -> Sessions:
    if request.param == "local":
        def local() -> tuple[MetadataStore, MetadataStore]:
            store = LocalMetadataStore(tmp_path)
            return store, store
        return local
    zookeeper: ZooKeeperServer = request.getfixturevalue("zookeeper")
    connect = f"{zookeeper.connect}/notices-{next(_chroots)}"
    return lambda: (ZooKeeperMetadataStore(connect, 10000), ZooKeeperMetadataStore(connect, 10000))


def _topic_nodes(name: str, partitions: int) -> list[Op]:
    replicas = [[1, 2, 3] for _ in range(partitions)]
    ops: list[Op] = [Create(znodes.topic_config_path(name), znodes.encode_config({})),
                     Create(znodes.topic_path(name), znodes.encode_assignment(uuid.uuid4(), replicas)),
                     Create(znodes.partitions_path(name), b"")]
    for index in range(partitions):
        ops.append(Create(znodes.partition_path(name, index), b""))
        ops.append(Create(znodes.partition_state_path(name, index),
                          znodes.encode_partition_state(PartitionState(1, 0, [1, 2, 3], 1))))
    return ops


def _run(sessions: Sessions, body: Callable[[MetadataStore, ClusterMetadata, list], object]) -> None:
    async def main() -> None:
        writer, reader = sessions()
        await writer.start()
        if reader is not writer:
            await reader.start()
        cache = ClusterMetadata(reader, node_id=2)
        reported: list[tuple[TopicInfo, list[PartitionInfo]]] = []
        cache.partition_listeners.append(lambda topic, changed: reported.append((topic, list(changed))))
        try:
            async with trio.open_nursery() as nursery:
                with trio.fail_after(60):
                    await cache.start(nursery)
                    await body(writer, cache, reported)
                nursery.cancel_scope.cancel()
        finally:
            cache.close()
            if reader is not writer:
                await reader.close()
            await writer.close()

    trio.run(main)


def test_the_cache_ends_with_every_state_written_one_by_one_in_a_burst(sessions: Sessions) -> None:
    async def body(writer: MetadataStore, cache: ClusterMetadata, reported: list) -> None:
        await writer.commit(_topic_nodes("t", PARTITIONS))
        await cache.wait_for(lambda: "t" in cache.topics and len(cache.topics["t"].partitions) == PARTITIONS)
        assert all((p.leader, p.leader_epoch, p.isr, p.state_version) == (1, 0, [1, 2, 3], 0)
                   for p in cache.topics["t"].partitions)
        reported.clear()
        # Two rounds, each a write per partition as fast as the store takes them: the second round's
        # writes are conditional on the versions the first left.
        for version, leader in ((0, 2), (1, 3)):
            for index in range(PARTITIONS):
                await write_state(writer, "t", index, PartitionState(leader, version + 1, [leader], 1), version)

        def caught_up() -> bool:
            return all((p.leader, p.leader_epoch, p.isr, p.state_version) == (3, 2, [3], 2)
                       for p in cache.topics["t"].partitions)

        await cache.wait_for(caught_up)
        await cache.settled()
        assert caught_up()
        told = {p.index for _, changed in reported for p in changed if p.leader == 3}
        assert told == set(range(PARTITIONS)), "a listener was not told of a partition's last state"

    _run(sessions, body)


def test_a_write_of_several_states_is_read_with_its_partitions_named(sessions: Sessions) -> None:
    """One commit of several states (the controller after a broker left) and a write that loses
    to it: the cache shows the commit, and the losing write changes nothing."""
    async def body(writer: MetadataStore, cache: ClusterMetadata, reported: list) -> None:
        await writer.commit(_topic_nodes("t", 10))
        await cache.wait_for(lambda: "t" in cache.topics and len(cache.topics["t"].partitions) == 10)
        await writer.commit(state_writes("t", {i: (PartitionState(2, 1, [2, 3], 1), 0) for i in (1, 4, 7)}))
        with pytest.raises(BadVersionError):
            await write_state(writer, "t", 4, PartitionState(1, 0, [1], 1), 0)
        await cache.wait_for(lambda: all(cache.topics["t"].partitions[i].leader == 2 for i in (1, 4, 7)))
        await cache.settled()
        partitions = cache.topics["t"].partitions
        assert [p.leader for p in partitions] == [1, 2, 1, 1, 2, 1, 1, 2, 1, 1]
        assert partitions[4].isr == [2, 3] and partitions[4].state_version == 1
        assert {p.index for _, changed in reported for p in changed if p.leader == 2} == {1, 4, 7}
        notice = await writer.get(znodes.partitions_path("t"))
        assert notice is not None and znodes.decode_state_notice(notice.data) == {
            i: (PartitionState(2, 1, [2, 3], 1), 1) for i in (1, 4, 7)}

    _run(sessions, body)


def test_a_new_topic_is_shown_from_its_creation_notice_and_added_partitions_are_read(sessions: Sessions) -> None:
    """The controller writes a new topic's ``partitions`` node with the states it creates: a cache
    shows the topic from it without reading a state node, and reads only the partitions added
    after (their assignment names them; the node, unchanged, still covers the first ten)."""
    async def body(writer: MetadataStore, cache: ClusterMetadata, reported: list) -> None:
        read: list[str] = []
        read_many = cache.store.read_many

        async def counted(paths: list[str]) -> list:
            read.extend(paths)
            return await read_many(paths)

        cache.store.read_many = counted  # type: ignore[method-assign]
        ops = _topic_nodes("t", 10)
        ops[2] = Create(znodes.partitions_path("t"), znodes.encode_created_notice(1, [[1, 2, 3]] * 10))
        await writer.commit(ops)
        await cache.wait_for(lambda: "t" in cache.topics and len(cache.topics["t"].partitions) == 10)
        assert all((p.leader, p.leader_epoch, p.isr, p.controller_epoch, p.state_version) == (1, 0, [1, 2, 3], 1, 0)
                   for p in cache.topics["t"].partitions)
        assert not [p for p in read if p.startswith(znodes.partitions_path("t"))]

        topic_id = cache.topics["t"].topic_id
        added: list[Op] = []
        for index in range(10, 15):
            added.append(Create(znodes.partition_path("t", index), b""))
            added.append(Create(znodes.partition_state_path("t", index),
                                znodes.encode_partition_state(PartitionState(2, 0, [2, 3, 1], 1))))
        await writer.commit([*added, SetData(znodes.topic_path("t"),
                                             znodes.encode_assignment(topic_id, [[1, 2, 3]] * 10 + [[2, 3, 1]] * 5))])
        await cache.wait_for(lambda: len(cache.topics["t"].partitions) == 15)
        assert [p.leader for p in cache.topics["t"].partitions] == [1] * 10 + [2] * 5
        assert sorted(p for p in read if p.startswith(znodes.partitions_path("t"))) == sorted(
            znodes.partition_state_path("t", i) for i in range(10, 15))

    _run(sessions, body)
