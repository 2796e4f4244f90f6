"""The cluster metadata store on ZooKeeper, through kazoo.

kazoo is a blocking client with its own threads: each call runs on a worker thread (one made for a
client's request gives up once ZooKeeper has been unreachable for the connection timeout), and each
watch notification is handed to the Trio thread with the run's ``TrioToken``, in the order kazoo
delivered it.  A data watch is ``ZooKeeperDataWatch`` (kazoo's ``DataWatch`` recipe without a
thread per read), a children watch kazoo's ``ChildrenWatch``; both re-arm after each event and
report the latest state.

``zookeeper.connect`` may end in a chroot (``host:2181/kafka``); the chroot is made if missing, as
Kafka does.  A session that expires (the broker was paused or cut off longer than
``zookeeper.session.timeout.ms``) loses this broker's ephemeral nodes; kazoo opens a new one and
the ``on_new_session`` callbacks make them again.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any

import trio
from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import (
    BadVersionError as KazooBadVersion,
)
from kazoo.exceptions import (
    ConnectionLoss,
    KazooException,
    RolledBackError,
    RuntimeInconsistency,
    SessionExpiredError,
)
from kazoo.exceptions import (
    NodeExistsError as KazooNodeExists,
)
from kazoo.exceptions import (
    NoNodeError as KazooNoNode,
)
from kazoo.exceptions import (
    NotEmptyError as KazooNotEmpty,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.recipe.watchers import ChildrenWatch

from pykafkad.metadata.store import (
    ANSWERING_CLIENT,
    BadVersionError,
    Check,
    ChildrenCallback,
    Create,
    DataCallback,
    Delete,
    Node,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    Op,
    SetData,
    StoreError,
    StoreUnavailableError,
)
from pykafkad.metadata.zookeeper_data_watch import ZooKeeperDataWatch
from pykafkad.metadata.zookeeper_multi_read import MultiRead

log = logging.getLogger(__name__)

# Paths per multi-read request: 1,000 partition states answer in about 200 KB, well inside
# ZooKeeper's default 1 MB packet limit (jute.maxbuffer).
_READS_PER_REQUEST = 1000
# After the connection dropped under a read, the wait before it is sent again.
_READ_AGAIN_S = 0.1
# How often a client's call checks whether ZooKeeper has been unreachable too long.
_UNREACHABLE_CHECK_S = 0.25
# ZooKeeper drops the connection that sends a request larger than its jute.maxbuffer (1 MB unless
# raised on every server): a commit larger than this is cut into several requests.  Each op is
# counted with its path (chroot included), its data and an allowance for its header and ACL.
MAX_COMMIT_BYTES = 768 * 1024
_OP_ALLOWANCE_BYTES = 64

# kazoo's exceptions as the store's.
_ERRORS: list[tuple[type[Exception], type[StoreError]]] = [
    (KazooNoNode, NoNodeError),
    (KazooNodeExists, NodeExistsError),
    (KazooBadVersion, BadVersionError),
    (KazooNotEmpty, NotEmptyError),
    (ConnectionLoss, StoreUnavailableError),
    (SessionExpiredError, StoreUnavailableError),
    (KazooTimeoutError, StoreUnavailableError),
]


def _translated(e: Exception) -> StoreError:
    for kazoo_type, ours in _ERRORS:
        if isinstance(e, kazoo_type):
            return ours(str(e) or type(e).__name__)
    return StoreError(f"{type(e).__name__}: {e}")


class _KazooWatch:
    """Cancelling stops deliveries at once; kazoo drops the recipe at its next event."""

    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ZooKeeperMetadataStore:
    """The node tree in ZooKeeper at ``connect`` (``host:port[,host:port...][/chroot]``)."""

    def __init__(self, connect: str, session_timeout_ms: int, connection_timeout_ms: int | None = None) -> None:
        self.connect = connect
        self._session_timeout_s = session_timeout_ms / 1000
        self._connection_timeout_s = (connection_timeout_ms or session_timeout_ms) / 1000
        self._zk = KazooClient(hosts=connect, timeout=self._session_timeout_s)
        self._token: trio.lowlevel.TrioToken | None = None
        self._session_callbacks: list[Callable[[], None]] = []
        self._lost = False
        # When the connection was lost (time.monotonic), None while connected.
        self._down_since: float | None = None
        # Set by close: the session kazoo then reports lost is ours to end, not an expiry.
        self._closing = False

    @property
    def description(self) -> str:
        return f"ZooKeeper {self.connect}"

    # -- lifecycle --------------------------------------------------------------------------------

    async def start(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        hosts, slash, chroot = self.connect.partition("/")
        if chroot:
            # The chroot must exist before a chrooted session can use it.
            root = KazooClient(hosts=hosts, timeout=self._session_timeout_s)
            await self._connect(root)
            try:
                await self._call(root.ensure_path, "/" + chroot)
            finally:
                await self._call(root.stop)
                await self._call(root.close)
        await self._connect(self._zk)
        self._zk.add_listener(self._state_changed)

    async def _connect(self, client: KazooClient) -> None:
        """Wait for ``client``'s first session; a stop signal during the wait (a broker cancelled while it
        starts) does not wait out zookeeper.connection.timeout.ms: the attempt is left to fail."""
        try:
            await trio.to_thread.run_sync(functools.partial(client.start, timeout=self._connection_timeout_s),
                                          abandon_on_cancel=True)
        except (KazooException, KazooTimeoutError) as e:
            raise _translated(e) from e

    async def close(self) -> None:
        self._closing = True
        await trio.to_thread.run_sync(self._zk.stop)
        await trio.to_thread.run_sync(self._zk.close)

    def on_new_session(self, callback: Callable[[], None]) -> None:
        self._session_callbacks.append(callback)

    def _state_changed(self, state: str) -> None:
        """kazoo's connection listener, on kazoo's thread: must not block."""
        if state == KazooState.CONNECTED:
            self._down_since = None
        elif self._down_since is None:
            self._down_since = time.monotonic()
        if self._closing:
            return
        if state == KazooState.LOST:
            self._lost = True
            log.warning("ZooKeeper session expired: this broker's registrations are gone until a new session")
        elif state == KazooState.SUSPENDED:
            log.warning("ZooKeeper connection lost; reconnecting")
        elif state == KazooState.CONNECTED and self._lost:
            self._lost = False
            log.info("new ZooKeeper session")
            for callback in self._session_callbacks:
                self._deliver(callback)

    # -- calls ------------------------------------------------------------------------------------

    def _unreachable_for(self) -> float:
        """Seconds since the connection was lost; 0 while connected."""
        down_since = self._down_since
        return 0.0 if down_since is None else time.monotonic() - down_since

    async def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)``, a blocking kazoo call, on a worker thread.  kazoo queues a call
        made while disconnected until it reconnects, however long that takes: the broker's own
        calls wait for that, but one made for a client's request gives up once ZooKeeper has been
        unreachable for the connection timeout (StoreUnavailableError), leaving its thread to
        kazoo's answer or the session's end.  That thread is one of its own, not one of Trio's
        limited worker threads, which the logs need."""
        call = functools.partial(fn, *args, **kwargs)
        try:
            if not ANSWERING_CLIENT.get():
                return await trio.to_thread.run_sync(call)
            return (await self._bounded(call)).unwrap()
        except (KazooException, KazooTimeoutError) as e:
            raise _translated(e) from e

    async def _bounded(self, call: Callable[[], Any]) -> Any:
        """``call``'s outcome (Trio's ``outcome.Outcome``), or StoreUnavailableError.  A call made once
        ZooKeeper has been unreachable that long fails at once, leaving no thread behind: a caller
        that retries (an ISR expansion proposed again on the next fetch) would otherwise leave one
        per try until ZooKeeper returns."""
        self._check_reachable()
        token = trio.lowlevel.current_trio_token()
        done = trio.Event()
        answers: list[Any] = []

        def deliver(answer: Any) -> None:
            answers.append(answer)
            try:
                token.run_sync_soon(done.set)
            except trio.RunFinishedError:
                pass  # the broker has stopped: nobody waits for it

        trio.lowlevel.start_thread_soon(call, deliver)
        while not done.is_set():
            with trio.move_on_after(_UNREACHABLE_CHECK_S):
                await done.wait()
            if not done.is_set():
                self._check_reachable()
        return answers[0]

    def _check_reachable(self) -> None:
        down_for = self._unreachable_for()
        if down_for >= self._connection_timeout_s:
            raise StoreUnavailableError(f"ZooKeeper at {self.connect} has been unreachable for {down_for:.1f}s")

    async def get(self, path: str) -> Node | None:
        try:
            data, stat = await self._call(self._zk.get, path)
        except NoNodeError:
            return None
        return Node(data or b"", stat.version)

    async def children(self, path: str) -> list[str] | None:
        try:
            return sorted(await self._call(self._zk.get_children, path))
        except NoNodeError:
            return None

    async def read_many(self, paths: list[str]) -> list[Node | None]:
        nodes: list[Node | None] = []
        for start in range(0, len(paths), _READS_PER_REQUEST):
            nodes += await self._multi_read(paths[start:start + _READS_PER_REQUEST])
        return nodes

    async def _multi_read(self, paths: list[str]) -> list[Node | None]:
        root = (self._zk.chroot or "").rstrip("/")
        request = MultiRead([root + path for path in paths])
        token = self._token
        assert token is not None
        while True:
            result = self._zk.handler.async_result()
            answered = trio.Event()

            def wake(_result: Any, answered: trio.Event = answered) -> None:
                try:
                    token.run_sync_soon(answered.set)
                except trio.RunFinishedError:
                    pass

            try:
                self._zk._call(request, result)  # noqa: SLF001 - kazoo has no public call for a request of its own
            except (AttributeError, OSError) as e:
                # kazoo's call on a connection closing under it: its socket is already gone.
                raise StoreUnavailableError(f"ZooKeeper connection closed: {e}") from e
            result.rawlink(wake)
            await answered.wait()
            try:
                answers = result.get_nowait()
            except (ConnectionLoss, SessionExpiredError) as e:
                # The connection dropped before the answer: read again on the next one (kazoo
                # reconnects on its own), unless this broker is stopping.
                if self._closing:
                    raise _translated(e) from e
                await trio.sleep(_READ_AGAIN_S)
                continue
            except (KazooException, KazooTimeoutError) as e:
                raise _translated(e) from e
            return [None if answer is None else Node(answer[0], answer[1].version) for answer in answers]

    async def create(self, path: str, data: bytes, ephemeral: bool = False) -> None:
        await self._call(self._zk.create, path, data, ephemeral=ephemeral, makepath=True)

    async def set(self, path: str, data: bytes, version: int = -1) -> int:
        stat = await self._call(self._zk.set, path, data, version=version)
        return stat.version

    async def delete(self, path: str, version: int = -1, recursive: bool = False) -> None:
        await self._call(self._zk.delete, path, version=version, recursive=recursive)

    def commits_for(self, ops: list[Op]) -> list[list[Op]]:
        _hosts, slash, chroot = self.connect.partition("/")
        root = len((slash + chroot).rstrip("/").encode())
        commits: list[list[Op]] = [[]]
        size = 0
        for op in ops:
            data = op.data if isinstance(op, (Create, SetData)) else b""
            op_bytes = _OP_ALLOWANCE_BYTES + root + len(op.path.encode()) + len(data)
            if commits[-1] and size + op_bytes > MAX_COMMIT_BYTES:
                commits.append([])
                size = 0
            commits[-1].append(op)
            size += op_bytes
        return commits

    async def commit(self, ops: list[Op]) -> None:
        def run() -> list:
            transaction = self._zk.transaction()
            for op in ops:
                if isinstance(op, Create):
                    transaction.create(op.path, op.data, ephemeral=op.ephemeral)
                elif isinstance(op, SetData):
                    transaction.set_data(op.path, op.data, version=op.version)
                elif isinstance(op, Delete):
                    transaction.delete(op.path, version=op.version)
                elif isinstance(op, Check):
                    transaction.check(op.path, op.version)
            return transaction.commit()

        results = await self._call(run)
        # A failed multi answers each op: the failing one with its error, the rest with
        # RolledBackError (or RuntimeInconsistency after it).
        for result in results:
            if isinstance(result, Exception) and not isinstance(result, (RolledBackError, RuntimeInconsistency)):
                raise _translated(result)
        for result in results:
            if isinstance(result, Exception):
                raise StoreError(f"metadata commit rolled back: {type(result).__name__}")

    # -- watches ----------------------------------------------------------------------------------

    def _deliver(self, callback: Callable[..., None], *args: Any) -> None:
        """Run ``callback(*args)`` on the Trio thread, after earlier deliveries."""
        assert self._token is not None

        def run() -> None:
            # An exception here would end the whole Trio run: a watcher's bug is logged instead.
            try:
                callback(*args)
            except Exception:  # noqa: BLE001
                log.exception("metadata watch callback failed")

        try:
            self._token.run_sync_soon(run)
        except trio.RunFinishedError:
            pass

    async def watch_data(self, path: str, callback: DataCallback) -> _KazooWatch:
        """Returns once the node's first state has been handed to ``callback`` (after it, in
        order, come its changes)."""
        watch = _KazooWatch()
        first = trio.Event()
        failure: list[Exception] = []

        def changed(data: bytes | None, stat: Any) -> bool | None:
            if watch.cancelled:
                return False
            node = None if stat is None else Node(data or b"", stat.version)
            self._deliver(lambda: None if watch.cancelled else callback(node))
            if not first.is_set():
                self._deliver(first.set)
            return None

        def failed(error: Exception) -> None:
            failure.append(error)
            self._deliver(first.set)

        ZooKeeperDataWatch(self._zk, path, changed, failed).start()
        await first.wait()
        if failure:
            raise _translated(failure[0])
        return watch

    async def watch_children(self, path: str, callback: ChildrenCallback) -> _KazooWatch:
        watch = _KazooWatch()

        def changed(children: list[str]) -> bool | None:
            if watch.cancelled:
                return False
            kids = sorted(children)
            self._deliver(lambda: None if watch.cancelled else callback(kids))
            return None

        # Callers watch the children of nodes that always exist (znodes.PERSISTENT_PATHS).
        await self._call(ChildrenWatch, self._zk, path, changed)
        return watch
