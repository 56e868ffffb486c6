"""Players' names are one line of visible text: a name, club or country with ESC, NUL or another control
character is refused by name and line, a quote left open is named as such (not read as a name swallowing
the lines after it), and ``tournament players`` never writes a raw escape to the terminal."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from tablesvc.cli import main
from tablesvc.records.records_db import RecordsStore
from tablesvc.records.schema import tournament_players
from tablesvc.tournament.model import TournamentError
from tablesvc.tournament.tournament_db import NewPlayer, TournamentStore

GOOD = "Ann,FR\nBob,DE\n"


@pytest.fixture
def db(tmp_path, capsys):
    url = str(tmp_path / "records.sqlite3")
    assert main(["tournament", "create", "Open", "--rounds", "1", "--rules", "ema2016", "--db", url]) == 0
    capsys.readouterr()
    return url


def _import(db, tmp_path, capsys, text: str) -> tuple[int, str]:
    path = tmp_path / "players.csv"
    path.write_bytes(text.encode("utf-8"))
    code = main(["tournament", "import-players", str(path), "--db", db])
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize(("row", "named"), [
    ("Eve\x1b[2J\x1b[31m,FR", "line 4: the name holds a control character (U+001B)"),
    ("Eve\x00Null,FR", "line 4: the name holds a control character (U+0000)"),
    ("Eve,F\x07R", "line 4: the country holds a control character (U+0007)"),
    ('"Eve,FR', "a quote is not closed"),
])
def test_a_name_with_a_control_character_or_an_open_quote_is_refused_and_nothing_added(db, tmp_path, capsys, row,
                                                                                       named):
    code, out = _import(db, tmp_path, capsys, "Name,Country\n" + GOOD + row + "\nZed,FR\n")
    assert code == 1 and named in out, out
    store = TournamentStore(RecordsStore(db))
    assert store.players(store.find()[0]) == []


def test_renaming_and_adding_check_the_same(db):
    store = TournamentStore(RecordsStore(db))
    tid = store.find()[0]
    store.add_players(tid, [NewPlayer("Ann")])
    with pytest.raises(TournamentError, match="U\\+001B"):
        store.add_players(tid, [NewPlayer("Bob", club="\x1b]0;owned\x07")])
    with pytest.raises(TournamentError, match="a line break"):
        store.rename(tid, "Ann", "Ann\nSmith")
    assert [p.name for p in store.players(tid)] == ["Ann"]


def test_a_name_stored_before_names_were_checked_is_listed_escaped(db, tmp_path, capsys):
    assert _import(db, tmp_path, capsys, "Name,Country\n" + GOOD)[0] == 0
    records = RecordsStore(db)
    with records.engine.begin() as conn:  # as an older tablesvc stored it
        conn.execute(update(tournament_players).where(tournament_players.c.name == "Bob")
                     .values(name="Bob\x1b[2J\x1b[31m"))
    assert main(["tournament", "players", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "Bob\\x1b[2J\\x1b[31m" in out
