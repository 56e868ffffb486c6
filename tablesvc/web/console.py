"""The referee's console: sign-in and sign-out, the console's page, the session a page asks about, and the
commands a signed-in referee sends to a table.

Each account's password is checked against its scrypt hash on a worker thread, so pages keep flowing; failures
are slowed and locked out by :mod:`~tablesvc.web.guard`; the session is the server's
(:mod:`~tablesvc.web.sessions`) and its CSRF token goes in the ``X-CSRF-Token`` header. A command is sent on the
table's ``cmd`` topic with the referee's name as ``by``, and the service's reply is returned with that name.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
import urllib.parse
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from tablesvc.text import find_invalid_text, is_valid_text
from tablesvc.web.auth import hash_password, same_token, verify_password
from tablesvc.web.feed_store import Store
from tablesvc.web.guard import Guard
from tablesvc.web.pages import NAME_SEGMENT, STATIC, private
from tablesvc.web.proxy import TrustedProxies
from tablesvc.web.sessions import Session, SessionStore, form_token, form_token_valid
from tablesvc.web.settings import WebSettings
from tablesvc.web.signin import duration, login_html, read_form, safe_target, scrypt_cost

__all__ = ["COMMANDS", "MAX_WAITING_CHECKS", "Console", "referee_console"]

log = logging.getLogger(__name__)

MAX_WAITING_CHECKS = 64  # password checks queued for the hashing threads (~1.5 s of work); more come back later
SESSION_COOKIE = "tablesvc_session"
FORM_COOKIE = "tablesvc_form"
COMMANDS = ("start_game", "undo", "amend", "event", "chombo", "dead_hand", "set_scores", "end_game", "clock", "sticks")


@dataclass(frozen=True)
class Console:
    """The console's routes and what the app keeps of it: ``current(request)`` is the signed-in referee's session
    (or None), for the tournament's calls too; the sessions, guard and hashing threads the server stops."""

    routes: list[Route]
    current: Callable[[Request], Session | None]
    sessions: SessionStore
    guard: Guard
    hashing: ThreadPoolExecutor


def referee_console(store: Store, settings: WebSettings, publish: Callable[[str, bytes], bool],
                    proxies: TrustedProxies, *, standings: bool, clock: Callable[[], float] = time.monotonic
                    ) -> Console:
    """``/referee/{site}/{table}``, ``/login``, ``/logout``, ``/api/session`` (which says whether the server has
    ``standings``) and ``POST /api/cmd/{site}/{table}``."""
    accounts = settings.all_accounts
    sessions = SessionStore(idle=settings.session_idle, clock=clock)
    guard = Guard(clock=clock, on_lockout=lambda text: store.server_alert("lockout", text))
    hashing = ThreadPoolExecutor(max_workers=2, thread_name_prefix="web-password")
    waiting = {"checks": 0}
    form_secret = (settings.secret_key or secrets.token_urlsafe(32)).encode()
    # a name that is no account is checked against this, so a wrong name takes as long as a wrong password
    decoy = hash_password(secrets.token_urlsafe(16), cost=scrypt_cost(next(iter(accounts.values()), None)))

    def current(request: Request) -> Session | None:
        return sessions.get(request.cookies.get(SESSION_COOKIE))

    def set_cookie(response: Response, request: Request, name: str, value: str) -> None:
        response.set_cookie(name, value, path="/", httponly=True, samesite="strict", secure=proxies.secure(request))

    def login_form(request: Request, target: str, error: str | None, status: int = 200,
                   headers: dict[str, str] | None = None, name: str = "") -> Response:
        token = form_token(form_secret)
        closed = None if accounts else ("This server has no referee accounts: add one with "
                                        "'tablesvc web --add-referee NAME --config FILE'.")
        response = HTMLResponse(login_html(token, target, error or closed, ask_name=set(accounts) != {"referee"},
                                            name=name), status_code=status, headers=private(headers))
        set_cookie(response, request, FORM_COOKIE, token)
        return response

    async def login_page(request: Request) -> Response:
        return login_form(request, safe_target(request.query_params.get("next")), None)

    async def login(request: Request) -> Response:
        form = await read_form(request)
        target = safe_target(form.get("next"))
        name = (form.get("name") or "referee").strip()
        if not form_token_valid(form_secret, request.cookies.get(FORM_COOKIE), form.get("csrf")):
            return login_form(request, target, "The form expired: try again.", 403)
        if not is_valid_text(name) or not is_valid_text(form.get("password") or ""):
            return login_form(request, target, "The name or password is not valid Unicode text: retype it.", 400)
        address = proxies.client_address(request)
        account = name if name in accounts else None
        verdict = guard.check(address, account)
        if not verdict.allowed:
            wait = max(1, int(verdict.retry_after + 0.999))
            log.warning("referee sign-in as %r from %s refused without a check: %s", name[:40], address,
                        verdict.reason)
            return login_form(request, target, f"Too many wrong passwords: try again in {duration(wait)}.", 429,
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
        form = await read_form(request)
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
        return FileResponse(str(STATIC / "referee.html"), media_type="text/html", headers=private())

    async def session_info(request: Request) -> Response:
        session = current(request)
        return JSONResponse({"referee": session is not None, "name": session.referee if session else None,
                             "csrf": session.csrf if session else None, "standings": standings},
                            headers=private())

    async def command(request: Request) -> Response:
        site, table = request.path_params["site"], request.path_params["table"]
        session = current(request)
        if session is None:
            return JSONResponse({"status": "error", "error": "only a signed-in referee can send commands (signed "
                                 "out, or the session ended: sign in again)"}, status_code=403)
        if not same_token(request.headers.get("x-csrf-token"), session.csrf):
            return JSONResponse({"status": "error", "error": "missing or wrong CSRF token: reload the page"},
                                status_code=403)
        if not settings.follows(site) or not (NAME_SEGMENT.fullmatch(site) and NAME_SEGMENT.fullmatch(table)):
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
        Route("/referee/{site}/{table}", referee_page),
        Route("/login", login_page, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/api/session", session_info),
        Route("/api/cmd/{site}/{table}", command, methods=["POST"]),
    ]
    return Console(routes, current, sessions, guard, hashing)
