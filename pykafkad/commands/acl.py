"""``pykafkad acl list|create|delete``: ACLs, as ``kafka-acls.sh`` manages them."""

from __future__ import annotations

import argparse

from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePatternType,
    ResourceType,
)

from pykafkad.commands.connection import CommandError, admin, wait
from pykafkad.commands.output import Report

_RESOURCES = {"topic": ResourceType.TOPIC, "group": ResourceType.GROUP, "cluster": ResourceType.BROKER,
              "transactional-id": ResourceType.TRANSACTIONAL_ID}


def _enum(kind: type, name: str, flag: str) -> object:
    try:
        return kind[name.upper().replace("-", "_")]
    except KeyError:
        choices = ", ".join(m.name.lower().replace("_", "-") for m in kind if m.name not in ("UNKNOWN", "ANY"))
        raise CommandError(f"{flag} {name!r}: use one of {choices}") from None


def _resource(args: argparse.Namespace, any_allowed: bool) -> tuple[ResourceType, str | None]:
    given = [(kind, getattr(args, kind.replace("-", "_"))) for kind in ("topic", "group", "transactional-id")
             if getattr(args, kind.replace("-", "_")) is not None]
    if args.cluster:
        given.append(("cluster", "kafka-cluster"))
    if len(given) > 1 or (not given and not any_allowed):
        raise CommandError("name one resource: --topic, --group, --transactional-id or --cluster")
    if not given:
        return ResourceType.ANY, None
    kind, name = given[0]
    return _RESOURCES[kind], name


def _rows(bindings: list[AclBinding]) -> list[dict[str, str]]:
    return [{"resource_type": b.restype.name.lower(), "name": b.name, "pattern": b.resource_pattern_type.name.lower(),
             "principal": b.principal, "host": b.host, "operation": b.operation.name.lower(),
             "permission": b.permission_type.name.lower()} for b in bindings]


def _report(bindings: list[AclBinding], verb: str) -> Report:
    rows = _rows(bindings)
    return Report(rows, lines=[f"{len(rows)} ACL(s) {verb}"]).table(
        "", ["TYPE", "NAME", "PATTERN", "PRINCIPAL", "HOST", "OPERATION", "PERMISSION"],
        [list(r.values()) for r in rows])


def _filter(args: argparse.Namespace) -> AclBindingFilter:
    rtype, name = _resource(args, any_allowed=True)
    return AclBindingFilter(rtype, name, _enum(ResourcePatternType, args.pattern or "any", "--pattern"),
                            args.principal, args.host, _enum(AclOperation, args.operation or "any", "--operation"),
                            _enum(AclPermissionType, args.permission or "any", "--permission"))


def list_acls(args: argparse.Namespace) -> Report:
    client = admin(args)
    return _report(wait(client.describe_acls(_filter(args)), "list ACLs"), "found")


def create(args: argparse.Namespace) -> Report:
    rtype, name = _resource(args, any_allowed=False)
    pattern = _enum(ResourcePatternType, args.pattern or "literal", "--pattern")
    permission = _enum(AclPermissionType, args.permission or "allow", "--permission")
    bindings = [AclBinding(rtype, name, pattern, args.principal, args.host or "*",
                           _enum(AclOperation, op, "--operation"), permission) for op in args.operations]
    client = admin(args)
    futures = client.create_acls(bindings)
    for binding in bindings:
        wait(futures[binding], f"create an ACL for {args.principal}")
    return _report(bindings, "created")


def delete(args: argparse.Namespace) -> Report:
    client = admin(args)
    acl_filter = _filter(args)
    return _report(wait(client.delete_acls([acl_filter])[acl_filter], "delete ACLs"), "deleted")


def register(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    acl = commands.add_parser("acl", help="list, create and delete ACLs")
    sub = acl.add_subparsers(dest="action", required=True)
    for name, run, text in (("list", list_acls, "ACLs matching the filter (all by default)"),
                            ("create", create, "allow or deny a principal operations on a resource"),
                            ("delete", delete, "delete the ACLs matching the filter")):
        p = sub.add_parser(name, parents=[common], help=text)
        p.add_argument("--topic")
        p.add_argument("--group")
        p.add_argument("--transactional-id")
        p.add_argument("--cluster", action="store_true", help="the cluster resource")
        p.add_argument("--pattern", help="literal or prefixed (create); any, match, literal or prefixed (filters)")
        p.add_argument("--principal", required=name == "create", help="e.g. User:alice")
        p.add_argument("--host", help="the client's address (default * for create)")
        if name == "create":
            p.add_argument("--operation", dest="operations", action="append", required=True,
                           help="read, write, create, delete, alter, describe, all... (repeatable)")
        else:
            p.add_argument("--operation")
        p.add_argument("--permission", help="allow or deny")
        p.set_defaults(run=run)
