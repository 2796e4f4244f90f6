"""The host an ACL sees: the client's address as Java writes it."""

from __future__ import annotations

from pykafkad.handlers.api import ANONYMOUS, RequestContext


def test_hosts_as_java_writes_them() -> None:
    assert RequestContext(0, 0, 0, None, "127.0.0.1:5000").host == "127.0.0.1"
    assert RequestContext(0, 0, 0, None, "::1:5000").host == "0:0:0:0:0:0:0:1"
    assert RequestContext(0, 0, 0, None, "fe80::a:5000").host == "fe80:0:0:0:0:0:0:a"
    assert RequestContext(0, 0, 0, None, "127.0.0.1:5000").principal == ANONYMOUS
    assert RequestContext(0, 0, 0, None, "1.2.3.4:1", tls_principal="User:CN=a").principal == "User:CN=a"
