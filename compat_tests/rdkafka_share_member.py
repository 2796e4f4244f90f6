"""A share-group member on librdkafka (confluent-kafka's ShareConsumer), run as a process: the
counterpart of ``java/ShareMember.java``, with the same arguments and output lines.

    python -m compat_tests.rdkafka_share_member BOOTSTRAP GROUP TOPIC (ack | hold) [key=value ...]

``ack``: each record is acknowledged explicitly, by its value: ``release...`` RELEASE, ``reject...``
REJECT, anything else ACCEPT, and the acknowledgements are committed after each poll.  ``hold``: the
records of the first poll that brings any are printed and held, never acknowledged, until the process
is killed.  Lines: ``record TOPIC PARTITION OFFSET DELIVERY_COUNT VALUE``, ``committed`` (every
acknowledgement of the poll taken) or ``commit failed``, ``holding``, ``closed``.  Closing stdin
closes the consumer (it leaves the group).
"""

from __future__ import annotations

import sys
import threading
import time

from confluent_kafka import AcknowledgeType, ShareConsumer


def _say(line: str) -> None:
    print(line, flush=True)


def _ack_type(value: str) -> AcknowledgeType:
    if value.startswith("release"):
        return AcknowledgeType.RELEASE
    if value.startswith("reject"):
        return AcknowledgeType.REJECT
    return AcknowledgeType.ACCEPT


def main() -> None:
    bootstrap, group, topic, mode, *settings = sys.argv[1:]
    config = {"bootstrap.servers": bootstrap, "group.id": group, "share.acknowledgement.mode": "explicit"}
    config.update(dict(s.split("=", 1) for s in settings))
    consumer = ShareConsumer(config)
    consumer.subscribe([topic])
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    while not stop.is_set():
        messages = [m for m in consumer.poll(0.5) if m.error() is None]
        for m in messages:
            value = m.value().decode()
            _say(f"record {m.topic()} {m.partition()} {m.offset()} {m.delivery_count()} {value}")
        if mode == "hold" and messages:
            _say("holding")
            while True:
                time.sleep(3600)
        if messages:
            for m in messages:
                consumer.acknowledge(m, _ack_type(m.value().decode()))
            failed = [tp for tp, error in consumer.commit_sync().items() if error is not None]
            _say("committed" if not failed else "commit failed")
    consumer.close()
    _say("closed")


if __name__ == "__main__":
    main()
