"""Keys pykafkad accepts but does not act on (docs/configuration.md's "accepted only" keys and the
Kafka keys accepted with no effect) are named in one WARN line at start-up when set: none is taken,
described by DescribeConfigs and then silently ignored."""

from __future__ import annotations

from pathlib import Path

from compat_tests.broker_process import BrokerProcess

LINE = "configuration keys accepted but with no effect in pykafkad: "


def _warnings(broker: BrokerProcess) -> list[str]:
    broker.start()
    try:
        return [line for line in broker.stderr_text().splitlines() if LINE in line]
    finally:
        # close, not stop: a SIGTERM in the first instants of a broker's life can find no handler yet.
        broker.close()


def test_keys_with_no_effect_are_named_in_one_warning(tmp_path: Path) -> None:
    lines = _warnings(BrokerProcess(tmp_path / "logs", {
        "num.network.threads": "3", "num.io.threads": "8", "socket.send.buffer.bytes": "102400",
        "log.preallocate": "true", "log.segment.delete.delay.ms": "1000"}, name="accepted-only"))
    assert len(lines) == 1, lines
    assert " WARNING " in lines[0]
    assert lines[0].split(LINE)[1] == ("log.preallocate, log.segment.delete.delay.ms, num.io.threads, "
                                       "num.network.threads, socket.send.buffer.bytes (docs/configuration.md says "
                                       "why)")


def test_configs_server_properties_sets_none_of_them(tmp_path: Path) -> None:
    assert _warnings(BrokerProcess(tmp_path / "logs", name="stock-config")) == []


def test_set_at_run_time_they_are_named_in_one_warning_each_time(tmp_path: Path) -> None:
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic

    from compat_tests.clients import unique_topic
    from compat_tests.storage_support import wait_for

    broker = BrokerProcess(tmp_path / "logs", name="accepted-only-live").start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        topic = unique_topic("preallocated")
        created = admin.create_topics([NewTopic(topic, 1, 1, config={"preallocate": "true", "retention.ms": "-1"})])
        created[topic].result(30)
        altered = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=[
            ConfigEntry("file.delete.delay.ms", "1000", incremental_operation=AlterConfigOpType.SET)])
        admin.incremental_alter_configs([altered])[altered].result(30)
        dynamic = ConfigResource(ConfigResource.Type.BROKER, "1", incremental_configs=[
            ConfigEntry("log.preallocate", "true", incremental_operation=AlterConfigOpType.SET)])
        admin.incremental_alter_configs([dynamic])[dynamic].result(30)

        def warned() -> list[str]:
            return [line.split(" WARNING ", 1)[1] for line in broker.stderr_text().splitlines()
                    if "accepted but with no effect" in line and " WARNING " in line]

        wait_for("three warnings", lambda: len(warned()) == 3)
        tail = "accepted but with no effect in pykafkad (docs/configuration.md says why)"
        assert [line.split(": ", 1)[1] for line in warned()] == [
            f"topic {topic}: preallocate {tail}",
            f"topic {topic}: file.delete.delay.ms, preallocate {tail}",
            f"broker 1: log.preallocate {tail}",
        ]
    finally:
        broker.stop()
