"""Start and stop either broker, and watch its process through /proc.

`Pykafkad`, `PykafkadWithMetrics` and `ApacheKafka` share one interface: `start()` launches the broker on a fresh
loopback port with a fresh log directory and returns the seconds from process start to the
first acknowledged produce; `stop()` sends SIGTERM (SIGKILL after a timeout).  Both run with
their default configuration; the only settings given are the listener, the log directory and
`group.initial.rebalance.delay.ms=0` (the same for both, so that consumer tools do not wait
3 s for a first join).  Every broker started here is stopped when the harness exits, also on
Ctrl-C, and dies with the harness if it is SIGKILLed (PR_SET_PDEATHSIG).

`ProcessWatch` samples a pid's resident set size every 50 ms in a thread and reads its CPU
seconds (user + system, all threads) from /proc/<pid>/stat at the start and end of a window.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import kafka_dist
from compat_tests.loopback_ports import free_port

REPO_ROOT = Path(__file__).resolve().parent.parent
COMMON_OVERRIDES = {"group.initial.rebalance.delay.ms": "0"}
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 60.0
_CLK_TCK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")
PR_SET_PDEATHSIG = 1

_LIVE: list[BrokerUnderTest] = []


class BrokerStartError(RuntimeError):
    """A broker did not come up, or never acknowledged a first produce."""


def die_with_parent() -> None:
    """preexec_fn: the child gets SIGKILL when the harness dies, however it dies."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of every thread of ``pid`` so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * _PAGE


@dataclass
class Usage:
    """What a broker process consumed during one window."""

    cpu_s: float = 0.0
    rss_peak: int = 0
    rss_end: int = 0
    wall_s: float = 0.0


@dataclass
class ProcessWatch:
    """Context manager: CPU seconds and peak RSS of ``pid`` while the block runs."""

    pid: int
    interval: float = 0.05
    usage: Usage = field(default_factory=Usage)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            try:
                self.usage.rss_peak = max(self.usage.rss_peak, rss_bytes(self.pid))
            except (OSError, ValueError, IndexError):
                return
            self._stop.wait(self.interval)

    def __enter__(self) -> ProcessWatch:
        self._t0 = time.monotonic()
        self._cpu0 = cpu_seconds(self.pid)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        try:
            self.usage.cpu_s = cpu_seconds(self.pid) - self._cpu0
            self.usage.rss_end = rss_bytes(self.pid)
            self.usage.rss_peak = max(self.usage.rss_peak, self.usage.rss_end)
        except (OSError, ValueError, IndexError):
            pass
        self.usage.wall_s = time.monotonic() - self._t0


def wait_listening(name: str, port: int, deadline: float, check_alive: Callable[[], None]) -> None:
    """Until something accepts connections on 127.0.0.1:``port``; BrokerStartError past ``deadline``
    (``check_alive`` raises when the process died meanwhile)."""
    while True:
        check_alive()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise BrokerStartError(f"{name} never listened on {port}") from None
            time.sleep(0.01)


def trash_dir(work_dir: Path) -> Path:
    return work_dir / "trash"


def set_aside(data_dir: Path) -> None:
    """Move a finished run's data directory into the trash, deleted by ``empty_trash`` later.

    Not deleted at once: on a filesystem without a journal (this bench machine's root ext4), ext4's
    inode allocator skips every inode freed in the last 60 s (300 s more while its inode table block
    is dirty) one by one, so a broker creating thousands of directories right after thousands were
    deleted pays a scan per directory: 2,000 partition directories took 2.5-4x as long (NOTES.md,
    "Creating partitions right after a deletion").  The creation workload is timed with no deletion
    just before it, for both brokers alike.
    """
    trash = trash_dir(data_dir.parent)
    trash.mkdir(parents=True, exist_ok=True)
    data_dir.rename(trash / f"{data_dir.name}-{time.time_ns()}")


def empty_trash(work_dir: Path) -> bool:
    """Delete the data directories set aside, and write the deletion out (so its inodes are clean,
    and ext4 skips them for 60 s rather than for 360 s); whether there was anything to delete."""
    trash = trash_dir(work_dir)
    if not trash.exists():
        return False
    shutil.rmtree(trash)
    os.sync()
    return True


class BrokerUnderTest:
    """One broker process under test; subclasses say how to launch it."""

    name = "broker"

    def __init__(self, work_dir: Path) -> None:
        self.work_dir = Path(work_dir)
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        # Settings on top of the defaults and COMMON_OVERRIDES (e.g. advertised.listeners for a proxy).
        self.extra_settings: dict[str, str] = {}
        self.log_path = self.work_dir / f"{self.name}.out.log"

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def data_dir(self) -> Path:
        return self.work_dir / f"{self.name}-data"

    def version(self) -> str:
        raise NotImplementedError

    def cwd(self) -> Path:
        return REPO_ROOT

    def _prepare(self) -> list[str]:
        """Write whatever the broker needs and return its command line."""
        raise NotImplementedError

    def start(self, port: int | None = None) -> float:
        """Launch on a fresh log directory and `port` (a free one by default); seconds from exec to the
        first acknowledged produce."""
        if self.data_dir.exists():
            set_aside(self.data_dir)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        cmd = self._prepare()
        with open(self.log_path, "ab") as out:
            out.write(f"\n===== {' '.join(cmd)}\n".encode())
            out.flush()
            t0 = time.monotonic()
            self.proc = subprocess.Popen(cmd, cwd=self.cwd(), stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                         preexec_fn=die_with_parent)
        _LIVE.append(self)
        try:
            self._wait_first_produce(t0)
        except BaseException:
            self.stop()
            raise
        return time.monotonic() - t0

    def _wait_first_produce(self, t0: float) -> None:
        from confluent_kafka import KafkaException, Producer

        deadline = t0 + START_TIMEOUT_S
        wait_listening(self.name, self.port, deadline, self._check_alive)
        producer = Producer({
            "bootstrap.servers": self.bootstrap, "acks": "all", "linger.ms": 0,
            "reconnect.backoff.ms": 10, "reconnect.backoff.max.ms": 100, "retry.backoff.ms": 20,
            "retry.backoff.max.ms": 100, "topic.metadata.refresh.fast.interval.ms": 20,
            "message.timeout.ms": int(START_TIMEOUT_S * 1000),
        })
        delivered: list[object] = []

        def on_delivery(err: object, msg: object) -> None:
            delivered.append(err)

        producer.produce("startup-probe", b"first", on_delivery=on_delivery)
        while not delivered:
            self._check_alive()
            if time.monotonic() > deadline:
                raise BrokerStartError(f"{self.name}: no produce acknowledged within {START_TIMEOUT_S}s")
            producer.poll(0.005)
        if delivered[0] is not None:
            raise BrokerStartError(f"{self.name}: first produce failed: {delivered[0]}")
        try:
            producer.flush(5)
        except KafkaException:
            pass

    def _check_alive(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            code = None if self.proc is None else self.proc.returncode
            raise BrokerStartError(f"{self.name} exited (code {code}); see {self.log_path}")

    def stop(self) -> None:
        if self in _LIVE:
            _LIVE.remove(self)
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def data_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.data_dir.rglob("*") if p.is_file())


class Pykafkad(BrokerUnderTest):
    """pykafkad from this checkout, or from ``root`` (another checkout, e.g. a baseline commit)."""

    name = "pykafkad"

    def __init__(self, work_dir: Path, root: Path = REPO_ROOT) -> None:
        super().__init__(work_dir)
        self.root = Path(root)

    def version(self) -> str:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as dist_version

        try:
            v = dist_version("pykafkad")
        except PackageNotFoundError:
            v = "unknown"
        try:
            rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=self.root, capture_output=True,
                                 text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            rev = ""
        return f"{v} (git {rev})" if rev else v

    def cwd(self) -> Path:
        return self.root  # `python -m pykafkad` imports the package (and wire) from here

    def _prepare(self) -> list[str]:
        settings = {
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "log.dirs": str(self.data_dir),
            **COMMON_OVERRIDES,
            **self.extra_settings,
        }
        cmd = [sys.executable, "-m", "pykafkad", "serve", str(self.root / "configs" / "server.properties")]
        for key, value in settings.items():
            cmd += ["--override", f"{key}={value}"]
        return cmd


class PykafkadWithMetrics(Pykafkad):
    """pykafkad with ``metrics.listener`` set (as ``make run`` starts it), scraped as Prometheus would
    be, but every ``SCRAPE_INTERVAL_S`` rather than its default 15 s: what watching the broker costs."""

    name = "pykafkad-metrics"

    def start(self, port: int | None = None) -> float:
        self.metrics_port = free_port()
        self.extra_settings = {**self.extra_settings, "metrics.listener": f"http://127.0.0.1:{self.metrics_port}"}
        startup = super().start(port)
        self.scraper = Scraper(f"http://127.0.0.1:{self.metrics_port}/metrics")
        self.scraper.start()
        return startup

    def stop(self) -> None:
        scraper = getattr(self, "scraper", None)
        if scraper is not None:
            scraper.stop()
        super().stop()


SCRAPE_INTERVAL_S = 1.0


class Scraper:
    """GET ``url`` every SCRAPE_INTERVAL_S in a thread; counts scrapes, failures, bytes and time."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.scrapes = 0
        self.failures = 0
        self.bytes = 0
        self.seconds = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def stats(self) -> dict[str, float]:
        """Scrapes so far, with their mean time and size."""
        n = max(self.scrapes, 1)
        return {"scrapes": self.scrapes, "scrape_failures": self.failures,
                "scrape_ms": 1000 * self.seconds / n, "scrape_kb": self.bytes / n / 1000}

    def _run(self) -> None:
        import urllib.error
        import urllib.request

        while not self._stop.wait(SCRAPE_INTERVAL_S):
            t0 = time.monotonic()
            try:
                with urllib.request.urlopen(self.url, timeout=10) as answer:
                    body = answer.read()
            except (OSError, urllib.error.URLError):
                self.failures += 1
                continue
            self.seconds += time.monotonic() - t0
            self.bytes += len(body)
            self.scrapes += 1


class ApacheKafka(BrokerUnderTest):
    name = "kafka"

    def __init__(self, work_dir: Path, lib: Path) -> None:
        super().__init__(work_dir)
        self.lib = lib
        self.format_s = 0.0

    def version(self) -> str:
        return f"{kafka_dist.version(self.lib)} ({kafka_dist.java_version()})"

    def _prepare(self) -> list[str]:
        config = self.work_dir / "kafka-server.properties"
        config.write_text(kafka_dist.server_properties(self.port, free_port(), self.data_dir,
                                                         {**COMMON_OVERRIDES, **self.extra_settings}))
        t0 = time.monotonic()
        subprocess.run(kafka_dist.format_command(config, self.lib), check=True, timeout=180,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)
        self.format_s = time.monotonic() - t0
        return kafka_dist.broker_command(config, self.lib)


def stop_all() -> None:
    for broker in list(_LIVE):
        try:
            broker.stop()
        except Exception:  # noqa: BLE001 - best effort at exit
            if broker.proc is not None:
                broker.proc.kill()


def install_cleanup() -> None:
    """Stop every broker at exit and turn SIGTERM into a clean exit (Ctrl-C already is)."""
    atexit.register(stop_all)

    def on_term(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
