"""Reading an HTTP request body within a size limit, for the HTTP APIs on Starlette (the schema
registry, the REST proxy): a body over the limit is read to its end and dropped, so that the client
gets its 413 instead of a connection reset with the body unsent."""

from __future__ import annotations

from starlette.requests import Request

# A body over the limit but no larger than this is drained before the 413; a larger one is refused
# at once from its Content-Length.
DRAIN_BYTES = 64 * 1024 * 1024


class BodyTooLarge(Exception):
    """The body is larger than the limit it was read with."""


async def read_body(request: Request, max_bytes: int) -> bytes:
    """The whole body, or BodyTooLarge once it passes ``max_bytes``."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max(max_bytes, DRAIN_BYTES):
        raise BodyTooLarge()
    body = bytearray()
    too_large = False
    async for chunk in request.stream():
        if too_large:
            continue
        body += chunk
        if len(body) > max_bytes:
            too_large = True
            body.clear()
    if too_large:
        raise BodyTooLarge()
    return bytes(body)
