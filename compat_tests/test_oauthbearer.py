"""SASL/OAUTHBEARER with unsecured tokens, as Kafka's default validator takes them: confluent-kafka
(``enable.sasl.oauthbearer.unsecure.jwt``) and Kafka's Java tools (``OAuthBearerLoginModule`` with
``unsecuredLoginStringClaim_sub``) authenticate as the token's subject, whom ACLs then judge;
expired, unscoped and malformed tokens are refused with RFC 7628's error exchange; a session lasts
no longer than its token (KIP-368)."""

from __future__ import annotations

import base64
import json
import struct
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError, Producer

from compat_tests.broker_process import BrokerProcess, free_port
from compat_tests.clients import create_topic, roundtrip
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection

SASL_AUTHENTICATION_FAILED = 58
JAAS = ('org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
        'unsecuredValidatorRequiredScope="kafka";')


class OAuthBroker:
    def __init__(self, work: Path) -> None:
        self.broker = BrokerProcess(work / "logs", name="oauth")
        self.sasl_port = free_port()
        listeners = f"PLAINTEXT://127.0.0.1:{self.broker.port},SASL_PLAINTEXT://127.0.0.1:{self.sasl_port}"
        self.broker.overrides.update({
            "listeners": listeners, "advertised.listeners": listeners, "auto.create.topics.enable": "false",
            "sasl.enabled.mechanisms": "OAUTHBEARER",
            "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config": JAAS,
            "connections.max.reauth.ms": "600000",
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "allow.everyone.if.no.acl.found": "true",
        })

    def confluent(self, principal: str, scope: str = "kafka", **extra: Any) -> dict[str, Any]:
        return {"bootstrap.servers": f"127.0.0.1:{self.sasl_port}", "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "OAUTHBEARER", "enable.sasl.oauthbearer.unsecure.jwt": True,
                "sasl.oauthbearer.config": f"principal={principal} scope={scope}", **extra}


@pytest.fixture(scope="module")
def oauth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OAuthBroker]:
    server = OAuthBroker(tmp_path_factory.mktemp("oauth"))
    server.broker.start()
    yield server
    server.broker.close()


def _token(claims: dict[str, Any], alg: str = "none") -> str:
    def segment(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
    return f"{segment({'alg': alg})}.{segment(claims)}."


def _first_message(token: str) -> bytes:
    return f"n,,\x01auth=Bearer {token}\x01\x01".encode()


def test_confluent_kafka_authenticates_as_the_tokens_subject(oauth: OAuthBroker) -> None:
    topic = f"oauth-{uuid.uuid4().hex[:8]}"
    create_topic(oauth.broker.bootstrap, topic)
    assert roundtrip(oauth.confluent("alice"), topic, 10, tag="o") == [f"o{n}".encode() for n in range(10)]
    # ACLs judge the token's subject: bob may not write here.
    run_tool("kafka-acls", ["--bootstrap-server", oauth.broker.bootstrap, "--add", "--deny-principal", "User:bob",
                            "--operation", "Write", "--topic", topic])
    outcome: list[Any] = []
    producer = Producer({**oauth.confluent("bob"), "message.timeout.ms": 10000, "retries": 0})
    producer.produce(topic, b"b", on_delivery=lambda err, _m: outcome.append(err))
    producer.flush(30)
    assert outcome[0] is not None and outcome[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    # Refused as Kafka refuses it: the topic now has ACLs, none of which lets bob describe it.
    assert "Principal = User:bob is Denied operation = " in oauth.broker.stderr_text()


def test_kafka_java_tools_with_an_unsecured_token(oauth: OAuthBroker, tmp_path: Path) -> None:
    topic = f"oauth-java-{uuid.uuid4().hex[:8]}"
    create_topic(oauth.broker.bootstrap, topic)
    client = tmp_path / "client-oauth.properties"
    client.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
                      "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule "
                      'required unsecuredLoginStringClaim_sub="carol" unsecuredLoginListClaim_scope=",kafka";\n')
    bootstrap = f"127.0.0.1:{oauth.sasl_port}"
    run_tool("kafka-console-producer", ["--bootstrap-server", bootstrap, "--command-config", str(client),
                                        "--topic", topic], stdin="one\ntwo\n")
    out = run_tool("kafka-console-consumer", ["--bootstrap-server", bootstrap, "--command-config", str(client),
                                              "--topic", topic, "--from-beginning", "--max-messages", "2",
                                              "--timeout-ms", "30000"]).stdout
    assert out.split() == ["one", "two"]


@pytest.mark.parametrize(("claims", "alg", "status"), [
    ({"sub": "alice", "exp": 1, "scope": ["kafka"]}, "none", {"status": "invalid_token"}),
    ({"sub": "alice", "exp": 4102444800, "scope": ["other"]}, "none",
     {"status": "insufficient_scope", "scope": "kafka"}),
    ({"exp": 4102444800, "scope": ["kafka"]}, "none", {"status": "invalid_token"}),
    ({"sub": "alice", "exp": 4102444800, "scope": ["kafka"]}, "HS256", {"status": "invalid_token"}),
])
def test_bad_tokens_are_refused_with_rfc_7628s_exchange(oauth: OAuthBroker, claims: dict[str, Any], alg: str,
                                                        status: dict[str, str]) -> None:
    with RawConnection(oauth.sasl_port) as conn:
        assert conn.request(17, 1, {"mechanism": "OAUTHBEARER"})["error_code"] == 0
        challenge = conn.request(36, 2, {"auth_bytes": _first_message(_token(claims, alg))})
        assert challenge["error_code"] == 0 and json.loads(challenge["auth_bytes"]) == status
        refused = conn.request(36, 2, {"auth_bytes": b"\x01"})
        assert refused["error_code"] == SASL_AUTHENTICATION_FAILED
        assert json.loads(refused["error_message"]) == status
        assert conn.wait_closed()
    with RawConnection(oauth.sasl_port) as conn:
        assert conn.request(17, 1, {"mechanism": "OAUTHBEARER"})["error_code"] == 0
        garbled = conn.request(36, 2, {"auth_bytes": b"n,,\x01auth=Basic abc\x01\x01"})
        assert garbled["error_code"] == SASL_AUTHENTICATION_FAILED
    assert oauth.broker.is_alive()


def test_a_session_lasts_no_longer_than_its_token(oauth: OAuthBroker) -> None:
    expires = time.time() + 20
    with RawConnection(oauth.sasl_port) as conn:
        assert conn.request(17, 1, {"mechanism": "OAUTHBEARER"})["error_code"] == 0
        answer = conn.request(36, 2, {"auth_bytes": _first_message(
            _token({"sub": "dave", "exp": expires, "iat": time.time(), "scope": "kafka"}))})
        assert answer["error_code"] == 0
        # connections.max.reauth.ms is 10 minutes; the token's 20 s win.
        assert 0 < answer["session_lifetime_ms"] <= 20_000, answer
        assert conn.request(3, 12, {"topics": []})["brokers"]


@pytest.mark.parametrize("claims", ['{"sub":"a","exp":1e400}', '{"sub":"a","exp":NaN}',
                                    '{"sub":"a","exp":4102444800,"iat":Infinity}', "[" * 5000 + "]" * 5000])
@pytest.mark.parametrize("handshake_version", [0, 1])
def test_hostile_tokens_cost_only_their_connection(oauth: OAuthBroker, claims: str, handshake_version: int) -> None:
    """Numbers no clock can hold and deeply nested claims are refused like any bad token, on the
    SaslAuthenticate path (v1) and the raw-token path (v0); the broker goes on serving."""
    header = base64.urlsafe_b64encode(b'{"alg":"none"}').rstrip(b"=").decode()
    body = base64.urlsafe_b64encode(claims.encode()).rstrip(b"=").decode()
    first = _first_message(f"{header}.{body}.")
    with RawConnection(oauth.sasl_port) as conn:
        assert conn.request(17, handshake_version, {"mechanism": "OAUTHBEARER"})["error_code"] == 0
        if handshake_version == 1:
            challenge = conn.request(36, 2, {"auth_bytes": first})
            assert json.loads(challenge["auth_bytes"]) == {"status": "invalid_token"}
        else:
            conn.send(struct.pack(">i", len(first)) + first)
            assert json.loads(conn.recv_frame()) == {"status": "invalid_token"}
    with RawConnection(oauth.sasl_port) as conn:
        assert conn.api_versions(3)[0] == 0
    assert oauth.broker.is_alive()
