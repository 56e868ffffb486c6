"""One service per table: an exclusive lock on the table's lock file in its data directory.

Two services on one table fight over the broker (same client id) and over
the journal, and one of them works from stale state. So the service takes
``<data_dir>/<table>.lock`` with ``fcntl.flock`` before it opens the
journal, and writes who holds it (PID, host, start time) into the file. The
kernel releases the lock when the process ends, however it ends (a crash, a
SIGKILL, a power cut), so a stale lock never needs cleaning up by hand; the
file itself stays and is simply taken by the next service.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
from datetime import UTC, datetime
from pathlib import Path

__all__ = ["TableLock", "TableLocked"]


class TableLocked(RuntimeError):
    """Another service holds this table; the message names it (PID, host, since)."""


class TableLock:
    """Held from :meth:`acquire` until :meth:`release` or the end of the process."""

    def __init__(self, data_dir: str | Path, table: str) -> None:
        self.path = Path(data_dir) / f"{table}.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise :class:`TableLocked` naming the holder; ``OSError`` if the directory is unusable."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(fd)
            os.close(fd)
            raise TableLocked(f"another tablesvc already serves this table: {holder} (lock {self.path}). "
                              "Stop it first; two services on one table fight over the broker and the "
                              "journal") from None
        except OSError:
            os.close(fd)
            raise
        me = {"pid": os.getpid(), "host": socket.gethostname(),
              "started": datetime.now(UTC).isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode() + b"\n", 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        os.close(self._fd)  # closing the last descriptor releases the flock
        self._fd = None

    def __enter__(self) -> TableLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read(fd: int) -> str:
    """The holder as written in the lock file, in words."""
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"{}")
        return f"PID {data['pid']} on {data['host']}, started {data['started']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that has not yet written its name"
