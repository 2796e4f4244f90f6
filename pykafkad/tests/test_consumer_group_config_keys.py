"""The broker keys of consumer-protocol groups, checked at start-up as Kafka's GroupCoordinatorConfig."""

from __future__ import annotations

import pytest

from pykafkad.config import ConfigError, assignor_names, build_config


def test_defaults_are_kafkas() -> None:
    config = build_config({})
    assert (config["group.consumer.session.timeout.ms"], config["group.consumer.heartbeat.interval.ms"]) == (45000,
                                                                                                             5000)
    assert assignor_names(config["group.consumer.assignors"]) == ["uniform", "range"]
    assert config["group.consumer.assignment.interval.ms"] == 1000


@pytest.mark.parametrize(("props", "message"), [
    ({"group.consumer.heartbeat.interval.ms": "20000"},
     "group.consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms"),
    ({"group.consumer.session.timeout.ms": "1000"},
     "group.consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms"),
    ({"group.consumer.heartbeat.interval.ms": "6000", "group.consumer.session.timeout.ms": "6000",
      "group.consumer.min.session.timeout.ms": "6000"},
     "group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms"),
    ({"group.consumer.assignors": "uniform,sticky"}, "unknown assignor sticky"),
    ({"group.coordinator.rebalance.protocols": "consumer"}, "Disabling the 'classic' protocol is not supported."),
    ({"group.consumer.migration.policy": "sideways"}, "String must be one of (case insensitive)"),
])
def test_bad_values_are_refused_with_kafkas_words(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build_config(props)


def test_kafkas_assignor_class_names_are_taken() -> None:
    config = build_config({"group.consumer.assignors": "org.apache.kafka.coordinator.group.assignor.RangeAssignor"})
    assert assignor_names(config["group.consumer.assignors"]) == ["range"]
