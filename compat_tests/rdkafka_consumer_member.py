"""One member of a consumer group on the KIP-848 protocol through librdkafka (confluent-kafka), the
counterpart of ``java/ConsumerProtocolMember.java``, with the same arguments and output lines.

    python -m compat_tests.rdkafka_consumer_member BOOTSTRAP GROUP (topic:NAME | pattern:REGEX) [key=value...]

It leaves the group when its stdin closes; SIGKILL makes it a crashed member.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from confluent_kafka import Consumer, TopicPartition


def _say(line: str) -> None:
    print(line, flush=True)


def _names(partitions: list[TopicPartition]) -> str:
    return ",".join(sorted(f"{p.topic}-{p.partition}" for p in partitions))


def main(argv: list[str]) -> None:
    bootstrap, group, what = argv[:3]
    config: dict[str, Any] = {"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
                              "enable.auto.commit": False, "auto.offset.reset": "earliest"}
    config.update(kv.split("=", 1) for kv in argv[3:])
    consumer = Consumer(config)
    stop = threading.Event()

    def watch_stdin() -> None:
        for _ in sys.stdin:
            pass
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()

    def on_assign(c: Consumer, partitions: list[TopicPartition]) -> None:
        _say(f"assigned {_names(partitions)}")

    def on_revoke(c: Consumer, partitions: list[TopicPartition]) -> None:
        if partitions:
            try:
                c.commit(asynchronous=False)
            except Exception as e:  # noqa: BLE001 - nothing consumed yet is "no offset", not a failure
                _say(f"commit-on-revoke {e}")
            _say(f"revoked {_names(partitions)}")

    topic = what.split(":", 1)[1]
    subscription = f"^{topic}" if what.startswith("pattern:") else topic
    consumer.subscribe([subscription], on_assign=on_assign, on_revoke=on_revoke)
    try:
        while not stop.is_set():
            records = consumer.consume(100, 0.2)
            consumed = False
            for m in records:
                if m.error():
                    _say(f"error {m.error()}")
                    continue
                _say(f"record {m.topic()} {m.partition()} {m.offset()} {m.value().decode()}")
                consumed = True
            if consumed:
                consumer.commit(asynchronous=False)
                _say("committed")
    finally:
        consumer.close()
        _say("closed")


if __name__ == "__main__":
    main(sys.argv[1:])
