"""An embedded MQTT broker for the demo, so the first run needs nothing else installed.

amqtt runs in-process on its own asyncio loop in a thread. It speaks MQTT
3.1.1 only and forgets retained messages when it stops: right for a demo,
wrong for a club; ``deploy/mosquitto.conf`` is the production setup.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading

__all__ = ["EmbeddedBroker", "free_port"]

log = logging.getLogger(__name__)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class EmbeddedBroker:
    def __init__(self, host: str = "127.0.0.1", port: int | None = None) -> None:
        self.host = host
        self.port = port or free_port(host)
        self._loop = asyncio.new_event_loop()
        self._loop.set_exception_handler(self._unhandled)
        self._thread: threading.Thread | None = None
        self._broker = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        return f"mqtt://{self.host}:{self.port}"

    def start(self, timeout: float = 10.0) -> None:
        try:
            from amqtt.broker import Broker
        except ImportError:
            raise RuntimeError("the embedded broker needs amqtt: pip install 'tablesvc[demo]', "
                               "or give --broker URL of a running broker") from None
        for name in ("amqtt", "transitions"):  # a demo broker: its own chatter is not the user's concern
            logging.getLogger(name).setLevel(logging.CRITICAL)
        config = {"listeners": {"default": {"type": "tcp", "bind": f"{self.host}:{self.port}"}}}
        self._thread = threading.Thread(target=self._run, args=(Broker, config), name="embedded-broker", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout) or self._error is not None:
            raise RuntimeError(f"the embedded broker did not start on {self.host}:{self.port}: {self._error}")
        log.info("embedded MQTT 3.1.1 broker on %s", self.url)

    @staticmethod
    def _unhandled(_loop: asyncio.AbstractEventLoop, context: dict) -> None:
        """A client's connection task failing inside amqtt (a client gone as the demo stops, a stream closed
        mid-packet) is amqtt's own chatter: one debug line, not a traceback on the user's terminal."""
        log.debug("embedded broker: %s (%r)", context.get("message"), context.get("exception"))

    def _run(self, broker: type, config: dict) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            # made on its own thread, where its loop is the current one: amqtt binds the future that ends its
            # broadcast loop to the loop current when it is made; bound to another thread's loop it would never
            # wake, and each stop would wait out amqtt's 5 s broadcast timeout
            self._broker = broker(config, loop=self._loop)
            self._loop.run_until_complete(self._broker.start())
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        self._loop.run_forever()

    def stop(self, timeout: float = 5.0) -> None:
        if self._broker is None or self._thread is None:
            return
        future = asyncio.run_coroutine_threadsafe(self._broker.shutdown(), self._loop)
        with contextlib.suppress(Exception):
            future.result(timeout)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)
