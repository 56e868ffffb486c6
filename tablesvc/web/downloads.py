"""A table's game as a file players' tools open (mjai, tenhou.net/6), rebuilt from the feed.

The web server saw every journal entry on ``events`` (gap-free ``seq``); it
resolves the corrections (undo, amend) as the table folds its journal, plays
the events through the engine (:func:`tablesvc.replay.replay`) and writes them
with the project's own exporters. A server that joined in the middle of a game
lacks the start: it says so instead of writing half a game.
"""

from __future__ import annotations

from typing import Any, Protocol

from tablesvc.engine.events import EventFormatError, GameStart, from_dict
from tablesvc.formats.record import RecordedGame, RecordError
from tablesvc.replay import Mismatch, replay

__all__ = ["DownloadError", "Feed", "availability", "export_game"]

FORMATS = {"mjai": ("application/x-ndjson", "mjai.jsonl"), "tenhou6": ("application/json", "tenhou6.json")}
ONLY_MJAI = "only mjai is available for this game"
REFEREE_EVENTS = ("chombo", "dead_hand", "set_scores", "end_game")  # tenhou.net/6 has no place for them


class DownloadError(ValueError):
    """The game cannot be written; the message says why and what to do instead."""


class Feed(Protocol):
    """What a game is written from: the web server's copy of a table's feed
    (:class:`tablesvc.web.feed_store.TableFeed`), which asks this module what it can be downloaded as."""

    site: str
    table: str
    entries: dict[int, dict[str, Any]]  # journal seq -> events payload

    def effective_events(self) -> list[tuple[int, dict[str, Any]]] | None: ...


def _not_from_start(feed: Feed) -> str:
    seen = f" (it has events {min(feed.entries)}..{max(feed.entries)})" if feed.entries else ""
    return (f"the web server has not seen this game from its start{seen}; export it from the table's journal "
            "with 'tablesvc replay --export'")


def tenhou6_refusal(effective: list[tuple[int, dict[str, Any]]]) -> str | None:
    """Why the game cannot be written as tenhou.net/6, read from its events without replaying them (cheap
    enough for every state pushed to the pages); None where nothing stands in the way."""
    for seq, body in effective:
        kind = body.get("type")
        if kind == "hand_start" and not body.get("hands"):
            return ("tenhou.net/6 writes every player's tiles from the deal on, and the deal was not seen (a live "
                    f"table shows no concealed tiles): {ONLY_MJAI}, which writes what was seen")
        if kind in REFEREE_EVENTS:
            return (f"tenhou.net/6 has no place for a referee's {kind.replace('_', ' ')} (journal entry {seq}): "
                    f"{ONLY_MJAI}")
    return None


def availability(feed: Feed, effective: list[tuple[int, dict[str, Any]]] | None = None) -> dict[str, str | None]:
    """For each format, None where the game can be downloaded, else why not (the table page greys the link and
    gives the reason as its title). ``effective``: :meth:`Feed.effective_events`, where already known."""
    if effective is None:
        effective = feed.effective_events()
    if not effective:
        reason = _not_from_start(feed)
        return {"mjai": reason, "tenhou6": reason}
    return {"mjai": None, "tenhou6": tenhou6_refusal(effective)}


def export_game(feed: Feed, fmt: str) -> tuple[str, str, str]:
    """(text, media type, file suffix) of the table's current game in ``fmt`` (``mjai`` or ``tenhou6``)."""
    if fmt not in FORMATS:
        raise DownloadError(f"unknown format {fmt!r}: mjai or tenhou6")
    effective = feed.effective_events()
    if not effective:
        raise DownloadError(_not_from_start(feed))
    if fmt == "tenhou6" and (reason := tenhou6_refusal(effective)) is not None:
        raise DownloadError(reason)
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
        hint = (f" (a live table shows no concealed tiles: {ONLY_MJAI}, which writes what was seen)"
                if fmt == "tenhou6" else "")
        raise DownloadError(f"the game cannot be written as {fmt}: {exc}{hint}") from None
    media, suffix = FORMATS[fmt]
    return text, media, suffix
