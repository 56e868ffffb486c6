"""The tournament's data: import, seating, refusals that change nothing, standings from the collected games,
penalties, the EMA export and its sum check; through the ``tournament`` command on SQLite and PostgreSQL.

The games are written into the records as the collector writes them (the
final ranking computed by the rules' own ``final_standings``); the whole
hall on simulated tables over MQTT is tests/test_tournament_day.py.
"""

from __future__ import annotations

import csv
import io
import json
import random
from datetime import UTC, datetime, timedelta

import pytest

from tablesvc.cli import main
from tablesvc.records.records_db import GameInfo, RecordsStore
from tablesvc.rules.payments import final_standings
from tablesvc.rules.ruleset import get_ruleset
from tablesvc.tournament.actions import current_standings
from tablesvc.tournament.export import check_sums, ema_csv
from tablesvc.tournament.hall import start_round
from tablesvc.tournament.model import PlayerStatus, RoundStatus, TournamentError
from tablesvc.tournament.tournament_db import TournamentStore

PLAYERS_CSV = "Name,EMA id,Club,Country\n" + "\n".join(
    f"Player {chr(65 + i)}{' Smith' if i % 3 == 0 else ''},{10000000 + i},Club {i % 4},{'FR' if i % 2 else 'DE'}"
    for i in range(16)) + "\n"


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "records.sqlite3")
    return request.getfixturevalue("postgres_url")


def run(capsys, db, *argv) -> tuple[int, str, str]:
    code = main(["tournament", *argv, "--db", db])
    out = capsys.readouterr()
    return code, out.out, out.err


def play_game(records: RecordsStore, site: str, table: str, names, scores, started: datetime, rules="ema2016"):
    """A finished game as the collector writes it from the feed's game_result."""
    standings = final_standings(scores, get_ruleset(rules))
    ranking = [{"seat": s.seat, "name": names[s.seat], "place": s.place, "points": s.points, "uma": s.uma,
                "oka": s.oka, "penalty": s.penalty, "result": s.result} for s in standings]
    info = GameInfo(started.isoformat(timespec="milliseconds"), tuple(names), rules)
    records.record_final(site, table, info, {"ranking": ranking, "leftover_sticks": 0, "seq": 99})


def scores_for(rng: random.Random) -> list[int]:
    a, b, c = rng.randrange(-50, 80) * 100, rng.randrange(-50, 80) * 100, rng.randrange(-50, 80) * 100
    return [30000 + a, 30000 + b, 30000 + c, 30000 - a - b - c]


def test_a_tournament_through_the_command_line(db, tmp_path, capsys):
    players = tmp_path / "players.csv"
    players.write_text(PLAYERS_CSV)
    assert run(capsys, db, "create", "Autumn Open", "--rounds", "3", "--rules", "ema2016", "--minutes", "75",
               "--time-rule", "ema")[0] == 0
    code, out, _ = run(capsys, db, "import-players", str(players))
    assert code == 0 and "16 player(s) added" in out
    assert run(capsys, db, "tables", "--site", "hall", "--count", "4")[0] == 0
    code, out, _ = run(capsys, db, "seating", "--all")
    assert code == 0 and "repeat meetings: 0" in out and out.count("table   1 (hall/t1)") == 3

    records = RecordsStore(db)
    store = TournamentStore(records)
    tid, t = store.find()
    assert (t.minutes, t.time_rule) == (75, "ema")  # the clock's rule is part of the tournament's rules
    rng = random.Random(4)
    names = {p.number: p.name for p in store.players(tid)}
    for number in (1, 2, 3):
        r = store.round(tid, number)
        store.begin_start(tid, number)
        started = datetime.now(UTC) + timedelta(seconds=number)
        store.mark_started(tid, number, [1, 2, 3, 4], [], (started - timedelta(seconds=1)).isoformat(
            timespec="seconds"))
        for i, four in enumerate(r.seating.tables, 1):
            play_game(records, "hall", f"t{i}", [names[p] for p in four], scores_for(rng), started)
        if number == 2:
            victim = r.seating.tables[1][2]
            code, out, _ = run(capsys, db, "penalty", str(victim), "4000", "--reason", "slow play", "--hand",
                               "S2-0", "--table", "2")
            assert code == 0, out
            code, _, err = run(capsys, db, "penalty", str(victim), "4000", "--reason", "again", "--table", "3")
            assert code == 1 and f"{names[victim]} is not at table 3 in round 2: they play at table 2" in err
            assert run(capsys, db, "warning", names[r.seating.tables[0][0]], "--reason", "phone")[0] == 0
        assert run(capsys, db, "finish-round", str(number))[0] == 0
    code, _, err = run(capsys, db, "penalty", "1", "1000", "--reason", "late", "--round", "3")
    assert code == 1 and "round 3 is finished" in err
    st = current_standings(store, tid)
    assert all(tg.status == "finished" for tg in st.tables) and len(st.tables) == 12
    assert check_sums(st) == []
    # the totals: each player's three game results less the penalty, recomputed here from the records
    games = {(g.table, tuple(s.name for s in g.seats)): g for g in records.games()}
    for row in st.players:
        results = [s.result for g in games.values() for s in g.seats if s.name == row.player.name]
        assert len(results) == 3 == row.games
        assert row.total == sum(results) - (4000 if row.player.number == victim else 0)
    assert [p.total for p in st.players] == sorted((p.total for p in st.players), reverse=True)
    assert sum(p.games_result for p in st.players) == sum(s.result for g in games.values() for s in g.seats)
    # a referee's amend at table 1 of round 3: the collector writes the game again, the standings follow
    r3 = store.round(tid, 3)
    game3 = next(tg.game for tg in st.tables if (tg.round, tg.table) == (3, 1))
    before = {p.player.number: p.total for p in st.players}
    corrected = [40000, 30000, 30000, 20000]
    play_game(records, "hall", "t1", [names[p] for p in r3.seating.tables[0]], corrected,
              datetime.fromisoformat(game3.game))
    st = current_standings(store, tid)
    after = {p.player.number: p.total for p in st.players}
    old = {s.seat: s.result for s in game3.seats}
    new = {s.seat: s.result for s in next(tg.game for tg in st.tables if (tg.round, tg.table) == (3, 1)).seats}
    assert new != old and len([tg for tg in st.tables if tg.game]) == 12  # the same game, rewritten
    for seat, p in enumerate(r3.seating.tables[0]):
        assert after[p] - before[p] == new[seat] - old[seat]
    code, out, _ = run(capsys, db, "export", "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == ["place", "first name", "last name", "EMA number", "table points", "score", "EMA member",
                             "country"]
    assert [r["last name"] for r in rows][:1] == [st.players[0].player.first_last[1]]
    assert {r["EMA number"] for r in rows} == {str(10000000 + i) for i in range(16)}
    assert [float(r["table points"]) for r in rows] == [round(p.total / 1000, 1) for p in st.players]
    data = json.loads(run(capsys, db, "export", "--json")[1])
    assert data["time_rule"] == "ema" and len(data["penalties"]) == 2
    code, out, _ = run(capsys, db, "standings")
    assert code == 0 and "1 warning(s)" in out
    code, _, err = run(capsys, db, "start-round", "1", "--broker", "mqtt://127.0.0.1:1")
    assert code == 1 and "round 1 is finished" in err
    records.close()


def test_bad_input_is_refused_naming_the_row_and_nothing_is_half_applied(db, tmp_path, capsys):
    assert run(capsys, db, "create", "Club Cup", "--rounds", "2")[0] == 0
    bad = tmp_path / "players.csv"
    bad.write_text("name;ema;club\nAnn Lee;04010001;A\nBo Chen;04010002;B\nCy Dahl;04010001;C\n")
    code, _, err = run(capsys, db, "import-players", str(bad))
    assert code == 1 and "line 4 (Cy Dahl): EMA id 04010001 is on line 2 already" in err
    code, out, _ = run(capsys, db, "players")
    assert out == ""  # none of the file was added
    good = tmp_path / "good.csv"
    good.write_text("\n".join(["First name,Last name,EMA number"] + [f"P{i},Q{i},{i}" for i in range(8)]) + "\n")
    assert run(capsys, db, "import-players", str(good))[0] == 0
    again = tmp_path / "again.csv"
    again.write_text("name,ema id\nNew One,77\nOld Two,3\n")
    code, _, err = run(capsys, db, "import-players", str(again))
    assert code == 1 and "line 3: EMA id 3 is already player 4 (P3 Q3)" in err
    assert len(run(capsys, db, "players")[1].splitlines()) == 8
    hall = tmp_path / "hall.csv"
    hall.write_text("site,table\nhall,a\nhall,a\n")
    code, _, err = run(capsys, db, "tables", "--file", str(hall))
    assert code == 1 and "table 2 (hall/a) is table 1 already" in err
    hall.write_text("site,table\nhall,a\nhall,b\n")
    code, out, _ = run(capsys, db, "tables", "--file", str(hall))
    assert code == 0 and out == "table   1: hall/a\ntable   2: hall/b\n"
    seating = tmp_path / "seating.csv"
    seating.write_text("round,table,east,south,west,north\n1,1,1,2,3,4\n1,2,5,6,7,P1 Q1\n")
    code, _, err = run(capsys, db, "seating", "--file", str(seating))
    assert code == 1 and "line 3: P1 Q1 is seated twice in round 1 (line 2 too)" in err
    assert run(capsys, db, "seating", "--show")[1].startswith("0 round(s)")  # nothing seated
    seating.write_text("round,table,east,south,west,north\n1,1,1,2,3,4\n1,2,5,6,7,8\n")
    assert run(capsys, db, "seating", "--file", str(seating))[0] == 0
    records = RecordsStore(db)
    store = TournamentStore(records)
    tid, _ = store.find()
    store.mark_started(tid, 1, [1], [2], datetime.now(UTC).isoformat(timespec="seconds"))
    with pytest.raises(TournamentError, match=r"round 1 was started at .* a round is started once"):
        store.begin_start(tid, 1)
    _, pending = store.begin_start(tid, 1, retry=True)
    assert pending == [2]
    before = store.rounds(tid)
    with pytest.raises(TournamentError, match="round 1 has started: its seating is kept"):
        store.save_seating(tid, 1, before[0].seating, before[0].method)
    with pytest.raises(TournamentError, match="is playing in a started round"):
        store.withdraw(tid, "P1 Q1")
    assert store.rounds(tid) == before and store.player(tid, 2).status is PlayerStatus.ACTIVE
    store.finish_round(tid, 1)
    with pytest.raises(TournamentError, match="round 1 is finished: it cannot be started again"):
        store.begin_start(tid, 1)
    # between rounds: a substitute takes a seat in the seated round 2
    run(capsys, db, "seating", "--round", "2")
    code, out, _ = run(capsys, db, "substitute", "P1 Q1", "Sam Sub", "--ema-id", "999")
    assert code == 0 and "not ranked" in out
    r2 = store.round(tid, 2)
    sub = store.player(tid, "Sam Sub")
    assert sub.number in r2.seating.players() and 2 not in r2.seating.players() and r2.status is RoundStatus.SEATED
    st = current_standings(store, tid)
    assert [p.place for p in st.players if p.player.status is PlayerStatus.SUBSTITUTE] == [None]
    report = ema_csv(st)
    assert report.startswith("PROVISIONAL: 1 of 2 rounds finished")  # round 2 is still to play
    assert report.count("\n") == 2 + 8  # the mark, the header and the eight ranked (the withdrawn one still is)
    # a player withdraws between rounds: round 2 keeps its seating and the seat waits for the substitute the
    # printed hint names; start-round refuses until it is filled
    before = store.round(tid, 2).seating
    leaving = before.tables[1][2]
    code, out, _ = run(capsys, db, "withdraw", str(leaving))
    hint = out.strip().splitlines()[-1].split(": ", 1)[1]
    assert code == 0 and hint == f"tablesvc tournament --db {db} add NAME --substitute {leaving}"
    assert store.round(tid, 2).seating == before
    with pytest.raises(TournamentError, match=rf"has withdrawn and the seat waits: tablesvc tournament add NAME "
                                              rf"--substitute {leaving}"):
        start_round(store, tid, 2, None)  # type: ignore[arg-type]  # refused before the hall is asked
    args = hint.split()[4:]  # as printed, after "tablesvc tournament --db DB"
    code, out, _ = run(capsys, db, *[("Tia Sub" if a == "NAME" else a) for a in args], "--first-name", "Tia",
                       "--last-name", "van Sub")
    assert code == 0 and "takes the seat of" in out
    tia = store.player(tid, "Tia Sub")
    after = store.round(tid, 2).seating
    assert after.tables[1][2] == tia.number and tia.replaces == leaving
    assert [p for t in after.tables for p in t if p != tia.number] == [p for t in before.tables for p in t
                                                                       if p != leaving]
    assert tia.first_last == ("Tia", "van Sub")
    records.close()
