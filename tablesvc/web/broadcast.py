"""The broadcast scenes for OBS: every hand, its waits and tiles left, nameplates, cards, intro and statistics.

Hands are private while a hand is played: the table service publishes them
on ``<prefix>/<site>/<table>/broadcast/hands``, which only a broadcast
account may read (``deploy/acl``), after the organiser's delay. The web
server reads that topic on a connection of its own (:func:`broadcast_link`,
``[web] broadcast_broker``: the broadcast account's URL), keeps the latest
payload per table in a :class:`BroadcastFeed` apart from the public
:class:`~tablesvc.web.feed_store.Store`, and hands it only to the routes below,
each of which asks for the broadcast key (``?key=``, ``[web] broadcast_key``;
an OBS browser source takes a URL, so the key travels in it). The public
store drops anything under ``broadcast/`` (its ordinary connection may get
it from a broker without ACL), so no public page or stream ever carries a
hand.

Scenes (``/broadcast/<site>/<table>/<scene>?key=...``): ``hands`` (the four
seats: hand sorted with the drawn tile apart, melds, shanten, waits with
tiles left, karaten, the tiles that would deal in, nameplates with animated
scores and riichi, the cards), ``seat`` (one seat, ``&seat=E``), ``cards``
(yellow and red cards alone), ``intro`` (player intro cards) and ``stats``
(the end-of-day statistics slide). Cards come from the table's chombos (the
console's, on ``results``) and the tournament's penalties and warnings (the
records database); intro and statistics from the club's records
(:mod:`tablesvc.records.player_stats`), read on a worker thread.

A card that comes from the public feed (a chombo) reaches the scenes after
the same delay as the hands, so the stream never shows it before the hand it
belongs to.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from tablesvc.web.auth import same_token
from tablesvc.web.feed_store import Pushed, Store, Subscription, sse
from tablesvc.web.pages import NAME_SEGMENT, STATIC
from tablesvc.web.settings import WebSettings

__all__ = ["CARDS_REFRESH", "HANDS_TOPIC", "SCENES", "BroadcastFeed", "BroadcastRecords", "broadcast_link",
           "broadcast_routes", "scene_addresses"]

log = logging.getLogger(__name__)

HANDS_TOPIC = "broadcast/hands"
SCENES = ("hands", "seat", "cards", "intro", "stats")
CARDS_REFRESH = 5.0  # seconds between reads of the tournament's penalties while a scene listens
SEATS = ("E", "S", "W", "N")


def scene_addresses(base: str, site: str, table: str, key: str) -> dict[str, str]:
    """Every scene's address for one table (what ``tablesvc demo --broadcast`` prints)."""
    from urllib.parse import quote

    where = f"{base}/broadcast/{quote(site, safe='')}/{quote(table, safe='')}"
    return {scene: f"{where}/{scene}?key={quote(key, safe='')}" + ("&seat=E" if scene == "seat" else "")
            for scene in SCENES}


class BroadcastFeed:
    """The latest ``broadcast/hands`` of each table and the scenes that listen (thread-safe: the broadcast
    connection's thread feeds it, the event loop reads it)."""

    def __init__(self, prefix: str = "tablesvc") -> None:
        self.prefix = prefix
        self.hands: dict[tuple[str, str], dict[str, Any]] = {}
        self._subs: dict[tuple[str, str], set[Subscription]] = {}
        self._lock = threading.Lock()
        self.received = 0

    def feed(self, topic: str, payload: bytes) -> None:
        """One message of the broadcast connection (any thread); anything but a table's hands is ignored."""
        parts = topic.split("/")
        if len(parts) != 5 or parts[0] != self.prefix or "/".join(parts[3:]) != HANDS_TOPIC or not payload:
            return
        try:
            data = json.loads(payload)
        except (ValueError, RecursionError):
            log.warning("%s: not JSON, ignored", topic)
            return
        if not isinstance(data, dict) or not isinstance(data.get("seats"), list):
            log.warning("%s: not a hands payload (no seats), ignored", topic)
            return
        key = (parts[1], parts[2])
        message = Pushed(0, "hands", sse("hands", data))
        with self._lock:
            self.hands[key] = data
            self.received += 1
            subs = list(self._subs.get(key, ()))
        for sub in subs:
            sub.push(message)

    def delay(self, key: tuple[str, str]) -> float:
        """The organiser's delay of a table's hands (what its latest payload says), seconds."""
        with self._lock:
            value = (self.hands.get(key) or {}).get("delay_s")
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else 0.0

    def subscribe(self, loop: asyncio.AbstractEventLoop, key: tuple[str, str]) -> tuple[Subscription,
                                                                                       dict[str, Any] | None]:
        sub = Subscription(loop, key)
        with self._lock:
            self._subs.setdefault(key, set()).add(sub)
            return sub, self.hands.get(key)

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            group = self._subs.get(sub.key)  # type: ignore[arg-type]
            if group is not None:
                group.discard(sub)
                if not group:
                    del self._subs[sub.key]  # type: ignore[arg-type]

    def close_all(self) -> None:
        with self._lock:
            subs = [sub for group in self._subs.values() for sub in group]
        for sub in subs:
            sub.loop.call_soon_threadsafe(sub._put, None)


def broadcast_link(url: Any, feed: BroadcastFeed, *, site: str | None, protocol: str = "auto") -> Any:
    """The web server's broadcast connection: its own client (and account, ``url``), subscribed to the tables'
    ``broadcast/hands`` only."""
    from tablesvc.mqtt.link import MqttLink

    return MqttLink(url, client_id=f"tablesvc-web-broadcast-{os.getpid()}-{int(time.time() * 1000) % 10**8}",
                    on_connected=lambda: None, on_message=lambda msg: feed.feed(msg.topic, msg.payload),
                    subscriptions=(f"{feed.prefix}/{site or '+'}/+/{HANDS_TOPIC}",), protocol=protocol)


class BroadcastRecords:
    """The club's records (and the tournament's penalties, players' clubs and countries) for the scenes; opened
    on first use, read on worker threads."""

    def __init__(self, url: str, tournament: str | None = None) -> None:
        self.url, self.tournament = url, tournament
        self._store: Any = None
        self._lock = threading.Lock()

    def _opened(self) -> Any:
        with self._lock:
            if self._store is None:
                try:
                    from tablesvc.records.records_db import RecordsStore
                except ImportError as exc:
                    raise RuntimeError(f"{exc}: install the records extra (pip install 'tablesvc[records]')") from None
                self._store = RecordsStore(self.url)
            return self._store

    def _tournament(self) -> tuple[Any, int] | None:
        """The tournament store and id, or None where the database holds no tournament."""
        from tablesvc.tournament.model import TournamentError
        from tablesvc.tournament.tournament_db import TournamentStore

        store = TournamentStore(self._opened())
        try:
            return store, store.find(self.tournament)[0]
        except TournamentError:
            return None

    def players(self, names: list[str], since: str | None) -> dict[str, Any]:
        """Intro and statistics of ``names``: their figures over the games since ``since`` (the day) and over
        every game, and where the tournament knows them, club and country."""
        from tablesvc.records.player_stats import STATS, player_stats
        from tablesvc.records.schema import RecordsError

        try:
            store = self._opened()
            day = player_stats(store.games(since=since, finished_only=False), names)
            ever = player_stats(store.games(finished_only=False), names)
            tour = self._tournament()
            known = {p.name: p for p in tour[0].players(tour[1])} if tour else {}
        except RecordsError as exc:
            raise RuntimeError(str(exc)) from None
        return {"since": since, "labels": [{"key": s.key, "label": s.label, "kind": s.kind} for s in STATS],
                "players": [{"name": n, "club": getattr(known.get(n), "club", None),
                             "country": getattr(known.get(n), "country", None),
                             "day": day[n].to_dict()["stats"], "all": ever[n].to_dict()["stats"]} for n in names]}

    def penalties(self, names: list[str]) -> list[dict[str, Any]]:
        """The tournament's penalties (red cards) and warnings (yellow) of the players ``names``."""
        from tablesvc.records.schema import RecordsError
        from tablesvc.tournament.model import PenaltyKind

        try:
            tour = self._tournament()
            if tour is None:
                return []
            store, tid = tour
            numbers = {p.number: p.name for p in store.players(tid) if p.name in names}
            return [{"id": f"penalty-{x.id}", "color": "yellow" if x.kind is PenaltyKind.WARNING else "red",
                     "kind": x.kind.value, "name": numbers[x.player], "seat": _seat_of(names, numbers[x.player]),
                     "reason": x.reason, "points": x.points, "hand": x.hand, "at": _epoch(x.at)}
                    for x in store.penalties(tid) if x.player in numbers]
        except RecordsError as exc:
            raise RuntimeError(str(exc)) from None

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None


def _entry_time(t: Any, seq: Any) -> float | None:
    """When the journal entry ``seq`` of a table was written, where the server saw it."""
    entry = t.entries.get(seq) if t is not None and isinstance(seq, int) else None
    return _epoch(str(entry.get("ts"))) if entry else None


def _epoch(text: str) -> float | None:
    try:
        return datetime.fromisoformat(text).timestamp()
    except (TypeError, ValueError):
        return None


def _seat_of(names: list[str], name: str) -> str | None:
    return SEATS[names.index(name)] if name in names and names.index(name) < 4 else None


def _names(hands: dict[str, Any] | None, state: dict[str, Any] | None) -> list[str]:
    """The table's four players: from the hands payload, else the public state."""
    for source in (hands, state):
        seats = (source or {}).get("seats")
        if isinstance(seats, list) and len(seats) == 4:
            return [str(s.get("name") or SEATS[i]) if isinstance(s, dict) else SEATS[i] for i, s in enumerate(seats)]
    return []


def chombo_cards(results: list[dict[str, Any]],
                 when: Callable[[Any], float | None] | None = None) -> list[dict[str, Any]]:
    """The game's chombos (the console's, on ``results``): red cards with the points they cost; ``when(seq)``:
    the time of the journal entry that gave it, where known."""
    cards = []
    for r in results:
        seat = r.get("chombo")
        if r.get("type") != "hand_result" or not isinstance(seat, int) or not 0 <= seat < 4:
            continue
        deltas = r.get("deltas") if isinstance(r.get("deltas"), list) else [0, 0, 0, 0]
        lost = -deltas[seat] if len(deltas) == 4 and isinstance(deltas[seat], int) else 0
        cards.append({"id": f"chombo-{r.get('seq')}", "color": "red", "kind": "chombo",
                      "name": r.get("chombo_name") or SEATS[seat], "seat": SEATS[seat], "reason": "chombo",
                      "points": lost, "hand": r.get("hand"), "at": when(r.get("seq")) if when else None})
    return cards


def broadcast_routes(feed: BroadcastFeed, store: Store, settings: WebSettings, streams: Any,
                     records: BroadcastRecords | None) -> list[Route]:
    """The scenes, their stream and their data, each behind the broadcast key (``settings.broadcast_key``)."""
    key = settings.broadcast_key or ""
    keepalive = settings.keepalive

    def allowed(request: Request) -> Response | None:
        if not same_token(request.query_params.get("key"), key):
            return PlainTextResponse("the broadcast scenes need the broadcast key: add ?key=... as the web "
                                     "server's [web] broadcast_key says", status_code=403,
                                     headers={"Cache-Control": "no-store"})
        site, table = request.path_params["site"], request.path_params["table"]
        if not (NAME_SEGMENT.fullmatch(site) and NAME_SEGMENT.fullmatch(table)) or not settings.follows(site):
            return PlainTextResponse(f"no table {site}/{table} on this server", status_code=404)
        return None

    async def page(request: Request) -> Response:
        refused = allowed(request)
        if refused is not None:
            return refused
        if request.path_params["scene"] not in SCENES:
            return PlainTextResponse(f"no scene {request.path_params['scene']!r}: one of {', '.join(SCENES)}",
                                     status_code=404)
        return FileResponse(str(STATIC / "broadcast.html"), media_type="text/html",
                            headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})

    async def stream(request: Request) -> Response:
        refused = allowed(request)
        if refused is not None:
            return refused
        if streams.full():
            return streams.refusal()
        where = (request.path_params["site"], request.path_params["table"])

        async def events() -> AsyncIterator[str]:
            loop = asyncio.get_running_loop()
            sub, latest = feed.subscribe(loop, where)
            public, _, _ = store.subscribe(loop, where)
            streams.open += 1
            tasks: list[asyncio.Future[Any]] = []
            shown: dict[str, Any] = {"cards": None, "penalties": []}

            first_seen: dict[str, float] = {}

            def chombos() -> list[dict[str, Any]]:
                t = store.table(*where)
                return chombo_cards(list(t.results) if t is not None else [], lambda seq: _entry_time(t, seq))

            released: set[str] = set()  # the chombos shown: each once the hands' delay has passed since it
            for c in chombos():
                due = (c["at"] + feed.delay(where) - time.time()) if c.get("at") is not None else 0.0
                if due > 0:
                    loop.call_later(due, lambda ids={c["id"]}: release(ids))
                else:
                    released.add(c["id"])

            def table_cards() -> list[dict[str, Any]]:
                """The chombos released and the penalties, in the order they were given (oldest first): a
                penalty's own time, a chombo's journal entry's, else when this stream first saw it."""
                cards = [c for c in chombos() if c["id"] in released] + [dict(c) for c in shown["penalties"]]
                for c in cards:
                    when = c.pop("at", None)
                    first_seen.setdefault(c["id"], when if when is not None else time.time())
                return sorted(cards, key=lambda c: (first_seen[c["id"]], c["id"]))

            def show_cards(cards: list[dict[str, Any]]) -> None:
                text = sse("cards", {"cards": cards})
                if text != shown["cards"]:
                    shown["cards"] = text
                    sub._put(Pushed(0, "cards", text))

            async def relay_public() -> None:
                # a chombo on the public feed reaches the scenes after the hands' delay, as the hand it ends
                while True:
                    message = await public.queue.get()
                    if message is None:
                        sub._put(None)
                        return
                    if message.kind == "results":
                        fresh = {c["id"] for c in chombos()} - released
                        if fresh:
                            loop.call_later(feed.delay(where), release, fresh)

            def release(ids: set[str]) -> None:
                released.update(ids)
                show_cards(table_cards())

            async def penalties_now() -> None:
                t = store.table(*where)
                names = _names(feed.hands.get(where), t.state if t is not None else None)
                if records is None or not names:
                    return
                try:
                    shown["penalties"] = await run_in_threadpool(records.penalties, names)
                except RuntimeError as exc:
                    log.warning("broadcast cards: %s", exc)
                except Exception:
                    log.exception("broadcast cards: reading the penalties failed")

            async def read_penalties() -> None:
                while records is not None:
                    await asyncio.sleep(CARDS_REFRESH)
                    await penalties_now()
                    show_cards(table_cards())

            async def disconnect() -> None:
                while (await request.receive())["type"] != "http.disconnect":
                    pass
                sub.end()

            try:
                yield "retry: 1000\n\n"
                yield sse("hello", {"site": where[0], "table": where[1], "records": records is not None})
                if latest is not None:
                    yield sse("hands", latest)
                await penalties_now()  # the first cards are whole: a page shows what it finds at rest
                t = store.table(*where)
                shown["cards"] = sse("cards", {"cards": table_cards()})
                yield shown["cards"]
                if t is not None and t.state is not None and latest is None:
                    yield sse("state", t.state)  # the names and scores before the first hand comes
                tasks = [asyncio.ensure_future(relay_public()), asyncio.ensure_future(read_penalties()),
                         asyncio.ensure_future(disconnect())]
                while True:
                    try:
                        message = await asyncio.wait_for(sub.queue.get(), keepalive)
                    except TimeoutError:
                        yield ": keepalive\n\n"
                        continue
                    if message is None:
                        return
                    yield message.text
            finally:
                for task in tasks:
                    task.cancel()
                streams.open -= 1
                feed.unsubscribe(sub)
                store.unsubscribe(public)

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def players(request: Request) -> Response:
        refused = allowed(request)
        if refused is not None:
            return refused
        if records is None:
            return JSONResponse({"error": "this web server has no records database: start it with --records-db "
                                 "(or [web] records_db) for the intro cards and the statistics slide"},
                                status_code=404)
        where = (request.path_params["site"], request.path_params["table"])
        t = store.table(*where)
        names = _names(feed.hands.get(where), t.state if t is not None else None)
        if not names:
            return JSONResponse({"error": "the table has no players yet"}, status_code=409)
        since = request.query_params.get("since")
        try:
            since = _day(since)
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        try:
            data = await run_in_threadpool(records.players, names, since)
        except RuntimeError as exc:
            log.warning("broadcast players: %s", exc)
            return JSONResponse({"error": str(exc)}, status_code=503)
        return JSONResponse(data, headers={"Cache-Control": "no-store"})

    return [
        Route("/broadcast/sse/{site}/{table}", stream),
        Route("/broadcast/api/{site}/{table}/players", players),
        Route("/broadcast/{site}/{table}/{scene}", page),
    ]


def _day(text: str | None) -> str:
    """``?since=``: a date or time (the records' form), default the start of today (UTC): the day's games."""
    from tablesvc.records.standings import parse_since

    if text:
        return parse_since(text)
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return today.isoformat(timespec="seconds")
