"""``tablesvc demo --broadcast``: the broadcast scenes of the demo's table, behind a key made up for the run.

The demo's table knows every hand (the simulator's, given to the service as
seat cameras would: :mod:`hardware_sims.hands`) and publishes them on
``broadcast/hands``; with ``--broadcast`` its web server also serves the
broadcast scenes, and the demo prints their addresses.
"""

from __future__ import annotations

import argparse
import secrets
from typing import Any

__all__ = ["add_options", "broadcast_key", "print_scenes"]

def add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--broadcast", action="store_true",
                   help="the web server also serves the broadcast scenes for OBS (every hand with its waits, tiles "
                   "left and shanten, one seat, cards, intro, statistics) behind a key made up for the run, and "
                   "their addresses are printed (the demo's table publishes every hand on broadcast/hands: the "
                   "simulator knows them, as seat cameras would)")


def broadcast_key(args: argparse.Namespace) -> str | None:
    """The scenes' key for this run (None without ``--broadcast``)."""
    return secrets.token_urlsafe(18) if getattr(args, "broadcast", False) else None


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
