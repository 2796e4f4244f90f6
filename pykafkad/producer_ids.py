"""Producer id allocation for InitProducerId: ids unique across brokers and restarts, handed out in blocks.

Each block is claimed with a conditional write of ``/latest_producer_id_block`` (Kafka's
ZooKeeper layout): a broker reads the last block handed out, and writes the next one naming the
version it read, so two brokers never get the same block.
"""

from __future__ import annotations

from pykafkad.metadata import znodes
from pykafkad.metadata.store import BadVersionError, MetadataStore, NodeExistsError

BLOCK_SIZE = 1000
MAX_EPOCH = 32767


class ProducerIdAllocator:
    """Hands out producer ids from blocks claimed in the metadata store, so none is handed out twice."""

    def __init__(self, store: MetadataStore, node_id: int) -> None:
        self._store = store
        self._node_id = node_id
        self._next = 0
        self._end = 0

    async def _claim_block(self) -> int:
        while True:
            node = await self._store.get(znodes.PRODUCER_ID_BLOCK)
            first = znodes.decode_producer_id_block(node.data)[1] + 1 if node is not None and node.data else 0
            data = znodes.encode_producer_id_block(self._node_id, first, first + BLOCK_SIZE - 1)
            try:
                if node is None:
                    await self._store.create(znodes.PRODUCER_ID_BLOCK, data)
                else:
                    await self._store.set(znodes.PRODUCER_ID_BLOCK, data, version=node.version)
                return first
            except (NodeExistsError, BadVersionError):
                continue  # another broker claimed a block meanwhile: claim the one after it

    async def next_id(self) -> int:
        if self._next >= self._end:
            self._next = await self._claim_block()
            self._end = self._next + BLOCK_SIZE
        pid = self._next
        self._next += 1
        return pid

    async def bump(self, producer_id: int, epoch: int) -> tuple[int, int]:
        """KIP-360: an idempotent producer asking again with its id and epoch gets the next epoch."""
        if epoch + 1 >= MAX_EPOCH:
            return await self.next_id(), 0
        return producer_id, epoch + 1
