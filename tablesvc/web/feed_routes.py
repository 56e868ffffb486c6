"""The overlay and the live feed of one table: the stream overlay's page, the table's event stream, the tile
pictures and the game's downloads."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from tablesvc.web.downloads import DownloadError, export_game
from tablesvc.web.feed_store import Store, sse
from tablesvc.web.pages import NAME_SEGMENT, page
from tablesvc.web.settings import WebSettings
from tablesvc.web.streams import Streams, end_on_disconnect, follow
from tablesvc.web.tiles import back_svg, face_svg

__all__ = ["feed_routes"]


def feed_routes(store: Store, settings: WebSettings, streams: Streams) -> list[Route]:
    """``/overlay/{site}/{table}``, ``/sse/table/{site}/{table}``, ``/tiles/{name}.svg`` and
    ``/download/{site}/{table}.{fmt}``."""

    async def tile(request: Request) -> Response:
        name = request.path_params["name"]
        try:
            svg = back_svg() if name == "back" else face_svg(name)
        except ValueError:
            return PlainTextResponse(f"no tile {name!r}", status_code=404)
        return Response(svg, media_type="image/svg+xml", headers={"Cache-Control": "public, max-age=86400"})

    async def table_stream(request: Request) -> Response:
        site, table = request.path_params["site"], request.path_params["table"]
        if not (NAME_SEGMENT.fullmatch(site) and NAME_SEGMENT.fullmatch(table)):
            return PlainTextResponse("no such table: a site or table name is 1 to 64 characters without '/', '+', "
                                     "'#' or spaces", status_code=404)
        if not settings.follows(site):
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
            watch = asyncio.ensure_future(end_on_disconnect(request, sub))
            try:
                yield "retry: 1000\n\n"
                if snapshot is not None:
                    state = snapshot.get("state") or {}
                    yield sse("snapshot", snapshot, state.get("seq") if isinstance(state.get("seq"), int) else None)
                for message in missed or ():
                    yield message.text
                async for message in follow(sub.queue, settings.keepalive):
                    yield message
            finally:
                watch.cancel()
                streams.open -= 1
                store.unsubscribe(sub)

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def download(request: Request) -> Response:
        site, table, fmt = request.path_params["site"], request.path_params["table"], request.path_params["fmt"]
        feed = store.table(site, table) if settings.follows(site) else None
        if feed is None:
            return PlainTextResponse(f"no table {site}/{table}", status_code=404)
        try:
            with store.locked():
                text, media, suffix = export_game(feed, fmt)
        except DownloadError as exc:
            return PlainTextResponse(str(exc), status_code=409)
        return Response(text, media_type=media,
                        headers={"Content-Disposition": f'attachment; filename="{site}-{table}.{suffix}"'})

    return [
        Route("/overlay/{site}/{table}", page("overlay.html")),
        Route("/tiles/{name}.svg", tile),
        Route("/sse/table/{site}/{table}", table_stream),
        Route("/download/{site}/{table}.{fmt}", download),
    ]
