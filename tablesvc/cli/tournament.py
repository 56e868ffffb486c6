"""``tablesvc tournament``: seat, start, penalise and rank a tournament's hall of tables (docs/tournament.md)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from tablesvc.cli.output import fail, write_output

NAME = "tournament"
DEFAULT_DB = "records.sqlite3"

_EPILOG = f"""\
The tournament lives in the records database (--db: a SQLite file, default ./{DEFAULT_DB}, or a
postgresql:// URL), beside the games the records collector writes: run `tablesvc records --broker ...`
during the tournament, and the standings follow the tables' own results. See docs/tournament.md.

a tournament day:
  tablesvc tournament create "Autumn Open" --rules ema2016 --rounds 3 --minutes 75 --time-rule ema
  tablesvc tournament import-players players.csv      # name, EMA id, club, country
  tablesvc tournament tables --site hall --count 4    # hall/t1 .. hall/t4 (table 1: the streamed one)
  tablesvc tournament seating --all                   # every round now (or round by round, --method swiss)
  tablesvc tournament --db copy.sqlite3 rehearse      # the day on simulated tables, on a copy of the database
  tablesvc tournament start-round 1 --broker mqtt://hall.local
  tablesvc tournament penalty "Ann Lee" 4000 --reason "late" --hand E3-1
  tablesvc tournament time 3 --extend 5 --broker mqtt://hall.local   # table 3: five minutes more
  tablesvc tournament finish-round 1
  tablesvc tournament standings
  tablesvc tournament export --csv --out results.csv

exit status: 0 done, 1 refused or failed (the message says why and names the row or player), 2 bad
command line.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(NAME, help="a tournament: players, seating, starting rounds, penalties, standings, EMA export",
                       description="Run a tournament on a hall of tables: seat every round, start every table at "
                       "once, give penalties, rank the players from the tables' own results and write the EMA "
                       "results report.", epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", metavar="URL", default=argparse.SUPPRESS,
                        help=f"records database: a SQLite file or a postgresql:// URL (default: {DEFAULT_DB})")
    common.add_argument("--tournament", metavar="NAME", default=argparse.SUPPRESS,
                        help="which tournament of the database (default: the one made last)")
    p.add_argument("--db", metavar="URL", default=DEFAULT_DB,
                   help=f"records database: a SQLite file or a postgresql:// URL (default: {DEFAULT_DB})")
    p.add_argument("--tournament", metavar="NAME", help="which tournament of the database (default: the one made "
                   "last)")
    p.set_defaults(run=lambda _args: (p.print_help(), 2)[1])
    actions = p.add_subparsers(dest="action", metavar="ACTION")

    def action(name: str, help_text: str, run: Any) -> argparse.ArgumentParser:
        a = actions.add_parser(name, parents=[common], help=help_text, description=help_text)
        a.set_defaults(run=run)
        return a

    a = action("create", "a new tournament: its name, rule set, rounds and tie-break", _create)
    a.add_argument("name", metavar="NAME")
    a.add_argument("--rules", default="ema2016", help="the rule set each table plays (default: %(default)s)")
    a.add_argument("--rounds", type=int, required=True, help="how many rounds (hanchan) each player plays")
    a.add_argument("--tie-break", choices=["places", "average_place", "best_game", "shared"], default="places",
                   help="equal totals: more firsts (then seconds, thirds), the better average place, the better "
                   "single game, or the tie stands (default: %(default)s)")
    a.add_argument("--separate-clubs", action="store_true", help="keep players of one club apart when seating")
    a.add_argument("--top-table", action="store_true", help="seat the leading four at table 1 (the streamed one) "
                   "from round 2 on")
    _clock_args(a)

    a = action("clock", "record the round time and the rule at the end of time (sent with start_game)", _clock)
    _clock_args(a)

    a = action("import-players", "add the players of a CSV file (name, EMA id, club, country): all or none",
               _import_players)
    a.add_argument("file", type=Path, metavar="FILE")

    a = action("add", "add one player (or with --substitute one who takes a withdrawn player's seat)", _add)
    a.add_argument("name", metavar="NAME")
    a.add_argument("--substitute", metavar="PLAYER", nargs="?", const="", default=None,
                   help="a substitute (not ranked) in the seat of this withdrawn player (number, name or EMA id; "
                   "without it: the one withdrawn player whose seat waits) in every round not started")
    _player_args(a)

    a = action("rename", "correct a player's name (between rounds), or the first and last name of the EMA report",
               _rename)
    a.add_argument("player", metavar="PLAYER", help="number, name or EMA id")
    a.add_argument("name", metavar="NEW_NAME", nargs="?", help="the name sent to the tables")
    a.add_argument("--first", help="the first name in the EMA report (e.g. Niamh)")
    a.add_argument("--last", help="the last name in the EMA report (e.g. \"Ó Briain\")")

    a = action("withdraw", "a player leaves the tournament (their games stay; their seat in the rounds seated "
               "waits for a substitute: add NAME --substitute PLAYER)", _withdraw)
    a.add_argument("player", metavar="PLAYER")

    a = action("substitute", "a substitute takes a player's seat from the next round on (not ranked)", _substitute)
    a.add_argument("player", metavar="PLAYER", help="the player who leaves")
    a.add_argument("name", metavar="SUBSTITUTE")
    _player_args(a)

    action("players", "list the players", _players)

    a = action("tables", "the hall's tables in order (table 1 is the streamed one); without tables: list them",
               _tables)
    a.add_argument("tables", nargs="*", metavar="SITE/TABLE")
    a.add_argument("--file", type=Path, help="the hall's tables from a file: one SITE/TABLE a line, or a CSV with "
                   "site and table columns")
    a.add_argument("--site", help="with --count: the site of tables t1..tN")
    a.add_argument("--count", type=int, help="with --site: this many tables, named PREFIX1..PREFIXN")
    a.add_argument("--prefix", default="t", help="with --count: the tables' name before the number (default: t)")

    a = action("seating", "seat the next round (or --round N, or --all rounds) and print it with its quality",
               _seating)
    a.add_argument("--round", type=int, dest="round_number", metavar="N")
    a.add_argument("--all", action="store_true", dest="all_rounds", help="every round not started yet (shuffled)")
    a.add_argument("--method", choices=["shuffled", "swiss", "interval", "file"], default="shuffled",
                   help="shuffled: no repeat meetings while possible, winds balanced (default); swiss: by standing; "
                   "interval: by standing, spread over the hall; file: as --file prescribes")
    a.add_argument("--file", type=Path, help="the prescribed seating: CSV round,table,east,south,west,north")
    a.add_argument("--seed", type=int, default=0, help="another seed gives another seating of the same quality")
    a.add_argument("--show", action="store_true", help="print the seating kept, seat nothing")

    a = action("start-round", "send start_game to every table of a round; list the tables that did not start",
               _start_round)
    a.add_argument("round_number", type=int, nargs="?", metavar="N", help="default: the next round")
    a.add_argument("--broker", metavar="URL", required=True, help="the hall's broker: mqtt://host:1883")
    a.add_argument("--prefix", default="tablesvc", help="the tables' topic prefix (default: %(default)s)")
    a.add_argument("--retry", action="store_true", help="send it again to the tables that did not start")
    a.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for the tables (default: 10)")
    a.add_argument("--token", help="the referee token, when the tables require one ([commands] tokens)")
    a.add_argument("--ca-file", help="CA certificate for mqtts://")

    a = action("time", "a referee's word on one table's clock in the round in play (more minutes, one more hand, "
               "time up now), or time up for the whole hall (TABLE: all)", _time)
    a.add_argument("table", metavar="TABLE", help="the hall table's number, or all (with --time-up)")
    what = a.add_mutually_exclusive_group(required=True)
    what.add_argument("--extend", type=int, metavar="MINUTES", help="add this many minutes to the table's time")
    what.add_argument("--add-hand", action="store_true", help="one hand more after time")
    what.add_argument("--time-up", action="store_true", help="call time now (the rule at the end of time follows)")
    a.add_argument("--reason", default="", help="why (recorded in the table's journal)")
    a.add_argument("--round", type=int, dest="round_number", help="default: the round in play")
    a.add_argument("--broker", metavar="URL", required=True, help="the hall's broker: mqtt://host:1883")
    a.add_argument("--prefix", default="tablesvc", help="the tables' topic prefix (default: %(default)s)")
    a.add_argument("--token", help="the referee token, when the tables require one ([commands] tokens)")
    a.add_argument("--ca-file", help="CA certificate for mqtts://")

    a = action("finish-round", "close a round: nothing more is changed in it", _finish_round)
    a.add_argument("round_number", type=int, metavar="N")

    for name, kind in (("penalty", "penalty"), ("warning", "warning")):
        a = action(name, f"give a {kind} to a player seated in the round in play", _penalty)
        a.add_argument("player", metavar="PLAYER", help="number, name or EMA id")
        if kind == "penalty":
            a.add_argument("points", type=int, metavar="POINTS", help="points taken off the total (e.g. 4000)")
        a.add_argument("--reason", required=True)
        a.add_argument("--hand", help="the hand it was given in (E3-1)")
        a.add_argument("--round", type=int, dest="round_number", help="default: the round in play")
        a.add_argument("--table", type=int, help="the table the referee was called to: refused if the player "
                       "does not sit there")
        a.set_defaults(kind=kind)

    a = action("standings", "the ranking so far, and every round's tables", _standings)
    a.add_argument("--json", action="store_true")

    a = action("rehearse", "play every seated round not yet played on simulated tables (a broker of its own, "
               "the real start-round, collector and web server): the day before the day. Use a copy of the database",
               _rehearse)
    a.add_argument("--speed", type=float, default=0.0, help="the tables' pace: 0 as fast as they go (default), 1 a "
                   "real table's, 10 ten times faster")
    a.add_argument("--data-dir", type=Path, help="keep the tables' journals here (for export --games); default: a "
                   "temporary directory removed after")
    a.add_argument("--web", metavar="HOST:PORT", default="127.0.0.1:0", help="the web server's address "
                   "(default: a free port on 127.0.0.1; off: none)")
    a.add_argument("--seed", type=int, default=0, help="another seed plays other games")
    a.add_argument("--phones", type=int, default=0, metavar="N", help="the hall's first N tables (by number) are "
                   "phone tables: each hand's result entered as the players' phones enter it (default 0)")

    a = action("export", "the EMA results report (CSV or JSON), or every game as mjai / tenhou.net/6", _export)
    what = a.add_mutually_exclusive_group(required=True)
    what.add_argument("--csv", action="store_true", help="the ranking in the EMA report's columns")
    what.add_argument("--json", action="store_true", help="the same as JSON, with substitutes and penalties")
    what.add_argument("--games", choices=["mjai", "tenhou6"], help="every game as a file, into --out DIR")
    a.add_argument("--out", type=Path, help="the file (or with --games the directory) to write")
    a.add_argument("--days", type=int, choices=[1, 2, 3],
                   help="days of play, for the MERS weight printed with the report (without it: its other parts)")
    a.add_argument("--qualification", action="store_true",
                   help="players had to qualify (MERS weight +1)")
    a.add_argument("--data-dir", action="append", default=[], metavar="SITE/TABLE=DIR",
                   help="with --games: a table's data directory (its journals); repeat per table")


def _clock_args(a: argparse.ArgumentParser) -> None:
    a.add_argument("--minutes", type=int, help="the guaranteed playing time of a round (EMA: e.g. 75)")
    a.add_argument("--time-rule", help="at the end of time: ema (finish the hand, play one more), finish_hand, "
                   "or more_hands:N")


def _player_args(a: argparse.ArgumentParser) -> None:
    a.add_argument("--first-name", help="first name as the EMA report gives it (default: NAME but its last word)")
    a.add_argument("--last-name", help="last name as the EMA report gives it (default: NAME's last word)")
    a.add_argument("--ema-id", help="EMA number")
    a.add_argument("--club")
    a.add_argument("--country")


def _fail(message: str) -> int:
    return fail(NAME, message)


def _open(args: argparse.Namespace):
    try:
        from tablesvc.records.records_db import RecordsStore
        from tablesvc.tournament.tournament_db import TournamentStore
    except ImportError as exc:
        from tablesvc.records.schema import RecordsError

        raise RecordsError(f"{exc}: install the records extra (pip install 'tablesvc[records]')") from None
    return TournamentStore(RecordsStore(args.db))


def _run(args: argparse.Namespace, work: Any) -> int:
    """Open the database, find the tournament, do the work; refusals and database trouble as one line."""
    from tablesvc.records.schema import RecordsError
    from tablesvc.tournament.model import TournamentError

    try:
        store = _open(args)
    except RecordsError as exc:
        return _fail(str(exc))
    try:
        return int(work(store) or 0)
    except (TournamentError, RecordsError) as exc:
        return _fail(str(exc))
    finally:
        store.records.close()


def _tid(store: Any, args: argparse.Namespace) -> int:
    return store.find(getattr(args, "tournament", None))[0]


def _time_rule(text: str | None) -> str | None:
    from tablesvc.tournament.model import check_time_rule

    return check_time_rule(text)


def _create(args: argparse.Namespace) -> int:
    from tablesvc.tournament.model import TieBreak, Tournament

    def work(store: Any) -> int:
        t = Tournament(args.name, args.rules, args.rounds, TieBreak(args.tie_break), args.separate_clubs,
                       args.top_table, _time_rule(args.time_rule), args.minutes)
        store.create(t)
        print(f"tournament {t.name!r}: {t.rounds} round(s) of {t.rules}, ties broken by {t.tie_break.value}"
              + (f", {t.minutes} minutes a round ({t.time_rule or 'ema'})" if t.minutes else ""))
        return 0

    return _run(args, work)


def _clock(args: argparse.Namespace) -> int:
    def work(store: Any) -> int:
        tid = _tid(store, args)
        store.set_clock(tid, args.minutes, _time_rule(args.time_rule))
        print(f"round time: {args.minutes or 'none'} minutes; at the end of time: {args.time_rule or 'ema'}")
        return 0

    return _run(args, work)


def _import_players(args: argparse.Namespace) -> int:
    from tablesvc.tournament.files import read_players_csv

    def work(store: Any) -> int:
        tid = _tid(store, args)
        try:
            text = args.file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return _fail(f"cannot read {args.file}: {exc}")
        added = store.add_players(tid, read_players_csv(text, str(args.file)))
        print(f"{len(added)} player(s) added ({len(store.players(tid))} in all)")
        return 0

    return _run(args, work)


def _new(args: argparse.Namespace) -> Any:
    from tablesvc.tournament.tournament_db import NewPlayer

    return NewPlayer(args.name, args.ema_id, args.club, args.country, first_name=args.first_name,
                     last_name=args.last_name)


def _add(args: argparse.Namespace) -> int:
    from tablesvc.tournament.model import PlayerStatus, TournamentError

    def work(store: Any) -> int:
        tid = _tid(store, args)
        if args.substitute is None:
            (p,) = store.add_players(tid, [_new(args)])
            print(f"player {p.number}: {p.name}")
            return 0
        who = args.substitute
        if not who:
            known = store.players(tid)
            waiting = [p for p in known if p.status is PlayerStatus.WITHDRAWN
                       and not any(q.replaces == p.number for q in known)]
            if len(waiting) != 1:
                raise TournamentError("name the withdrawn player whose seat the substitute takes: "
                                      + (", ".join(f"{p.number} ({p.name})" for p in waiting) if waiting
                                         else "no player has withdrawn"))
            who = waiting[0].number
        out, sub = store.substitute(tid, who, _new(args))
        print(f"{sub.name} (player {sub.number}) takes the seat of {out.name} from the next round on "
              "(a substitute: not ranked)")
        return 0

    return _run(args, work)


def _rename(args: argparse.Namespace) -> int:
    from tablesvc.tournament.model import TournamentError

    def work(store: Any) -> int:
        tid = _tid(store, args)
        if args.name is None and args.first is None and args.last is None:
            raise TournamentError("give the new name, or --first and --last for the EMA report")
        if args.name is not None:
            p = store.rename(tid, args.player, args.name)
            print(f"player {p.number} is now {p.name}")
        if args.first is not None or args.last is not None:
            now = store.player(tid, args.player)
            first, last = now.first_last
            p = store.set_name_parts(tid, now.number, args.first if args.first is not None else first,
                                     args.last if args.last is not None else last)
            print(f"player {p.number} in the EMA report: first name {p.first_name or ''!r}, last name "
                  f"{p.last_name or ''!r}")
        return 0

    return _run(args, work)


def _withdraw(args: argparse.Namespace) -> int:
    def work(store: Any) -> int:
        p, waiting = store.withdraw(_tid(store, args), args.player)
        print(f"{p.name} has withdrawn; their games stay")
        if waiting:
            print(f"their seat in round(s) {', '.join(map(str, waiting))} waits for a substitute: "
                  + shlex.join(["tablesvc", "tournament", "--db", args.db, "add", "NAME", "--substitute",
                                str(p.number)]))
        return 0

    return _run(args, work)


def _substitute(args: argparse.Namespace) -> int:
    def work(store: Any) -> int:
        out, sub = store.substitute(_tid(store, args), args.player, _new(args))
        print(f"{sub.name} (player {sub.number}) takes the seat of {out.name} from the next round on "
              "(a substitute: not ranked)")
        return 0

    return _run(args, work)


def _players(args: argparse.Namespace) -> int:
    from tablesvc.text import printable

    def work(store: Any) -> int:
        for p in store.players(_tid(store, args)):
            extra = ", ".join(x for x in (p.ema_id and f"EMA {p.ema_id}", p.club, p.country,
                                          p.status.value if p.status.value != "active" else None) if x)
            print(printable(f"{p.number:>4}  {p.name}" + (f"  ({extra})" if extra else "")))
        return 0

    return _run(args, work)


def _tables(args: argparse.Namespace) -> int:
    from tablesvc.tournament.files import read_tables
    from tablesvc.tournament.model import TournamentError

    def work(store: Any) -> int:
        tid = _tid(store, args)
        specs = list(args.tables)
        if args.file:
            try:
                specs += _table_lines(args.file.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as exc:
                return _fail(f"cannot read {args.file}: {exc}")
        if args.count:
            if not args.site:
                raise TournamentError("--count needs --site")
            specs += [f"{args.site}/{args.prefix}{i}" for i in range(1, args.count + 1)]
        if specs:
            store.set_tables(tid, read_tables(specs))
        for t in store.tables(tid):
            print(f"table {t.number:>3}: {t.site}/{t.table_id}")
        return 0

    return _run(args, work)


def _table_lines(text: str) -> list[str]:
    """SITE/TABLE a line, or CSV lines ``site,table`` (a header naming site and table is skipped)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if "/" not in line:
            cells = [c.strip() for c in line.replace(";", ",").split(",")]
            if [c.lower() for c in cells[:2]] == ["site", "table"]:
                continue
            line = "/".join(cells[:2])
        out.append(line)
    return out


def _print_round(store: Any, tid: int, r: Any) -> None:
    names = {p.number: p.name for p in store.players(tid)}
    hall = {t.number: t for t in store.tables(tid)}
    print(f"round {r.number} ({r.method.value}, {r.status.value}):")
    for i, four in enumerate(r.seating.tables, 1):
        where = f"{hall[i].site}/{hall[i].table_id}" if i in hall else "?"
        print(f"  table {i:>3} ({where}): " + ", ".join(f"{w} {names.get(p, p)}" for w, p in zip("ESWN", four,
                                                                                                  strict=True)))


def _seating(args: argparse.Namespace) -> int:
    from tablesvc.tournament.actions import seat_round
    from tablesvc.tournament.files import read_seating_csv
    from tablesvc.tournament.model import SeatingMethod
    from tablesvc.tournament.seating import quality

    def work(store: Any) -> int:
        tid = _tid(store, args)
        if args.show:
            rounds = store.rounds(tid)
            for r in rounds:
                if args.round_number in (None, r.number):
                    _print_round(store, tid, r)
            for line in quality([r.seating for r in rounds]).lines():
                print(line)
            return 0
        method = SeatingMethod(args.method)
        prescribed = None
        if method is SeatingMethod.FILE or args.file:
            if not args.file:
                return _fail("--method file needs --file")
            method = SeatingMethod.FILE
            try:
                text = args.file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                return _fail(f"cannot read {args.file}: {exc}")
            prescribed = read_seating_csv(text, store.players(tid), str(args.file))
        saved, q = seat_round(store, tid, method, number=args.round_number, all_rounds=args.all_rounds,
                              seed=args.seed, prescribed=prescribed)
        for r in saved:
            _print_round(store, tid, r)
        print("quality of the tournament's seating:")
        for line in q.lines():
            print(f"  {line}")
        return 0

    return _run(args, work)


def _start_round(args: argparse.Namespace) -> int:
    from tablesvc.tournament.actions import next_round
    from tablesvc.tournament.actions import start_round_once as start_round
    from tablesvc.tournament.hall import MqttHall

    def work(store: Any) -> int:
        tid = _tid(store, args)
        number = args.round_number or (next_round(store, tid) if not args.retry else None)
        if number is None:
            return _fail("--retry needs the round's number")
        store.begin_start(tid, number, retry=args.retry)  # refused before the broker is even asked
        with MqttHall(args.broker, prefix=args.prefix, ca_file=args.ca_file) as hall:
            report = start_round(store, tid, number, hall, retry=args.retry, timeout=args.timeout, token=args.token)
        again = shlex.join(["tablesvc", "tournament", "--db", args.db, *(["--tournament", args.tournament]
                                                                         if args.tournament else []),
                            "start-round", str(number), "--retry", "--broker", args.broker,
                            *(["--prefix", args.prefix] if args.prefix != "tablesvc" else []),
                            *(["--ca-file", args.ca_file] if args.ca_file else []),
                            *(["--token", "TOKEN"] if args.token else [])])
        for line in report.lines(store.tables(tid), again):
            print(line)
        return 0 if not report.not_started else 1

    return _run(args, work)


def _time(args: argparse.Namespace) -> int:
    from tablesvc.tournament.hall import MqttHall, hall_time_up, table_clock
    from tablesvc.tournament.model import RoundStatus, TournamentError

    def work(store: Any) -> int:
        tid = _tid(store, args)
        rounds = store.rounds(tid)
        r = next((x for x in rounds if x.number == args.round_number), None) if args.round_number else \
            next((x for x in reversed(rounds) if x.status is RoundStatus.STARTED), None)
        if r is not None and r.status is RoundStatus.FINISHED:  # refused before the broker is even asked
            raise TournamentError(f"round {r.number} is finished: its tables' clocks are closed")
        if args.table == "all":
            if not args.time_up:
                raise TournamentError("the whole hall takes --time-up only: extend or add a hand table by table")
            with MqttHall(args.broker, prefix=args.prefix, ca_file=args.ca_file) as hall:
                called, refused = hall_time_up(store, tid, hall, reason=args.reason, round_number=args.round_number,
                                               token=args.token)
            print(f"time up at {len(called)} table(s): {', '.join(map(str, called)) or 'none'}")
            for table, why in sorted(refused.items()):
                print(f"  table {table}: NOT CALLED: {why}")
            return 0 if not refused else 1
        if not args.table.isdigit():
            raise TournamentError(f"TABLE {args.table!r}: a hall table's number, or all")
        with MqttHall(args.broker, prefix=args.prefix, ca_file=args.ca_file) as hall:
            done = table_clock(store, tid, int(args.table), hall, extend=args.extend, add_hand=args.add_hand,
                               time_up=args.time_up, reason=args.reason, round_number=args.round_number,
                               token=args.token)
        what = f"{done['minutes']} minute(s) more" if done["minutes"] else "one hand more" if args.add_hand else \
            "time up"
        print(f"round {done['round']}, table {done['table']}: {what}")
        return 0

    return _run(args, work)


def _finish_round(args: argparse.Namespace) -> int:
    def work(store: Any) -> int:
        r = store.finish_round(_tid(store, args), args.round_number)
        print(f"round {r.number} is finished")
        return 0

    return _run(args, work)


def _penalty(args: argparse.Namespace) -> int:
    from tablesvc.tournament.model import PenaltyKind

    def work(store: Any) -> int:
        tid = _tid(store, args)
        kind = PenaltyKind(args.kind)
        pen = store.add_penalty(tid, args.player, points=getattr(args, "points", 0), reason=args.reason, kind=kind,
                                round_number=args.round_number, table=args.table, hand=args.hand)
        who = store.player(tid, pen.player).name
        print(f"{kind.value} {pen.id}: {who}, round {pen.round}" + (f", {pen.points} points" if pen.points else "")
              + f": {pen.reason}" + (f" (hand {pen.hand})" if pen.hand else ""))
        return 0

    return _run(args, work)


def _standings(args: argparse.Namespace) -> int:
    from tablesvc.tournament.actions import current_standings

    def work(store: Any) -> int:
        st = current_standings(store, _tid(store, args))
        if args.json:
            print(json.dumps(st.to_dict(), ensure_ascii=False, indent=1))
            return 0
        print(f"{st.tournament.name}: standings")
        width = max([6, *(len(p.player.name) for p in st.players)])
        print(f"place  {'player':<{width}}  games  1st 2nd 3rd 4th     total  penalties")
        for p in st.players:
            place = (f"{p.place:>4}" + ("*" if st.incomplete(p) else " ")) if p.place is not None else "  sub"
            print(f"{place}  {p.player.name:<{width}}  {p.games:>5}  {p.places[0]:>3} {p.places[1]:>3} "
                  f"{p.places[2]:>3} {p.places[3]:>3}  {p.total / 1000:>+8.1f}  "
                  f"{-p.penalties / 1000 if p.penalties else 0:>+9.1f}"
                  + (f"  chombo {-p.chombo / 1000:+.1f} (in the games)" if p.chombo else "")
                  + (f"  {p.warnings} warning(s)" if p.warnings else ""))
        if any(st.incomplete(p) for p in st.players if p.place is not None):
            print(f"* fewer games than the {st.finished_rounds} round(s) finished (withdrew or joined late)")
        if st.provisional:
            print(f"provisional: {st.finished_rounds} of {st.tournament.rounds} round(s) finished")
        waiting = [tg for tg in st.tables if tg.status != "finished"]
        if waiting:
            print("tables without a final result: " + ", ".join(f"round {tg.round} table {tg.table} ({tg.status})"
                                                                 for tg in waiting))
        return 0

    return _run(args, work)


def _export(args: argparse.Namespace) -> int:
    from tablesvc.tournament.actions import current_standings
    from tablesvc.tournament.export import check_lines, ema_csv, ema_json, export_games

    def work(store: Any) -> int:
        st = current_standings(store, _tid(store, args))
        if args.games:
            if not args.out:
                return _fail("--games needs --out DIR")
            dirs = {}
            for spec in args.data_dir:
                key, sep, path = spec.partition("=")
                site, slash, table = key.partition("/")
                if not sep or not slash:
                    return _fail(f"--data-dir {spec!r}: write SITE/TABLE=DIR")
                dirs[(site, table)] = Path(path)
            written, missing = export_games(st, dirs, args.games, args.out)
            print(f"{len(written)} game(s) written to {args.out}")
            for line in missing:
                print(f"  not written: {line}", file=sys.stderr)
            return 0 if not missing else 1
        text = ema_csv(st) if args.csv else ema_json(st)
        code = write_output(NAME, text, args.out)
        if code == 0:
            for line in check_lines(st, args.days, args.qualification):  # on stderr: stdout may be the report itself
                print(line, file=sys.stderr)
        return code

    return _run(args, work)


def _rehearse(args: argparse.Namespace) -> int:
    import tempfile

    from tablesvc.cli.rehearse import Rehearsal

    def work(store: Any) -> int:
        tid = _tid(store, args)
        listen = None
        if args.web != "off":
            from tablesvc.web.server import parse_listen

            try:
                listen = parse_listen(args.web)
            except ValueError as exc:
                return _fail(f"--web: {exc}")
        with tempfile.TemporaryDirectory(prefix="tablesvc-rehearsal-") as tmp:
            data = args.data_dir or Path(tmp)
            with Rehearsal(store, tid, args.db, data, speed=args.speed, web_listen=listen, seed=args.seed,
                           phones=args.phones) as hall:
                if hall.web is not None:
                    print(f"pages: {hall.web.url}/tournament  (referee password for this rehearsal: "
                          f"{hall.web_password})", flush=True)
                report = hall.run()
        print(f"rehearsed round(s) {', '.join(map(str, report.rounds)) or 'none'}: {report.games} game(s)")
        if report.not_seated:
            print(f"round(s) {', '.join(map(str, report.not_seated))} not seated: seat them (tablesvc tournament "
                  "seating) and rehearse again")
        db = ["tablesvc", "tournament", "--db", args.db]
        print("next: " + shlex.join([*db, "standings"]))
        print("      " + shlex.join([*db, "export", "--csv", "--out", "results.csv"]))
        if args.data_dir:
            dirs = [f"--data-dir={h.site}/{h.table_id}={args.data_dir / h.site / h.table_id}"
                    for h in store.tables(tid)]
            print("      " + shlex.join([*db, "export", "--games", "mjai", "--out", "games", *dirs]))
        return 0

    return _run(args, work)
