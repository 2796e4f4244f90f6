"""Writing a topic's nodes when they are more than one request to the metadata store carries.

A topic is two nodes per partition (Kafka's ``partitions/<i>`` and its ``state``).  On ZooKeeper
one commit is one request, and the server drops the connection of a request larger than its
``jute.maxbuffer`` (1 MB unless raised): with a stock ZooKeeper a topic of 5,000 partitions could
not be created in one commit.  Such a change is written in several commits, ordered so that no
broker acts on half of it (``MetadataStore.commits_for`` says where to cut):

- *Creating a topic*: the first commit makes the topic (its config, its assignment, its
  ``partitions`` node, empty rather than holding the states it is created with) with as many
  partitions as fit, the next ones make the rest, and the last
  rewrites the ``partitions`` node.  That rewrite carries no states, so every broker reads all the
  topic's states again (``ClusterMetadata._states_announced``); one that read them between two
  commits held the missing ones as leaderless meanwhile, as Kafka shows a new topic's partitions
  until their leaders are elected.
- *Adding partitions*: the new partitions' nodes first (no broker reads them before the assignment
  names them), the assignment last.
- *Deleting a topic*: each partition's nodes, then the topic's own.

A change cut into several commits is not all or none: a broker that stops in the middle leaves part
of it.  A half-made topic is logged as such, and deleting it (what the log says to do) removes
whatever was made.
"""

from __future__ import annotations

import contextlib
import logging

from pykafkad.metadata import znodes
from pykafkad.metadata.store import Create, Delete, MetadataStore, NoNodeError, Op, SetData, StoreError

log = logging.getLogger(__name__)


async def create_topic_nodes(store: MetadataStore, name: str, head: list[Op], notice: bytes,
                             partitions: list[Op]) -> bool:
    """Write a new topic: ``head`` (its config and assignment), its ``partitions`` node holding
    ``notice`` (the states it is created with), then ``partitions`` (each partition's nodes).
    Whether it took several commits; the first one's error (such as NodeExistsError) is raised as
    it is, with nothing written."""
    commits = store.commits_for([*head, Create(znodes.partitions_path(name), notice), *partitions])
    if len(commits) == 1:
        await store.commit(commits[0])
        return False
    # The notice would hold states not all written yet: the node starts empty instead.
    commits = store.commits_for([*head, Create(znodes.partitions_path(name), b""), *partitions])
    await store.commit(commits[0])
    try:
        for ops in commits[1:]:
            await store.commit(ops)
        await store.commit([SetData(znodes.partitions_path(name), b"")])
    except StoreError:
        log.error("topic %s is only partly created (its %d partitions took %d commits and one failed): "
                  "delete it and create it again", name, len(partitions) // 2, len(commits))
        raise
    log.info("topic %s written in %d commits: larger than one metadata store request", name, len(commits))
    return True


async def add_partition_nodes(store: MetadataStore, partitions: list[Op], assignment: SetData) -> None:
    """Write new partitions' nodes and then ``assignment`` (the topic node naming them); if the
    assignment is refused (another writer came first), the new nodes are removed again."""
    commits = store.commits_for([*partitions, assignment])
    if len(commits) == 1:
        await store.commit(commits[0])
        return
    written: list[Op] = []
    try:
        for ops in store.commits_for(partitions):
            await store.commit(ops)
            written += ops
        await store.commit([assignment])
    except StoreError:
        await _remove_quietly(store, written)
        raise


async def delete_topic_nodes(store: MetadataStore, name: str, indexes: list[int], tail: list[Op]) -> None:
    """Delete partitions ``indexes`` of ``name`` (each its state, then itself) and then ``tail``
    (the topic's own nodes)."""
    ops: list[Op] = []
    for index in indexes:
        ops += [Delete(znodes.partition_state_path(name, index)), Delete(znodes.partition_path(name, index))]
    commits = store.commits_for(ops + tail)
    if len(commits) == 1:
        await store.commit(commits[0])
        return
    # Several commits: only the partitions still there (an earlier deletion may have stopped
    # half-way), and a partition missing its state node (a creation that did) is removed on its own.
    parent = znodes.partitions_path(name)
    ops = []
    for child in await store.children(parent) or []:
        ops += [Delete(f"{parent}/{child}/state"), Delete(f"{parent}/{child}")]
    for chunk in store.commits_for(ops):
        try:
            await store.commit(chunk)
        except NoNodeError:
            for op in chunk:
                if not op.path.endswith("/state"):
                    with contextlib.suppress(NoNodeError):
                        await store.delete(op.path, recursive=True)
    for chunk in store.commits_for(tail):
        await store.commit(chunk)


async def _remove_quietly(store: MetadataStore, created: list[Op]) -> None:
    """Undo creates, children first, logging what could not be undone."""
    try:
        for chunk in store.commits_for([Delete(op.path) for op in reversed(created)]):
            await store.commit(chunk)
    except StoreError as e:
        log.error("could not remove %d nodes written for partitions that were not added: %s", len(created), e)
