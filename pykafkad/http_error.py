"""The error answer of Confluent's HTTP APIs (the schema registry, the REST proxy): an HTTP status,
an ``error_code`` and a message, as ``{"error_code": 40401, "message": "..."}``, which their clients
parse."""

from __future__ import annotations


class ConfluentError(Exception):
    """An answer other than success, in Confluent's shape."""

    def __init__(self, status: int, error_code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message

    def body(self) -> dict[str, object]:
        return {"error_code": self.error_code, "message": self.message}
