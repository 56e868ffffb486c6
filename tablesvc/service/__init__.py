"""The runtime of one table: devices and camera in, engine and journal in the middle, MQTT out.

Everything here runs with the service: the worker (:mod:`.table_service`),
what it publishes (:mod:`.publisher`), the referee's commands
(:mod:`.commands`), the observations turned into events (:mod:`.fusion`),
the table's lock and start-up checks (:mod:`.lock`,
:mod:`.startup`, :mod:`.retained`), the camera's reader and snapshots
(:mod:`.camera_reader`, :mod:`.snapshots`), the clock's timer
(:mod:`.clock`), the stick watch (:mod:`.stickwatch`), command bursts and
reply routes (:mod:`.bursts`, :mod:`.reply_route`). The pure core (tiles,
rules, engine, formats), the journal and the live table folded from it
(:mod:`tablesvc.storage`) and the consumers (web, records, watch) stay outside.

:class:`TableService` is loaded on first use, so a consumer that only reads
a journal (``from tablesvc.storage.journal import Journal``) does not pull in
the broker client, the drivers and the camera.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tablesvc.service.table_service import JournalMissing, TableService

__all__ = ["JournalMissing", "TableService"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from tablesvc.service import table_service

        return getattr(table_service, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
