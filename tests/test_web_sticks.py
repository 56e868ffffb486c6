"""The score sticks' alert in a real headless Chromium: a game on simulated devices with a stick tray reader, one
hand paid wrong; the dashboard, the table page and the referee console show the alert; the referee rules the sticks
wrong (the alert waits for the players), rechecks, then takes the trays' scores in one click. Everything real:
Mosquitto, the pseudo-terminals, the service, the web server."""

from __future__ import annotations

from selenium.webdriver.common.by import By

from hardware_sims.sticks import Mispayment
from tests import test_sticks_service, web_support
from tests.web_support import REFEREE_PASSWORD, shot, start_web, viewport, wait_js

browser = web_support.browser
stick_table = test_sticks_service.stick_table  # the trays settling, and compared, on the tests' time scale


def _sign_in(browser, web, path: str) -> None:
    browser.get(f"{web.url}{path}")
    if "/login" in browser.current_url:
        browser.find_element(By.NAME, "password").send_keys(REFEREE_PASSWORD)
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_js(browser, f"location.pathname === {path!r}")


def _click(browser, css: str) -> None:
    """Click a button as a person does, once the page has stopped moving it (each message re-renders the page)."""
    wait_js(browser, f"document.querySelector({css!r})")
    browser.execute_script(f"document.querySelector({css!r}).click()")


def test_a_mispayment_is_seen_on_the_dashboard_the_table_page_and_the_console(stick_table, browser):
    sticks = stick_table.messages("sticks")
    web = start_web(stick_table.broker.url)
    try:
        stick_table.play(seed=3, mispay=Mispayment(hand=2),
                         until=lambda: any(m["status"] == "mismatch" for m in sticks))
        assert stick_table.wait_for(lambda: any(m["status"] == "mismatch" for m in sticks), 20)
        alert = next(m for m in sticks if m["status"] == "mismatch")
        path = f"{stick_table.site}/{stick_table.table}"

        viewport(browser, 1280, 720)
        browser.get(f"{web.url}/")
        text = wait_js(browser, "document.querySelector('.alerts li.sticks')?.textContent", 20)
        assert alert["text"].split(" (after")[0] in text
        shot(browser, "dashboard-sticks")

        viewport(browser, 1600, 1000)
        browser.get(f"{web.url}/table/{path}")
        panel = wait_js(browser, "document.querySelector('.panel.sticks.mismatch')?.textContent", 20)
        assert "differ" in panel and alert["text"] in panel
        differing = browser.execute_script(
            "return [...document.querySelectorAll('.sticks-table tr.differs')].map(r => r.dataset.seat)")
        assert sorted(int(s) for s in differing if s is not None) == sorted(d["seat"] for d in alert["differences"])
        shot(browser, "table-sticks")

        _sign_in(browser, web, f"/referee/{path}")
        wait_js(browser, "document.querySelector('.panel.sticks.mismatch .sticks-take')", 20)
        shot(browser, "console-sticks")
        # the sticks are wrong, says the referee: the alert goes, waiting for the players to fix their trays
        _click(browser, ".panel.sticks .sticks-dismiss")
        text = wait_js(browser, "document.querySelector('.panel.sticks[data-status=waiting] .sticks-text')"
                       "?.textContent", 20)
        assert "fix their trays" in text and not browser.find_elements(By.CSS_SELECTOR, ".sticks-take")
        # they did not: a recheck compares the same trays again, and the alert is back after the grace
        _click(browser, ".panel.sticks .sticks-recheck")
        wait_js(browser, "document.querySelector('.panel.sticks.mismatch .sticks-take')", 30)
        trays = sticks[-1]["trays"]
        _click(browser, ".panel.sticks .sticks-take")
        wait_js(browser, "document.querySelector('.panel.sticks')?.dataset.status === 'ok'", 20)
        wait_js(browser, "document.querySelector('.replies li')?.textContent.includes('set_scores: ok')", 20)
        assert list(stick_table.service.table.state.scores) == trays
        # the game over, a new one starts from the trays as they lie, with the console's button
        browser.execute_script("window.tablesvcReferee.send({command: 'end_game', reason: 'the session is over'})")
        wait_js(browser, "document.querySelector('.replies li')?.textContent.includes('end_game: ok')", 20)
        _click(browser, "button.start-from-sticks")
        wait_js(browser, "document.querySelector('.replies li')?.textContent.includes('start_game: ok')", 20)
        state = stick_table.service.table.state
        assert state.phase.value != "game_over" and list(state.scores) == list(stick_table.tray.trays)
        browser.get(f"{web.url}/")
        wait_js(browser, "document.body.dataset.tables === '1' && !document.querySelector('.alerts li.sticks')", 20)
    finally:
        web.stop()
