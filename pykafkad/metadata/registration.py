"""This broker's registration: the ephemeral ``/brokers/ids/<id>`` node, kept for as long as it runs.

A broker killed with ``kill -9`` leaves its node until ZooKeeper expires the old session, so a
restart with the same ``broker.id`` waits for that, as Kafka's does, rather than failing; a node
held by a *running* broker with that id keeps it waiting until ``zookeeper.session.timeout.ms``
twice over, then start-up fails with a message naming the id.  After a lost session the node is
made again.
"""

from __future__ import annotations

import logging
import time

import trio

from pykafkad.metadata import znodes
from pykafkad.metadata.model import BrokerInfo
from pykafkad.metadata.store import MetadataStore, NodeExistsError, StoreError

log = logging.getLogger(__name__)


class BrokerIdInUseError(Exception):
    """Another live broker is registered with this broker's id."""


async def register_broker(store: MetadataStore, broker: BrokerInfo, session_timeout_ms: int) -> None:
    """Create ``/brokers/ids/<id>``, waiting out a previous session's node."""
    path = znodes.broker_path(broker.node_id)
    deadline = trio.current_time() + 2 * session_timeout_ms / 1000
    warned = False
    while True:
        try:
            await store.create(path, znodes.encode_broker(broker, int(time.time() * 1000)), ephemeral=True)
            return
        except NodeExistsError:
            if trio.current_time() >= deadline:
                raise BrokerIdInUseError(
                    f"broker.id {broker.node_id} is registered by another running broker "
                    f"({store.description}): give this broker a different broker.id") from None
            if not warned:
                log.warning("broker %d is still registered by an earlier session; waiting for it to expire",
                            broker.node_id)
                warned = True
            await trio.sleep(0.2)


def keep_registered(store: MetadataStore, broker: BrokerInfo, session_timeout_ms: int,
                    nursery: trio.Nursery) -> None:
    """Register again whenever the store replaces a lost session."""

    async def again() -> None:
        try:
            await register_broker(store, broker, session_timeout_ms)
            log.info("registered broker %d again", broker.node_id)
        except (StoreError, BrokerIdInUseError) as e:
            log.error("registering broker %d again failed: %s", broker.node_id, e)

    store.on_new_session(lambda: nursery.start_soon(again))
