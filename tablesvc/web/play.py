"""``/play/<site>/<table>``: a table with no devices, fed by the players' phones.

A phone table is a real table service (``tablesvc run`` with no ``[[serial]]`` and no ``[camera]``): same
journal, state, feed, results and records as any table. Its players enter each hand's result on the page, which
sends it as the ``event`` command any referee could send (a ``win_entry``, ``draw_entry``, ``abort_entry`` or
``chombo_entry``, docs/engine.md); the engine scores and settles it, and the page follows the feed like every
other page. Behind the page:

- ``POST /api/play/<site>/<table>`` with the header ``X-Table-Token``: ``{"action": "preview", "event": ...}``
  settles the entry on a copy of the table's game as the feed shows it and answers every payment, changing
  nothing; ``{"action": "enter", "key": ..., "event": ...}`` sends it to the table; ``{"action": "start", "key":
  ..., "players": [...]}`` starts a game (when none is being played). ``key`` is the phone's idempotency key: the
  command's transaction, so a phone that lost its connection sends the same entry again and the table answers
  with its first reply instead of entering the hand twice. Each entry names its ``hand_number``: two phones
  entering the same hand at once enter it once, the first to reach the table, and the second is answered
  409 with the hand as entered.
- ``GET /play-code/<site>/<table>.svg``, for a signed-in referee: the QR code of the table's page with its token
  (after ``#``, so that it never reaches a server log). The token is an HMAC of the table's name under the
  server's ``secret_key``: printed codes stay good as long as the key does (a random key lasts one run).

A winning hand photographed with the phone is read by ``/api/score/read`` (the ``/score`` page's reader); the
tiles as the players confirmed them travel in the win as ``photo`` (``{"groups": [[{"tile", "face_up"}]],
"win"}``) and are laid out into the hand here, as ``/score`` does.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import hmac
import io
import json
import logging
import re
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tablesvc.engine.engine import Engine, Rejected
from tablesvc.engine.events import (
    AbortEntry,
    ChomboEntry,
    DrawEntry,
    Event,
    EventFormatError,
    GameStart,
    ScoreSheet,
    WinEntry,
    from_dict,
    to_dict,
)
from tablesvc.engine.results import GameResult, HandResult
from tablesvc.web.auth import same_token
from tablesvc.web.feed_store import Store

__all__ = ["ENTRY_TYPES", "entry_event", "play_routes", "play_token", "preview"]

log = logging.getLogger(__name__)

#: The events a phone may send: a hand's result. Corrections (undo, amend) stay with the referee console.
ENTRY_TYPES = {cls.type: cls for cls in (WinEntry, DrawEntry, AbortEntry, ChomboEntry)}
_KEY = re.compile(r"[A-Za-z0-9-]{8,64}")
_NAME_SEGMENT = re.compile(r"[^/+#\s\x00-\x1f]{1,64}")
PHONE_SOURCE = "phone"  # the commands' ``by``: the journal's source is ``referee:phone``


def play_token(secret: bytes, site: str, table: str) -> str:
    """The table token a phone needs to enter at ``site/table``: only who scanned the table's code has it."""
    return hmac.new(secret, f"play:{site}/{table}".encode(), hashlib.sha256).hexdigest()[:24]


def entry_event(data: Any) -> Event:
    """The entry a phone sent, as the engine's event: a win's ``photo`` (the tiles as the players confirmed
    them) is laid out into the hand, melds and winning tile. ValueError says what is wrong."""
    if not isinstance(data, dict) or data.get("type") not in ENTRY_TYPES:
        raise ValueError(f"an entry is one of {', '.join(ENTRY_TYPES)}")
    data = dict(data)
    if data["type"] == "win_entry" and isinstance(data.get("wins"), list):
        data["wins"] = [_photo_win(w) for w in data["wins"]]
    return from_dict(data)


def _photo_win(win: Any) -> Any:
    if not isinstance(win, dict) or "photo" not in win:
        return win
    from tablesvc.photo_hand import LaidTile, laid_hand

    photo = win["photo"]
    groups = photo.get("groups") if isinstance(photo, dict) else None
    if not isinstance(groups, list) or not all(isinstance(g, list) for g in groups):
        raise ValueError("a photo's tiles are groups of {\"tile\", \"face_up\"}")
    laid = [[LaidTile(t.get("tile") if isinstance(t, dict) else None,
                      bool(t.get("face_up", True)) if isinstance(t, dict) else True) for t in g] for g in groups]
    win_tile = photo.get("win") if isinstance(photo.get("win"), str) else None
    hand = laid_hand(laid, win_tile)
    rest = {k: v for k, v in win.items() if k != "photo"}
    return {**rest, "hand": " ".join(hand.concealed), "win_tile": hand.win, "melds": list(hand.melds)}


def _next_hand(state: dict[str, Any]) -> int | None:
    """The number of the hand being played, from the feed's ``hand_id`` (``E2-1#5``: the fifth, number 4)."""
    match = re.search(r"#(\d+)$", str(state.get("hand_id") or ""))
    return int(match.group(1)) - 1 if match else None


def preview(state: dict[str, Any], event: Event) -> dict[str, Any]:
    """What ``event`` would do to the game the feed's ``state`` shows: the hand's result (every payment) and the
    scores after, on a copy taken up where the game stands; :class:`Rejected` says why it cannot be."""
    if state.get("phase") != "between_hands":
        raise Rejected("no hand is being played at this table" if state.get("phase") == "game_over" else
                       "the game has not started: start it first")
    seats = state.get("seats") or []
    players = tuple(str(s.get("name", "")) for s in seats)
    engine = Engine()
    engine.apply(GameStart(players=players, rules=str(state.get("rules")), round=str(state.get("round")),  # type: ignore[arg-type]
                           honba=int(state.get("honba") or 0), sticks=int(state.get("sticks") or 0),
                           scores=tuple(int(s.get("score", 0)) for s in seats),  # type: ignore[arg-type]
                           dealer=int(state.get("dealer") or 0)))
    engine.apply(ScoreSheet())
    expected = _next_hand(state)
    number = getattr(event, "hand_number", None)
    if number is not None and expected is not None and number != expected:
        raise Rejected(f"hand {number + 1} is not the one being played (hand {expected + 1} is): it was entered "
                       "from another phone")
    outputs = engine.apply(dataclasses.replace(event, hand_number=None))  # type: ignore[type-var]
    hand = next(o for o in outputs if isinstance(o, HandResult))
    final = next((o for o in outputs if isinstance(o, GameResult)), None)
    return {
        "text": hand.describe(players),
        "deltas": list(hand.deltas),
        "deposits": list(hand.deposits),
        "scores": list(engine.state.scores),
        "wins": [{"seat": w.seat, "from": w.from_seat, "han": w.han, "fu": w.fu, "limit": w.limit or None,
                  "points": w.points, "yaku": [{"name": n, "han": h} for n, h in w.yaku], "pao": w.pao}
                 for w in hand.wins],
        "game_over": final is not None,
        "event": to_dict(event),
    }


def play_routes(store: Store, publish: Callable[[str, bytes], bool], page: Callable[[str], Any], *,
                secret: bytes, referee_token: str | None, reply_timeout: float,
                current: Callable[[Request], Any], followed: Callable[[str], bool]) -> list[Route]:
    """The phone table's routes (module docstring), hooked into the web app."""

    def table_of(request: Request) -> tuple[str, str] | None:
        site, table = request.path_params["site"], request.path_params["table"]
        if not followed(site) or not (_NAME_SEGMENT.fullmatch(site) and _NAME_SEGMENT.fullmatch(table)):
            return None
        return site, table

    async def code(request: Request) -> Response:
        where = table_of(request)
        if where is None:
            return Response("no such table", status_code=404, media_type="text/plain")
        if current(request) is None:
            return Response("a table's code is shown to a signed-in referee", status_code=403,
                            media_type="text/plain")
        import segno

        site, table = where
        base = str(request.base_url).rstrip("/")
        url = f"{base}/play/{_quote(site)}/{_quote(table)}#t={play_token(secret, site, table)}"
        out = io.BytesIO()
        segno.make(url, error="m").save(out, kind="svg", scale=4, border=2, title=f"{site} / {table}")
        return Response(out.getvalue(), media_type="image/svg+xml", headers={"Cache-Control": "private, max-age=3600"})

    async def command(site: str, table: str, payload: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        """Send one command to the table and wait for its reply: (reply, None) or (None, why not)."""
        if referee_token:
            payload["token"] = referee_token
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[dict[str, Any]] = loop.create_future()

        def arrived(reply: dict[str, Any]) -> None:
            loop.call_soon_threadsafe(lambda: answer.done() or answer.set_result(reply))

        transaction = str(payload["transaction"])
        store.replies[transaction] = arrived
        if not publish(f"{store.prefix}/{site}/{table}/cmd", json.dumps(payload).encode()):
            store.replies.pop(transaction, None)
            return None, "the web server is not connected to the broker: try again in a moment"
        try:
            return await asyncio.wait_for(answer, reply_timeout), None
        except TimeoutError:
            store.replies.pop(transaction, None)
            return None, f"no answer from the table within {reply_timeout:.0f} s: trying again"

    async def api(request: Request) -> Response:
        where = table_of(request)
        if where is None:
            return _error(f"no table {request.path_params['site']}/{request.path_params['table']}", 404)
        site, table = where
        if not same_token(request.headers.get("x-table-token"), play_token(secret, site, table)):
            return _error("this phone has no token for this table: scan the table's code again", 403)
        try:
            body = json.loads(await request.body())
        except (ValueError, RecursionError):
            return _error("send a JSON object", 400)
        if not isinstance(body, dict):
            return _error("send a JSON object", 400)
        action = body.get("action")
        feed = store.table(site, table)
        with store.locked():
            state = dict(feed.state) if feed is not None and feed.state is not None else None
        if action == "preview":
            if state is None:
                return _error("this table is not on the feed: is its service running?", 404)
            try:
                return JSONResponse(preview(state, entry_event(body.get("event"))))
            except (Rejected, ValueError) as exc:  # EventFormatError, NotAHand, InvalidHandError are ValueErrors
                return _error(str(exc), 422)
        key = body.get("key")
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            return _error("each entry carries a key of its own (8 to 64 letters, digits, hyphens)", 400)
        transaction = f"phone-{key}"
        if action == "enter":
            try:
                event = entry_event(body.get("event"))
            except (EventFormatError, ValueError) as exc:
                return _error(str(exc), 422)
            if getattr(event, "hand_number", None) is None:
                return _error("an entry names the hand it is for (hand_number)", 422)
            reply, problem = await command(site, table, {"command": "event", "transaction": transaction,
                                                         "event": to_dict(event), "by": PHONE_SOURCE})
        elif action == "start":
            players = body.get("players")
            if not (isinstance(players, list) and len(players) == 4
                    and all(isinstance(p, str) and 0 < len(p.strip()) <= 60 for p in players)):
                return _error("a game starts with four names", 422)
            if state is not None and state.get("phase") not in ("not_started", "game_over"):
                return _error("a game is being played at this table", 409)
            start: dict[str, Any] = {"command": "start_game", "transaction": transaction,
                                     "players": [p.strip() for p in players], "by": PHONE_SOURCE}
            if isinstance(body.get("rules"), str):
                start["rules"] = body["rules"]
            reply, problem = await command(site, table, start)
            if reply is not None and reply.get("status") == "ok":
                await command(site, table, {"command": "event", "transaction": f"{transaction}-sheet",
                                            "event": to_dict(ScoreSheet()), "by": PHONE_SOURCE})
        else:
            return _error("action is preview, enter or start", 400)
        if reply is None:
            return _error(problem or "no answer", 503)
        if reply.get("status") != "ok":
            error = str(reply.get("error") or "refused")
            return _error(error, 409 if "already entered" in error or "is not being played" in error else 422)
        log.info("phone at %s/%s: %s (%s)", site, table, action, transaction)
        return JSONResponse(reply)

    return [
        Route("/play/{site}/{table}", page("play.html")),
        Route("/play-code/{site}/{table}.svg", code),
        Route("/api/play/{site}/{table}", api, methods=["POST"]),
    ]


def _quote(text: str) -> str:
    import urllib.parse

    return urllib.parse.quote(text, safe="")


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"status": "error", "error": message}, status_code=status)
