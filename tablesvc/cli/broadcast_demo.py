"""``tablesvc demo --broadcast``: the demo's table with every hand known, and the broadcast scenes to watch it.

The simulator plays a full-information record (a generated game, or a
recorded one with ``--game``); beside the table devices, a follower plays
the same record and gives the table service every seat's hand after each
event (:meth:`TableService.hands <tablesvc.service.table_service.TableService.hands>`),
as seat cameras would. The service then publishes ``broadcast/hands``, and
the demo's web server serves the broadcast scenes behind a key made up for
the run, whose addresses the demo prints.
"""

from __future__ import annotations

import argparse
import logging
import secrets
from collections.abc import Callable
from typing import Any

__all__ = ["HandsFollower", "add_options", "after_event", "broadcast_key", "print_scenes"]

log = logging.getLogger(__name__)


def add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--broadcast", action="store_true",
                   help="every hand known (the simulator's, as seat cameras would see them): the table publishes "
                   "broadcast/hands with each seat's waits, tiles left and shanten, and the web server serves the "
                   "broadcast scenes for OBS (hands, one seat, cards, intro, statistics) behind a key made up for "
                   "the run; their addresses are printed")


def broadcast_key(args: argparse.Namespace) -> str | None:
    """The scenes' key for this run (None without ``--broadcast``)."""
    return secrets.token_urlsafe(18) if getattr(args, "broadcast", False) else None


class HandsFollower:
    """Plays the record beside the table and hands every seat's hand to the service after each event."""

    def __init__(self, give: Callable[[Any], None]) -> None:
        from tablesvc.analysis.follow import RecordHands

        self.follow = RecordHands()
        self.give = give
        self.broken = False

    def __call__(self, event: Any) -> None:
        if self.broken:
            return
        from tablesvc.engine.engine import Rejected

        try:
            _, seen, _ = self.follow.step(event)
        except Rejected as exc:  # a record the engine refuses: the table says so; the hands stop here
            log.warning("broadcast: the record's hands cannot be followed past %s: %s", type(event).__name__, exc)
            self.broken = True
            return
        if seen is not None:
            self.give(seen)


def after_event(args: argparse.Namespace, service: Any,
                then: Callable[[Any], None] | None) -> Callable[[Any], None] | None:
    """The simulator's ``after_event``: ``then`` (the stick tray's players), and with ``--broadcast`` the hands
    to the service."""
    if not getattr(args, "broadcast", False):
        return then
    follower = HandsFollower(service.hands)

    def both(event: Any) -> None:
        follower(event)
        if then is not None:
            then(event)

    return both


def print_scenes(web: Any, site: str, table: str) -> None:
    """The scenes' addresses (with ``--broadcast`` and a web server)."""
    key = web.settings.broadcast_key if web is not None else None
    if not key:
        return
    from tablesvc.web.broadcast import scene_addresses

    scenes = scene_addresses(web.url, site, table, key)
    print("  broadcast scenes (OBS browser sources, 1920x1080 or 1280x720; the key is made up for this run):",
          flush=True)
    for name, url in scenes.items():
        print(f"    {name + ':':7} {url}", flush=True)
