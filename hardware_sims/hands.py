"""The simulator's hands for the service's broadcast: the generated game knows every hand, as seat cameras would.

:func:`hands_feeder` follows the record the table simulator plays and, after
each event the table has shown, gives every seat's hand to the service's
full-information interface (:meth:`tablesvc.service.table_service.TableService.hands`).
"""

from __future__ import annotations

from collections.abc import Callable

from tablesvc.analysis.follow import HandsSeen, RecordHands
from tablesvc.engine.events import Event

__all__ = ["hands_feeder"]


def hands_feeder(give: Callable[[HandsSeen], None], then: Callable[[Event], None] | None = None
                 ) -> Callable[[Event], None]:
    """An ``after_event`` for :class:`~hardware_sims.table.TableSimulator`: the hands after each event go to
    ``give``; ``then`` (another ``after_event``, such as the stick players) is called first."""
    follower = RecordHands()

    def after(event: Event) -> None:
        if then is not None:
            then(event)
        _, seen, _ = follower.step(event)
        if seen is not None:
            give(seen)

    return after
