"""The referee console in a real headless Chromium: sign-in, a discard amended by clicking it, the overlay
showing the correction; and what is refused: a wrong password, a command without the CSRF token, a viewer's
command. Commands travel over MQTT ``cmd`` to a real table service, which answers them, also under the
recommended broker ACL (deploy/acl).
"""

from __future__ import annotations

import http.cookiejar
import json
import re
import shutil
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from tests import web_support
from tests.conftest import Mosquitto
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
    assert status == 401 and "Wrong password." in page
    assert json.loads(intruder.get("/api/session")) == {"referee": False, "csrf": None, "standings": False}
    assert intruder.command({"command": "undo"}, csrf=None)[0] == 403

    referee = Client(web.url)
    status, _ = referee.sign_in(REFEREE_PASSWORD)
    assert status == 200  # redirected to the page it came for
    session = json.loads(referee.get("/api/session"))
    assert session["referee"] is True and len(session["csrf"]) > 20
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
