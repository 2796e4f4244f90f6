"""How many connections the broker takes: ``max.connections.per.ip`` (with
``max.connections.per.ip.overrides``, ``host:count`` items) and ``max.connections``, as Kafka's
ConnectionQuotas.  A connection over its address's limit is closed as soon as it is accepted; at
``max.connections`` the listeners stop accepting until one closes (the inter-broker listener is
exempt, so replication never waits behind clients), as Kafka does."""

from __future__ import annotations

import trio

from pykafkad.config import BrokerConfig


class ConnectionQuotas:
    def __init__(self, config: BrokerConfig) -> None:
        self.per_ip = config["max.connections.per.ip"]
        self.overrides = config.connections_per_ip_overrides
        self.max_connections = config["max.connections"]
        self.counts: dict[str, int] = {}
        self.total = 0
        self._freed = trio.Event()

    def limit_for(self, address: str) -> int:
        return self.overrides.get(address, self.per_ip)

    def admit(self, address: str) -> bool:
        """Count a new connection from ``address``; False (not counted) when it is over its limit."""
        if self.counts.get(address, 0) >= self.limit_for(address):
            return False
        self.counts[address] = self.counts.get(address, 0) + 1
        self.total += 1
        return True

    def release(self, address: str) -> None:
        left = self.counts.get(address, 0) - 1
        if left > 0:
            self.counts[address] = left
        else:
            self.counts.pop(address, None)
        self.total -= 1
        self._freed.set()
        self._freed = trio.Event()

    async def wait_for_slot(self) -> None:
        """Until the broker holds fewer than ``max.connections``."""
        while self.total >= self.max_connections:
            await self._freed.wait()
