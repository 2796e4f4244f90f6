"""The single-node metadata store: the node tree in memory, kept in one JSON file under the first log dir.

A broker without ``zookeeper.connect`` uses it in place of ZooKeeper, with the same paths,
versions, ephemerals and watches, so both run one code path.  Each change that touches persistent
nodes rewrites the file (a temp file, fsynced, renamed over the old one, the directory fsynced)
before the call returns; ephemeral nodes live in memory only, as a session's do.  Watches are
called synchronously once a change is complete and saved.

Changes are applied one at a time, in the order they come (as ZooKeeper's leader orders writes):
each takes the store's write lock, is checked and applied, is saved, has its watches called, and
only then lets the next one in.  The file is written on a worker thread: at thousands of partitions
it is megabytes, and writing and fsyncing it on the event loop held every client of the broker for
tens of milliseconds at each topic change.

A file written before the store existed (one document with "topics") is read through
``legacy_document`` and saved in the new form on the first change.
"""

from __future__ import annotations

import base64
import bisect
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii as _json_string
from pathlib import Path

import trio

from pykafkad.metadata import legacy_document
from pykafkad.metadata.store import (
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
)

log = logging.getLogger(__name__)

FILE_NAME = "pykafkad-cluster-metadata.json"
FORMAT = "pykafkad-znodes/1"


@dataclass
class _Entry:
    data: bytes
    version: int
    ephemeral: bool


class _LocalWatch:
    def __init__(self, registry: dict[str, list], path: str, callback: Callable) -> None:
        self._registry, self._path, self._callback = registry, path, callback

    def cancel(self) -> None:
        callbacks = self._registry.get(self._path, [])
        if self._callback in callbacks:
            callbacks.remove(self._callback)


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


def _check_path(path: str) -> None:
    if not path.startswith("/") or (path != "/" and path.endswith("/")) or "//" in path:
        raise ValueError(f"bad node path {path!r}")


class LocalMetadataStore:
    """A node tree in this process, saved to ``<log dir>/pykafkad-cluster-metadata.json``."""

    def __init__(self, log_dir: Path) -> None:
        self.path = log_dir / FILE_NAME
        self._nodes: dict[str, _Entry] = {"/": _Entry(b"", 0, False)}
        self._children: dict[str, set[str]] = {"/": set()}
        # The persistent nodes' paths in order, and each one's line of the saved file at the same
        # index, encoded when the node changes.  The whole file is rewritten on every change: encoding
        # tens of thousands of partition nodes each time, then sorting and joining their lines in
        # Python, made each topic change hold the event loop longer the more partitions there were.
        self._saved_paths: list[str] = []
        self._saved_lines: list[str] = []
        self._data_watches: dict[str, list[DataCallback]] = {}
        self._children_watches: dict[str, list[ChildrenCallback]] = {}
        # Held from a change's checks until it is saved and its watches called (module docstring).
        self._writes = trio.Lock()

    @property
    def description(self) -> str:
        return f"local file {self.path}"

    # -- lifecycle --------------------------------------------------------------------------------

    async def start(self) -> None:
        if not self.path.exists():
            return
        document = json.loads(self.path.read_text())
        if "znodes" in document:
            nodes = {path: (_decode_data(n), n["version"]) for path, n in document["znodes"].items()}
        else:
            log.info("reading %s written by an earlier pykafkad: it is saved as nodes on the next change",
                     self.path)
            nodes = {path: (data, 0) for path, data in legacy_document.to_nodes(document).items()}
        # In path order: a parent comes before its children, and each node's saved line is appended
        # at the end of the ordered lines rather than inserted in the middle.
        for path in sorted(nodes):
            data, version = nodes[path]
            self._make_parents(path)
            self._put(path, _Entry(data, version, False))

    async def close(self) -> None:
        for path in [p for p, e in self._nodes.items() if e.ephemeral]:
            self._remove(path)
        self._data_watches.clear()
        self._children_watches.clear()

    def on_new_session(self, callback: Callable[[], None]) -> None:
        """A local session never expires."""

    # -- reads ------------------------------------------------------------------------------------

    async def get(self, path: str) -> Node | None:
        entry = self._nodes.get(path)
        return None if entry is None else Node(entry.data, entry.version)

    async def children(self, path: str) -> list[str] | None:
        kids = self._children.get(path)
        return None if kids is None else sorted(kids)

    async def read_many(self, paths: list[str]) -> list[Node | None]:
        return [None if (entry := self._nodes.get(path)) is None else Node(entry.data, entry.version)
                for path in paths]

    # -- writes -----------------------------------------------------------------------------------

    async def create(self, path: str, data: bytes, ephemeral: bool = False) -> None:
        _check_path(path)
        async with self._writes:
            if path in self._nodes:
                raise NodeExistsError(path)
            changed = self._make_parents(path)
            self._put(path, _Entry(data, 0, ephemeral))
            changed.append(path)
            await self._finish(changed)

    async def set(self, path: str, data: bytes, version: int = -1) -> int:
        await self.commit([SetData(path, data, version)])
        return self._nodes[path].version

    async def delete(self, path: str, version: int = -1, recursive: bool = False) -> None:
        if recursive and path in self._nodes:
            ops: list[Op] = [Delete(p) for p in self._subtree(path) if p != path]
            ops.append(Delete(path, version))
            await self.commit(ops)
        else:
            await self.commit([Delete(path, version)])

    def commits_for(self, ops: list[Op]) -> list[list[Op]]:
        return [ops]

    async def commit(self, ops: list[Op]) -> None:
        """All or none: every op is checked against the state the earlier ones leave, then applied."""
        async with self._writes:
            await self._commit(ops)

    async def _commit(self, ops: list[Op]) -> None:
        pending: dict[str, _Entry | None] = {}
        pending_children: dict[str, set[str]] = {}

        def current(path: str) -> _Entry | None:
            return pending[path] if path in pending else self._nodes.get(path)

        def kids(path: str) -> set[str]:
            if path not in pending_children:
                pending_children[path] = set(self._children.get(path, set()))
            return pending_children[path]

        for op in ops:
            _check_path(op.path)
            entry = current(op.path)
            if isinstance(op, Create):
                if entry is not None:
                    raise NodeExistsError(op.path)
                if current(_parent(op.path)) is None:
                    raise NoNodeError(_parent(op.path))
                pending[op.path] = _Entry(op.data, 0, op.ephemeral)
                kids(_parent(op.path)).add(op.path.rsplit("/", 1)[1])
                continue
            if entry is None:
                raise NoNodeError(op.path)
            if (isinstance(op, Check) or op.version != -1) and op.version != entry.version:
                raise BadVersionError(f"{op.path}: version {entry.version}, expected {op.version}")
            if isinstance(op, SetData):
                pending[op.path] = _Entry(op.data, entry.version + 1, entry.ephemeral)
            elif isinstance(op, Delete):
                if kids(op.path):
                    raise NotEmptyError(op.path)
                pending[op.path] = None
                kids(_parent(op.path)).discard(op.path.rsplit("/", 1)[1])
        for path, new in pending.items():
            if new is None:
                self._remove(path)
            else:
                self._put(path, new)
        await self._finish(list(pending))

    # -- watches ----------------------------------------------------------------------------------

    async def watch_data(self, path: str, callback: DataCallback) -> _LocalWatch:
        self._data_watches.setdefault(path, []).append(callback)
        callback(await self.get(path))
        return _LocalWatch(self._data_watches, path, callback)

    async def watch_children(self, path: str, callback: ChildrenCallback) -> _LocalWatch:
        self._children_watches.setdefault(path, []).append(callback)
        callback(await self.children(path))
        return _LocalWatch(self._children_watches, path, callback)

    # -- internals --------------------------------------------------------------------------------

    def _make_parents(self, path: str) -> list[str]:
        made = []
        parent = _parent(path)
        missing = []
        while parent not in self._nodes:
            missing.append(parent)
            parent = _parent(parent)
        for p in reversed(missing):
            self._put(p, _Entry(b"", 0, False))
            made.append(p)
        return made

    def _put(self, path: str, entry: _Entry) -> None:
        self._nodes[path] = entry
        if entry.ephemeral or path == "/":
            self._unsave(path)
        else:
            i = bisect.bisect_left(self._saved_paths, path)
            if i < len(self._saved_paths) and self._saved_paths[i] == path:
                self._saved_lines[i] = _saved_line(path, entry)
            else:
                self._saved_paths.insert(i, path)
                self._saved_lines.insert(i, _saved_line(path, entry))
        self._children.setdefault(path, set())
        if path != "/":
            self._children.setdefault(_parent(path), set()).add(path.rsplit("/", 1)[1])

    def _unsave(self, path: str) -> None:
        i = bisect.bisect_left(self._saved_paths, path)
        if i < len(self._saved_paths) and self._saved_paths[i] == path:
            del self._saved_paths[i]
            del self._saved_lines[i]

    def _remove(self, path: str) -> None:
        self._nodes.pop(path, None)
        self._unsave(path)
        self._children.pop(path, None)
        self._children.get(_parent(path), set()).discard(path.rsplit("/", 1)[1])

    def _subtree(self, path: str) -> list[str]:
        """``path`` and everything under it, deepest first."""
        out: list[str] = []
        for child in sorted(self._children.get(path, ())):
            out.extend(self._subtree(f"{path.rstrip('/')}/{child}"))
        out.append(path)
        return out

    async def _finish(self, changed: list[str]) -> None:
        """Save (if a persistent node changed), then tell the watches."""
        if not changed:
            return
        if any(not (e := self._nodes.get(p)) or not e.ephemeral for p in changed):
            # Not abandoned on cancellation: the change is applied, so it is saved before this returns.
            await trio.to_thread.run_sync(self._write, ",\n".join(self._saved_lines))
        for path in changed:
            node = self._nodes.get(path)
            for callback in list(self._data_watches.get(path, ())):
                _call(callback, None if node is None else Node(node.data, node.version))
        for parent in dict.fromkeys(_parent(p) for p in changed):
            kids = self._children.get(parent)
            for callback in list(self._children_watches.get(parent, ())):
                _call(callback, None if kids is None else sorted(kids))

    def _write(self, nodes: str) -> None:
        """The file, with ``nodes`` (one node per line, in path order), on a worker thread."""
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            f.write(f'{{\n "format": {json.dumps(FORMAT)},\n "znodes": {{\n{nodes}\n }}\n}}\n'.encode())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        dir_fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _call(callback: Callable, value: object) -> None:
    try:
        callback(value)
    except Exception:  # noqa: BLE001 - one watcher's bug must not stop the others or the write
        log.exception("metadata watch callback failed")


def _saved_line(path: str, entry: _Entry) -> str:
    """The node's line of the saved file: ``"<path>": {"data": ..., "version": N}``, as json.dumps
    writes it, by json's C string encoder alone (json.dumps per node was most of a commit)."""
    try:
        key, text = "data", entry.data.decode()
    except UnicodeDecodeError:
        key, text = "data_base64", base64.b64encode(entry.data).decode()
    return f'  {_json_string(path)}: {{"{key}": {_json_string(text)}, "version": {entry.version}}}'


def _decode_data(node: dict) -> bytes:
    if "data_base64" in node:
        return base64.b64decode(node["data_base64"])
    return node["data"].encode()
