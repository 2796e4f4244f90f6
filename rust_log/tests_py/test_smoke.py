"""Smoke test of the PyO3 API of pykafkad._rust_log, with a tiny batch encoder."""

import struct
import threading

import pytest

from pykafkad._rust_log import LogError, PartitionLog
from rust_log.tests_py.handmade_batch import crc32c, varint


def record(i: int, ts_delta: int, value: bytes) -> bytes:
    body = b"\x00" + varint(ts_delta) + varint(i) + varint(-1) + varint(len(value)) + value + varint(0)
    return varint(len(body)) + body


def batch(values, base_ts=1000, producer_id=-1, epoch=-1, seq=-1) -> bytes:
    recs = b"".join(record(i, i, v) for i, v in enumerate(values))
    n = len(values)
    after_crc = struct.pack(
        ">hiqqqhii", 0, n - 1, base_ts, base_ts + n - 1, producer_id, epoch, seq, n
    ) + recs
    crc = crc32c(after_crc)
    body = struct.pack(">iBI", -1, 2, crc) + after_crc
    return struct.pack(">qi", 0, len(body)) + body


def offsets_in(data: bytes):
    out, p = [], 0
    while p < len(data):
        base, length = struct.unpack_from(">qi", data, p)
        (lod,) = struct.unpack_from(">i", data, p + 23)
        out.append((base, base + lod))
        p += 12 + length
    assert p == len(data)
    return out


# --- tests ---------------------------------------------------------------------


def test_append_read_roundtrip(tmp_path):
    log = PartitionLog(str(tmp_path / "t-0"))
    assert (log.log_start_offset, log.log_end_offset) == (0, 0)
    assert log.append(batch([b"a", b"b", b"c"]), leader_epoch=3) == (0, 2, -1, False)
    assert log.append(bytearray(batch([b"d"]))) == (3, 3, -1, False)
    assert log.append(memoryview(batch([b"e", b"f"])), 3) == (4, 5, -1, False)
    data = log.read(1, 1 << 20)
    assert isinstance(data, bytes)
    assert offsets_in(data) == [(0, 2), (3, 3), (4, 5)]
    assert log.read(6, 100) == b""
    assert log.offset_for_timestamp(1001) == (1, 1001)
    assert log.max_timestamp() == (2, 1002)
    assert log.end_offset_for_epoch(3) == (3, 6)
    assert log.segment_base_offsets() == [0]
    assert log.size_bytes() == len(data)
    log.flush()
    log.close()
    log.close()
    with pytest.raises(LogError) as ei:
        log.read(0, 100)
    assert ei.value.code == 56


def test_errors_carry_codes(tmp_path):
    log = PartitionLog(str(tmp_path), max_message_bytes=500)
    with pytest.raises(LogError) as ei:
        log.read(5, 100)
    assert ei.value.code == 1
    assert ei.value.args == (1, ei.value.message)
    assert "out of range" in str(ei.value)
    bad = bytearray(batch([b"x"]))
    bad[-1] ^= 0xFF
    with pytest.raises(LogError) as ei:
        log.append(bytes(bad))
    assert ei.value.code == 2
    with pytest.raises(LogError) as ei:
        log.append(batch([b"x" * 600]))
    assert ei.value.code == 10
    with pytest.raises(LogError) as ei:
        log.append(b"")
    assert ei.value.code == 87
    assert isinstance(ei.value, Exception)


def test_idempotent_and_reopen(tmp_path):
    d = str(tmp_path / "p-1")
    log = PartitionLog(d, timestamp_type="LogAppendTime")
    assert log.append(batch([b"a"], producer_id=7, epoch=0, seq=0), now_ms=42) == (0, 0, 42, False)
    assert log.append(batch([b"a"], producer_id=7, epoch=0, seq=0), now_ms=43) == (0, 0, 42, True)
    with pytest.raises(LogError) as ei:
        log.append(batch([b"a"], producer_id=7, epoch=0, seq=5))
    assert ei.value.code == 45
    log.close()
    log = PartitionLog(d, clean_shutdown=True, timestamp_type="LogAppendTime")
    assert log.append(batch([b"a"], producer_id=7, epoch=0, seq=0)) == (0, 0, 42, True)
    assert log.append(batch([b"b"], producer_id=7, epoch=1, seq=0), now_ms=50) == (1, 1, 50, False)
    with pytest.raises(LogError) as ei:
        log.append(batch([b"c"], producer_id=7, epoch=0, seq=1))
    assert ei.value.code == 47
    assert log.recovery_report() == []
    with pytest.raises(ValueError):
        PartitionLog(d, timestamp_type="Nope")


def test_threads(tmp_path):
    log = PartitionLog(str(tmp_path), segment_bytes=4096)
    errors = []

    def worker():
        try:
            for _ in range(50):
                log.append(batch([b"v" * 20]))
                log.flush()
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert log.log_end_offset == 200
    seen, off = [], 0
    while off < log.log_end_offset:
        got = offsets_in(log.read(off, 1 << 20))
        seen += got
        off = got[-1][1] + 1
    assert [b for b, _ in seen] == list(range(200))
    assert len(log.segment_base_offsets()) > 1


_CRASH_CHILD = r"""
import os, signal, sys
sys.path.insert(0, {here!r})
from test_smoke import batch
from pykafkad._rust_log import PartitionLog
log = PartitionLog({d!r}, segment_bytes=8192)
for i in range(300):
    log.append(batch([b"v%d" % i], producer_id=3, epoch=0, seq=i))
print("acked", log.log_end_offset, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_kill_minus_nine_loses_nothing_acknowledged(tmp_path):
    import os
    import subprocess
    import sys

    d = str(tmp_path / "crash-0")
    code = _CRASH_CHILD.format(here=os.path.dirname(__file__), d=d)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -9, proc.stderr
    assert proc.stdout.split() == ["acked", "300"]
    log = PartitionLog(d, segment_bytes=8192, clean_shutdown=False)
    assert log.log_end_offset == 300
    assert len(log.recovery_report()) >= 1
    # Producer state was rebuilt from the log: a retry is still a duplicate.
    assert log.append(batch([b"v299"], producer_id=3, epoch=0, seq=299))[3] is True
    assert log.append(batch([b"next"], producer_id=3, epoch=0, seq=300))[:2] == (300, 300)
    log.close()


# --- batch codec ---------------------------------------------------------------

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def test_batch_codec_round_trip_through_log(tmp_path):
    from pykafkad._rust_log import decode_batch_headers, decode_batches, encode_batch

    log = PartitionLog(str(tmp_path / "codec-0"))
    records = [
        (b"k0", b"v0"),
        (None, b"no key", [("h1", b"x"), ("h2", None), ("caf\u00e9", b"\x00\xff")]),
        (b"tombstone", None),
        (None, None, []),
        (bytearray(b"ba"), memoryview(b"mv"), [(b"bytes-key", b"")]),
    ]
    want = []
    for i, codec in enumerate(CODECS):
        ts = 1_700_000_000_000 + i
        data = encode_batch(records, ts, compression=codec)
        assert isinstance(data, bytes)
        base, last, _, dup = log.append(data, leader_epoch=2)
        assert (base, last, dup) == (5 * i, 5 * i + 4, False)
        for j, r in enumerate(records):
            headers = [(k.decode() if isinstance(k, bytes) else k, v) for k, v in (r[2] if len(r) > 2 else [])]
            key = None if r[0] is None else bytes(r[0])
            value = None if r[1] is None else bytes(r[1])
            want.append((base + j, ts, key, value, headers))
    data = log.read(0, 1 << 20)
    assert decode_batches(data) == want
    assert decode_batches(bytearray(data)) == want
    assert decode_batches(memoryview(data)) == want
    # A trailing partial batch (as fetch can return) is ignored.
    assert decode_batches(data[:-1]) == want[:20]
    hdrs = decode_batch_headers(data)
    assert [h["compression"] for h in hdrs] == [0, 1, 2, 3, 4]
    assert [(h["base_offset"], h["last_offset"], h["record_count"]) for h in hdrs] == [
        (5 * i, 5 * i + 4, 5) for i in range(5)
    ]
    assert all(h["partition_leader_epoch"] == 2 and not h["is_control"] for h in hdrs)
    assert sum(h["size"] for h in hdrs) == len(data)
    assert log.offset_for_timestamp(1_700_000_000_003) == (15, 1_700_000_000_003)
    log.close()


def test_batch_codec_producer_fields_and_log_append_time(tmp_path):
    from pykafkad._rust_log import decode_batch_headers, decode_batches, encode_batch

    log = PartitionLog(str(tmp_path / "lat-0"), timestamp_type="LogAppendTime")
    b = encode_batch([(b"k", b"v")] * 3, 5, producer_id=8, producer_epoch=1, base_sequence=0, compression="lz4")
    assert log.append(b, now_ms=99) == (0, 2, 99, False)
    assert log.append(b, now_ms=100)[3] is True
    data = log.read(0, 1 << 20)
    assert [r[:2] for r in decode_batches(data)] == [(0, 99), (1, 99), (2, 99)]
    (h,) = decode_batch_headers(data)
    assert (h["producer_id"], h["producer_epoch"], h["base_sequence"]) == (8, 1, 0)
    assert h["is_log_append_time"] and h["max_timestamp"] == 99 and not h["is_transactional"]
    marker = encode_batch(
        [(b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x05")],
        7,
        base_offset=3,
        producer_id=8,
        producer_epoch=1,
        transactional=True,
        control=True,
    )
    (h,) = decode_batch_headers(marker)
    assert h["is_control"] and h["is_transactional"] and h["base_offset"] == 3
    assert decode_batches(marker) == [(3, 7, b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x05", [])]
    # Clients may not produce control batches.
    with pytest.raises(LogError) as ei:
        log.append(marker)
    assert ei.value.code == 87


def test_batch_codec_errors():
    from pykafkad._rust_log import decode_batch_headers, decode_batches, encode_batch

    with pytest.raises(ValueError):
        encode_batch([], 0)
    with pytest.raises(ValueError):
        encode_batch([(b"k", b"v")], 0, compression="brotli")
    with pytest.raises(ValueError):
        encode_batch([(b"k",)], 0)
    with pytest.raises(TypeError):
        encode_batch([(b"k", "str value")], 0)
    with pytest.raises(TypeError):
        encode_batch([(b"k", b"v", [("h", 5)])], 0)
    assert decode_batches(b"") == [] and decode_batch_headers(b"") == []
    good = encode_batch([(b"k", b"v")], 0, compression="gzip")
    for pos in range(21, len(good)):
        bad = bytearray(good)
        bad[pos] ^= 0x20
        with pytest.raises(LogError) as ei:
            decode_batches(bytes(bad))
        assert ei.value.code == 2
    bad = bytearray(good)
    bad[16] = 1
    with pytest.raises(LogError) as ei:
        decode_batch_headers(bad)
    assert ei.value.code == 2
    with pytest.raises(TypeError):
        decode_batches("not bytes")
    # Agrees with the test's independent encoder.
    assert decode_batches(batch([b"a", b"b"], base_ts=50)) == [(0, 50, None, b"a", []), (1, 51, None, b"b", [])]
