"""A full-information record followed event by event: the hands after each, and each event as a table shows it.

A recorded game (or the simulator's generated one) knows every hand; a live
table's feed does not. :class:`RecordHands` plays the record through its own
engine and, for each event, gives the event as the table would publish it
(no deal, draws without their tile, the winning tile named where the draw
was not seen) and every seat's hand after it (:class:`HandsSeen`), the one
interface by which a table service takes hands from a full-information
source (:meth:`tablesvc.service.table_service.TableService.hands`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tablesvc.engine.engine import Engine
from tablesvc.engine.events import Draw, Event, HandStart, Tsumo
from tablesvc.engine.results import Output
from tablesvc.tiles import Tile

__all__ = ["HandsSeen", "RecordHands", "public_event"]


@dataclass(frozen=True)
class HandsSeen:
    """What a full-information source sees: each seat's concealed tiles (drawn tile included) and the drawn
    tile, seat 0 first; None for a seat it cannot see."""

    hands: tuple[tuple[Tile, ...] | None, ...]
    drawn: tuple[Tile | None, ...] = (None, None, None, None)


def public_event(event: Event, drawn: Tile | None = None) -> Event:
    """``event`` as a table without hand cameras reports it: the deal unseen, draws without their tile, a
    tsumo naming its winning tile (``drawn``, the tile the winner drew)."""
    if isinstance(event, HandStart) and event.hands is not None:
        return replace(event, hands=None)
    if isinstance(event, Draw) and event.tile is not None:
        return replace(event, tile=None)
    if isinstance(event, Tsumo) and event.win_tile is None:
        return replace(event, win_tile=drawn)
    return event


class RecordHands:
    """Follows a record's events with their hands (raises the engine's ``Rejected`` on an illegal one)."""

    def __init__(self) -> None:
        self.engine = Engine()

    def step(self, event: Event) -> tuple[Event, HandsSeen | None, list[Output]]:
        """The event as a table shows it, every hand after it (None outside a hand), the engine's outputs."""
        h = self.engine.state.hand
        drawn = h.seats[event.seat].drawn if h is not None and isinstance(event, Tsumo) else None
        outputs = self.engine.apply(event)
        return public_event(event, drawn), self.seen(), outputs

    def seen(self) -> HandsSeen | None:
        h = self.engine.state.hand
        if h is None:
            return None
        return HandsSeen(hands=tuple(tuple(s.hand) if s.hand is not None else None for s in h.seats),
                         drawn=tuple(s.drawn for s in h.seats))
