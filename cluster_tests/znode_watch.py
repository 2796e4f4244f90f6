"""Waiting on ZooKeeper state from a test: a kazoo watch sets an event, no polling loop."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.recipe.watchers import ChildrenWatch, DataWatch


class ZooKeeperView:
    """A test's own ZooKeeper session, to read and wait on a cluster's znodes."""

    def __init__(self, connect: str) -> None:
        self.zk = KazooClient(hosts=connect, timeout=10)
        self.zk.start(timeout=30)

    def close(self) -> None:
        self.zk.stop()
        self.zk.close()

    def json(self, path: str) -> Any:
        data, _ = self.zk.get(path)
        return json.loads(data)

    def cluster_summary(self) -> str:
        """The controller and live brokers now, for a failed wait's message (the CI output may not
        reach the brokers' logs)."""
        parts = []
        for path in ("/controller", "/controller_epoch"):
            try:
                data, stat = self.zk.get(path)
                parts.append(f"{path}={data.decode(errors='replace')} (session {stat.ephemeralOwner:#x})")
            except NoNodeError:
                parts.append(f"{path} absent")
        try:
            parts.append(f"/brokers/ids={sorted(self.zk.get_children('/brokers/ids'))}")
        except NoNodeError:
            parts.append("/brokers/ids absent")
        return ", ".join(parts)

    def wait_children(self, path: str, predicate: Callable[[list[str]], bool], timeout: float = 60) -> list[str]:
        """Wait until ``predicate(children of path)`` holds; returns those children."""
        done = threading.Event()
        seen: list[list[str]] = []

        def changed(children: list[str]) -> bool | None:
            seen.append(sorted(children))
            if predicate(sorted(children)):
                done.set()
                return False
            return None

        self.zk.ensure_path(path)
        ChildrenWatch(self.zk, path, changed)
        if not done.wait(timeout):
            raise AssertionError(f"children of {path} never matched within {timeout}s; last: {seen[-1:]}; "
                                 f"{self.cluster_summary()}")
        return seen[-1]

    def wait_data(self, path: str, predicate: Callable[[Any], bool], timeout: float = 60) -> Any:
        """Wait until ``predicate(JSON of path, or None when absent)`` holds; returns that value."""
        done = threading.Event()
        seen: list[Any] = []

        def changed(data: bytes | None, stat: Any, *_: Any) -> bool | None:
            value = None if stat is None else json.loads(data)
            seen.append(value)
            if predicate(value):
                done.set()
                return False
            return None

        DataWatch(self.zk, path, changed)
        if not done.wait(timeout):
            raise AssertionError(f"{path} never matched within {timeout}s; last: {seen[-1:]}; {self.cluster_summary()}")
        return seen[-1]
