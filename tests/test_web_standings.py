"""The club's standings on the web server: ``/api/standings`` and the ``/standings`` page in a real Chromium.

The records database is a SQLite file holding the club night of
tests/club_games.py, written as the collector writes it (tests/test_records_store.py),
whose figures are worked out by hand there. A web server without a records
database says how to set one up, in the API and on the page.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

pytest.importorskip("sqlalchemy", reason="the records extra is not installed (pip install -e '.[test]')")

from tablesvc.records.records_db import RecordsStore
from tests import web_support
from tests.test_records_store import NIGHT, club_night
from tests.web_support import shot, start_web, viewport, wait_js

broker, browser = web_support.broker, web_support.browser


@pytest.fixture(scope="module")
def records_db(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("records") / "records.sqlite3")
    with RecordsStore(path) as store:
        club_night(store)
    return path


@pytest.fixture(scope="module")
def web(broker, records_db):
    server = start_web(broker.url, records_db=records_db)
    yield server
    server.stop()


def _get(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_api_gives_the_hand_worked_standings(web):
    status, data = _get(f"{web.url}/api/standings")
    assert status == 200
    assert [p["name"] for p in data["players"]] == ["Cat", "Eve", "Dan", "Ann", "Bob"]
    got = {p["name"]: (p["games"], tuple(p["places"]), p["total"], p["hands"], p["wins"], p["deal_ins"], p["riichi"],
                       p["win_points"]) for p in data["players"]}
    assert got == NIGHT
    cat = data["players"][0]
    # Cat: 3 games (1st, 1st, 2nd), won 2 of 4 hands for 2000 each, never dealt in
    assert (cat["average_place"], cat["win_rate"], cat["deal_in_rate"], cat["riichi_rate"], cat["average_win"]) == (
        1.3333, 0.5, 0.0, 0.0, 2000)
    eve = data["players"][1]
    assert (eve["average_place"], eve["win_rate"], eve["riichi_rate"], eve["average_win"]) == (1.0, 1.0, 1.0, 8000)
    assert [(g["table"], g["started"]) for g in data["games"]] == [
        ("t1", "2026-11-20T19:00:00+00:00"), ("t2", "2026-11-20T19:05:00+00:00"), ("t1", "2026-11-20T20:30:00+00:00")]
    t2 = data["games"][1]
    assert [(p["name"], p["place"], p["result"]) for p in t2["players"]] == [
        ("Bob", 4, -34000), ("Eve", 1, 38000), ("Ann", 2, -2000), ("Cat", 2, -2000)]


def test_since_narrows_the_games_and_a_bad_date_is_refused(web):
    status, data = _get(f"{web.url}/api/standings?since=2026-11-20T20:00")
    assert status == 200 and data["since"] == "2026-11-20T20:00:00+00:00"
    assert [g["started"] for g in data["games"]] == ["2026-11-20T20:30:00+00:00"]
    assert {p["name"] for p in data["players"]} == {"Ann", "Bob", "Cat", "Dan"}
    assert _get(f"{web.url}/api/standings?since=2026-11-21")[1]["players"] == []
    assert len(_get(f"{web.url}/api/standings?since=2026-11-20")[1]["games"]) == 3
    status, data = _get(f"{web.url}/api/standings?since=20/11/2026")
    assert status == 400 and "is no date" in data["error"]


def test_the_standings_page_shows_every_player_and_game(web, browser):
    browser.get(f"{web.url}/")
    wait_js(browser, "!document.getElementById('standings-link').hidden", 10, "(dashboard links the standings)")
    browser.get(f"{web.url}/standings")
    viewport(browser, 1400, 640)
    wait_js(browser, "document.body.dataset.state === 'loaded'", 15, "(standings loaded)")
    rows = browser.execute_script("return [...document.querySelectorAll('table.standings tbody tr')].map(r => "
                                  "[...r.children].map(c => c.textContent))")
    assert [r[1] for r in rows] == ["Cat", "Eve", "Dan", "Ann", "Bob"]
    assert rows[0] == ["1", "Cat", "3", "2", "1", "0", "0", "1.33", "+51,000", "50.0%", "0.0%", "0.0%", "2,000"]
    assert rows[4] == ["5", "Bob", "3", "1", "0", "0", "2", "3.00", "−45,000", "0.0%", "50.0%", "0.0%", "0"]
    games = browser.execute_script("return [...document.querySelectorAll('table.games tbody tr')].map(r => "
                                   "[...r.children].map(c => c.textContent))")
    assert [g[:2] for g in games] == [["club / t1", "2026-11-20 20:30 UTC"], ["club / t2", "2026-11-20 19:05 UTC"],
                                      ["club / t1", "2026-11-20 19:00 UTC"]]
    assert games[1][2:] == ["Bob, Eve, Ann, Cat", "1. Eve +38,000, 2. Ann −2,000, 2. Cat −2,000, 4. Bob −34,000"]
    shot(browser, "standings")
    browser.get(f"{web.url}/standings?since=2026-11-20T20:00")
    wait_js(browser, "document.body.dataset.state === 'loaded'", 15)
    assert browser.execute_script("return document.querySelectorAll('table.games tbody tr').length") == 1


def test_without_a_records_database_the_api_and_page_say_how_to_set_one_up(broker, browser):
    bare = start_web(broker.url)
    try:
        status, data = _get(f"{bare.url}/api/standings")
        assert status == 404 and "--records-db" in data["error"]
        browser.get(f"{bare.url}/standings")
        wait_js(browser, "document.body.dataset.state === 'error'", 15)
        text = browser.execute_script("return document.getElementById('players').textContent")
        assert "tablesvc web --records-db" in text and "records_db" in text
        browser.get(f"{bare.url}/")
        wait_js(browser, "document.body.dataset.tables !== undefined", 10)
        assert browser.execute_script("return document.getElementById('standings-link').hidden") is True
    finally:
        bare.stop()


def test_records_db_comes_from_the_command_line_or_the_web_section(tmp_path):
    from tablesvc.cli.web import make_server
    from tablesvc.config import load_web_config
    from tablesvc.mqtt.url import BrokerURL

    path = tmp_path / "web.toml"
    path.write_text('[web]\nrecords_db = "postgresql://records@db/club"\n')
    web, _, _ = load_web_config(path)
    assert web.records_db == "postgresql://records@db/club"
    broker = BrokerURL.parse("mqtt://127.0.0.1:1883")
    assert make_server(broker, web, listen=("127.0.0.1", 0)).settings.records_db == "postgresql://records@db/club"
    given = make_server(broker, web, listen=("127.0.0.1", 0), records_db="club.sqlite3")
    assert given.settings.records_db == "club.sqlite3"  # --records-db wins over the file
    path.write_text("[web]\n")
    assert load_web_config(path)[0].records_db is None


def test_a_slow_database_does_not_hold_up_the_live_pages(web, mocker):
    """The read runs on a worker thread: while the database takes its time, the event loop serves others."""
    import threading

    original = RecordsStore.games
    reading = threading.Event()
    answered = threading.Event()

    def slow(self, **kwargs):  # a database that answers only once the other page is served (fault at the store)
        reading.set()
        answered.wait(15)
        return original(self, **kwargs)

    mocker.patch.object(RecordsStore, "games", slow)
    answers: list[int] = []
    reader = threading.Thread(target=lambda: answers.append(_get(f"{web.url}/api/standings")[0]))
    reader.start()
    assert reading.wait(10), "the standings never read the database"
    try:  # a loop held by the read could not answer before the read returns, which waits for this answer
        with urllib.request.urlopen(f"{web.url}/api/tables", timeout=10) as response:
            assert response.status == 200
        assert not answers  # answered while the standings were still being read
    finally:
        answered.set()
    reader.join(10)
    assert answers == [200]
