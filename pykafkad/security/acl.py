"""Access control entries as Kafka defines them: resource types, pattern types, operations and
permissions (with their wire codes), an ACL binding, a binding filter, and which ACLs apply to a
request.

Kafka's rules, kept here in one place:
- A resource pattern is LITERAL (the exact name, or ``*`` for every name) or PREFIXED (every name
  starting with it).  The CLUSTER resource is always named ``kafka-cluster``.
- An ALLOW of READ, WRITE, DELETE or ALTER implies DESCRIBE; an ALLOW of ALTER_CONFIGS implies
  DESCRIBE_CONFIGS; ALL is every operation.  A DENY implies nothing but itself (and DENY ALL all).
- A principal ``User:*`` and a host ``*`` match everyone.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ResourceType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class Operation(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class Permission(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


CLUSTER_NAME = "kafka-cluster"
WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"

# The operations each resource type has (Kafka's AclEntry.supportedOperations): what an
# authorized-operations bit field may hold, and what an ACL may name.
SUPPORTED_OPERATIONS: dict[ResourceType, tuple[Operation, ...]] = {
    ResourceType.TOPIC: (Operation.READ, Operation.WRITE, Operation.CREATE, Operation.DESCRIBE, Operation.DELETE,
                         Operation.ALTER, Operation.DESCRIBE_CONFIGS, Operation.ALTER_CONFIGS),
    ResourceType.GROUP: (Operation.READ, Operation.DESCRIBE, Operation.DELETE),
    ResourceType.CLUSTER: (Operation.CREATE, Operation.CLUSTER_ACTION, Operation.DESCRIBE_CONFIGS,
                           Operation.ALTER_CONFIGS, Operation.IDEMPOTENT_WRITE, Operation.ALTER, Operation.DESCRIBE),
    ResourceType.TRANSACTIONAL_ID: (Operation.DESCRIBE, Operation.WRITE),
    ResourceType.DELEGATION_TOKEN: (Operation.DESCRIBE,),
    ResourceType.USER: (Operation.CREATE_TOKENS, Operation.DESCRIBE_TOKENS),
}

_IMPLIED_BY: dict[Operation, frozenset[Operation]] = {
    Operation.DESCRIBE: frozenset({Operation.DESCRIBE, Operation.READ, Operation.WRITE, Operation.DELETE,
                                   Operation.ALTER}),
    Operation.DESCRIBE_CONFIGS: frozenset({Operation.DESCRIBE_CONFIGS, Operation.ALTER_CONFIGS}),
}

# The names Kafka's ZooKeeper layout and its authorizer log use.
ZK_RESOURCE_NAMES = {ResourceType.TOPIC: "Topic", ResourceType.GROUP: "Group", ResourceType.CLUSTER: "Cluster",
                     ResourceType.TRANSACTIONAL_ID: "TransactionalId",
                     ResourceType.DELEGATION_TOKEN: "DelegationToken", ResourceType.USER: "User"}
ZK_RESOURCE_TYPES = {name: rtype for rtype, name in ZK_RESOURCE_NAMES.items()}


def camel(member: enum.Enum) -> str:
    """``DESCRIBE_CONFIGS`` as Kafka writes it in ZooKeeper and logs: ``DescribeConfigs``."""
    return "".join(part.capitalize() for part in member.name.split("_"))


OPERATIONS_BY_CAMEL = {camel(op): op for op in Operation}
PERMISSIONS_BY_CAMEL = {camel(p): p for p in Permission}


def allowing_operations(op: Operation) -> frozenset[Operation]:
    """The operations whose ALLOW grants ``op``."""
    return _IMPLIED_BY.get(op, frozenset({op})) | {Operation.ALL}


@dataclass(frozen=True)
class ResourcePattern:
    resource_type: ResourceType
    name: str
    pattern_type: PatternType

    def matches(self, resource_type: ResourceType, name: str) -> bool:
        """Whether this pattern covers the resource ``name`` of ``resource_type``."""
        if self.resource_type != resource_type:
            return False
        if self.pattern_type == PatternType.LITERAL:
            return self.name == name or self.name == WILDCARD
        return self.pattern_type == PatternType.PREFIXED and name.startswith(self.name)


@dataclass(frozen=True)
class AccessControlEntry:
    principal: str
    host: str
    operation: Operation
    permission: Permission

    def applies_to(self, principal: str, host: str) -> bool:
        return (self.principal in (principal, WILDCARD_PRINCIPAL)) and self.host in (host, WILDCARD)


@dataclass(frozen=True)
class AclBinding:
    pattern: ResourcePattern
    entry: AccessControlEntry


@dataclass(frozen=True)
class AclFilter:
    """A DescribeAcls or DeleteAcls filter; None fields and ANY codes match everything."""

    resource_type: ResourceType
    name: str | None
    pattern_type: PatternType
    principal: str | None
    host: str | None
    operation: Operation
    permission: Permission

    def problem(self) -> str | None:
        """Why Kafka refuses this filter, if it does."""
        for member, kind in ((self.resource_type, "resource type"), (self.pattern_type, "pattern type"),
                             (self.operation, "operation"), (self.permission, "permission type")):
            if member.name == "UNKNOWN":
                return f"Filter contains UNKNOWN elements ({kind})"
        return None

    def matches(self, binding: AclBinding) -> bool:
        p, e = binding.pattern, binding.entry
        if self.resource_type != ResourceType.ANY and p.resource_type != self.resource_type:
            return False
        if not self._matches_pattern(p):
            return False
        return ((self.principal is None or self.principal == e.principal)
                and (self.host is None or self.host == e.host)
                and (self.operation == Operation.ANY or self.operation == e.operation)
                and (self.permission == Permission.ANY or self.permission == e.permission))

    def _matches_pattern(self, p: ResourcePattern) -> bool:
        if self.pattern_type == PatternType.MATCH:
            # Every pattern that would apply to the named resource (Kafka's MATCH): the exact literal,
            # the wildcard literal, and prefixes of the name.
            return self.name is None or p.matches(p.resource_type, self.name)
        if self.pattern_type != PatternType.ANY and p.pattern_type != self.pattern_type:
            return False
        return self.name is None or p.name == self.name


def creation_problem(binding: AclBinding) -> str | None:
    """Why Kafka refuses to create ``binding``, if it does (answered with INVALID_REQUEST)."""
    p, e = binding.pattern, binding.entry
    if p.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY) or p.resource_type not in SUPPORTED_OPERATIONS:
        return "Invalid ACL creation: resource type must be a specific type"
    if p.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        return "Invalid ACL creation: pattern type must be LITERAL or PREFIXED"
    if not p.name:
        return "Invalid ACL creation: resource name must not be empty"
    if p.resource_type == ResourceType.CLUSTER and p.name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    if e.operation in (Operation.UNKNOWN, Operation.ANY) or e.permission in (Permission.UNKNOWN, Permission.ANY):
        return "Invalid ACL creation: operation and permission type must be specific"
    if e.operation != Operation.ALL and e.operation not in SUPPORTED_OPERATIONS[p.resource_type]:
        return f"Invalid ACL creation: {e.operation.name} is not an operation of {p.resource_type.name}"
    if ":" not in e.principal or not e.principal.partition(":")[2]:
        return f"Invalid ACL creation: principal {e.principal!r} is not Type:name"
    if not e.host:
        return "Invalid ACL creation: host must not be empty"
    return None
