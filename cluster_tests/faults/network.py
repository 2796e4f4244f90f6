"""The fault injector's network: one Linux network namespace per node (ZooKeeper, each broker), joined
by veth pairs to a bridge in the harness's own namespace, and the kernel rules that break it.

Each node has one address on the bridge's subnet; the harness and its clients stay in the root
namespace and reach every node through the bridge, as Jepsen's clients do, so a partition cuts the
nodes from each other, never the clients from the cluster.  Faults are kernel rules inside the node's
namespace, never something the broker is told about:

* ``cut(a, b)``: nftables drops everything between two nodes, both ways; ``cut_one_way(a, b)`` drops
  only what ``a`` sends to ``b`` (``b``'s replies and its own requests to ``a`` still leave ``b``,
  but nothing of ``a``'s arrives).
* ``lossy(node, percent)``: nftables drops that share of the node's packets at random
  (``numgen random``), both ways.
* ``slow(node)``: ``tc netem`` delay where the kernel has netem; this machine's kernel does not
  (``Specified qdisc kind is unknown``), so the fallback is a token-bucket rate limit (``tc tbf``)
  on the node's interface, which delays every packet behind the queue it builds.
* ``heal()``: removes every rule and qdisc.

Everything is created under a prefix of the run's own and removed by ``close()``.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass

TABLE = "faults"


class NetworkError(RuntimeError):
    """A command that builds or breaks the network failed."""


def _run(*cmd: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if check and result.returncode != 0:
        raise NetworkError(f"{' '.join(cmd)}: {result.stderr.strip() or result.stdout.strip()}")
    return result


def available() -> str | None:
    """None when this process can build namespaces (root, iproute2 and nft present); else why not."""
    if os.geteuid() != 0:
        return "the fault injector makes network namespaces and needs root"
    for tool in ("ip", "nft", "tc"):
        if _run("sh", "-c", f"command -v {tool}", check=False).returncode != 0:
            return f"`{tool}` is missing: `make faults-deps` installs iproute2 and nftables"
    return None


def _remove_abandoned() -> None:
    """Namespaces of runs killed before their teardown (no process left in them), and their bridges."""
    names = _run("ip", "netns", "list", check=False).stdout.split("\n")
    for name in (line.split()[0] for line in names if line.strip()):
        if re.fullmatch(r"f\d+-(zk|b\d)", name) and not _run("ip", "netns", "pids", name, check=False).stdout.strip():
            _run("ip", "netns", "del", name, check=False)
    live = {line.split()[0].split("-")[0] for line in _run("ip", "netns", "list", check=False).stdout.split("\n")
            if line.strip()}
    for line in _run("ip", "-br", "link", check=False).stdout.split("\n"):
        bridge = line.split()[0] if line.strip() else ""
        if re.fullmatch(r"f\d+br", bridge) and bridge[:-2] not in live:
            _run("ip", "link", "del", bridge, check=False)


@dataclass
class Node:
    name: str
    netns: str
    address: str
    veth: str


class Network:
    """A bridge and one namespace per node name, on 10.<a>.<b>.0/24 chosen from the run's pid."""

    def __init__(self, names: list[str], prefix: str | None = None) -> None:
        tag = prefix or f"f{os.getpid() % 100000}"
        self.bridge = f"{tag}br"
        subnet = 100 + os.getpid() % 100, (os.getpid() // 100) % 250
        self.gateway = f"10.{subnet[0]}.{subnet[1]}.254"
        self.nodes = {name: Node(name, f"{tag}-{name}", f"10.{subnet[0]}.{subnet[1]}.{i + 1}", f"{tag}v{i}")
                      for i, name in enumerate(names)}
        self.netem = False
        self._built = False

    def build(self) -> Network:
        self.close()
        _remove_abandoned()
        self._built = True
        _run("ip", "link", "add", self.bridge, "type", "bridge")
        _run("ip", "addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        _run("ip", "link", "set", self.bridge, "up")
        for node in self.nodes.values():
            _run("ip", "netns", "add", node.netns)
            _run("ip", "link", "add", node.veth, "type", "veth", "peer", "name", "eth0", "netns", node.netns)
            _run("ip", "link", "set", node.veth, "master", self.bridge, "up")
            _run("ip", "-n", node.netns, "addr", "add", f"{node.address}/24", "dev", "eth0")
            _run("ip", "-n", node.netns, "link", "set", "eth0", "up")
            _run("ip", "-n", node.netns, "link", "set", "lo", "up")
            self._nft(node, f"add table inet {TABLE}")
            self._nft(node, f"add chain inet {TABLE} input {{ type filter hook input priority 0 ; }}")
            self._nft(node, f"add chain inet {TABLE} output {{ type filter hook output priority 0 ; }}")
        probe = next(iter(self.nodes.values()))
        self.netem = _run("ip", "netns", "exec", probe.netns, "tc", "qdisc", "add", "dev", "eth0", "root",
                          "netem", "delay", "1ms", check=False).returncode == 0
        if self.netem:
            _run("ip", "netns", "exec", probe.netns, "tc", "qdisc", "del", "dev", "eth0", "root")
        return self

    def prefix(self, name: str) -> list[str]:
        """The command prefix that runs a program inside ``name``'s namespace."""
        return ["ip", "netns", "exec", self.nodes[name].netns]

    def address(self, name: str) -> str:
        return self.nodes[name].address

    def _nft(self, node: Node, rule: str) -> None:
        _run("ip", "netns", "exec", node.netns, "nft", rule)

    # -- faults ------------------------------------------------------------------------------------

    def cut_one_way(self, source: str, target: str) -> None:
        """Nothing ``source`` sends reaches ``target``."""
        a, b = self.nodes[source], self.nodes[target]
        self._nft(a, f"add rule inet {TABLE} output ip daddr {b.address} drop")
        self._nft(b, f"add rule inet {TABLE} input ip saddr {a.address} drop")

    def cut(self, a: str, b: str) -> None:
        self.cut_one_way(a, b)
        self.cut_one_way(b, a)

    def lossy(self, name: str, percent: int) -> None:
        node = self.nodes[name]
        for chain in ("input", "output"):
            # Only the cluster's own traffic: the harness's clients (the gateway) keep a clean link.
            peer = "saddr" if chain == "input" else "daddr"
            self._nft(node, f"add rule inet {TABLE} {chain} ip {peer} != {self.gateway} "
                            f"numgen random mod 100 < {percent} drop")

    def slow(self, name: str) -> str:
        """Delay the node's packets; says how."""
        node = self.nodes[name]
        if self.netem:
            _run("ip", "netns", "exec", node.netns, "tc", "qdisc", "add", "dev", "eth0", "root", "netem",
                 "delay", "200ms", "50ms")
            return "netem delay 200±50 ms"
        _run("ip", "netns", "exec", node.netns, "tc", "qdisc", "add", "dev", "eth0", "root", "tbf",
             "rate", "2mbit", "burst", "32kbit", "latency", "2s")
        return "tbf 2 Mbit/s (no netem in this kernel)"

    def heal(self) -> None:
        for node in self.nodes.values():
            for chain in ("input", "output"):
                _run("ip", "netns", "exec", node.netns, "nft", "flush", "chain", "inet", TABLE, chain, check=False)
            _run("ip", "netns", "exec", node.netns, "tc", "qdisc", "del", "dev", "eth0", "root", check=False)

    def close(self) -> None:
        for node in self.nodes.values():
            _run("ip", "netns", "del", node.netns, check=False)
            _run("ip", "link", "del", node.veth, check=False)
        _run("ip", "link", "del", self.bridge, check=False)
