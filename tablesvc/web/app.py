"""The HTTP side of the web server: pages, Server-Sent Events, downloads, and the referee's commands, assembled
from one module per face: the overlay and the feed (:mod:`~tablesvc.web.feed_routes`), the dashboard and its
tables (:mod:`~tablesvc.web.dashboard_routes`), the referee's console (:mod:`~tablesvc.web.console`), the
tournament (:mod:`~tablesvc.web.tournament`), the score page (:mod:`~tablesvc.web.score_page`) and the
broadcast scenes, behind their key (:mod:`~tablesvc.web.broadcast`).

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
refused with 413 before they are read, chunked ones included: :mod:`~tablesvc.web.limits`), open event
streams (:mod:`~tablesvc.web.streams`), waiting password checks, sessions and guard keys.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from tablesvc.web.broadcast import BroadcastFeed, BroadcastRecords, broadcast_routes
from tablesvc.web.console import referee_console
from tablesvc.web.dashboard_routes import dashboard_routes
from tablesvc.web.feed_routes import feed_routes
from tablesvc.web.feed_store import Store
from tablesvc.web.limits import LimitBodies
from tablesvc.web.pages import STATIC, page
from tablesvc.web.play import play_routes
from tablesvc.web.proxy import TrustedProxies
from tablesvc.web.score_page import ScorePage
from tablesvc.web.settings import WebSettings
from tablesvc.web.standings import StandingsReader
from tablesvc.web.streams import Streams
from tablesvc.web.tournament import TournamentFeed, tournament_routes

__all__ = ["build_app"]


def build_app(store: Store, settings: WebSettings, publish: Callable[[str, bytes], bool],
              photo_reader: Callable[[], Any] | None = None, *,
              clock: Callable[[], float] = time.monotonic) -> Starlette:
    """The ASGI app. ``publish(topic, payload)`` sends a command to the broker (False when offline);
    ``photo_reader`` makes the reader of ``/score`` (default: the packaged one, loaded on the first photo);
    ``clock`` times sessions and the sign-in guard (tests move it on)."""
    streams = Streams()
    reader = StandingsReader(settings.records_db) if settings.records_db else None
    tournament = TournamentFeed(settings.records_db, settings.tournament) if settings.records_db else None
    proxies = TrustedProxies(settings.trusted_proxies, https=settings.https)
    console = referee_console(store, settings, publish, proxies, standings=reader is not None, clock=clock)
    routes = [
        *dashboard_routes(store, settings, streams, reader),
        *feed_routes(store, settings, streams),
        *console.routes,
        *(score_page := ScorePage(settings.rules, photo_reader, settings.photo_model)).routes(page("score.html")),
    ]
    # a table fed by its players' phones: its page, and the codes its token travels in (a lasting secret_key
    # keeps printed codes good; without one they last this run)
    routes += play_routes(store, publish, page, secret=(settings.secret_key or secrets.token_urlsafe(32)).encode(),
                          referee_token=settings.referee_token, reply_timeout=settings.reply_timeout,
                          current=console.current, followed=lambda site: settings.site is None or site == settings.site)
    if tournament is not None:
        routes += tournament_routes(tournament, store, publish, page, settings.keepalive, settings.referee_token,
                                    console.current, streams)
    broadcast = BroadcastFeed(store.prefix)  # the private hands: only the scenes behind the broadcast key see them
    scenes_records = BroadcastRecords(settings.records_db, settings.tournament) if settings.records_db else None
    if settings.broadcast_key:
        routes += broadcast_routes(broadcast, store, settings, streams, scenes_records)
    routes.append(Mount("/static", StaticFiles(directory=str(STATIC)), name="static"))
    app = Starlette(routes=routes)
    app.state.broadcast, app.state.broadcast_records = broadcast, scenes_records
    app.state.tournament = tournament
    app.state.standings = reader  # closed by WebServer.stop
    app.state.hashing = console.hashing  # shut down by WebServer.stop
    app.state.photo_queue = score_page.queue  # the photos being read and waiting (tablesvc.web.photo_queue)
    app.state.guard, app.state.sessions, app.state.streams = console.guard, console.sessions, streams
    return LimitBodies(app)  # type: ignore[return-value]
