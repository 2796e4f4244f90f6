"""The leader-epoch check every partition request makes (KIP-320)."""

from __future__ import annotations

from wire.error_codes import ErrorCode

NO_EPOCH = -1


def check_leader_epoch(requested: int, current: int) -> ErrorCode | None:
    """A client that knows a newer epoch than ours is ahead of us; an older one has been fenced."""
    if requested == NO_EPOCH or requested == current:
        return None
    return ErrorCode.UNKNOWN_LEADER_EPOCH if requested > current else ErrorCode.FENCED_LEADER_EPOCH
