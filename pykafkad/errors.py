"""The broker's error type: a Kafka error code with a message, carried from storage to the response."""

from __future__ import annotations

from wire.error_codes import ErrorCode


class KafkaError(Exception):
    """An error the client sees as ``code`` (with ``message`` where the response has room for one)."""

    def __init__(self, code: ErrorCode | int, message: str | None = None) -> None:
        self.code = ErrorCode(code)
        self.message = message
        super().__init__(f"{self.code.name}: {message}" if message else self.code.name)


class StartupError(Exception):
    """The broker cannot start; the message is the one line to show."""
