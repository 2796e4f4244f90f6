"""``pykafkad cluster info|health``: the brokers and controller; partitions without a leader or a
full ISR."""

from __future__ import annotations

import argparse

from confluent_kafka.admin import AdminClient

from pykafkad.commands.connection import admin, metadata, wait
from pykafkad.commands.output import Report


def info(args: argparse.Namespace) -> Report:
    client = admin(args)  # held until its answers are in: a collected client cancels them
    described = wait(client.describe_cluster(), "describe the cluster")
    controller = described.controller.id if described.controller is not None else -1
    brokers = [{"id": n.id, "host": n.host, "port": n.port, "rack": n.rack, "controller": n.id == controller}
               for n in sorted(described.nodes, key=lambda n: n.id)]
    report = Report({"cluster_id": described.cluster_id, "controller": controller, "brokers": brokers},
                    lines=[f"cluster {described.cluster_id}, controller {controller}"])
    return report.table("BROKERS", ["ID", "HOST", "PORT", "RACK", "CONTROLLER"],
                        [[b["id"], b["host"], b["port"], b["rack"], "*" if b["controller"] else ""] for b in brokers])


def problem_partitions(client: AdminClient) -> list[dict]:
    """Partitions without a live leader, or whose ISR lacks one of their replicas."""
    found = metadata(client, "read the cluster's metadata")
    problems = []
    for topic in sorted(found.topics.values(), key=lambda t: t.topic):
        for p in sorted(topic.partitions.values(), key=lambda p: p.id):
            if p.leader < 0 or p.leader not in found.brokers:
                problems.append({"topic": topic.topic, "partition": p.id, "problem": "offline", "leader": p.leader,
                                 "replicas": p.replicas, "isr": p.isrs})
            elif len(p.isrs) < len(p.replicas):
                problems.append({"topic": topic.topic, "partition": p.id, "problem": "under-replicated",
                                 "leader": p.leader, "replicas": p.replicas, "isr": p.isrs})
    return problems


def health(args: argparse.Namespace) -> Report:
    problems = problem_partitions(admin(args))
    healthy = not problems
    report = Report({"healthy": healthy, "problems": problems}, exit_code=0 if healthy else 1,
                    lines=["healthy: every partition has a leader and a full ISR" if healthy else
                           f"unhealthy: {len(problems)} partition(s) offline or under-replicated"])
    if problems:
        report.table("", ["TOPIC", "PARTITION", "PROBLEM", "LEADER", "REPLICAS", "ISR"],
                     [[p["topic"], p["partition"], p["problem"], p["leader"], p["replicas"], p["isr"]]
                      for p in problems])
    return report


def register(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    cluster = commands.add_parser("cluster", help="the cluster's brokers and health")
    sub = cluster.add_subparsers(dest="action", required=True)
    sub.add_parser("info", parents=[common], help="brokers and controller").set_defaults(run=info)
    sub.add_parser("health", parents=[common],
                   help="offline and under-replicated partitions (exit 1 if any)").set_defaults(run=health)
