"""The HTTP side of the web server: pages, Server-Sent Events, downloads, and the referee's commands.

Starlette (ASGI) because pages hold long-lived SSE streams: one asyncio loop
serves hundreds of them without a thread each, and Starlette gives routing,
static files, signed-cookie sessions (itsdangerous) and streaming responses
in a small, well-kept library; uvicorn runs it. Pages are static files; they
read the table from their own URL and the feed from ``/sse/...``.

Viewers need nothing: overlay, dashboard, table, standings and clock pages are read-only, and ``/score``
(a hand valued from a phone's photo, :mod:`tablesvc.web.score_page`) changes no game.
The referee console and ``POST /api/cmd/...`` need a signed session
(password checked against the stored scrypt hash) and the session's CSRF
token in the ``X-CSRF-Token`` header; a command is then sent on the table's
``cmd`` topic like any referee's, and the service's reply is returned as is.
"""

from __future__ import annotations

import asyncio
import html
import json
import logging
import secrets
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from tablesvc.web.auth import csrf_token, same_token, verify_password
from tablesvc.web.downloads import DownloadError, export_game
from tablesvc.web.score_page import ScorePage
from tablesvc.web.standings import StandingsReader
from tablesvc.web.store import Pushed, Store, sse
from tablesvc.web.tiles import back_svg, face_svg
from tablesvc.web.tournament import TournamentFeed, tournament_routes

__all__ = ["WebSettings", "build_app"]

log = logging.getLogger(__name__)

STATIC = resources.files("tablesvc.web") / "static"
COMMANDS = ("start_game", "undo", "amend", "event", "chombo", "dead_hand", "set_scores", "end_game", "clock")


@dataclass(frozen=True)
class WebSettings:
    """What the web server needs besides the broker (``[web]`` in a config file)."""

    site: str | None = None
    referee_password: str | None = None  # scrypt hash (tablesvc web --hash-password); None: no console
    secret_key: str | None = None  # signs session cookies; None: a random one per start (sign in again)
    referee_token: str | None = None  # sent as `token` when the tables require one ([commands] tokens)
    reply_timeout: float = 10.0
    keepalive: float = 15.0
    records_db: str | None = None  # SQLite path or postgresql:// URL that `tablesvc records` writes: /standings
    rules: str = "ema2012"  # what /score values a hand under
    photo_model: str | None = None  # a club's enrolled tile set for /score (default: the packaged sets)
    tournament: str | None = None  # the tournament of records_db the /tournament pages show (default: the latest)


def _page(name: str) -> Callable[[Request], Any]:
    async def serve(_request: Request) -> Response:
        return FileResponse(str(STATIC / name), media_type="text/html")

    return serve


def build_app(store: Store, settings: WebSettings, publish: Callable[[str, bytes], bool],
              photo_reader: Callable[[], Any] | None = None) -> Starlette:
    """The ASGI app. ``publish(topic, payload)`` sends a command to the broker (False when offline);
    ``photo_reader`` makes the reader of ``/score`` (default: the packaged one, loaded on the first photo)."""

    def followed(site: str) -> bool:
        return settings.site is None or site == settings.site

    async def tile(request: Request) -> Response:
        name = request.path_params["name"]
        try:
            svg = back_svg() if name == "back" else face_svg(name)
        except ValueError:
            return PlainTextResponse(f"no tile {name!r}", status_code=404)
        return Response(svg, media_type="image/svg+xml", headers={"Cache-Control": "public, max-age=86400"})

    async def table_stream(request: Request) -> Response:
        site, table = request.path_params["site"], request.path_params["table"]
        if not followed(site):
            return PlainTextResponse(f"this server follows site {settings.site!r}, not {site!r}", status_code=404)
        last = request.headers.get("last-event-id") or request.query_params.get("last")
        try:
            last_seq = int(last) if last else None
        except ValueError:
            last_seq = None
        sub, missed, snapshot = store.subscribe(asyncio.get_running_loop(), (site, table), last_seq)

        async def events() -> AsyncIterator[str]:
            try:
                yield "retry: 1000\n\n"
                if snapshot is not None:
                    state = snapshot.get("state") or {}
                    yield sse("snapshot", snapshot, state.get("seq") if isinstance(state.get("seq"), int) else None)
                for message in missed or ():
                    yield message.text
                async for message in _follow(sub.queue, settings.keepalive):
                    yield message
            finally:
                store.unsubscribe(sub)

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def site_stream(request: Request) -> Response:
        site = request.query_params.get("site") or settings.site or "*"
        sub, _, snapshot = store.subscribe(asyncio.get_running_loop(), site)

        async def events() -> AsyncIterator[str]:
            try:
                yield "retry: 1000\n\n"
                yield sse("tables", snapshot)
                async for message in _follow(sub.queue, settings.keepalive, tick=lambda: sse(
                        "tables", {"tables": store.summaries(site)})):
                    yield message
            finally:
                store.unsubscribe(sub)

        return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    async def tables(_request: Request) -> Response:
        return JSONResponse({"tables": store.summaries(settings.site or "*")})

    async def server_time(_request: Request) -> Response:
        # the clock pages count down with the server's time, so a big screen whose own clock is off is not
        return JSONResponse({"now": time.time()}, headers={"Cache-Control": "no-store"})

    reader = StandingsReader(settings.records_db) if settings.records_db else None
    tournament = TournamentFeed(settings.records_db, settings.tournament) if settings.records_db else None

    async def standings(request: Request) -> Response:
        if reader is None:
            return JSONResponse({"error": "this web server has no records database: start it with "
                                 "--records-db (or [web] records_db), the database `tablesvc records` writes"},
                                status_code=404)
        try:
            since = reader.since(request.query_params.get("since"))
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        try:  # the database is read on a worker thread: the event loop keeps serving the live streams
            data = await run_in_threadpool(reader.read, since)
        except RuntimeError as exc:
            log.warning("standings: %s", exc)
            return JSONResponse({"error": str(exc)}, status_code=503)
        return JSONResponse(data)

    async def download(request: Request) -> Response:
        site, table, fmt = request.path_params["site"], request.path_params["table"], request.path_params["fmt"]
        feed = store.table(site, table) if followed(site) else None
        if feed is None:
            return PlainTextResponse(f"no table {site}/{table}", status_code=404)
        try:
            with store.locked():
                text, media, suffix = export_game(feed, fmt)
        except DownloadError as exc:
            return PlainTextResponse(str(exc), status_code=409)
        return Response(text, media_type=media,
                        headers={"Content-Disposition": f'attachment; filename="{site}-{table}.{suffix}"'})

    # ------------------------------------------------------------------ referee

    def session_csrf(request: Request) -> str:
        token = request.session.get("csrf")
        if not token:
            token = request.session["csrf"] = csrf_token()
        return token

    async def login_page(request: Request) -> Response:
        return HTMLResponse(_login_html(session_csrf(request), request.query_params.get("next", "/"),
                                        None if settings.referee_password else
                                        "This server has no referee password: set [web] referee_password."))

    async def login(request: Request) -> Response:
        form = await _form(request)
        target = str(form.get("next") or "/")
        if not target.startswith("/") or target.startswith("//"):
            target = "/"
        if not same_token(str(form.get("csrf") or ""), request.session.get("csrf")):
            return HTMLResponse(_login_html(session_csrf(request), target, "The form expired: try again."),
                                status_code=403)
        if not settings.referee_password or not verify_password(str(form.get("password") or ""),
                                                                settings.referee_password):
            log.warning("referee sign-in refused from %s", request.client.host if request.client else "?")
            return HTMLResponse(_login_html(session_csrf(request), target, "Wrong password."), status_code=401)
        request.session.clear()
        request.session["referee"] = True
        request.session["csrf"] = csrf_token()  # a new token after signing in
        return RedirectResponse(target, status_code=303)

    async def logout(request: Request) -> Response:
        form = await _form(request)
        if same_token(str(form.get("csrf") or ""), request.session.get("csrf")):
            request.session.clear()
        return RedirectResponse("/", status_code=303)

    async def referee_page(request: Request) -> Response:
        if not request.session.get("referee"):
            return RedirectResponse(f"/login?next={request.url.path}", status_code=303)
        return FileResponse(str(STATIC / "referee.html"), media_type="text/html")

    async def session_info(request: Request) -> Response:
        referee = bool(request.session.get("referee"))
        return JSONResponse({"referee": referee, "csrf": session_csrf(request) if referee else None,
                             "standings": reader is not None})

    async def command(request: Request) -> Response:
        site, table = request.path_params["site"], request.path_params["table"]
        if not request.session.get("referee"):
            return JSONResponse({"status": "error", "error": "only a signed-in referee can send commands"},
                                status_code=403)
        if not same_token(request.headers.get("x-csrf-token"), request.session.get("csrf")):
            return JSONResponse({"status": "error", "error": "missing or wrong CSRF token: reload the page"},
                                status_code=403)
        if not followed(site):
            return JSONResponse({"status": "error", "error": f"no table {site}/{table}"}, status_code=404)
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return JSONResponse({"status": "error", "error": "the command is not JSON"}, status_code=400)
        if not isinstance(body, dict) or body.get("command") not in COMMANDS:
            return JSONResponse({"status": "error", "error": f"a command is one of {', '.join(COMMANDS)}"},
                                status_code=400)
        transaction = f"web-{secrets.token_hex(8)}"
        payload = {k: v for k, v in body.items() if k not in ("transaction", "token")}
        payload["transaction"] = transaction
        if settings.referee_token:
            payload["token"] = settings.referee_token
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[dict[str, Any]] = loop.create_future()

        def arrived(reply: dict[str, Any]) -> None:
            loop.call_soon_threadsafe(lambda: answer.done() or answer.set_result(reply))

        store.replies[transaction] = arrived
        topic = f"{store.prefix}/{site}/{table}/cmd"
        if not publish(topic, json.dumps(payload).encode()):
            store.replies.pop(transaction, None)
            return JSONResponse({"status": "error", "error": "the web server is not connected to the broker"},
                                status_code=503)
        log.info("referee command %s to %s/%s (%s)", payload["command"], site, table, transaction)
        try:
            reply = await asyncio.wait_for(answer, settings.reply_timeout)
        except TimeoutError:
            store.replies.pop(transaction, None)
            return JSONResponse({"status": "error", "error": f"no reply from {site}/{table} within "
                                 f"{settings.reply_timeout:.0f} s: is the table online?"}, status_code=504)
        return JSONResponse(reply)

    routes = [
        Route("/", _page("dashboard.html")),
        Route("/table/{site}/{table}", _page("table.html")),
        Route("/overlay/{site}/{table}", _page("overlay.html")),
        Route("/standings", _page("standings.html")),
        Route("/clock", _page("clock.html")),
        Route("/referee/{site}/{table}", referee_page),
        Route("/login", login_page, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/tiles/{name}.svg", tile),
        Route("/sse/table/{site}/{table}", table_stream),
        Route("/sse/site", site_stream),
        Route("/api/tables", tables),
        Route("/api/time", server_time),
        Route("/api/session", session_info),
        Route("/api/standings", standings),
        Route("/api/cmd/{site}/{table}", command, methods=["POST"]),
        Route("/download/{site}/{table}.{fmt}", download),
        *ScorePage(settings.rules, photo_reader, settings.photo_model).routes(_page("score.html")),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    if tournament is not None:
        routes[-1:-1] = tournament_routes(tournament, store, publish, _page, settings.keepalive,
                                          settings.referee_token)
    secret = settings.secret_key or secrets.token_urlsafe(32)
    middleware = [Middleware(SessionMiddleware, secret_key=secret, session_cookie="tablesvc_session",
                             same_site="strict", max_age=12 * 3600)]
    app = Starlette(routes=routes, middleware=middleware)
    app.state.standings = reader  # closed by WebServer.stop
    app.state.tournament = tournament
    return app


async def _form(request: Request) -> dict[str, str]:
    """A small urlencoded form (sign-in, sign-out); parsed here, so no multipart library is needed."""
    body = await request.body()
    if len(body) > 10_000:
        return {}
    fields = urllib.parse.parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return {k: v[0] for k, v in fields.items()}


async def _follow(queue: asyncio.Queue[Pushed | None], keepalive: float,
                  tick: Callable[[], str] | None = None) -> AsyncIterator[str]:
    """Pushed messages as SSE text until the subscription is dropped; a comment (or ``tick``) when idle."""
    while True:
        try:
            message = await asyncio.wait_for(queue.get(), keepalive)
        except TimeoutError:
            yield tick() if tick is not None else ": keepalive\n\n"
            continue
        if message is None:
            return
        yield message.text


def _login_html(csrf: str, target: str, error: str | None) -> str:
    note = f"<p class='error'>{html.escape(error)}</p>" if error else ""
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Referee sign-in</title>
<link rel="stylesheet" href="/static/site.css"></head><body class="page login">
<form method="post" action="/login" class="card"><h1>Referee sign-in</h1>{note}
<input type="hidden" name="csrf" value="{html.escape(csrf)}">
<input type="hidden" name="next" value="{html.escape(target)}">
<label>Password <input type="password" name="password" autofocus autocomplete="current-password"></label>
<button type="submit">Sign in</button><p class="hint">Viewers need no sign-in: the overlay, the dashboard and
the table pages are open to all.</p></form></body></html>"""
