"""Log compaction, proven with real clients against a broker process.

A `cleanup.policy=compact` topic with tiny segments, rolled by `segment.ms`, ends with exactly
the newest value of every key once the cleaner (every `log.cleaner.backoff.ms`) has run, at the
offsets the producers were acknowledged; tombstones stay until `delete.retention.ms` has passed.
`min.compaction.lag.ms`, `min.cleanable.dirty.ratio` and `max.compaction.lag.ms` hold back or
force cleaning (a "canary" topic that does get cleaned shows the cleaner ran meanwhile).
Transaction markers go too once their transaction's records are gone and `delete.retention.ms`
has passed, and an abort leaves the `.txnindex` with its marker.  Keyless records are refused on
compacted topics; `compact,delete` also applies retention;
`__consumer_offsets` is compacted the same way and still answers OffsetFetch after a restart.
A `log.cleaner.dedupe.buffer.size` too small for the dirty keys cleans them over several passes.
Every outcome is checked on disk (records decoded from the segment files) and with clients.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import (
    CLIENT_TIMEOUT_S,
    ConfluentClient,
    DeliveryError,
    KafkaPythonClient,
    Rec,
    create_topic,
    now_ms,
    unique_topic,
)
from compat_tests.storage_support import (
    alter_topic,
    disk_batches,
    disk_records,
    ensure_running,
    module_broker,
    segment_bases,
    wait_for,
)

OVERRIDES = {
    "log.cleaner.backoff.ms": "250",
    "log.retention.check.interval.ms": "250",
    "offsets.topic.num.partitions": "1",
}
COMPACT = {
    "cleanup.policy": "compact",
    "internal.segment.bytes": "4096",
    "segment.ms": "1000",
    "min.cleanable.dirty.ratio": "0.01",
}


@pytest.fixture(scope="module")
def _compaction_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    yield from module_broker(tmp_path_factory, "compaction-broker", OVERRIDES)


@pytest.fixture
def cb(_compaction_broker: BrokerProcess) -> BrokerProcess:
    return ensure_running(_compaction_broker)


Newest = dict[bytes, tuple[int, bytes | None]]


def _write_round(b: BrokerProcess, topic: str, keys: range, tag: str, newest: Newest, *, kafka_python: bool = False,
                 tombstone: bool = False) -> None:
    """One value (or tombstone) per key; remember the acknowledged offset of each key's newest write."""
    recs = [Rec(None if tombstone else f"{tag}-k{k}".encode(), f"k{k}".encode()) for k in keys]
    if kafka_python:
        offsets = KafkaPythonClient(b.bootstrap).produce(topic, recs, batch_size=1500)
    else:
        offsets = ConfluentClient(b.bootstrap).produce(topic, recs, **{"batch.size": 1500})
    for r, o in zip(recs, offsets, strict=True):
        assert r.key is not None
        newest[r.key] = (o, r.value)


def _unique_keys(part: Path) -> list[tuple[int, bytes | None, bytes | None]] | None:
    """The records on disk if no key appears twice (the cleaner has caught up), else None."""
    recs = disk_records(part)
    keys = [k for _, k, _ in recs]
    return recs if len(keys) == len(set(keys)) else None


def _expected(newest: Newest) -> list[tuple[int, bytes, bytes | None]]:
    return sorted((o, k, v) for k, (o, v) in newest.items())


def _client_view(b: BrokerProcess, topic: str, count: int) -> dict[str, list[tuple[int, bytes | None, bytes | None]]]:
    """What confluent-kafka and kafka-python read from the earliest offset: (offset, key, value)."""
    views = {}
    for client in (ConfluentClient(b.bootstrap), KafkaPythonClient(b.bootstrap)):
        got = client.consume(topic, 0, "earliest", count)
        views[client.name] = [(g.offset, g.key, g.value) for g in got]
    return views


def test_compacted_topic_ends_with_newest_value_per_key(cb: BrokerProcess) -> None:
    """60 keys x 12 rounds from two clients, then tombstones for 10 keys: after cleaning, exactly
    one record per key, the newest, at its acknowledged offset; tombstones stay (delete.retention.ms
    is a day)."""
    topic = unique_topic("compact")
    create_topic(cb.bootstrap, topic, config=COMPACT)
    part = cb.partition_dir(topic)
    newest: Newest = {}
    for r in range(12):
        _write_round(cb, topic, range(60), f"r{r}", newest, kafka_python=r % 2 == 1)
    _write_round(cb, topic, range(10), "tomb", newest, tombstone=True)
    end = max(o for o, _ in newest.values()) + 1
    written = 12 * 60 + 10

    recs = wait_for("the cleaner leaves one record per key", lambda: _unique_keys(part))
    assert recs == _expected(newest), "on disk: not exactly the newest record per key at its acknowledged offset"
    assert sum(1 for _, _, v in recs if v is None) == 10, "tombstones must stay for delete.retention.ms"
    assert len(recs) == 60 < written
    assert not list(part.glob("*.cleaned")) and not list(part.glob("*.swap"))
    for name, view in _client_view(cb, topic, len(recs)).items():
        assert view == _expected(newest), name
    assert ConfluentClient(cb.bootstrap).offsets(topic) == (0, end)

    # Still appendable, offsets continue after the last one ever assigned.
    assert ConfluentClient(cb.bootstrap).produce(topic, [Rec(b"later", b"k1")]) == [end]


def test_a_small_dedupe_buffer_cleans_over_several_passes(tmp_path: Path) -> None:
    """log.cleaner.dedupe.buffer.size bounds a pass's key map (9,000 bytes here: about 130 keys of
    68 bytes each): 400 keys written twice are cleaned over several passes, to the same result."""
    b = BrokerProcess(tmp_path / "logs", {**OVERRIDES, "auto.create.topics.enable": "false",
                                          "log.cleaner.dedupe.buffer.size": "10000"}, name="small-dedupe")
    b.start()
    try:
        topic = unique_topic("dedupe")
        create_topic(b.bootstrap, topic, config=COMPACT)
        part = b.partition_dir(topic)
        newest: Newest = {}
        for r in range(2):
            _write_round(b, topic, range(400), f"r{r}", newest)
        recs = wait_for("the cleaner leaves one record per key", lambda: _unique_keys(part))
        assert recs == _expected(newest)
        passes = [line for line in b.stderr_text().splitlines() if f"cleaned {topic}-0:" in line]
        assert len(passes) >= 3, passes
        assert ConfluentClient(b.bootstrap).consume(topic, 0, "earliest", 400)[-1].offset == max(
            o for o, _ in newest.values())
    finally:
        b.close()


def test_tombstones_removed_after_delete_retention(cb: BrokerProcess) -> None:
    """delete.retention.ms=0: the pass that first sees a tombstone stamps its delete horizon (as
    Kafka's KIP-534 cleaner does, so a later change of the setting does not move it); a later pass
    removes it, leaving only the keys that were not deleted."""
    topic = unique_topic("compact-tomb")
    create_topic(cb.bootstrap, topic, config={**COMPACT, "delete.retention.ms": "0"})
    newest: Newest = {}
    for r in range(3):
        _write_round(cb, topic, range(20), f"r{r}", newest)
    _write_round(cb, topic, range(10), "tomb", newest, tombstone=True)
    survivors = {k: v for k, v in newest.items() if v[1] is not None}
    part = cb.partition_dir(topic)
    wait_for("tombstones and what they deleted are gone", lambda: disk_records(part) == _expected(survivors))
    for name, view in _client_view(cb, topic, 10).items():
        assert view == _expected(survivors), name


def test_transaction_markers_removed_after_delete_retention(cb: BrokerProcess) -> None:
    """An aborted and a committed transaction over the same keys, then plain writes of those keys:
    the cleaner removes the aborted records, then (delete.retention.ms=0 after the pass that found
    it unneeded) the ABORT marker and its `.txnindex` entry.  The COMMIT marker stays: the
    producer's last batch (kept, emptied, for its sequence state) is still in its transaction."""
    topic = unique_topic("compact-markers")
    create_topic(cb.bootstrap, topic, config={**COMPACT, "delete.retention.ms": "0"})
    producer = confluent_kafka.Producer({"bootstrap.servers": cb.bootstrap, "transactional.id": f"tx-{topic}",
                                         "linger.ms": 0})
    producer.init_transactions(CLIENT_TIMEOUT_S)
    for value, commit in ((b"aborted", False), (b"committed", True)):
        producer.begin_transaction()
        for k in range(10):
            producer.produce(topic, value, key=f"k{k}".encode(), partition=0)
        if commit:
            producer.commit_transaction(CLIENT_TIMEOUT_S)
        else:
            producer.abort_transaction(CLIENT_TIMEOUT_S)
    newest: Newest = {}
    for r in range(4):
        _write_round(cb, topic, range(10), f"r{r}", newest)
    part = cb.partition_dir(topic)

    def cleaned() -> bool:
        controls = [h for h in disk_batches(part) if h["is_control"]]
        txnindex = sum(p.stat().st_size for p in part.glob("*.txnindex"))
        return len(controls) == 1 and txnindex == 0 and disk_records(part) == _expected(newest)

    wait_for("the ABORT marker and its index entry are gone", cleaned)
    for name, view in _client_view(cb, topic, 10).items():
        assert view == _expected(newest), name


def test_keyless_records_rejected_on_compacted_topic(cb: BrokerProcess) -> None:
    topic = unique_topic("compact-keyless")
    create_topic(cb.bootstrap, topic, config={"cleanup.policy": "compact"})
    with pytest.raises(DeliveryError) as err:
        ConfluentClient(cb.bootstrap).produce(topic, [Rec(b"no key")], retries=0)
    assert err.value.errors[0].code() == confluent_kafka.KafkaError.INVALID_RECORD, err.value.errors[0]
    assert ConfluentClient(cb.bootstrap).produce(topic, [Rec(b"keyed", b"k")]) == [0]
    # The same topic as compact,delete (changed live) still refuses them.
    alter_topic(cb.bootstrap, topic, {"cleanup.policy": "compact,delete"})
    with pytest.raises(DeliveryError):
        ConfluentClient(cb.bootstrap).produce(topic, [Rec(b"no key")], retries=0)
    alter_topic(cb.bootstrap, topic, {"cleanup.policy": "delete"})
    assert ConfluentClient(cb.bootstrap).produce(topic, [Rec(b"no key")]) == [1]


def test_compaction_lag_and_dirty_ratio(cb: BrokerProcess) -> None:
    """min.compaction.lag.ms=1h and a dirty ratio below min.cleanable.dirty.ratio hold cleaning back
    while a canary topic is cleaned twice; min.compaction.lag.ms=0 and max.compaction.lag.ms=1 s,
    set live, then get both cleaned."""
    canary, lagged, ratio = (unique_topic(f"compact-{n}") for n in ("canary", "minlag", "ratio"))
    create_topic(cb.bootstrap, canary, config=COMPACT)
    create_topic(cb.bootstrap, lagged, config={**COMPACT, "min.compaction.lag.ms": "3600000"})
    create_topic(cb.bootstrap, ratio, config=COMPACT)
    parts = {t: cb.partition_dir(t) for t in (canary, lagged, ratio)}
    state: dict[str, Newest] = {t: {} for t in parts}

    # The ratio topic gets a clean head first, then a dirty tail of ~1/3 of the log with ratio 0.9 in force.
    _write_round(cb, ratio, range(40), "a", state[ratio])
    _write_round(cb, ratio, range(40), "b", state[ratio])
    wait_for("the ratio topic is cleaned once", lambda: _unique_keys(parts[ratio]))
    alter_topic(cb.bootstrap, ratio, {"min.cleanable.dirty.ratio": "0.9"})
    # Rewriting half the keys twice makes a dirty section of ~1/2 of the log: below 0.9.
    for r in range(2):
        _write_round(cb, ratio, range(20), f"c{r}", state[ratio])
    for r in range(3):
        _write_round(cb, lagged, range(40), f"r{r}", state[lagged])
    for r in range(2):
        _write_round(cb, canary, range(40), f"first{r}", state[canary])
    wait_for("the canary is cleaned", lambda: _unique_keys(parts[canary]))
    for r in range(2):
        _write_round(cb, canary, range(40), f"second{r}", state[canary])
    wait_for("the canary is cleaned again", lambda: _unique_keys(parts[canary]))

    assert len(disk_records(parts[lagged])) == 120, "cleaned although min.compaction.lag.ms=1h"
    assert len(disk_records(parts[ratio])) == 80, "cleaned although the dirty ratio is below 0.9"

    alter_topic(cb.bootstrap, lagged, {"min.compaction.lag.ms": "0"})
    alter_topic(cb.bootstrap, ratio, {"max.compaction.lag.ms": "1000"})
    for t in (lagged, ratio):
        recs = wait_for(f"{t} is cleaned once the setting allows it", lambda t=t: _unique_keys(parts[t]))
        assert recs == _expected(state[t])
        got = ConfluentClient(cb.bootstrap).consume(t, 0, "earliest", len(recs))
        assert [(g.offset, g.key, g.value) for g in got] == _expected(state[t])


def test_compact_delete_applies_both(cb: BrokerProcess) -> None:
    """compact,delete: duplicates are cleaned and records past retention.ms are deleted too."""
    topic = unique_topic("compact-delete")
    create_topic(cb.bootstrap, topic, config={**COMPACT, "cleanup.policy": "delete,compact",
                                               "retention.ms": "300000"})
    old = now_ms() - 600_000
    client = ConfluentClient(cb.bootstrap)
    client.produce(topic, [Rec(b"ancient", f"old{i}".encode(), timestamp=old) for i in range(50)],
                   **{"batch.size": 1500})
    newest: Newest = {}
    for r in range(3):
        _write_round(cb, topic, range(30), f"r{r}", newest)
    part = cb.partition_dir(topic)
    recs = wait_for("old records deleted and duplicates cleaned",
                    lambda: (r := _unique_keys(part)) and all(not k.startswith(b"old") for _, k, _ in r) and r)
    assert recs == _expected(newest)
    assert client.offsets(topic)[0] >= 50


def test_consumer_offsets_is_compacted(cb: BrokerProcess) -> None:
    """Hundreds of commits of one group to a one-partition __consumer_offsets with small segments:
    the cleaner leaves the newest commit, which OffsetFetch still returns after a kill -9 restart."""
    topic = unique_topic("commits")
    create_topic(cb.bootstrap, topic)
    group = f"g-{topic}"

    def commit(offsets: range) -> None:
        consumer = confluent_kafka.Consumer({"bootstrap.servers": cb.bootstrap, "group.id": group,
                                             "enable.auto.commit": False})
        try:
            for o in offsets:
                consumer.commit(offsets=[confluent_kafka.TopicPartition(topic, 0, o)], asynchronous=False)
        finally:
            consumer.close()

    commit(range(1, 2))  # creates __consumer_offsets
    alter_topic(cb.bootstrap, "__consumer_offsets", {"internal.segment.bytes": "2048", "segment.ms": "1000",
                                                     "min.cleanable.dirty.ratio": "0.01"})
    commit(range(2, 301))
    part = cb.partition_dir("__consumer_offsets", 0)
    wait_for("commits span several segments", lambda: len(segment_bases(part)) > 3)
    recs = wait_for("the cleaner leaves one record per key of __consumer_offsets", lambda: _unique_keys(part))
    assert len(recs) <= 5, f"{len(recs)} records left of {len(recs)} keys"

    cb.kill9()
    cb.start()

    def committed() -> Any:
        consumer = confluent_kafka.Consumer({"bootstrap.servers": cb.bootstrap, "group.id": group})
        try:
            [tp] = consumer.committed([confluent_kafka.TopicPartition(topic, 0)], timeout=CLIENT_TIMEOUT_S)
            return tp.offset
        finally:
            consumer.close()

    assert wait_for("OffsetFetch answers after the restart", lambda: (o := committed()) >= 0 and o) == 300
