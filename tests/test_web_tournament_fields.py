"""A referee's tournament calls over real HTTP with fields JSON allows but the tournament does not: each is
refused (400) by name, in words, before anything is stored; never a 500, never taken as something else."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from tablesvc.cli import main
from tablesvc.records.records_db import RecordsStore
from tablesvc.tournament.tournament_db import TournamentStore
from tests import web_support
from tests.test_web_guard import ACCOUNTS, ANN, Client
from tests.web_support import start_web

broker = web_support.broker

PLAYERS = "Name,EMA id,Club,Country\n" + "\n".join(f"Player {chr(65 + i)},,Club,FR" for i in range(8)) + "\n"


@pytest.fixture(scope="module")
def referee(broker, tmp_path_factory):
    """A web server over a tournament whose round 1 is in play, and a signed-in referee's call."""
    work = tmp_path_factory.mktemp("fields")
    db = str(work / "records.sqlite3")
    (work / "players.csv").write_text(PLAYERS)
    for argv in (["create", "Open", "--rounds", "2", "--rules", "ema2016"],
                 ["import-players", str(work / "players.csv")], ["tables", "--site", "hall", "--count", "2"],
                 ["seating", "--all"]):
        assert main(["tournament", *argv, "--db", db]) == 0
    store = TournamentStore(RecordsStore(db))
    tid = store.find()[0]
    store.begin_start(tid, 1)
    store.mark_started(tid, 1, [1, 2], [], datetime.now(UTC).isoformat(timespec="seconds"))
    web = start_web(broker.url, accounts=ACCOUNTS, records_db=db)
    ann = Client(web.url)
    assert ann.sign_in("Ann", ANN)[0] == 303
    headers = {"Content-Type": "application/json", "X-CSRF-Token": ann.session()["csrf"]}

    def call(path: str, body: bytes) -> tuple[int, str]:
        status, _, text = ann.request(f"/api/tournament/{path}", body, headers)
        return status, text

    yield call, store, tid
    web.stop()


@pytest.mark.parametrize(("path", "body", "named"), [
    ("start-round", b'{"round": 1e400}', "'round' is a whole number from 1 to 100"),
    ("start-round", b'{"round": 2, "timeout": "soon"}', "'timeout' is a whole number from 1 to 120"),
    ("penalty", b'{"player": 1, "points": true, "reason": "slow"}', "'points' is a whole number from 0 to"),
    ("penalty", b'{"player": 1, "points": 1.5, "reason": "slow"}', "'points' is a whole number from 0 to"),
    ("penalty", b'{"player": 1, "points": 1000, "round": -1e400}', "'round' is a whole number from 1 to 100"),
    ("penalty", b'{"player": 1, "points": 1000, "reason": "' + b"x" * 60000 + b'"}',
     "'reason' is at most 500 characters, not 60000"),
    ("penalty", b'{"site": "hall", "table": "t1", "seat": 7, "points": 1000}', "'seat' is a whole number from 0 to 3"),
    ("time", b'{"table": 1, "extend": "x"}', "'extend' is a whole number from -600 to 600"),
    ("time", b'{"extend": 5}', "'table' is needed"),
    ("finish-round", b'{"round": true}', "'round' is a whole number from 1 to 100"),
    ("finish-round", b"{}", "'round' is needed"),
    ("clock", b'{"minutes": 1e400}', "'minutes' is a whole number from 1 to 600"),
    ("withdraw", b"{}", "withdraw needs 'player'"),
])
def test_a_field_out_of_its_kind_is_refused_by_name(referee, path, body, named):
    call, store, tid = referee
    before = (store.penalties(tid), store.rounds(tid))
    status, text = call(path, body)
    assert status == 400, (status, text[:300])
    assert named in json.loads(text)["error"], text[:300]
    assert "invalid literal" not in text and "Traceback" not in text
    assert (store.penalties(tid), store.rounds(tid)) == before


def test_a_penalty_within_its_kinds_is_still_given(referee):
    call, store, tid = referee
    status, text = call("penalty", b'{"player": 1, "points": "2000", "reason": "' + b"r" * 500 + b'"}')
    assert status == 200, text[:300]
    assert json.loads(text)["data"]["points"] == 2000
    assert store.penalties(tid)[-1].reason == "r" * 500
