"""``tablesvc games``: the games a table kept (its journals), listed, shown and exported."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tablesvc.cli.output import fail, write_output
from tablesvc.cli.replay import _final_text, _hand_line
from tablesvc.formats.record import RecordError
from tablesvc.storage.journal import JournalError
from tablesvc.text import safe_text

if TYPE_CHECKING:
    from tablesvc.archive import ArchivedGame

NAME = "games"

_EPILOG = """\
The service keeps each table's game in <data_dir>/<table>.sqlite3 and moves a finished game
aside as <table>-<n>.sqlite3 when the next one starts; a game's ID is that file name without
.sqlite3 (see 'tablesvc games list'). The data directory is --data-dir, or the [table] data_dir
of the table's configuration given with --config (default: ./data).

examples:
  tablesvc games list --config table.toml
  tablesvc games show t1-3 --data-dir /var/lib/tablesvc
  tablesvc games export t1-3 --format tenhou6 --out t1-3.json

formats: mjai (JSON lines, for Mortal and mjai-reviewer), tenhou6 (tenhou.net/6 JSON, for log
viewers), csv (one row per hand, each player's delta and score; a final row with each result
with uma and a place row), json (names, rules, every hand's result, final ranking with uma).

exit status: 0 done, 1 no such game or it cannot be read or written in that format.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="list, show and export the games a table kept",
        description="List, show and export the games kept in a table's data directory.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    where = argparse.ArgumentParser(add_help=False)
    group = where.add_mutually_exclusive_group()
    group.add_argument("--data-dir", type=Path, help="the table's data directory (default: ./data)")
    group.add_argument("--config", metavar="FILE", help="the table's TOML configuration (its [table] data_dir)")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    ls = actions.add_parser("list", parents=[where], help="every game, oldest first")
    ls.add_argument("--json", action="store_true", help="one JSON object per game")
    ls.set_defaults(run=_list)
    show = actions.add_parser("show", parents=[where], help="one game: players, rules, every hand, final ranking")
    show.add_argument("archive_id", metavar="ID")
    show.add_argument("--json", action="store_true", help="the game as JSON (as 'export --format json')")
    show.set_defaults(run=_show)
    export = actions.add_parser("export", parents=[where], help="write one game as mjai, tenhou6, csv or json")
    export.add_argument("archive_id", metavar="ID")
    export.add_argument("--format", required=True, choices=["mjai", "tenhou6", "csv", "json"])
    export.add_argument("--out", type=Path, metavar="FILE", help="where to write it (default: standard output)")
    export.set_defaults(run=_export)
    p.set_defaults(run=lambda _args: p.print_help() or 2)


def _data_dir(args: argparse.Namespace) -> Path:
    if args.config:
        from tablesvc.config import load_config

        return load_config(args.config).table.data_dir
    return args.data_dir or Path("data")


def _fail(message: str) -> int:
    return fail(NAME, safe_text(message))


def _print(text: str) -> None:
    """A line out: text that is no valid Unicode (a name journalled before such names were refused) is shown
    with U+FFFD in its place instead of ending the listing in a traceback."""
    print(safe_text(text))


def _list(args: argparse.Namespace) -> int:
    from tablesvc.archive import iso, list_games

    try:
        games = list_games(_data_dir(args))
    except (JournalError, ValueError) as exc:
        return _fail(str(exc))
    for g in games:
        if args.json:
            _print(json.dumps({"id": g.id, "table": g.table, "started": iso(g.started), "ended": iso(g.ended),
                              "finished": g.finished, "rules": g.state.rules, "players": list(g.players),
                              "hands": len(g.hands)}, ensure_ascii=False))
        else:
            _print(_summary(g))
    if not games and not args.json:
        print("no games yet", file=sys.stderr)
    return 0


def _summary(g: ArchivedGame) -> str:
    from tablesvc.archive import iso

    if g.final is not None:
        outcome = ", ".join(f"{s.place}. {g.players[s.seat]} {s.result:+d}" for s in g.final.standings)
    else:
        outcome = "in play" if not g.finished else "over"
    return f"{g.id:<14} {iso(g.started)}  {len(g.hands):>2} hands  {g.state.rules:<10} {outcome}"


def _show(args: argparse.Namespace) -> int:
    from tablesvc.archive import find_game, game_json, iso

    try:
        game = find_game(_data_dir(args), args.archive_id)
    except (JournalError, ValueError) as exc:
        return _fail(str(exc))
    if args.json:
        _print(json.dumps(game_json(game), ensure_ascii=False, indent=1))
        return 0
    _print(f"game {game.id}  table {game.table}  rules {game.state.rules}")
    _print(f"started {iso(game.started)}  last entry {iso(game.ended)}  {'finished' if game.finished else 'in play'}")
    _print("players: " + ", ".join(f"{'ESWN'[i]} {n}" for i, n in enumerate(game.players)))
    if game.referees:
        _print("referees: " + ", ".join(f"{name} ({count} {'entry' if count == 1 else 'entries'})"
                                        for name, count in game.referees))
    for hand in game.hands:
        _print(_hand_line(hand, game.players))
    if game.final is not None:
        _print(_final_text(game.final, game.players))
    return 0


def _export(args: argparse.Namespace) -> int:
    from tablesvc.archive import find_game

    try:
        game = find_game(_data_dir(args), args.archive_id)
        text = _render(game, args.format)
    except (JournalError, RecordError, ValueError) as exc:
        return _fail(str(exc))
    return write_output(NAME, safe_text(text), args.out)


def _render(game: ArchivedGame, fmt: str) -> str:
    from tablesvc.archive import game_csv, game_json, to_record

    if fmt == "json":
        return json.dumps(game_json(game), ensure_ascii=False, indent=1) + "\n"
    if fmt == "csv":
        return game_csv(game)
    from tablesvc.replay import replay

    record = to_record(game)
    report = replay(record)
    if fmt == "mjai":
        from tablesvc.formats.mjai import export_mjai

        return export_mjai(record, report)
    from tablesvc.formats.tenhou6 import export_tenhou6

    return export_tenhou6(record, report)
