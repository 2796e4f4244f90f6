"""Producer id allocation for InitProducerId: unique across restarts, handed out from persisted blocks."""

from __future__ import annotations

from pykafkad.metadata.cluster_metadata import ClusterMetadata

BLOCK_SIZE = 1000
MAX_EPOCH = 32767


class ProducerIdAllocator:
    """Hands out producer ids from blocks reserved in the cluster model, so a restart never reuses one."""

    def __init__(self, metadata: ClusterMetadata) -> None:
        self._metadata = metadata
        self._next = 0
        self._end = 0

    def next_id(self) -> int:
        if self._next >= self._end:
            self._next = self._metadata.allocate_producer_id_block(BLOCK_SIZE)
            self._end = self._next + BLOCK_SIZE
        pid = self._next
        self._next += 1
        return pid

    def bump(self, producer_id: int, epoch: int) -> tuple[int, int]:
        """KIP-360: an idempotent producer asking again with its id and epoch gets the next epoch."""
        if epoch + 1 >= MAX_EPOCH:
            return self.next_id(), 0
        return producer_id, epoch + 1
