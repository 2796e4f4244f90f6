"""The cluster's ACLs: kept in the metadata store where Kafka's ZooKeeper mode kept them, and
cached on every broker from watches.

- LITERAL patterns: ``/kafka-acl/<Type>/<name>``; PREFIXED: ``/kafka-acl-extended/prefixed/<Type>/<name>``
  (``Type`` as ``Topic``, ``Group``, ``Cluster``, ``TransactionalId``...).
- Each node holds ``{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow",
  "operation":"Read","host":"*"}]}``; a pattern left without ACLs loses its node.
- Writes are compare-and-set on each node, so two brokers adding ACLs to one resource at once
  both land; a writer returns once this broker's cache shows its write.

On a single broker the same tree lives in the local metadata file.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable

import trio

from pykafkad.metadata.store import BadVersionError, MetadataStore, NodeExistsError, NoNodeError, Watch
from pykafkad.metadata.watch_events import WatchEvents
from pykafkad.security.acl import (
    OPERATIONS_BY_CAMEL,
    PERMISSIONS_BY_CAMEL,
    WILDCARD,
    ZK_RESOURCE_NAMES,
    AccessControlEntry,
    AclBinding,
    PatternType,
    ResourcePattern,
    ResourceType,
    camel,
)

log = logging.getLogger(__name__)

CACHE_WAIT_S = 10.0
ROOTS = {PatternType.LITERAL: "/kafka-acl", PatternType.PREFIXED: "/kafka-acl-extended/prefixed"}


class AclStoreError(Exception):
    """An ACL that cannot be stored (the message says why)."""


def node_path(pattern: ResourcePattern) -> str:
    return f"{ROOTS[pattern.pattern_type]}/{ZK_RESOURCE_NAMES[pattern.resource_type]}/{pattern.name}"


def encode(entries: Iterable[AccessControlEntry]) -> bytes:
    acls = [{"principal": e.principal, "permissionType": camel(e.permission), "operation": camel(e.operation),
             "host": e.host} for e in sorted(entries, key=lambda e: (e.principal, e.host, e.operation, e.permission))]
    return json.dumps({"version": 1, "acls": acls}, separators=(",", ":")).encode()


def decode(data: bytes) -> frozenset[AccessControlEntry]:
    if not data:
        return frozenset()
    doc = json.loads(data)
    return frozenset(AccessControlEntry(a["principal"], a["host"], OPERATIONS_BY_CAMEL[a["operation"]],
                                        PERMISSIONS_BY_CAMEL[a["permissionType"]]) for a in doc.get("acls", []))


class AclStore:
    """Every broker's copy of the ACLs, and the writes that change them."""

    def __init__(self, store: MetadataStore) -> None:
        self.store = store
        self.acls: dict[ResourcePattern, frozenset[AccessControlEntry]] = {}
        # The same ACLs by (resource type, pattern type) and name, so that a check looks up the names
        # that could cover its resource instead of scanning every pattern.
        self._by_name: dict[tuple[ResourceType, PatternType], dict[str, frozenset[AccessControlEntry]]] = {}
        self._versions: dict[ResourcePattern, int] = {}
        self._watches: dict[ResourcePattern, Watch] = {}
        self._dir_watches: list[Watch] = []
        self._events = WatchEvents(self._apply, "ACL change", log)

    # -- reading ----------------------------------------------------------------------------------

    def bindings(self) -> list[AclBinding]:
        return [AclBinding(p, e) for p, entries in self.acls.items() for e in entries]

    def matching(self, resource_type: ResourceType, name: str) -> list[AccessControlEntry]:
        """The ACLs of every pattern covering resource ``name``: its literal, the ``*`` literal, prefixes."""
        out: list[AccessControlEntry] = []
        literal = self._by_name.get((resource_type, PatternType.LITERAL))
        if literal:
            out.extend(literal.get(name, ()))
            if name != WILDCARD:
                out.extend(literal.get(WILDCARD, ()))
        prefixed = self._by_name.get((resource_type, PatternType.PREFIXED))
        if prefixed:
            if len(prefixed) <= len(name):
                for prefix, entries in prefixed.items():
                    if name.startswith(prefix):
                        out.extend(entries)
            else:
                for end in range(len(name) + 1):
                    out.extend(prefixed.get(name[:end], ()))
        return out

    def of_type(self, resource_type: ResourceType) -> list[AclBinding]:
        return [AclBinding(p, e) for p, entries in self.acls.items() if p.resource_type == resource_type
                for e in entries]

    # -- start and watches ------------------------------------------------------------------------

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Make Kafka's ACL directories, load every ACL, then follow changes until cancelled."""
        for root in ROOTS.values():
            for type_name in ZK_RESOURCE_NAMES.values():
                path = f"{root}/{type_name}"
                if await self.store.get(path) is None:
                    try:
                        await self.store.create(path, b"")
                    except NodeExistsError:
                        pass  # another broker made it first
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._events.run)
                for pattern_type, root in ROOTS.items():
                    for rtype, type_name in ZK_RESOURCE_NAMES.items():
                        self._dir_watches.append(await self.store.watch_children(
                            f"{root}/{type_name}",
                            lambda kids, p=pattern_type, r=rtype: self._events.post("names", p, r, kids)))
                await self._events.settled()
                task_status.started()
        finally:
            for watch in self._dir_watches + list(self._watches.values()):
                watch.cancel()
            self._events.close()

    async def _apply(self, event: tuple) -> None:
        if event[0] == "names":
            _, pattern_type, rtype, names = event
            names = set(names or [])
            for pattern in [p for p in self._watches if p.pattern_type == pattern_type and p.resource_type == rtype]:
                if pattern.name not in names:
                    self._watches.pop(pattern).cancel()
                    self._forget(pattern)
            for name in sorted(names):
                pattern = ResourcePattern(rtype, name, pattern_type)
                if pattern not in self._watches:
                    self._watches[pattern] = await self.store.watch_data(
                        node_path(pattern), lambda n, p=pattern: self._events.post("acls", p, n))
            return
        _, pattern, node = event
        if node is None:
            self._forget(pattern)
            return
        self._versions[pattern] = node.version
        self.cache(pattern, decode(node.data))

    def cache(self, pattern: ResourcePattern, entries: frozenset[AccessControlEntry]) -> None:
        """This broker's copy of one pattern's ACLs (from its node, as a watch delivers it)."""
        if entries:
            self.acls[pattern] = entries
            self._by_name.setdefault((pattern.resource_type, pattern.pattern_type), {})[pattern.name] = entries
        else:
            self._drop(pattern)

    def _forget(self, pattern: ResourcePattern) -> None:
        self._drop(pattern)
        self._versions[pattern] = -1

    def _drop(self, pattern: ResourcePattern) -> None:
        self.acls.pop(pattern, None)
        self._by_name.get((pattern.resource_type, pattern.pattern_type), {}).pop(pattern.name, None)

    # -- writing ----------------------------------------------------------------------------------

    async def add(self, bindings: list[AclBinding]) -> None:
        """Store ``bindings`` (those already there are kept once)."""
        for pattern, entries in _by_pattern(bindings).items():
            await self._update(pattern, lambda old, new=entries: old | new)

    async def remove(self, bindings: list[AclBinding]) -> None:
        for pattern, entries in _by_pattern(bindings).items():
            await self._update(pattern, lambda old, gone=entries: old - gone)

    async def _update(self, pattern: ResourcePattern, change) -> None:  # noqa: ANN001 - old entries -> new
        if "/" in pattern.name:
            raise AclStoreError(f"resource name {pattern.name!r} has a '/', which the ACL store cannot keep")
        path = node_path(pattern)
        while True:
            node = await self.store.get(path)
            try:
                old = decode(node.data) if node is not None else frozenset()
            except (ValueError, KeyError, TypeError) as e:
                raise AclStoreError(f"the ACL node {path} is unreadable ({e!r}); fix or delete it in ZooKeeper") \
                    from None
            new = frozenset(change(old))
            try:
                if node is None and not new:
                    return
                if node is None:
                    await self.store.create(path, encode(new))
                elif not new:
                    await self.store.delete(path, node.version)
                else:
                    await self.store.set(path, encode(new), node.version)
            except (BadVersionError, NodeExistsError, NoNodeError):
                continue  # another broker wrote first: apply the change to what it wrote
            break
        # Returns once this broker's cache shows the write (or a later one), or after CACHE_WAIT_S: another
        # broker may have changed the node again before this cache saw ours.
        with trio.move_on_after(CACHE_WAIT_S):
            await self._events.wait_for(lambda: self.acls.get(pattern, frozenset()) == new
                                 or self._versions.get(pattern, -1) > (node.version if node else -1) + 1)


def _by_pattern(bindings: list[AclBinding]) -> dict[ResourcePattern, frozenset[AccessControlEntry]]:
    out: dict[ResourcePattern, set[AccessControlEntry]] = {}
    for b in bindings:
        out.setdefault(b.pattern, set()).add(b.entry)
    return {p: frozenset(e) for p, e in out.items()}
