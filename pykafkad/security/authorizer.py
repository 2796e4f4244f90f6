"""The ACL authorizer (``authorizer.class.name``): whether a principal from a host may perform an
operation on a resource, decided as Kafka's AclAuthorizer/StandardAuthorizer decide.

1. ``super.users`` may do anything.
2. A resource no ACL covers (for any principal) is allowed only with ``allow.everyone.if.no.acl.found``.
3. A matching DENY wins; else a matching ALLOW (with its implied operations) allows; else denied.

Every decision goes to the ``kafka.authorizer.logger`` logger, as Kafka's audit log: denials at INFO,
grants at DEBUG.
"""

from __future__ import annotations

import logging

from pykafkad.config import BrokerConfig
from pykafkad.security.acl import (
    SUPPORTED_OPERATIONS,
    WILDCARD,
    Operation,
    PatternType,
    Permission,
    ResourceType,
    allowing_operations,
)
from pykafkad.security.acl_store import AclStore

audit = logging.getLogger("kafka.authorizer.logger")

# The resource name Kafka's authorizeByResourceType asks about first: one no ACL should cover.
UNCOVERED_NAME = "hardcode"
# Kafka's "not asked for" value of an authorized-operations field.
OPERATIONS_NOT_REQUESTED = -2147483648


class Authorizer:
    """Decides requests against the ACLs in ``acls``."""

    def __init__(self, config: BrokerConfig, acls: AclStore) -> None:
        self.acls = acls
        self.super_users = config.super_users
        self.allow_if_no_acls = config["allow.everyone.if.no.acl.found"]

    def authorize(self, principal: str, host: str, operation: Operation, resource_type: ResourceType,
                  name: str, log_denial: bool = True) -> bool:
        allowed, reason = self._decide(principal, host, operation, resource_type, name)
        if not allowed and log_denial:
            audit.info("Principal = %s is Denied operation = %s from host = %s on resource = %s:LITERAL:%s "
                       "(%s)", principal, operation.name, host, resource_type.name, name, reason)
        elif allowed and audit.isEnabledFor(logging.DEBUG):
            audit.debug("Principal = %s is Allowed operation = %s from host = %s on resource = %s:LITERAL:%s "
                        "(%s)", principal, operation.name, host, resource_type.name, name, reason)
        return allowed

    def _decide(self, principal: str, host: str, operation: Operation, resource_type: ResourceType,
                name: str) -> tuple[bool, str]:
        if principal in self.super_users:
            return True, "super user"
        entries = self.acls.matching(resource_type, name)
        if not entries:
            return self.allow_if_no_acls, "no ACLs for the resource"
        mine = [e for e in entries if e.applies_to(principal, host)]
        if any(e.permission == Permission.DENY and e.operation in (operation, Operation.ALL) for e in mine):
            return False, "a DENY ACL matched"
        allowing = allowing_operations(operation)
        if any(e.permission == Permission.ALLOW and e.operation in allowing for e in mine):
            return True, "an ALLOW ACL matched"
        return False, "no ALLOW ACL matched"

    def authorize_any(self, principal: str, host: str, operation: Operation, resource_type: ResourceType) -> bool:
        """Whether ``principal`` may perform ``operation`` on some resource of ``resource_type``: Kafka's
        authorizeByResourceType.  A resource no ACL covers decides first (allow.everyone.if.no.acl.found);
        then an ALLOW (of the operation or ALL) counts unless a DENY covers its whole pattern."""
        if principal in self.super_users:
            return True
        if self._decide(principal, host, operation, resource_type, UNCOVERED_NAME)[0]:
            return True
        allowed_ops = (operation, Operation.ALL)
        deny_literals, deny_prefixes, allow_literals, allow_prefixes = set(), set(), set(), set()
        for binding in self.acls.of_type(resource_type):
            entry = binding.entry
            if entry.operation not in allowed_ops or not entry.applies_to(principal, host):
                continue
            literal = binding.pattern.pattern_type == PatternType.LITERAL
            if entry.permission == Permission.DENY:
                (deny_literals if literal else deny_prefixes).add(binding.pattern.name)
            elif entry.permission == Permission.ALLOW:
                (allow_literals if literal else allow_prefixes).add(binding.pattern.name)
        if WILDCARD in deny_literals:
            return False
        for name in allow_literals:
            if name == WILDCARD or (name not in deny_literals and not any(name.startswith(d) for d in deny_prefixes)):
                return True
        return any(not any(prefix.startswith(d) for d in deny_prefixes) for prefix in allow_prefixes)

    def authorized_operations(self, principal: str, host: str, resource_type: ResourceType, name: str) -> int:
        """Kafka's authorized-operations bit field for one resource."""
        bits = 0
        for op in SUPPORTED_OPERATIONS[resource_type]:
            if self.authorize(principal, host, op, resource_type, name, log_denial=False):
                bits |= 1 << op
        return bits


def all_operations(resource_type: ResourceType) -> int:
    """The bit field with no authorizer: every operation of the type (as Kafka answers)."""
    bits = 0
    for op in SUPPORTED_OPERATIONS[resource_type]:
        bits |= 1 << op
    return bits
