"""One service per table: an exclusive lock on the table's lock file in its data directory.

Two services on one table fight over the broker (same client id) and over
the journal, and one of them works from stale state. So the service takes
``<data_dir>/<table>.lock`` with ``fcntl.flock`` before it opens the
journal, and writes who holds it (PID, host, start time) into the file. The
kernel releases the lock when the process ends, however it ends (a crash, a
SIGKILL, a power cut), so a stale lock never needs cleaning up by hand; the
file itself stays and is simply taken by the next service.

A lock file can be deleted while its service runs (a clean-up script, a
careless hand); a second service would then lock a new file of the same name
and start. So the service also binds an abstract Unix socket named after the
lock file's path (Linux; the kernel frees it with the process, like the
flock, and no file can delete it): a second service finds the name taken and
refuses, naming the holder's PID (the socket's peer credentials).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import socket
import struct
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
        self._socket: socket.socket | None = None

    def acquire(self) -> None:
        """Take the lock or raise :class:`TableLocked` naming the holder; ``OSError`` if the directory is unusable."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._take_file()  # a holder whose file is still there is named from it
        try:
            self._socket = self._bind()
        except BaseException:
            self.release()
            raise

    @property
    def socket_name(self) -> bytes:
        """The abstract socket's name: the lock file's absolute path, hashed to fit (and to stay one name)."""
        digest = hashlib.sha256(str(self.path.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:40]
        return b"\0tablesvc-lock-" + digest.encode()

    def _bind(self) -> socket.socket | None:
        """Bind the table's abstract socket; :class:`TableLocked` when another process holds it. None where the
        system has no abstract sockets (the file lock alone then)."""
        if not hasattr(socket, "AF_UNIX"):
            return None
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(self.socket_name)
            sock.listen(1)
        except OSError as exc:
            sock.close()
            if exc.errno == errno.EADDRINUSE:
                raise TableLocked(f"another tablesvc already serves this table: {self._socket_holder()} (lock "
                                  f"{self.path}, whose file was deleted while it ran). Stop it first; two services "
                                  "on one table fight over the broker and the journal") from None
            return None  # no abstract namespace here (not Linux)
        return sock

    def _socket_holder(self) -> str:
        """The process that holds the table's socket, in words (its PID from the peer credentials)."""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                probe.settimeout(1.0)
                probe.connect(self.socket_name)
                pid, _uid, _gid = struct.unpack("3i", probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                                       struct.calcsize("3i")))
            return f"PID {pid} on {socket.gethostname()}"
        except (OSError, AttributeError, struct.error):
            return "a process on this host"

    def _close_socket(self) -> None:
        if getattr(self, "_socket", None) is not None:
            self._socket.close()
        self._socket = None

    def _take_file(self) -> None:
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
        self._close_socket()
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
