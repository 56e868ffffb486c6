"""The tournament's pages and calls on the web server: seating, "your table", standings, the stream's standings.

Read from the records database the collector writes (``--records-db``). The
pages hold one Server-Sent Events stream, ``/sse/tournament``: while any page
listens, one loop reads the tournament every :data:`REFRESH` seconds on a
worker thread and pushes it to every page when it changed, so a hundred open
pages cost one read; a table's ``results`` message wakes the loop too, so a
game's result is read about 80 ms after the table published it (the
collector has written it by then) instead of at the next tick.

A signed-in referee (the console's session and CSRF token) gives a penalty
or a warning and starts a round with ``POST /api/tournament/...``: the same
store calls, with the same checks, as ``tablesvc tournament``; start-round
goes out on the web server's own broker connection.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import math
import re
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from tablesvc.text import find_invalid_text
from tablesvc.web.auth import same_token
from tablesvc.web.feed_store import Store, sse

__all__ = ["REFRESH", "TournamentFeed", "WebHall", "tournament_routes"]

log = logging.getLogger(__name__)

REFRESH = 0.25  # seconds between reads while a page listens
AFTER_RESULT = 0.08  # a table's result: read again this soon (the collector writes it within milliseconds)
PAGES = {"/tournament": "tournament.html", "/tournament/standings": "tournament-standings.html",
         "/tournament/player": "tournament-player.html", "/tournament/overlay": "tournament-overlay.html",
         "/tournament/referee": "tournament-referee.html"}


class TournamentFeed:
    """The tournament as the pages show it, read from the records database; opened on first use."""

    def __init__(self, url: str, name: str | None = None) -> None:
        self.url, self.name = url, name
        self._store: Any = None
        self._lock = threading.Lock()
        self._subs: set[asyncio.Queue[str | None]] = set()
        self._task: asyncio.Task[None] | None = None
        self._last: str | None = None
        self._event_loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self.reads = 0

    def store(self) -> Any:
        with self._lock:
            if self._store is None:
                try:
                    from tablesvc.records.records_db import RecordsStore
                    from tablesvc.tournament.tournament_db import TournamentStore
                except ImportError as exc:
                    raise RuntimeError(f"{exc}: install the records extra (pip install 'tablesvc[records]')") from None
                self._store = TournamentStore(RecordsStore(self.url))
            return self._store

    def tid(self) -> int:
        return self.store().find(self.name)[0]

    def read(self) -> dict[str, Any]:
        """Standings, every round's tables and the round the big screen shows (RuntimeError: cannot be read)."""
        from tablesvc.records.schema import RecordsError
        from tablesvc.tournament.actions import current_standings
        from tablesvc.tournament.model import RoundStatus, TournamentError

        self.reads += 1
        try:
            store = self.store()
            with store.reading():
                tid = self.tid()
                players, rounds, hall = store.players(tid), store.rounds(tid), store.tables(tid)
                st = current_standings(store, tid, players=players, hall=hall, rounds=rounds)
            names = {p.number: (p.first_name, p.last_name) for p in players}
        except (RecordsError, TournamentError) as exc:
            raise RuntimeError(str(exc)) from None
        data = st.to_dict()
        for row in data["players"]:  # the big screen's index sorts by family name as imported
            row["first_name"], row["last_name"] = names.get(row["number"], (None, None))
        seated = [r for r in rounds if r.status is RoundStatus.SEATED]
        started = [r for r in rounds if r.status is RoundStatus.STARTED]
        # the big screen: the round in play while there is one, else the next one seated, else the last played
        shown = started[-1] if started else seated[0] if seated else rounds[-1] if rounds else None
        data["rounds"] = [{"number": r.number, "status": r.status.value, "method": r.method.value,
                           "started_at": r.started_at, "started_tables": list(r.started_tables),
                           "offline_tables": list(r.offline_tables), "deadline": r.deadline} for r in rounds]
        data["shown_round"] = shown.number if shown else None
        data["hall"] = [{"number": h.number, "site": h.site, "table_id": h.table_id} for h in hall]
        return data

    # ------------------------------------------------------------ the stream

    async def subscribe(self) -> asyncio.Queue[str | None]:
        queue: asyncio.Queue[str | None] = asyncio.Queue(maxsize=4)
        self._event_loop = asyncio.get_running_loop()
        if self._wake is None:
            self._wake = asyncio.Event()
        self._subs.add(queue)
        if self._last is not None:
            queue.put_nowait(self._last)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._loop())
        return queue

    def unsubscribe(self, queue: asyncio.Queue[str | None]) -> None:
        self._subs.discard(queue)

    async def _loop(self) -> None:
        while self._subs:
            try:
                data = await run_in_threadpool(self.read)
                text = sse("tournament", data)
            except RuntimeError as exc:
                text = sse("problem", {"error": str(exc)})
            except Exception:  # a read that fails is logged and tried again: the pages stay open
                log.exception("tournament: reading the standings failed")
                text = sse("problem", {"error": "the standings cannot be read just now (see the server's log)"})
            if text != self._last:
                self._last = text
                for queue in list(self._subs):
                    if queue.full():  # a page that does not read: drop its oldest, it only needs the newest
                        queue.get_nowait()
                    queue.put_nowait(text)
            assert self._wake is not None
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), REFRESH)
                await asyncio.sleep(AFTER_RESULT)
            except TimeoutError:
                pass
        self._last = None

    def poke(self) -> None:
        """A table published a result (any thread): read soon rather than at the next tick."""
        loop, wake = self._event_loop, self._wake
        if loop is not None and wake is not None and not loop.is_closed():
            loop.call_soon_threadsafe(wake.set)

    def end_streams(self) -> None:
        """End every open stream (the server is stopping; any thread): the pages reconnect to the next one."""
        loop = self._event_loop
        if loop is None or loop.is_closed():
            return

        def end() -> None:
            for queue in list(self._subs):
                if queue.full():
                    queue.get_nowait()
                queue.put_nowait(None)

        loop.call_soon_threadsafe(end)

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.records.close()
                self._store = None


class WebHall:
    """The hall through the web server's own broker connection (a referee starting a round from a page)."""

    def __init__(self, store: Store, publish: Callable[[str, bytes], bool]) -> None:
        self.store, self.publish = store, publish

    def online(self, site: str, table: str) -> bool | None:
        feed = self.store.table(site, table)
        if feed is None or feed.status is None:
            return None
        return feed.online

    def send(self, site: str, table: str, payload: dict[str, Any], on_reply: Callable[[dict[str, Any]], None]) -> bool:
        self.store.replies[str(payload["transaction"])] = on_reply
        if not self.publish(f"{self.store.prefix}/{site}/{table}/cmd", json.dumps(payload).encode()):
            self.store.replies.pop(str(payload["transaction"]), None)
            return False
        return True


#: the longest reason a referee may give (as the table's MQTT commands take it)
MAX_REASON = 500


class BadField(ValueError):
    """A field of a referee's request that is missing or out of its range; the message names it."""


def whole(body: dict[str, Any], key: str, low: int, high: int, *, default: int | None = None) -> int | None:
    """``body[key]`` as a whole number from ``low`` to ``high`` (absent: ``default``). JSON gives true, 1.5,
    "x" or 1e400 (infinity) as easily as 3: each is refused by name instead of being taken as 1, cut to 1,
    or failing inside Python."""
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,9}", value.strip()):
        value = int(value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadField(f"'{key}' is a whole number from {low} to {high}, not {json.dumps(value)[:40]}")
    return value


def required(body: dict[str, Any], key: str, low: int, high: int) -> int:
    value = whole(body, key, low, high)
    if value is None:
        raise BadField(f"'{key}' is needed: a whole number from {low} to {high}")
    return value


def reason_text(body: dict[str, Any]) -> str:
    """The request's ``reason``: text of at most :data:`MAX_REASON` characters."""
    reason = body.get("reason")
    if reason is None:
        return ""
    if not isinstance(reason, str):
        raise BadField("'reason' is text")
    if len(reason) > MAX_REASON:
        raise BadField(f"'reason' is at most {MAX_REASON} characters, not {len(reason)}")
    return reason


def _missing(action: str, exc: Exception) -> str:
    """A refusal for a request the action could not use, in words rather than Python's."""
    if isinstance(exc, BadField):
        return str(exc)
    if isinstance(exc, KeyError):
        return f"{action} needs '{exc.args[0]}'"
    return f"bad request for {action}: {exc}"


def _new_player(body: dict[str, Any], key: str = "name") -> Any:
    from tablesvc.tournament.tournament_db import NewPlayer

    return NewPlayer(str(body[key]), body.get("ema_id"), body.get("club"), body.get("country"))


def _finish(store: Any, tid: int, body: dict[str, Any]) -> dict[str, Any]:
    r = store.finish_round(tid, required(body, "round", 1, 100))
    return {"round": r.number, "status": r.status.value}


def _seat(store: Any, tid: int, body: dict[str, Any]) -> dict[str, Any]:
    from tablesvc.tournament.actions import seat_round
    from tablesvc.tournament.model import SeatingMethod

    method = SeatingMethod(body.get("method", "shuffled"))
    if method is SeatingMethod.FILE:
        raise ValueError("a prescribed seating is imported with tablesvc tournament seating --file")
    saved, q = seat_round(store, tid, method, number=whole(body, "round", 1, 100) if body.get("round") else None,
                          all_rounds=bool(body.get("all")), seed=whole(body, "seed", 0, 2**31 - 1, default=0))
    return {"rounds": [r.number for r in saved], "quality": q.lines()}


def _add(store: Any, tid: int, body: dict[str, Any]) -> dict[str, Any]:
    (p,) = store.add_players(tid, [_new_player(body)])
    return {"number": p.number, "name": p.name}


def _rename(store: Any, tid: int, body: dict[str, Any]) -> dict[str, Any]:
    p = store.rename(tid, body["player"], str(body["name"]))
    return {"number": p.number, "name": p.name}


def _withdraw(store: Any, tid: int, body: dict[str, Any]) -> dict[str, Any]:
    p, waiting = store.withdraw(tid, body["player"])
    return {"number": p.number, "name": p.name, "seat_waits_in_rounds": waiting}


def _substitute(store: Any, tid: int, body: dict[str, Any]) -> dict[str, Any]:
    out, sub = store.substitute(tid, body["player"], _new_player(body))
    return {"out": out.number, "substitute": sub.number, "name": sub.name}


def _clock(store: Any, tid: int, body: dict[str, Any]) -> dict[str, Any]:
    from tablesvc.tournament.model import check_time_rule

    minutes = whole(body, "minutes", 1, 600)
    rule = check_time_rule(body.get("time_rule"))
    store.set_clock(tid, minutes, rule)
    return {"minutes": minutes, "time_rule": rule}


def _import_players(store: Any, tid: int, body: dict[str, Any]) -> dict[str, Any]:
    from tablesvc.tournament.files import read_players_csv

    added = store.add_players(tid, read_players_csv(str(body["csv"]), "the players' file"))
    return {"added": len(added), "players": len(store.players(tid))}


def _tables(store: Any, tid: int, body: dict[str, Any]) -> dict[str, Any]:
    from tablesvc.tournament.files import read_tables

    hall = store.set_tables(tid, read_tables([str(x) for x in body["tables"]]))
    return {"tables": [f"{h.site}/{h.table_id}" for h in hall]}


def _time_up(tstore: Any, tid: int, hall: Any, body: dict[str, Any], token: str | None) -> dict[str, Any]:
    """Time called now: at one table (``{"table": 7, "time_up": true}``) or at every started table of the round
    in play (``{"table": "all", "time_up": true}``), each table's refusal listed."""
    from tablesvc.tournament.hall import hall_time_up, table_clock
    from tablesvc.tournament.model import TournamentError

    reason = str(body.get("reason") or "")
    if not body.get("time_up"):
        raise TournamentError("the whole hall takes time_up only: extend or add a hand table by table")
    if body.get("table") == "all":
        called, refused = hall_time_up(tstore, tid, hall, reason=reason, token=token)
        return {"time_up": called, "refused": {str(k): v for k, v in refused.items()}}
    return table_clock(tstore, tid, int(body["table"]), hall, time_up=True, reason=reason,
                       round_number=int(body["round"]) if body.get("round") is not None else None, token=token)


ACTIONS: dict[str, Callable[[Any, int, dict[str, Any]], dict[str, Any]]] = {
    "finish-round": _finish, "seating": _seat, "add": _add, "rename": _rename, "withdraw": _withdraw,
    "substitute": _substitute, "clock": _clock, "import-players": _import_players, "tables": _tables,
}


def _refused(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"status": "error", "error": message}, status_code=status)


def tournament_routes(feed: TournamentFeed, store: Store, publish: Callable[[str, bytes], bool],
                      page: Callable[[str], Any], keepalive: float, referee_token: str | None,
                      current: Callable[[Request], Any], streams: Any = None) -> list[Route]:
    """The tournament's pages and calls; ``current(request)`` is the signed-in referee's session, or None;
    ``streams`` (:class:`~tablesvc.web.streams.Streams`) counts the open event streams against the server's bound."""
    async def stream(request: Request) -> Response:
        if streams is not None and streams.full():
            return streams.refusal()

        async def events() -> AsyncIterator[str]:
            queue = await feed.subscribe()
            if streams is not None:
                streams.open += 1

            async def gone() -> None:  # the page went: end its stream now, not at the next keepalive
                while (await request.receive())["type"] != "http.disconnect":
                    pass
                while not queue.empty():
                    queue.get_nowait()
                queue.put_nowait(None)

            watch = asyncio.ensure_future(gone())
            try:
                yield "retry: 1000\n\n"
                while True:
                    try:
                        text = await asyncio.wait_for(queue.get(), keepalive)
                    except TimeoutError:
                        yield ": keepalive\n\n"
                        continue
                    if text is None:
                        return
                    yield text
            finally:
                watch.cancel()
                if streams is not None:
                    streams.open -= 1
                feed.unsubscribe(queue)

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def snapshot(_request: Request) -> Response:
        try:
            return JSONResponse(await run_in_threadpool(feed.read))
        except RuntimeError as exc:
            return _refused(str(exc), 503)

    async def referee_body(request: Request) -> dict[str, Any] | JSONResponse:
        session = current(request)
        if session is None:
            return _refused("only a signed-in referee can do this (signed out, or the session ended: sign in again)",
                            403)
        if not same_token(request.headers.get("x-csrf-token"), session.csrf):
            return _refused("missing or wrong CSRF token: reload the page", 403)
        try:
            body = json.loads(await request.body())
        except (ValueError, RecursionError):  # not JSON, not UTF-8, nested beyond reason
            return _refused("the request is not JSON")
        if not isinstance(body, dict):
            return _refused("the request is a JSON object")
        invalid = find_invalid_text(body)
        if invalid is not None:
            return _refused(f"{invalid} is not valid Unicode text (it holds a lone surrogate): retype it")
        try:
            reason_text(body)
        except BadField as exc:
            return _refused(str(exc))
        return body

    async def penalty(request: Request) -> Response:
        body = await referee_body(request)
        if isinstance(body, JSONResponse):
            return body
        from tablesvc.records.schema import RecordsError
        from tablesvc.tournament.model import PenaltyKind, TournamentError

        def give() -> dict[str, Any]:
            s = feed.store()
            tid = feed.tid()
            table = body.get("table")
            if body.get("site") is not None and isinstance(table, str):  # a table of the console: site/table id
                hall = {(h.site, h.table_id): h.number for h in s.tables(tid)}
                if (body["site"], table) not in hall:
                    raise TournamentError(f"{body['site']}/{table} is not a table of the tournament's hall")
                table = hall[(body["site"], table)]
            player = body.get("player")
            if player is None and body.get("seat") is not None and table is not None:
                r = next((x for x in s.rounds(tid) if x.status.value == "started"), None)
                if r is None:
                    raise TournamentError("no round is in play")
                at = required({"table": table}, "table", 1, len(r.seating.tables))
                player = r.seating.tables[at - 1][required(body, "seat", 0, 3)]
            if player is None:
                raise TournamentError("name the player (number, name or EMA id), or the table and seat")
            if isinstance(player, bool) or not isinstance(player, str | int):
                raise BadField("'player' is the player's number, name or EMA id")
            try:
                kind = PenaltyKind(body.get("kind", "penalty"))
            except ValueError:
                raise BadField("'kind' is penalty or warning") from None
            points = whole(body, "points", 0, 1_000_000, default=0)
            round_number = whole(body, "round", 1, 100)
            table_number = whole({"table": table}, "table", 1, 10_000)
            reason = reason_text(body)
            pen = s.add_penalty(tid, player, points=points, reason=reason, kind=kind,
                                round_number=round_number, table=table_number,
                                hand=str(body["hand"]) if body.get("hand") else None)
            log.info("referee %s %d: player %d, round %d, %d points: %s", pen.kind.value, pen.id, pen.player,
                     pen.round, pen.points, pen.reason)
            return {"id": pen.id, "round": pen.round, "player": pen.player, "points": pen.points,
                    "kind": pen.kind.value, "reason": pen.reason, "hand": pen.hand}

        try:
            return JSONResponse({"status": "ok", "data": await run_in_threadpool(give)})
        except BadField as exc:
            return _refused(str(exc))
        except TournamentError as exc:
            return _refused(str(exc), 409)
        except RecordsError as exc:
            return _refused(str(exc), 503)

    async def start_round(request: Request) -> Response:
        body = await referee_body(request)
        if isinstance(body, JSONResponse):
            return body
        from tablesvc.records.schema import RecordsError
        from tablesvc.tournament.actions import next_round
        from tablesvc.tournament.actions import start_round_once as start
        from tablesvc.tournament.model import TournamentError

        def go() -> dict[str, Any]:
            s = feed.store()
            tid = feed.tid()
            retry = bool(body.get("retry"))
            number = whole(body, "round", 1, 100)
            if number is None:
                number = next_round(s, tid)
            report = start(s, tid, number, WebHall(store, publish), retry=retry, token=referee_token,
                           timeout=float(whole(body, "timeout", 1, 120, default=10)))
            return {"round": number, "started": report.started,
                    "not_started": {str(k): v for k, v in report.not_started.items()}}

        started = time.monotonic()
        try:
            data = await run_in_threadpool(go)
        except BadField as exc:
            return _refused(str(exc))
        except TournamentError as exc:
            return _refused(str(exc), 409)
        except RecordsError as exc:
            return _refused(str(exc), 503)
        log.info("referee started round %s in %.1f s: %s", data["round"], time.monotonic() - started, data)
        return JSONResponse({"status": "ok" if not data["not_started"] else "partial", "data": data})

    async def table_time(request: Request) -> Response:
        body = await referee_body(request)
        if isinstance(body, JSONResponse):
            return body
        from tablesvc.records.schema import RecordsError
        from tablesvc.tournament.hall import table_clock
        from tablesvc.tournament.model import TournamentError

        def go() -> dict[str, Any]:
            return table_clock(feed.store(), feed.tid(), required(body, "table", 1, 10_000), WebHall(store, publish),
                               extend=whole(body, "extend", -600, 600), add_hand=bool(body.get("add_hand")),
                               reason=reason_text(body), round_number=whole(body, "round", 1, 100),
                               token=referee_token)

        if body.get("table") == "all" or body.get("time_up"):  # time up: at one table, or the whole hall at once
            go = functools.partial(_time_up, feed.store(), feed.tid(), WebHall(store, publish), body, referee_token)
        try:
            return JSONResponse({"status": "ok", "data": await run_in_threadpool(go)})
        except BadField as exc:
            return _refused(str(exc))
        except TournamentError as exc:
            return _refused(str(exc), 409)
        except RecordsError as exc:
            return _refused(str(exc), 503)
        except (KeyError, TypeError, ValueError) as exc:
            return _refused(_missing("time", exc))

    async def other(request: Request) -> Response:
        """The organiser's other actions, as ``tablesvc tournament`` does them (same store calls, same checks)."""
        action = request.path_params["action"]
        if action not in ACTIONS:
            known = ", ".join(["penalty", "start-round", "time", *sorted(ACTIONS)])
            return _refused(f"no action {action!r}: one of {known}", 404)
        body = await referee_body(request)
        if isinstance(body, JSONResponse):
            return body
        from tablesvc.records.schema import RecordsError
        from tablesvc.tournament.model import TournamentError

        def act() -> dict[str, Any]:
            return ACTIONS[action](feed.store(), feed.tid(), body)

        try:
            data = await run_in_threadpool(act)
        except TournamentError as exc:
            return _refused(str(exc), 409)
        except RecordsError as exc:
            return _refused(str(exc), 503)
        except (KeyError, TypeError, ValueError, ArithmeticError) as exc:
            return _refused(_missing(action, exc))
        log.info("referee tournament action %s: %s", action, data)
        return JSONResponse({"status": "ok", "data": data})

    async def export(request: Request) -> Response:
        """The EMA results report (after the sum check), for the organiser's browser."""
        fmt = request.path_params["fmt"]
        if fmt not in ("csv", "json"):
            return PlainTextResponse("the report is results.csv or results.json", status_code=404)
        from tablesvc.records.schema import RecordsError
        from tablesvc.tournament.actions import current_standings
        from tablesvc.tournament.export import ema_csv, ema_json
        from tablesvc.tournament.model import TournamentError

        def write() -> str:
            st = current_standings(feed.store(), feed.tid())
            return ema_csv(st) if fmt == "csv" else ema_json(st)

        try:
            text = await run_in_threadpool(write)
        except TournamentError as exc:
            return PlainTextResponse(str(exc), status_code=409)
        except RecordsError as exc:
            return PlainTextResponse(str(exc), status_code=503)
        return Response(text, media_type="text/csv" if fmt == "csv" else "application/json",
                        headers={"Content-Disposition": f'attachment; filename="results.{fmt}"'})

    routes = [Route(path, page(name)) for path, name in PAGES.items()]
    routes += [
        Route("/sse/tournament", stream),
        Route("/api/tournament", snapshot),
        Route("/api/tournament/results.{fmt}", export),
        Route("/api/tournament/penalty", penalty, methods=["POST"]),
        Route("/api/tournament/start-round", start_round, methods=["POST"]),
        Route("/api/tournament/time", table_time, methods=["POST"]),
        Route("/api/tournament/{action}", other, methods=["POST"]),
    ]
    return routes
