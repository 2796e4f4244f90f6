"""ssl.principal.mapping.rules as Kafka's SslPrincipalMapper reads and applies them."""

from __future__ import annotations

import pytest

from pykafkad.security.principal_mapping import PrincipalMappingError, map_name, parse_rules, subject_name


@pytest.mark.parametrize(("rules", "name", "expected"), [
    ("DEFAULT", "CN=alice,OU=eng,O=acme", "CN=alice,OU=eng,O=acme"),
    ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT", "CN=kafka-app,OU=ServiceUsers,O=acme", "kafka-app"),
    ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT", "CN=admin,OU=Admin,O=acme", "CN=admin,OU=Admin,O=acme"),
    ("RULE:^CN=([a-zA-Z]+),.*$/$1/L", "CN=Alice,O=acme", "alice"),
    ("RULE:^CN=([a-zA-Z]+),.*$/$1/U", "CN=Alice,O=acme", "ALICE"),
    ("RULE:^CN=(.*?),OU=(.*?)$/$1@$2/", "CN=bob,OU=ops", "bob@ops"),
    ("RULE:^(.*)$/x\\/y-$1/", "CN=z", "x/y-CN=z"),
    ("  RULE:^CN=(a)$/$1/ ,\n DEFAULT ", "CN=b", "CN=b"),
])
def test_rules_map_names_as_kafka(rules: str, name: str, expected: str) -> None:
    assert map_name(parse_rules(rules), name) == expected


def test_a_name_no_rule_matches_is_refused() -> None:
    with pytest.raises(PrincipalMappingError, match="no rule"):
        map_name(parse_rules("RULE:^CN=(x)$/$1/"), "CN=y")


@pytest.mark.parametrize("rules", ["RULE:abc", "RULE:^(a$/b/", "DEFAULT;DEFAULT", "rule:a/b/"])
def test_bad_rules_are_refused_at_start(rules: str) -> None:
    with pytest.raises(PrincipalMappingError):
        parse_rules(rules)


def test_subjects_are_written_as_java_writes_them() -> None:
    cert = {"subject": ((("countryName", "US"),), (("organizationName", "Acme, Inc."),),
                        (("organizationalUnitName", "eng"),), (("commonName", "alice"),))}
    assert subject_name(cert) == "CN=alice,OU=eng,O=Acme\\, Inc.,C=US"
    assert subject_name({}) is None
