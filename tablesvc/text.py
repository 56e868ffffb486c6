"""Text that every entry point takes in: valid Unicode or refused.

Python strings can hold lone surrogates (``"\\ud800"``), which JSON decoders
accept and UTF-8 encoders refuse. A name holding one would be journalled and
then break every later publish, export and listing, so each entry point
(MQTT commands, web forms, imports) asks :func:`require_text` before it
keeps anything, and the refusal names the field. The names a referee goes by
(:data:`REFEREE_NAME_PATTERN`) are checked here too, by the commands, the
configuration and the web server's accounts alike.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: A referee's name as commands carry it (``by``) and the web server's accounts are named: letters (any script),
#: digits, spaces, dots, underscores and hyphens, beginning with a letter or digit. It ends in "nothing follows"
#: rather than ``$``, which in Python (jsonschema) also matches before a final newline.
REFEREE_NAME_PATTERN = r"^\w[\w .-]{0,39}(?![\s\S])"


class InvalidText(ValueError):
    """Text that cannot be written as UTF-8 (a lone surrogate)."""


def is_valid_text(text: str) -> bool:
    """True when ``text`` encodes as UTF-8, so it can be stored and published."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def require_text(text: str, field: str) -> str:
    """Return ``text`` unchanged, or raise :class:`InvalidText` naming ``field``."""
    if not is_valid_text(text):
        raise InvalidText(f"{field} is not valid Unicode text (it holds a lone surrogate); retype it")
    return text


def find_invalid_text(value: Any, path: str = "") -> str | None:
    """The path of the first string in a JSON-like value that is not valid Unicode, else None."""
    if not path:
        # nearly every value is valid: one pass in C says so (a lone surrogate does not encode), and only a
        # value that fails it, or that JSON cannot hold, is walked to name the place
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
            return None
        except (UnicodeEncodeError, TypeError, ValueError, RecursionError):
            pass
    return _walk_invalid_text(value, path)


def _walk_invalid_text(value: Any, path: str) -> str | None:
    if isinstance(value, str):
        return None if is_valid_text(value) else (path or "value")
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and not is_valid_text(key):
                return where
            found = _walk_invalid_text(item, where)
            if found:
                return found
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = _walk_invalid_text(item, f"{path}[{index}]")
            if found:
                return found
    return None


def safe_text(text: str) -> str:
    """``text`` with any lone surrogate replaced by U+FFFD, for output that must not fail."""
    return text if is_valid_text(text) else "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def control_character(text: str) -> str | None:
    """The first control character in ``text`` (NUL, ESC, a line break, DEL...) as ``U+001B``, else None.

    A name is one line of visible text: a NUL is kept by SQLite and refused by PostgreSQL (the same feed would
    give different records), an ESC moves a terminal's cursor or recolours it when a name is listed, and a
    line break in a name is a quote left open in a spreadsheet's file."""
    found = _CONTROL.search(text)
    return f"U+{ord(found.group()):04X}" if found else None


def require_plain_text(text: str, field: str) -> str:
    """``text`` unchanged when it is valid Unicode without control characters, else :class:`InvalidText`
    naming ``field`` and the character."""
    require_text(text, field)
    bad = control_character(text)
    if bad is not None:
        what = "a line break" if bad in ("U+000A", "U+000D") else f"a control character ({bad})"
        raise InvalidText(f"{field} holds {what}: a name is one line of visible text; retype it")
    return text


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: lone surrogates as U+FFFD, control characters as ``\\x1b``-style
    escapes (a name stored before names were checked cannot move the cursor or hide what follows)."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), safe_text(text))


#: What a spreadsheet takes as the start of a formula (or of a hidden one, after a tab or carriage return).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?\d+(\.\d+)?")


def spreadsheet_cell(value: Any) -> Any:
    """``value`` safe for a CSV cell a spreadsheet opens: text starting like a formula gets a leading ``'``.

    A name typed at a table or in a players' file (``=HYPERLINK(...)``, ``@SUM(...)``, ``-2+3``) would
    otherwise run as a formula when the club opens the export. Numbers, and text that is only a number
    (``-12.5`` in a results report), are left alone so the columns still sum. Every CSV writer of the
    project passes each cell through here.
    """
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS):
        return value
    if _PLAIN_NUMBER.fullmatch(value):
        return value
    return "'" + value
