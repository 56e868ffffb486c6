"""The games a table kept: its journals, read back as whole games.

The service writes one journal per table (``<data_dir>/<table>.sqlite3``)
and, when the referee starts the next game after a game is over, moves it
aside as ``<table>-<n>.sqlite3`` (:meth:`tablesvc.storage.journal.Journal.archive`).
Every game a table played is therefore one file, and the game is the fold of
that file: this module finds the files and folds them, so ``tablesvc games``
and ``tablesvc replay`` read a game exactly as the service played it,
corrections included. A game's id is its file's name without ``.sqlite3``.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tablesvc.engine.events import Event, GameStart
from tablesvc.engine.results import GameResult, HandResult
from tablesvc.engine.state import GameState, Phase
from tablesvc.formats.record import RecordedGame, RecordError
from tablesvc.mqtt.payloads import result_payload
from tablesvc.storage.journal import Entry, Journal, JournalError
from tablesvc.storage.table import Table
from tablesvc.text import spreadsheet_cell

__all__ = ["ArchivedGame", "find_game", "game_csv", "game_json", "is_journal", "list_games", "load_game",
           "to_record"]

_SUFFIX = ".sqlite3"
_ARCHIVED = re.compile(r"^(?P<table>.+)-(?P<n>\d+)$")
_SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True)
class ArchivedGame:
    """One table's game as its journal holds it (finished, or still in play for the current journal)."""

    id: str
    """The archive id: the journal file's name without ``.sqlite3`` (``t1`` the current game, ``t1-3`` table
    ``t1``'s third archived one); the game's id on the feed is :func:`tablesvc.storage.ids.game_id`."""
    table: str
    path: Path
    started: float | None
    """Wall-clock time of the journal's first entry (the game start), seconds since the epoch."""
    ended: float | None
    """Time of the journal's last entry."""
    state: GameState
    events: tuple[Event, ...]
    referees: tuple[tuple[str, int], ...] = ()
    """Who ruled in the game: each referee's name (``referee`` for commands that named none) and how many journal
    entries their commands wrote, in the order they first ruled."""

    @property
    def finished(self) -> bool:
        return self.state.phase is Phase.GAME_OVER

    @property
    def players(self) -> tuple[str, str, str, str]:
        return self.state.players

    @property
    def hands(self) -> list[HandResult]:
        return list(self.state.results)

    @property
    def final(self) -> GameResult | None:
        return self.state.final if isinstance(self.state.final, GameResult) else None


def is_journal(path: str | Path) -> bool:
    """A SQLite file (a journal), told from the text records ``tablesvc replay`` reads."""
    try:
        with open(path, "rb") as f:
            return f.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False


def _table_of(stem: str, siblings: set[str]) -> str:
    """``t1-3`` is table ``t1``'s third archived game; ``t1`` its current journal. A table whose own id
    ends in ``-<number>`` is recognised by its current journal beside it."""
    m = _ARCHIVED.match(stem)
    if m is None:
        return stem
    return m["table"] if not siblings or m["table"] in siblings else stem


def load_game(path: str | Path, *, archive_id: str | None = None, table: str | None = None) -> ArchivedGame:
    """Fold one journal file into its game; :class:`JournalError` names the file when it is none."""
    p = Path(path)
    if not p.is_file():
        raise JournalError(f"{p}: no such journal")
    if not is_journal(p):
        raise JournalError(f"{p} is not a journal (a tablesvc SQLite file)")
    with Journal(p) as journal:
        entries = list(journal.entries())
        game = Table(journal)
    stem = p.name[: -len(_SUFFIX)] if p.name.endswith(_SUFFIX) else p.stem
    return ArchivedGame(
        id=archive_id or stem,
        table=table or _table_of(stem, set()),
        path=p,
        started=entries[0].ts if entries else None,
        ended=entries[-1].ts if entries else None,
        state=game.state,
        events=tuple(game.events),
        referees=_referees(entries),
    )


def _referees(entries: list[Entry]) -> tuple[tuple[str, int], ...]:
    """The referees whose commands wrote entries (source ``referee`` or ``referee:NAME``), with their counts."""
    counts: dict[str, int] = {}
    for entry in entries:
        if entry.source == "referee" or entry.source.startswith("referee:"):
            name = entry.source.partition(":")[2] or "referee"
            counts[name] = counts.get(name, 0) + 1
    return tuple(counts.items())


def _journal_files(data_dir: Path) -> list[Path]:
    return sorted(p for p in data_dir.glob(f"*{_SUFFIX}") if p.is_file())


def list_games(data_dir: str | Path) -> list[ArchivedGame]:
    """Every game in a data directory, oldest first. A file that does not fold is skipped and logged."""
    import logging

    d = Path(data_dir)
    if not d.is_dir():
        raise JournalError(f"{d}: no such data directory (the [table] data_dir of the table's configuration)")
    files = _journal_files(d)
    stems = {p.name[: -len(_SUFFIX)] for p in files}
    games = []
    for p in files:
        stem = p.name[: -len(_SUFFIX)]
        try:
            game = load_game(p, archive_id=stem, table=_table_of(stem, stems))
        except JournalError as exc:
            logging.getLogger(__name__).warning("skipped: %s", exc)
            continue
        if game.started is not None:  # an empty journal: a table switched on, no game yet
            games.append(game)
    return sorted(games, key=lambda g: (g.started or 0.0, g.id))


def find_game(data_dir: str | Path, archive_id: str) -> ArchivedGame:
    """The game ``archive_id`` (a file name without ``.sqlite3``) of a data directory."""
    d = Path(data_dir)
    if any(c in archive_id for c in "/\\\0") or archive_id in (".", ".."):
        raise JournalError(f"game id {archive_id!r} cannot name a file")
    path = d / f"{archive_id}{_SUFFIX}"
    if not path.is_file():
        known = ", ".join(p.name[: -len(_SUFFIX)] for p in _journal_files(d)) if d.is_dir() else ""
        raise JournalError(f"no game {archive_id!r} in {d}" + (f" (games: {known})" if known else ""))
    stems = {p.name[: -len(_SUFFIX)] for p in _journal_files(d)}
    return load_game(path, archive_id=archive_id, table=_table_of(archive_id, stems))


def to_record(game: ArchivedGame) -> RecordedGame:
    """The game as the importers hand one to ``replay`` and the exporters (events as corrected)."""
    if not game.events or not isinstance(game.events[0], GameStart):
        raise RecordError(f"{game.path}: the journal holds no game")
    start = game.events[0]
    return RecordedGame(source=str(game.path), events=list(game.events), players=start.players, rules=start.rules)


def iso(ts: float | None) -> str | None:
    """One timestamp format for people and files: ISO 8601 in UTC, to the second."""
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds") if ts is not None else None


def game_json(game: ArchivedGame) -> dict[str, Any]:
    """Names, rules, every hand's result and the final ranking with uma; results as the ``results`` topic
    writes them, with the players' names beside their seats."""
    names = game.players
    hands = []
    for number, hand in enumerate(game.hands):
        payload = result_payload(hand, 0, names)
        payload.pop("seq", None)
        payload.pop("schema", None)
        payload["number"] = number
        payload["summary"] = hand.describe(names)
        hands.append(payload)
    final = None
    if game.final is not None:
        final = result_payload(game.final, 0, names)
        final.pop("seq", None)
        final.pop("schema", None)
        for row in final["ranking"]:
            row["name"] = names[row["seat"]]
    return {
        "id": game.id,
        "table": game.table,
        "started": iso(game.started),
        "ended": iso(game.ended),
        "finished": game.finished,
        "rules": game.state.rules,
        "players": list(names),
        "hands": hands,
        "final": final,
    }


def game_csv(game: ArchivedGame) -> str:
    """One row per hand (each player's delta and score after it), then one ``final`` row (each player's
    final points, and in the delta columns the result with uma), then one ``place`` row; every cell passes
    :func:`spreadsheet_cell`."""
    names = game.players
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")

    def put(row: list[Any]) -> None:
        writer.writerow([spreadsheet_cell(v) for v in row])

    put(["row", "hand", "result", "summary", *names, *(f"{n} score" for n in names)])
    for number, hand in enumerate(game.hands):
        put([number + 1, f"{hand.round_name}-{hand.honba}", hand.kind, hand.describe(names),
             *hand.deltas, *hand.scores])
    if game.final is not None:
        by_seat = {s.seat: s for s in game.final.standings}
        ranking = "; ".join(f"{s.place}. {names[s.seat]}" for s in game.final.standings)
        put(["final", "", "game_result", ranking, *(by_seat[i].result for i in range(4)),
             *game.final.scores])
        put(["place", "", "", "", *(by_seat[i].place for i in range(4)), "", "", "", ""])
    return out.getvalue()
