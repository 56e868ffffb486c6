"""The club's games as CSV, one row per player per game, for a spreadsheet or a club's ranking site."""

from __future__ import annotations

import csv
import io

from tablesvc.records.records_db import StoredGame
from tablesvc.text import spreadsheet_cell

__all__ = ["COLUMNS", "games_csv"]

COLUMNS = ("started", "site", "table", "game", "rules", "seat", "player", "typed_as", "place", "points", "uma",
           "result", "penalty", "chombo")


def _chombos(g: StoredGame, seat: int) -> int:
    """How many chombos the seat was ruled in the game (from its hands as the feed published them)."""
    return sum(1 for h in g.hands if h.get("result") == "chombo" and h.get("chombo") == seat)


def games_csv(games: list[StoredGame]) -> str:
    """Finished games (``player`` after merging spellings, ``typed_as`` as typed at the table); seat 0 is the
    first East; ``result`` is the game's score with uma (points - return points + oka + uma - penalty);
    ``penalty`` the table's own penalties taken off it (chombo, dead hands) and ``chombo`` how many chombos."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    for g in games:
        if not g.finished:
            continue
        for s in g.seats:
            w.writerow([spreadsheet_cell(v) for v in (g.started, g.site, g.table, g.game, g.rules, s.seat, s.name,
                                                      s.typed, s.place, s.points, s.uma, s.result,
                                                      s.penalty or 0, _chombos(g, s.seat))])
    return out.getvalue()
