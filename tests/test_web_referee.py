"""The referee console in a real headless Chromium: sign-in, a discard amended by clicking it, the overlay
showing the correction; and what is refused: a wrong password, a command without the CSRF token, a viewer's
command. Commands travel over MQTT ``cmd`` to a real table service, which answers them, also under the
recommended broker ACL (deploy/acl).
"""

from __future__ import annotations

import base64
import http.cookiejar
import json
import re
import shutil
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests import web_support
from tests.conftest import Mosquitto
from tests.feed_schemas import validate
from tests.web_support import REFEREE_PASSWORD, LiveTable, shot, start_web, viewport, wait_js, wait_seq

# the module's own Mosquitto, web server and Chromium (tests/web_support.py)
broker, web, browser = web_support.broker, web_support.web, web_support.browser


@pytest.fixture
def table(broker, tmp_path):
    live = LiveTable(broker.url, tmp_path / "data", table="t1").start()
    yield live
    live.stop()


class Client:
    """An HTTP client with its own cookies (a second browser, or a script)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def get(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=10) as r:
            return r.read().decode()

    def post(self, path: str, data: bytes, headers: dict[str, str]) -> tuple[int, str]:
        request = urllib.request.Request(self.base + path, data=data, headers=headers, method="POST")
        try:
            with self.opener.open(request, timeout=15) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def sign_in(self, password: str) -> tuple[int, str]:
        page = self.get("/login")
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        return self.post("/login", urllib.parse.urlencode({"csrf": csrf, "password": password, "next": "/"}).encode(),
                         {"Content-Type": "application/x-www-form-urlencoded"})

    def command(self, command: dict, csrf: str | None) -> tuple[int, dict]:
        return self.command_to("club", "t1", command, csrf)

    def command_to(self, site: str, table: str, command: dict, csrf: str | None) -> tuple[int, dict]:
        headers = {"Content-Type": "application/json"}
        if csrf is not None:
            headers["X-CSRF-Token"] = csrf
        status, body = self.post(f"/api/cmd/{site}/{table}", json.dumps(command).encode(), headers)
        return status, json.loads(body)


def test_wrong_password_missing_csrf_and_viewers_are_refused(web, table):
    table.play_to(60)
    before = table.seq
    viewer = Client(web.url)
    status, reply = viewer.command({"command": "undo"}, csrf=None)
    assert status == 403 and "signed-in referee" in reply["error"]
    assert "Referee sign-in" in viewer.get("/referee/club/t1")  # the console itself sends a viewer to sign in

    intruder = Client(web.url)
    status, page = intruder.sign_in("guess")
    assert status == 401 and "Wrong name or password." in page
    assert json.loads(intruder.get("/api/session")) == {"referee": False, "name": None, "csrf": None,
                                                        "standings": False}
    assert intruder.command({"command": "undo"}, csrf=None)[0] == 403

    referee = Client(web.url)
    status, _ = referee.sign_in(REFEREE_PASSWORD)
    assert status == 200  # redirected to the page it came for
    session = json.loads(referee.get("/api/session"))
    assert session["referee"] is True and len(session["csrf"]) > 20
    assert session["name"] == "referee"  # the one-password form is the account named `referee`
    status, reply = referee.command({"command": "undo"}, csrf=None)
    assert status == 403 and "CSRF" in reply["error"]
    status, reply = referee.command({"command": "undo"}, csrf="forged-token-forged-token-forged")
    assert status == 403
    assert table.seq == before  # nothing reached the table

    # with the token the command goes over MQTT and the service's reply comes back
    status, reply = referee.command({"command": "undo", "count": 1}, csrf=session["csrf"])
    assert status == 200 and reply["status"] == "ok" and reply["command"] == "undo"
    assert reply["data"]["seq"] == before + 1 and table.seq == before + 1
    status, reply = referee.command({"command": "set_scores", "scores": [1, 2, 3]}, csrf=session["csrf"])
    assert reply["status"] == "error" and "scores" in reply["error"]  # the service's own validation, explained
    status, reply = referee.command({"command": "dead_hand", "seat": 2, "reason": "six tiles shown"},
                                    csrf=session["csrf"])
    assert reply["status"] == "ok" and table.service.table.state.hand.seats[2].dead


def test_the_console_amends_a_discard_and_the_overlay_shows_it(web, table, browser):
    table.play_to(120)  # mid-hand
    state = table.service.table.state
    # a discard nobody called, not a riichi tile, amended to a kind not seen anywhere yet (a legal correction)
    seen = Counter(p.tile.mjai for s in state.hand.seats for p in s.pond)
    seen.update(t.mjai for s in state.hand.seats for m in s.melds for t in m.tiles)
    seat = next(s for s in range(4) if any(not p.called and not p.riichi for p in state.hand.seats[s].pond))
    index = max(i for i, p in enumerate(state.hand.seats[seat].pond) if not p.called and not p.riichi)
    old = state.hand.seats[seat].pond[index].tile.mjai
    new = next(t for t in ("1m", "9m", "1p", "9p", "1s", "9s", "2m", "8p", "2s") if seen[t] == 0 and t != old)

    browser.get(f"{web.url}/referee/club/t1")
    viewport(browser, 1600, 1000)
    assert "/login" in browser.current_url
    browser.find_element(By.NAME, "password").send_keys(REFEREE_PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_js(browser, "location.pathname === '/referee/club/t1'")
    wait_seq(browser, table.seq)
    overlay = browser.current_window_handle
    browser.switch_to.new_window("window")
    browser.get(f"{web.url}/overlay/club/t1")
    wait_seq(browser, table.seq)
    pond = f".side[data-seat='{seat}'] .pond .tile[data-index='{index}']"
    assert browser.execute_script(f"return document.querySelector(\"{pond}\").dataset.tile") == old
    overlay, console = browser.current_window_handle, overlay
    browser.switch_to.window(console)

    tile = browser.find_element(By.CSS_SELECTOR, pond)
    seq = int(tile.get_attribute("data-seq"))
    journal = next(e for e in table.service.journal.entries() if e.seq == seq)
    assert journal.kind == "discard" and journal.body["seat"] == seat  # the console numbered it right
    tile.click()
    wait_js(browser, "document.querySelector('.amend-box.open')")
    box = browser.find_element(By.NAME, "amend_tile")
    box.send_keys(new)
    shot(browser, "console")
    browser.find_element(By.CSS_SELECTOR, ".amend-box button[type=submit]").click()
    wait_js(browser, "document.querySelector('.replies li.ok')", 15, "(the service's reply)")
    reply = browser.execute_script("return document.querySelector('.replies li').textContent")
    assert "amend: ok" in reply
    assert table.service.table.state.hand.seats[seat].pond[index].tile.mjai == new
    wait_js(browser, f"document.querySelector(\"{pond}\").dataset.tile === '{new}'")
    shot(browser, "console-amended")
    # a refused command's reply is shown too: a new game cannot start in the middle of one
    browser.find_element(By.CSS_SELECTOR, "form.start button[type=submit]").click()
    refused = wait_js(browser, "document.querySelector('.replies li.error')?.textContent", 15, "(refusal shown)")
    assert "start_game: error — " in refused

    browser.switch_to.window(overlay)
    wait_seq(browser, table.seq)
    wait_js(browser, f"document.querySelector(\"{pond}\").dataset.tile === '{new}'", 10, "(overlay corrected)")
    browser.close()
    browser.switch_to.window(console)


def _published_state(broker, site: str = "club", table: str = "t1") -> dict:
    """The table's retained ``state`` as the broker holds it (a fresh subscriber gets it at once), checked
    against the state schema."""
    got: list[dict] = []
    ready = threading.Event()
    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2)
    client.on_message = lambda _c, _u, msg: (got.append(json.loads(msg.payload)), ready.set())
    client.connect("127.0.0.1", broker.port)
    client.subscribe(f"tablesvc/{site}/{table}/state", qos=1)
    client.loop_start()
    try:
        assert ready.wait(10), "no retained state"
    finally:
        client.loop_stop()
        client.disconnect()
    assert validate("state", got[0]) == []
    return got[0]


def _texts(driver, css: str) -> list[str]:
    return driver.execute_script(f"return [...document.querySelectorAll({css!r})].map(e => e.textContent)")


def _sent(browser) -> list[dict]:
    return browser.execute_script("return window.sentCommands")


def _sign_in(browser, web, path: str) -> None:
    """Open a console page in the module's browser, signing in if the session has not yet."""
    browser.get(f"{web.url}{path}")
    if "/login" in browser.current_url:
        browser.find_element(By.NAME, "password").send_keys(REFEREE_PASSWORD)
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_js(browser, f"location.pathname === {path!r}")


def _answer(browser, *, accept: bool) -> str:
    """The question the page asks (window.confirm), answered OK or Cancel; its text."""
    alert = WebDriverWait(browser, 10).until(expected_conditions.alert_is_present(), "the page asked nothing")
    text = alert.text
    alert.accept() if accept else alert.dismiss()
    return text


def _submit(browser, form: str, fields: dict[str, str], command: str, *, confirm: bool = False) -> str:
    """Fill a console form, submit it (``confirm``: answering OK to the question it asks first), and return the
    reply line it adds (the newest is listed first)."""
    before = browser.execute_script("return document.querySelectorAll('.replies li').length")
    for name, value in fields.items():
        element = browser.find_element(By.CSS_SELECTOR, f"form.{form} [name='{name}']")
        if element.tag_name == "select":
            Select(element).select_by_value(value)
        else:
            element.clear()
            element.send_keys(value)
    browser.find_element(By.CSS_SELECTOR, f"form.{form} button[type=submit]").click()
    if confirm:
        _answer(browser, accept=True)
    wait_js(browser, f"document.querySelectorAll('.replies li').length > {before}", 20, f"(the reply to {command})")
    line = browser.execute_script("return document.querySelector('.replies li').textContent")
    assert f" {command}: " in line
    return line


def test_the_console_rules_a_chombo_ends_the_game_and_starts_one_midway(web, table, browser, broker):
    """chombo, end_game and start_game with a situation (South 2, two honba, a riichi stick, given scores and
    dealer), each from the console's forms: the service's reply is shown and the state it publishes is the
    ruling's."""
    table.play_to(60)  # mid-hand
    names = table.record.players
    _sign_in(browser, web, "/referee/club/t1")
    viewport(browser, 1600, 1000)
    wait_seq(browser, table.seq)
    # what the console posts, as the page's fetch sends it
    browser.execute_script("window.sentCommands = []; const f = window.fetch; window.fetch = (url, options) => {"
                           " if (options && options.body) window.sentCommands.push(JSON.parse(options.body));"
                           " return f(url, options); };")
    # the situation's fields are sent only when filled: none here (refused: a game is being played)
    line = _submit(browser, "start", {}, "start_game")
    assert "start_game: error" in line
    assert _sent(browser) == [{"command": "start_game", "players": list(names), "rules": "ema2012"}]

    # a chombo is asked first: Cancel sends nothing, OK sends it
    sent = len(_sent(browser))
    Select(browser.find_element(By.CSS_SELECTOR, "form.chombo [name='chombo_seat']")).select_by_value("2")
    browser.find_element(By.CSS_SELECTOR, "form.chombo button[type=submit]").click()
    question = _answer(browser, accept=False)
    assert question.startswith(f"Chombo for {names[2]}?"), question
    assert len(_sent(browser)) == sent
    line = _submit(browser, "chombo", {"chombo_seat": "2", "chombo_reason": "wrong ron"}, "chombo", confirm=True)
    assert "chombo: ok" in line and browser.execute_script("return document.querySelector('.replies li').className") \
        == "ok"
    state = _published_state(broker)
    wait_seq(browser, state["seq"])
    assert state["last_result"]["result"] == "chombo" and state["last_result"]["chombo"] == 2
    assert state["last_result"]["chombo_name"] == names[2] and state["phase"] == "between_hands"
    # the chombo on the console's player list, under that player only
    wait_js(browser, "document.querySelector(\".side-info .player[data-seat='2'] .penalty-notes\")", 10,
            "(the chombo on the player list)")
    assert _texts(browser, ".side-info .player[data-seat='2'] .penalty-notes li")[0].startswith("chombo ×1")
    assert _texts(browser, ".side-info .player:not([data-seat='2']) .penalty-notes li") == []
    shot(browser, "console-chombo")

    # time up now is asked first too: Cancel sends nothing, OK sends it
    _submit(browser, "clock-start", {"clock_minutes": "75"}, "clock")
    wait_js(browser, "document.querySelector('button.time-up')", 10, "(the clock's time-up button)")
    sent = len(_sent(browser))
    browser.find_element(By.CSS_SELECTOR, "button.time-up").click()
    assert "Time up now at club/t1?" in _answer(browser, accept=False)
    assert len(_sent(browser)) == sent
    replies = browser.execute_script("return document.querySelectorAll('.replies li').length")
    browser.find_element(By.CSS_SELECTOR, "button.time-up").click()
    _answer(browser, accept=True)
    wait_js(browser, f"document.querySelectorAll('.replies li').length > {replies}", 20, "(the reply to time up)")
    assert _sent(browser)[-1] == {"command": "clock", "action": "time_up", "reason": "called by the referee"}
    assert "clock: ok" in browser.execute_script("return document.querySelector('.replies li').textContent")
    wait_seq(browser, _published_state(broker)["seq"])

    line = _submit(browser, "end-game", {"end_reason": "time limit"}, "end_game")
    assert "end_game: ok" in line
    state = _published_state(broker)
    wait_seq(browser, state["seq"])
    assert state["phase"] == "game_over" and [r["name"] for r in state["final"]["ranking"]]
    wait_js(browser, "document.querySelector('.end-card .final-card')", 10, "(the final ranking on the console)")

    players = ["Ines", "Jun", "Kai", "Lou"]
    scores = ["31000", "24000", "26500", "17500"]  # with one riichi stick on the table: 99,000 in the seats
    fields = {f"p{i}": n for i, n in enumerate(players)}
    fields.update(start_round="S2", start_honba="2", start_sticks="1", start_dealer="1")
    fields.update({f"start_score{i}": v for i, v in enumerate(scores)})
    line = _submit(browser, "start", fields, "start_game")
    assert "start_game: ok" in line
    assert _sent(browser)[-1] == {"command": "start_game", "players": players, "rules": "ema2012", "round": "S2",
                                  "honba": 2, "sticks": 1, "scores": [int(v) for v in scores], "dealer": 1}
    state = _published_state(broker)
    assert state["phase"] == "between_hands" and state["round"] == "S2"
    assert (state["honba"], state["sticks"], state["dealer"]) == (2, 1, 1)
    assert [s["score"] for s in state["seats"]] == [int(v) for v in scores]
    assert [s["name"] for s in state["seats"]] == players
    assert [s["wind"] for s in state["seats"]] == ["N", "E", "S", "W"]  # seat 1 deals
    assert table.service.table.state.round == 5  # the engine's own South 2
    wait_seq(browser, state["seq"])
    # a new game: the console shows its players and situation, not the last game's result or ranking
    wait_js(browser, "!document.querySelector('.end-card')", 10, "(the last game's card gone)")
    assert _texts(browser, ".side-info .player .name") == players
    assert _texts(browser, ".centre .round") == ["South 2"]
    assert _texts(browser, ".centre .honba") == ["×2"] and _texts(browser, ".centre .sticks") == ["×1"]
    shot(browser, "console-start")


def test_a_tampered_session_cookie_and_a_sign_in_without_its_token_are_refused(web, table):
    table.play_to(40)
    before = table.seq
    # a sign-in form posted without the token the sign-in page gave (a cross-site form): refused, no session
    intruder = Client(web.url)
    intruder.get("/login")
    status, page = intruder.post("/login", urllib.parse.urlencode({"password": REFEREE_PASSWORD, "next": "/"}).encode(),
                                 {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 403 and "The form expired" in page
    assert json.loads(intruder.get("/api/session"))["referee"] is False

    # a session cookie is a random id the server holds: one made up, or a real one altered, names no session
    referee = Client(web.url)
    assert referee.sign_in(REFEREE_PASSWORD)[0] == 200
    cookie = next(c for c in referee.opener.handlers if isinstance(c, urllib.request.HTTPCookieProcessor)) \
        .cookiejar
    value = next(c.value for c in cookie if c.name == "tablesvc_session")
    for forged in (base64.urlsafe_b64encode(json.dumps({"referee": True}).encode()).decode(), value[:-2] + "xx"):
        headers = {"Cookie": f"tablesvc_session={forged}", "Content-Type": "application/json",
                   "X-CSRF-Token": "chosen-token"}
        request = urllib.request.Request(f"{web.url}/api/session", headers=headers)
        with urllib.request.urlopen(request, timeout=10) as r:
            assert json.loads(r.read())["referee"] is False
        request = urllib.request.Request(f"{web.url}/api/cmd/club/t1", data=b'{"command": "undo"}',
                                         headers=headers, method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 403 and "signed-in referee" in json.loads(refused.value.read())["error"]
    request = urllib.request.Request(f"{web.url}/referee/club/t1", headers={"Cookie": f"tablesvc_session={forged}"})
    with urllib.request.urlopen(request, timeout=10) as r:
        assert "Referee sign-in" in r.read().decode()  # sent to sign in
    assert table.seq == before  # nothing reached the table
    # the untouched cookie still works
    session = json.loads(referee.get("/api/session"))
    assert session["referee"] is True


def test_the_web_server_works_under_the_recommended_acl(tmp_path):
    """deploy/acl as shipped, on a real Mosquitto with passwords: the table service logs in as its table, the
    web server as 'web'; the console's command reaches the table and its reply comes back."""
    tool = shutil.which("mosquitto_passwd")
    if tool is None:
        pytest.skip("mosquitto_passwd is not installed")
    secured = Mosquitto(tmp_path)
    passwords = tmp_path / "passwd"
    for n, user in enumerate(("club/table-1", "web")):
        password = f"{user.replace('/', '-')}-pw"  # no '/' in a password written inside a URL
        subprocess.run([tool, *(["-c"] if n == 0 else []), "-b", str(passwords), user, password], check=True)
    acl = Path(__file__).resolve().parents[1] / "deploy" / "acl"
    text = secured.conf.read_text().replace("allow_anonymous true", "allow_anonymous false")
    secured.conf.write_text(text + f"password_file {passwords}\nacl_file {acl}\n")
    secured.start()
    host = f"127.0.0.1:{secured.port}"
    # a table service's account is <site>/<table> ('/' written %2F in the URL)
    live = LiveTable(f"mqtt://club%2Ftable-1:club-table-1-pw@{host}", tmp_path / "data", table="table-1").start()
    server = start_web(f"mqtt://web:web-pw@{host}")
    try:
        live.play_to(40)
        referee = Client(server.url)
        referee.sign_in(REFEREE_PASSWORD)
        csrf = json.loads(referee.get("/api/session"))["csrf"]
        before = live.seq
        status, reply = referee.command_to("club", "table-1", {"command": "undo"}, csrf)
        assert status == 200 and reply["status"] == "ok" and live.seq == before + 1
        feed = server.store.table("club", "table-1")
        assert feed.online and feed.state["seq"] == live.seq  # and it reads the table's feed
    finally:
        server.stop()
        live.stop()
        secured.stop()


def test_a_chombo_under_ema2016_shows_on_the_player_list_and_the_final_ranking(web, table, browser):
    """The 20,000 an ema2016 chombo costs, taken off the final result, is a column of the final ranking with the
    chombo named, and the player list names the chombo: what the totals include, everyone sees."""
    table.command({"command": "start_game", "players": ["Ann", "Bo", "Cy", "Di"], "rules": "ema2016"})
    table.command({"command": "event", "event": {"type": "hand_start"}})
    table.command({"command": "event", "event": {"type": "dora", "tile": "W"}})
    _sign_in(browser, web, "/referee/club/t1")
    viewport(browser, 1600, 1000)
    wait_seq(browser, table.seq)
    _submit(browser, "chombo", {"chombo_seat": "1", "chombo_reason": "wrong riichi"}, "chombo", confirm=True)
    wait_js(browser, "document.querySelector(\".side-info .player[data-seat='1'] .penalty-notes\")", 10,
            "(the chombo on the player list)")
    line = _submit(browser, "end-game", {"end_reason": "time limit"}, "end_game")
    assert "end_game: ok" in line
    wait_js(browser, "document.querySelector('.end-card .final-card')", 10, "(the final ranking on the console)")
    final = table.service.table.state.final
    assert final is not None
    assert _texts(browser, ".final-card thead th") == ["", "", "points", "uma", "penalty", "result"]
    cells = browser.execute_script(
        "return [...document.querySelectorAll('.final-card tbody tr')].map(r => [r.dataset.seat,"
        " r.querySelector('.penalty').textContent, r.querySelector('.result').textContent])")
    by_seat = {int(seat): (penalty, result) for seat, penalty, result in cells}
    assert by_seat[1][0] == "−20,000 (chombo ×1)"
    assert [by_seat[s][0] for s in (0, 2, 3)] == ["", "", ""]
    result = next(s.result for s in final.standings if s.seat == 1)
    assert by_seat[1][1] == (f"+{result:,}" if result > 0 else f"−{-result:,}" if result < 0 else "±0")
    browser.execute_script("document.querySelector('.final-card').scrollIntoView({block: 'center'})")
    shot(browser, "console-final-chombo")


def test_a_red_five_under_ema2016_is_an_alert_on_the_console_until_the_next_game(web, table, browser):
    """The service's red-five alert reaches the console (over the broker and the web server's feed), and the
    next game starts without it."""
    table.command({"command": "start_game", "players": ["Ann", "Bo", "Cy", "Di"], "rules": "ema2016"})
    for event in ({"type": "hand_start"}, {"type": "dora", "tile": "W"}, {"type": "discard", "seat": 0, "tile": "5pr"}):
        table.command({"command": "event", "event": event})
    _sign_in(browser, web, "/referee/club/t1")
    viewport(browser, 1600, 1000)
    wait_seq(browser, table.seq)
    text = wait_js(browser, "(document.querySelector('.table-alerts .alerts li') || {}).textContent", 15,
                   "(the red five's alert on the console)")
    assert "red five (5pr)" in text and "ema2016" in text and "5p" in text, text
    table.command({"command": "end_game", "reason": "the tiles swapped"})
    table.command({"command": "start_game", "players": ["Ann", "Bo", "Cy", "Di"], "rules": "ema2016"})
    wait_seq(browser, table.seq)
    wait_js(browser, "!document.querySelector('.table-alerts')", 15, "(the last game's alert gone)")
