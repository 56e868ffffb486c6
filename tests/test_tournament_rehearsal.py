"""The organiser's rehearsal, as the issue's "done when" puts it: a 16-player, 2-round tournament from a CSV
with separate first and last names (accents, particles, compound surnames) is seated, rehearsed with
``tablesvc tournament --db DB rehearse --speed 0`` (a broker of its own, four table services fed by the table
simulator, the records collector, the web server and the real start-round) and exported: the names exactly as
imported, no text cell a spreadsheet would run as a formula, all 16 ranked with 2 games, the table points
adding up to the games' results."""

from __future__ import annotations

import csv
import io
from datetime import datetime

import pytest

pytest.importorskip("sqlalchemy", reason="the records extra is not installed (pip install -e '.[test]')")

from tablesvc.cli import main
from tablesvc.records.records_db import RecordsStore
from tablesvc.storage.journal import Journal
from tablesvc.tournament.tournament_db import TournamentStore

PLAYERS = [("Niamh", "Ó Briain", "10990001", "Dublin", "IE"), ("Pieter", "van den Berg", "31990002", "Utrecht", "NL"),
           ("Ana", "García Peña", "18990003", "Madrid", "ES"), ("Jean-Luc", "Le Goff", "09990004", "Brest", "FR"),
           ("Zoë", "Müller-Lüdenscheidt", "27990005", "Köln", "DE"), ("Søren", "Østergaard", "14990006", "Aarhus",
                                                                       "DK"),
           ("Ilse", "de la Cruz", "31990007", "Leiden", "NL"), ("Łukasz", "Wójcik", "13990008", "Kraków", "PL"),
           ("Ana", "Lima", "11990009", "Porto", "PT"), ("Yūki", "Satō", "", "Tokyo", "JP"),
           ("Mary", "O'Neill", "10990011", "Cork", "IE"), ("José María", "Álvarez", "18990012", "Sevilla", "ES"),
           ("Ines", "Costa", "11990013", "Lisboa", "PT"), ("Olga", "Petrova", "17990014", "Kyiv", "UA"),
           ("Jan", "Novák", "12990015", "Praha", "CZ"), ("Bram", "de Vries", "31990016", "Delft", "NL")]


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(["tournament", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_two_round_tournament_rehearsed_and_exported_as_imported(tmp_path, capsys):
    db = str(tmp_path / "open.sqlite3")
    players = tmp_path / "players.csv"
    players.write_text("first name;last name;EMA number;club;country\n"
                       + "".join(";".join(p) + "\n" for p in PLAYERS), encoding="utf-8")
    assert run(capsys, "--db", db, "create", "Rehearsal Open", "--rules", "ema2016", "--rounds", "2",
               "--minutes", "75")[0] == 0
    assert run(capsys, "--db", db, "import-players", str(players))[0] == 0
    assert run(capsys, "--db", db, "tables", "--site", "hall", "--count", "4")[0] == 0
    code, out, _ = run(capsys, "--db", db, "seating", "--all")
    assert code == 0 and "repeat meetings: 0 " in out and "WARNING" not in out

    code, _, err = run(capsys, "--db", db, "rehearse", "--phones", "5")
    assert code == 1 and "the hall has 4 table(s); 0 to 4 of them can be phone tables" in err, err
    journals = tmp_path / "journals"
    code, out, err = run(capsys, "--db", db, "rehearse", "--speed", "0", "--phones", "2", "--data-dir", str(journals))
    assert code == 0, err
    assert "rehearsed round(s) 1, 2: 8 game(s)" in out
    # the first two tables were phone tables: their hands entered by their results from the phones; the other two
    # played tile by tile
    store = TournamentStore(RecordsStore(db))
    try:
        hall = sorted(store.tables(store.find()[0]), key=lambda h: h.number)
    finally:
        store.records.close()
    for h in hall:
        path = next(p for p in (journals / h.site / h.table_id).glob("*.sqlite3") if "broadcast" not in p.name)
        journal = Journal(path)
        try:
            entries = list(journal.entries())
        finally:
            journal.close()
        phones = {e.kind for e in entries if e.source == "referee:phone"}
        assert (phones >= {"win_entry"}) == (h.number <= 2), (h.number, phones)
        assert any(e.kind == "discard" for e in entries) == (h.number > 2), h.number
    assert "/tournament  (referee password for this rehearsal: " in out  # the pages were up while it played
    hint = next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("next: "))
    code, standings, _ = run(capsys, *hint.split()[2:])  # the printed next step, as printed
    assert code == 0 and "provisional" not in standings

    out_file = tmp_path / "results.csv"
    code, _, err = run(capsys, "--db", db, "export", "--csv", "--out", str(out_file), "--days", "1")
    assert code == 0
    text = out_file.read_text(encoding="utf-8")
    assert not text.startswith("PROVISIONAL")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert sorted((r["first name"], r["last name"], r["EMA number"], r["country"]) for r in rows) == \
        sorted((first, last, ema, country) for first, last, ema, _club, country in PLAYERS)
    for r in rows:
        for cell in r.values():
            try:
                float(cell)
            except ValueError:
                assert not cell.startswith(("=", "+", "-", "@")), r  # a text cell a spreadsheet would run
    assert sorted(int(r["place"]) for r in rows) == list(range(1, 17))
    # every player ranked with both games; the table points are the games' results (no penalty was given)
    store = TournamentStore(RecordsStore(db))
    try:
        from tablesvc.tournament.actions import current_standings

        tid = store.find()[0]
        st = current_standings(store, tid)
        assert [p.games for p in st.players] == [2] * 16 and not st.provisional
        for r in store.rounds(tid):  # one deadline per round, 75 minutes after it was started, for every table
            assert r.deadline is not None and r.deadline.endswith("Z")
            assert (datetime.fromisoformat(r.deadline) - datetime.fromisoformat(r.started_at)).total_seconds() \
                == 75 * 60
        games = [tg.game for tg in st.tables]
        assert len(games) == 8 and all(g is not None and g.finished and g.rules == "ema2016" for g in games)
        by_name = {f"{r['first name']} {r['last name']}": r for r in rows}
        for p in st.players:
            results = [s.result for g in games for s in g.seats if s.name == p.player.name]
            assert len(results) == 2
            assert by_name[p.player.name]["table points"] == f"{sum(results) / 1000:.1f}"
    finally:
        store.records.close()
    assert sum(round(float(r["table points"]) * 10) for r in rows) == 0  # ema2016: no oka, the uma sums to 0
    assert "check: 8 game(s), each summing as the rules say (ema2016)" in err
    assert "check: table points 0.0 = game results 0.0 less penalties 0.0" in err
    countries = len({p[4] for p in PLAYERS})  # the MERS weight: one day, 16 players (+0), the countries imported
    country_weight = 1.0 if countries >= 10 else 0.5 if countries >= 6 else 0.0
    assert f"MERS weight: {1 + country_weight:g} (duration 1 day(s) +1, players 16 +0, countries {countries} " \
        f"+{country_weight:g}, qualification +0)" in err
