"""The club's standings for the web server: the records database that ``tablesvc records`` writes, read only.

The web server only reads (the collector writes); the store is opened on the
first request, not at start, so a database that is down or not yet created
never keeps the live pages from starting; it is tried again on the next
request. Reads block (SQLAlchemy), so the app calls :meth:`StandingsReader.read`
on a worker thread.
"""

from __future__ import annotations

import threading
from typing import Any

from tablesvc.records.standings import parse_since

__all__ = ["StandingsReader"]


class StandingsReader:
    """Opens the records database once and reads the standings from it (thread-safe)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._store: Any = None
        self._lock = threading.Lock()

    @staticmethod
    def since(text: str | None) -> str | None:
        """``?since=``: None, or the UTC start time the store compares with (ValueError: not a date)."""
        return parse_since(text) if text else None

    def _opened(self) -> Any:
        with self._lock:
            if self._store is None:
                try:
                    from tablesvc.records.records_db import RecordsStore
                except ImportError as exc:  # SQLAlchemy or psycopg missing
                    raise RuntimeError(f"{exc}: install the records extra (pip install 'tablesvc[records]')") from None
                self._store = RecordsStore(self.url)
            return self._store

    def read(self, since: str | None) -> dict[str, Any]:
        """The standings and their games as JSON-ready data (RuntimeError: the database cannot be read)."""
        from tablesvc.records.standings import club_standings

        data = club_standings(self._opened(), since=since).to_dict()
        data["since"] = since
        return data

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None
