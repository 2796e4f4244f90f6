"""A short fault schedule, ``make faults-short`` (about five minutes, so not in ``make test``): three
pykafkad brokers on ZooKeeper in network namespaces,
every fault kind injected at least once (seed ``SEED``, ``DURATION_S`` of faults), the three
workloads with Java and librdkafka clients, and the whole history checked: no anomaly, and after the
heal every partition has its full ISR, every coordinator answers and no transaction is left open.

A failure prints the run's summary with up to five examples of each anomaly; the history
(``history.jsonl``), the brokers' logs and the clients' stderr stay in the test's tmp_path.
``python -m cluster_tests.faults run --seed SEED --duration DURATION_S`` reruns the same schedule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster_tests.faults.network import available
from cluster_tests.faults.run import run, summary
from cluster_tests.faults.schedule import CLUSTER_KINDS, MEMBER_KINDS

SEED = 1
DURATION_S = 150.0


@pytest.mark.long_run
@pytest.mark.cluster_timeout(900)
def test_a_short_fault_schedule_finds_no_anomaly(tmp_path: Path) -> None:
    why = available()
    assert why is None, why
    result = run("pykafkad", SEED, DURATION_S, tmp_path / "run", log=lambda _: None)
    assert set(result["faults"]) >= {*CLUSTER_KINDS, *MEMBER_KINDS}, result["faults"]
    assert result["operations"]["queue"]["acknowledged"] > 0
    assert result["operations"]["transactions"]["committed"] > 0
    assert not result["anomalies"], summary(result)
