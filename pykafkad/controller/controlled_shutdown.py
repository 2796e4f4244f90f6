"""Controlled shutdown: a broker stopping on SIGTERM first hands its leaderships to other replicas.

Kafka's brokers asked the controller to move their leaderships before exiting, so a rolling restart
costs clients only retriable errors.  Here the broker steps back in the same terms the controller
already reacts to: it leaves the controller election (resigning if it is the controller, so another
broker takes over at once), removes its own registration, and waits until the controller has moved
every partition it led that has another live in-sync replica, or ``controlled.shutdown.max.retries``
times ``controlled.shutdown.retry.backoff.ms`` (15 s) pass.  A partition with no other in-sync
replica has nowhere to go: it is offline until this broker returns, as in Kafka.  The wait also ends
once the other in-sync replicas have left too (every broker stopping at once).
Meanwhile it keeps serving, so requests in flight finish and clients follow the new leaders.  A
single broker, or one with no other broker alive, has nobody to hand over to and stops at once.
"""

from __future__ import annotations

import logging

import trio

from pykafkad.controller.election import ControllerElection
from pykafkad.metadata import znodes
from pykafkad.metadata.cluster_metadata import ClusterMetadata
from pykafkad.metadata.store import NoNodeError, StoreError

log = logging.getLogger(__name__)


def _movable(metadata: ClusterMetadata, node_id: int) -> set[tuple[str, int]]:
    """Partitions this broker leads that another live in-sync replica can take over."""
    live = set(metadata.brokers)
    return {(t.name, p.index) for t in metadata.topics.values() for p in t.partitions
            if p.leader == node_id and any(r != node_id and r in live for r in p.isr)}


def _still_led(metadata: ClusterMetadata, node_id: int, partitions: set[tuple[str, int]]) -> int:
    return sum(1 for name, index in partitions
               if (t := metadata.topics.get(name)) is not None and t.partitions[index].leader == node_id)


def _awaited(metadata: ClusterMetadata, node_id: int, partitions: set[tuple[str, int]]) -> int:
    """Of ``partitions``, those still led here that another live in-sync replica could yet take over.
    When every broker stops at once, each leaves the registrations, so this falls to zero as the
    others go rather than after the whole wait: nobody is left to hand over to."""
    live = set(metadata.brokers)
    count = 0
    for name, index in partitions:
        t = metadata.topics.get(name)
        if t is None:
            continue
        p = t.partitions[index]
        if p.leader == node_id and any(r != node_id and r in live for r in p.isr):
            count += 1
    return count


async def controlled_shutdown(metadata: ClusterMetadata, election: ControllerElection, node_id: int,
                              timeout_s: float) -> None:
    if not any(b != node_id for b in metadata.brokers):
        return
    movable = _movable(metadata, node_id)
    log.info("controlled shutdown: handing over %d leadership(s) of broker %d", len(movable), node_id)
    try:
        await election.resign()
        await metadata.store.delete(znodes.broker_path(node_id))
    except NoNodeError:
        pass
    except StoreError as e:
        log.warning("controlled shutdown: %s; stopping without handing over", e)
        return
    with trio.move_on_after(timeout_s) as waited:
        await metadata.wait_for(lambda: _awaited(metadata, node_id, movable) == 0)
    left = _still_led(metadata, node_id, movable)
    if waited.cancelled_caught:
        log.warning("controlled shutdown: %d leadership(s) not handed over within %.0fs; stopping anyway",
                    _awaited(metadata, node_id, movable), timeout_s)
    elif left:
        log.info("controlled shutdown: %d leadership(s) of broker %d kept: their other in-sync replicas are "
                 "stopping too", left, node_id)
    else:
        log.info("controlled shutdown: every leadership of broker %d handed over", node_id)
