"""Records: how fast the collector's store keeps results, and how fast the standings are read back.

    python bench/records.py [--games 500] [--db records.sqlite3 | --db postgresql://...] [--quick]

A club night's results as the feed publishes them (hand results with their
game and number, then the final ranking) from a few generated whole games,
played again under new game ids, tables and seatings until ``--games``
games: written one message per transaction, as the collector does, then all
written again (a redelivery of everything: nothing may change), then the
standings computed over every game. The database is a fresh SQLite file in a
temporary directory unless ``--db`` names one (PostgreSQL: an empty database).
``--quick`` (20 games from 2 generated games) is what the test runs.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, not bench/, comes first

from hardware_sims.generator import generate_game
from tablesvc.engine.engine import Engine
from tablesvc.engine.results import GameResult, HandResult
from tablesvc.mqtt.payloads import result_payload
from tablesvc.records.records_db import GameInfo, RecordsStore
from tablesvc.records.standings import club_standings

NAMES = ["Ann", "Bob", "Cat", "Dan", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jon", "Kim", "Lou"]


def played(seed: int) -> list:
    """The results of one generated whole game: HandResult ... GameResult."""
    engine = Engine()
    out = []
    for event in generate_game(seed).events:
        out += [o for o in engine.apply(event) if isinstance(o, HandResult | GameResult)]
    return out


def club(templates: list[list], games: int) -> list[tuple[str, GameInfo, list[dict]]]:
    """``games`` games: the templates' results under new ids, tables and seatings (as the feed writes them)."""
    start = datetime(2026, 1, 5, 19, 0, tzinfo=UTC)
    seatings = itertools.permutations(NAMES, 4)
    out = []
    for n in range(games):
        table = f"t{n % 8 + 1}"
        game_id = (start + timedelta(minutes=10 * n)).isoformat(timespec="milliseconds")
        players = next(seatings)
        info = GameInfo(game_id, (players[0], players[1], players[2], players[3]), "ema2012")
        messages = []
        for seq, result in enumerate(templates[n % len(templates)], start=1):
            payload = result_payload(result, 10 * seq, players)
            payload["game"] = {"id": game_id, "players": list(players), "rules": "ema2012"}
            if isinstance(result, HandResult):
                payload["number"] = result.hand_number
            messages.append(payload)
        out.append((table, info, messages))
    return out


def write_all(store: RecordsStore, night: list[tuple[str, GameInfo, list[dict]]]) -> int:
    count = 0
    for table, info, messages in night:
        for payload in messages:
            if payload["type"] == "hand_result":
                store.record_hand("club", table, info, payload["number"], payload)
            else:
                store.record_final("club", table, info, payload)
            count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=500)
    parser.add_argument("--templates", type=int, default=5, help="generated whole games to play again")
    parser.add_argument("--db", help="records database (default: a fresh SQLite file)")
    parser.add_argument("--quick", action="store_true", help="20 games from 2 generated games")
    args = parser.parse_args()
    if args.quick:
        args.games, args.templates = 20, 2
    templates = [played(seed) for seed in range(1, args.templates + 1)]
    night = club(templates, args.games)
    with tempfile.TemporaryDirectory() as tmp:
        store = RecordsStore(args.db or str(Path(tmp) / "records.sqlite3"))
        t0 = time.perf_counter()
        count = write_all(store, night)
        first = time.perf_counter() - t0
        before = club_standings(store).to_dict()
        t0 = time.perf_counter()
        write_all(store, night)
        again = time.perf_counter() - t0
        t0 = time.perf_counter()
        table = club_standings(store)
        read = time.perf_counter() - t0
        unchanged = table.to_dict() == before
        store.close()
    hands = sum(len(t) - 1 for t in (templates[n % len(templates)] for n in range(args.games)))
    print(f"database                  {store.name.split('://')[0]}")
    print(f"games kept                {len(table.games)} games, {hands} hands, {len(table.players)} players")
    print(f"results written           {count / first:9.0f} messages/s  ({1000 * first / count:.2f} ms each, "
          "one transaction per message)")
    print(f"written again (redelivery){count / again:9.0f} messages/s  standings unchanged: {unchanged}")
    print(f"standings over every game {1000 * read:9.1f} ms")


if __name__ == "__main__":
    main()
