"""KIP-890: before a partition's leader appends a producer's first transactional batch of a
transaction there, it makes sure the partition is in the transaction, asking the transaction
coordinator (AddPartitionsToTxn v4+).  Part 1 (Produce up to v11, TxnOffsetCommit up to v4): the
coordinator only says whether the producer added it (``verify_only``); a batch for a partition
outside the transaction, which left hanging transactions in Kafka before (KAFKA-14402), is
refused.  Part 2 (Produce v12+, TxnOffsetCommit v5, transaction version 2): the leader adds the
partition itself, retrying briefly while the producer's previous transaction is still completing.

The coordinator is asked directly when this broker is it, else over a link to its listener.  A
producer that already has a transaction open in the partition at this epoch needs no question.

The lowest sequence asked about (Kafka's VerificationStateEntry): each batch that needs the question
records its base sequence per partition, producer and epoch, and a batch verified later is refused
with OUT_OF_ORDER_SEQUENCE_NUMBER while one with a lower sequence (say, refused with
CONCURRENT_TRANSACTIONS while the previous transaction completed) is not in yet.  Without it a
later batch of the transaction was appended first and the earlier one could never follow.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import trio

from pykafkad.coordinator.transaction.transaction_log import TRANSACTION_TOPIC
from pykafkad.coordinator.transaction.transaction_metadata import TV_2
from pykafkad.network.tls import inter_broker_context
from pykafkad.replica.broker_link import BrokerLinkError, BrokerLinkPool
from pykafkad.security.sasl_client import inter_broker_sasl
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.config import BrokerConfig
    from pykafkad.coordinator.transaction.coordinator import TransactionCoordinator
    from pykafkad.metadata.cluster_metadata import ClusterMetadata
    from pykafkad.replica.partition import Partition

log = logging.getLogger(__name__)

ADD_PARTITIONS_TO_TXN = 24
VERIFY_VERSION = 4
VERIFY_TIMEOUT_S = 10.0
# Kafka's add.partitions.to.txn.retry.backoff.ms and .backoff.max.ms: how long a leader retries an
# add while the producer's previous transaction is still writing its markers.
ADD_RETRY_BACKOFF_S = 0.020
ADD_RETRY_MAX_S = 0.100
# A coordinator that cannot answer now: the produce is retried, as Kafka answers it.
UNAVAILABLE = frozenset({ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE,
                         ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.CONCURRENT_TRANSACTIONS,
                         ErrorCode.NETWORK_EXCEPTION})

_ATTRIBUTES = 21
_PRODUCER_ID = 43
_PRODUCER_EPOCH = 51
_TRANSACTIONAL = 0x10
_BASE_SEQUENCE = 53
_BATCH_HEADER = 61
NO_SEQUENCE = -1
# How long the lowest sequence of a verification is kept for a producer that never appended.
VERIFICATION_STATE_S = 900.0


def transactional_producer(records: bytes | memoryview) -> tuple[int, int] | None:
    """(producer id, epoch) of a transactional batch, else None."""
    if len(records) < _BATCH_HEADER:
        return None
    if not int.from_bytes(records[_ATTRIBUTES:_ATTRIBUTES + 2], "big") & _TRANSACTIONAL:
        return None
    return (int.from_bytes(records[_PRODUCER_ID:_PRODUCER_ID + 8], "big", signed=True),
            int.from_bytes(records[_PRODUCER_EPOCH:_PRODUCER_EPOCH + 2], "big", signed=True))


def base_sequence(records: bytes | memoryview) -> int:
    """The first batch's base sequence (NO_SEQUENCE for a batch too short to have one)."""
    if len(records) < _BATCH_HEADER:
        return NO_SEQUENCE
    return int.from_bytes(records[_BASE_SEQUENCE:_BASE_SEQUENCE + 4], "big", signed=True)


class TransactionVerifier:
    """Answers whether a producer's transaction includes a partition of this broker."""

    def __init__(self, config: BrokerConfig, metadata: ClusterMetadata,
                 coordinator: TransactionCoordinator) -> None:
        self.config = config
        self.metadata = metadata
        self.coordinator = coordinator
        self._links = BrokerLinkPool(f"txn-verify-{config.node_id}", ssl_context=inter_broker_context(config),
                                     sasl=inter_broker_sasl(config))
        # (topic, partition, producer id) -> (epoch, lowest sequence asked about, when).
        self._lowest: dict[tuple[str, int, int], tuple[int, int, float]] = {}

    def _record_sequence(self, key: tuple[str, int, int], epoch: int, sequence: int) -> int:
        """Note a batch about to be verified; the lowest sequence of its epoch so far."""
        now = trio.current_time()
        if len(self._lowest) > 10_000:
            self._lowest = {k: v for k, v in self._lowest.items() if now - v[2] < VERIFICATION_STATE_S}
        known = self._lowest.get(key)
        if known is None or known[0] != epoch or now - known[2] >= VERIFICATION_STATE_S:
            lowest = sequence
        else:
            lowest = min(known[1], sequence)
        self._lowest[key] = (epoch, lowest, now)
        return lowest

    async def verify(self, transactional_id: str, producer: tuple[int, int], partition: Partition,
                     add: bool = False, sequence: int = NO_SEQUENCE) -> ErrorCode:
        """NONE when the batch may be appended; INVALID_TXN_STATE when the partition is not in the
        producer's transaction; NOT_ENOUGH_REPLICAS (retriable) when the coordinator cannot say.
        With ``add`` (transaction version 2) the partition is added to the transaction, and
        CONCURRENT_TRANSACTIONS (retriable) answers a previous transaction still completing."""
        producer_id, epoch = producer
        key = (partition.topic, partition.index, producer_id)
        known = partition.log.producer_state_of(producer_id)
        if known is not None and known[0] == epoch and known[1] >= 0:
            self._lowest.pop(key, None)  # its transaction is open here: the log checks sequences
            return ErrorCode.NONE
        # Transaction version 2 only: each of its transactions has an epoch of its own, so a
        # lowest sequence left by a batch that never came back cannot hold up a later transaction.
        guarded = add and sequence != NO_SEQUENCE
        if guarded:
            self._record_sequence(key, epoch, sequence)
        tp = (partition.topic, partition.index)
        deadline = trio.current_time() + ADD_RETRY_MAX_S
        while True:
            code = await self._coordinator_answer(transactional_id, producer_id, epoch, tp, add)
            if not (add and code == ErrorCode.CONCURRENT_TRANSACTIONS
                    and trio.current_time() + ADD_RETRY_BACKOFF_S < deadline):
                break
            await trio.sleep(ADD_RETRY_BACKOFF_S)
        if add and code == ErrorCode.CONCURRENT_TRANSACTIONS:
            return code
        lowest = self._lowest.get(key)
        if code == ErrorCode.NONE and guarded and lowest is not None and lowest[0] == epoch:
            if sequence > lowest[1]:
                # An earlier batch of this transaction is not in yet: this one waits for it (the
                # client retries it after the earlier one).
                return ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
            del self._lowest[key]  # the lowest is appended next; the log checks the rest
        if code in UNAVAILABLE:
            return ErrorCode.NOT_ENOUGH_REPLICAS
        if code == ErrorCode.PRODUCER_FENCED:
            return ErrorCode.INVALID_PRODUCER_EPOCH
        return code

    async def _coordinator_answer(self, transactional_id: str, producer_id: int, epoch: int,
                                  tp: tuple[str, int], add: bool) -> ErrorCode:
        index = self.coordinator.partition_for(transactional_id)
        topic = self.metadata.topics.get(TRANSACTION_TOPIC)
        leader = topic.partitions[index].leader if topic is not None and index < len(topic.partitions) else -1
        if leader != self.config.node_id:
            return await self._ask(leader, transactional_id, producer_id, epoch, tp, add)
        if add:
            return await self.coordinator.add_partitions(transactional_id, producer_id, epoch, {tp}, TV_2)
        return (await self.coordinator.verify(transactional_id, producer_id, epoch, {tp}))[tp]

    async def _ask(self, leader: int, transactional_id: str, producer_id: int, epoch: int,
                   tp: tuple[str, int], add: bool) -> ErrorCode:
        broker = self.metadata.brokers.get(leader)
        if broker is None:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        body: dict[str, Any] = {"transactions": [{
            "transactional_id": transactional_id, "producer_id": producer_id, "producer_epoch": epoch,
            "verify_only": not add, "topics": [{"name": tp[0], "partitions": [tp[1]]}]}]}
        try:
            answer = await self._links.request(broker.host, broker.port, ADD_PARTITIONS_TO_TXN, VERIFY_VERSION, body,
                                               VERIFY_TIMEOUT_S)
        except BrokerLinkError as e:
            log.info("verifying %s with broker %d: %s", transactional_id, leader, e)
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if answer["error_code"] != ErrorCode.NONE:
            return ErrorCode(answer["error_code"])
        for txn in answer["results_by_transaction"]:
            for topic in txn["topic_results"]:
                for p in topic["results_by_partition"]:
                    return ErrorCode(p["partition_error_code"])
        return ErrorCode.UNKNOWN_SERVER_ERROR
