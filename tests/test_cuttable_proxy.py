"""The cuttable TCP proxy the web tests and the hall bench share: bytes pass both ways, a cut kills the open
connections and refuses new ones, a restore lets them through again."""

from __future__ import annotations

import socket
import threading

import pytest

from hardware_sims.network import CuttableProxy


@pytest.fixture
def echo():
    """A TCP server that sends back what it gets, on a port of its own."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=_echo, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


def _echo(conn: socket.socket) -> None:
    with conn:
        try:
            while data := conn.recv(4096):
                conn.sendall(data)
        except OSError:
            pass


def _ask(port: int, data: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(data)
    assert sock.recv(4096) == data
    return sock


def test_bytes_pass_until_a_cut_and_again_after_a_restore(echo):
    proxy = CuttableProxy(echo)
    try:
        open_one = _ask(proxy.port, b"hello")
        proxy.cut()
        with open_one:
            assert open_one.recv(4096) == b""  # the open connection died with the cut
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=5) as refused:
            assert refused.recv(4096) == b""  # a new one is closed at once while the line is down
        proxy.restore()
        _ask(proxy.port, b"again").close()  # through again: the echo came back
        assert proxy.cuts == 1
    finally:
        proxy.close()


def test_a_connection_with_nothing_behind_the_proxy_is_closed_not_left_hanging(refusing_port):
    proxy = CuttableProxy(refusing_port)  # nothing listens there
    try:
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=5) as sock:
            assert sock.recv(4096) == b""
    finally:
        proxy.close()
