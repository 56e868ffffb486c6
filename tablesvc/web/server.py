"""The web server process: one MQTT client in, pages out.

It is a consumer of the feed like any other (DESIGN: a table box never serves
browsers, and a crash here never touches a game). Who owns what: paho's
network thread feeds the :class:`~tablesvc.web.feed_store.Store` (under its lock);
uvicorn's asyncio loop serves the pages, which the store tells of changes
through ``call_soon_threadsafe``. Commands from the referee console go out on
the same MQTT connection; replies come back through the store.

Start order: the store, then the broker connection (retained ``status``,
``state`` and ``devices/*`` fill the store at once), then the HTTP listener.
Stop in reverse. :meth:`WebServer.start` runs uvicorn on a thread of its own
so that ``tablesvc run`` and ``tablesvc demo`` can host it beside a table;
``tablesvc web`` calls :meth:`serve_forever`.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn

from tablesvc.mqtt.link import IncomingMessage, MqttLink
from tablesvc.mqtt.url import BrokerURL
from tablesvc.web.app import build_app
from tablesvc.web.feed_store import Store
from tablesvc.web.settings import WebSettings

__all__ = ["WebServer", "parse_listen"]

log = logging.getLogger(__name__)


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``:8080`` or ``8080`` listen on 127.0.0.1)."""
    host, _, port = text.rpartition(":") if ":" in text else ("", "", text)
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"listen address {text!r}: write HOST:PORT, e.g. 0.0.0.0:8080") from None
    if not 0 <= number < 65536:
        raise ValueError(f"listen address {text!r}: the port must be 0..65535")
    return host, number


class WebServer:
    """Overlay, dashboard and referee console for every table of a site, from one broker."""

    def __init__(self, broker: BrokerURL, *, listen: tuple[str, int] = ("127.0.0.1", 8080), prefix: str = "tablesvc",
                 settings: WebSettings | None = None, protocol: str = "auto", idle_alert: float = 600.0,
                 photo_reader: Callable[[], Any] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings or WebSettings()
        self.store = Store(prefix, idle_limit=idle_alert)
        site = self.settings.site or "+"
        self.link = MqttLink(
            broker, client_id=f"tablesvc-web-{os.getpid()}-{int(time.time() * 1000) % 10**8}",
            on_connected=lambda: None, on_message=self._message, subscriptions=(f"{prefix}/{site}/+/#",),
            protocol=protocol)
        self.app = build_app(self.store, self.settings, self._publish, photo_reader, clock=clock)
        self.broadcast_link = None  # the hands' own connection, with the broadcast account (broadcast.py)
        if self.settings.broadcast_key:
            from tablesvc.web.broadcast import broadcast_link

            url = BrokerURL.parse(self.settings.broadcast_broker) if self.settings.broadcast_broker else broker
            self.broadcast_link = broadcast_link(url, self.app.state.broadcast, site=self.settings.site,
                                                 protocol=protocol)
        self.host, self.port = listen
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.demo_password: str | None = None  # `tablesvc demo` makes one up and prints it

    def _message(self, msg: IncomingMessage) -> None:
        self.store.feed(msg.topic, msg.payload)
        if msg.topic.endswith("/results") and getattr(self.app.state, "tournament", None) is not None:
            self.app.state.tournament.poke()  # a result: the standings change as soon as the collector wrote it

    def _publish(self, topic: str, payload: bytes) -> bool:
        return self.link.publish(topic, payload, qos=1) is not None

    def _uvicorn(self) -> uvicorn.Server:
        # log_config=None: logging is configured once, by the CLI. proxy_headers=False: forwarded addresses are
        # believed only from [web] trusted_proxies, by the app itself (a client must not pick its own address)
        config = uvicorn.Config(self.app, host=self.host, port=self.port, log_config=None, access_log=False,
                                timeout_graceful_shutdown=1, lifespan="off", proxy_headers=False)
        return uvicorn.Server(config)

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{host}:{self.port}"

    def start(self, timeout: float = 10.0) -> None:
        """Connect and listen in the background; returns once the listener is up (port 0 picks a free one)."""
        self.link.start()
        sock = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError as exc:
            sock.close()
            self.link.stop()
            if self.broadcast_link is not None:
                self.broadcast_link.stop()
            raise OSError(f"cannot listen on {self.host}:{self.port}: {exc.strerror}") from None
        self.port = sock.getsockname()[1]
        self._server = self._uvicorn()
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, name="web-http",
                                        daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        if not self._server.started:
            raise RuntimeError(f"the web server did not start on {self.host}:{self.port}")
        if self.broadcast_link is not None:
            # after the ordinary connection: a small broker (the demo's) can trip on two clients at the same moment
            self.link.wait_connected(2)
            self.broadcast_link.start()
        log.info("web server on %s", self.url)

    def stop(self) -> None:
        self.store.close_all()  # SSE streams end on their own, so the shutdown need not cancel them
        self.app.state.broadcast.close_all()
        if getattr(self.app.state, "tournament", None) is not None:
            self.app.state.tournament.end_streams()
        time.sleep(0.05)
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(5)
        if self.app.state.standings is not None:
            self.app.state.standings.close()  # the records database's connections
        if getattr(self.app.state, "tournament", None) is not None:
            self.app.state.tournament.close()
        self.app.state.hashing.shutdown(wait=False)
        self.app.state.photo_queue.close()
        if self.app.state.broadcast_records is not None:
            self.app.state.broadcast_records.close()
        if self.broadcast_link is not None:
            self.broadcast_link.stop()
        self.link.stop()

    def serve_forever(self, stop: threading.Event) -> None:
        self.start()
        try:
            while not stop.wait(0.5):
                pass
        finally:
            self.stop()
