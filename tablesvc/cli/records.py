"""``tablesvc records``: collect every table's finished games into the club's records, and rank the club."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from tablesvc.cli.output import fail, write_output

NAME = "records"
DEFAULT_DB = "records.sqlite3"

_EPILOG = f"""\
Without an action, runs the collector: it subscribes to the results of every table of the site
(--site, default every site) and writes each finished game into the records database exactly once,
also across restarts and corrections (see docs/records.md). It needs --broker.

The database (--db) is a SQLite file (default: ./{DEFAULT_DB}) or a PostgreSQL URL such as
postgresql://records:secret@db.example.org/club; the schema is created and migrated on first use.

examples:
  tablesvc records --broker mqtt://broker.local --db /var/lib/tablesvc/records.sqlite3
  tablesvc records standings --since 2026-01-01
  tablesvc records merge "Anne" "Ann"         # games typed as Anne count for Ann
  tablesvc records export --csv --out games.csv
  tablesvc records import --config table.toml     # games the table kept before the collector ran

exit status: 0 done (the collector: stopped by SIGINT or SIGTERM), 1 the database or broker
cannot be used, or import left out a game it cannot keep (the message says why), 2 bad command line.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="collect finished games into the club's records; standings, merges, CSV",
        description="Keep every finished game of a club's tables and rank its players.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    db = argparse.ArgumentParser(add_help=False)
    db.add_argument("--db", metavar="URL", default=argparse.SUPPRESS,
                    help=f"records database: a SQLite file or a postgresql:// URL (default: {DEFAULT_DB})")
    p.add_argument("--db", metavar="URL", default=DEFAULT_DB,
                   help=f"records database: a SQLite file or a postgresql:// URL (default: {DEFAULT_DB})")
    p.add_argument("--broker", metavar="URL", help="the broker: mqtt://user:pass@host:1883 or mqtts://host")
    p.add_argument("--site", default="+", help="the site whose tables to follow (default: every site)")
    p.add_argument("--prefix", default="tablesvc", help="the topic prefix of the tables (default: %(default)s)")
    p.add_argument("--client-id", help="fixed MQTT client id of the collector's persistent session "
                   "(default: tablesvc-records-SITE); one per collector")
    p.add_argument("--ca-file", help="CA certificate for mqtts://")
    p.set_defaults(run=_collect)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    st = actions.add_parser("standings", parents=[db], help="per player: games, places, total with uma, rates",
                            description="Standings of the club's players, then the games they come from.")
    st.add_argument("--since", metavar="DATE", type=_since,
                    help="only games started on or after DATE (2026-01-31, UTC)")
    st.add_argument("--json", action="store_true", help="the standings and games as one JSON object")
    st.set_defaults(run=_standings)
    mg = actions.add_parser("merge", parents=[db], help="count a second spelling of a name as that player",
                            description="Count every game played as ALIAS for NAME (two spellings of one "
                            "person); --undo counts ALIAS as a player of its own again.")
    mg.add_argument("alias", metavar="ALIAS")
    mg.add_argument("name", metavar="NAME", nargs="?")
    mg.add_argument("--undo", action="store_true", help="take the merge of ALIAS back")
    mg.set_defaults(run=_merge)
    ex = actions.add_parser("export", parents=[db], help="the games as CSV, one row per player per game")
    ex.add_argument("--csv", action="store_true", required=True, help="CSV (the one format for now)")
    ex.add_argument("--since", metavar="DATE", type=_since, help="only games started on or after DATE (UTC)")
    ex.add_argument("--out", type=Path, metavar="FILE", help="where to write it (default: standard output)")
    ex.set_defaults(run=_export)
    im = actions.add_parser("import", parents=[db], help="bring the games a table kept into the records",
                            description="Write every finished game kept in a table's data directory into the "
                            "records, as the collector would have (a game already there is left as it is); a game "
                            "the records cannot keep is named with the field at fault and left out, and the import "
                            "exits 1 at the end.")
    where = im.add_mutually_exclusive_group(required=True)
    where.add_argument("--config", metavar="FILE", help="the table's TOML configuration (its site and data_dir)")
    where.add_argument("--data-dir", type=Path, metavar="DIR", help="a table's data directory (with --site)")
    im.add_argument("--site", dest="import_site", metavar="SITE", help="the site of the tables (with --data-dir)")
    im.set_defaults(run=_import)


def _since(text: str) -> str:
    """``--since``: a date or a time in ISO 8601 (UTC unless it says), as the games' start times are kept."""
    from tablesvc.records.standings import parse_since

    try:
        return parse_since(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _fail(message: str) -> int:
    return fail(NAME, message)


def _store(args: argparse.Namespace):
    try:
        from tablesvc.records.records_db import RecordsStore
    except ImportError as exc:  # SQLAlchemy or psycopg missing
        from tablesvc.records.records_db import RecordsError

        raise RecordsError(f"{exc}: install the records extra (pip install 'tablesvc[records]')") from None
    return RecordsStore(args.db)


def _collect(args: argparse.Namespace) -> int:
    from tablesvc.records.collector import Collector
    from tablesvc.records.records_db import RecordsError

    if not args.broker:
        print("tablesvc records: the collector needs --broker (or give an action: standings, merge, export)",
              file=sys.stderr)
        return 2
    try:
        store = _store(args)
        collector = Collector(store, args.broker, site=args.site, prefix=args.prefix, client_id=args.client_id,
                              ca_file=args.ca_file)
    except (RecordsError, ValueError) as exc:
        return _fail(str(exc))
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    collector.start()
    print(f"tablesvc records: collecting the results of {args.prefix}/{args.site}/+ from {collector.link.url} "
          f"into {store.name} (session {collector.client_id})", flush=True)
    stop.wait()
    collector.stop()
    store.close()
    print(f"tablesvc records: stopped ({collector.written} results written, {collector.rejected} refused)",
          flush=True)
    return 0


def _rate(x: float) -> str:
    return f"{100 * x:5.1f}%"


def _standings(args: argparse.Namespace) -> int:
    from tablesvc.records.records_db import RecordsError
    from tablesvc.records.standings import club_standings

    try:
        with _store(args) as store:
            table = club_standings(store, since=args.since)
    except RecordsError as exc:
        return _fail(str(exc))
    if args.json:
        print(json.dumps(table.to_dict(), ensure_ascii=False, indent=1))
        return 0
    if not table.players:
        print("no finished games yet" + (f" since {args.since}" if args.since else ""))
        return 0
    width = max(6, *(len(p.name) for p in table.players))
    print(f"{'player':<{width}}  games  1st 2nd 3rd 4th  avg place    total     win  deal-in  riichi  avg win")
    for p in table.players:
        print(f"{p.name:<{width}}  {p.games:>5}  {p.places[0]:>3} {p.places[1]:>3} {p.places[2]:>3} {p.places[3]:>3}"
              f"  {p.average_place:>9.2f}  {p.total:>+7d}  {_rate(p.win_rate)} {_rate(p.deal_in_rate):>8} "
              f"{_rate(p.riichi_rate):>7}  {p.average_win:>7.0f}")
    print()
    print("games:")
    for g in table.games:
        ranked = sorted(g.players, key=lambda x: (x[1] or 9))
        outcome = ", ".join(f"{place}. {name} {result:+d}" for name, place, _pts, result in ranked
                            if place is not None and result is not None)
        print(f"  {g.started}  {g.site}/{g.table}  {outcome}")
    return 0


def _merge(args: argparse.Namespace) -> int:
    from tablesvc.records.records_db import RecordsError

    try:
        with _store(args) as store:
            if args.undo:
                if not store.unmerge(args.alias):
                    return _fail(f"{args.alias!r} is not merged into anyone")
                print(f"{args.alias} counts as a player of their own again")
                return 0
            if not args.name:
                print("tablesvc records merge: give ALIAS NAME (or --undo ALIAS)", file=sys.stderr)
                return 2
            kept = store.merge(args.alias, args.name)
    except RecordsError as exc:
        return _fail(str(exc))
    print(f"games played as {args.alias} now count for {kept}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from tablesvc.records.export import games_csv
    from tablesvc.records.records_db import RecordsError

    try:
        with _store(args) as store:
            text = games_csv(store.games(since=args.since))
    except RecordsError as exc:
        return _fail(str(exc))
    return write_output(NAME, text, args.out)


def _import(args: argparse.Namespace) -> int:
    from tablesvc.archive import list_games
    from tablesvc.records.backfill import import_games
    from tablesvc.records.records_db import RecordsError
    from tablesvc.storage.journal import JournalError

    if args.config:
        from tablesvc.config import ConfigError, load_config

        try:
            table = load_config(args.config).table
        except ConfigError as exc:
            return _fail(str(exc))
        site, data_dir = table.site, table.data_dir
    else:
        if not args.import_site:
            print("tablesvc records import: --data-dir needs --site", file=sys.stderr)
            return 2
        site, data_dir = args.import_site, args.data_dir
    try:
        games = list_games(data_dir)
        with _store(args) as store:
            done = import_games(store, site, games)
    except (JournalError, RecordsError) as exc:
        return _fail(str(exc))
    for path, why in done.refused:
        print(f"tablesvc records import: {path} not imported: {why}", file=sys.stderr)
    print(f"{done.finished} finished game(s) of {data_dir} in the records of site {site}"
          + (f"; {done.skipped} still in play left to the collector" if done.skipped else "")
          + (f"; {len(done.refused)} refused (above)" if done.refused else ""))
    return 1 if done.refused else 0
