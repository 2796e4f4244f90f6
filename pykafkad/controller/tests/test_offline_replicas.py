"""A broker's report of its replicas on failed log dirs and the controller's view of every broker's,
through a real metadata store (the local engine): the view follows each report, and a report
withdrawn, or lost with its broker's session, takes the broker's replicas out of the view."""

from __future__ import annotations

from pathlib import Path

import trio

from pykafkad.controller.offline_replicas import OfflineReplicas
from pykafkad.metadata.local_store import LocalMetadataStore
from pykafkad.replica.offline_replicas import OfflineReplicasReport, decode, encode, offline_replicas_path


def test_the_node_lists_the_replicas_by_topic() -> None:
    data = encode(["/b", "/a"], [("t", 3), ("s", 0), ("t", 1)])
    assert data == b'{"version":1,"log_dirs":["/a","/b"],"partitions":{"s":[0],"t":[1,3]}}'
    assert decode(data) == {("s", 0), ("t", 1), ("t", 3)}


def test_the_view_follows_each_brokers_report(tmp_path: Path) -> None:
    async def main() -> None:
        with trio.fail_after(10):
            await check()

    async def check() -> None:
        store = LocalMetadataStore(tmp_path)
        await store.start()
        view = OfflineReplicas(store)
        one, two = OfflineReplicasReport(store, 1), OfflineReplicasReport(store, 2)
        async with trio.open_nursery() as nursery:
            await nursery.start(view.run)
            assert not view.any()

            seen = view.generation
            assert await one.write(["/d1"], [("t", 0), ("t", 1)])
            await view.changed_since(seen)
            assert view.brokers("t", 0) == {1} and view.brokers("t", 2) == frozenset()

            seen = view.generation
            assert await two.write(["/d2"], [("t", 1)])
            await view.changed_since(seen)
            assert view.brokers("t", 1) == {1, 2}

            # The same report again writes nothing and changes nothing.
            seen = view.generation
            assert await one.write(["/d1"], [("t", 1), ("t", 0)])
            assert view.generation == seen

            assert await one.write([], [])
            assert await store.get(offline_replicas_path(1)) is None
            await view.changed_since(seen)
            assert view.brokers("t", 0) == frozenset() and view.brokers("t", 1) == {2}

            # Broker 2's node is ephemeral: gone with its session, its replicas leave the view.
            seen = view.generation
            await store.delete(offline_replicas_path(2))
            await view.changed_since(seen)
            assert not view.any()
            nursery.cancel_scope.cancel()
        await store.close()

    trio.run(main)
