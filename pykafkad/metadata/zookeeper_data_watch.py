"""A watch on one ZooKeeper node's data that costs no thread while it reads.

kazoo's ``DataWatch`` recipe reads the node with a blocking ``get`` (a worker thread waiting on a
condition for each read), which made setting up the 2,000 partition-state watches of a new topic
take seconds on every broker.  This watch does what the recipe does with kazoo's asynchronous
calls: read the node and leave a watch; on each event read it again; report a change of the node's
``mzxid`` (data written) or its appearing or going; read again whenever the session reconnects;
stop when the callback returns False.  A missing node gets an ``exists`` watch, so its creation is
seen.  kazoo runs every completion on one thread, in the order ZooKeeper answered, so reports come
in order and never two at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import ConnectionClosedError, ConnectionLoss, KazooException, NoNodeError, SessionExpiredError

log = logging.getLogger(__name__)

# Errors after which the node is read again once the session is back (the session listener).
_RETRIED = (ConnectionLoss, SessionExpiredError, ConnectionClosedError)

# (data, stat) of the node, or (None, None) once it does not exist; returns False to stop watching.
DataFunc = Callable[[bytes | None, Any], "bool | None"]


class ZooKeeperDataWatch:
    def __init__(self, zk: KazooClient, path: str, func: DataFunc, failed: Callable[[Exception], None]) -> None:
        """``failed`` is called (on kazoo's thread) if a read fails for a reason a reconnection
        does not cure (the watch stops)."""
        self._zk = zk
        self._path = path
        self._func = func
        self._failed = failed
        self._stopped = False
        self._reported = False
        self._version: int | None = None

    def start(self) -> None:
        """Read the node (the first report follows on kazoo's completion thread)."""
        self._zk.add_listener(self._session_changed)
        self._read()

    def _read(self, _event: object = None) -> None:
        if self._stopped:
            return
        try:
            self._zk.get_async(self._path, watch=self._read).rawlink(self._got_data)
        except KazooException:
            pass  # the connection is going: the session listener reads again once it is back

    def _got_data(self, result: Any) -> None:
        try:
            data, stat = result.get_nowait()
        except NoNodeError:
            try:
                self._zk.exists_async(self._path, watch=self._read).rawlink(self._got_exists)
            except KazooException:
                pass
            return
        except _RETRIED:
            return
        except Exception as e:  # noqa: BLE001 - reported to the owner, who raises it where it waits
            self._fail(e)
            return
        self._report(data, stat)

    def _got_exists(self, result: Any) -> None:
        try:
            stat = result.get_nowait()
        except _RETRIED:
            return
        except Exception as e:  # noqa: BLE001 - as in _got_data
            self._fail(e)
            return
        if stat is not None:
            self._read()  # created between the two reads
        else:
            self._report(None, None)

    def _report(self, data: bytes | None, stat: Any) -> None:
        version = None if stat is None else stat.mzxid
        if self._stopped or (self._reported and version == self._version):
            return
        self._reported = True
        self._version = version
        try:
            keep = self._func(data, stat)
        except Exception:  # noqa: BLE001 - a callback's bug must not end kazoo's completion thread
            log.exception("ZooKeeper data watch callback for %s failed", self._path)
            return
        if keep is False:
            self._stop()

    def _fail(self, error: Exception) -> None:
        self._stop()
        self._failed(error)

    def _stop(self) -> None:
        self._stopped = True
        self._zk.remove_listener(self._session_changed)

    def _session_changed(self, state: str) -> None:
        # On kazoo's connection thread: only queues a read.
        if state == KazooState.CONNECTED:
            self._read()
