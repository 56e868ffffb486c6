"""A table's game as a file players' tools open (mjai, tenhou.net/6), rebuilt from the feed.

The web server saw every journal entry on ``events`` (gap-free ``seq``); it
resolves the corrections (undo, amend) as the table folds its journal, plays
the events through the engine (:func:`tablesvc.replay.replay`) and writes them
with the project's own exporters. A server that joined in the middle of a game
lacks the start: it says so instead of writing half a game.
"""

from __future__ import annotations

from tablesvc.engine.events import EventFormatError, GameStart, from_dict
from tablesvc.formats.record import RecordedGame, RecordError
from tablesvc.replay import Mismatch, replay
from tablesvc.web.store import TableFeed

__all__ = ["DownloadError", "export_game"]

FORMATS = {"mjai": ("application/x-ndjson", "mjai.jsonl"), "tenhou6": ("application/json", "tenhou6.json")}


class DownloadError(ValueError):
    """The game cannot be written; the message says why and what to do instead."""


def export_game(feed: TableFeed, fmt: str) -> tuple[str, str, str]:
    """(text, media type, file suffix) of the table's current game in ``fmt`` (``mjai`` or ``tenhou6``)."""
    if fmt not in FORMATS:
        raise DownloadError(f"unknown format {fmt!r}: mjai or tenhou6")
    effective = feed.effective_events()
    if not effective:
        seen = f" (it has events {min(feed.entries)}..{max(feed.entries)})" if feed.entries else ""
        raise DownloadError(f"the web server has not seen this game from its start{seen}; export it from the "
                            "table's journal with 'tablesvc replay --export'")
    try:
        events = [from_dict(body) for _, body in effective]
    except (EventFormatError, KeyError, TypeError, ValueError) as exc:
        raise DownloadError(f"an event of the game cannot be read: {exc}") from None
    start = next((e for e in events if isinstance(e, GameStart)), None)
    players = tuple(start.players) if start is not None and start.players else ("East", "South", "West", "North")
    record = RecordedGame(source=f"{feed.site}/{feed.table}", events=events, players=players,  # type: ignore[arg-type]
                          rules=start.rules if start is not None else None)
    try:
        report = replay(record)
        if fmt == "mjai":
            from tablesvc.formats.mjai import export_mjai

            text = export_mjai(record, report)
        else:
            from tablesvc.formats.tenhou6 import export_tenhou6

            text = export_tenhou6(record, report)
    except (Mismatch, RecordError, ValueError) as exc:
        hint = " (a live table shows no concealed tiles; mjai writes what was seen)" if fmt == "tenhou6" else ""
        raise DownloadError(f"the game cannot be written as {fmt}: {exc}{hint}") from None
    media, suffix = FORMATS[fmt]
    return text, media, suffix
