"""Games a table kept before a collector listened (or while it could not), brought into the records.

A table's journals (``tablesvc games``) hold every game it played. Each
finished one is written exactly as the collector would have written it from
the feed: the same game id (its journal's first entry), the same hand
numbers, the same upserts, so importing a game the collector already holds,
or importing twice, changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from tablesvc.archive import ArchivedGame, game_id, game_json
from tablesvc.records.store import GameInfo, RecordsStore

__all__ = ["Imported", "import_games"]


@dataclass(frozen=True)
class Imported:
    finished: int  # games written (new ones, or again with the same result)
    skipped: int  # games still in play: the collector takes them from the feed


def import_games(store: RecordsStore, site: str, games: list[ArchivedGame]) -> Imported:
    finished = skipped = 0
    for game in games:
        if not game.finished or game.final is None or game.started is None:
            skipped += 1
            continue
        data = game_json(game)
        info = GameInfo(game_id(game.started), game.players, game.state.rules)
        hands = [(h["number"], h) for h in data["hands"]]
        store.replace_results(site, game.table, info, hands, data["final"])
        finished += 1
    return Imported(finished, skipped)
