"""A TCP proxy a test can cut and heal: what stands between one broker and ZooKeeper, so the test
can isolate that broker from the cluster's coordination while it keeps running and serving.

Cut, it drops every connection through it and refuses new ones (accepts and closes at once);
healed, it forwards again.  Threads, one listener and two pumps per connection.
"""

from __future__ import annotations

import socket
import threading


class TcpProxy:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._open = True
        self._closed = False
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                if not self._open:
                    client.close()
                    continue
                try:
                    upstream = socket.create_connection(("127.0.0.1", self.target_port))
                except OSError:
                    client.close()
                    continue
                self._sockets |= {client, upstream}
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                self._drop(s)

    def _drop(self, s: socket.socket) -> None:
        with self._lock:
            self._sockets.discard(s)
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()

    def cut(self) -> None:
        """Drop every connection through the proxy and refuse new ones."""
        with self._lock:
            self._open = False
            sockets = list(self._sockets)
        for s in sockets:
            self._drop(s)

    def heal(self) -> None:
        with self._lock:
            self._open = True

    def close(self) -> None:
        self._closed = True
        self.cut()
        self._listener.close()
