"""One clock per round on real table services: start-round sends every table the round's one deadline, a
table started late with --retry gets the same one, an extension changes that table's clock only, and time is
called for the whole hall in one command. Two table services on a real Mosquitto, the tournament in SQLite."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("sqlalchemy", reason="the records extra is not installed (pip install -e '.[test]')")

from tablesvc.cli import main
from tablesvc.config import parse_config
from tablesvc.engine.clock import parse_deadline
from tablesvc.records.records_db import RecordsStore
from tablesvc.service import TableService
from tablesvc.tournament.tournament_db import TournamentStore
from tests import web_support
from tests.test_web_referee import Client
from tests.web_support import REFEREE_PASSWORD, start_web

broker = web_support.broker


def run(capsys, db, *argv) -> tuple[int, str, str]:
    code = main(["tournament", "--db", db, *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_one_deadline_per_round_and_time_for_the_whole_hall(broker, tmp_path, capsys):
    db = str(tmp_path / "cup.sqlite3")
    assert run(capsys, db, "create", "Clock Cup", "--rounds", "1", "--minutes", "75")[0] == 0
    for i in range(8):
        assert run(capsys, db, "add", f"Player {i + 1}")[0] == 0
    assert run(capsys, db, "tables", "--site", "hall", "--count", "2")[0] == 0
    assert run(capsys, db, "seating", "--all")[0] == 0
    services = []
    try:
        for t in ("t1", "t2"):
            config = parse_config(f'[table]\nsite = "hall"\nid = "{t}"\ndata_dir = "{tmp_path / t}"\n'
                                  f'[mqtt]\nurl = "{broker.url}"\n')
            services.append(TableService(config, new_game=True))
        services[0].start()
        assert services[0].link.wait_ready(15)
        code, out, _ = run(capsys, db, "start-round", "1", "--broker", broker.url, "--timeout", "3")
        assert code == 1 and "table 2 (hall/t2): NOT STARTED" in out
        services[1].start()  # the late table
        assert services[1].link.wait_ready(15)
        code, out, _ = run(capsys, db, "start-round", "1", "--retry", "--broker", broker.url)
        assert code == 0 and "table 2 (hall/t2): started" in out
        assert services[0].wait_idle(10) and services[1].wait_idle(10)
        clocks = [s.table.state.clock for s in services]
        store = TournamentStore(RecordsStore(db))
        try:
            r = store.round(store.find()[0], 1)
        finally:
            store.records.close()
        assert clocks[0].deadline == clocks[1].deadline == parse_deadline(r.deadline)  # the round's, not a fresh one

        code, out, _ = run(capsys, db, "time", "2", "--extend", "5", "--broker", broker.url)
        assert (code, out) == (0, "round 1, table 2: 5 minute(s) more\n")
        assert services[1].wait_idle(10)
        clocks = [s.table.state.clock for s in services]
        assert (clocks[0].extended, clocks[1].extended) == (0, 5)
        assert clocks[1].deadline - clocks[0].deadline == 300  # that table's card only

        code, out, _ = run(capsys, db, "time", "all", "--time-up", "--reason", "the hall's time", "--broker",
                           broker.url)
        assert (code, out) == (0, "time up at 2 table(s): 1, 2\n")
        assert services[0].wait_idle(10) and services[1].wait_idle(10)
        assert all(s.table.state.clock.time_up for s in services)
        code, out, _ = run(capsys, db, "time", "all", "--time-up", "--broker", broker.url)  # twice: said, not hidden
        assert code == 1 and out.count("NOT CALLED") == 2 and "time is already up" in out
        # the same one action from the referee's page: the web server's call, each table's answer listed
        web = start_web(broker.url, records_db=db)
        try:
            referee = Client(web.url)
            assert referee.sign_in(REFEREE_PASSWORD)[0] in (200, 303)
            csrf = json.loads(referee.get("/api/session"))["csrf"]
            status, text = referee.post("/api/tournament/time", json.dumps({"table": "all", "time_up": True}).encode(),
                                        {"Content-Type": "application/json", "X-CSRF-Token": csrf})
            reply = json.loads(text)
            assert status == 200 and reply["data"]["time_up"] == [] and sorted(reply["data"]["refused"]) == ["1", "2"]
            status, text = referee.post("/api/tournament/time", json.dumps({"table": "all", "extend": 5}).encode(),
                                        {"Content-Type": "application/json", "X-CSRF-Token": csrf})
            assert status == 409 and "time_up only" in json.loads(text)["error"]
        finally:
            web.stop()
    finally:
        for s in services:
            s.stop()
