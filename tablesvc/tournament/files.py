"""The organiser's files: the players' CSV, and a seating prescribed in a CSV.

Both are read whole and checked before anything is stored, and every refusal
names the line (the header is line 1) and the player, so the organiser can
fix the spreadsheet and import again. Headers are matched loosely (``EMA id``,
``ema_id``, ``EMA number`` ...), as spreadsheets spell them.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from tablesvc.tournament.model import Player, Seating, TournamentError
from tablesvc.tournament.tournament_db import NewPlayer

__all__ = ["read_players_csv", "read_seating_csv", "read_tables"]

_COLUMNS = {
    "name": "name", "player": "name", "full name": "name",
    "first name": "first", "firstname": "first", "given name": "first",
    "last name": "last", "lastname": "last", "surname": "last", "family name": "last",
    "ema id": "ema", "ema": "ema", "ema number": "ema", "ema no": "ema", "ema #": "ema", "emaid": "ema",
    "club": "club", "team": "club",
    "country": "country", "nationality": "country", "nation": "country",
}


def _key(header: str) -> str | None:
    return _COLUMNS.get(" ".join(header.strip().lower().replace("_", " ").replace("-", " ").split()))


def _rows(text: str, what: str) -> tuple[list[str | None], list[tuple[int, list[str]]]]:
    if text.startswith("\ufeff"):  # a spreadsheet's byte order mark
        text = text[1:]
    sample = text[:4096]
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(sample, delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.reader(io.StringIO(text), dialect)
    try:
        rows = [(reader.line_num, row) for row in reader]
    except csv.Error as exc:
        raise TournamentError(f"{what}, line {reader.line_num}: {exc}") from None
    rows = [(n, r) for n, r in rows if any(c.strip() for c in r)]
    if not rows:
        raise TournamentError(f"{what} is empty")
    return [_key(h) for h in rows[0][1]], rows[1:]


def read_players_csv(text: str, source: str = "the players' file") -> list[NewPlayer]:
    """Players from a CSV with a header: name (or first and last name), EMA id, club, country. A duplicate EMA
    id or name is refused naming both lines."""
    keys, rows = _rows(text, source)
    if "name" not in keys and not ("first" in keys and "last" in keys):
        raise TournamentError(f"{source}, line 1: no name column (name, or first name and last name); the header "
                              "names the columns: name, EMA id, club, country")
    out: list[NewPlayer] = []
    emas: dict[str, int] = {}
    names: dict[str, int] = {}
    for line, row in rows:
        values: dict[str, str] = {}
        for k, v in zip(keys, row, strict=False):
            if k and v.strip():
                values[k] = v.strip()
        name = values.get("name") or " ".join(x for x in (values.get("first"), values.get("last")) if x)
        where = f"{source}, line {line}"
        runaway = next((v for v in values.values() if "\n" in v or "\r" in v), None)
        if runaway is not None:
            raise TournamentError(f"{where}: a quote is not closed ({runaway.splitlines()[0][:40]!r}... runs over "
                                  f"{len(runaway.splitlines())} lines): close it or remove it")
        if not name:
            raise TournamentError(f"{where}: no name")
        ema = values.get("ema")
        if ema and ema in emas:
            raise TournamentError(f"{where} ({name}): EMA id {ema} is on line {emas[ema]} already")
        if name.casefold() in names:
            raise TournamentError(f"{where}: {name} is on line {names[name.casefold()]} already")
        if ema:
            emas[ema] = line
        names[name.casefold()] = line
        out.append(NewPlayer(name, ema, values.get("club"), values.get("country"), row=where,
                             first_name=values.get("first"), last_name=values.get("last")))
    return out


def read_tables(specs: Sequence[str]) -> list[tuple[str, str]]:
    """``SITE/TABLE`` each, in hall order."""
    out = []
    for i, spec in enumerate(specs, 1):
        site, sep, table = spec.strip().partition("/")
        if not sep or not site or not table:
            raise TournamentError(f"table {i}: {spec!r} is not SITE/TABLE (e.g. hall/t1)")
        out.append((site, table))
    return out


def read_seating_csv(text: str, players: Sequence[Player], source: str = "the seating file") -> dict[int, Seating]:
    """A prescribed seating: a header, then one line per table: round, table, east, south, west, north, each
    player by number, name or EMA id. Refused naming the line: a player unknown, one seated twice in a round,
    a table given twice or missing."""
    from tablesvc.tournament.tournament_db import _find_player

    _keys, rows = _rows(text, source)
    by_round: dict[int, dict[int, tuple[int, int, int, int]]] = {}
    seen: dict[tuple[int, int], int] = {}
    for line, row in rows:
        where = f"{source}, line {line}"
        cells = [c.strip() for c in row]
        if len(cells) < 6:
            raise TournamentError(f"{where}: {len(cells)} columns; a line is round, table, east, south, west, north")
        try:
            rnd, table = int(cells[0]), int(cells[1])
        except ValueError:
            raise TournamentError(f"{where}: round and table are numbers, not {cells[0]!r}, {cells[1]!r}") from None
        if rnd < 1 or table < 1:
            raise TournamentError(f"{where}: rounds and tables are numbered from 1")
        four = []
        for cell in cells[2:6]:
            try:
                p = _find_player(players, cell)
            except TournamentError as exc:
                raise TournamentError(f"{where}: {exc}") from None
            if (rnd, p.number) in seen:
                raise TournamentError(f"{where}: {p.name} is seated twice in round {rnd} (line "
                                      f"{seen[(rnd, p.number)]} too)")
            seen[(rnd, p.number)] = line
            four.append(p.number)
        tables = by_round.setdefault(rnd, {})
        if table in tables:
            raise TournamentError(f"{where}: round {rnd} has a table {table} already")
        tables[table] = (four[0], four[1], four[2], four[3])
    out = {}
    for rnd, tables in sorted(by_round.items()):
        missing = [t for t in range(1, max(tables) + 1) if t not in tables]
        if missing:
            raise TournamentError(f"{source}: round {rnd} has no table {missing[0]}")
        out[rnd] = Seating(tuple(tables[t] for t in sorted(tables)))
    return out
