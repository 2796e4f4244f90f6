"""Every API version the broker advertises is served: a request of each answers in that version.

The broker's ApiVersions answer is the list under test, so a newly advertised version is
covered the moment it is advertised.  Bodies carry the schema defaults (empty topic lists,
empty group ids...), which exercise decoding, dispatch and encoding of every version; the
behaviour behind each API is covered by the other compat tests.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.raw_kafka import RawConnection

PRODUCE = 0
REFUSED_PRODUCE_VERSIONS = range(0, 3)  # advertised as Kafka 4 does, refused at request time

# Defaults that would make the broker wait (acks=0 has no response) or touch real state.
BODY_OVERRIDES: dict[int, dict[str, Any]] = {
    PRODUCE: {"acks": 1, "timeout_ms": 1000, "topic_data": []},
    1: {"max_wait_ms": 0, "topics": []},  # Fetch
    3: {"topics": []},  # Metadata: no topics rather than all
}


def _advertised(broker: BrokerProcess) -> dict[int, tuple[int, int]]:
    with RawConnection(broker.port) as conn:
        error, apis = conn.api_versions(3)
    assert error == 0
    return apis


def test_every_advertised_version_answers(broker: BrokerProcess) -> None:
    apis = _advertised(broker)
    assert apis, "the broker advertised nothing"
    exercised = 0
    for api_key, (low, high) in sorted(apis.items()):
        for version in range(low, high + 1):
            if api_key == PRODUCE and version in REFUSED_PRODUCE_VERSIONS:
                continue
            with RawConnection(broker.port) as conn:
                try:
                    response = conn.request(api_key, version, dict(BODY_OVERRIDES.get(api_key, {})))
                except Exception as e:  # noqa: BLE001 - report which api/version broke, whatever broke
                    pytest.fail(f"api {api_key} v{version}: {e!r}\n{broker.stderr_tail(20)}")
            assert isinstance(response, dict), (api_key, version)
            exercised += 1
    assert exercised >= 40


@pytest.mark.parametrize("version", REFUSED_PRODUCE_VERSIONS)
def test_produce_v0_to_v2_are_advertised_but_refused(broker: BrokerProcess, version: int) -> None:
    low, _ = _advertised(broker)[PRODUCE]
    assert low == 0
    with RawConnection(broker.port) as conn:
        conn.send(b"\x00\x00\x00\x0a" + PRODUCE.to_bytes(2, "big") + version.to_bytes(2, "big")
                  + (7).to_bytes(4, "big") + b"\xff\xff")
        assert conn.wait_closed(), "a Produce v0-2 request must be refused"
    with RawConnection(broker.port) as conn:
        assert conn.api_versions(3)[0] == 0, "the broker must keep serving others"


def test_topic_ids_survive_restart(broker_factory) -> None:
    b = broker_factory("ids", {"auto.create.topics.enable": "true"})
    name = f"ids-{uuid.uuid4().hex[:8]}"
    with RawConnection(b.port) as conn:
        # As Kafka, the request that auto-creates the topic is answered without it; the next shows it.
        creating = conn.request(3, 12, {"topics": [{"name": name}], "allow_auto_topic_creation": True})
        assert creating["topics"][0]["error_code"] == 3
        first = conn.request(3, 12, {"topics": [{"name": name}], "allow_auto_topic_creation": False})
    [topic] = first["topics"]
    assert topic["error_code"] == 0 and topic["topic_id"].int != 0
    b.restart()
    with RawConnection(b.port) as conn:
        again = conn.request(3, 12, {"topics": [{"name": name}], "allow_auto_topic_creation": False})
        by_id = conn.request(3, 12, {"topics": [{"topic_id": topic["topic_id"], "name": None}]})
    assert again["topics"][0]["topic_id"] == topic["topic_id"]
    assert again["cluster_id"] == first["cluster_id"]
    assert by_id["topics"][0]["name"] == name
