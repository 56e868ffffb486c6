"""Referee sessions held by the server, so that signing out (or sitting idle) really ends them.

A session that lives only in a signed cookie cannot be taken back: a copy of
the cookie keeps sending commands until it expires. Here the cookie holds a
random id and nothing else; the server keeps, per id, the referee's name, the
CSRF token of the console and two times. A session ends at sign-out, after
``idle`` seconds without a request, or ``max_age`` after sign-in, whichever
comes first; an ended id is refused like one never issued. Sessions are kept in
memory: restarting the web server signs every referee out.

Only a correct password makes a session (the guard slows the rest), and at
most ``MAX_SESSIONS`` are kept (the least recently used go first).

The sign-in form's own CSRF token, before anyone is signed in, is not kept at
all: it is a random value with an HMAC signature (the server's secret key),
set both in a cookie and in the form, and the two must agree.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["MAX_AGE", "MAX_SESSIONS", "Session", "SessionStore", "form_token", "form_token_valid"]

MAX_AGE = 12 * 3600.0
MAX_SESSIONS = 1000


@dataclass
class Session:
    id: str
    referee: str
    csrf: str
    created: float
    seen: float


class SessionStore:
    """Signed-in referees by session id (the event loop's thread only)."""

    def __init__(self, *, idle: float = 3600.0, max_age: float = MAX_AGE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.idle = idle
        self.max_age = max_age
        self.clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()

    def create(self, referee: str) -> Session:
        now = self.clock()
        session = Session(secrets.token_urlsafe(32), referee, secrets.token_urlsafe(32), now, now)
        self._sessions[session.id] = session
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return session

    def get(self, session_id: str | None) -> Session | None:
        """The live session of this id (its idle time starts again), or None: unknown, signed out or expired."""
        if not session_id:
            return None
        session = self._sessions.get(session_id)
        if session is None:
            return None
        now = self.clock()
        if now - session.seen > self.idle or now - session.created > self.max_age:
            del self._sessions[session_id]
            return None
        session.seen = now
        self._sessions.move_to_end(session_id)
        return session

    def end(self, session_id: str | None) -> bool:
        return self._sessions.pop(session_id or "", None) is not None

    def __len__(self) -> int:
        return len(self._sessions)


def form_token(secret: bytes) -> str:
    """A new sign-in form token: random, signed."""
    nonce = secrets.token_urlsafe(24)
    return f"{nonce}.{_sign(secret, nonce)}"


def form_token_valid(secret: bytes, cookie: str | None, form: str | None) -> bool:
    """True when the form's token is the cookie's and carries the server's signature."""
    if not cookie or not form or not hmac.compare_digest(_bytes(cookie), _bytes(form)):
        return False
    nonce, _, signature = cookie.partition(".")
    return bool(nonce) and hmac.compare_digest(_bytes(signature), _sign(secret, nonce).encode())


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "backslashreplace")  # compare_digest takes only ASCII str


def _sign(secret: bytes, nonce: str) -> str:
    return hmac.new(secret, nonce.encode("utf-8", "backslashreplace"), hashlib.sha256).hexdigest()[:32]
