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
    Operation,
    Permission,
    ResourceType,
    allowing_operations,
)
from pykafkad.security.acl_store import AclStore

audit = logging.getLogger("kafka.authorizer.logger")

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
        """Whether ``principal`` may perform ``operation`` on some resource of ``resource_type``
        (Kafka's authorizeByResourceType): an ALLOW on any pattern not wholly cancelled by a DENY."""
        if principal in self.super_users:
            return True
        bindings = [b for b in self.acls.of_type(resource_type) if b.entry.applies_to(principal, host)]
        if not bindings and not self.acls.of_type(resource_type):
            return self.allow_if_no_acls
        denied = {b.pattern for b in bindings if b.entry.permission == Permission.DENY
                  and b.entry.operation in (operation, Operation.ALL)}
        if any(p.name == "*" and p.pattern_type.name == "LITERAL" for p in denied):
            return False
        allowing = allowing_operations(operation)
        return any(b.entry.permission == Permission.ALLOW and b.entry.operation in allowing
                   and b.pattern not in denied for b in bindings)

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
