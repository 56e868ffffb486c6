"""Games a table kept before a collector listened (or while it could not), brought into the records.

A table's journals (``tablesvc games``) hold every game it played. Each
finished one is written exactly as the collector would have written it from
the feed: the same game id (its journal's first entry), the same hand
numbers, the same upserts, so importing a game the collector already holds,
or importing twice, changes nothing. A game the records cannot keep (a
name that is not valid Unicode, a figure out of the database's range) is
checked as the collector checks a result, refused naming the field, and
the import goes on with the next.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tablesvc.archive import ArchivedGame, game_json
from tablesvc.records.checks import Refused, check_payload, check_text
from tablesvc.records.records_db import GameInfo, RecordsStore, RefusedByDatabase
from tablesvc.storage.ids import game_id

__all__ = ["Imported", "import_games"]


@dataclass(frozen=True)
class Imported:
    finished: int  # games written (new ones, or again with the same result)
    skipped: int  # games still in play: the collector takes them from the feed
    refused: list[tuple[str, str]] = field(default_factory=list)  # (the game's file, why) of games not written


def import_games(store: RecordsStore, site: str, games: list[ArchivedGame]) -> Imported:
    finished = skipped = 0
    refused: list[tuple[str, str]] = []
    for game in games:
        if not game.finished or game.final is None or game.started is None:
            skipped += 1
            continue
        try:
            data = game_json(game)
            for seat, name in enumerate(game.players):
                check_text(name, f"players[{seat}]")
            hands = [(h["number"], h) for h in data["hands"]]
            for number, hand in hands:
                try:
                    check_payload(hand)
                except Refused as exc:
                    raise Refused(f"hand {number}: {exc}") from None
            check_payload(data["final"])
            info = GameInfo(game_id(game.started), game.players, game.state.rules)
            store.replace_results(site, game.table, info, hands, data["final"])
        except (Refused, RefusedByDatabase) as exc:
            refused.append((str(game.path), str(exc)))
            continue
        finished += 1
    return Imported(finished, skipped, refused)
