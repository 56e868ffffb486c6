"""The MQTT connection: the only module that imports paho (broker URLs parse in :mod:`.url`, a failed
connection is explained by :mod:`.probe`).

paho-mqtt 2.x with ``CallbackAPIVersion.VERSION2``. MQTT 5 is tried first and
3.1.1 used when the broker refuses it (the embedded demo broker speaks only
3.1.1). The Last Will marks the table offline if the service dies; paho
reconnects with backoff on its own, and every (re)connection is reported so
the publisher can resend what the broker has not acknowledged.

A consumer that must miss nothing (the records collector) asks for a
persistent session (``session_expiry``: clean start off, the broker keeps
its subscriptions and queues QoS 1 messages while it is away) and for
``manual_ack``: a message is acknowledged only when the consumer calls
:meth:`MqttLink.ack` after it has stored it, so a crash before that gets the
message again at the next connection.

A broker that cannot be reached is said plainly, once per process however
many links to it fail alike (the demo has two), and in the words of what
happens next: a caller that waits with a deadline
(:meth:`MqttLink.wait_connected_or_failed`: ``demo``, ``watch``) gives up, and
its link says so when it does; otherwise paho keeps retrying with backoff and
the link says that, at its second attempt (one second after the first), by
which time a caller that gives up is already waiting.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.subscribeoptions import SubscribeOptions

from tablesvc.mqtt.probe import probe, tls_context
from tablesvc.mqtt.url import BrokerURL

__all__ = ["IncomingMessage", "MqttLink"]

log = logging.getLogger(__name__)


#: Publishes refused in a row as not authorised after which a link that asked (``on_writes_refused``) stops.
WRITES_REFUSED = 2


def _not_authorised(reason: Any) -> bool:
    return getattr(reason, "value", None) == 135 or "not authori" in str(reason).lower()


def _no_delay(_client: mqtt.Client, _userdata: Any, sock: Any) -> None:
    """Send each MQTT packet at once (TCP_NODELAY). With Nagle's algorithm a small packet written while
    the previous one is unacknowledged waits for the broker's delayed ACK (40 ms on Linux): a command's
    PUBACK followed by its reply cost about 40 ms per hop, where a device frame took 3 ms."""
    setsockopt = getattr(sock, "setsockopt", None)  # a WebSocket wrapper has none
    if setsockopt is not None:
        try:
            setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as exc:
            log.debug("cannot set TCP_NODELAY on the broker connection: %s", exc)


class _Said:
    """What this process has said about each broker's connection failures, shared by its links: a failure is
    said once however many links meet it, in the words of whoever will give up or keep trying."""

    lock = threading.Lock()
    failure: ClassVar[dict[tuple[str, int], tuple[str, int]]] = {}  # broker -> (failure said, id of the link)
    waiting: ClassVar[dict[tuple[str, int], int]] = {}  # broker -> callers waiting on a link to it with a deadline
    live: ClassVar[dict[tuple[str, int], int]] = {}  # broker -> links started and not stopped


@dataclass(frozen=True)
class IncomingMessage:
    topic: str
    payload: bytes
    response_topic: str | None = None
    correlation_data: bytes | None = None
    retain: bool = False  # the retain flag as received (with retain_as_published, as the sender set it)
    mid: int = 0
    qos: int = 0


class MqttLink:
    """One broker connection with a Last Will, automatic reconnects and MQTT 5 / 3.1.1 fallback."""

    def __init__(
        self,
        url: BrokerURL,
        *,
        client_id: str,
        on_connected: Callable[[], None],
        will_topic: str | None = None,
        will_payload: bytes = b"",
        on_message: Callable[[IncomingMessage], None] | None = None,
        on_refused: Callable[[int, str], None] | None = None,
        on_disconnected: Callable[[], None] | None = None,
        subscriptions: tuple[str | tuple[str, int], ...] = (),
        protocol: str = "auto",
        ca_file: str | None = None,
        retain_as_published: bool = False,
        session_expiry: int | None = None,
        manual_ack: bool = False,
        on_writes_refused: Callable[[str], None] | None = None,
    ) -> None:
        """``subscriptions``: topic filters, at QoS 1 unless given as ``(filter, qos)``. ``retain_as_published``
        (MQTT 5) keeps the sender's retain flag on live messages too, so that a retained command is known as one
        when it is sent, not only at the next subscription. ``session_expiry`` (seconds): keep the session across
        disconnections (MQTT 5 session expiry; 3.1.1 clean session off). ``manual_ack``: QoS 1 messages are
        acknowledged by :meth:`ack`, not on receipt. ``on_writes_refused``: the broker refused
        :data:`WRITES_REFUSED` publishes in a row as not authorised (MQTT 5), so the account may not write what
        this link writes (another table's account): the link says so, stops reconnecting, and calls it with the
        message (else paho would reconnect every second for ever, each time refused again). Mosquitto closes
        the connection as it refuses a write, and on a busy machine its refusal can be lost with the
        connection: once one refusal is seen, a connection closed with writes outstanding and none of them
        accepted counts as one more."""
        self.url = url
        self._retain_as_published = retain_as_published
        self._client_id = client_id
        self._will: tuple[str | None, bytes] = (will_topic, will_payload)
        self._on_connected = on_connected
        self._on_message = on_message
        self._on_refused = on_refused
        self._on_disconnected = on_disconnected
        self._refused_connect = False
        self._subscriptions = subscriptions
        self._auto = protocol == "auto"
        self._v5 = protocol in ("auto", "5")
        self._ca_file = ca_file
        self._session_expiry = session_expiry
        self._manual_ack = manual_ack
        self._lock = threading.Lock()
        self.connected = threading.Event()
        self.subscribed = threading.Event()  # the broker acknowledged every subscription of this connection
        self._unacked_subscriptions: set[int] = set()
        self.connects = 0
        self._ever_connected = False
        self._stopping = False
        self.failure: str | None = None  # why the last connection attempt failed, None once connected
        self.failed = threading.Event()  # set at each failed attempt, cleared on connection
        self._failures = 0
        self._failure_kind = "mqtt"
        self._broker = (url.host, url.port)
        self._live = False  # counted in _Said.live
        self._on_writes_refused = on_writes_refused
        self._refusals_in_a_row = 0
        self._refused_here = False  # a write refused as not authorised on this connection
        self._topics: dict[int, str] = {}  # message id -> topic, until the broker answers (with on_writes_refused)
        # its own lock, never held while paho is called: paho calls _published holding its outgoing-message lock,
        # which a publish under self._lock waits for
        self._topics_lock = threading.Lock()
        self.writes_refused: str | None = None
        self._client = self._make_client()

    @property
    def protocol(self) -> str:
        return "5" if self._v5 else "3.1.1"

    def _make_client(self) -> mqtt.Client:
        client = mqtt.Client(
            callback_api_version=CallbackAPIVersion.VERSION2,
            client_id=self._client_id,
            protocol=mqtt.MQTTv5 if self._v5 else mqtt.MQTTv311,
            clean_session=None if self._v5 else self._session_expiry is None,
            manual_ack=self._manual_ack,
        )
        if self._will[0] is not None:
            client.will_set(self._will[0], self._will[1], qos=1, retain=True)
        if self.url.username:
            client.username_pw_set(self.url.username, self.url.password)
        if self.url.tls:
            client.tls_set_context(tls_context(self._ca_file))
        client.reconnect_delay_set(min_delay=1, max_delay=30)
        client.max_queued_messages_set(0)
        client.on_connect = self._connected
        client.on_disconnect = self._disconnected
        client.on_message = self._message
        client.on_publish = self._published
        client.on_subscribe = self._subscription_acknowledged
        client.on_socket_open = _no_delay
        client.on_connect_fail = self._connect_failed
        return client

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Connect in the background; returns at once (the broker may come later)."""
        with _Said.lock:
            if not self._live:
                self._live = True
                _Said.live[self._broker] = _Said.live.get(self._broker, 0) + 1
        if self._v5 and self._session_expiry is not None:
            props = Properties(PacketTypes.CONNECT)
            props.SessionExpiryInterval = self._session_expiry
            self._client.connect_async(self.url.host, self.url.port, keepalive=15, clean_start=False,
                                       properties=props)
        else:
            self._client.connect_async(self.url.host, self.url.port, keepalive=15)
        self._client.loop_start()
        if self._auto and self._v5:
            threading.Thread(target=self._watch_handshake, name="mqtt-handshake", daemon=True).start()

    def _watch_handshake(self, window: float = 4.0) -> None:
        """Some 3.1.1-only brokers never answer an MQTT 5 CONNECT: fall back when a reachable
        broker stays silent. A broker that is down is only waited for."""
        while not self._stopping and self._auto and self._v5 and not self._ever_connected:
            if self.connected.wait(window):
                return
            if self._stopping or self._ever_connected or not self._auto or self._refused_connect:
                return
            if probe(self.url, self._ca_file) is None:  # it answers TCP (and TLS) but not an MQTT 5 CONNECT
                self._fall_back()
                return

    def stop(self, *, final: tuple[str, bytes] | None = None, timeout: float = 3.0) -> None:
        """Publish ``final`` (the clean 'offline' status) if connected, then disconnect."""
        self._stopping = True
        if final is not None and self.connected.is_set():
            info = self._client.publish(final[0], final[1], qos=1, retain=True)
            try:
                info.wait_for_publish(timeout)
            except (RuntimeError, ValueError):
                log.warning("could not publish the offline status before stopping")
        self._client.disconnect()
        self._client.loop_stop()
        with _Said.lock:
            if self._live:
                self._live = False
                _Said.live[self._broker] -= 1
                if not _Said.live[self._broker]:  # the last link to it: a later failure is news again
                    del _Said.live[self._broker]
                    _Said.failure.pop(self._broker, None)

    def set_will(self, topic: str, payload: bytes) -> None:
        """The Last Will, before :meth:`start`."""
        self._will = (topic, payload)
        self._client.will_set(topic, payload, qos=1, retain=True)

    def wait_connected(self, timeout: float) -> bool:
        return self.connected.wait(timeout)

    def wait_ready(self, timeout: float) -> bool:
        """Connected and every subscription acknowledged by the broker: a command published from now on
        reaches this link (one published between the CONNACK and the SUBACK is not delivered to it)."""
        deadline = time.monotonic() + timeout
        return self.connected.wait(timeout) and self.subscribed.wait(max(0.0, deadline - time.monotonic()))

    def wait_connected_or_failed(self, timeout: float, *, grace: float = 2.0) -> bool:
        """For a command whose job is not to wait for the broker: True once connected; False at ``timeout``,
        or ``grace`` seconds after a failed attempt (a broker just starting still gets them); then
        :attr:`failure` says why."""
        with _Said.lock:
            _Said.waiting[self._broker] = _Said.waiting.get(self._broker, 0) + 1
        try:
            if self._wait_connected_or_failed(timeout, grace):
                return True
            if self.failure is not None:  # said before the wait ends, so no other link says 'retrying' first
                self._say(self._failure_kind, self.failure, giving_up=True)
            return False
        finally:
            with _Said.lock:
                _Said.waiting[self._broker] -= 1
                if not _Said.waiting[self._broker]:
                    del _Said.waiting[self._broker]

    def _wait_connected_or_failed(self, timeout: float, grace: float) -> bool:
        deadline = time.monotonic() + timeout
        while not self.connected.wait(0.05):
            now = time.monotonic()
            if now >= deadline:
                return False
            if self.failed.is_set():
                give_up = min(deadline, now + grace)
                while time.monotonic() < give_up:
                    if self.connected.wait(0.05):
                        return True
                return False
        return True

    # ------------------------------------------------------------ publishing

    def publish(self, topic: str, payload: bytes, *, qos: int = 1, retain: bool = False,
                correlation: tuple[str, bytes | None] | None = None) -> mqtt.MQTTMessageInfo | None:
        """Send one message; returns paho's handle (``is_published()`` once the broker
        acknowledged it) or None when offline."""
        if not self.connected.is_set():
            return None
        properties = None
        if correlation is not None and self._v5 and correlation[1] is not None:
            properties = Properties(PacketTypes.PUBLISH)
            properties.CorrelationData = correlation[1]
        with self._lock:
            info = self._client.publish(topic, payload, qos=qos, retain=retain, properties=properties)
        if self._on_writes_refused is not None and qos > 0:
            with self._topics_lock:
                if len(self._topics) > 10_000:
                    self._topics.clear()
                self._topics[info.mid] = topic
        if info.rc != mqtt.MQTT_ERR_SUCCESS:
            return None
        return info

    # ------------------------------------------------------------ callbacks (paho's thread)

    def _connected(self, client: mqtt.Client, _userdata: Any, _flags: Any, reason: Any, _props: Any) -> None:
        if reason.is_failure:
            if self._auto and self._v5 and "protocol" in str(reason).lower():
                self._fall_back()
            else:
                self._refused_connect = True  # e.g. not authorised: a real answer, not a 3.1.1-only broker
                failure = f"the broker refused the connection: {reason}"
                if failure != self.failure:
                    log.error("broker %s refused the connection: %s", self.url, reason)
                self.failure = failure
                self.failed.set()
            return
        self._ever_connected = True
        self.connects += 1
        self._refused_here = False
        self.subscribed.clear()
        with _Said.lock:
            _Said.failure.pop(self._broker, None)  # reachable: its next failure is news
        if self.failure is not None:
            log.warning("connected to the broker %s after %d failed attempts", self.url, self._failures)
        self.failure = None
        self._failures = 0
        self.failed.clear()
        log.info("connected to %s (MQTT %s)", self.url, self.protocol)
        with self._lock:
            for item in self._subscriptions:
                topic, qos = item if isinstance(item, tuple) else (item, 1)
                if self._v5 and self._retain_as_published:
                    _rc, mid = client.subscribe(topic, options=SubscribeOptions(qos=qos, retainAsPublished=True))
                else:
                    _rc, mid = client.subscribe(topic, qos=qos)
                if mid is not None:
                    self._unacked_subscriptions.add(mid)
            if not self._unacked_subscriptions:
                self.subscribed.set()
        self.connected.set()
        try:
            self._on_connected()
        except Exception:
            log.exception("error while handling the connection to the broker")

    def _subscription_acknowledged(self, _client: mqtt.Client, _userdata: Any, mid: int, _reasons: Any,
                                   _props: Any) -> None:
        """Retained messages of a subscription follow its SUBACK: after the last one, they are on their way."""
        with self._lock:
            self._unacked_subscriptions.discard(mid)
            done = not self._unacked_subscriptions and not self.subscribed.is_set()
        if done:
            log.info("subscribed to %d topic filter(s) on %s", len(self._subscriptions), self.url)
            self.subscribed.set()

    def _connect_failed(self, _client: mqtt.Client, _userdata: Any) -> None:
        """paho could not connect (it retries with backoff on its own): find out why and say it, never silently.
        The first attempt's failure is said at the second (paho waits a second between them), when a caller
        that gives up is already waiting on this link (it says the failure itself, when it gives up)."""
        found = probe(self.url, self._ca_file)
        self._attempt_failed(*(found if found is not None else ("mqtt", "the connection failed during the MQTT "
                                                                  "handshake")))

    def _attempt_failed(self, kind: str, reason: str) -> None:
        self._failures += 1
        self.failure = reason
        self._failure_kind = kind
        self.failed.set()
        if self._stopping or self._failures == 1:
            return
        self._say(kind, reason, giving_up=False)

    def _say(self, kind: str, reason: str, *, giving_up: bool) -> None:
        """Log a failure to reach the broker: once per process and broker whatever the number of links, again
        when the reason changes and at this link's 10th, 100th, 1000th... attempt; in the words of what follows
        (this link gives up, or paho keeps retrying). Left to the caller who waits with a deadline, if any."""
        with _Said.lock:
            if not giving_up and _Said.waiting.get(self._broker):
                return  # a caller is waiting on a link to this broker and gives up if it stays away: it says it
            said = _Said.failure.get(self._broker)
            repeat = said is not None and said[0] == reason
            if repeat and not (said[1] == id(self) and (self._failures in (10, 100) or self._failures % 1000 == 0)):
                log.debug("cannot connect to the broker %s: %s (said already)", self.url, reason)
                return
            _Said.failure[self._broker] = (reason, id(self))
        attempts = f"{self._failures} attempt{'s' if self._failures > 1 else ''}"
        then = (f"giving up after {attempts}" if giving_up else f"{attempts} so far" if repeat
                else "retrying with backoff (1 to 30 s)")
        level = logging.ERROR if kind == "tls" else logging.WARNING
        log.log(level, "cannot connect to the broker %s: %s; %s", self.url, reason, then)

    def _disconnected(self, _client: mqtt.Client, _userdata: Any, _flags: Any, reason: Any, _props: Any) -> None:
        was = self.connected.is_set()
        self.connected.clear()
        self.subscribed.clear()
        with self._lock:
            self._unacked_subscriptions.clear()
        if self._stopping:
            return
        if was and self._closed_on_a_refused_account():
            return
        if self._on_disconnected is not None:
            try:
                self._on_disconnected()
            except Exception:
                log.exception("error while handling the loss of the broker")
        if was:
            log.warning("lost the broker %s: %s; reconnecting", self.url, reason)
        elif not self._ever_connected and not self._refused_connect:
            found = probe(self.url, self._ca_file)
            if found is not None:  # not a broker's MQTT port: a TLS one, a web server
                self._attempt_failed(*found)
            elif self._auto and self._v5:
                self._fall_back()  # a 3.1.1-only broker may just close the socket on an MQTT 5 CONNECT

    def _fall_back(self) -> None:
        with self._lock:
            if not (self._auto and self._v5):
                return  # another thread already fell back
            self._v5 = False
            self._auto = False
            old = self._client
            self._client = self._make_client()
        log.info("broker %s does not speak MQTT 5; using 3.1.1", self.url)
        threading.Thread(target=self._restart, args=(old,), daemon=True).start()

    def _restart(self, old: mqtt.Client) -> None:
        old.loop_stop()
        if not self._stopping:
            self.start()

    def _message(self, _client: mqtt.Client, _userdata: Any, msg: mqtt.MQTTMessage) -> None:
        if self._on_message is None:
            return
        props = getattr(msg, "properties", None)
        response = getattr(props, "ResponseTopic", None) if props is not None else None
        correlation = getattr(props, "CorrelationData", None) if props is not None else None
        try:
            self._on_message(IncomingMessage(msg.topic, msg.payload, response, correlation, retain=bool(msg.retain),
                                             mid=msg.mid, qos=msg.qos))
        except Exception:
            log.exception("error while handling a message on %s", msg.topic)

    def ack(self, message: IncomingMessage) -> None:
        """With ``manual_ack``: the message is stored, the broker may forget it (QoS 0 needs none)."""
        if self._manual_ack and message.qos > 0:
            with self._lock:
                self._client.ack(message.mid, message.qos)

    def _published(self, _client: mqtt.Client, _userdata: Any, mid: int, reason: Any, _props: Any) -> None:
        """Only a refusal matters here (MQTT 5 PUBACK with a failure reason, e.g. not authorised):
        acknowledgements are read from the message handles by the publisher."""
        refused = reason is not None and getattr(reason, "is_failure", False)
        if self._on_writes_refused is not None:
            with self._topics_lock:
                topic = self._topics.pop(mid, None)
            if refused and _not_authorised(reason):
                self._refused_here = True
                if self._one_more_refusal(topic):
                    return
            else:
                self._refusals_in_a_row = 0
        if refused and self._on_refused is not None:
            try:
                self._on_refused(mid, str(reason))
            except Exception:
                log.exception("error while recording a refused message")

    def _closed_on_a_refused_account(self) -> bool:
        """A connection closed after a refusal with writes outstanding and none accepted is the broker refusing
        them again (Mosquitto closes the connection as it refuses, and its refusal can be lost with it): counted
        as one more refusal; True when that makes :data:`WRITES_REFUSED` and the link stopped. (A write accepted
        since the last refusal has set the count back to 0.)"""
        if self._on_writes_refused is None or self._refusals_in_a_row == 0 or self._refused_here:
            return False
        with self._topics_lock:
            outstanding = list(self._topics.values())
        return bool(outstanding) and self._one_more_refusal(outstanding[-1])

    def _one_more_refusal(self, topic: str | None) -> bool:
        """Count a refusal; True when it is the :data:`WRITES_REFUSED`-th in a row and the link stopped."""
        self._refusals_in_a_row += 1
        if self._refusals_in_a_row == WRITES_REFUSED and self.writes_refused is None:
            self._writes_refused(topic)
            return True
        return False

    def _writes_refused(self, topic: str | None) -> None:
        account = f"the account {self.url.username}" if self.url.username else "this connection (no account)"
        self.writes_refused = (
            f"the broker {self.url} refused the writes of {account} (not authorised, {WRITES_REFUSED} in a row"
            f"{f'; the last to {topic}' if topic else ''}): the broker's ACL does not let it write this table's "
            "topics. Check the account in [mqtt] url (each table service has its own, named <site>/<table>) and "
            "the broker's ACL; stopping instead of reconnecting")
        log.error("%s", self.writes_refused)
        self._stopping = True
        self._client.disconnect()
        if not self.connected.is_set():
            # called as the connection closed: paho marks it lost after this callback and would reconnect; its
            # loop is ended from another thread (paho's own thread cannot wait for itself)
            threading.Thread(target=self._client.loop_stop, daemon=True).start()
        try:
            self._on_writes_refused(self.writes_refused)
        except Exception:
            log.exception("error while handling the broker's refusal of this account's writes")
