"""The pipelines of pykafkad/pipelines on real data through pykafkad processes: each is run
through its ``main(argv)`` (as ``pykafkad pipeline NAME`` does) on the shared SparkSession, with
--available-now for the streaming ones, and its output is checked with an independent client
(confluent-kafka) or with Spark's Parquet reader.  One test runs a pipeline through
spark-submit, as on a cluster."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource

from compat_tests.broker_process import REPO_ROOT, BrokerProcess
from pykafkad.pipelines import PIPELINES, archive, merge, mirror, search, sql
from spark_tests.conftest import BROKER_OVERRIDES, spark_jars_dir
from spark_tests.kafka_data import Rec, create_topic, produce, read_all, unique_topic

T0 = 1_700_000_000_000  # 2023-11-14T22:13:20Z
PIPELINE_DIR = REPO_ROOT / "pykafkad" / "pipelines"


def seed(broker: BrokerProcess, topic: str, n: int = 3, partitions: int = 2, start: int = 0) -> list[Rec]:
    if start == 0:
        create_topic(broker.bootstrap, topic, partitions)
    return produce(broker.bootstrap, topic, [
        Rec(value=f"v{p}-{i}".encode(), key=f"k{i}".encode(), partition=p,
            headers=(("tag", b"red" if i % 2 else b"blue"),), timestamp=T0 + 1000 * i)
        for p in range(partitions) for i in range(start, start + n)])


def stream_args(tmp_path: Path, name: str = "ckpt") -> list[str]:
    return ["--checkpoint", str(tmp_path / name), "--available-now", "--timeout", "120"]


def without(headers: tuple[tuple[str, bytes], ...], name: str) -> tuple[tuple[str, bytes], ...]:
    return tuple(h for h in headers if h[0] != name)


@pytest.fixture
def other_broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    """A second, independent cluster."""
    b = BrokerProcess(tmp_path / "other" / "logs", BROKER_OVERRIDES, name="other-broker").start()
    yield b
    b.close()


# -- mirror ---------------------------------------------------------------------------------------


def test_mirror_same_cluster_resumes_from_checkpoint(spark: Any, broker: BrokerProcess, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    src, dst = unique_topic("mirror-src"), unique_topic("mirror-dst")
    seed(broker, src)
    argv = ["-b", broker.bootstrap, "--topic", src, "--target-topic", dst, "--max-offsets-per-trigger", "4",
            *stream_args(tmp_path)]
    assert mirror.main(argv) == 0
    out = capsys.readouterr().out
    assert f"created {dst} with 2 partition(s)" in out
    assert "[mirror] batch 0: 4 rows" in out and f"{src}[0]=" in out  # progress per micro-batch

    seed(broker, src, n=2, start=3)  # more data, then resume from the checkpoint
    assert mirror.main(argv) == 0
    source, copy = read_all(broker.bootstrap, src), read_all(broker.bootstrap, dst)
    assert len(copy) == 10  # no loss, no duplicates
    assert [(r.partition, r.key, r.value, r.headers) for r in source] == \
        [(r.partition, r.key, r.value, without(r.headers, mirror.SOURCE_TIMESTAMP_HEADER)) for r in copy]
    assert [r.timestamp for r in source] == \
        [int(dict(r.headers)[mirror.SOURCE_TIMESTAMP_HEADER]) for r in copy]


def test_mirror_pattern_to_other_cluster_exact_timestamps(spark: Any, broker: BrokerProcess,
                                                          other_broker: BrokerProcess, tmp_path: Path) -> None:
    prefix = unique_topic("mp")
    a, b = f"{prefix}-a", f"{prefix}-b"
    seed(broker, a)
    seed(broker, b, n=1, partitions=1)
    argv = ["-b", broker.bootstrap, "--target-bootstrap-servers", other_broker.bootstrap,
            "--pattern", f"{prefix}-.*", "--target-prefix", "copy.", "--exact-timestamps", *stream_args(tmp_path)]
    assert mirror.main(argv) == 0
    for topic in (a, b):
        source, copy = read_all(broker.bootstrap, topic), read_all(other_broker.bootstrap, f"copy.{topic}")
        assert [(r.partition, r.offset, r.key, r.value, r.headers, r.timestamp) for r in source] == \
            [(r.partition, r.offset, r.key, r.value, r.headers, r.timestamp) for r in copy]


def test_mirror_refuses_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert mirror.main(["-b", "x:1", "--topic", "t", "--checkpoint", "/tmp/x"]) == 2
    assert "--target-topic NAME or --target-prefix" in capsys.readouterr().err


# -- archive --------------------------------------------------------------------------------------


def test_archive_to_topic_with_own_retention(spark: Any, broker: BrokerProcess, tmp_path: Path) -> None:
    src, arc = unique_topic("arc-src"), unique_topic("arc-dst")
    seed(broker, src)
    year_ms = 365 * 24 * 3600 * 1000
    assert archive.main(["-b", broker.bootstrap, "--topic", src, "--to-topic", arc,
                         "--retention-ms", str(year_ms), *stream_args(tmp_path)]) == 0
    resource = ConfigResource(ConfigResource.Type.TOPIC, arc)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})  # kept alive until the result is in
    configs = admin.describe_configs([resource])[resource].result(30)
    assert configs["retention.ms"].value == str(year_ms)
    source, copy = read_all(broker.bootstrap, src), read_all(broker.bootstrap, arc)
    assert [(r.partition, r.key, r.value) for r in source] == [(r.partition, r.key, r.value) for r in copy]


def test_archive_to_parquet_by_date(spark: Any, broker: BrokerProcess, tmp_path: Path) -> None:
    src = unique_topic("arc-pq")
    create_topic(broker.bootstrap, src, 1)
    day = 24 * 3600 * 1000
    produce(broker.bootstrap, src, [Rec(value=b"d0", key=b"a", timestamp=T0),
                                    Rec(value=b"d1", key=b"b", timestamp=T0 + day, headers=(("h", b"1"),))])
    out_dir = tmp_path / "parquet"
    assert archive.main(["-b", broker.bootstrap, "--topic", src, "--to-parquet", str(out_dir),
                         *stream_args(tmp_path)]) == 0
    assert sorted(p.name for p in out_dir.glob("date=*")) == ["date=2023-11-14", "date=2023-11-15"]
    rows = sorted(spark.read.parquet(str(out_dir)).collect(), key=lambda r: r.offset)
    assert [(bytes(r.value), r.offset, r.date.isoformat() if hasattr(r.date, "isoformat") else str(r.date))
            for r in rows] == [(b"d0", 0, "2023-11-14"), (b"d1", 1, "2023-11-15")]
    assert [(h.key, bytes(h.value)) for h in rows[1].headers] == [("h", b"1")]


# -- merge ----------------------------------------------------------------------------------------


def test_merge_union_with_source_topic_header(spark: Any, broker: BrokerProcess, tmp_path: Path) -> None:
    a, b, merged = unique_topic("merge-a"), unique_topic("merge-b"), unique_topic("merged")
    seed(broker, a, n=2, partitions=1)
    seed(broker, b, n=1, partitions=2)
    assert merge.main(["-b", broker.bootstrap, "--topics", f"{a},{b}", "--to-topic", merged,
                       *stream_args(tmp_path)]) == 0
    got = read_all(broker.bootstrap, merged)
    assert sorted((dict(r.headers)["source.topic"].decode(), r.value.decode(), dict(r.headers)["tag"])
                  for r in got) == sorted([(a, "v0-0", b"blue"), (a, "v0-1", b"red"),
                                           (b, "v0-0", b"blue"), (b, "v1-0", b"blue")])


def test_merge_counts_per_key_per_minute(spark: Any, broker: BrokerProcess, tmp_path: Path) -> None:
    src, counts = unique_topic("clicks"), unique_topic("clicks-per-minute")
    create_topic(broker.bootstrap, src, 1)
    minute = 60_000
    base = T0 - T0 % minute
    events = [(b"a", 0), (b"a", 10), (b"b", 20), (b"a", minute + 5), (b"b", minute + 6), (b"b", minute + 7)]
    produce(broker.bootstrap, src, [Rec(value=b"click", key=k, timestamp=base + t) for k, t in events])
    assert merge.main(["-b", broker.bootstrap, "--topics", src, "--counts-per-minute", "--to-topic", counts,
                       *stream_args(tmp_path)]) == 0
    final: dict[str, dict[str, Any]] = {}
    for r in read_all(broker.bootstrap, counts):
        final[r.key.decode()] = json.loads(r.value)  # update mode: the last record per key wins
    assert sorted((v["key"], v["window_start"][11:16], v["count"]) for v in final.values()) == [
        ("a", "22:13", 2), ("a", "22:14", 1), ("b", "22:13", 1), ("b", "22:14", 2)]


# -- search ---------------------------------------------------------------------------------------


def test_search_by_key_header_substring_and_range(spark: Any, broker: BrokerProcess,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    topic = unique_topic("search")
    seed(broker, topic, n=4)
    base = ["-b", broker.bootstrap, "--topic", topic]

    def find(*extra: str) -> list[tuple[int, int]]:
        return [(h.partition, h.offset) for h in search.run(search.build_parser().parse_args([*base, *extra]))]

    assert find("--key", "k2") == [(0, 2), (1, 2)]
    assert find("--header", "tag=red") == [(0, 1), (0, 3), (1, 1), (1, 3)]
    assert find("--contains", "1-3") == [(1, 3)]
    assert find("--header", "tag=red", "--partition", "1", "--from-offset", "2", "--to-offset", "3") == [(1, 3)]
    assert find("--from-time", str(T0 + 1000), "--to-time", "2023-11-14T22:13:23Z") == \
        [(0, 1), (0, 2), (1, 1), (1, 2)]
    capsys.readouterr()

    assert search.main([*base, "--key", "k1", "--partition", "0"]) == 0  # "was this message there?"
    out = capsys.readouterr().out
    assert f"{topic} partition 0 offset 1 2023-11-14T22:13:21.000+00:00 key='k1' value='v0-1'" in out
    assert "[search] 1 hit(s)" in out
    assert search.main([*base, "--key", "nope"]) == 1
    assert "[search] not found" in capsys.readouterr().out


# -- sql ------------------------------------------------------------------------------------------


def test_sql_over_topics_print_and_write(spark: Any, broker: BrokerProcess) -> None:
    orders, users, out = unique_topic("orders"), unique_topic("users"), unique_topic("sql-out")
    create_topic(broker.bootstrap, orders, 2)
    create_topic(broker.bootstrap, users, 1)
    produce(broker.bootstrap, orders, [Rec(key=b"u1", value=b"10", partition=0),
                                       Rec(key=b"u2", value=b"5", partition=1),
                                       Rec(key=b"u1", value=b"7", partition=1, headers=(("src", b"web"),))])
    produce(broker.bootstrap, users, [Rec(key=b"u1", value=b"ann"), Rec(key=b"u2", value=b"bob")])
    query = ("SELECT u.value AS name, sum(CAST(o.value AS INT)) AS total, count(*) AS n, "
             "max(o.offset) AS last_offset FROM orders o JOIN users u ON o.key = u.key "
             "GROUP BY u.value ORDER BY name")
    argv = ["-b", broker.bootstrap, "--table", f"orders={orders}", "--topic", users]
    rows = sql.run(sql.build_parser().parse_args([*argv, "--query", query.replace("users", users.replace("-", "_"))]))
    assert [tuple(r) for r in rows] == [("ann", 17, 2, 1), ("bob", 5, 1, 0)]

    web = ("SELECT key, concat(value, '!') AS value, headers FROM orders "
           "WHERE exists(headers, h -> h.key = 'src' AND h.value = 'web')")
    assert sql.main([*argv, "--binary", "--query", web.replace("concat(value, '!')", "value"),
                     "--to-topic", out]) == 0
    got = read_all(broker.bootstrap, out)
    assert [(r.key, r.value, r.headers) for r in got] == [(b"u1", b"7", (("src", b"web"),))]


def test_sql_bad_query_says_what_is_wrong(spark: Any, broker: BrokerProcess,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    topic = unique_topic("sql-bad")
    create_topic(broker.bootstrap, topic, 1)
    assert sql.main(["-b", broker.bootstrap, "--table", f"t={topic}", "--query", "SELECT nope FROM t"]) == 2
    assert "the query does not run" in capsys.readouterr().err


# -- packaging ------------------------------------------------------------------------------------


def test_pipelines_import_only_pyspark_and_stdlib() -> None:
    """So that `spark-submit pykafkad/pipelines/NAME.py` runs on a cluster without the broker."""
    allowed = set(sys.stdlib_module_names) | {"pyspark", "py4j", "common", "pykafkad"}
    for name in [*PIPELINES, "common"]:
        tree = ast.parse((PIPELINE_DIR / f"{name}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                mods = [node.module]
            elif isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            else:
                continue
            for mod in mods:
                assert mod.split(".")[0] in allowed, f"{name}.py imports {mod}"
                assert not mod.startswith("pykafkad") or mod == "pykafkad.pipelines", f"{name}.py imports {mod}"


def test_cli_lists_pipelines() -> None:
    out = subprocess.run([sys.executable, "-m", "pykafkad", "pipeline", "--help"], cwd=REPO_ROOT,
                         capture_output=True, text=True, timeout=60, check=True).stdout
    assert all(name in out for name in PIPELINES)


@pytest.mark.spark_timeout(180)
def test_search_through_spark_submit(broker: BrokerProcess, tmp_path: Path) -> None:
    """The pipeline files copied out of the package and run as a plain spark-submit script."""
    jars = sorted(str(p) for p in spark_jars_dir().glob("*.jar"))
    if not jars:
        pytest.fail("no connector jars: run `make spark-deps`", pytrace=False)
    import pyspark

    topic = unique_topic("submit")
    seed(broker, topic, n=2, partitions=1)
    script_dir = tmp_path / "job"
    script_dir.mkdir()
    for name in ("search.py", "common.py"):
        (script_dir / name).write_text((PIPELINE_DIR / name).read_text())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    env["PYTHONSAFEPATH"] = "1"
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    proc = subprocess.run(
        [str(submit), "--master", "local[1]", "--jars", ",".join(jars),
         "--conf", "spark.ui.enabled=false", "--conf", "spark.driver.host=127.0.0.1",
         str(script_dir / "search.py"), "-b", broker.bootstrap, "--topic", topic, "--key", "k1", "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=170)
    assert proc.returncode == 0, proc.stderr[-3000:]
    hit = json.loads(next(line for line in proc.stdout.splitlines() if line.startswith("{")))
    assert (hit["partition"], hit["offset"], hit["key"], hit["value"]) == (0, 1, "k1", "v0-1")
