"""The tournament clock in a real headless Chromium: the /clock big screen (the round timer and every
table's own time), the overlay's countdown, and the console's Extend and Add hand buttons, which reach the
table service over MQTT and move its clock. Screenshots for docs/web.md.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request

import pytest
from selenium.webdriver.common.by import By

from tablesvc.mqtt.payloads import iso_time
from tests import web_support
from tests.web_support import REFEREE_PASSWORD, LiveTable, shot, viewport, wait_js, wait_seq

# the module's own Mosquitto, web server and Chromium (tests/web_support.py)
broker, web, browser = web_support.broker, web_support.web, web_support.browser

CLOCK_TEXT = "document.querySelector(\"{}\")?.textContent"


def _seconds(text: str) -> int:
    """``74:59`` or ``1:02:03`` as seconds."""
    parts = [int(p) for p in text.split(":")]
    return sum(p * 60 ** i for i, p in enumerate(reversed(parts)))


@pytest.fixture(scope="module")
def hall(broker, tmp_path_factory):
    """Four tables of one round, started with the hall's deadline: t1 and t2 as started, t3 given five more
    minutes by a referee, t4's time called in the middle of a hand (EMA: that hand and one more)."""
    deadline = iso_time(time.time() + 75 * 60)
    tables = {}
    try:
        for name in ("t1", "t2", "t3", "t4"):
            live = LiveTable(broker.url, tmp_path_factory.mktemp(name), table=name).start()
            tables[name] = live
            live.play_to(40)  # the game started (start_game) and the first hand in play
            live.command({"command": "clock", "action": "start", "deadline": deadline})
        tables["t3"].command({"command": "clock", "action": "extend", "minutes": 5, "reason": "a ruling"})
        tables["t4"].command({"command": "clock", "action": "time_up", "reason": "started early"})
        for live in tables.values():
            assert live.service.table.state.clock is not None
        yield tables
    finally:
        for live in tables.values():
            live.stop()


def test_the_clock_page_shows_the_round_timer_and_every_tables_time(web, hall, browser):
    browser.get(f"{web.url}/clock")
    viewport(browser, 1920, 1080)
    wait_js(browser, "document.querySelectorAll('.hall-table').length === 4", 20, "(four tables on the clock)")
    round_text = wait_js(browser, CLOCK_TEXT.format(".round-clock .clock-time"))
    assert re.fullmatch(r"7[45]:\d\d", round_text), round_text  # the hall's 75 minutes, counting down
    note = browser.execute_script("return document.querySelector('.round-note').textContent")
    assert note == "4 tables playing"
    times = {t: browser.execute_script(f"return document.querySelector(\".hall-table[data-table='{t}'] "
                                       ".clock-time\").textContent") for t in ("t1", "t2", "t3", "t4")}
    assert times["t4"] == "time · 2 hands left"
    assert abs(_seconds(times["t3"]) - _seconds(times["t1"]) - 300) <= 2  # the extension, to the second
    assert abs(_seconds(times["t2"]) - _seconds(times["t1"])) <= 1
    order = browser.execute_script("return [...document.querySelectorAll('.hall-table')].map(e => e.dataset.table)")
    assert order == ["t1", "t2", "t3", "t4"]  # table-number order, whatever each table's time
    states = browser.execute_script(
        "return Object.fromEntries([...document.querySelectorAll('.hall-table')].map(e => "
        "[e.dataset.table, e.querySelector('.clock').dataset.clock]))")
    assert states == {"t1": "running", "t2": "running", "t3": "running", "t4": "time-up"}
    # it counts down by itself, with no new message from the tables
    first = _seconds(round_text)
    wait_js(browser, f"(() => {{ const t = document.querySelector('.round-clock .clock-time').textContent;"
                     f" return t.includes(':') && t !== '{round_text}'; }})()", 5, "(the countdown moves)")
    now = browser.execute_script("return document.querySelector('.round-clock .clock-time').textContent")
    assert _seconds(now) < first
    shot(browser, "clock")
    viewport(browser, 390, 844)  # a phone
    wait_js(browser, "document.querySelectorAll('.hall-table').length === 4")
    shot(browser, "clock-phone")
    browser.get(f"{web.url}/clock?view=round")
    viewport(browser, 1920, 1080)
    wait_js(browser, CLOCK_TEXT.format(".round-clock .clock-time"))
    assert browser.execute_script("return document.querySelectorAll('.hall-table').length") == 0


def test_the_server_time_the_pages_count_with(web):
    with urllib.request.urlopen(f"{web.url}/api/time", timeout=10) as r:
        now = json.loads(r.read())["now"]
    assert abs(now - time.time()) < 5


def test_the_overlay_and_the_table_page_count_down_the_tables_time(web, hall, browser):
    t1 = hall["t1"]
    browser.get(f"{web.url}/overlay/club/t1")
    viewport(browser, 1920, 1080)
    wait_seq(browser, t1.seq)
    text = wait_js(browser, CLOCK_TEXT.format(".title .clock .clock-time"))
    assert re.fullmatch(r"7[45]:\d\d", text), text
    shot(browser, "overlay-clock-1080", backdrop=True)
    browser.get(f"{web.url}/overlay/club/t4?view=scores")
    wait_js(browser, "document.querySelector('.score-bar .clock')")
    assert browser.execute_script("return document.querySelector('.score-bar .clock-time').textContent") == (
        "time · 2 hands left")
    browser.get(f"{web.url}/table/club/t3")
    text = wait_js(browser, CLOCK_TEXT.format(".clock-panel .clock-time"))
    assert re.fullmatch(r"(79|80):\d\d", text), text
    rule = browser.execute_script("return document.querySelector('.clock-panel .clock-rule').textContent")
    assert rule == "then the hand in play and one more (+5 min)"


def test_the_console_extends_one_tables_time_and_adds_a_hand(web, hall, browser):
    t2 = hall["t2"]
    before = t2.service.table.state.clock
    browser.get(f"{web.url}/referee/club/t2")
    viewport(browser, 1600, 1000)
    if "/login" in browser.current_url:
        browser.find_element(By.NAME, "password").send_keys(REFEREE_PASSWORD)
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_js(browser, "location.pathname === '/referee/club/t2'")
    wait_seq(browser, t2.seq)
    wait_js(browser, "document.querySelector('.clock-panel form.clock-extend')")
    minutes = browser.find_element(By.NAME, "extend_minutes")
    minutes.clear()
    minutes.send_keys("3")
    browser.find_element(By.NAME, "extend_reason").send_keys("dispute at table 2")
    shot(browser, "console-clock")
    browser.find_element(By.CSS_SELECTOR, "form.clock-extend button[type=submit]").click()
    wait_js(browser, "document.querySelector('.replies li')", 15, "(the service's reply)")
    assert "clock: ok" in browser.execute_script("return document.querySelector('.replies li').textContent")
    after = t2.service.table.state.clock
    assert after.deadline == before.deadline + 180 and after.extended == 3
    entry = t2.service.journal.get(t2.seq)
    assert entry.kind == "clock_extend" and entry.body["reason"] == "dispute at table 2"
    assert entry.source == "referee:referee"  # the console names its referee (here the one-password account)
    wait_js(browser, "document.querySelector('.clock-panel .clock-rule').textContent.includes('+3 min')")

    browser.find_element(By.CSS_SELECTOR, ".clock-panel button.add-hand").click()
    wait_js(browser, "document.querySelectorAll('.replies li.ok').length === 2", 15, "(the second reply)")
    assert t2.service.table.state.clock.added == 1
    wait_js(browser, "document.querySelector('.clock-panel .clock-rule').textContent.includes('+1 hand')")


def test_when_the_rounds_time_is_up_the_big_screen_says_so_and_counts_the_tables_still_playing(web, hall, browser):
    for name in ("t1", "t2", "t3"):
        hall[name].command({"command": "clock", "action": "time_up", "reason": "the hall's gong"})
    browser.get(f"{web.url}/clock")
    viewport(browser, 1920, 1080)
    wait_js(browser, "document.querySelector('.round-clock .clock-time')?.textContent === 'time'", 15,
            "(the round timer says time)")
    assert browser.execute_script("return document.querySelector('.round-note').textContent") == (
        "time is up: 4 tables still playing")
    texts = browser.execute_script("return [...document.querySelectorAll('.hall-table .clock-time')]"
                                   ".map(e => e.textContent)")
    assert sorted(texts) == ["time · 2 hands left"] * 3 + ["time · 3 hands left"]  # t2: a hand added
