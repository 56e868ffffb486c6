"""Opening a table's journal at start, and refusing to start over a damaged or lost one.

The journal is the truth of a game; the service must never quietly replace
it. :func:`open_journal` opens and folds it (a damaged one raises
:class:`~tablesvc.storage.journal.JournalDamaged`; with the operator's
``--new-game`` it is kept beside and a new journal begins).
:func:`check_broker` covers the journal that is missing or empty: a new
table, or a lost journal. The broker tells the two apart, since it retains
the last ``state`` the service published, with its ``seq``; it is read
before the service connects for real, because the service's first act on
connecting is to publish its own (empty) state over it.
"""

from __future__ import annotations

import logging
import threading

from tablesvc.config import Config, TableConfig
from tablesvc.storage.journal import Journal, JournalDamaged, JournalError
from tablesvc.storage.table import Table

__all__ = ["BrokerNotAsked", "JournalMissing", "check_broker", "open_journal"]

log = logging.getLogger(__name__)


class JournalMissing(JournalError):
    """The journal is missing or empty while the broker still shows a game of this table (or cannot be asked)."""


class BrokerNotAsked(JournalMissing):
    """The journal is empty and the broker could not be asked whether it still shows a game: a service whose
    job is to run (``tablesvc run``) asks again until it can; anything else gives up."""


def open_journal(table: TableConfig, *, new_game: bool = False) -> tuple[Journal, Table]:
    """The table's journal, checked (integrity, owner) and folded into its game."""
    try:
        journal = Journal.for_table(table.data_dir, table.id, sync=table.journal_sync, site=table.site)
        try:
            return journal, Table(journal)
        except BaseException:
            journal.close()
            raise
    except JournalDamaged:
        if not new_game:
            raise
    aside = Journal.set_aside(Journal.path_for(table.data_dir, table.id), "damaged")
    log.warning("--new-game: the damaged journal was kept as %s; a new game starts", aside)
    journal = Journal.for_table(table.data_dir, table.id, sync=table.journal_sync, site=table.site)
    return journal, Table(journal)


def check_broker(config: Config, journal: Journal, *, client_id: str, timeout: float = 10.0,
                 stop: threading.Event | None = None) -> None:
    """Raise :class:`JournalMissing` when ``journal`` is empty but the broker still retains this table's game
    (:class:`BrokerNotAsked` when it cannot be asked within ``timeout`` seconds, or once ``stop`` is set)."""
    if journal.last_seq > 0:
        return
    from tablesvc.service.retained import BrokerUnreachable, retained_seq

    mqtt = config.mqtt
    where = f"{config.table.site}/{config.table.id}"
    try:
        held = retained_seq(mqtt.url, config.topics, client_id=client_id, protocol=mqtt.protocol,
                            ca_file=mqtt.ca_file, timeout=timeout, stop=stop)
    except BrokerUnreachable as exc:
        raise BrokerNotAsked(
            f"the journal {journal.path} is empty{' (new)' if journal.fresh else ''}, and the broker could not be "
            f"asked whether it still shows a game of table {where} ({exc}). Start again when the broker is up, or "
            "with --new-game if this table has no game to keep") from None
    if held:
        raise JournalMissing(
            f"the journal {journal.path} is {'missing or empty' if journal.fresh else 'empty'}, but the broker "
            f"still shows a game of table {where} at seq {held}: the journal was lost or data_dir is wrong. "
            "Restore the journal (or fix data_dir); to give that game up and start a new one, run with --new-game")
