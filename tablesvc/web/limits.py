"""The bound on request bodies: what a stranger can make the server read before it answers."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.responses import PlainTextResponse

__all__ = ["MAX_BODY", "OWN_LIMITS", "LimitBodies"]

log = logging.getLogger(__name__)

MAX_BODY = 64 * 1024  # the largest request body: a command is a few kilobytes, a sign-in form less
OWN_LIMITS = frozenset({"/api/score/read"})  # routes that bound their own (larger) bodies: a phone's photo, 20 MB


class LimitBodies:
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
