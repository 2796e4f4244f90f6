"""A subscribe() consumer of one stock client, run as its own process for the group tests.

    python -m compat_tests.groups_consumer CLIENT BOOTSTRAP GROUP TOPIC [options]

CLIENT is confluent, kafka-python or aiokafka.  It prints one JSON object per line on stdout:
``{"ev": "assigned", "parts": [...]}`` (the whole assignment, each time it changes),
``{"ev": "revoked", "parts": [...]}`` (what a rebalance callback revoked),
``{"ev": "rec", "p": partition, "o": offset}`` per record, ``{"ev": "error", ...}``, and
``{"ev": "closed"}`` after SIGTERM made it commit, leave the group and close.  SIGKILL is how
a test makes it die without leaving.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
from typing import Any

stop = False


def emit(**event: Any) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def _on_term(signum: int, frame: object) -> None:
    global stop
    stop = True


def run_confluent(args: argparse.Namespace) -> None:
    import confluent_kafka

    cfg = {
        "bootstrap.servers": args.bootstrap,
        "group.id": args.group,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": args.session_ms,
        "heartbeat.interval.ms": 500,
        "auto.commit.interval.ms": 500,
        "partition.assignment.strategy": args.strategy or "range,roundrobin",
        "client.id": args.client_id or "groups-confluent",
    }
    if args.instance_id:
        cfg["group.instance.id"] = args.instance_id
    c = confluent_kafka.Consumer(cfg)

    def on_assign(consumer: Any, parts: list[Any]) -> None:
        emit(ev="incr_assigned" if args.strategy == "cooperative-sticky" else "cb_assigned",
             parts=sorted(p.partition for p in parts))

    def on_revoke(consumer: Any, parts: list[Any]) -> None:
        emit(ev="revoked", parts=sorted(p.partition for p in parts))

    c.subscribe([args.topic], on_assign=on_assign, on_revoke=on_revoke)
    last: list[int] | None = None
    while not stop:
        m = c.poll(0.2)
        if m is not None:
            if m.error():
                err = m.error()
                emit(ev="error", name=err.name(), code=err.code(), fatal=err.fatal(), text=err.str())
                if err.fatal():
                    break
            else:
                emit(ev="rec", p=m.partition(), o=m.offset())
        parts = sorted(p.partition for p in c.assignment())
        if parts != last:
            last = parts
            emit(ev="assigned", parts=parts)
    try:
        c.close()
    except confluent_kafka.KafkaException as e:
        emit(ev="error", name="close", code=-1, fatal=False, text=str(e))
    emit(ev="closed")


def run_kafka_python(args: argparse.Namespace) -> None:
    from kafka import ConsumerRebalanceListener, KafkaConsumer

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: Any) -> None:
            emit(ev="revoked", parts=sorted(tp.partition for tp in revoked))

        def on_partitions_assigned(self, assigned: Any) -> None:
            emit(ev="cb_assigned", parts=sorted(tp.partition for tp in assigned))

    c = KafkaConsumer(
        bootstrap_servers=args.bootstrap,
        group_id=args.group,
        client_id=args.client_id or "groups-kafka-python",
        auto_offset_reset="earliest",
        session_timeout_ms=args.session_ms,
        heartbeat_interval_ms=500,
        auto_commit_interval_ms=500,
    )
    c.subscribe([args.topic], listener=Listener())
    last: list[int] | None = None
    while not stop:
        for tp, records in c.poll(timeout_ms=200).items():
            for r in records:
                emit(ev="rec", p=tp.partition, o=r.offset)
        parts = sorted(tp.partition for tp in c.assignment())
        if parts != last:
            last = parts
            emit(ev="assigned", parts=parts)
    c.close()
    emit(ev="closed")


async def _aiokafka(args: argparse.Namespace) -> None:
    from aiokafka import AIOKafkaConsumer
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    done = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, done.set)
    c = AIOKafkaConsumer(
        args.topic,
        bootstrap_servers=args.bootstrap,
        group_id=args.group,
        client_id=args.client_id or "groups-aiokafka",
        auto_offset_reset="earliest",
        session_timeout_ms=args.session_ms,
        heartbeat_interval_ms=500,
        auto_commit_interval_ms=500,
        partition_assignment_strategy=(RoundRobinPartitionAssignor,),
    )
    await c.start()
    last: list[int] | None = None
    while not done.is_set():
        batches = await c.getmany(timeout_ms=200)
        for tp, records in batches.items():
            for r in records:
                emit(ev="rec", p=tp.partition, o=r.offset)
        parts = sorted(tp.partition for tp in c.assignment())
        if parts != last:
            last = parts
            emit(ev="assigned", parts=parts)
    await c.stop()
    emit(ev="closed")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("client", choices=["confluent", "kafka-python", "aiokafka"])
    parser.add_argument("bootstrap")
    parser.add_argument("group")
    parser.add_argument("topic")
    parser.add_argument("--strategy")
    parser.add_argument("--instance-id")
    parser.add_argument("--client-id")
    parser.add_argument("--session-ms", type=int, default=6000)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _on_term)
    started = time.monotonic()
    if args.client == "confluent":
        run_confluent(args)
    elif args.client == "kafka-python":
        run_kafka_python(args)
    else:
        asyncio.run(_aiokafka(args))
    emit(ev="exit", seconds=round(time.monotonic() - started, 1))


if __name__ == "__main__":
    main()
