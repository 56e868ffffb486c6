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

import json
import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from tablesvc.mqtt.link import BrokerURL, IncomingMessage, MqttLink
from tablesvc.records.store import GameInfo, RecordsError, RecordsStore

__all__ = ["Collector"]

log = logging.getLogger(__name__)

WEEK = 7 * 24 * 3600
_DEFAULT_NAMES = ("East", "South", "West", "North")


def _four_names(value: Any) -> tuple[str, str, str, str] | None:
    if isinstance(value, list | tuple) and len(value) == 4 and all(isinstance(v, str) and v for v in value):
        return (value[0], value[1], value[2], value[3])
    return None


def _check_hand(p: dict[str, Any]) -> None:
    if not isinstance(p.get("result"), str) or not isinstance(p.get("hand"), str):
        raise ValueError("a hand result without its hand or result")
    for key in ("deltas", "scores"):
        if not isinstance(p.get(key), list) or len(p[key]) != 4:
            raise ValueError(f"a hand result without four {key}")
    if not isinstance(p.get("wins", []), list):
        raise ValueError("a hand result whose wins are no list")


def _check_final(p: dict[str, Any]) -> None:
    ranking = p.get("ranking")
    if not isinstance(ranking, list) or sorted(int(r["seat"]) for r in ranking) != [0, 1, 2, 3]:
        raise ValueError("a game result without a ranking of the four seats")
    for r in ranking:
        for key in ("points", "place", "uma", "result"):
            int(r[key])


def _check(payload: dict[str, Any]) -> None:
    """What the store needs of a result is there (ValueError, KeyError or TypeError otherwise)."""
    kind = payload.get("type")
    if kind == "hand_result":
        _check_hand(payload)
    elif kind == "game_result":
        _check_final(payload)
    elif kind == "results_replaced":
        if not isinstance(payload.get("results"), list):
            raise ValueError("results_replaced without its results")
        for r in payload["results"]:
            _check_hand(r)
        if payload.get("final") is not None:
            _check_final(payload["final"])


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
        try:
            payload = json.loads(msg.payload)
            if not isinstance(payload, dict):
                raise ValueError("not a JSON object")
            if kind == "state":
                self._state(site, table, payload)
                return
            write = self._writer(site, table, payload)
        except (ValueError, KeyError, TypeError) as exc:
            self.rejected += 1
            log.error("records: a %s message from %s/%s cannot be read (%s); it is not stored: %.300r", kind, site,
                      table, exc, msg.payload)
            self.link.ack(msg)
            return
        if write is None:
            self.link.ack(msg)
            return
        if self._write(write, f"{site}/{table}"):
            self.written += 1
            self.link.ack(msg)

    def _write(self, write: Callable[[], None], where: str) -> bool:
        delay = 0.5
        while not self._stopping.is_set():
            try:
                write()
                return True
            except RecordsError as exc:
                log.error("records: %s (a result of %s, kept unacknowledged at the broker); retrying in %.0f s",
                          exc, where, delay)
                self._stopping.wait(delay)
                delay = min(delay * 2, 30.0)
        return False  # stopping: never acknowledged, so the broker sends it again at the next start

    def _state(self, site: str, table: str, payload: dict[str, Any]) -> None:
        names = _four_names([s.get("name") for s in payload.get("seats") or []])
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
        kind = payload.get("type")
        _check(payload)
        if kind == "hand_result":
            info = self._info(site, table, payload)
            number = payload.get("number")
            if not isinstance(number, int):
                number = self.store.next_hand_number(site, table, info.id, payload.get("seq"))
            return lambda: self.store.record_hand(site, table, info, number, payload)
        if kind == "game_result":
            info = self._info(site, table, payload)
            payload["ranking"] = [dict(r, seat=int(r["seat"])) for r in payload["ranking"]]
            return lambda: self.store.record_final(site, table, info, payload)
        if kind == "results_replaced":
            info = self._info(site, table, payload)
            results = [(r["number"] if isinstance(r.get("number"), int) else i, r)
                       for i, r in enumerate(payload["results"])]
            final = payload.get("final")
            return lambda: self.store.replace_results(site, table, info, results, final)
        log.info("records: ignored a %r result from %s/%s", kind, site, table)
        return None
