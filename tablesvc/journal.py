"""The journal: every accepted event of a table, durable before anyone hears of it.

One SQLite database per table (``<data_dir>/<table>.sqlite3``) in WAL mode
with ``synchronous=FULL``: when :meth:`Journal.append` returns, the entry
survives a crash or a power cut. The game state is a fold of the journal, so
a restarted service resumes the same game; corrections (``undo``,
``amend``) are entries too, so the journal never loses what was said at the
table, even when it was later corrected.

``published`` remembers what the MQTT broker acknowledged, so that after an
outage the service sends what is missing (the service issue uses it).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Entry", "Journal", "JournalError"]

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    seq       INTEGER PRIMARY KEY,
    ts        REAL    NOT NULL,
    source    TEXT    NOT NULL,
    kind      TEXT    NOT NULL,
    body      TEXT    NOT NULL,
    published INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class JournalError(RuntimeError):
    """The journal cannot be opened or written; the message names the file."""


@dataclass(frozen=True)
class Entry:
    """One journal line: an input event, or a correction (``undo``, ``amend``)."""

    seq: int
    ts: float
    source: str
    kind: str
    body: dict[str, Any]
    published: bool = False


class Journal:
    """Append-only event store of one table."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
            row = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) > SCHEMA_VERSION:
                raise JournalError(f"{self.path} was written by a newer tablesvc (schema {row[0]})")
        except sqlite3.Error as exc:
            raise JournalError(f"cannot open the journal {self.path}: {exc}") from None

    @classmethod
    def for_table(cls, data_dir: str | Path, table: str) -> Journal:
        if not table or any(c in table for c in "/\\\0") or table in (".", ".."):
            raise JournalError(f"table id {table!r} cannot name a file")
        return cls(Path(data_dir) / f"{table}.sqlite3")

    def append(self, kind: str, body: dict[str, Any], *, source: str, ts: float) -> int:
        """Write one entry durably; returns its sequence number."""
        try:
            cur = self._db.execute(
                "INSERT INTO entries (ts, source, kind, body) VALUES (?, ?, ?, ?)",
                (ts, source, kind, json.dumps(body, separators=(",", ":"))),
            )
        except sqlite3.Error as exc:
            raise JournalError(f"cannot write to the journal {self.path}: {exc}") from None
        return int(cur.lastrowid or 0)

    def entries(self, after: int = 0) -> Iterator[Entry]:
        rows = self._db.execute(
            "SELECT seq, ts, source, kind, body, published FROM entries WHERE seq > ? ORDER BY seq", (after,)
        )
        for seq, ts, source, kind, body, published in rows:
            yield Entry(seq, ts, source, kind, json.loads(body), bool(published))

    def mark_published(self, upto: int) -> None:
        self._db.execute("UPDATE entries SET published = 1 WHERE seq <= ? AND published = 0", (upto,))

    def unpublished(self) -> list[Entry]:
        return [e for e in self.entries() if not e.published]

    @property
    def last_seq(self) -> int:
        row = self._db.execute("SELECT MAX(seq) FROM entries").fetchone()
        return int(row[0] or 0)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
