"""A recorded game played onto the feed as a live table publishes it, its hands on ``broadcast/hands``.

``tablesvc replay GAME --feed --broker mqtt://...``: a real table service
(journal, engine, publisher, the broadcast and its delay) is started for a
table of its own (``--site``, ``--table``) and given the record's events as
a table without hand cameras reports them (no deal, draws without their
tile), while the record's hands go in beside them through the service's
full-information interface (:class:`~tablesvc.analysis.follow.HandsSeen`).
Overlays, scenes and dashboards see exactly what a live table would send,
paced like a real game (``--speed 1``) or faster, so a streamer can rehearse
the overlay with real games.
"""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from tablesvc.analysis.follow import RecordHands
from tablesvc.config import Config, parse_config
from tablesvc.engine.events import (
    AbortiveDraw,
    AddedKan,
    Call,
    ConcealedKan,
    DiceRolled,
    Discard,
    Event,
    ExhaustiveDraw,
    Ron,
    Tsumo,
)
from tablesvc.formats.record import RecordedGame

__all__ = ["PACE", "feed_config", "play_onto_feed"]

#: Seconds each kind of move takes at a real table (``--speed 1``); other events come at once.
PACE: dict[type, float] = {DiceRolled: 4.0, Discard: 1.2, Call: 1.5, AddedKan: 1.5, ConcealedKan: 1.5,
                           Ron: 5.0, Tsumo: 5.0, ExhaustiveDraw: 5.0, AbortiveDraw: 5.0}


def feed_config(broker: str, *, site: str, table: str, data_dir: Path, delay_s: float = 0.0,
                prefix: str = "tablesvc") -> Config:
    """A table's configuration for a replay: its own journal directory, the broker, the delay."""
    text = (f"[table]\nsite = {json.dumps(site)}\nid = {json.dumps(table)}\ndata_dir = {json.dumps(str(data_dir))}\n"
            f'journal_sync = "normal"\n[mqtt]\nurl = {json.dumps(broker)}\nprefix = {json.dumps(prefix)}\n'
            f"[broadcast]\ndelay_s = {float(delay_s)}\n")
    return parse_config(text, "<replay --feed>")


def play_onto_feed(record: RecordedGame, config: Config, *, speed: float = 1.0, stop: threading.Event | None = None,
                   on_event: Callable[[int, Event], None] | None = None, connect_timeout: float = 15.0) -> int:
    """Play ``record`` through a table service publishing to ``config``'s broker; returns the events played.
    ``speed``: 1 real time, 10 ten times faster, 0 as fast as it goes. Raises ``RuntimeError`` when the broker
    cannot be reached."""
    from tablesvc.service import TableService

    stop = stop or threading.Event()
    service = TableService(config, new_game=True)
    played = 0
    try:
        service.start()
        if not service.link.wait_connected(connect_timeout):
            raise RuntimeError(f"cannot reach the broker: {service.link.failure or 'no answer'}")
        follower = RecordHands()
        for event in record.events:
            if stop.is_set():
                break
            pause = PACE.get(type(event), 0.0)
            if speed > 0 and pause and stop.wait(pause / speed):
                break
            public, seen, _ = follower.step(event)
            service.submit(public, "replay")
            if seen is not None:
                service.hands(seen)
            played += 1
            if on_event is not None:
                on_event(played, public)
        service.wait_idle(30.0)
        deadline = max(0.0, config.broadcast_delay) + 5.0
        service.broadcast_drained(deadline, stop)  # what the delay holds back goes out before the table stops
    finally:
        service.stop()
    return played


def temporary_data_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="tablesvc-replay-feed-"))
