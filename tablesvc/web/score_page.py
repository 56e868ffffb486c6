"""``/score``: photograph a winning hand with a phone, correct what was misread, get the score.

No login: the page changes no game, it reads a photo and values a hand. Two calls behind it:

- ``POST /api/score/read``: the photo as the request body (``Content-Type: image/jpeg``, ``image/png``,
  ``image/webp``); refused **before its body is read** when its type is not an image (415) or its
  declared length is over 20 MB (413); a body that grows past 20 MB without a declared length is cut off
  there (413). It is decoded in memory (:mod:`vision.photos.input`: 40 megapixels at most, EXIF
  orientation), read (:mod:`vision.photos.reader`) and dropped: a photo is never written anywhere. The
  answer is the tiles in reading order with their boxes and groups.
- ``POST /api/score/hand``: the tiles as the player confirmed them (groups of ``{"tile", "face_up"}``),
  the winning tile or none (the lone tile), and the win conditions; scored by the project's scoring
  (:mod:`tablesvc.scorecard`) under the site's rules (``[web] rules``): yaku, han, fu, payments.

The reader (finder, network, prototypes: ~30 MB and a second to load) is loaded on the first photo, not at
start; without the tile finder installed the read call answers 503 with the reason, and the page says it.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tablesvc.web.photo_queue import Busy, PhotoQueue

__all__ = ["PHOTO_TYPES", "ScorePage"]

log = logging.getLogger(__name__)

#: what phones and browsers send for a photo (HEIC is converted by the browser's file picker for image/*)
PHOTO_TYPES = frozenset({"image/jpeg", "image/png", "image/webp", "image/bmp"})
MAX_HAND_JSON = 20_000
_CONDITIONS = ("tsumo", "riichi", "double_riichi", "ippatsu", "haitei", "houtei", "rinshan", "chankan")


class _TooLarge(Exception):
    pass


class ScorePage:
    """The two calls of ``/score`` (module docstring). ``reader``: makes the photo reader (a club's set,
    or a test's finder); default: the packaged one (:meth:`vision.photos.reader.PhotoReader.load`)."""

    def __init__(self, rules: str = "ema2012", reader: Callable[[], Any] | None = None,
                 model: str | None = None, queue: PhotoQueue | None = None) -> None:
        self.rules = rules
        self.queue = queue or PhotoQueue()
        self._make = reader or (lambda: _packaged_reader(model))
        self._reader: Any = None
        self._lock = threading.Lock()

    def reader(self) -> Any:
        with self._lock:
            if self._reader is None:
                self._reader = self._make()
            return self._reader

    def routes(self, page: Callable[[Request], Any]) -> list[Route]:
        return [Route("/score", page),
                Route("/api/score/read", self.read, methods=["POST"]),
                Route("/api/score/hand", self.hand, methods=["POST"])]

    async def read(self, request: Request) -> Response:
        from vision.photos.input import MAX_BYTES

        kind = (request.headers.get("content-type") or "").split(";")[0].strip().lower()
        if kind not in PHOTO_TYPES:
            return _error(f"send a photo (JPEG, PNG or WebP), not {kind or 'a body without a type'}", 415)
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BYTES):
            log.info("score page: a photo of %s bytes refused unread", length)
            return _error(f"the photo is over {MAX_BYTES // 2**20} MB: send a smaller one (phones offer a "
                          "smaller size when sharing)", 413)
        try:
            self.queue.admit()  # before the body is read: a busy server holds no photo it will not read
        except Busy as busy:
            log.info("score page: a photo refused unread: %s", busy)
            return _busy(busy)
        try:
            body = await _body(request, MAX_BYTES)
        except _TooLarge:
            self.queue.release()
            return _error(f"the photo is over {MAX_BYTES // 2**20} MB: send a smaller one", 413)
        except ClientDisconnect:
            self.queue.release()
            return _error("the upload was cut off: try again", 400)
        except BaseException:
            self.queue.release()
            raise
        try:  # the queue holds the place from here until the read ends
            return JSONResponse(await self.queue.run(lambda: self._read(body)))
        except _Refused as exc:
            return _error(str(exc), exc.status)
        except Busy as busy:
            return _busy(busy)

    def _read(self, body: bytes) -> dict[str, Any]:
        from vision.photos.input import BadPhoto, decode_photo, photo_scale
        from vision.photos.reader import READ_SIDE, FinderMissing

        try:
            image = decode_photo(body, keep_side=READ_SIDE)
            scale = photo_scale(body, image)
        except BadPhoto as exc:
            log.info("score page: a photo refused: %s", exc)
            raise _Refused(str(exc), 400) from None
        try:
            reader = self.reader()
        except FinderMissing as exc:
            log.warning("score page: %s", exc)
            raise _Refused(str(exc), 503) from None
        except (OSError, ValueError) as exc:
            log.error("score page: the photo reader cannot be loaded: %s", exc)
            raise _Refused(f"the photo reader cannot be loaded: {exc}", 503) from None
        reading = reader.read(image, scale=scale)
        del image, body  # never kept
        return {"width": reading.width, "height": reading.height, "ms": round(reading.ms),
                "tiles": [{**t.to_json(), "group": t.group, "sideways": t.sideways} for t in reading.tiles],
                "groups": reading.groups, "rows": reading.rows, "dropped": reading.dropped,
                "problem": reading.problem()}

    async def hand(self, request: Request) -> Response:
        body = await request.body() if int(request.headers.get("content-length") or 0) <= MAX_HAND_JSON else b""
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):  # not JSON, not UTF-8, nested beyond reason
            return _error("send the hand as a JSON object (at most 20 kB)", 400)
        if not isinstance(data, dict):
            return _error("send the hand as a JSON object", 400)
        try:
            return JSONResponse(self._score(data))
        except ValueError as exc:  # NotAHand, InvalidHandError, TileParseError, a bad field
            log.info("score page: a hand not scored: %s", exc)
            return _error(str(exc), 422)

    def _score(self, data: dict[str, Any]) -> dict[str, Any]:
        from tablesvc.photo_hand import LaidTile, laid_hand
        from tablesvc.scorecard import ScoreRequest, score

        groups = data.get("groups")
        if not isinstance(groups, list) or not all(isinstance(g, list) for g in groups):
            raise ValueError("'groups' must be a list of lists of tiles")
        laid = []
        for g in groups:
            tiles = []
            for t in g:
                if not isinstance(t, dict) or not isinstance(t.get("tile"), str | None):
                    raise ValueError("each tile is {\"tile\": NAME or null, \"face_up\": true or false}")
                tiles.append(LaidTile(t.get("tile"), bool(t.get("face_up", True))))
            laid.append(tiles)
        win = data.get("win") or None
        if win is not None and not isinstance(win, str):
            raise ValueError("'win' must be a tile name")
        hand = laid_hand(laid, win)
        mapping: dict[str, Any] = {**hand.mapping(), "rules": self.rules,
                                   "seat": str(data.get("seat") or "S"), "round": str(data.get("round") or "E")}
        for key in _CONDITIONS:
            if data.get(key):
                mapping[key] = True
        dora = data.get("dora") or []
        if not isinstance(dora, list) or not all(isinstance(d, str) for d in dora) or len(dora) > 10:
            raise ValueError("'dora' must be a list of at most 10 tile names")
        mapping["dora"] = dora
        for key in ("honba", "sticks"):
            if data.get(key):
                mapping[key] = data[key]
        answer = score(ScoreRequest.from_mapping(mapping))
        return {**answer.to_json(), "hand": hand.text(), "win": hand.win, "card": answer.card()}


class _Refused(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def _packaged_reader(model: str | None) -> Any:
    from vision.photos.reader import PhotoReader

    return PhotoReader.load(model)


async def _body(request: Request, limit: int) -> bytes:
    """The body, stopped as soon as it passes ``limit`` (a body sent without a declared length)."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _TooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def _busy(busy: Busy) -> JSONResponse:
    return JSONResponse({"error": f"the server is {busy}", "retry_after": busy.retry_after}, status_code=503,
                        headers={"Retry-After": str(busy.retry_after)})


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)
