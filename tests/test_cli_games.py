"""``tablesvc games`` and ``tablesvc replay`` on a table's journals: every kept game read back as played."""

from __future__ import annotations

import csv
import io
import json

import pytest

from hardware_sims.generator import generate_game
from tablesvc.archive import list_games
from tablesvc.cli import main
from tablesvc.engine.events import Event
from tablesvc.storage.journal import Journal
from tablesvc.storage.table import Table
from tests.club_games import game_one, game_two


def _play(data_dir, table: str, events: list[Event], *, archive: bool, t0: float) -> None:
    journal = Journal.for_table(data_dir, table)
    game = Table(journal)
    for n, event in enumerate(events):
        game.submit(event, source="referee", ts=t0 + n)
    if archive:
        journal.archive()
    else:
        journal.close()


@pytest.fixture
def data_dir(tmp_path):
    d = tmp_path / "data"
    _play(d, "t1", game_one(), archive=True, t0=1_700_000_000)  # t1-1, finished
    _play(d, "t1", game_two()[:-1], archive=False, t0=1_700_010_000)  # t1, the hand over, not yet ended
    return d


def test_list_shows_each_kept_game_with_its_outcome(data_dir, capsys):
    assert main(["games", "list", "--data-dir", str(data_dir), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["id"], r["table"], r["finished"], r["hands"]) for r in rows] == [
        ("t1-1", "t1", True, 1), ("t1", "t1", False, 1)]
    assert rows[0]["players"] == ["Ann", "Bob", "Cat", "Dan"]
    assert rows[0]["started"] == "2023-11-14T22:13:20+00:00"
    assert main(["games", "list", "--data-dir", str(data_dir)]) == 0
    text = capsys.readouterr().out.splitlines()
    # Cat 1st +32000, Ann and Dan share 2nd (uma 0), Bob 4th -32000 (tests/club_games.py)
    assert text[0].startswith("t1-1 ") and text[0].endswith("1. Cat +32000, 2. Ann +0, 2. Dan +0, 4. Bob -32000")
    assert text[1].endswith("in play")


def test_show_names_every_hand_and_the_ranking(data_dir, capsys):
    assert main(["games", "show", "t1-1", "--data-dir", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert "players: E Ann, S Bob, W Cat, N Dan" in out
    assert "E1-0  Cat ron from Bob: 2 han 30 fu (Pinfu 1, Tanyao 1)" in out
    assert "1. Cat" in out and "result +32000" in out and "4. Bob" in out and "result -32000" in out


def test_export_json_and_csv_carry_names_rules_hands_and_uma(data_dir, tmp_path, capsys):
    out = tmp_path / "g.json"
    assert main(["games", "export", "t1-1", "--format", "json", "--out", str(out), "--data-dir", str(data_dir)]) == 0
    game = json.loads(out.read_text())
    assert (game["rules"], game["players"], game["finished"]) == ("ema2012", ["Ann", "Bob", "Cat", "Dan"], True)
    (hand,) = game["hands"]
    assert (hand["hand"], hand["deltas"], hand["wins"][0]["seat"], hand["wins"][0]["from"]) == (
        "E1-0", [0, -2000, 2000, 0], 2, 1)
    assert [(r["name"], r["place"], r["uma"], r["result"]) for r in game["final"]["ranking"]] == [
        ("Cat", 1, 30000, 32000), ("Ann", 2, 0, 0), ("Dan", 2, 0, 0), ("Bob", 4, -30000, -32000)]
    assert main(["games", "export", "t1-1", "--format", "csv", "--data-dir", str(data_dir)]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0][:8] == ["row", "hand", "result", "summary", "Ann", "Bob", "Cat", "Dan"]
    assert rows[1][4:] == ["0", "-2000", "2000", "0", "30000", "28000", "32000", "30000"]
    assert rows[2][0] == "final" and rows[2][4:8] == ["0", "-32000", "32000", "0"]
    assert rows[3][0] == "place" and rows[3][4:8] == ["2", "4", "1", "2"]


def test_an_unknown_game_is_named_with_the_known_ones(data_dir, capsys):
    assert main(["games", "show", "t9", "--data-dir", str(data_dir)]) == 1
    err = capsys.readouterr().err
    assert "no game 't9'" in err and "t1-1" in err


def test_a_whole_game_exports_and_replays_exactly(tmp_path, capsys):
    """A generated full game kept by a table: replayed from its journal, and through both exports."""
    record = generate_game(21)
    d = tmp_path / "data"
    _play(d, "t2", record.events, archive=True, t0=1_700_000_000)
    (kept,) = list_games(d)
    assert kept.finished and kept.final is not None
    journal = d / "t2-1.sqlite3"
    assert main(["replay", str(journal), "--json"]) == 0
    rules, *lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert rules["rules_from"] == "record"  # the journal's start_game names its rules
    assert [h["deltas"] for h in lines[:-1]] == [list(h.deltas) for h in kept.hands]
    assert lines[-1]["final_scores"] == list(kept.final.scores)
    for fmt in ("mjai", "tenhou6"):
        out = tmp_path / f"g.{fmt}"
        assert main(["games", "export", "t2-1", "--format", fmt, "--out", str(out), "--data-dir", str(d)]) == 0
        assert main(["replay", str(out), "--strict", "--json"]) == 0, capsys.readouterr().err
        rules, *replayed = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
        assert rules["rules_from"] == "record"  # both exports name the rules the game was played under
        assert replayed[-1]["final_scores"] == list(kept.final.scores)
        assert [h["deltas"] for h in replayed[:-1]] == [list(h.deltas) for h in kept.hands]


def test_the_data_directory_comes_from_the_tables_configuration(data_dir, tmp_path, capsys):
    config = tmp_path / "table.toml"
    config.write_text('[table]\nsite = "club"\nid = "t1"\ndata_dir = "data"\n[mqtt]\nurl = "mqtt://127.0.0.1"\n')
    assert main(["games", "list", "--config", str(config), "--json"]) == 0  # data_dir relative to the file
    assert [json.loads(x)["id"] for x in capsys.readouterr().out.splitlines()] == ["t1-1", "t1"]
    assert main(["games", "list", "--data-dir", str(tmp_path / "nowhere")]) == 1
    assert "no such data directory" in capsys.readouterr().err


def test_kept_games_are_imported_into_the_records_once(data_dir, tmp_path, capsys):
    pytest.importorskip("sqlalchemy", reason="the records extra is not installed")
    from tablesvc.records.records_db import RecordsStore
    from tablesvc.records.standings import club_standings

    db = str(tmp_path / "records.sqlite3")
    for _ in range(2):
        assert main(["records", "import", "--data-dir", str(data_dir), "--site", "club", "--db", db]) == 0
        assert capsys.readouterr().out.startswith("1 finished game(s) of ")
    with RecordsStore(db) as store:
        (game,) = store.games(finished_only=False)
        assert (game.site, game.table, game.game) == ("club", "t1", "2023-11-14T22:13:20.000+00:00")
        # tests/club_games.py game one: Cat +32000, Ann and Dan 0, Bob -32000
        assert [(p.name, p.total) for p in club_standings(store).players] == [
            ("Cat", 32000), ("Ann", 0), ("Dan", 0), ("Bob", -32000)]
    assert main(["records", "import", "--data-dir", str(data_dir), "--db", db]) == 2
