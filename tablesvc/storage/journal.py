"""The journal: every accepted event of a table, durable before anyone hears of it.

One SQLite database per table (``<data_dir>/<table>.sqlite3``) in WAL mode
with ``synchronous=FULL``: when :meth:`Journal.append` returns, the entry
survives a crash or a power cut. The game state is a fold of the journal, so
a restarted service resumes the same game; corrections (``undo``,
``amend``) are entries too, so the journal never loses what was said at the
table, even when it was later corrected.

``published`` remembers what the MQTT broker acknowledged, so that after an
outage the service sends what is missing (the service issue uses it).

``commands`` remembers every referee command that came with a transaction
id, and its reply, so that a command sent again (a retry after a lost reply,
a restart) is answered with its first reply instead of being carried out
twice. The entry a command wrote and its transaction are written in one
SQLite transaction: a crash cannot leave one without the other.

``device_events`` remembers the (device id, seq) of the device event (a
serial frame the service acknowledges) that made an entry, in the entry's
SQLite transaction, so that a service started after a crash knows a repeat
of an event journalled before it (the device never got its ACK) and
acknowledges it again instead of journalling it twice.

``private_hands`` keeps what the seat cameras read of each seat's concealed hand (the reading the
consensus published, each time it changed), so that a restarted service knows the seats' last hands. They
are private: never entries, so nothing that reads the game from the journal (the live state, the feed, the
archive, replays, records, downloads) ever sees them; :meth:`Journal.private_hands` is their only reader.
Older journals get the table, empty, when opened (a tablesvc that does not know it ignores it).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tablesvc.text import safe_text

log = logging.getLogger(__name__)

__all__ = ["Entry", "Journal", "JournalDamaged", "JournalError", "JournalForeign"]

#: 1: entries, meta, commands. 2: device_events (a schema-1 journal gets the table, empty, when opened).
#: 3: a SHA-256 checksum per entry (``entries.sum``; an older journal's entries have none, every entry written
#: after it is opened has one, from ``meta.checked_from``) and ``refusals`` (summaries of refused commands).
#: 4: the header (schema, checked_from, site, table) carries a checksum of its own (``meta.header``), so that
#: the checks cannot be talked out of: see :meth:`Journal.verify`.
SCHEMA_VERSION = 4
#: the meta rows the header checksum covers
HEADER_KEYS = ("schema", "checked_from", "site", "table")
#: How many command transactions a table remembers (the latest), carried from each game's journal into the next.
KEEP_TRANSACTIONS = 100_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    seq       INTEGER PRIMARY KEY,
    ts        REAL    NOT NULL,
    source    TEXT    NOT NULL,
    kind      TEXT    NOT NULL,
    body      TEXT    NOT NULL,
    published INTEGER NOT NULL DEFAULT 0,
    sum       TEXT
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS commands (
    key    TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    seq    INTEGER,
    reply  TEXT
);
CREATE TABLE IF NOT EXISTS device_events (
    entry  INTEGER PRIMARY KEY,
    device TEXT    NOT NULL,
    seq    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS private_hands (
    id      INTEGER PRIMARY KEY,
    ts      REAL    NOT NULL,
    seat    INTEGER NOT NULL,
    hand_id TEXT    NOT NULL,
    body    TEXT    NOT NULL
);
CREATE TABLE IF NOT EXISTS refusals (
    ts     REAL    NOT NULL,
    sender TEXT    NOT NULL,
    count  INTEGER NOT NULL,
    last   TEXT    NOT NULL
);
"""


def checksum(seq: int, ts: float, source: str, kind: str, body: str) -> str:
    """An entry's SHA-256 over what replaying it reads (its seq, time, source, kind and body as stored): changed
    bytes anywhere in it are found at the next start instead of being replayed."""
    text = json.dumps([seq, ts, source, kind, body], separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def header_checksum(header: dict[str, str]) -> str:
    """The SHA-256 of the journal's header (:data:`HEADER_KEYS`, absent ones as null)."""
    text = json.dumps([header.get(k) for k in HEADER_KEYS], separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


class JournalError(RuntimeError):
    """The journal cannot be opened or written; the message names the file."""


class JournalDamaged(JournalError):
    """The journal file is not a sound SQLite database (truncated, overwritten): it is left as it is."""


class JournalForeign(JournalError):
    """The journal belongs to another table (its site and table id, stored in it, differ)."""


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

    def __init__(self, path: str | Path, *, sync: str = "full", owner: tuple[str, str] | None = None) -> None:
        """``sync="full"`` (the default) fsyncs every entry: it survives a power cut. ``"normal"``
        survives a crash or SIGKILL of the service but not a power cut, for disks whose fsync is slow.

        An existing file is checked first (``PRAGMA quick_check``): a damaged one raises
        :class:`JournalDamaged` and is not written to. ``owner`` is the (site, table) the journal belongs
        to: written into a new journal, compared with an old one (:class:`JournalForeign` when it differs).
        ``fresh`` tells whether the file was missing or empty (0 bytes) before."""
        if sync not in ("full", "normal"):
            raise JournalError(f"journal sync must be 'full' or 'normal', not {sync!r}")
        self.path = Path(path)
        self._lock = threading.Lock()  # the service thread writes, the MQTT thread marks acknowledgements
        self.fresh = not self.path.exists() or self.path.stat().st_size == 0
        self._db: sqlite3.Connection | None = None
        self._device_event: tuple[str, int] | None = None  # set by from_device(), read by append()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self.fresh:
                self._inspect(owner)  # read-only: a file refused here is left byte for byte as it was
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={sync.upper()}")
            schema = self._schema()
            self._db.executescript(_SCHEMA)
            if schema is None:
                with self._write() as db:
                    self._set_header(db, {"schema": str(SCHEMA_VERSION), "checked_from": "1"})
            elif schema < SCHEMA_VERSION:  # the script above added the tables the older schema lacked
                self._upgrade(schema)
            if owner is not None:
                self._claim(owner)
        except JournalError:
            self._abandon()
            raise
        except sqlite3.OperationalError as exc:  # cannot open, locked, read-only, disk full
            self._abandon()
            raise JournalError(f"cannot open the journal {self.path}: {exc}") from None
        except sqlite3.DatabaseError as exc:  # "file is not a database", "database disk image is malformed"
            self._abandon()
            raise self.damaged(str(exc)) from None

    def _inspect(self, owner: tuple[str, str] | None) -> None:
        """Every check of an existing file, on a read-only connection, before anything is written to it (the
        WAL mode, a migration, the owner): a sound database, a schema this tablesvc knows, a sound header,
        every entry (:meth:`verify`), the right table."""
        sides = [self.path.with_name(self.path.name + extra) for extra in ("-wal", "-shm")]
        had = [side.exists() for side in sides]
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        self._db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        try:
            self._check()
            schema = self._schema()
            if schema is not None and schema > SCHEMA_VERSION:
                raise JournalError(f"{self.path} was written by a newer tablesvc (schema {schema}); upgrade tablesvc")
            self.verify()
            if owner is not None:
                self._claim(owner, check_only=True)
        except BaseException:
            self._db.close()
            self._db = None
            for side, existed in zip(sides, had, strict=True):  # the empty side files reading it made, not kept
                if not existed and side.exists() and (side.name.endswith("-shm") or side.stat().st_size == 0):
                    side.unlink()
            raise
        self._db.close()
        self._db = None

    def damaged(self, what: str) -> JournalDamaged:
        return JournalDamaged(
            f"the journal {self.path} is damaged ({what}); it was left untouched. Restore it from a backup, or "
            "start a new game with 'tablesvc run --new-game' (the damaged file is then kept beside as "
            f"{self.path.stem}.damaged-<time>{self.path.suffix})")

    def _check(self) -> None:
        """An existing journal must be a sound database before anything is written to it."""
        assert self._db is not None
        rows = [r[0] for r in self._db.execute("PRAGMA quick_check").fetchall()]
        if rows != ["ok"]:
            raise self.damaged("quick_check: " + "; ".join(str(r) for r in rows[:3])[:300])

    def _schema(self) -> int | None:
        """The schema version stored in the journal (None: a new one); a value that is no number is damage."""
        assert self._db is not None
        if not self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone():
            return None
        row = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None:
            return None
        try:
            return int(str(row[0]).strip())
        except ValueError:
            raise self.damaged(f"its schema version is {str(row[0])[:40]!r}, not a number") from None

    def _upgrade(self, schema: int) -> None:
        """An older journal, already verified: entries written from now on carry a checksum (the ones before
        have none, where the journal had none), and the header gets its own."""
        assert self._db is not None
        columns = [r[1] for r in self._db.execute("PRAGMA table_info(entries)")]
        with self._write() as db:
            header = dict(db.execute("SELECT key, value FROM meta").fetchall())
            if "sum" not in columns:
                db.execute("ALTER TABLE entries ADD COLUMN sum TEXT")
            if schema < 3:
                header["checked_from"] = str(int(db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM entries")
                                                 .fetchone()[0]))
            header["schema"] = str(SCHEMA_VERSION)
            self._set_header(db, header)
        log.info("journal %s: schema %d brought to %d; entries from %s on carry a checksum", self.path, schema,
                 SCHEMA_VERSION, header["checked_from"])

    @staticmethod
    def _set_header(db: sqlite3.Connection, header: dict[str, str]) -> None:
        """Write the header's rows and its checksum (inside the caller's transaction)."""
        rows = [(k, header[k]) for k in HEADER_KEYS if header.get(k) is not None]
        db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [*rows, ("header", header_checksum(header))])

    def verify(self) -> None:
        """Check the header and every entry, so that a start never replays what the service did not write.

        The header: a schema-4 journal's header (schema, checked_from, site, table) matches its checksum; an
        older one agrees with what its entries show: a journal that holds checksummed entries (the ``sum``
        column) says schema 3 or 4, and every entry before ``checked_from`` has no checksum (moving
        ``checked_from`` past written checksums, or lowering the schema, is refused, never believed).
        The entries: seq 1..N with no gap, a numeric time, a text source and kind, a JSON object as body, and
        the checksum from ``checked_from`` on. :class:`JournalDamaged` names the file and what is wrong."""
        assert self._db is not None
        schema = self._schema()
        columns = [r[1] for r in self._db.execute("PRAGMA table_info(entries)")]
        has_sums = "sum" in columns
        header = dict(self._db.execute("SELECT key, value FROM meta").fetchall()) if schema is not None else {}
        if has_sums and (schema is None or schema < 3):
            raise self.damaged(f"its header says schema {schema if schema is not None else '(none)'}, but it holds "
                               "checksummed entries (schema 3 or later): the header was changed")
        if schema is not None and schema >= 4:
            if header.get("header") != header_checksum(header):
                why = "has no checksum" if header.get("header") is None else "does not match its checksum"
                raise self.damaged(f"its header (schema, checked entries, table) {why}: it was changed")
        elif "header" in header:
            raise self.damaged(f"its header says schema {schema}, older than its header checksum (schema 4): "
                               "the header was changed")
        checked_from = 10**18  # an older journal without checksums: nothing to check but the shape
        if has_sums:
            row = header.get("checked_from")
            if row is None:
                raise self.damaged("its header does not say which entries carry a checksum (checked_from)")
            try:
                checked_from = int(row)
            except ValueError:
                raise self.damaged(f"its checked_from is {str(row)[:40]!r}, not a number") from None
        sums = "sum" if has_sums else "NULL"
        rows = self._db.execute(f"SELECT seq, ts, typeof(ts), source, kind, body, {sums} FROM entries ORDER BY seq")
        expected = 1
        for seq, ts, ts_type, source, kind, body, stored in rows:
            where = f"entry {seq}"
            if seq != expected:
                missing = f"entry {expected}" if seq == expected + 1 else f"entries {expected} to {seq - 1}"
                raise self.damaged(f"{missing} missing: seq jumps from {expected - 1} to {seq}")
            expected += 1
            if ts_type not in ("real", "integer") or not math.isfinite(float(ts)):
                raise self.damaged(f"{where}: its time {str(ts)[:40]!r} is not a number")
            if not isinstance(source, str) or not isinstance(kind, str) or not isinstance(body, str):
                raise self.damaged(f"{where}: its source, kind or body is not text")
            try:
                if not isinstance(json.loads(body), dict):
                    raise ValueError("not a JSON object")
            except (ValueError, RecursionError) as exc:
                raise self.damaged(f"{where} ({kind}): its body is not a JSON object ({str(exc)[:80]})") from None
            if seq < checked_from and stored is not None:
                raise self.damaged(f"its header says entries are checked from {checked_from}, but {where} ({kind}) "
                                   "before it carries a checksum: the header was changed")
            if seq >= checked_from and stored != checksum(seq, ts, source, kind, body):
                why = "has no checksum" if stored is None else "does not match its checksum"
                raise self.damaged(f"{where} ({kind}) {why}: it was changed after it was written")

    def _claim(self, owner: tuple[str, str], check_only: bool = False) -> None:
        """Write the table's identity into a new journal; refuse one that belongs to another table."""
        assert self._db is not None
        stored = dict(self._db.execute("SELECT key, value FROM meta WHERE key IN ('site', 'table')").fetchall())
        if not stored:
            if not check_only:
                with self._write() as db:
                    header = dict(db.execute("SELECT key, value FROM meta").fetchall())
                    self._set_header(db, {**header, "site": owner[0], "table": owner[1]})
            return
        if (stored.get("site"), stored.get("table")) != owner:
            raise JournalForeign(
                f"the journal {self.path} belongs to table {stored.get('site')}/{stored.get('table')}, not "
                f"{owner[0]}/{owner[1]}: check [table] site, id and data_dir in the configuration")

    def _abandon(self) -> None:
        if self._db is not None:
            self._db.close()

    @classmethod
    def for_table(cls, data_dir: str | Path, table: str, *, sync: str = "full", site: str | None = None) -> Journal:
        """The journal of table ``table`` (of ``site``, when given: stored in it and checked)."""
        return cls(cls.path_for(data_dir, table), sync=sync, owner=(site, table) if site is not None else None)

    @staticmethod
    def path_for(data_dir: str | Path, table: str) -> Path:
        if not table or any(c in table for c in "/\\\0") or table in (".", ".."):
            raise JournalError(f"table id {table!r} cannot name a file")
        return Path(data_dir) / f"{table}.sqlite3"

    @staticmethod
    def set_aside(path: Path, label: str) -> Path:
        """Move a journal (and its -wal/-shm) aside as ``<stem>.<label>-<UTC time>.sqlite3``; returns the new
        path. Nothing is ever deleted: a damaged journal may still be read by hand."""
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        target = path.with_name(f"{path.stem}.{label}-{stamp}{path.suffix}")
        path.rename(target)
        for extra in ("-wal", "-shm"):
            side = path.with_name(path.name + extra)
            if side.exists():
                side.rename(target.with_name(target.name + extra))
        return target

    def append(self, kind: str, body: dict[str, Any], *, source: str, ts: float,
               command: tuple[str, str] | None = None) -> int:
        """Write one entry durably; returns its sequence number. ``command`` is the (transaction key, digest)
        of the referee command that wrote it, recorded with the entry, all or nothing; so is the device event
        that wrote it, inside :meth:`from_device`."""
        text = json.dumps(body, separators=(",", ":"))
        with self._write() as db:
            seq = int(db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM entries").fetchone()[0])
            db.execute("INSERT INTO entries (seq, ts, source, kind, body, sum) VALUES (?, ?, ?, ?, ?, ?)",
                       (seq, float(ts), source, kind, text, checksum(seq, float(ts), source, kind, text)))
            if command is not None:
                db.execute("INSERT OR REPLACE INTO commands (key, digest, seq, reply) VALUES (?, ?, ?, NULL)",
                           (command[0], command[1], seq))
            if self._device_event is not None:
                db.execute("INSERT INTO device_events (entry, device, seq) VALUES (?, ?, ?)",
                           (seq, *self._device_event))
        return seq

    @contextmanager
    def from_device(self, device: str, seq: int) -> Iterator[None]:
        """Entries appended inside this block were made by the event frame ``seq`` of device ``device``:
        each records it, in its own SQLite transaction (see :meth:`device_events`)."""
        self._device_event = (device, seq)
        try:
            yield
        finally:
            self._device_event = None

    def device_events(self, since: float, until: float) -> list[tuple[str, int, float]]:
        """The (device id, seq, entry ts) of the device events journalled with a ts from ``since`` to ``until``
        (wall clock), in journal order; one per event even when it made several entries."""
        with self._lock:
            rows = self._db.execute(
                "SELECT d.device, d.seq, MIN(e.ts), MIN(e.seq) FROM device_events d JOIN entries e ON e.seq = d.entry "
                "WHERE e.ts BETWEEN ? AND ? GROUP BY d.device, d.seq ORDER BY MIN(e.seq)", (since, until)).fetchall()
        return [(device, seq, ts) for device, seq, ts, _ in rows]

    def recall(self, key: str) -> tuple[str, dict[str, Any] | None, int | None] | None:
        """The (digest, reply, seq) of the command with this transaction key, or None if never seen.
        The reply is None when the service stopped between journalling the command and answering it."""
        with self._lock:
            row = self._db.execute("SELECT digest, reply, seq FROM commands WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return row[0], (json.loads(row[1]) if row[1] is not None else None), row[2]

    def remember(self, key: str, digest: str, reply: dict[str, Any]) -> None:
        """Record the reply a command with this transaction key got (its entry, if any, is already recorded)."""
        try:
            with self._lock:
                self._db.execute(
                    "INSERT INTO commands (key, digest, reply) VALUES (?, ?, ?) "
                    "ON CONFLICT(key) DO UPDATE SET reply = excluded.reply",
                    (key, digest, json.dumps(reply, separators=(",", ":"))))
        except sqlite3.Error as exc:
            raise JournalError(f"cannot write to the journal {self.path}: {exc}") from None

    def note_refusals(self, sender: str, count: int, last: str, ts: float) -> None:
        """Keep one summary of refused commands (``count`` from ``sender`` in a window, the last reason)."""
        with self._write() as db:
            db.execute("INSERT INTO refusals (ts, sender, count, last) VALUES (?, ?, ?, ?)",
                       (ts, safe_text(sender), count, safe_text(last)[:500]))

    def note_private_hand(self, seat: int, hand_id: str, reading: dict[str, Any], ts: float) -> None:
        """Keep a seat camera's reading of ``seat``'s hand ``hand_id`` (private: never an entry)."""
        with self._write() as db:
            db.execute("INSERT INTO private_hands (ts, seat, hand_id, body) VALUES (?, ?, ?, ?)",
                       (ts, seat, hand_id, json.dumps(reading, separators=(",", ":"))))

    def private_hands(self) -> dict[int, tuple[str, dict[str, Any]]]:
        """The last reading kept of each seat: seat -> (hand id, reading); a row that is no JSON object is
        skipped (a reading is a convenience after a restart, never the game)."""
        out: dict[int, tuple[str, dict[str, Any]]] = {}
        with self._lock:
            assert self._db is not None
            rows = self._db.execute("SELECT seat, hand_id, body FROM private_hands WHERE id IN "
                                    "(SELECT MAX(id) FROM private_hands GROUP BY seat)").fetchall()
        for seat, hand_id, body in rows:
            try:
                data = json.loads(body)
            except ValueError:
                continue
            if isinstance(data, dict):
                out[int(seat)] = (str(hand_id), data)
        return out

    def refusal_summaries(self) -> list[tuple[float, str, int, str]]:
        with self._lock:
            return [tuple(r) for r in self._db.execute("SELECT ts, sender, count, last FROM refusals ORDER BY rowid")]

    def transactions(self, limit: int = KEEP_TRANSACTIONS) -> list[tuple[str, str, str | None]]:
        """The latest ``limit`` command transactions as (key, digest, reply JSON), oldest first."""
        with self._lock:
            rows = self._db.execute("SELECT key, digest, reply FROM commands ORDER BY rowid DESC LIMIT ?",
                                    (limit,)).fetchall()
        return [tuple(r) for r in reversed(rows)]

    def carry_transactions(self, rows: list[tuple[str, str, str | None]]) -> None:
        """Remember the transactions of the table's earlier games (from :meth:`transactions`): a command sent
        again after the next game started is still known, not carried out in the new game. Their entries are in
        the earlier journal, so they carry no seq here; their replies are kept."""
        with self._write() as db:
            db.executemany("INSERT OR IGNORE INTO commands (key, digest, seq, reply) VALUES (?, ?, NULL, ?)", rows)

    def entries(self, after: int = 0, *, unpublished_only: bool = False) -> Iterator[Entry]:
        query = "SELECT seq, ts, source, kind, body, published FROM entries WHERE seq > ?"
        if unpublished_only:
            query += " AND published = 0"
        with self._lock:
            rows = self._db.execute(query + " ORDER BY seq", (after,)).fetchall()
        for seq, ts, source, kind, body, published in rows:
            yield Entry(seq, ts, source, kind, json.loads(body), bool(published))

    def get(self, seq: int) -> Entry | None:
        entry = next(self.entries(seq - 1), None) if seq > 0 else None
        return entry if entry is not None and entry.seq == seq else None

    def mark_published(self, seqs: list[int]) -> None:
        """Record that the broker acknowledged these entries: one SQLite transaction (one fsync) for the batch,
        all or nothing."""
        self._set_published(seqs, 1)

    def mark_unpublished(self, seqs: list[int]) -> None:
        """The broker refused these after all: send them again."""
        self._set_published(seqs, 0)

    def _set_published(self, seqs: list[int], value: int) -> None:
        if not seqs:
            return
        with self._write() as db:
            db.executemany("UPDATE entries SET published = ? WHERE seq = ?", [(value, s) for s in seqs])

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction under the lock, all or nothing (one fsync); an SQLite failure (a full disk, a
        damaged file) comes out as a :class:`JournalError` naming the file."""
        try:
            with self._lock:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                    self._db.execute("COMMIT")
                except BaseException:
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    raise
        except sqlite3.Error as exc:
            raise JournalError(f"cannot write to the journal {self.path}: {exc}") from None

    def unpublished(self) -> list[Entry]:
        return list(self.entries(unpublished_only=True))

    @property
    def last_seq(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT MAX(seq) FROM entries").fetchone()
        return int(row[0] or 0)

    def archive(self) -> Path:
        """Close and move this journal aside as ``<name>-<n>.sqlite3`` (a finished game); returns the new path."""
        self.close()
        n = 1
        while (target := self.path.with_name(f"{self.path.stem}-{n}{self.path.suffix}")).exists():
            n += 1
        self.path.rename(target)
        for extra in ("-wal", "-shm"):
            side = self.path.with_name(self.path.name + extra)
            if side.exists():
                side.rename(target.with_name(target.name + extra))
        return target

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
