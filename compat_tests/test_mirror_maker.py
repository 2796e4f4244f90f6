"""MirrorMaker 2 between two pykafkad brokers, each its own cluster: records, topic configs, a
partition added later, and a consumer group's offsets translated through checkpoints
(``compat_tests/mirror_maker.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.mirror_maker import mirror_and_move_a_group


@pytest.mark.compat_timeout(300)
def test_mirror_maker_2_mirrors_records_configs_partitions_and_group_offsets(
        broker: BrokerProcess, tmp_path: Path) -> None:
    target = BrokerProcess(tmp_path / "target", {"auto.create.topics.enable": "false",
                                                 "group.initial.rebalance.delay.ms": "0"}, name="target")
    target.start()
    try:
        mirror_and_move_a_group(broker.bootstrap, target.bootstrap, tmp_path)
    finally:
        target.close()
