"""Named referee accounts: ``[web.referees]`` in the web server's config file, written by ``--add-referee``.

Each referee signs in with a name and a password of their own, so that every
command the console sends names who sent it. The config file keeps only the
scrypt hash of each password (:mod:`tablesvc.web.auth`). Python reads TOML
but does not write it, and a club's file holds comments worth keeping, so the
account's line is edited in place as text (added, or replaced when the name
is there already) and the whole file is read back with the same checks as at
start; a file that would not pass is left as it was.
"""

from __future__ import annotations

import re
from pathlib import Path

from tablesvc.config import ConfigError, load_web_config
from tablesvc.text import REFEREE_NAME_PATTERN, require_text

__all__ = ["AccountError", "add_referee", "check_name"]

_SECTION = "web.referees"


class AccountError(ValueError):
    """An account that cannot be written; the message says why and what to do."""


def check_name(name: str) -> str:
    """``name`` when it can name a referee (what commands carry as ``by``), else :class:`AccountError`."""
    require_text(name, "the referee's name")
    if not re.fullmatch(REFEREE_NAME_PATTERN, name):
        raise AccountError(f"{name!r} cannot name a referee: use 1 to 40 letters, digits, spaces, dots, "
                           "underscores or hyphens, beginning with a letter or digit")
    return name


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else '"' + name + '"'


def add_referee(path: str | Path, name: str, stored_hash: str) -> bool:
    """Write (or replace) the account ``name`` with ``stored_hash`` in the config file at ``path``; True when the
    name was there already. The file is checked afterwards; on any refusal it is left unchanged."""
    check_name(name)
    p = Path(path)
    existed = p.exists()
    try:
        original = p.read_text(encoding="utf-8") if existed else ""
    except OSError as exc:
        raise AccountError(f"cannot read {p}: {exc.strerror}") from None
    lines = original.splitlines()
    line = f'{_key(name)} = "{stored_hash}"'
    header = next((i for i, text in enumerate(lines) if re.fullmatch(r"\s*\[\s*web\.referees\s*\]\s*(#.*)?", text)),
                  None)
    replaced = False
    if header is None:
        if lines and lines[-1].strip():
            lines.append("")
        lines += [f"[{_SECTION}]", line]
    else:
        end = next((i for i in range(header + 1, len(lines)) if re.match(r"\s*\[", lines[i])), len(lines))
        pattern = re.compile(rf'\s*("?){re.escape(name)}\1\s*=')
        at = next((i for i in range(header + 1, end) if pattern.match(lines[i])), None)
        if at is not None:
            lines[at], replaced = line, True
        else:
            while end > header + 1 and not lines[end - 1].strip():
                end -= 1  # after the section's last account, before the blank line that ends it
            lines.insert(end, line)
    try:
        p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    except OSError as exc:
        raise AccountError(f"cannot write {p}: {exc.strerror}") from None
    try:
        load_web_config(p)
    except ConfigError as exc:
        if existed:
            p.write_text(original, encoding="utf-8")
        else:
            p.unlink()
        raise AccountError(f"{exc} (the file is left as it was)") from None
    return replaced
