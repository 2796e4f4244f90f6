"""The history of one fault-injection run: every client event and every fault, in the order the harness
saw them, kept in memory for the checker and appended to a JSON-lines file for a person.

An event is a dict with ``e`` (what happened), ``c`` (the client or ``nemesis``), ``ms`` (wall
clock, milliseconds) and the event's own fields (see ``compat_tests/java/FaultClient.java``).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any


class History:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.events: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._out = path.open("a")

    def add(self, event: dict[str, Any]) -> None:
        event.setdefault("ms", int(time.time() * 1000))
        with self._lock:
            self.events.append(event)
            self._out.write(json.dumps(event) + "\n")

    def record(self, kind: str, client: str, **fields: Any) -> None:
        self.add({"e": kind, "c": client, **fields})

    def of(self, kind: str, clients: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [e for e in self.events if e["e"] == kind and (clients is None or e["c"] in clients)]

    def count(self, kind: str, client: str) -> int:
        with self._lock:
            return sum(1 for e in self.events if e["e"] == kind and e["c"] == client)

    def close(self) -> None:
        with self._lock:
            self._out.close()
