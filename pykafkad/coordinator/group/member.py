"""One member of a classic group: its registration, its protocols, and the replies held for it.

A member is owned by its group's actor; nothing else reads or writes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import trio


@dataclass
class Member:
    """A member as Kafka's ``ClassicGroupMember`` keeps it."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    # The JoinGroup / SyncGroup reply channel held until the rebalance answers it.
    join_reply: trio.MemorySendChannel[dict[str, Any]] | None = None
    sync_reply: trio.MemorySendChannel[dict[str, Any]] | None = None
    # A member added in this rebalance (KIP-394 new-member join timeout applies).
    is_new: bool = False
    # trio.current_time() after which the member's session has expired.
    deadline: float = field(default=float("inf"))

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def awaiting_join(self) -> bool:
        return self.join_reply is not None

    @property
    def awaiting_sync(self) -> bool:
        return self.sync_reply is not None

    def metadata_for(self, protocol: str | None) -> bytes:
        for name, metadata in self.protocols:
            if name == protocol:
                return metadata
        return b""

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return self.protocols == protocols


def reply(channel: trio.MemorySendChannel[dict[str, Any]] | None, response: dict[str, Any]) -> None:
    """Answer a held request; a requester that went away (connection closed) is ignored."""
    if channel is None:
        return
    try:
        channel.send_nowait(response)
    except (trio.BrokenResourceError, trio.ClosedResourceError, trio.WouldBlock):
        pass
