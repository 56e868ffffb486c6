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
    if isinstance(value, str):
        return None if is_valid_text(value) else (path or "value")
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and not is_valid_text(key):
                return where
            found = find_invalid_text(item, where)
            if found:
                return found
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = find_invalid_text(item, f"{path}[{index}]")
            if found:
                return found
    return None


def safe_text(text: str) -> str:
    """``text`` with any lone surrogate replaced by U+FFFD, for output that must not fail."""
    return text if is_valid_text(text) else "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
