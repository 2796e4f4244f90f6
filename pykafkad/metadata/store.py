"""The metadata store interface: a tree of versioned nodes, as ZooKeeper keeps them.

Everything the cluster agrees on (brokers, the controller, topics, partition states, configs) is
a node at a ZooKeeper path with Kafka's layout (``znodes.py``).  Two engines implement this
interface: ``LocalMetadataStore`` for a single broker (one file under the first log dir) and
``ZooKeeperMetadataStore`` (kazoo) for a cluster.  The rest of the broker does not know which.

What an engine gives:
- **Versions.** Each node has a version, bumped on every write; a write may name the version it
  expects (compare-and-set), and loses with ``BadVersionError`` if another writer came first.
- **Ephemeral nodes.** They live as long as this store's session (a broker registration, the
  controller's claim) and vanish when the broker dies.
- **Multi-node commits.** ``commit`` applies several writes all or none.
- **Watches.** A watch calls back, on the Trio thread, with a node's data or children now and
  after each change.  A callback always sees the latest state; changes in between may be merged,
  as ZooKeeper's watches merge them.
- **Bounded waits for clients.** In a task answering a client (``ANSWERING_CLIENT``), a read,
  write or commit gives up with ``StoreUnavailableError`` once the store has been unreachable for
  its connection timeout (at once when it already has been); elsewhere (the broker's own watches,
  elections, multi-reads) it waits for the store to return.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

# True in a connection's task (and the tasks it starts): a client waits on the answer, and would
# rather have REQUEST_TIMED_OUT than wait past its own timeout for an unreachable ZooKeeper.
ANSWERING_CLIENT: ContextVar[bool] = ContextVar("answering_client", default=False)


@dataclass(frozen=True)
class Node:
    """A node's data and its version (ZooKeeper's ``Stat.version``)."""

    data: bytes
    version: int


class StoreError(Exception):
    """A metadata store operation failed."""


class NoNodeError(StoreError):
    """The node (or, for a create, its parent) does not exist."""


class NodeExistsError(StoreError):
    """A create found the node already there."""


class BadVersionError(StoreError):
    """A conditional write or check found another version: someone else wrote first."""


class NotEmptyError(StoreError):
    """A delete found children under the node."""


class StoreUnavailableError(StoreError):
    """The store cannot be reached (ZooKeeper connection lost or session expired)."""


@dataclass(frozen=True)
class Create:
    path: str
    data: bytes
    ephemeral: bool = False


@dataclass(frozen=True)
class SetData:
    path: str
    data: bytes
    version: int = -1  # -1: whatever the version


@dataclass(frozen=True)
class Delete:
    path: str
    version: int = -1


@dataclass(frozen=True)
class Check:
    """Fails the commit unless ``path`` is at ``version``."""

    path: str
    version: int


Op = Create | SetData | Delete | Check

DataCallback = Callable[[Node | None], None]
ChildrenCallback = Callable[[list[str] | None], None]


class Watch(Protocol):
    def cancel(self) -> None: ...


class MetadataStore(Protocol):
    """A versioned tree of nodes with ephemerals, multi-node commits and watches."""

    async def start(self) -> None:
        """Connect (or load) and open this broker's session."""

    async def close(self) -> None:
        """End the session: its ephemeral nodes vanish, its watches stop."""

    async def get(self, path: str) -> Node | None: ...

    async def children(self, path: str) -> list[str] | None:
        """Child names, sorted, or None when ``path`` does not exist."""

    async def read_many(self, paths: list[str]) -> list[Node | None]:
        """Each node of ``paths`` (None when absent), read together: on ZooKeeper a few requests,
        not one per path.  Reads that the connection interrupts are made again once it is back."""

    async def create(self, path: str, data: bytes, ephemeral: bool = False) -> None:
        """Create ``path``, and any missing parents as empty persistent nodes; NodeExistsError if there."""

    async def set(self, path: str, data: bytes, version: int = -1) -> int:
        """Replace ``path``'s data if it is at ``version`` (-1: any); returns the new version."""

    async def delete(self, path: str, version: int = -1, recursive: bool = False) -> None: ...

    async def commit(self, ops: list[Op]) -> None:
        """Apply ``ops`` all or none, in order; raises the error of the first that fails."""

    def commits_for(self, ops: list[Op]) -> list[list[Op]]:
        """``ops`` cut, in order, into commits that each fit one request to the engine: one commit
        unless they are larger than that (ZooKeeper refuses a request over ``jute.maxbuffer``)."""

    async def watch_data(self, path: str, callback: DataCallback) -> Watch:
        """Call ``callback`` with ``path``'s node (None when absent) now and after each change."""

    async def watch_children(self, path: str, callback: ChildrenCallback) -> Watch:
        """Call ``callback`` with ``path``'s sorted children (None when absent) now and after each change."""

    def on_new_session(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (on the Trio thread) when a lost session is replaced by a new one:
        this broker's ephemeral nodes are gone and must be made again."""

    @property
    def description(self) -> str:
        """Where the metadata is kept, for the start-up log line."""
