"""The tournament's results for the EMA, and its games as files players' tools open.

The ranking goes out in the columns of an EMA results report: place, first
name, last name, EMA number, table points, score, EMA member, country.
Table points are the ranking total (every game's result with uma, less the
penalties) and score the points the player ended their games with less the
starting points (before uma), both in thousands to one decimal as EMA
results are written. A substitute is not ranked: their games count for their
tables, they are left out of the ranking (listed apart in the JSON).

Before a report is written every game is checked to sum as the rules say:
the final points add up to four times the starting points, the uma to
nothing, the oka to the rule set's, and each result is points less the
return points plus oka and uma less the table's penalty; every tournament
penalty names a player who played that round. A report that fails is not
written, and the refusal names the round, table and seat.

The games themselves (mjai, tenhou.net/6) are rebuilt from the tables'
journals (each table's data directory), matched to the tournament's games by
the game id the feed and the records share.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablesvc.rules.ruleset import RuleSet, get_ruleset
from tablesvc.text import spreadsheet_cell
from tablesvc.tournament.model import PlayerStatus, TournamentError
from tablesvc.tournament.standings import Standings

__all__ = ["EMA_COLUMNS", "MersWeight", "check_lines", "check_sums", "ema_csv", "ema_json", "export_games",
           "mers_weight", "provisional_line", "tournament_weight"]

EMA_COLUMNS = ("place", "first name", "last name", "EMA number", "table points", "score", "EMA member", "country")


def _thousands(points: int) -> str:
    return f"{points / 1000:.1f}"


def check_sums(st: Standings, rules: RuleSet | None = None) -> list[str]:
    """What does not add up, one line each (empty: every game and penalty sums as the rules say)."""
    rules = rules or get_ruleset(st.tournament.rules)
    problems = []
    for tg in st.tables:
        if tg.game is None or not tg.game.finished:
            continue
        where = f"round {tg.round}, table {tg.table} ({tg.site}/{tg.table_id}, game {tg.game.game})"
        seats = tg.game.seats
        if len(seats) != 4 or any(s.points is None or s.result is None for s in seats):
            problems.append(f"{where}: the final ranking is incomplete")
            continue
        total = sum(s.points or 0 for s in seats)
        if total != 4 * rules.start_points:
            problems.append(f"{where}: the final points add up to {total}, not {4 * rules.start_points}")
        if sum(s.uma or 0 for s in seats) != 0:
            problems.append(f"{where}: the uma adds up to {sum(s.uma or 0 for s in seats)}, not 0")
        if sum(s.oka or 0 for s in seats) != rules.oka:
            problems.append(f"{where}: the oka adds up to {sum(s.oka or 0 for s in seats)}, not {rules.oka}")
        for s in seats:
            expected = (s.points or 0) - rules.return_points + (s.oka or 0) + (s.uma or 0) - (s.penalty or 0)
            if s.result != expected:
                problems.append(f"{where}, seat {s.seat} ({s.name}): result {s.result}, the rules give {expected}")
    seated = {(tg.round, p) for tg in st.tables for p in tg.players}
    for pen in st.penalties:
        if (pen.round, pen.player) not in seated:
            problems.append(f"penalty {pen.id}: player {pen.player} did not play round {pen.round}")
        if pen.points < 0:
            problems.append(f"penalty {pen.id}: {pen.points} points (a penalty takes points off)")
    check = sum(p.games_result for p in st.players)
    results = sum(s.result or 0 for tg in st.tables if tg.game and tg.game.finished for s in tg.game.seats)
    if check != results:
        problems.append(f"the players' game results add up to {check} and the games' to {results}")
    if sum(p.penalties for p in st.players) != sum(x.points for x in st.penalties):
        problems.append("the players' penalties and the penalties given differ")
    return problems


def _checked(st: Standings) -> None:
    problems = check_sums(st)
    if problems:
        raise TournamentError("the results do not sum as the rules say; nothing written:\n  " + "\n  ".join(problems))


def _rows(st: Standings) -> list[dict[str, Any]]:
    out = []
    for p in st.players:
        if p.place is None:
            continue
        first, last = p.player.first_last
        out.append({"place": p.place, "first name": first, "last name": last, "EMA number": p.player.ema_id or "",
                    "table points": _thousands(p.total), "score": _thousands(p.score),
                    "EMA member": "Y" if p.player.ema_id else "N", "country": p.player.country or ""})
    return out


@dataclass(frozen=True)
class MersWeight:
    """A tournament's MERS weight as the EMA's "Basics for ranking system" adds it up: duration (one a day,
    one to three days) + players (over 40: one half; over 80: one) + countries (6 to 9: one half; 10 or more:
    one) + qualification (one when players had to qualify). ``duration`` is None when the days are not known:
    then there is no total, only the parts the tournament's players give."""

    players: int
    countries: int
    players_weight: float
    countries_weight: float
    days: int | None
    qualification: bool

    @property
    def duration(self) -> float | None:
        return None if self.days is None else float(self.days)

    @property
    def total(self) -> float | None:
        if self.duration is None:
            return None
        return self.duration + self.players_weight + self.countries_weight + (1.0 if self.qualification else 0.0)

    def line(self) -> str:
        parts = (f"players {self.players} +{self.players_weight:g}, countries {self.countries} "
                 f"+{self.countries_weight:g}, qualification +{1 if self.qualification else 0}")
        if self.total is None:
            return f"MERS weight: {parts}; duration +1 a day of play (give --days 1, 2 or 3 for the total)"
        return f"MERS weight: {self.total:g} (duration {self.days} day(s) +{self.duration:g}, {parts})"


def mers_weight(players: int, countries: int, days: int | None = None, qualification: bool = False) -> MersWeight:
    """The MERS weight's parts; ``players`` counts the substitutes (three at most, as the EMA counts them)."""
    if days is not None and not 1 <= days <= 3:
        raise TournamentError(f"a MERS tournament lasts 1, 2 or 3 days, not {days}")
    pw = 1.0 if players > 80 else 0.5 if players > 40 else 0.0
    cw = 1.0 if countries >= 10 else 0.5 if countries >= 6 else 0.0
    return MersWeight(players, countries, pw, cw, days, qualification)


def tournament_weight(st: Standings, days: int | None = None, qualification: bool = False) -> MersWeight:
    """The MERS weight of ``st``'s tournament: its ranked players and up to three substitutes, and the
    countries they come from (as imported; a player without one adds none)."""
    ranked = [p.player for p in st.players if p.place is not None]
    subs = [p.player for p in st.players if p.player.status is PlayerStatus.SUBSTITUTE][:3]
    counted = ranked + subs
    countries = {(p.country or "").strip().upper() for p in counted} - {""}
    return mers_weight(len(counted), len(countries), days, qualification)


def provisional_line(st: Standings) -> str | None:
    """What marks a report written before the last round is finished; None for the final one."""
    if not st.provisional:
        return None
    return (f"PROVISIONAL: {st.finished_rounds} of {st.tournament.rounds} rounds finished; not the tournament's "
            "result")


def check_lines(st: Standings, days: int | None = None, qualification: bool = False) -> list[str]:
    """The sum check as printed with the report: the games that sum, the table points as game results less
    penalties, the players ranked with fewer games than the rounds; then the MERS weight."""
    games = [tg for tg in st.tables if tg.game is not None and tg.game.finished]
    ranked = [p for p in st.players if p.place is not None]
    results = sum(p.games_result for p in ranked)
    penalties = sum(p.penalties for p in ranked)
    chombo = sum(s.penalty or 0 for tg in games for s in tg.game.seats)  # type: ignore[union-attr]
    out = [f"check: {len(games)} game(s), each summing as the rules say ({st.tournament.rules})",
           f"check: table points {_thousands(results - penalties)} = game results {_thousands(results)} less "
           f"penalties {_thousands(penalties)} (the tables' own chombo penalties, {_thousands(chombo)}, are in the "
           "game results)"]
    short = [p for p in ranked if st.incomplete(p)]
    if short:
        out.append("ranked with fewer games than the rounds: " + ", ".join(
            f"{p.player.name} ({p.games} of {st.finished_rounds})" for p in short))
    subs = [p for p in st.players if p.place is None]
    if subs:
        out.append("not ranked (substitutes): " + ", ".join(f"{p.player.name} ({p.games} game(s))" for p in subs))
    out.append(tournament_weight(st, days, qualification).line())
    line = provisional_line(st)
    if line:
        out.append(line)
    return out


def ema_csv(st: Standings) -> str:
    """The EMA results report as CSV (after the sum check), every cell passed through :func:`spreadsheet_cell`."""
    _checked(st)
    buf = io.StringIO()
    line = provisional_line(st)  # a report before the last round is finished says so on its first line
    if line:
        buf.write(line + "\n")
    writer = csv.DictWriter(buf, fieldnames=list(EMA_COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: spreadsheet_cell(v) for k, v in row.items()} for row in _rows(st))
    return buf.getvalue()


def ema_json(st: Standings) -> str:
    """The same as JSON, with the tournament, the substitutes (not ranked) and every penalty."""
    _checked(st)
    t = st.tournament
    data = {
        "tournament": t.name, "rules": t.rules, "rounds": t.rounds, "tie_break": t.tie_break.value,
        "time_rule": t.time_rule, "minutes": t.minutes, "provisional": st.provisional,
        "finished_rounds": st.finished_rounds,
        "ranking": [row | {"games": p.games, "incomplete": st.incomplete(p)}
                    for row, p in zip(_rows(st), [p for p in st.players if p.place is not None], strict=True)],
        "not_ranked": [{"name": p.player.name, "EMA number": p.player.ema_id or "", "reason": "substitute",
                        "games": p.games, "table points": _thousands(p.total)}
                       for p in st.players if p.player.status is PlayerStatus.SUBSTITUTE],
        "penalties": st.to_dict()["penalties"],
    }
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def export_games(st: Standings, data_dirs: Mapping[tuple[str, str], Path], fmt: str, out: Path) -> tuple[
        list[Path], list[str]]:
    """Every finished game of the tournament as ``round-R-table-T.<fmt>`` under ``out``; the files written and
    what could not be (a table whose journals were not given, a game not among them, one the format cannot
    hold)."""
    from tablesvc.archive import list_games, to_record
    from tablesvc.formats.record import RecordError
    from tablesvc.replay import Mismatch, replay
    from tablesvc.storage.ids import game_id
    from tablesvc.storage.journal import JournalError

    if fmt == "mjai":
        from tablesvc.formats.mjai import export_mjai as write
        suffix = "mjai.jsonl"
    elif fmt == "tenhou6":
        from tablesvc.formats.tenhou6 import export_tenhou6 as write
        suffix = "tenhou6.json"
    else:
        raise TournamentError(f"unknown format {fmt!r}: mjai or tenhou6")
    out.mkdir(parents=True, exist_ok=True)
    kept: dict[tuple[str, str], dict[str, Any]] = {}
    written, missing = [], []
    for tg in st.tables:
        if tg.game is None or not tg.game.finished:
            continue
        where = f"round {tg.round}, table {tg.table} ({tg.site}/{tg.table_id})"
        key = (tg.site, tg.table_id)
        if key not in data_dirs:
            missing.append(f"{where}: no data directory given for {tg.site}/{tg.table_id}")
            continue
        if key not in kept:
            try:
                kept[key] = {game_id(g.started): g for g in list_games(data_dirs[key])
                             if g.started is not None and g.table == tg.table_id}
            except JournalError as exc:
                missing.append(f"{where}: {exc}")
                kept[key] = {}
                continue
        game = kept[key].get(tg.game.game)
        if game is None:
            missing.append(f"{where}: game {tg.game.game} is not among the journals of {data_dirs[key]}")
            continue
        try:
            record = to_record(game)
            text = write(record, replay(record))
        except (Mismatch, RecordError, ValueError) as exc:
            missing.append(f"{where}: cannot be written as {fmt}: {exc}")
            continue
        path = out / f"round-{tg.round}-table-{tg.table}.{suffix}"
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written, missing
