"""A TCP proxy that holds every byte from the server back for a fixed delay before passing it on.

    python -m benchmarks.delay_proxy LISTEN_PORT TARGET_PORT DELAY_MS

Used by `benchmarks.fetch_backoff` to make a broker answer later without touching the broker:
bytes keep their order, nothing is dropped or merged differently from what TCP may do anyway,
and the client-to-server direction passes straight through.  Listens on 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import sys
import time


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay_s: float) -> None:
    held: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def release() -> None:
        while True:
            due, data = await held.get()
            if not data:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        writer.close()

    releaser = asyncio.create_task(release())
    try:
        while data := await reader.read(1 << 20):
            held.put_nowait((time.monotonic() + delay_s, data))
    finally:
        held.put_nowait((0.0, b""))
        await releaser


async def _serve(listen_port: int, target_port: int, delay_s: float) -> None:
    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            server_r, server_w = await asyncio.open_connection("127.0.0.1", target_port)
        except OSError:
            client_w.close()
            return
        # One direction ending (or failing) must not leave the other waiting forever.
        await asyncio.gather(_pump(client_r, server_w, 0.0), _pump(server_r, client_w, delay_s),
                             return_exceptions=True)

    server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
    async with server:
        await server.serve_forever()


def main(argv: list[str]) -> None:
    if len(argv) != 3:
        raise SystemExit(__doc__)
    listen_port, target_port, delay_ms = int(argv[0]), int(argv[1]), float(argv[2])
    asyncio.run(_serve(listen_port, target_port, delay_ms / 1000))


if __name__ == "__main__":
    main(sys.argv[1:])
