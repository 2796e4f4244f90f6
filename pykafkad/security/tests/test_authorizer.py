"""The authorizer's decisions, on an ACL cache filled by hand: Kafka's precedence and implications; the
cache's index finds what a scan of every pattern finds."""

from __future__ import annotations

import random

from pykafkad.config import build_config
from pykafkad.security.acl import (
    AccessControlEntry,
    Operation,
    PatternType,
    Permission,
    ResourcePattern,
    ResourceType,
)
from pykafkad.security.acl_store import AclStore, decode, encode
from pykafkad.security.authorizer import Authorizer

ALLOW, DENY = Permission.ALLOW, Permission.DENY
TOPIC = ResourceType.TOPIC


def _authorizer(acls: dict[ResourcePattern, list[AccessControlEntry]], **config: str) -> Authorizer:
    store = AclStore(store=None)  # type: ignore[arg-type] - never started: the cache is filled here
    for pattern, entries in acls.items():
        store.cache(pattern, frozenset(entries))
    return Authorizer(build_config({"super.users": "User:root", **config}), store)


def _literal(name: str) -> ResourcePattern:
    return ResourcePattern(TOPIC, name, PatternType.LITERAL)


def test_implications_deny_precedence_and_patterns() -> None:
    a = _authorizer({
        _literal("orders"): [AccessControlEntry("User:alice", "*", Operation.READ, ALLOW),
                             AccessControlEntry("User:alice", "10.0.0.9", Operation.ALL, DENY)],
        ResourcePattern(TOPIC, "logs-", PatternType.PREFIXED): [
            AccessControlEntry("User:*", "*", Operation.WRITE, ALLOW)],
        _literal("*"): [AccessControlEntry("User:carol", "*", Operation.ALTER_CONFIGS, ALLOW)],
    })
    assert a.authorize("User:alice", "127.0.0.1", Operation.READ, TOPIC, "orders")
    assert a.authorize("User:alice", "127.0.0.1", Operation.DESCRIBE, TOPIC, "orders")  # READ implies it
    assert not a.authorize("User:alice", "127.0.0.1", Operation.WRITE, TOPIC, "orders")
    assert not a.authorize("User:alice", "10.0.0.9", Operation.READ, TOPIC, "orders")  # DENY from that host
    assert a.authorize("User:bob", "127.0.0.1", Operation.WRITE, TOPIC, "logs-app")
    assert not a.authorize("User:bob", "127.0.0.1", Operation.WRITE, TOPIC, "log")
    assert a.authorize("User:carol", "127.0.0.1", Operation.DESCRIBE_CONFIGS, TOPIC, "anything")
    assert not a.authorize("User:carol", "127.0.0.1", Operation.DESCRIBE, TOPIC, "anything")
    assert a.authorize("User:root", "127.0.0.1", Operation.DELETE, TOPIC, "orders")  # super user
    # No ACL covers "fresh": refused unless allow.everyone.if.no.acl.found.
    assert not a.authorize("User:bob", "127.0.0.1", Operation.READ, ResourceType.GROUP, "fresh")
    assert a.authorized_operations("User:alice", "127.0.0.1", TOPIC, "orders") == (1 << 3) | (1 << 8)


def test_allow_everyone_if_no_acl_found() -> None:
    a = _authorizer({_literal("orders"): [AccessControlEntry("User:alice", "*", Operation.READ, ALLOW)]},
                    **{"allow.everyone.if.no.acl.found": "true"})
    assert a.authorize("User:bob", "127.0.0.1", Operation.WRITE, TOPIC, "other")
    assert not a.authorize("User:bob", "127.0.0.1", Operation.READ, TOPIC, "orders")


def test_write_on_some_topic() -> None:
    a = _authorizer({ResourcePattern(TOPIC, "t-", PatternType.PREFIXED): [
        AccessControlEntry("User:alice", "*", Operation.WRITE, ALLOW)]})
    assert a.authorize_any("User:alice", "127.0.0.1", Operation.WRITE, TOPIC)
    assert not a.authorize_any("User:bob", "127.0.0.1", Operation.WRITE, TOPIC)


def test_znode_json_round_trips_in_kafkas_spelling() -> None:
    entries = frozenset({AccessControlEntry("User:alice", "*", Operation.DESCRIBE_CONFIGS, ALLOW)})
    assert encode(entries) == (b'{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow",'
                               b'"operation":"DescribeConfigs","host":"*"}]}')
    assert decode(encode(entries)) == entries


def test_some_topic_as_kafkas_authorize_by_resource_type() -> None:
    # allow.everyone.if.no.acl.found: a resource no ACL covers decides, whatever other ACLs exist.
    a = _authorizer({_literal("orders"): [AccessControlEntry("User:alice", "*", Operation.READ, ALLOW)]},
                    **{"allow.everyone.if.no.acl.found": "true"})
    assert a.authorize_any("User:bob", "127.0.0.1", Operation.WRITE, TOPIC)
    # A PREFIXED DENY covers the ALLOWs whose names start with it; a wildcard DENY covers everything.
    prefixed = ResourcePattern(TOPIC, "logs-", PatternType.PREFIXED)
    b = _authorizer({_literal("logs-app"): [AccessControlEntry("User:bob", "*", Operation.WRITE, ALLOW)],
                     prefixed: [AccessControlEntry("User:bob", "*", Operation.WRITE, DENY)]})
    assert not b.authorize_any("User:bob", "127.0.0.1", Operation.WRITE, TOPIC)
    c = _authorizer({ResourcePattern(TOPIC, "logs-app-", PatternType.PREFIXED): [
        AccessControlEntry("User:bob", "*", Operation.WRITE, ALLOW)], _literal("logs-x"): [
        AccessControlEntry("User:bob", "*", Operation.WRITE, DENY)]})
    assert c.authorize_any("User:bob", "127.0.0.1", Operation.WRITE, TOPIC)
    d = _authorizer({_literal("t"): [AccessControlEntry("User:bob", "*", Operation.WRITE, ALLOW)],
                     _literal("*"): [AccessControlEntry("User:*", "*", Operation.ALL, DENY)]})
    assert not d.authorize_any("User:bob", "127.0.0.1", Operation.WRITE, TOPIC)


def test_the_index_finds_what_a_scan_of_every_pattern_finds() -> None:
    rng = random.Random(15)
    names = ["", "*", "a", "ab", "abc", "abd", "b", "orders", "orders-eu", "orders-eu-1", "pay", "payments"]
    for _ in range(200):
        store = AclStore(store=None)  # type: ignore[arg-type]
        patterns = {ResourcePattern(rng.choice([TOPIC, ResourceType.GROUP]), rng.choice(names),
                                    rng.choice([PatternType.LITERAL, PatternType.PREFIXED]))
                    for _ in range(rng.randint(0, 12))}
        for pattern in patterns:
            store.cache(pattern, frozenset({AccessControlEntry(f"User:{pattern}", "*", Operation.READ, ALLOW)}))
        if patterns and rng.random() < 0.5:  # one removed again
            store.cache(next(iter(patterns)), frozenset())
        for rtype in (TOPIC, ResourceType.GROUP):
            for name in names + ["orders-us", "zzz"]:
                scanned = sorted(e.principal for p, entries in store.acls.items() if p.matches(rtype, name)
                                 for e in entries)
                assert sorted(e.principal for e in store.matching(rtype, name)) == scanned, (rtype, name)
