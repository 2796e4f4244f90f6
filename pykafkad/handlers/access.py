"""The authorization checks handlers make: each asks whether the request's principal, from its host,
may perform an operation on a resource.  With no ``authorizer.class.name`` everything is allowed, as
in Kafka."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pykafkad.handlers.api import RequestContext
from pykafkad.security.acl import CLUSTER_NAME, Operation, ResourceType
from pykafkad.security.authorizer import OPERATIONS_NOT_REQUESTED, all_operations

if TYPE_CHECKING:
    from pykafkad.broker import Broker

__all__ = ["CLUSTER_NAME", "OPERATIONS_NOT_REQUESTED", "Operation", "ResourceType", "allowed", "allowed_any",
           "cluster_allowed", "operations"]


def allowed(broker: Broker, ctx: RequestContext, operation: Operation, resource_type: ResourceType,
            name: str, log_denial: bool = True) -> bool:
    """``log_denial=False`` for filters (listing what the principal may see), whose refusals are not
    events: Kafka does not audit them either."""
    authorizer = broker.authorizer
    return authorizer is None or authorizer.authorize(ctx.principal, ctx.host, operation, resource_type, name,
                                                      log_denial)


def cluster_allowed(broker: Broker, ctx: RequestContext, operation: Operation, log_denial: bool = True) -> bool:
    return allowed(broker, ctx, operation, ResourceType.CLUSTER, CLUSTER_NAME, log_denial)


def allowed_any(broker: Broker, ctx: RequestContext, operation: Operation, resource_type: ResourceType) -> bool:
    """Whether the principal may perform ``operation`` on some resource of the type."""
    authorizer = broker.authorizer
    return authorizer is None or authorizer.authorize_any(ctx.principal, ctx.host, operation, resource_type)


def operations(broker: Broker, ctx: RequestContext, resource_type: ResourceType, name: str,
               requested: bool = True) -> int:
    """The authorized-operations field of a resource in an answer."""
    if not requested:
        return OPERATIONS_NOT_REQUESTED
    authorizer = broker.authorizer
    if authorizer is None:
        return all_operations(resource_type)
    if resource_type == ResourceType.CLUSTER and not cluster_allowed(broker, ctx, Operation.DESCRIBE, False):
        return 0  # Kafka shows the cluster's operations only to those who may describe it
    return authorizer.authorized_operations(ctx.principal, ctx.host, resource_type, name)
