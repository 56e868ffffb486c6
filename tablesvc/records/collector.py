"""The records collector: every finished game of every table of a site, written once into the records database.

A process of its own (``tablesvc records``), an MQTT client like any other
consumer: it reads only what the feed publishes. One :class:`MqttLink` owns
the connection and calls :meth:`Collector.handle` on paho's network thread,
which writes the message in one transaction and only then acknowledges it
(manual PUBACK). The session is persistent (a fixed client id, clean start
off, a session kept for a week): while the collector is stopped or crashed
the broker queues the ``results`` (QoS 1) for it, and a message it received
but had not acknowledged comes again. Exactly once then follows from the
writes, not from memory: every write is an upsert on a natural key (site,
table, the game's id from the feed, the hand's number), so a message stored
twice changes nothing, and a ``results_replaced`` (a correction, or the
resend after an outage) makes the game's hands and ranking exactly what it
says. While the database is unreachable the message is retried with backoff
and stays unacknowledged; a stop in that state leaves it to the broker.

``state`` is read at QoS 0 (never queued, the retained one comes at every
connection) only for the players' names, for results from a service that
does not put them in the result.

Start: store (migrated) first, then the link. Stop: the link, then the store.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from tablesvc.mqtt.link import IncomingMessage, MqttLink
from tablesvc.mqtt.url import BrokerURL
from tablesvc.records.checks import MAX_NAME, Refused, check_result, parse, parse_object
from tablesvc.records.records_db import GameInfo, RecordsError, RecordsStore, RefusedByDatabase
from tablesvc.text import is_valid_text

__all__ = ["Collector"]

log = logging.getLogger(__name__)

WEEK = 7 * 24 * 3600
_DEFAULT_NAMES = ("East", "South", "West", "North")


def _four_names(value: Any) -> tuple[str, str, str, str] | None:
    if (isinstance(value, list | tuple) and len(value) == 4
            and all(isinstance(v, str) and v and len(v) <= MAX_NAME and is_valid_text(v) for v in value)):
        return (value[0], value[1], value[2], value[3])
    return None


class Collector:
    """Subscribes to ``<prefix>/<site>/+/results`` and keeps every game in ``store``."""

    def __init__(self, store: RecordsStore, broker: str, *, site: str = "+", prefix: str = "tablesvc",
                 client_id: str | None = None, session_expiry: int = WEEK, ca_file: str | None = None,
                 link_factory: Callable[..., MqttLink] = MqttLink) -> None:
        for label, value in (("site", site), ("prefix", prefix)):
            if not value or "/" in value or "#" in value or (value != "+" and "+" in value):
                raise ValueError(f"{label} {value!r} cannot be part of an MQTT topic filter")
        self.store = store
        self.prefix = prefix
        self.site = site
        self.client_id = client_id or f"tablesvc-records-{'all' if site == '+' else site}"
        self._stopping = threading.Event()
        self._names: dict[tuple[str, str], tuple[str, str, str, str]] = {}  # (site, table) -> from 'state'
        self.written = 0
        self.rejected = 0
        self.link = link_factory(
            BrokerURL.parse(broker),
            client_id=self.client_id,
            on_connected=lambda: log.info("records: connected; the broker now sends what it kept while away"),
            on_message=self.handle,
            subscriptions=((f"{prefix}/{site}/+/results", 1), (f"{prefix}/{site}/+/state", 0)),
            session_expiry=session_expiry,
            manual_ack=True,
            ca_file=ca_file,
        )

    def start(self) -> None:
        self.link.start()

    def stop(self) -> None:
        self._stopping.set()
        self.link.stop()

    # ------------------------------------------------------------ messages (paho's thread)

    def handle(self, msg: IncomingMessage) -> None:
        parts = msg.topic.split("/")
        if len(parts) != 4 or parts[3] not in ("results", "state"):
            log.warning("records: ignored a message on %s", msg.topic)
            self.link.ack(msg)
            return
        site, table, kind = parts[1], parts[2], parts[3]
        if kind == "state":  # QoS 0, only for the names: one that cannot be read is passed over
            try:
                self._state(site, table, parse_object(msg.payload))
            except Refused as exc:
                log.warning("records: passed over a state message from %s/%s (%s)", site, table, exc)
            return
        try:
            payload = parse(msg.payload)
            check_result(payload)
            write = self._writer(site, table, payload)
            if write is not None and not self._write(write, f"{site}/{table}"):
                return  # stopping: never acknowledged, so the broker sends it again at the next start
        except (Refused, RefusedByDatabase) as exc:
            self._refuse(msg, site, table, kind, str(exc))
            return
        except Exception as exc:  # a result no check foresaw must not stop the ones behind it
            log.exception("records: a %s message from %s/%s failed", kind, site, table)
            self._refuse(msg, site, table, kind, f"{type(exc).__name__}: {exc}")
            return
        if write is not None:
            self.written += 1
        self.link.ack(msg)

    def _refuse(self, msg: IncomingMessage, site: str, table: str, kind: str, why: str) -> None:
        """Logged naming the table and the field, then acknowledged: it could never be stored, and kept
        unacknowledged it would hold up every later result of the site."""
        self.rejected += 1
        log.error("records: a %s message from %s/%s is refused (%s); acknowledged, not stored: %.300r", kind, site,
                  table, why, msg.payload)
        self.link.ack(msg)

    def _write(self, write: Callable[[], None], where: str) -> bool:
        delay = 0.5
        while not self._stopping.is_set():
            try:
                write()
                return True
            except RefusedByDatabase:
                raise
            except RecordsError as exc:
                log.error("records: %s (a result of %s, kept unacknowledged at the broker); retrying in %.0f s",
                          exc, where, delay)
                self._stopping.wait(delay)
                delay = min(delay * 2, 30.0)
        return False

    def _state(self, site: str, table: str, payload: dict[str, Any]) -> None:
        seats = payload.get("seats")
        if isinstance(seats, list):
            names = _four_names([s.get("name") if isinstance(s, dict) else None for s in seats])
            if names is not None:
                self._names[(site, table)] = names

    def _info(self, site: str, table: str, payload: dict[str, Any]) -> GameInfo:
        game = payload.get("game") if isinstance(payload.get("game"), dict) else {}
        names = (_four_names(payload.get("players")) or _four_names(game.get("players"))
                 or self._names.get((site, table)) or _DEFAULT_NAMES)
        game_id = game.get("id")
        if not isinstance(game_id, str) or not game_id:
            # a service that names no game: the table's open game, else a new one from now
            game_id = self.store.current_game(site, table, str(payload.get("type")), payload.get("seq")) or (
                "seen-" + datetime.now(UTC).isoformat(timespec="milliseconds"))
            log.warning("records: a result from %s/%s names no game (an older tablesvc?); kept as game %s", site,
                        table, game_id)
        rules = game.get("rules") if isinstance(game.get("rules"), str) else "?"
        return GameInfo(game_id, names, rules)

    def _writer(self, site: str, table: str, payload: dict[str, Any]) -> Callable[[], None] | None:
        """The write of a checked result; the game and the hand number are looked up inside it, so a database
        that is down while they are is retried as the write is."""
        kind = payload.get("type")
        if kind == "hand_result":
            def hand() -> None:
                info = self._info(site, table, payload)
                number = payload.get("number")
                if not isinstance(number, int):
                    number = self.store.next_hand_number(site, table, info.id, payload.get("seq"))
                self.store.record_hand(site, table, info, number, payload)
            return hand
        if kind == "game_result":
            return lambda: self.store.record_final(site, table, self._info(site, table, payload), payload)
        if kind == "results_replaced":
            results = [(r["number"] if isinstance(r.get("number"), int) else i, r)
                       for i, r in enumerate(payload["results"])]
            final = payload.get("final")
            return lambda: self.store.replace_results(site, table, self._info(site, table, payload), results, final)
        log.info("records: ignored a %r result from %s/%s", kind, site, table)
        return None
