"""What the subcommands that print or write a document share: the one-line failure and ``--out``."""

from __future__ import annotations

import sys
from pathlib import Path


def fail(command: str, message: str) -> int:
    """Say on standard error what went wrong, naming the subcommand (``tablesvc games: ...``); exit status 1."""
    print(f"tablesvc {command}: {message}", file=sys.stderr)
    return 1


def write_output(command: str, text: str, out: Path | None) -> int:
    """Write ``text`` to ``out`` (``--out FILE``), or to standard output without one; the exit status.

    A file that cannot be written is a failure the club owner can act on (a
    wrong path, no permission), not a traceback.
    """
    if out is None:
        sys.stdout.write(text)
        return 0
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        return fail(command, f"cannot write {out}: {exc.strerror}")
    return 0
