"""A consume-transform-produce worker for the exactly-once tests, run as its own process so a test
can kill -9 it anywhere:

    python -m compat_tests.txn_copier BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID

It reads INPUT in group GROUP (read_committed), and for each batch writes ``copy-<value>`` to the
same partition of OUTPUT and commits the consumed offsets in the same transaction
(``send_offsets_to_transaction``), until killed.
"""

from __future__ import annotations

import sys

from confluent_kafka import Consumer, Producer


def main(bootstrap: str, source: str, target: str, group: str, txn_id: str) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id,
                         "transaction.timeout.ms": 30000})
    producer.init_transactions(60)  # fences an earlier worker and aborts what it left open
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.instance.id": txn_id,
                         "isolation.level": "read_committed", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "session.timeout.ms": 6000})
    consumer.subscribe([source])
    while True:
        msgs = [m for m in consumer.consume(num_messages=10, timeout=0.5) if m.error() is None]
        if not msgs:
            continue
        producer.begin_transaction()
        for m in msgs:
            producer.produce(target, b"copy-" + m.value(), key=m.key(), partition=m.partition())
        producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                             consumer.consumer_group_metadata(), 60)
        producer.commit_transaction(60)


if __name__ == "__main__":
    main(*sys.argv[1:6])
