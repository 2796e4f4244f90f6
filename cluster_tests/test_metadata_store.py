"""The two metadata store engines behave alike: versions, compare-and-set, ephemerals, commits, watches.

Each test runs against the local file engine and against a real ZooKeeper (on a chroot of its
own), so what the broker relies on holds on both.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import trio

from cluster_tests.zookeeper_server import ZooKeeperServer
from pykafkad.metadata.local_store import LocalMetadataStore
from pykafkad.metadata.store import (
    BadVersionError,
    Check,
    Create,
    Delete,
    MetadataStore,
    Node,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    SetData,
)
from pykafkad.metadata.zookeeper_store import ZooKeeperMetadataStore

_chroots = itertools.count(1)
Opener = Callable[[], MetadataStore]


@pytest.fixture(params=["local", "zookeeper"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    """Opens a new session on the same tree (a second broker, or the same broker restarted)."""
    if request.param == "local":
        return lambda: LocalMetadataStore(tmp_path)
    zookeeper: ZooKeeperServer = request.getfixturevalue("zookeeper")
    connect = f"{zookeeper.connect}/store-{next(_chroots)}"
    return lambda: ZooKeeperMetadataStore(connect, 4000)


def run(open_store: Opener, body: Callable[[MetadataStore], Awaitable[None]]) -> None:
    async def main() -> None:
        store = open_store()
        await store.start()
        try:
            with trio.fail_after(30):
                await body(store)
        finally:
            await store.close()

    trio.run(main)


def test_versions_and_compare_and_set(open_store: Opener) -> None:
    async def body(store: MetadataStore) -> None:
        await store.create("/a/b", b"one")
        assert await store.get("/a/b") == Node(b"one", 0)
        assert await store.get("/a") is not None  # parents are made
        with pytest.raises(NodeExistsError):
            await store.create("/a/b", b"again")
        assert await store.set("/a/b", b"two", version=0) == 1
        with pytest.raises(BadVersionError):
            await store.set("/a/b", b"stale", version=0)
        assert await store.get("/a/b") == Node(b"two", 1)
        with pytest.raises(NoNodeError):
            await store.set("/a/missing", b"x")
        with pytest.raises(NotEmptyError):
            await store.delete("/a")
        await store.delete("/a", recursive=True)
        assert await store.get("/a/b") is None
        assert await store.children("/a") is None

    run(open_store, body)


def test_a_commit_applies_all_or_nothing(open_store: Opener) -> None:
    async def body(store: MetadataStore) -> None:
        await store.create("/t", b"")
        await store.create("/t/x", b"x")
        with pytest.raises(BadVersionError):
            await store.commit([Create("/t/y", b"y"), SetData("/t/x", b"x2"), Check("/t/x", 5)])
        assert await store.children("/t") == ["x"]
        assert await store.get("/t/x") == Node(b"x", 0)
        await store.commit([Create("/t/y", b"y"), Create("/t/y/z", b"z"), SetData("/t/x", b"x2", version=0),
                            Check("/t/x", 1)])
        assert await store.children("/t") == ["x", "y"]
        assert await store.get("/t/y/z") == Node(b"z", 0)
        with pytest.raises(NodeExistsError):
            await store.commit([Delete("/t/y/z"), Create("/t/x", b"")])
        assert await store.get("/t/y/z") is not None

    run(open_store, body)


def test_persistent_nodes_outlive_the_session_and_ephemeral_ones_do_not(open_store: Opener) -> None:
    async def body(store: MetadataStore) -> None:
        await store.create("/kept", b"k")
        await store.create("/session/only", b"e", ephemeral=True)
        assert await store.get("/session/only") == Node(b"e", 0)

    run(open_store, body)

    async def after(store: MetadataStore) -> None:
        assert await store.get("/kept") == Node(b"k", 0)
        assert await store.get("/session/only") is None

    run(open_store, after)


def test_watches_report_the_state_now_and_after_each_change(open_store: Opener) -> None:
    async def body(store: MetadataStore) -> None:
        await store.create("/w", b"")
        data: list[Node | None] = []
        kids: list[list[str] | None] = []
        changed = trio.Event()

        def on_data(node: Node | None) -> None:
            data.append(node)
            changed.set()

        def on_children(children: list[str] | None) -> None:
            kids.append(children)
            changed.set()

        data_watch = await store.watch_data("/w/n", on_data)
        await store.watch_children("/w", on_children)
        assert data == [None] and kids == [[]]

        async def until(predicate: Callable[[], bool]) -> None:
            nonlocal changed
            while not predicate():
                changed = trio.Event()
                await changed.wait()

        await store.create("/w/n", b"1")
        await until(lambda: data[-1] == Node(b"1", 0) and kids[-1] == ["n"])
        await store.set("/w/n", b"2")
        await until(lambda: data[-1] == Node(b"2", 1))
        data_watch.cancel()
        await store.delete("/w/n")
        await until(lambda: kids[-1] == [])
        assert data[-1] == Node(b"2", 1), "a cancelled watch reported again"

    run(open_store, body)


def test_read_many_answers_every_path_in_order_with_none_for_a_missing_one(open_store: Opener) -> None:
    """More paths than one ZooKeeper multi-read carries, under a chroot: each node at its version."""
    async def body(store: MetadataStore) -> None:
        await store.create("/r", b"")
        count = 2500
        for start in range(0, count, 500):
            await store.commit([Create(f"/r/{i}", str(i).encode()) for i in range(start, start + 500)])
        await store.set("/r/7", b"seven")
        paths = [f"/r/{i}" for i in range(count)]
        paths.insert(3, "/r/missing")
        nodes = await store.read_many(paths)
        assert len(nodes) == count + 1
        assert nodes[3] is None
        del nodes[3]
        assert nodes[7] == Node(b"seven", 1)
        assert all(nodes[i] == Node(str(i).encode(), 0) for i in range(count) if i != 7)
        assert await store.read_many([]) == []

    run(open_store, body)


def test_read_many_reads_again_after_the_connection_drops(zookeeper: ZooKeeperServer) -> None:
    """A read the connection loses under it is sent again on the next connection, not reported as
    failed: the metadata cache would otherwise miss the states it was reading."""
    connect = f"{zookeeper.connect}/store-{next(_chroots)}"
    store = ZooKeeperMetadataStore(connect, 10000)

    async def main() -> None:
        await store.start()
        try:
            with trio.fail_after(60):
                await store.commit([Create("/d", b""), *[Create(f"/d/{i}", b"x") for i in range(200)]])
                paths = [f"/d/{i}" for i in range(200)]
                results: list[list[Node | None]] = []

                async def read() -> None:
                    results.append(await store.read_many(paths))

                for attempt in range(5):
                    # The socket closed under the read: kazoo reconnects on the same session.
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(read)
                        store._zk._connection._socket.shutdown(socket.SHUT_RDWR)
                    assert results[attempt] == [Node(b"x", 0)] * 200
        finally:
            await store.close()

    trio.run(main)


def test_a_zookeeper_data_watch_reads_again_after_its_session_expires(zookeeper: ZooKeeperServer) -> None:
    """ZooKeeper drops a session's watches when it expires; the data watch reads the node again on
    the new session and reports what changed meanwhile (kazoo's recipe did; ours must too)."""
    from kazoo.client import KazooClient

    connect = f"{zookeeper.connect}/store-{next(_chroots)}"
    store = ZooKeeperMetadataStore(connect, 4000)
    other = KazooClient(hosts=connect)

    async def main() -> None:
        await store.start()
        await trio.to_thread.run_sync(other.start)
        try:
            with trio.fail_after(60):
                await store.create("/e/n", b"1")
                seen: list[Node | None] = []
                changed = trio.Event()

                def on_data(node: Node | None) -> None:
                    nonlocal changed
                    seen.append(node)
                    changed.set()
                    changed = trio.Event()

                await store.watch_data("/e/n", on_data)
                assert seen == [Node(b"1", 0)]
                new_session = trio.Event()
                store.on_new_session(new_session.set)
                # Another client on the same session id and password, closed: the session expires.
                session_id, password = store._zk.client_id
                thief = KazooClient(hosts=connect, client_id=(session_id, password))
                await trio.to_thread.run_sync(thief.start)
                await trio.to_thread.run_sync(thief.stop)
                await trio.to_thread.run_sync(thief.close)
                await new_session.wait()
                await trio.to_thread.run_sync(other.set, "/e/n", b"2")
                while seen[-1] != Node(b"2", 1):
                    await changed.wait()
        finally:
            await trio.to_thread.run_sync(other.stop)
            await store.close()

    trio.run(main)


def test_the_local_file_is_written_off_the_event_loop_and_a_change_returns_once_it_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The local engine writes its file on a worker thread: while a change's fsync is held back, other
    tasks run on; the change returns, and its watch fires, only once the file holds it; a second
    change waits behind it and lands after it."""
    release, writing = threading.Event(), threading.Event()
    real_fsync = os.fsync

    def held_fsync(fd: int) -> None:
        if not release.is_set():
            writing.set()
            assert release.wait(10), "the held fsync was never released: the event loop was blocked"
        real_fsync(fd)

    def saved(path: str) -> str:
        return json.loads((tmp_path / "pykafkad-cluster-metadata.json").read_text())["znodes"][path]["data"]

    async def main() -> None:
        store = LocalMetadataStore(tmp_path)
        await store.start()
        seen: list[bytes] = []
        await store.create("/a", b"1")
        await store.watch_data("/a", lambda node: seen.append(node.data if node else b""))
        monkeypatch.setattr(os, "fsync", held_fsync)
        first_done = trio.Event()

        async def first() -> None:
            await store.set("/a", b"2")
            first_done.set()

        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(first)
                # This task runs while the first change's file is being written.
                assert await trio.to_thread.run_sync(writing.wait, 10)
                assert not first_done.is_set() and seen == [b"1"] and saved("/a") == "1"
                nursery.start_soon(store.set, "/a", b"3")
                await trio.lowlevel.checkpoint()
                assert seen == [b"1"]
                release.set()
                await first_done.wait()
        assert seen == [b"1", b"2", b"3"] and saved("/a") == "3"
        await store.close()

    trio.run(main)
