"""The tournament's pages as a hall sees them, in a real headless Chromium over a tournament in SQLite: the big
screen (/tournament) at 1920x1080 with 8 and 32 tables (names large enough to read across the hall, nothing cut,
overlapping or off screen, tables in number order, the round, its time left and the next round, the rotating
name -> table index), the phone page's time left at 390x844, the referee's page (every action asked to confirm
first; never on the big screens), and /clock over three real table services: the big timer is the round's one
deadline, the cards in table-number order, and an extension or time up at one table changes that card alone.
Screenshots for docs/tournament.md."""

from __future__ import annotations

import itertools
import re
import time
from datetime import UTC, datetime, timedelta

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

pytest.importorskip("sqlalchemy", reason="the records extra is not installed (pip install -e '.[test]')")

from tablesvc.cli import main
from tablesvc.engine.clock import parse_deadline
from tablesvc.records.records_db import RecordsStore
from tablesvc.tournament.model import PenaltyKind, PlayerStatus, RoundStatus
from tablesvc.tournament.tournament_db import TournamentStore
from tests import web_support
from tests.web_support import REFEREE_PASSWORD, LiveTable, shot, start_web, viewport, wait_js

broker, browser = web_support.broker, web_support.browser

FIRST = ["Niamh", "Pieter", "Ana", "Greta", "Bram", "Yuki", "Søren", "Chiara", "Mateusz", "Élodie", "Kaito",
         "Ingrid", "Tomás", "Aleksandra", "Jonas", "Mei"]
LAST = ["Ó Briain", "van den Berg", "García Peña", "Lind", "de Vries", "Tanaka", "Kjærgaard", "Rossi", "Nowak",
        "Lefèvre", "Sato", "Halvorsen", "Ruiz", "Wiśniewska", "Becker", "Chen", "Oberholzer", "Dubois"]

WINDS = "ESWN"


def _seconds(text: str) -> int:
    parts = [int(p) for p in text.split(":")]
    return sum(p * 60 ** i for i, p in enumerate(reversed(parts)))


def make_tournament(path, tables: int, *, hall: list[str] | None = None, minutes: int = 75) -> tuple[str, int]:
    """A tournament of ``tables`` tables, three rounds seated, round 1 started now with its one deadline."""
    db = str(path / "cup.sqlite3")
    lines = ["First name,Last name,EMA id,Club,Country"]
    for i in range(4 * tables):
        last = LAST[(i // len(FIRST) + i) % len(LAST)]  # every name once, for up to 288 players
        lines.append(f"{FIRST[i % len(FIRST)]},{last},{10000000 + i},Club {i % 5},FR")
    (path / "players.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    hall_args = hall if hall is not None else ["--site", "hall", "--count", str(tables)]
    for argv in (["create", "Hall Cup", "--rounds", "3", "--minutes", str(minutes)],
                 ["import-players", str(path / "players.csv")], ["tables", *hall_args], ["seating", "--all"]):
        assert main(["tournament", *argv, "--db", db]) == 0, argv
    store = TournamentStore(RecordsStore(db))
    try:
        tid = store.find()[0]
        store.begin_start(tid, 1)
        now = datetime.now(UTC)
        store.mark_started(tid, 1, list(range(1, tables + 1)), [], now.isoformat(timespec="seconds"),
                           (now + timedelta(minutes=minutes)).isoformat(timespec="seconds"))
    finally:
        store.records.close()
    return db, tid


def sign_in(browser, web, next_page: str) -> None:
    browser.get(f"{web.url}/login?next={next_page}")
    browser.find_element(By.NAME, "password").send_keys(REFEREE_PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_js(browser, f"location.pathname === '{next_page}'", 15, f"(signed in, on {next_page})")


LAYOUT = """
const cards = [...document.querySelectorAll('#big-hall .hall-table')].map(c => {
  const r = c.getBoundingClientRect();
  return {table: Number(c.dataset.table), left: r.left, top: r.top, right: r.right, bottom: r.bottom,
          cut: c.scrollHeight > c.clientHeight + 1 || c.scrollWidth > c.clientWidth + 1,
          names: [...c.querySelectorAll('.name')].map(n => ({text: n.textContent,
            size: parseFloat(getComputedStyle(n).fontSize), cut: n.scrollWidth > n.clientWidth + 1}))};
});
const box = (id) => { const e = document.getElementById(id); const r = e.getBoundingClientRect();
  return {text: e.textContent, left: r.left, top: r.top, right: r.right, bottom: r.bottom,
          size: parseFloat(getComputedStyle(e).fontSize)}; };
return {cards, head: ['big-name', 'big-round', 'big-time', 'big-next'].map(box), index: box('big-index'),
        width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight};
"""


def overlap(a: dict, b: dict) -> bool:
    return a["left"] < b["right"] - 0.5 and b["left"] < a["right"] - 0.5 and \
        a["top"] < b["bottom"] - 0.5 and b["top"] < a["bottom"] - 0.5


@pytest.mark.parametrize(("tables", "smallest"), [(8, 40), (32, 20), (60, 14)])
def test_the_big_screen_fills_the_hall_screen(broker, browser, tmp_path, tables, smallest):
    db, tid = make_tournament(tmp_path, tables)
    store = TournamentStore(RecordsStore(db))
    web = start_web(broker.url, records_db=db)
    try:
        sign_in(browser, web, "/tournament")  # a referee signed in on the hall's screen sees no action either
        viewport(browser, 1920, 1080)
        browser.get(f"{web.url}/tournament?rotate=1")
        wait_js(browser, f"document.querySelectorAll('#big-hall .hall-table').length === {tables} && "
                         "document.getElementById('big-hall').dataset.font", 20, f"({tables} tables on the screen)")
        got = browser.execute_script(LAYOUT)
        cards = got["cards"]
        # nothing off screen (no scrolling either), nothing cut, nothing overlapping
        assert got["width"] <= 1920 and got["height"] <= 1080, (got["width"], got["height"])
        for c in cards:
            assert c["left"] >= 0 and c["right"] <= 1920 and c["top"] >= 0 and c["bottom"] <= 1080, c
            assert not c["cut"], c
            assert not any(n["cut"] for n in c["names"]), c
        for i, a in enumerate(cards):
            for b in cards[i + 1:]:
                assert not overlap(a, b), (a, b)
            assert not overlap(a, got["index"]), (a, got["index"])
        for h in got["head"]:
            assert not any(overlap(h, c) for c in cards), h
            assert h["right"] <= 1920 and h["bottom"] <= 1080, h
        # the names as large as readable from across the hall
        sizes = [n["size"] for c in cards for n in c["names"]]
        assert min(sizes) >= smallest, (min(sizes), max(sizes))
        fit = browser.execute_script("return document.getElementById('big-hall').dataset.fitMs")
        print(f"{tables} tables: names {min(sizes):.0f} px, fitted in {fit} ms")  # the figures docs/tournament.md gives
        # tables in number order, row by row
        reading = sorted(cards, key=lambda c: (round(c["top"]), c["left"]))
        assert [c["table"] for c in reading] == list(range(1, tables + 1))
        # the round, its time left from the one deadline, the next round
        name, rnd, left, nxt = (h["text"] for h in got["head"])
        assert (name, rnd, nxt) == ("Hall Cup", "round 1 of 3", "next: round 2")
        deadline = parse_deadline(store.round(tid, 1).deadline)
        # the countdown as it moves on (read the moment it turns, not while the page was laying itself out)
        left = wait_js(browser, f"(t => t !== '{left}' && t)(document.getElementById('big-time').textContent)", 5,
                       "(the time left counts down)")
        assert abs(_seconds(left) - (deadline - time.time())) <= 3, (left, deadline - time.time())  # a busy machine
        assert got["head"][2]["size"] >= 60
        # the index: every seated player, A to Z by family name, with the table and wind of this round
        seating = store.round(tid, 1).seating.tables
        players = {p.number: p for p in store.players(tid)}
        where = {players[n].name: (str(t), WINDS[w]) for t, seats in enumerate(seating, 1) for w, n in enumerate(seats)}
        entries = browser.execute_script(
            "return [...document.querySelectorAll('#index-rows li')].map(e => [e.dataset.name, e.hidden, "
            "e.querySelector('.ix-table').textContent, e.querySelector('.ix-wind').textContent])")
        assert len(entries) == 4 * tables
        assert {e[0]: (e[2], e[3]) for e in entries} == where
        lasts = [players[next(n for n, p in players.items() if p.name == e[0])].last_name for e in entries]
        folded = [re.sub(r"[^a-z ]", "", x.lower().replace("ó", "o").replace("é", "e").replace("ø", "o")
                         .replace("ś", "s").replace("æ", "ae")) for x in lasts]
        assert folded == sorted(folded), folded[:10]
        pages = browser.execute_script("return Number(document.getElementById('index-rows').dataset.pages)")
        shot(browser, f"tournament-hall-{tables}")
        # one page at a time, each the next stretch of the A to Z list, turning by itself (?rotate=1: every second,
        # the shortest turn the page allows); every turn is recorded in the page as it happens, so a poll that comes
        # late cannot miss one
        browser.execute_script(
            "const l = document.getElementById('index-rows'); window.turns = [Number(l.dataset.page)];"
            "new MutationObserver(() => { const p = Number(l.dataset.page);"
            " if (p !== window.turns[window.turns.length - 1]) window.turns.push(p); })"
            ".observe(l, {attributes: true, attributeFilter: ['data-page']});")
        for turn in range(min(pages, 3)):
            page, per, shown = browser.execute_script(
                "const l = document.getElementById('index-rows'); return [Number(l.dataset.page), "
                "Number(l.dataset.per), [...l.children].filter(e => !e.hidden).map(e => e.dataset.name)]")
            assert shown == [e[0] for e in entries][(page - 1) * per:page * per], (page, shown)
            if pages > 1:
                # the page's own timer turns it; a renderer starved of CPU under four workers fires it late
                wait_js(browser, f"window.turns.length > {turn + 1}", 15, "(the index turns)")
        turns = browser.execute_script("return window.turns")
        assert all(b == a % pages + 1 for a, b in itertools.pairwise(turns)), (turns, pages)  # each the next page
        assert len(set(turns)) >= min(pages, 3), turns
        # no referee action on the big screen, though a referee is signed in in this browser
        assert browser.execute_script("return document.querySelectorAll('form, button, #referee-panel').length") == 0
    finally:
        web.stop()
        store.records.close()


def test_the_phone_page_shows_the_time_left(broker, browser, tmp_path):
    db, _ = make_tournament(tmp_path, 4)
    web = start_web(broker.url, records_db=db)
    try:
        viewport(browser, 390, 844)
        browser.get(f"{web.url}/tournament/player?player=o%20briain")  # accents optional
        text = wait_js(browser, "(document.getElementById('player-time') || {}).textContent", 20, "(time left)")
        assert re.fullmatch(r"7[45]:\d\d", text), text
        first = _seconds(text)
        wait_js(browser, f"document.getElementById('player-time').textContent !== '{text}'", 5, "(it counts down)")
        assert _seconds(browser.execute_script("return document.getElementById('player-time').textContent")) < first
        assert "round 1 of 3" in browser.execute_script("return document.getElementById('your-time').textContent")
        size = browser.execute_script("return parseFloat(getComputedStyle(document.getElementById('player-time'))"
                                      ".fontSize)")
        assert size >= 30, size
        assert browser.execute_script("return document.documentElement.scrollWidth") <= 390  # nothing off screen
        shot(browser, "tournament-player-time")
    finally:
        web.stop()


def test_every_referee_action_asks_first(broker, browser, tmp_path):
    db, tid = make_tournament(tmp_path, 4)
    store = TournamentStore(RecordsStore(db))
    web = start_web(broker.url, records_db=db)
    try:
        viewport(browser, 1280, 1000)
        browser.get(f"{web.url}/tournament/referee")
        wait_js(browser, "!!document.getElementById('sign-in')", 15, "(signed out: asked to sign in)")
        assert browser.execute_script("return document.querySelectorAll('#referee-panel').length") == 0
        sign_in(browser, web, "/tournament/referee")
        wait_js(browser, "!!document.getElementById('withdraw-form')", 20, "(the referee's forms)")
        answer = "(document.getElementById('referee-answer') || {}).dataset.status"

        def submit(form_id: str, accept: bool, **fields: str) -> str:
            browser.execute_script("document.getElementById('referee-answer').removeAttribute('data-status')")
            form = browser.find_element(By.ID, form_id)
            for name, value in fields.items():
                box = form.find_element(By.NAME, name)
                if box.tag_name == "select":
                    Select(box).select_by_value(value)
                else:
                    box.clear()
                    box.send_keys(value)
            form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
            alert = browser.switch_to.alert
            question = alert.text
            alert.accept() if accept else alert.dismiss()
            if accept:
                status = wait_js(browser, answer, 15, f"(the answer to {form_id})")
                said = browser.execute_script("return document.getElementById('referee-answer').textContent")
                assert status == "ok", said
            return question

        victim = store.players(tid)[5]
        before = store.players(tid)
        question = submit("withdraw-form", False, player=str(victim.number))
        assert question == f"Withdraw {victim.name} from the tournament?"
        assert store.players(tid) == before  # dismissed: nothing sent
        assert browser.execute_script("return document.getElementById('referee-answer').textContent").startswith(
            "Not sent")
        assert submit("time-form", False, table="2", what="time_up") == "Call time NOW at table 2?"
        question = submit("finish-form", True, round="1")
        assert question.startswith("Finish round 1?")
        assert store.round(tid, 1).status is RoundStatus.FINISHED
        submit("withdraw-form", True, player=str(victim.number))
        assert store.player(tid, victim.number).status is PlayerStatus.WITHDRAWN
        said = browser.execute_script("return document.getElementById('referee-answer').textContent")
        assert said == f"{victim.name} withdrawn; the seat waits for a substitute in round 2, 3", said
        question = submit("substitute-form", True, player=str(victim.number), name="Sam Stand-In")
        assert question == f"Seat Sam Stand-In in {victim.name}'s place in every round not played?"
        sub = store.player(tid, "Sam Stand-In")
        for number in (2, 3):
            assert any(sub.number in seats for seats in store.round(tid, number).seating.tables)
        assert any(victim.number in seats for seats in store.round(tid, 1).seating.tables)  # round 1 as played
        shot(browser, "tournament-referee-page")
    finally:
        web.stop()
        store.records.close()


def test_a_referee_typing_keeps_the_box_and_every_key_while_the_hall_updates(broker, browser, tmp_path):
    """Every change of the tournament (a result, a penalty, another referee's action) re-draws the referee's
    page; the forms stay where they are, so the box being typed in keeps the focus and the keys still to come."""
    db, tid = make_tournament(tmp_path, 4)
    store = TournamentStore(RecordsStore(db))
    web = start_web(broker.url, records_db=db)
    try:
        viewport(browser, 1280, 1000)
        sign_in(browser, web, "/tournament/referee")
        wait_js(browser, "!!document.getElementById('substitute-form') && document.body.dataset.penalties === '0'",
                20, "(the referee's forms)")
        box = browser.find_element(By.CSS_SELECTOR, "#substitute-form input[name=name]")
        box.click()
        box.send_keys("Sam")
        store.add_penalty(tid, store.players(tid)[3].number, points=0, reason="phone at the table",
                          kind=PenaltyKind.WARNING)  # as the console or the command line gives it
        wait_js(browser, "document.body.dataset.penalties === '1'", 20, "(the page re-drawn with the warning)")
        assert browser.execute_script("return document.activeElement === arguments[0]", box)
        browser.switch_to.active_element.send_keys(" Stand-In")  # where the referee's next keys go
        assert box.get_attribute("value") == "Sam Stand-In"
    finally:
        web.stop()
        store.records.close()


CARDS = """return [...document.querySelectorAll('#hall .hall-table')].map(c => ({table: c.dataset.table,
  name: c.querySelector('.hall-name').firstChild.textContent, state: c.querySelector('.clock').dataset.clock,
  rule: c.querySelector('.clock-rule').textContent, time: c.querySelector('.clock-time').textContent}))"""


SIZES = """const cards = [...document.querySelectorAll('#hall .hall-table')];
  const px = (c, sel) => parseFloat(getComputedStyle(c.querySelector(sel)).fontSize);
  return {cards: cards.map(c => { const r = c.getBoundingClientRect();
    return {width: r.width, height: r.height, bottom: r.bottom, name: px(c, '.hall-name'),
      time: px(c, '.clock-time'), players: px(c, '.hall-players'),
      overflows: c.scrollHeight > c.clientHeight + 1 || c.scrollWidth > c.clientWidth + 1}; }),
    width: innerWidth, height: innerHeight, scrolls: document.documentElement.scrollHeight > innerHeight + 1}"""


def _readable_across_a_hall(browser) -> dict:
    """The cards share the screen below the round timer, each read from across a hall: the table's number
    at 60 px and more, its time at 100 px, the four names at 28 px; nothing cut off, nothing to scroll."""
    sizes = browser.execute_script(SIZES)
    area = sum(c["width"] * c["height"] for c in sizes["cards"])
    assert area >= 0.3 * sizes["width"] * sizes["height"], sizes  # a third of the screen and more, not a corner
    for c in sizes["cards"]:
        assert c["name"] >= 60 and c["players"] >= 28 and not c["overflows"], c
        assert c["bottom"] <= sizes["height"], c
    assert not sizes["scrolls"], sizes
    return sizes


def test_the_clock_is_the_rounds_and_one_table_changes_only_its_card(broker, browser, tmp_path):
    # the organiser's table 1 is hall/t3: the cards follow the tournament's numbers, not the services' names
    db, tid = make_tournament(tmp_path, 3, hall=["hall/t3", "hall/t1", "hall/t2"])
    store = TournamentStore(RecordsStore(db))
    deadline = store.round(tid, 1).deadline
    tables = {}
    web = None
    try:
        for name in ("t1", "t2", "t3"):
            live = LiveTable(broker.url, tmp_path / name, site="hall", table=name).start()
            tables[name] = live
            live.play_to(40)
            live.command({"command": "clock", "action": "start", "deadline": deadline})
        web = start_web(broker.url, records_db=db)
        viewport(browser, 1920, 1080)
        browser.get(f"{web.url}/clock")
        wait_js(browser, "document.querySelectorAll('#hall .hall-table').length === 3 && "
                         "!!document.getElementById('round-name')", 20, "(three tables and the round)")
        assert browser.execute_script("return document.querySelector('header.top h1').textContent") == "Hall Cup"
        assert browser.execute_script("return document.getElementById('round-name').textContent") == "Round 1 of 3"
        before = browser.execute_script(CARDS)
        assert [(c["table"], c["name"]) for c in before] == [("t3", "Table 1"), ("t1", "Table 2"), ("t2", "Table 3")]
        big = browser.execute_script("return document.querySelector('.round-clock .clock-time').textContent")
        assert abs(_seconds(big) - (parse_deadline(deadline) - time.time())) <= 2, big

        # the referee, on the referee's page: five more minutes at table 2, time up at table 3
        sign_in(browser, web, "/tournament/referee")
        wait_js(browser, "!!document.getElementById('time-form')", 20)
        for table, what in (("2", "extend"), ("3", "time_up")):
            browser.execute_script("document.getElementById('referee-answer').removeAttribute('data-status')")
            form = browser.find_element(By.ID, "time-form")
            form.find_element(By.NAME, "table").send_keys(table)
            Select(form.find_element(By.NAME, "what")).select_by_value(what)
            form.find_element(By.NAME, "reason").send_keys("a ruling")
            form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
            browser.switch_to.alert.accept()
            status = wait_js(browser, "(document.getElementById('referee-answer') || {}).dataset.status", 20)
            said = browser.execute_script("return document.getElementById('referee-answer').textContent")
            assert status == "ok", said
            form.find_element(By.NAME, "table").clear()
            form.find_element(By.NAME, "reason").clear()
        assert tables["t1"].service.table.state.clock.extended == 5
        assert tables["t2"].service.table.state.clock.time_up
        untouched = tables["t3"].service.table.state.clock
        assert not untouched.time_up and not untouched.extended

        browser.get(f"{web.url}/clock")
        wait_js(browser, "document.querySelectorAll('#hall .hall-table').length === 3 && "
                         "!!document.getElementById('round-name') && "
                         "document.querySelector(\"#hall .hall-table[data-table='t2'] .clock\").dataset.clock === "
                         "'time-up'", 20, "(table 3's time is up on the clock)")
        after = browser.execute_script(CARDS)
        assert [(c["table"], c["name"]) for c in after] == [(c["table"], c["name"]) for c in before]  # same order
        one, two, three = after
        assert (one["state"], one["rule"]) == (before[0]["state"], before[0]["rule"])  # table 1: as it was
        assert abs(_seconds(one["time"]) - _seconds(before[0]["time"])) <= 60
        assert "+5 min" in two["rule"] and "+5 min" not in before[1]["rule"]
        assert abs(_seconds(two["time"]) - _seconds(one["time"]) - 300) <= 2
        assert three["state"] == "time-up" and three["time"].startswith("time")
        # the big timer: still the round's, not table 2's extension nor table 3's time up
        big = browser.execute_script("return document.querySelector('.round-clock .clock-time').textContent")
        assert abs(_seconds(big) - (parse_deadline(deadline) - time.time())) <= 2, big
        assert abs(_seconds(big) - _seconds(one["time"])) <= 1
        note = browser.execute_script("return document.querySelector('.round-note').textContent")
        assert note == "3 tables playing"
        sizes = _readable_across_a_hall(browser)
        running = sizes["cards"][:2]
        assert all(c["time"] >= 100 for c in running), running  # the two tables still on their time
        shot(browser, "tournament-clock")

        # time for the whole hall, one action on the referee's page: every card's time is up, and the round's
        browser.get(f"{web.url}/tournament/referee")
        wait_js(browser, "!!document.getElementById('time-form')", 20)
        form = browser.find_element(By.ID, "time-form")
        form.find_element(By.NAME, "table").send_keys("all")
        Select(form.find_element(By.NAME, "what")).select_by_value("time_up")
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        alert = browser.switch_to.alert
        assert alert.text == "Call time NOW at every table of the round?"
        alert.accept()
        said = wait_js(browser, "(e => e.dataset.status && e.textContent)(document.getElementById('referee-answer'))",
                       20, "(the hall's time up answered)")
        assert said.startswith("Time up at table 1, 2"), said
        assert all(t.service.table.state.clock.time_up for t in tables.values())
        browser.get(f"{web.url}/clock")
        wait_js(browser, "document.querySelector('.round-clock .clock-time')?.textContent === 'time'", 20,
                "(the round's time is up on the big timer)")
        states = [c["state"] for c in browser.execute_script(CARDS)]
        assert states == ["time-up"] * 3
        # a hall of 32 tables: the page lays out what it is given (the three cards copied, numbered on), the
        # round timer makes room, and every card still reads from afar: its number at 28 px and more, the names at 15
        crowded = browser.execute_script("""const hall = document.getElementById('hall');
          const cards = [...hall.children];
          for (let n = cards.length + 1; n <= 32; n++) {
            const c = cards[(n - 1) % cards.length].cloneNode(true);
            c.querySelector('.hall-name').textContent = `Table ${n}`;
            hall.appendChild(c);
          }
          window.dispatchEvent(new Event('resize'));""" + SIZES.replace("const cards", "const all", 1)
                                          .replace("cards.map", "all.map"))
        shot(browser, "tournament-clock-32")
        assert len(crowded["cards"]) == 32 and not crowded["scrolls"], crowded
        for c in crowded["cards"]:
            assert c["name"] >= 28 and c["players"] >= 15 and not c["overflows"], c
            assert c["bottom"] <= crowded["height"], c
    finally:
        if web is not None:
            web.stop()
        for live in tables.values():
            live.stop()
        store.records.close()
