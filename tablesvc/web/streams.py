"""The pages' event streams (Server-Sent Events): how many are open against the server's bound, how one follows
its subscription, and how one ends when its browser goes."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from tablesvc.web.feed_store import Pushed

__all__ = ["MAX_STREAMS", "Streams", "end_on_disconnect", "follow"]

log = logging.getLogger(__name__)

MAX_STREAMS = 500  # open event streams (pages) at once: a tournament's screens, overlays and phones, with room


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


async def end_on_disconnect(request: Request, sub: Any) -> None:
    """End a page's stream as soon as its browser goes (the server hears it at once; left alone it would
    notice only at the next keepalive, holding the stream's place and name that long)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass
    sub.end()


async def follow(queue: asyncio.Queue[Pushed | None], keepalive: float,
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
