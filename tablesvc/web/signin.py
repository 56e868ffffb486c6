"""The referee's sign-in form: where to go after it, its small urlencoded body, its page, and the cost of the decoy
hash a name that is no account is checked against."""

from __future__ import annotations

import html
import urllib.parse

from starlette.requests import Request

from tablesvc.text import is_valid_text

__all__ = ["duration", "login_html", "read_form", "safe_target", "scrypt_cost"]


def safe_target(value: str | None) -> str:
    """Where to go after signing in: a path of this server only, in text that can be written back."""
    target = str(value or "/")
    if not is_valid_text(target) or len(target) > 500:
        return "/"
    return target if target.startswith("/") and not target.startswith("//") and "\\" not in target else "/"


def scrypt_cost(stored: str | None) -> int:
    """The scrypt cost of a stored hash (the decoy is made as costly), or the default: a power of two up to 2**16
    (a hash of absurd cost in the config must not hold up the start)."""
    try:
        cost = int((stored or "").split("$")[1])
    except (IndexError, ValueError):
        return 2**14
    return cost if 2 <= cost <= 2**16 and cost & (cost - 1) == 0 else 2**14


def duration(seconds: int) -> str:
    return f"{seconds} s" if seconds < 120 else f"{(seconds + 59) // 60} minutes"


async def read_form(request: Request) -> dict[str, str]:
    """A small urlencoded form (sign-in, sign-out); parsed here, so no multipart library is needed. The body is
    at most :data:`~tablesvc.web.limits.MAX_BODY` (the middleware refused larger ones)."""
    body = await request.body()
    try:  # bytes that are not UTF-8 become lone surrogates, which the sign-in refuses as text that is not Unicode
        fields = urllib.parse.parse_qs(body.decode("utf-8", "surrogateescape"), keep_blank_values=True,
                                       errors="surrogateescape", max_num_fields=20)
    except ValueError:  # more fields than any of these forms has
        return {}
    return {k: v[0] for k, v in fields.items()}


def login_html(csrf: str, target: str, error: str | None, *, ask_name: bool = True, name: str = "") -> str:
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
