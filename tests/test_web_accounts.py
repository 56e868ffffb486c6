"""Referees with names: accounts written by ``tablesvc web --add-referee``, a referee signing in by name in a
real Chromium, the command journalled as ``referee:NAME``, the name in the console's reply, on the table page's
"Referee" panel and in ``tablesvc games show``; the one-password form as the account ``referee``.
"""

from __future__ import annotations

import io
import json
import sys
import urllib.parse
from collections import Counter

import pytest
from selenium.webdriver.common.by import By

from tablesvc.cli import main
from tablesvc.config import ConfigError, load_web_config
from tablesvc.web.accounts import AccountError, add_referee
from tablesvc.web.auth import hash_password, verify_password
from tests import web_support
from tests.web_support import LiveTable, shot, start_web, viewport, wait_js, wait_seq

broker, browser = web_support.broker, web_support.browser

ANN, BEN = "amber lantern 31", "blue kettle 77"


@pytest.fixture(scope="module")
def web(broker):
    """A web server with two named referees and the one-password account `referee` beside them."""
    server = start_web(broker.url, accounts={"Ann": hash_password(ANN), "Ben": hash_password(BEN)})
    yield server
    server.stop()


@pytest.fixture
def table(broker, tmp_path):
    live = LiveTable(broker.url, tmp_path / "data", table="t1").start()
    yield live
    live.stop()


def test_add_referee_writes_the_hash_keeps_the_file_and_replaces_a_password(tmp_path, monkeypatch, capsys):
    config = tmp_path / "web.toml"
    config.write_text('# the club\'s web server\n[web]\nlisten = "0.0.0.0:8080"  # all interfaces\n\n'
                      '[mqtt]\nurl = "mqtt://127.0.0.1:1883"\n', encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", io.StringIO("amber lantern 31\n"))
    assert main(["web", "--add-referee", "Ann", "--config", str(config)]) == 0
    assert "added referee Ann" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.StringIO("mist harbour 5\n"))
    assert main(["web", "--add-referee", "Zoë K.", "--config", str(config)]) == 0
    text = config.read_text(encoding="utf-8")
    assert "# the club's web server" in text and "# all interfaces" in text  # comments kept
    web, url, _ = load_web_config(config)
    assert url == "mqtt://127.0.0.1:1883" and set(web.accounts) == {"Ann", "Zoë K."}
    assert verify_password("amber lantern 31", web.accounts["Ann"])
    assert verify_password("mist harbour 5", web.accounts["Zoë K."])
    assert "amber lantern" not in text  # only the hash is written

    monkeypatch.setattr(sys, "stdin", io.StringIO("a new one 8\n"))  # Ann's new password replaces the old
    assert main(["web", "--add-referee", "Ann", "--config", str(config)]) == 0
    assert "new password for referee Ann" in capsys.readouterr().out
    web, _, _ = load_web_config(config)
    assert verify_password("a new one 8", web.accounts["Ann"]) and len(web.accounts) == 2
    assert config.read_text(encoding="utf-8").count("Ann") == 1

    before = config.read_text(encoding="utf-8")
    for bad in ("Ann/../x", "", "a" * 41, "x\ud800", "#admin"):
        monkeypatch.setattr(sys, "stdin", io.StringIO("some password\n"))
        assert main(["web", "--add-referee", bad, "--config", str(config)]) == 2
        assert "cannot name a referee" in capsys.readouterr().err or bad == "x\ud800"
    assert config.read_text(encoding="utf-8") == before  # nothing written for a refused name
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n"))
    assert main(["web", "--add-referee", "Cat", "--config", str(config)]) == 2
    assert "cannot be empty" in capsys.readouterr().err
    assert main(["web", "--add-referee", "Cat"]) == 2
    assert "give --config FILE" in capsys.readouterr().err

    broken = tmp_path / "broken.toml"
    broken.write_text('[web]\nlisten = "nowhere"\n', encoding="utf-8")
    with pytest.raises(AccountError, match="left as it was"):
        add_referee(broken, "Ann", hash_password("x"))
    assert broken.read_text(encoding="utf-8") == '[web]\nlisten = "nowhere"\n'


def test_config_accounts_are_checked_and_the_password_form_is_the_account_referee(tmp_path):
    def web(text: str):
        path = tmp_path / "w.toml"
        path.write_text(text, encoding="utf-8")
        return load_web_config(path)[0]

    stored = hash_password("x")
    config = web(f'[web]\nreferee_password = "{stored}"\n[web.referees]\nAnn = "{stored}"\n"Zoë K." = "{stored}"\n')
    assert sorted(config.accounts) == ["Ann", "Zoë K.", "referee"]
    assert "scrypt" not in repr(config)  # hashes stay out of logs
    with pytest.raises(ConfigError, match=r"line 3: \[web.referees\] Ann: store the password hashed"):
        web('[web]\n[web.referees]\nAnn = "plain"\n')
    with pytest.raises(ConfigError, match=r"\[web.referees\] a/b: a referee's name is 1 to 40"):
        web(f'[web.referees]\n"a/b" = "{stored}"\n')
    with pytest.raises(ConfigError, match="keep one of the two"):
        web(f'[web]\nreferee_password = "{stored}"\n[web.referees]\nreferee = "{stored}"\n')
    with pytest.raises(ConfigError, match=r"\[web\] session_idle: seconds from 60"):
        web("[web]\nsession_idle = 5\n")
    with pytest.raises(ConfigError, match=r"\[web\] trusted_proxies: 'proxy.lan' is not an IP address"):
        web('[web]\ntrusted_proxies = ["proxy.lan"]\n')
    config = web('[web]\nhttps = true\nsession_idle = 900\ntrusted_proxies = ["127.0.0.1", "10.0.0.0/8"]\n')
    assert config.https and config.session_idle == 900 and config.trusted_proxies == ("127.0.0.1", "10.0.0.0/8")


def _sign_in(browser, web, path: str, name: str, password: str) -> None:
    browser.delete_all_cookies()
    browser.get(f"{web.url}{path}")
    assert "/login" in browser.current_url
    browser.find_element(By.NAME, "name").send_keys(name)
    browser.find_element(By.NAME, "password").send_keys(password)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_js(browser, f"location.pathname === {path!r}")


def test_a_named_referee_amends_and_the_name_is_journalled_and_shown(web, table, browser, tmp_path, capsys):
    table.play_to(120)  # mid-hand
    state = table.service.table.state
    seen = Counter(p.tile.mjai for s in state.hand.seats for p in s.pond)
    seen.update(t.mjai for s in state.hand.seats for m in s.melds for t in m.tiles)
    seat = next(s for s in range(4) if any(not p.called and not p.riichi for p in state.hand.seats[s].pond))
    index = max(i for i, p in enumerate(state.hand.seats[seat].pond) if not p.called and not p.riichi)
    new = next(t for t in ("1m", "9m", "1p", "9p", "1s", "9s", "2m", "8p", "2s")
               if seen[t] == 0 and t != state.hand.seats[seat].pond[index].tile.mjai)

    # the sign-in page asks for a name when the server has named accounts; a wrong one is refused
    browser.delete_all_cookies()
    browser.get(f"{web.url}/referee/club/t1")
    viewport(browser, 900, 700)
    browser.find_element(By.NAME, "name").send_keys("Ann")
    browser.find_element(By.NAME, "password").send_keys(BEN)  # Ben's password is not Ann's
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_js(browser, "document.querySelector('.login .error')")
    assert "Wrong name or password." in browser.find_element(By.CSS_SELECTOR, ".login .error").text
    assert browser.find_element(By.NAME, "name").get_attribute("value") == "Ann"  # kept for the next try
    browser.find_element(By.NAME, "password").send_keys(ANN)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_js(browser, "location.pathname === '/referee/club/t1'")
    viewport(browser, 1600, 1000)
    wait_seq(browser, table.seq)
    assert wait_js(browser, "document.querySelector('.signed-in .referee-name')?.textContent") == "Ann"

    pond = f".side[data-seat='{seat}'] .pond .tile[data-index='{index}']"
    target = int(browser.find_element(By.CSS_SELECTOR, pond).get_attribute("data-seq"))
    browser.find_element(By.CSS_SELECTOR, pond).click()
    wait_js(browser, "document.querySelector('.amend-box.open')")
    browser.find_element(By.NAME, "amend_tile").send_keys(new)
    browser.find_element(By.CSS_SELECTOR, ".amend-box button[type=submit]").click()
    line = wait_js(browser, "document.querySelector('.replies li.ok')?.textContent", 15, "(the service's reply)")
    assert "amend: ok" in line and line.endswith("(by Ann)")

    # the journal names her
    amend = table.service.journal.get(table.seq)
    assert amend.kind == "amend" and amend.source == "referee:Ann" and amend.body["seq"] == target
    # the table page, on a phone: "#N amended by Ann, HH:MM"
    browser.switch_to.new_window("window")
    try:
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": 390, "height": 1180, "deviceScaleFactor": 2, "mobile": True})
        browser.get(f"{web.url}/table/club/t1")
        wait_seq(browser, table.seq)
        ruling = wait_js(browser, "document.querySelector('ul.rulings li')?.textContent", 10, "(the ruling shown)")
        assert ruling.startswith(f"#{target} amended by Ann, ")
        hhmm = browser.execute_script("return document.querySelector('ul.rulings .when').textContent")
        assert len(hhmm) == 5 and hhmm[2] == ":"
        # the page fits the phone's width: nothing to scroll sideways
        assert browser.execute_script("return document.documentElement.scrollWidth") <= 390
        shot(browser, "table-phone-referee")
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        browser.close()
        browser.switch_to.window(browser.window_handles[0])

    # and `tablesvc games show` names the referees of the game (read beside the running service)
    assert main(["games", "show", "t1", "--data-dir", str(tmp_path / "data")]) == 0
    out = capsys.readouterr().out
    assert "referees: referee (1 entry), Ann (1 entry)" in out  # the game's start (LiveTable) and Ann's amend


def test_the_one_password_form_still_signs_in_as_referee(web, table):
    """Sign-in without a name (the form of a server with only referee_password) is the account `referee`."""
    from tests.test_web_referee import Client

    table.play_to(30)
    client = Client(web.url)
    assert client.sign_in(web_support.REFEREE_PASSWORD)[0] == 200
    session = json.loads(client.get("/api/session"))
    assert session["name"] == "referee"
    status, reply = client.command({"command": "undo"}, session["csrf"])
    assert status == 200 and reply["status"] == "ok" and reply["by"] == "referee"
    assert table.service.journal.get(table.seq).source == "referee:referee"


def test_the_login_page_screenshot(web, browser):
    browser.delete_all_cookies()
    viewport(browser, 900, 640)
    browser.get(f"{web.url}/login")
    browser.find_element(By.NAME, "name").send_keys("Ann")
    shot(browser, "login")


def test_a_seat_panel_cannot_undo_a_named_referees_ruling(table):
    """The panel's undo takes back the table's last move, never a referee's ruling: one with a name as well."""
    import time

    from drivers.observations import Button, ButtonPressed

    table.play_to(60)
    table.command({"command": "dead_hand", "seat": 2, "reason": "six tiles shown", "by": "Ann"})
    ruling = table.service.journal.get(table.seq)
    assert ruling.kind == "dead_hand" and ruling.source == "referee:Ann"
    table.service.observe(ButtonPressed(device="panel-sim", seq=60_000, timestamp=time.monotonic(), seat=0,
                                        button=Button.UNDO))
    assert table.service.wait_idle(10)
    assert table.seq == ruling.seq and table.service.table.state.hand.seats[2].dead  # not taken back


def test_a_command_names_its_referee_only_in_the_allowed_form(table):
    table.play_to(30)
    before = table.seq
    for bad in ("", "a" * 41, "Ann/x", "-Ann", "Ann\n", 7):
        table.command({"command": "dead_hand", "seat": 1, "by": bad})
        assert table.seq == before  # refused by the schema, before anything is journalled
    table.command({"command": "dead_hand", "seat": 1, "by": "Zoë K."})
    assert table.service.journal.get(table.seq).source == "referee:Zoë K."


def test_a_hash_of_absurd_cost_is_refused_not_computed(broker):
    """An account whose stored hash asks for 2**30 rounds (a hand-edited file) neither holds up the start nor
    the sign-in: it simply never matches."""
    from tests.test_web_referee import Client

    server = start_web(broker.url, accounts={"Odd": "scrypt$1073741824$8$1$00ff$00ff", "Ann": hash_password(ANN)})
    try:
        client = Client(server.url)
        page = client.get("/login")
        csrf = page.split('name="csrf" value="')[1].split('"')[0]
        status, text = client.post("/login", urllib.parse.urlencode(
            {"csrf": csrf, "name": "Odd", "password": "x", "next": "/"}).encode(),
            {"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 401 and "Wrong name or password." in text
    finally:
        server.stop()
