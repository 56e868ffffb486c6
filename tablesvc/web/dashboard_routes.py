"""The club's dashboard and its tables: the dashboard, table, standings and clock pages, the site's event stream,
the tables' summaries, the server's time and the standings read from the records database."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from tablesvc.web.feed_store import Store, sse
from tablesvc.web.pages import NAME_SEGMENT, page
from tablesvc.web.settings import WebSettings
from tablesvc.web.standings import StandingsReader
from tablesvc.web.streams import Streams, end_on_disconnect, follow

__all__ = ["dashboard_routes"]

log = logging.getLogger(__name__)


def dashboard_routes(store: Store, settings: WebSettings, streams: Streams,
                     reader: StandingsReader | None) -> list[Route]:
    """``/``, ``/table/{site}/{table}``, ``/standings``, ``/clock``, ``/sse/site``, ``/api/tables``,
    ``/api/time`` and ``/api/standings`` (404 without a records database)."""

    async def site_stream(request: Request) -> Response:
        site = request.query_params.get("site") or settings.site or "*"
        if site != "*" and not NAME_SEGMENT.fullmatch(site):
            return PlainTextResponse("no such site", status_code=404)
        if streams.full():
            return streams.refusal()

        async def events() -> AsyncIterator[str]:
            sub, _, snapshot = store.subscribe(asyncio.get_running_loop(), site)
            streams.open += 1
            watch = asyncio.ensure_future(end_on_disconnect(request, sub))
            try:
                yield "retry: 1000\n\n"
                yield sse("tables", snapshot)
                yield sse("server", store.server_view())
                async for message in follow(sub.queue, settings.keepalive, tick=lambda: sse(
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

    return [
        Route("/", page("dashboard.html")),
        Route("/table/{site}/{table}", page("table.html")),
        Route("/standings", page("standings.html")),
        Route("/clock", page("clock.html")),
        Route("/sse/site", site_stream),
        Route("/api/tables", tables),
        Route("/api/time", server_time),
        Route("/api/standings", standings),
    ]
