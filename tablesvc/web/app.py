"""The HTTP side of the web server: pages, Server-Sent Events, downloads, and the referee's commands.

Starlette (ASGI) because pages hold long-lived SSE streams: one asyncio loop
serves hundreds of them without a thread each, and Starlette gives routing,
static files and streaming responses
in a small, well-kept library; uvicorn runs it. Pages are static files; they
read the table from their own URL and the feed from ``/sse/...``.

Viewers need nothing: overlay, dashboard, table, standings and clock pages are read-only, and ``/score``
(a hand valued from a phone's photo, :mod:`tablesvc.web.score_page`) changes no game.
The referee console and ``POST /api/cmd/...`` need a referee signed in by
name (each account's password checked against its scrypt hash, on a worker
thread so pages keep flowing; failures slowed and locked out by
:mod:`~tablesvc.web.guard`) with a session the server holds
(:mod:`~tablesvc.web.sessions`: sign-out and idle time end it) and the
session's CSRF token in the ``X-CSRF-Token`` header. A command is then sent
on the table's ``cmd`` topic with the referee's name as ``by``, and the
service's reply is returned with that name.

What a stranger can make the server hold is bounded: request bodies (64 KiB,
refused with 413 before they are read, chunked ones included), open event
streams (``MAX_STREAMS``), waiting password checks, sessions and guard keys.
"""

from __future__ import annotations

import asyncio
import html
import ipaddress
import json
import logging
import re
import secrets
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
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

from tablesvc.text import find_invalid_text, is_valid_text
from tablesvc.web.auth import hash_password, same_token, verify_password
from tablesvc.web.downloads import DownloadError, export_game
from tablesvc.web.guard import Guard
from tablesvc.web.score_page import ScorePage
from tablesvc.web.sessions import Session, SessionStore, form_token, form_token_valid
from tablesvc.web.standings import StandingsReader
from tablesvc.web.store import Pushed, Store, sse
from tablesvc.web.tiles import back_svg, face_svg
from tablesvc.web.tournament import TournamentFeed, tournament_routes

__all__ = ["MAX_BODY", "MAX_STREAMS", "Streams", "WebSettings", "build_app"]

log = logging.getLogger(__name__)

STATIC = resources.files("tablesvc.web") / "static"
MAX_BODY = 64 * 1024  # the largest request body: a command is a few kilobytes, a sign-in form less
OWN_LIMITS = frozenset({"/api/score/read"})  # routes that bound their own (larger) bodies: a phone's photo, 20 MB
MAX_STREAMS = 500  # open event streams (pages) at once: a tournament's screens, overlays and phones, with room
MAX_WAITING_CHECKS = 64  # password checks queued for the hashing threads (~1.5 s of work); more come back later
SESSION_COOKIE = "tablesvc_session"
FORM_COOKIE = "tablesvc_form"
_NAME_SEGMENT = re.compile(r"[^/+#\s\x00-\x1f]{1,64}")  # a site or table name as a topic segment can hold it
COMMANDS = ("start_game", "undo", "amend", "event", "chombo", "dead_hand", "set_scores", "end_game", "clock", "sticks")


@dataclass(frozen=True)
class WebSettings:
    """What the web server needs besides the broker (``[web]`` in a config file)."""

    site: str | None = None
    referee_password: str | None = None  # scrypt hash (tablesvc web --hash-password): the account `referee`
    accounts: dict[str, str] = field(default_factory=dict, repr=False)  # referee name -> scrypt hash
    secret_key: str | None = None  # signs the sign-in form's token; None: a random one per start
    referee_token: str | None = None  # sent as `token` when the tables require one ([commands] tokens)
    reply_timeout: float = 10.0
    keepalive: float = 15.0
    records_db: str | None = None  # SQLite path or postgresql:// URL that `tablesvc records` writes: /standings
    rules: str = "ema2012"  # what /score values a hand under
    photo_model: str | None = None  # a club's enrolled tile set for /score (default: the packaged sets)
    tournament: str | None = None  # the tournament of records_db the /tournament pages show (default: the latest)
    session_idle: float = 3600.0  # a referee's session ends after this long without a request
    https: bool = False  # pages are served over TLS: cookies are Secure
    trusted_proxies: tuple[str, ...] = ()  # addresses/networks whose X-Forwarded-For and -Proto are believed

    @property
    def all_accounts(self) -> dict[str, str]:
        """Every account: ``accounts`` and ``referee_password`` as the account ``referee``."""
        accounts = dict(self.accounts)
        if self.referee_password:
            accounts.setdefault("referee", self.referee_password)
        return accounts


def _page(name: str) -> Callable[[Request], Any]:
    async def serve(_request: Request) -> Response:
        return FileResponse(str(STATIC / name), media_type="text/html")

    return serve


def build_app(store: Store, settings: WebSettings, publish: Callable[[str, bytes], bool],
              photo_reader: Callable[[], Any] | None = None, *,
              clock: Callable[[], float] = time.monotonic) -> Starlette:
    """The ASGI app. ``publish(topic, payload)`` sends a command to the broker (False when offline);
    ``photo_reader`` makes the reader of ``/score`` (default: the packaged one, loaded on the first photo);
    ``clock`` times sessions and the sign-in guard (tests move it on)."""

    def followed(site: str) -> bool:
        return settings.site is None or site == settings.site

    proxies = [ipaddress.ip_network(p, strict=False) for p in settings.trusted_proxies]

    def trusted(host: str | None) -> bool:
        try:
            address = ipaddress.ip_address(host or "")
        except ValueError:
            return False
        return any(address in net for net in proxies)

    def client_address(request: Request) -> str:
        """Who is asking: the peer, or behind a trusted proxy the last address it forwarded for."""
        peer = request.client.host if request.client else "?"
        if trusted(peer):
            forwarded = [a.strip() for a in request.headers.get("x-forwarded-for", "").split(",") if a.strip()]
            while forwarded and trusted(forwarded[-1]):
                forwarded.pop()
            if forwarded:
                return forwarded[-1][:64]
        return peer

    def secure(request: Request) -> bool:
        if settings.https:
            return True
        proto = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
        return proto == "https" and trusted(request.client.host if request.client else None)

    streams = Streams()

    async def tile(request: Request) -> Response:
        name = request.path_params["name"]
        try:
            svg = back_svg() if name == "back" else face_svg(name)
        except ValueError:
            return PlainTextResponse(f"no tile {name!r}", status_code=404)
        return Response(svg, media_type="image/svg+xml", headers={"Cache-Control": "public, max-age=86400"})

    async def table_stream(request: Request) -> Response:
        site, table = request.path_params["site"], request.path_params["table"]
        if not (_NAME_SEGMENT.fullmatch(site) and _NAME_SEGMENT.fullmatch(table)):
            return PlainTextResponse("no such table: a site or table name is 1 to 64 characters without '/', '+', "
                                     "'#' or spaces", status_code=404)
        if not followed(site):
            return PlainTextResponse(f"this server follows site {settings.site!r}, not {site!r}", status_code=404)
        if streams.full():
            return streams.refusal()
        last = request.headers.get("last-event-id") or request.query_params.get("last")
        try:
            last_seq = int(last) if last else None
        except ValueError:
            last_seq = None

        async def events() -> AsyncIterator[str]:
            # subscribed here, in the stream itself, so that its `finally` always lets go of what it took
            sub, missed, snapshot = store.subscribe(asyncio.get_running_loop(), (site, table), last_seq)
            streams.open += 1
            watch = asyncio.ensure_future(_end_on_disconnect(request, sub))
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
                watch.cancel()
                streams.open -= 1
                store.unsubscribe(sub)

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def site_stream(request: Request) -> Response:
        site = request.query_params.get("site") or settings.site or "*"
        if site != "*" and not _NAME_SEGMENT.fullmatch(site):
            return PlainTextResponse("no such site", status_code=404)
        if streams.full():
            return streams.refusal()

        async def events() -> AsyncIterator[str]:
            sub, _, snapshot = store.subscribe(asyncio.get_running_loop(), site)
            streams.open += 1
            watch = asyncio.ensure_future(_end_on_disconnect(request, sub))
            try:
                yield "retry: 1000\n\n"
                yield sse("tables", snapshot)
                yield sse("server", store.server_view())
                async for message in _follow(sub.queue, settings.keepalive, tick=lambda: sse(
                        "tables", {"tables": store.summaries(site)})):
                    yield message
            finally:
                watch.cancel()
                streams.open -= 1
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

    accounts = settings.all_accounts
    sessions = SessionStore(idle=settings.session_idle, clock=clock)
    guard = Guard(clock=clock, on_lockout=lambda text: store.server_alert("lockout", text))
    hashing = ThreadPoolExecutor(max_workers=2, thread_name_prefix="web-password")
    waiting = {"checks": 0}
    form_secret = (settings.secret_key or secrets.token_urlsafe(32)).encode()
    # a name that is no account is checked against this, so a wrong name takes as long as a wrong password
    decoy = hash_password(secrets.token_urlsafe(16), cost=_cost(next(iter(accounts.values()), None)))

    def current(request: Request) -> Session | None:
        return sessions.get(request.cookies.get(SESSION_COOKIE))

    def set_cookie(response: Response, request: Request, name: str, value: str) -> None:
        response.set_cookie(name, value, path="/", httponly=True, samesite="strict", secure=secure(request))

    def login_form(request: Request, target: str, error: str | None, status: int = 200,
                   headers: dict[str, str] | None = None, name: str = "") -> Response:
        token = form_token(form_secret)
        closed = None if accounts else ("This server has no referee accounts: add one with "
                                        "'tablesvc web --add-referee NAME --config FILE'.")
        response = HTMLResponse(_login_html(token, target, error or closed, ask_name=set(accounts) != {"referee"},
                                            name=name), status_code=status, headers=_private(headers))
        set_cookie(response, request, FORM_COOKIE, token)
        return response

    async def login_page(request: Request) -> Response:
        return login_form(request, _target(request.query_params.get("next")), None)

    async def login(request: Request) -> Response:
        form = await _form(request)
        target = _target(form.get("next"))
        name = (form.get("name") or "referee").strip()
        if not form_token_valid(form_secret, request.cookies.get(FORM_COOKIE), form.get("csrf")):
            return login_form(request, target, "The form expired: try again.", 403)
        if not is_valid_text(name) or not is_valid_text(form.get("password") or ""):
            return login_form(request, target, "The name or password is not valid Unicode text: retype it.", 400)
        address = client_address(request)
        account = name if name in accounts else None
        verdict = guard.check(address, account)
        if not verdict.allowed:
            wait = max(1, int(verdict.retry_after + 0.999))
            log.warning("referee sign-in as %r from %s refused without a check: %s", name[:40], address,
                        verdict.reason)
            return login_form(request, target, f"Too many wrong passwords: try again in {_duration(wait)}.", 429,
                              {"Retry-After": str(wait)}, name=name[:40])
        if waiting["checks"] >= MAX_WAITING_CHECKS:
            return login_form(request, target, "The server is busy: try again in a few seconds.", 503,
                              {"Retry-After": "2"}, name=name[:40])
        waiting["checks"] += 1
        try:  # scrypt takes tens of milliseconds of CPU: on a worker thread, so pages keep flowing
            right = await asyncio.get_running_loop().run_in_executor(
                hashing, verify_password, form.get("password") or "", accounts.get(name, decoy))
        finally:
            waiting["checks"] -= 1
        if not right or account is None:
            guard.failed(address, account)
            log.warning("referee sign-in as %r refused from %s: wrong name or password", name[:40], address)
            return login_form(request, target, "Wrong name or password.", 401, name=name[:40])
        guard.succeeded(address, name)
        session = sessions.create(name)
        log.info("referee %s signed in from %s", name, address)
        response = RedirectResponse(target, status_code=303)
        set_cookie(response, request, SESSION_COOKIE, session.id)
        response.delete_cookie(FORM_COOKIE, path="/")
        return response

    async def logout(request: Request) -> Response:
        form = await _form(request)
        session = current(request)
        response = RedirectResponse("/", status_code=303)
        if session is not None and same_token(form.get("csrf"), session.csrf):
            sessions.end(session.id)
            log.info("referee %s signed out", session.referee)
            response.delete_cookie(SESSION_COOKIE, path="/")
        return response

    async def referee_page(request: Request) -> Response:
        if current(request) is None:
            return RedirectResponse(f"/login?next={urllib.parse.quote(request.url.path)}", status_code=303)
        return FileResponse(str(STATIC / "referee.html"), media_type="text/html", headers=_private())

    async def session_info(request: Request) -> Response:
        session = current(request)
        return JSONResponse({"referee": session is not None, "name": session.referee if session else None,
                             "csrf": session.csrf if session else None, "standings": reader is not None},
                            headers=_private())

    async def command(request: Request) -> Response:
        site, table = request.path_params["site"], request.path_params["table"]
        session = current(request)
        if session is None:
            return JSONResponse({"status": "error", "error": "only a signed-in referee can send commands (signed "
                                 "out, or the session ended: sign in again)"}, status_code=403)
        if not same_token(request.headers.get("x-csrf-token"), session.csrf):
            return JSONResponse({"status": "error", "error": "missing or wrong CSRF token: reload the page"},
                                status_code=403)
        if not followed(site) or not (_NAME_SEGMENT.fullmatch(site) and _NAME_SEGMENT.fullmatch(table)):
            return JSONResponse({"status": "error", "error": f"no table {site}/{table}"}, status_code=404)
        try:
            body = json.loads(await request.body())
        except (ValueError, RecursionError):  # not JSON, not UTF-8, nested beyond reason
            return JSONResponse({"status": "error", "error": "the command is not JSON"}, status_code=400)
        if not isinstance(body, dict) or body.get("command") not in COMMANDS:
            return JSONResponse({"status": "error", "error": f"a command is one of {', '.join(COMMANDS)}"},
                                status_code=400)
        invalid = find_invalid_text(body)
        if invalid is not None:
            return JSONResponse({"status": "error", "command": body["command"],
                                 "error": f"{invalid} is not valid Unicode text (it holds a lone surrogate): "
                                          "retype it"}, status_code=400)
        transaction = f"web-{secrets.token_hex(8)}"
        payload = {k: v for k, v in body.items() if k not in ("transaction", "token", "by")}
        payload["transaction"] = transaction
        payload["by"] = session.referee
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
        log.info("referee %s: command %s to %s/%s (%s)", session.referee, payload["command"], site, table,
                 transaction)
        try:
            reply = await asyncio.wait_for(answer, settings.reply_timeout)
        except TimeoutError:
            store.replies.pop(transaction, None)
            return JSONResponse({"status": "error", "error": f"no reply from {site}/{table} within "
                                 f"{settings.reply_timeout:.0f} s: is the table online?"}, status_code=504)
        return JSONResponse({**reply, "by": session.referee})

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
        *(score_page := ScorePage(settings.rules, photo_reader, settings.photo_model)).routes(_page("score.html")),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    if tournament is not None:
        routes[-1:-1] = tournament_routes(tournament, store, publish, _page, settings.keepalive,
                                          settings.referee_token, current, streams)
    app = Starlette(routes=routes)
    app.state.tournament = tournament
    app.state.standings = reader  # closed by WebServer.stop
    app.state.hashing = hashing  # shut down by WebServer.stop
    app.state.photo_queue = score_page.queue  # the photos being read and waiting (tablesvc.web.photo_queue)
    app.state.guard, app.state.sessions, app.state.streams = guard, sessions, streams
    return _LimitBodies(app)  # type: ignore[return-value]


class _LimitBodies:
    """ASGI middleware: a request body over :data:`MAX_BODY` is answered 413 and never read whole. A declared
    ``Content-Length`` over the limit is refused before reading; a chunked body is counted as it arrives. What
    passes is handed on to the app as it came. The routes of :data:`OWN_LIMITS` read their bodies under limits
    of their own, in the same way."""

    def __init__(self, app: Starlette) -> None:
        self.app = app
        self.state = app.state

    async def __call__(self, scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS") or scope["path"] in OWN_LIMITS:
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            await self._refuse(scope, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            size += len(message.get("body", b""))
            if size > MAX_BODY:
                await self._refuse(scope, send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    @staticmethod
    async def _refuse(scope: dict[str, Any], send: Callable) -> None:
        client = scope.get("client") or ("?", 0)
        log.warning("refused a request body of more than %d bytes to %s from %s", MAX_BODY, scope.get("path"),
                    client[0])
        response = PlainTextResponse(f"the request is too large (at most {MAX_BODY // 1024} KiB)", status_code=413,
                                     headers={"Connection": "close"})
        await response({"type": "http"}, _no_receive, send)


async def _no_receive() -> dict[str, Any]:
    return {"type": "http.disconnect"}


@dataclass
class Streams:
    """The event streams open now, against :data:`MAX_STREAMS` (the event loop's thread only)."""

    open: int = 0

    def full(self) -> bool:
        return self.open >= MAX_STREAMS

    def refusal(self) -> Response:
        log.warning("refused a page's event stream: %d are open already", self.open)
        return PlainTextResponse(f"this server has {MAX_STREAMS} pages open already: try again later",
                                 status_code=503, headers={"Retry-After": "30"})


def _private(headers: dict[str, str] | None = None) -> dict[str, str]:
    """Headers for a response that holds a referee's session data: no cache keeps it."""
    return {"Cache-Control": "no-store", **(headers or {})}


def _target(value: str | None) -> str:
    """Where to go after signing in: a path of this server only, in text that can be written back."""
    target = str(value or "/")
    if not is_valid_text(target) or len(target) > 500:
        return "/"
    return target if target.startswith("/") and not target.startswith("//") and "\\" not in target else "/"


def _cost(stored: str | None) -> int:
    """The scrypt cost of a stored hash (the decoy is made as costly), or the default: a power of two up to 2**16
    (a hash of absurd cost in the config must not hold up the start)."""
    try:
        cost = int((stored or "").split("$")[1])
    except (IndexError, ValueError):
        return 2**14
    return cost if 2 <= cost <= 2**16 and cost & (cost - 1) == 0 else 2**14


def _duration(seconds: int) -> str:
    return f"{seconds} s" if seconds < 120 else f"{(seconds + 59) // 60} minutes"


async def _form(request: Request) -> dict[str, str]:
    """A small urlencoded form (sign-in, sign-out); parsed here, so no multipart library is needed. The body is
    at most :data:`MAX_BODY` (the middleware refused larger ones)."""
    body = await request.body()
    try:  # bytes that are not UTF-8 become lone surrogates, which the sign-in refuses as text that is not Unicode
        fields = urllib.parse.parse_qs(body.decode("utf-8", "surrogateescape"), keep_blank_values=True,
                                       errors="surrogateescape", max_num_fields=20)
    except ValueError:  # more fields than any of these forms has
        return {}
    return {k: v[0] for k, v in fields.items()}


async def _end_on_disconnect(request: Request, sub: Any) -> None:
    """End a page's stream as soon as its browser goes (the server hears it at once; left alone it would
    notice only at the next keepalive, holding the stream's place and name that long)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass
    sub.end()


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


def _login_html(csrf: str, target: str, error: str | None, *, ask_name: bool = True, name: str = "") -> str:
    note = f"<p class='error'>{html.escape(error)}</p>" if error else ""
    who = (f'<label>Name <input name="name" value="{html.escape(name, quote=True)}" autocomplete="username" '
           f'autocapitalize="none" required{"" if name else " autofocus"}></label>' if ask_name
           else '<input type="hidden" name="name" value="referee">')
    focus = " autofocus" if name or not ask_name else ""
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Referee sign-in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/static/site.css"></head><body class="page login">
<form method="post" action="/login" class="card"><h1>Referee sign-in</h1>{note}
<input type="hidden" name="csrf" value="{html.escape(csrf)}">
<input type="hidden" name="next" value="{html.escape(target)}">
{who}
<label>Password <input type="password" name="password"{focus} autocomplete="current-password"></label>
<button type="submit">Sign in</button><p class="hint">Viewers need no sign-in: the overlay, the dashboard and
the table pages are open to all.</p></form></body></html>"""
