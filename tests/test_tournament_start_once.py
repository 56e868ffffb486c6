"""Two referees start the same round at the same moment: one start is sent, the other refused; the round
records every table that started, and a later ``--retry`` still works. On SQLite and PostgreSQL.

The hall is a simulated one (every table accepts its first ``start_game`` and refuses any later one, as a
table service does, and answers from a thread of its own after a delay, as over a broker); the web
server's ``/api/tournament/start-round`` and ``tournament start-round`` both call ``start_round_once``."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from tablesvc.cli import main
from tablesvc.records.records_db import RecordsStore
from tablesvc.tournament.actions import start_round_once
from tablesvc.tournament.model import RoundStatus, TournamentError
from tablesvc.tournament.tournament_db import TournamentStore

PLAYERS_CSV = "Name,EMA id,Club,Country\n" + "\n".join(f"Player {chr(65 + i)},,Club,FR" for i in range(8)) + "\n"


class Tables:
    """Tables that each start one game: a second start_game is refused, as a table service refuses it."""

    def __init__(self, offline: set[str] = frozenset()) -> None:
        self.lock = threading.Lock()
        self.games: dict[str, int] = {}
        self.offline = set(offline)

    def online(self, site: str, table: str) -> bool | None:
        return table not in self.offline

    def send(self, site: str, table: str, payload: dict[str, Any], on_reply) -> bool:
        if table in self.offline:
            return True

        def answer() -> None:
            time.sleep(0.2)  # the broker's round trip, so that two starts overlap
            with self.lock:
                self.games[table] = self.games.get(table, 0) + 1
                first = self.games[table] == 1
            on_reply({"transaction": payload["transaction"], "status": "ok" if first else "error",
                      "error": None if first else "a game is in progress"})

        threading.Thread(target=answer, daemon=True).start()
        return True


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path, capsys):
    url = str(tmp_path / "records.sqlite3") if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    players = tmp_path / "players.csv"
    players.write_text(PLAYERS_CSV)
    for argv in (["create", "Open", "--rounds", "2", "--rules", "ema2016"], ["import-players", str(players)],
                 ["tables", "--site", "hall", "--count", "2"], ["seating", "--all"]):
        assert main(["tournament", *argv, "--db", url]) == 0
    capsys.readouterr()
    return url


def test_two_referees_starting_a_round_at_once_send_one_start(db):
    tables = Tables()
    stores = [TournamentStore(RecordsStore(db)) for _ in range(2)]  # two referees, two connections
    tid = stores[0].find()[0]
    go = threading.Barrier(2)
    outcomes: list[Any] = [None, None]

    def referee(k: int) -> None:
        go.wait()
        try:
            outcomes[k] = start_round_once(stores[k], tid, 1, tables, timeout=10)
        except TournamentError as exc:
            outcomes[k] = exc

    threads = [threading.Thread(target=referee, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    reports = [o for o in outcomes if not isinstance(o, Exception)]
    refusals = [o for o in outcomes if isinstance(o, TournamentError)]
    assert len(reports) == 1 and len(refusals) == 1, outcomes
    assert reports[0].started == [1, 2] and reports[0].not_started == {}
    assert "started once" in str(refusals[0]) or "being started by another referee" in str(refusals[0])
    assert tables.games == {"t1": 1, "t2": 1}  # one start_game per table
    r = stores[0].round(tid, 1)
    assert r.status is RoundStatus.STARTED and r.started_tables == (1, 2)


def test_a_partial_start_is_refused_again_and_mended_by_retry(db):
    store = TournamentStore(RecordsStore(db))
    tid = store.find()[0]
    tables = Tables(offline={"t2"})
    report = start_round_once(store, tid, 1, tables, timeout=1)
    assert report.started == [1] and list(report.not_started) == [2]
    with pytest.raises(TournamentError, match="started once"):
        start_round_once(store, tid, 1, tables, timeout=1)
    tables.offline.clear()
    report = start_round_once(store, tid, 1, tables, retry=True, timeout=5)
    assert report.started == [2]
    assert store.round(tid, 1).started_tables == (1, 2) and tables.games == {"t1": 1, "t2": 1}
