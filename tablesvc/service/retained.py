"""What the broker still holds of a table: read its retained ``state`` before the service overwrites it.

A table whose journal is missing or empty either is new, or has lost its
journal (a wiped disk, a truncated file, a wrong ``data_dir``). The broker
tells the two apart: it keeps the last ``state`` the service published,
retained, with the journal's ``seq``. The service reads it before it
connects for real, because its first act on connecting is to publish its own
``state``, which would replace the only remaining copy of the game with an
empty one.

Retained messages follow the SUBACK of their subscription, ``state``'s
before ``status``'s (subscribed in that order): ``status`` (retained by every
service that ever ran, by its Last Will if nothing else) ends the wait at
once; a broker that never heard of the table answers with nothing, and the
wait ends a moment after the SUBACKs.
"""

from __future__ import annotations

import json
import threading
import time

from tablesvc.mqtt.link import IncomingMessage, MqttLink
from tablesvc.mqtt.topics import TopicTree
from tablesvc.mqtt.url import BrokerURL

__all__ = ["BrokerUnreachable", "retained_seq"]

#: After the SUBACKs, how long retained messages may still be on their way.
_GRACE = 0.3


class BrokerUnreachable(RuntimeError):
    """The broker could not be asked in time."""


def retained_seq(url: BrokerURL, topics: TopicTree, *, client_id: str, protocol: str = "auto",
                 ca_file: str | None = None, timeout: float = 10.0,
                 stop: threading.Event | None = None) -> int | None:
    """The ``seq`` of the table's retained ``state`` on the broker, or None when it holds none.

    Raises :class:`BrokerUnreachable` when no connection is made within ``timeout`` seconds, or as soon as
    ``stop`` is set (a service told to stop while it waits for its broker stops then, not at the timeout).
    """
    found: dict[str, dict] = {}
    status_seen = threading.Event()

    def on_message(msg: IncomingMessage) -> None:
        try:
            payload = json.loads(msg.payload) if msg.payload else None
        except ValueError:
            payload = None
        if msg.topic == topics.state and isinstance(payload, dict):
            found["state"] = payload
        elif msg.topic == topics.status:
            status_seen.set()

    link = MqttLink(url, client_id=client_id, on_connected=lambda: None, on_message=on_message,
                    subscriptions=(topics.state, topics.status), protocol=protocol, ca_file=ca_file)
    link.start()
    deadline = time.monotonic() + timeout

    def unless_stopped() -> None:
        if stop is not None and stop.is_set():
            raise BrokerUnreachable(f"stopped before the broker {url} answered")

    try:
        # the link says why it cannot connect at its second attempt (a second in)
        while not link.wait_connected(min(0.1, max(0.0, deadline - time.monotonic()))):
            unless_stopped()
            if time.monotonic() >= deadline:
                raise BrokerUnreachable(
                    f"cannot reach the broker {url}: {link.failure or f'no answer in {timeout:.0f} s'}")
        deadline = time.monotonic() + timeout
        while not status_seen.is_set() and not link.subscribed.is_set() and time.monotonic() < deadline:
            unless_stopped()
            status_seen.wait(0.05)
        if not status_seen.is_set():
            status_seen.wait(_GRACE)
    finally:
        link.stop()
    seq = found.get("state", {}).get("seq")
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None
