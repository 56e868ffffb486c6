"""A whole tournament day end to end: 4 simulated tables, 3 rounds, a real Mosquitto, PostgreSQL and Chromium.

Every part is the real one: four table services on the module's Mosquitto,
each fed by the table simulator (a generated game per table and round, as
the drivers would report it); the records collector writing into the test
session's own PostgreSQL; the web server reading the same database; the
``tournament`` command for the organiser's side and the web server's
referee calls for the referee's. The day: import the players, give the hall
its tables, seat every round, start round 1 with table 4's service down (it
is listed, not skipped, and started with --retry once up), play every game
to its end, a penalty from the referee (and one for a player at another
table, refused), start round 2 twice (refused), the standings after every
round, the EMA export and every game as mjai. The pages are checked in
Chromium and photographed for docs/tournament.md.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shlex
import threading
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

pytest.importorskip("sqlalchemy", reason="the records extra is not installed (pip install -e '.[test]')")

from hardware_sims.generator import GeneratorOptions, generate_game
from hardware_sims.pytest_plugin import eventually
from hardware_sims.table import DirectOutputs, TableSimulator
from tablesvc.cli import main
from tablesvc.config import parse_config
from tablesvc.records.collector import Collector
from tablesvc.records.records_db import RecordsStore
from tablesvc.service import TableService
from tablesvc.tournament.actions import current_standings
from tablesvc.tournament.tournament_db import TournamentStore
from tests import web_support
from tests.test_web_referee import Client
from tests.web_support import REFEREE_PASSWORD, shot, start_web, viewport, wait_js

broker, browser = web_support.broker, web_support.browser

RULES = "ema2012"  # the simulator deals red fives, which ema2016 plays without
# the games the tables play, by round: whole games among the shortest the generator deals on these rules (seeds 40
# to 199: 626 to 860 events, 8 or 9 hands; a game averages 1,200), as the day is about the tournament around them
GAMES = {1: (73, 65, 74, 126), 2: (97, 197, 124, 190), 3: (158, 173, 71, 55)}
PLAYERS = [("Aiko Tanaka", "04000001", "Kyoto", "JP"), ("Bram de Vries", "31000002", "Utrecht", "NL"),
           ("Clara Schulz", "27000003", "Berlin", "DE"), ("Dmitri Volkov", "", "Moscow", "RU"),
           ("Elena Rossi", "20000005", "Milano", "IT"), ("Finn Berg", "05000006", "Oslo", "NO"),
           ("Greta Lind", "06000007", "Malmo", "SE"), ("Hugo Martin", "10000008", "Paris", "FR"),
           ("Ines Costa", "11000009", "Lisboa", "PT"), ("Jan Novak", "12000010", "Praha", "CZ"),
           ("Kasia Nowak", "13000011", "Krakow", "PL"), ("Lars Jensen", "14000012", "Aarhus", "DK"),
           ("Mila Horvat", "15000013", "Zagreb", "HR"), ("Noah Weber", "16000014", "Wien", "AT"),
           ("Olga Petrova", "17000015", "Kyiv", "UA"), ("Pablo Ruiz", "18000016", "Madrid", "ES")]


class HallTable:
    """One table of the hall: its service, and the simulator that plays whatever game it was started with."""

    def __init__(self, broker_url: str, data_dir: Path, table: str) -> None:
        self.table = table
        self.data_dir = data_dir
        self.config = parse_config(f'[table]\nsite = "hall"\nid = "{table}"\ndata_dir = "{data_dir}"\n'
                                   f'journal_sync = "normal"\n[mqtt]\nurl = "{broker_url}"\n')
        self.service: TableService | None = None

    def start(self) -> None:
        self.service = TableService(self.config, new_game=True)
        self.service.start()
        assert self.service.link.wait_ready(15)

    def stop(self) -> None:
        if self.service is not None:
            self.service.stop()
            self.service = None

    def play(self, seed: int) -> None:
        """The game the round started here, to its end: a generated game on the same rules, the service's
        players (the tournament's names) as they were sent."""
        assert self.service is not None
        state = self.service.table.state
        record = generate_game(seed, GeneratorOptions(rules=RULES, players=state.players))
        sim = TableSimulator(record, DirectOutputs(self.service.observe), start_game=lambda _e: None)
        for event in record.events:
            sim.show(event)
        assert self.service.wait_idle(60)
        assert self.service.table.state.final is not None, f"{self.table}: the game did not end"


@pytest.fixture(scope="module")
def hall(broker, tmp_path_factory):
    root = tmp_path_factory.mktemp("hall")
    tables = [HallTable(broker.url, root / f"t{i}", f"t{i}") for i in range(1, 5)]
    yield tables
    for t in tables:
        t.stop()


@pytest.fixture(scope="module")
def db(postgres_server) -> str:
    return postgres_server.new_database()


@pytest.fixture(scope="module")
def collector(broker, db):
    store = RecordsStore(db)
    c = Collector(store, broker.url, site="hall", client_id="tournament-day-collector")
    c.start()
    yield c
    c.stop()
    store.close()


@pytest.fixture(scope="module")
def web(broker, db):
    server = start_web(broker.url, records_db=db)
    yield server
    server.stop()


def tournament(db: str, capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["tournament", *argv, "--db", db])
    out = capsys.readouterr()
    return code, out.out, out.err


def finished_games(store: RecordsStore) -> list:
    """The hall's games in the records, read through the test's one open store (polled while the collector
    writes: one engine and one schema check for the whole day, not one per look)."""
    return [g for g in store.games() if g.site == "hall"]


def wait_for(predicate, timeout: float = 60.0, what: str = "") -> None:
    eventually(predicate, timeout, what=what, interval=0.1)


def test_a_tournament_day_on_four_simulated_tables(broker, hall, collector, web, db, browser, tmp_path, capsys):
    players = tmp_path / "players.csv"
    with players.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Name", "EMA id", "Club", "Country"])
        w.writerows(PLAYERS)
    assert tournament(db, capsys, "create", "Hall Open", "--rules", RULES, "--rounds", "3", "--minutes", "75",
                      "--time-rule", "ema")[0] == 0
    assert tournament(db, capsys, "import-players", str(players))[0] == 0
    assert tournament(db, capsys, "tables", "--site", "hall", "--count", "4")[0] == 0
    code, out, _ = tournament(db, capsys, "seating", "--all")
    assert code == 0 and "repeat meetings: 0" in out and "players unbalanced: 0" in out
    records = RecordsStore(db)
    store = TournamentStore(records)
    tid, t = store.find()
    assert (t.rules, t.minutes, t.time_rule) == (RULES, 75, "ema")  # the time rule is one of the tournament's rules
    names = {p.number: p.name for p in store.players(tid)}
    rounds = {r.number: r for r in store.rounds(tid)}

    # round 1: table 4's service is down; it is listed, not skipped, and started with --retry once it is up
    for table in hall[:3]:
        table.start()
    # the command waits the whole timeout for table 4, which never answers; the others answer in milliseconds
    code, out, _ = tournament(db, capsys, "start-round", "1", "--broker", broker.url, "--timeout", "3")
    assert code == 1
    assert "table 4 (hall/t4): NOT STARTED: its service has never been seen on the broker" in out
    assert out.count(": started") == 3
    # the big screen lists the table that did not start
    viewport(browser, 1920, 1080)
    browser.get(f"{web.url}/tournament")
    states = wait_js(browser, "document.querySelectorAll('.hall-table').length === 4 && "
                     "[...document.querySelectorAll('.hall-table')].map(t => t.dataset.state)")
    assert states == ["in-play", "in-play", "in-play", "not-started"]
    assert "Not started: table 4" in browser.find_element("id", "offline").text
    shot(browser, "tournament-seating")
    hint = out.strip().splitlines()[-1].split(": ", 1)[1]  # the retry, as printed: run as it is
    assert hint == shlex.join(["tablesvc", "tournament", "--db", db, "start-round", "1", "--retry", "--broker",
                               broker.url])
    hall[3].start()
    code = main(shlex.split(hint)[1:])
    out = capsys.readouterr().out
    assert code == 0 and "table 4 (hall/t4): started" in out and out.count(": started") == 1
    # one deadline for the round: table 4, started late with --retry, has the one the others have
    assert len({table.service.table.state.clock.deadline for table in hall}) == 1
    for i, table in enumerate(hall):
        state = table.service.table.state
        assert state.players == tuple(names[p] for p in rounds[1].seating.tables[i])
        assert state.rules.split(";")[0].strip() == RULES
        # the tournament's clock went with start_game: 75 minutes, EMA's rule at the end of time
        assert (state.clock.minutes, state.clock.rule.value) == (75, "ema")
    assert "without the clock" not in out
    code, out, _ = tournament(db, capsys, "time", "2", "--extend", "5", "--reason", "a long ruling", "--broker",
                              broker.url)
    assert (code, out) == (0, "round 1, table 2: 5 minute(s) more\n")
    assert hall[1].service.table.state.clock.extended == 5
    code, _, err = tournament(db, capsys, "start-round", "1", "--broker", broker.url)
    assert code == 1 and "round 1 was started at" in err and "a round is started once" in err

    # the pages while round 1 is in play: every table started now; a player finds their table
    assert wait_js(browser, "[...document.querySelectorAll('.hall-table')].every(t => t.dataset.state === 'in-play')")
    someone = names[rounds[1].seating.tables[2][1]]
    viewport(browser, 390, 844)  # a phone
    part = someone.split()[-1].upper()  # a part of the name, typed any case
    browser.get(f"{web.url}/tournament/player?player={part}")
    text = wait_js(browser, "(document.getElementById('your-table') || {}).textContent")
    assert text == f"{someone}, round 1: table 3, seat South"
    me = next(p for p, n in names.items() if n == someone)
    nxt = next(i for i, four in enumerate(rounds[2].seating.tables, 1) if me in four)
    wind = ["East", "South", "West", "North"][rounds[2].seating.tables[nxt - 1].index(me)]
    assert browser.find_element("id", "your-next").text == f"Next, round 2: table {nxt}, seat {wind}"
    assert browser.find_element("id", "your-standing").text.startswith("Place ")
    shot(browser, "tournament-player")
    browser.get(f"{web.url}/tournament/player?player=a")  # a part many names hold: the page asks which one
    listed = wait_js(browser, "document.querySelectorAll('.matches li').length")
    assert listed == sum(1 for n in names.values() if "a" in n.lower()) > 1

    viewer = Client(web.url)  # not signed in: every tournament call refused, nothing given
    status, text = viewer.post("/api/tournament/penalty", json.dumps({"player": 1, "points": 1000, "reason": "x"})
                               .encode(), {"Content-Type": "application/json"})
    assert status == 403 and "only a signed-in referee" in json.loads(text)["error"]
    referee = Client(web.url)
    assert referee.sign_in(REFEREE_PASSWORD)[0] in (200, 303)
    csrf = json.loads(referee.get("/api/session"))["csrf"]

    def call(path: str, body: dict) -> tuple[int, dict]:
        status, text = referee.post(path, json.dumps(body).encode(),
                                    {"Content-Type": "application/json", "X-CSRF-Token": csrf})
        return status, json.loads(text)

    status, reply = call("/api/tournament/import-players", {"csv": "name,EMA id\nNew Face,31000002\n"})
    assert status == 409 and reply["error"] == ("the players' file, line 2: EMA id 31000002 is already player 2 "
                                                "(Bram de Vries)")
    assert len(store.players(tid)) == 16
    status, reply = referee.post("/api/tournament/finish-round", b'{"round": 1}', {"Content-Type": "application/json"})
    assert status == 403 and "CSRF" in json.loads(reply)["error"]  # signed in, but no token: refused
    penalised = warned = late = None
    for number in (1, 2, 3):
        if number > 1:
            # as a referee would, start it once the web server has seen every game of the last round end: on a
            # busy machine its broker connection can still be working through the states of four games played
            # at full speed, and the tables' replies would wait behind them
            wait_for(lambda: [t["phase"] for t in json.loads(referee.get("/api/tables"))["tables"]
                              if t["site"] == "hall"] == ["game_over"] * 4, 60, "the web server sees the games end")
            status, reply = call("/api/tournament/start-round", {"round": number})  # the referee starts it
            assert status == 200 and reply["status"] == "ok" and reply["data"]["started"] == [1, 2, 3, 4], reply
            status, reply = call("/api/tournament/start-round", {"round": number})
            assert status == 409 and f"round {number} was started at" in reply["error"]
        r = store.round(tid, number)
        threads = [threading.Thread(target=table.play, args=(seed,)) for seed, table in zip(GAMES[number], hall,
                                                                                             strict=True)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(180)
        if number == 2:
            victim = r.seating.tables[1][3]
            status, reply = call("/api/tournament/penalty", {"site": "hall", "table": "t3", "player": names[victim],
                                                             "points": 8000, "reason": "slow play"})
            assert status == 409 and f"{names[victim]} is not at table 3 in round 2: they play at table 2" in \
                reply["error"]
            status, reply = call("/api/tournament/penalty", {"site": "hall", "table": "t2", "seat": 3,
                                                             "points": 8000, "reason": "slow play", "hand": "S1-0"})
            assert status == 200 and reply["data"]["player"] == victim, reply
            penalised = victim
            # a warning from the referee's page, signed in in the browser
            browser.get(f"{web.url}/login?next=/tournament/referee")
            browser.find_element(By.NAME, "password").send_keys(REFEREE_PASSWORD)
            browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
            wait_js(browser, "location.pathname === '/tournament/referee' && !!document.getElementById('penalty-form')")
            warned = r.seating.tables[0][1]
            form = browser.find_element(By.ID, "penalty-form")
            form.find_element(By.NAME, "player").send_keys(names[warned])
            form.find_element(By.NAME, "table").send_keys("1")
            Select(form.find_element(By.NAME, "kind")).select_by_value("warning")
            form.find_element(By.NAME, "reason").send_keys("phone at the table")
            form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
            browser.switch_to.alert.accept()  # "Give ... a warning?"
            answer = wait_js(browser, "(document.getElementById('referee-answer') || {}).textContent")
            assert answer == f"Given: warning 2 to {names[warned]}, round 2: phone at the table", answer
            shot(browser, "tournament-referee")
        if number == 3:  # a penalty from table 3's own referee console
            browser.get(f"{web.url}/referee/hall/t3")
            wait_js(browser, "!!document.getElementById('tournament-penalty')")
            form = browser.find_element(By.ID, "tournament-penalty")
            Select(form.find_element(By.NAME, "seat")).select_by_value("0")
            form.find_element(By.NAME, "points").send_keys("2000")
            form.find_element(By.NAME, "reason").send_keys("late")
            button = form.find_element(By.CSS_SELECTOR, "button[type=submit]")
            # the console grows while its feed arrives: bring the button to the middle of the screen first
            browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
            button.click()
            late = r.seating.tables[2][0]
            answer = wait_js(browser, "(document.getElementById('tournament-answer') || {}).textContent")
            assert answer == f"Given: penalty 3 to {names[late]}, round 3, −2.0: late", answer
            # the penalty on the console's player list, under the player it was given to
            note = wait_js(browser, "(document.querySelector(\".side-info .player[data-seat='0'] .penalty-notes\")"
                                    " || {}).textContent", 15, "(the penalty on the console's player list)")
            assert "penalty −2.0, round 3: late" in note, note
            shot(browser, "tournament-console")
        wait_for(lambda n=number: len([g for g in finished_games(records) if g.finished]) == 4 * n, 60,
                 f"the collector writes round {number}'s games")
        if number < 3:
            assert tournament(db, capsys, "finish-round", str(number))[0] == 0
        else:  # the referee, over HTTP
            status, reply = call("/api/tournament/withdraw", {"player": names[r.seating.tables[0][0]]})
            assert status == 409 and "is playing in a started round" in reply["error"]
            assert call("/api/tournament/finish-round", {"round": 3}) == (200, {"status": "ok", "data": {
                "round": 3, "status": "finished"}})
        st = current_standings(store, tid)
        assert [tg.status for tg in st.tables if tg.round == number] == ["finished"] * 4
    code, _, err = tournament(db, capsys, "penalty", "1", "1000", "--reason", "late", "--round", "3")
    assert code == 1 and "round 3 is finished" in err
    code, _, err = tournament(db, capsys, "time", "1", "--add-hand", "--round", "3", "--broker", broker.url)
    assert code == 1 and "round 3 is finished: its tables' clocks are closed" in err
    status, reply = call("/api/tournament/time", {"table": 1, "add_hand": True})
    assert status == 409 and reply["error"] == "no round is in play: a table's clock runs only in a round in play"

    # the standings: every game once, each player's total their three results less the penalty
    games = [g for g in finished_games(records) if g.finished]
    assert len(games) == 12 and len({(g.table, g.game) for g in games}) == 12
    st = current_standings(store, tid)
    taken = {penalised: 8000}
    taken[late] = taken.get(late, 0) + 2000
    for row in st.players:
        results = [s.result for g in games for s in g.seats if s.typed == row.player.name]
        assert len(results) == row.games == 3
        assert row.total == sum(results) - taken.get(row.player.number, 0)
        assert row.penalties == taken.get(row.player.number, 0)
    assert [p.place for p in st.players] == sorted(p.place for p in st.players)

    # the pages after the last round: standings (big screen) and the stream's overlay
    viewport(browser, 1920, 1080)
    browser.get(f"{web.url}/tournament/standings")
    wait_js(browser, "document.body.dataset.games === '12'")
    shown = wait_js(browser, "[...document.querySelectorAll('#ranking tbody tr')].map(r => r.dataset.player)")
    assert shown == [p.player.name for p in st.players]
    # read in one go: the page redraws its lists as the standings refresh
    penalty_text, warning_text, late_text = wait_js(
        browser, "[...document.querySelectorAll('.penalties li')].map(li => li.innerText)")
    assert late_text == f"Round 3: {names[late]} — penalty −2.0: late"
    assert names[penalised] in penalty_text and "slow play" in penalty_text and "−8.0" in penalty_text
    assert warning_text == f"Round 2: {names[warned]} — warning: phone at the table"
    shot(browser, "tournament-standings")
    browser.get(f"{web.url}/tournament/overlay?top=8")
    rows = wait_js(browser, "document.querySelectorAll('#overlay-standings .row').length === 8 && "
                   "[...document.querySelectorAll('#overlay-standings .row .name')].map(n => n.textContent)")
    assert rows == [p.player.name for p in st.players[:8]]
    shot(browser, "tournament-overlay", backdrop=True)

    # the EMA report (the command's and the web server's the same) and every game as mjai, from the journals
    code, out, _ = tournament(db, capsys, "export", "--csv")
    assert code == 0 and referee.get("/api/tournament/results.csv") == out
    report = list(csv.DictReader(io.StringIO(out)))
    assert [r["last name"] for r in report] == [p.player.first_last[1] for p in st.players]
    dmitri = next(r for r in report if r["first name"] == "Dmitri")
    assert (dmitri["EMA number"], dmitri["EMA member"], dmitri["country"]) == ("", "N", "RU")
    assert sum(float(r["table points"]) for r in report) == pytest.approx(-10.0, abs=0.05)  # uma sums to 0
    out_dir = tmp_path / "games"
    code, out, err = tournament(db, capsys, "export", "--games", "mjai", "--out", str(out_dir),
                                *[f"--data-dir=hall/{t.table}={t.data_dir}" for t in hall])
    assert code == 0, err
    files = sorted(out_dir.glob("*.mjai.jsonl"))
    assert len(files) == 12
    first = [json.loads(line) for line in files[0].read_text().splitlines()]
    assert first[0]["type"] == "start_game"
    assert re.match(r"round-1-table-1\.mjai\.jsonl", files[0].name)
    assert first[0]["names"] == [names[p] for p in rounds[1].seating.tables[0]]
    records.close()
