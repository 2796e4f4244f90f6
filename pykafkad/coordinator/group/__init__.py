"""Consumer groups (the classic group protocol) and committed offsets.

``coordinator`` routes each request to the actor task that owns its group; ``group`` is that
actor and Kafka's group state machine; ``member`` one member's registration; ``offsets_store``
the ``__consumer_offsets`` record formats and the reading and writing of that topic;
``consumer_protocol`` the few bits of the consumer's embedded protocol the broker needs.
"""

from pykafkad.coordinator.group.coordinator import GroupCoordinator

__all__ = ["GroupCoordinator"]
