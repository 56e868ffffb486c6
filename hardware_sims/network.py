"""A network that can fail on purpose: a TCP proxy whose connections are cut, as a Wi-Fi drop or a pulled cable
would, for the tests (a browser losing the web server) and the benches (a hall's bridge losing its broker)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable

__all__ = ["CuttableProxy"]


class CuttableProxy:
    """Listens on ``127.0.0.1:port`` and passes every connection through to ``127.0.0.1:target``.
    :meth:`cut` kills the open connections and refuses new ones until :meth:`restore`; ``cuts`` counts them.

    ``downstream``, when given, makes a filter per connection for what the server sends back (it gets the bytes as
    they come and returns those to pass on, or raises :class:`OSError` to reset the connection there): a network
    that loses one kind of packet with its connection, which a cut cannot aim at."""

    def __init__(self, target: int, downstream: Callable[[], Callable[[bytes], bytes]] | None = None) -> None:
        self.target = target
        self.downstream = downstream
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.up = True
        self.cuts = 0
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, name="cuttable-proxy", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.up:
                client.close()
                continue
            try:
                server = socket.create_connection(("127.0.0.1", self.target))
            except OSError:  # nothing listens behind the proxy (yet): the client sees its connection closed
                client.close()
                continue
            with self._lock:
                self._open += [client, server]
            back = self.downstream() if self.downstream is not None else None
            for a, b, passes in ((client, server, None), (server, client, back)):
                threading.Thread(target=self._pipe, args=(a, b, passes), daemon=True).start()

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket, passes: Callable[[bytes], bytes] | None = None) -> None:
        try:
            while data := a.recv(65536):
                if passes is not None:
                    data = passes(data)
                if data:
                    b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            # shut down before closing: a plain close leaves the other direction's thread blocked in recv on
            # the socket, and the kernel sends nothing to the peer while it is, so the peer never hears the end
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                s.close()

    def cut(self) -> None:
        self.up = False
        self.cuts += 1
        with self._lock:
            sockets, self._open = self._open, []
        for s in sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                s.close()

    def restore(self) -> None:
        self.up = True

    def close(self) -> None:
        self.cut()
        self.listener.close()
