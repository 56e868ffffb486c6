"""What goes out to consumers, and the bookkeeping that makes it survive outages.

Events are journalled before they are published; the journal remembers which
the broker acknowledged (QoS 1 PUBACK). After a (re)connection the publisher
first refreshes the retained snapshots (state, device health), then sends
every unacknowledged journal entry in order, then announces ``online``, the
order zigbee2mqtt uses, so a consumer that sees ``online`` is complete.
Consumers may see an event twice after an outage and dedupe by ``seq``.
Every result names its game (``game``: id, players, rules) and a hand result
its place in the game (``number``), so a consumer that keeps games (the
records collector) stores each exactly once, however often it hears it.

Everything here runs on the service's one worker thread. Acknowledgements
are read from paho's message handles (``is_published()``) and written to the
journal in batches by :meth:`Publisher.flush_acks`, never matched by bare
message ids, which paho reuses after 65535 messages. Until the backlog has
been resent after a (re)connection, new events are left to the journal, so
a consumer never sees a newer event before an older one.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from datetime import UTC, datetime
from typing import Any, Protocol

from tablesvc import __version__
from tablesvc.engine.results import GameResult, HandResult, Output, RiichiAccepted
from tablesvc.engine.state import GameState
from tablesvc.mqtt.payloads import event_payload, iso_time, result_payload, state_payload, status_payload
from tablesvc.mqtt.topics import SCHEMA_VERSION, TopicTree
from tablesvc.service.reply_route import reply_route
from tablesvc.storage.ids import game_id
from tablesvc.storage.journal import Entry, Journal
from tablesvc.storage.table import ResultSeqs
from tablesvc.text import safe_text

__all__ = ["Publisher", "Transport"]

log = logging.getLogger(__name__)


class Transport(Protocol):
    """What the publisher needs from a broker connection (``MqttLink`` in production)."""

    def publish(self, topic: str, payload: bytes, *, qos: int = 1, retain: bool = False,
                correlation: tuple[str, bytes | None] | None = None) -> Any: ...


def _json(payload: Any) -> bytes:
    """A payload as UTF-8 JSON. Text that is no valid Unicode (a lone surrogate, in a journal written before such
    text was refused) is published with U+FFFD in its place: one bad name must not stop ``state`` for good."""
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    return safe_text(text).encode()


class Publisher:
    def __init__(self, transport: Transport, topics: TopicTree, journal: Journal, *, site: str, table: str,
                 started: datetime | None = None) -> None:
        self.transport = transport
        self.topics = topics
        self.journal = journal
        self.site = site
        self.table = table
        self.started = iso_time((started or datetime.now(UTC)).timestamp())
        self._pending: dict[int, Any] = {}  # journal seq -> paho message handle, until acknowledged
        self._recent: deque[tuple[int, int]] = deque(maxlen=2048)  # (message id, seq) lately acknowledged
        self.synced = False  # the backlog has been resent since the last (re)connection
        self.devices: dict[str, dict[str, Any]] = {}
        self.sticks_state: dict[str, Any] | None = None
        self.sent_events = 0
        self._game_id: str | None = None

    # ------------------------------------------------------------ status

    def status(self, online: bool) -> tuple[str, bytes]:
        payload = status_payload(online, version=__version__, started=self.started, site=self.site, table=self.table)
        return self.topics.status, _json(payload)

    # ------------------------------------------------------------ after a (re)connection

    def resync(self, state: GameState, seqs: ResultSeqs | None = None) -> None:
        """Retained snapshots, then everything the broker has not acknowledged, then ``online``. Each step is
        on its own: whatever one journal entry holds, the table comes online (the failure is logged)."""
        self._step("the state", lambda: self.publish_state(state, seqs=seqs))
        for name, health in self.devices.items():
            self.transport.publish(self.topics.device(name), _json(health), qos=1, retain=True)
        if self.sticks_state is not None:
            self.transport.publish(self.topics.sticks, _json(self.sticks_state), qos=1, retain=True)
        self._step("the broker's acknowledgements", self.flush_acks)
        pending = [e for e in self.journal.unpublished() if e.seq not in self._pending]
        self.synced = True
        for entry in pending:
            self._step(f"event {entry.seq}", lambda e=entry: self.publish_event(e))
        if pending:
            log.info("resent %d journal entries the broker had not acknowledged", len(pending))
            if state.results or state.final is not None:
                # results are not journalled apart: a hand that ended while they could not be sent
                # (offline, or before a crash) comes again with every other, as after a correction
                self._step("the results", lambda: self.corrected(state, self.journal.last_seq, seqs))
        topic, payload = self.status(True)
        self.transport.publish(topic, payload, qos=1, retain=True)

    @staticmethod
    def _step(what: str, action: Any) -> None:
        try:
            action()
        except Exception:
            log.exception("cannot publish %s after the (re)connection; going on", what)

    # ------------------------------------------------------------ the game

    def accepted(self, entry: Entry, outputs: list[Output], state: GameState, mjai: list[dict] | None = None,
                 seqs: ResultSeqs | None = None) -> None:
        """One journal entry and what followed from it; the state after it (``seqs``: where each result
        came from, :class:`~tablesvc.storage.table.ResultSeqs`)."""
        self.publish_event(entry)
        for output in outputs:
            if not self.synced:
                break  # offline: the resync after the reconnection publishes every result (results_replaced)
            if isinstance(output, HandResult | GameResult):
                self.transport.publish(self.topics.results, _json(self._result(output, entry.seq, state)), qos=1)
            elif isinstance(output, RiichiAccepted):
                pass  # visible in the state (sticks, scores) and in the mjai stream
        for message in mjai or ():
            self.transport.publish(self.topics.mjai, _json(message), qos=1)
        self.publish_state(state, entry.seq, ts=entry.ts, seqs=seqs)

    def corrected(self, state: GameState, seq: int, seqs: ResultSeqs | None = None) -> None:
        """After an undo or amend the finished hands may have changed: publish them all again, each with the
        seq of the entry that produced it (``seq`` itself is the correction's, or the last resent entry's)."""
        hands = seqs.hands if seqs is not None and len(seqs.hands) == len(state.results) else [seq] * len(
            state.results)
        final_seq = seqs.final if seqs is not None and seqs.final is not None else seq
        payload = {"schema": SCHEMA_VERSION, "seq": seq, "type": "results_replaced",
                   "game": self._game(state),
                   "results": [self._result(r, s, state) for r, s in zip(state.results, hands, strict=True)],
                   "final": (self._result(state.final, final_seq, state)
                             if isinstance(state.final, GameResult) else None)}
        self.transport.publish(self.topics.results, _json(payload), qos=1)

    def _game(self, state: GameState) -> dict[str, Any]:
        """Which game a result belongs to: its id is when the game's first journal entry was written (one
        journal per game), which never changes, not even when the game is corrected or the service restarts."""
        if self._game_id is None:
            first = self.journal.get(1)
            self._game_id = game_id(first.ts if first is not None else time.time())
        return {"id": self._game_id, "players": list(state.players), "rules": state.rules}

    def _result(self, result: HandResult | GameResult, seq: int, state: GameState) -> dict[str, Any]:
        payload = result_payload(result, seq, state.players)
        payload["game"] = self._game(state)
        if isinstance(result, HandResult):
            payload["number"] = result.hand_number
        return payload

    def publish_event(self, entry: Entry) -> None:
        if not self.synced:
            return  # offline or not yet resynced: the journal keeps it unacknowledged and resync sends it in order
        info = self.transport.publish(self.topics.events, _json(event_payload(entry)), qos=1)
        if info is None:
            return
        self.sent_events += 1
        self._pending[entry.seq] = info

    def reset_tracking(self) -> None:
        """A new journal (a new game): acknowledgements of the old one no longer matter."""
        self._pending.clear()
        self._recent.clear()
        self._game_id = None

    def disconnected(self) -> None:
        self.synced = False

    def flush_acks(self) -> int:
        """Record in the journal every event the broker has acknowledged since the last call."""
        done = [seq for seq, info in self._pending.items() if info.is_published()]
        for seq in done:
            self._recent.append((self._pending.pop(seq).mid, seq))
        self.journal.mark_published(done)
        return len(done)

    def drain(self, timeout: float) -> bool:
        """Before a clean stop: wait (at most ``timeout`` s) for the broker to acknowledge what is in flight,
        so the next start does not send it again. True when nothing is left in flight."""
        deadline = time.monotonic() + timeout
        while True:
            self.flush_acks()
            if not self._pending or time.monotonic() >= deadline:
                return not self._pending
            time.sleep(0.02)

    def refused(self, mid: int, reason: str, ts: float) -> None:
        """The broker refused a message (MQTT 5 PUBACK with a failure reason): if it was an event,
        it stays unacknowledged, to be sent again at the next connection, and the refusal is reported."""
        self.flush_acks()
        seq = next((s for m, s in reversed(self._recent) if m == mid), None)
        if seq is None:
            seq = next((s for s, info in self._pending.items() if info.mid == mid), None)
            if seq is not None:
                self._pending.pop(seq)
        if seq is None:
            log.warning("the broker refused a message (%s)", reason)
            return
        self.journal.mark_unpublished([seq])
        log.error("the broker refused event %d (%s): check its ACL for %s", seq, reason, self.topics.events)
        self.error("broker", f"the broker refused event {seq}: {reason}", ts)

    def publish_state(self, state: GameState, seq: int | None = None, *, ts: float | None = None,
                      seqs: ResultSeqs | None = None) -> None:
        if seq is None:
            seq = self.journal.last_seq
            last = self.journal.get(seq)
            ts = last.ts if last is not None else None
        payload = state_payload(state, seq, ts=ts, result_seqs=seqs.hands if seqs is not None else None,
                                final_seq=seqs.final if seqs is not None else None)
        self.transport.publish(self.topics.state, _json(payload), qos=1, retain=True)

    # ------------------------------------------------------------ devices, errors, replies

    def device(self, name: str, health: dict[str, Any]) -> None:
        payload = {"schema": SCHEMA_VERSION, "name": name, **health}
        self.devices[name] = payload
        self.transport.publish(self.topics.device(name), _json(payload), qos=1, retain=True)

    def devices_stopped(self) -> None:
        """A clean stop: every device's retained health says it is no longer read (its counters kept), so a
        dashboard does not show a table that was switched off as connected."""
        now = iso_time(time.time())
        for name, health in list(self.devices.items()):
            self.device(name, {**health, "ts": now, "connected": False, "state": "service stopped"})

    def sticks(self, payload: dict[str, Any]) -> None:
        """The score sticks compared with the game (retained: an alert that stands is seen by a page opened
        later)."""
        self.sticks_state = payload
        self.transport.publish(self.topics.sticks, _json(payload), qos=1, retain=True)

    def snapshot(self, topic: str, payload: dict[str, Any]) -> None:
        """A camera's annotated snapshot (retained: a dashboard opened later sees the latest; QoS 0: a newer
        one replaces it anyway)."""
        self.transport.publish(topic, _json(payload), qos=0, retain=True)

    def error(self, source: str, message: str, ts: float, detail: dict[str, Any] | None = None) -> None:
        """Something from the table that the engine refused: logged by the caller, published here."""
        payload = {"schema": SCHEMA_VERSION, "ts": iso_time(ts), "source": source, "error": message, "detail": detail}
        self.transport.publish(self.topics.errors, _json(payload), qos=1)

    def reply(self, payload: dict[str, Any], response_topic: str | None, correlation: bytes | None) -> None:
        """A command's reply: on ``response_topic`` only when it is the table's ``cmd/reply`` or one level below
        (:mod:`tablesvc.service.reply_route`), else on ``cmd/reply``; never on a topic of the feed."""
        topic = reply_route(self.topics.cmd_reply, response_topic).topic
        self.transport.publish(topic, _json(payload), qos=1, correlation=(topic, correlation))
