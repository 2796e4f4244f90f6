"""The probe of a failed log dir (``LogDirFailures.probe``): a dir nothing appends to any more is
seen to recover by a small write of its own, a full one only once it has room for a largest batch
again, and each change is told to the listeners."""

from __future__ import annotations

from pathlib import Path

from pykafkad.log.dir_failures import PROBE_FILE, LogDirFailures


def test_a_failed_dir_whose_probe_write_succeeds_is_cleared(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    failures = LogDirFailures([a, b], room_bytes=1)
    changes: list[dict[Path, str]] = []
    failures.listeners.append(lambda: changes.append(failures.failed()))
    failures.write_failed(a, "Input/output error (os error 5)")
    failures.write_failed(a, "Input/output error (os error 5)")  # still failed: no new change
    assert changes == [{a: "failed: Input/output error (os error 5)"}]
    failures.probe()
    assert not failures.any_failed()
    assert changes[-1] == {}
    assert not (a / PROBE_FILE).exists()


def test_a_full_dir_stays_failed_until_it_has_room_for_a_largest_batch(tmp_path: Path) -> None:
    failures = LogDirFailures([tmp_path], room_bytes=1 << 62)  # more than any disk has free
    failures.write_failed(tmp_path, "No space left on device (os error 28)")
    failures.probe()
    assert failures.failed()[tmp_path].startswith("full")
    roomy = LogDirFailures([tmp_path], room_bytes=1)
    roomy.write_failed(tmp_path, "No space left on device (os error 28)")
    roomy.probe()
    assert not roomy.any_failed()


def test_a_probe_that_cannot_write_keeps_the_dir_failed(tmp_path: Path) -> None:
    gone = tmp_path / "gone"  # removed under the broker: the probe's write fails
    failures = LogDirFailures([gone], room_bytes=1)
    failures.write_failed(gone, "Input/output error (os error 5)")
    failures.probe()
    assert failures.failed()[gone].startswith("failed: [Errno 2]")
