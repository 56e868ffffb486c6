"""What goes out to consumers, and the bookkeeping that makes it survive outages.

Events are journalled before they are published; the journal remembers which
the broker acknowledged (QoS 1 PUBACK). After a (re)connection the publisher
first refreshes the retained snapshots (state, device health), then sends
every unacknowledged journal entry in order, then announces ``online``, the
order zigbee2mqtt uses, so a consumer that sees ``online`` is complete.
Consumers may see an event twice after an outage and dedupe by ``seq``.

All publishing happens on the service's one worker thread; only the
acknowledgement callback comes from the MQTT thread, under a lock.
"""

from __future__ import annotations

import json
import logging
import threading
from datetime import UTC, datetime
from typing import Any, Protocol

from tablesvc import __version__
from tablesvc.engine.results import GameResult, HandResult, Output, RiichiAccepted
from tablesvc.engine.state import GameState
from tablesvc.journal import Entry, Journal
from tablesvc.mqtt.payloads import event_payload, result_payload, state_payload, status_payload
from tablesvc.mqtt.topics import SCHEMA_VERSION, TopicTree

__all__ = ["Publisher", "Transport"]

log = logging.getLogger(__name__)


class Transport(Protocol):
    """What the publisher needs from a broker connection (``MqttLink`` in production)."""

    def publish(self, topic: str, payload: bytes, *, qos: int = 1, retain: bool = False,
                correlation: tuple[str, bytes | None] | None = None) -> int | None: ...


def _json(payload: Any) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


class Publisher:
    def __init__(self, transport: Transport, topics: TopicTree, journal: Journal, *, site: str, table: str,
                 started: datetime | None = None) -> None:
        self.transport = transport
        self.topics = topics
        self.journal = journal
        self.site = site
        self.table = table
        self.started = (started or datetime.now(UTC)).isoformat(timespec="seconds")
        self._inflight: dict[int, int] = {}  # message id -> journal seq
        self._early: set[int] = set()  # acknowledged before publish() returned its id
        self._lock = threading.Lock()
        self.devices: dict[str, dict[str, Any]] = {}
        self.sent_events = 0

    # ------------------------------------------------------------ status

    def status(self, online: bool) -> tuple[str, bytes]:
        payload = status_payload(online, version=__version__, started=self.started, site=self.site, table=self.table)
        return self.topics.status, _json(payload)

    # ------------------------------------------------------------ after a (re)connection

    def resync(self, state: GameState) -> None:
        """Retained snapshots, then everything the broker has not acknowledged, then ``online``."""
        self.publish_state(state)
        for name, health in self.devices.items():
            self.transport.publish(self.topics.device(name), _json(health), qos=1, retain=True)
        pending = self.journal.unpublished()
        for entry in pending:
            self.publish_event(entry)
        if pending:
            log.info("resent %d journal entries the broker had not acknowledged", len(pending))
        topic, payload = self.status(True)
        self.transport.publish(topic, payload, qos=1, retain=True)

    # ------------------------------------------------------------ the game

    def accepted(self, entry: Entry, outputs: list[Output], state: GameState, mjai: list[dict] | None = None) -> None:
        """One journal entry and what followed from it; the state after it."""
        self.publish_event(entry)
        for output in outputs:
            if isinstance(output, HandResult | GameResult):
                self.transport.publish(self.topics.results, _json(result_payload(output, entry.seq)), qos=1)
            elif isinstance(output, RiichiAccepted):
                pass  # visible in the state (sticks, scores) and in the mjai stream
        for message in mjai or ():
            self.transport.publish(self.topics.mjai, _json(message), qos=1)
        self.publish_state(state, entry.seq)

    def publish_event(self, entry: Entry) -> None:
        mid = self.transport.publish(self.topics.events, _json(event_payload(entry)), qos=1)
        if mid is None:
            return  # offline: the journal keeps it unacknowledged and resync sends it
        self.sent_events += 1
        with self._lock:
            if mid in self._early:
                self._early.discard(mid)
                self.journal.mark_published([entry.seq])
            else:
                self._inflight[mid] = entry.seq

    def publish_state(self, state: GameState, seq: int | None = None) -> None:
        payload = state_payload(state, seq if seq is not None else self.journal.last_seq)
        self.transport.publish(self.topics.state, _json(payload), qos=1, retain=True)

    def acknowledged(self, mid: int) -> None:
        """The broker acknowledged message ``mid`` (called from the MQTT thread)."""
        with self._lock:
            seq = self._inflight.pop(mid, None)
            if seq is None:
                self._early.add(mid)
                return
        self.journal.mark_published([seq])

    # ------------------------------------------------------------ devices, errors, replies

    def device(self, name: str, health: dict[str, Any]) -> None:
        payload = {"schema": SCHEMA_VERSION, "name": name, **health}
        self.devices[name] = payload
        self.transport.publish(self.topics.device(name), _json(payload), qos=1, retain=True)

    def error(self, source: str, message: str, ts: float, detail: dict[str, Any] | None = None) -> None:
        """Something from the table that the engine refused: logged by the caller, published here."""
        payload = {"schema": SCHEMA_VERSION, "ts": ts, "source": source, "error": message, "detail": detail}
        self.transport.publish(self.topics.errors, _json(payload), qos=1)

    def reply(self, payload: dict[str, Any], response_topic: str | None, correlation: bytes | None) -> None:
        topic = response_topic or self.topics.cmd_reply
        self.transport.publish(topic, _json(payload), qos=1, correlation=(topic, correlation))
