"""The club dashboard and the table page in a real headless Chromium.

Three tables publish to one Mosquitto, none configured in the web server: the
demo (real pseudo-terminal devices, so device health), an idle ``tablesvc run``
and an in-process table in the middle of a game with a refused event and a
chombo. The dashboard lists all three; SIGKILL on the idle service shows it
offline within a second (its Last Will). The table page shows the hand history
with deltas, and its downloads are the game as the project's exporters write it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from hardware_sims.pytest_plugin import eventually
from tablesvc.engine.events import ExhaustiveDraw, Ron, Tsumo
from tablesvc.formats.mjai import export_mjai
from tablesvc.formats.record import RecordedGame
from tablesvc.replay import replay
from tests import web_support
from tests.web_support import LiveTable, shot, start_web, viewport, wait_js
from vision.table.observations import TileDiscarded

# the module's own Mosquitto, Chromium (tests/web_support.py)
broker, browser = web_support.broker, web_support.browser


def _spawn(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tablesvc", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _texts(driver, css: str) -> list[str]:
    return driver.execute_script(f"return [...document.querySelectorAll({css!r})].map(e => e.textContent)")


def test_dashboard_lists_every_table_and_shows_one_offline_when_killed(broker, browser, tmp_path):
    web = start_web(broker.url)
    config = tmp_path / "t2.toml"
    config.write_text(f'[table]\nsite = "club"\nid = "t2"\ndata_dir = "{tmp_path / "d2"}"\n'
                      f'[mqtt]\nurl = "{broker.url}"\n')
    demo = _spawn(["demo", "--broker", broker.url, "--site", "club", "--table", "t1", "--speed", "3", "--seed", "5",
                   "--data-dir", str(tmp_path / "d1")])
    idle = _spawn(["run", "--config", str(config)])
    table = LiveTable(broker.url, tmp_path / "d3", table="t3").start()
    try:
        table.play_until(lambda e: isinstance(e, Ron | Tsumo | ExhaustiveDraw))
        table.play_until(lambda e: isinstance(e, Ron | Tsumo | ExhaustiveDraw))
        table.play_to(table.index + 30)
        wrong = (table.service.table.state.hand.turn + 2) % 4  # a camera sees a discard out of turn: refused
        table.service.observe(TileDiscarded(camera="camera", timestamp=time.monotonic(), seat=wrong, tile="5m"))
        assert table.service.wait_idle(10)
        browser.get(f"{web.url}/")
        viewport(browser, 1600, 1000)
        wait_js(browser, "document.querySelectorAll('.table-card.online').length === 3", 30, "(three tables online)")
        assert _texts(browser, ".table-card .head .name") == ["club / t1", "club / t2", "club / t3"]
        names = table.record.players
        t3 = ".table-card[data-table='t3']"
        assert _texts(browser, f"{t3} .player-name") == list(names)
        scores = table.service.table.state.scores
        assert _texts(browser, f"{t3} .score") == [f"{s:,}" for s in scores]
        assert _texts(browser, f"{t3} .hands b") == [str(len(table.service.table.state.results))]
        wait_js(browser, f"document.querySelector(\"{t3} .alerts li[data-kind='refused']\")", 10, "(refused alert)")
        # the demo's devices are real serial drivers on pseudo-terminals: their health is listed
        wait_js(browser, "document.querySelectorAll(\".table-card[data-table='t1'] .device.up\").length >= 2", 30,
                "(demo devices)")
        table.command({"command": "chombo", "seat": 2, "reason": "wrong tenpai call"})
        wait_js(browser, f"document.querySelector(\"{t3} .alerts li[data-kind='chombo']\")", 10, "(chombo alert)")
        assert any(names[2] in t for t in _texts(browser, f"{t3} .alerts li[data-kind='chombo']"))

        idle.send_signal(signal.SIGKILL)
        idle.wait(10)
        # the broker sees the killed service's connection close and sends its Last Will at once (docs/web.md:
        # "within a second"); the keepalive (15 s, a silent client declared gone 22.5 s after its last packet,
        # sent at most 15 s before) could not have taken it offline in under 7.5 s
        wait_js(browser, "document.querySelector(\".table-card[data-table='t2'].offline\")", 7, "(t2 offline)")
        assert _texts(browser, ".table-card[data-table='t2'] .badge") == ["offline"]
        assert [t.split(" ago")[0][:13] for t in _texts(browser, ".table-card[data-table='t2'] .alerts li")] == [
            "table offline"]
        viewport(browser, 1600, 420)  # the picture: just the three cards
        wait_js(browser, "window.innerWidth === 1600 && window.innerHeight === 420")
        shot(browser, "dashboard")

        # ---- the table page: the hand history with deltas, and the downloads
        browser.get(f"{web.url}/table/club/t3")
        viewport(browser, 1600, 1000)
        wait_js(browser, f"Number(document.body.dataset.seq) >= {table.seq}")
        results = table.service.table.state.results
        rows = browser.execute_script("return [...document.querySelectorAll('table.history tbody tr')].map(r => "
                                      "[...r.children].slice(2).map(c => c.textContent))")
        assert len(rows) == len(results)
        assert rows[0] == [f"+{d:,}" if d > 0 else f"−{-d:,}" if d < 0 else "±0" for d in results[0].deltas]
        # tenhou.net/6 needs the deal, which a live table does not show: the link is greyed and says why
        wait_js(browser, "document.querySelector(\".downloads a[data-format='tenhou6'].unavailable\")", 10,
                "(tenhou.net/6 greyed)")
        title = browser.execute_script(
            "return document.querySelector(\".downloads a[data-format='tenhou6']\").title")
        assert "only mjai is available" in title and "the deal was not seen" in title
        assert _texts(browser, ".downloads .unavailable-why") == [title]
        assert browser.execute_script("return document.querySelector(\".downloads a[data-format='tenhou6']\")"
                                      ".getAttribute('href')") is None
        assert browser.execute_script("return document.querySelector(\".downloads a[data-format='mjai']\")"
                                      ".getAttribute('href')") == "/download/club/t3.mjai"
        shot(browser, "table-page")
        with urllib.request.urlopen(f"{web.url}/download/club/t3.mjai", timeout=10) as response:
            assert response.headers["Content-Disposition"].endswith('club-t3.mjai.jsonl"')
            text = response.read().decode()
        events = table.service.table.events
        record = RecordedGame(source="club/t3", events=events, players=names, rules=events[0].rules)
        assert text == export_mjai(record, replay(record))
        assert json.loads(text.splitlines()[0])["type"] == "start_game"
        # tenhou.net/6 writes every tile; a camera over a live table sees no deal nor concealed draws: refused, why
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{web.url}/download/club/t3.tenhou6", timeout=10)
        assert refused.value.code == 409
        message = refused.value.read().decode()
        assert "the deal was not seen" in message and "only mjai is available" in message
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"{web.url}/download/club/t2.mjai", timeout=10)
        assert missing.value.code == 409  # t2 played nothing the server saw: it says so, writes no half game
    finally:
        table.stop()
        for proc in (demo, idle):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
        web.stop()


def test_a_game_with_every_tile_downloads_as_tenhou6(broker, browser):
    """A table that publishes the deal (a recorded or generated log replayed with full information, as
    bench/web.py's ``game_payloads``): tenhou.net/6 is offered, and the download is the project's exporter's
    text of the same game."""
    from bench.web import game_payloads
    from hardware_sims.generator import generate_game
    from tablesvc.engine.engine import Engine
    from tablesvc.formats.tenhou6 import export_tenhou6
    from tablesvc.mqtt.payloads import state_payload

    _, events, _ = game_payloads(17)
    record = generate_game(17)
    engine = Engine()
    for event in record.events:
        engine.apply(event)
    final_state = state_payload(engine.state, len(events))
    assert any(e["kind"] == "hand_start" and e["event"].get("hands") for e in events)  # the deal is in the feed
    web = start_web(broker.url)
    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2)
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    try:
        for payload in events:
            client.publish("tablesvc/club/full/events", json.dumps(payload), qos=1)
        client.publish("tablesvc/club/full/state", json.dumps(final_state), qos=1).wait_for_publish(10)
        eventually(lambda: (web.store.table("club", "full") or None) is not None
                   and (web.store.table("club", "full").state or {}).get("seq") == len(events), 15,
                   what="the web server has the game's last state")
        with urllib.request.urlopen(f"{web.url}/download/club/full.tenhou6", timeout=20) as response:
            assert response.headers["Content-Disposition"].endswith('club-full.tenhou6.json"')
            text = response.read().decode()
        same = RecordedGame(source="club/full", events=record.events, players=record.players, rules=record.rules)
        assert text == export_tenhou6(same, replay(same))
        assert len(json.loads(text)["log"]) == len(record.hands)  # every hand, every tile

        browser.get(f"{web.url}/table/club/full")
        wait_js(browser, f"Number(document.body.dataset.seq) >= {len(events)}")
        links = browser.execute_script("return [...document.querySelectorAll('.downloads a')].map(a => "
                                       "[a.dataset.format, a.getAttribute('href'), a.className])")
        assert links == [["mjai", "/download/club/full.mjai", ""], ["tenhou6", "/download/club/full.tenhou6", ""]]
        assert _texts(browser, ".downloads .unavailable-why") == []
    finally:
        client.loop_stop()
        client.disconnect()
        web.stop()


def _game_feed(record, count: int, first: float, last: float) -> tuple[list[dict], dict]:
    """The first ``count`` journal entries of ``record`` as the service publishes them on ``events``, written
    evenly from ``first`` to ``last`` (epoch seconds), and the retained ``state`` after the last one."""
    from tablesvc.engine.engine import Engine
    from tablesvc.engine.events import to_dict
    from tablesvc.mqtt.payloads import iso_time, state_payload

    engine = Engine()
    events = []
    for seq, event in enumerate(record.events[:count], 1):
        engine.apply(event)
        ts = first + (last - first) * (seq - 1) / max(1, count - 1)
        events.append({"schema": 1, "seq": seq, "ts": iso_time(ts), "source": "test", "kind": event.type,
                       "event": to_dict(event)})
    return events, state_payload(engine.state, count, ts=last)


def test_dashboard_times_device_health_and_alerts_come_from_the_feed(broker, browser):
    """"Online for" is the table's own: its retained status says when its service started, so a web server
    started later does not show it online "for 0 s"; "in game" runs from the game's first journal entry and
    stops at its end; a device's error counts and its loss, and a game idle longer than the threshold, are
    shown. Every payload is the service's own kind, checked against its schema."""
    from hardware_sims.generator import generate_game
    from tablesvc.mqtt.payloads import iso_time, status_payload
    from tests.feed_schemas import validate

    now = time.time()
    record = generate_game(17)
    over_events, over_state = _game_feed(record, len(record.events), now - 2700, now - 1500)  # 20 min, over
    idle_events, idle_state = _game_feed(record, 100, now - 630, now - 200)  # 10 min in, idle for 3
    assert over_state["phase"] == "game_over" and idle_state["phase"] == "playing"
    retained = {
        "tablesvc/club/over/status": status_payload(True, version="1", started=iso_time(now - 7500), site="club",
                                                    table="over"),
        "tablesvc/club/idle/status": status_payload(True, version="1", started=iso_time(now - 630), site="club",
                                                    table="idle"),
    }
    devices = {
        "tablesvc/club/idle/devices/table": {
            "schema": 1, "name": "table", "ts": iso_time(now), "connected": False, "state": "no answer",
            "frames_ok": 812, "frames_bad": {"checksum": 2, "framing": 1}, "lines_per_second": 0.0,
            "last_seen": iso_time(now - 40), "last_seen_ago": 40.0, "reconnects": 5},
        "tablesvc/club/idle/devices/camera": {
            "schema": 1, "name": "camera", "ts": iso_time(now), "source": "/dev/video0", "connected": True,
            "state": "reading", "fps": 29.5, "frames": 18000, "dropped": 3, "errors": 2, "reconnects": 0,
            "last_frame": iso_time(now), "last_frame_ago": 0.0},
    }
    for topic, payload in [*retained.items(), *devices.items(), ("tablesvc/club/over/state", over_state),
                           ("tablesvc/club/idle/state", idle_state), *(("tablesvc/club/over/events", e)
                                                                       for e in over_events[:3])]:
        assert validate(topic.split("/", 3)[3], payload) == [], topic
    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2)
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    web = None
    try:
        for topic, payload in retained.items():  # the tables came online long before this web server started
            client.publish(topic, json.dumps(payload), qos=1, retain=True).wait_for_publish(5)
        web = start_web(broker.url, idle_alert=60)
        for base, events, state in (("tablesvc/club/over", over_events, over_state),
                                    ("tablesvc/club/idle", idle_events, idle_state)):
            for payload in events:
                client.publish(f"{base}/events", json.dumps(payload), qos=1)
            client.publish(f"{base}/state", json.dumps(state), qos=1, retain=True).wait_for_publish(10)
        for topic, payload in devices.items():
            client.publish(topic, json.dumps(payload), qos=1, retain=True).wait_for_publish(5)

        browser.get(f"{web.url}/")
        viewport(browser, 1600, 1000)
        over, idle = ".table-card[data-table='over']", ".table-card[data-table='idle']"
        wait_js(browser, f"document.querySelector(\"{idle} .device[data-name='camera']\") && "
                f"document.querySelector(\"{over} .hands b\")?.textContent === '{len(record.hands)}' && "
                f"document.querySelector(\"{over} .elapsed b\")?.textContent !== '—'", 15,
                "(both tables, their devices and the game's first events)")
        assert _texts(browser, f"{over} .since") == ["for 2 h 5 min"]  # not "for 0 s": its service's start
        assert _texts(browser, f"{idle} .since") == ["for 10 min"]
        assert _texts(browser, f"{over} .elapsed b") == ["20 min"]  # first entry to game over, not to now
        assert _texts(browser, f"{idle} .elapsed b") == ["10 min"]  # a game in play: to now
        devs = browser.execute_script(f"return [...document.querySelectorAll(\"{idle} .devices .device\")].map(d => "
                                      "[d.dataset.name, d.className, d.querySelector('.errors')?.textContent])")
        assert devs == [["camera", "device up", "2 errors"], ["table", "device down", "3 errors"]]
        alerts = browser.execute_script(f"return [...document.querySelectorAll(\"{idle} .alerts li\")].map(a => "
                                        "[a.dataset.kind, a.firstChild.textContent])")
        assert alerts == [["device", "table lost (no answer)"], ["idle", "idle for 3 min"]]
        assert _texts(browser, f"{over} .alerts li") == []  # a game over is not idle
        assert _texts(browser, f"{over} .round-line .round") == ["Final"]  # not the round that would come next
        assert browser.execute_script(f"return getComputedStyle(document.querySelector(\"{idle} .alerts li\"), "
                                      "'::before').content") == "none"  # a device's mark is not an alert's
        shot(browser, "dashboard-times")

        # a web server restarted now shows the same: the times are the tables' own, not when it heard them
        web.stop()
        web = start_web(broker.url, idle_alert=60)
        eventually(lambda: web.store.table("club", "over") or None, 10,
                   what="the retained messages of table 'over'")
        row = next(r for r in json.loads(urllib.request.urlopen(f"{web.url}/api/tables", timeout=10).read())["tables"]
                   if r["table"] == "over")
        assert row["online"] and abs(row["since"] - (now - 7500)) < 0.01
    finally:
        client.loop_stop()
        client.disconnect()
        if web is not None:
            web.stop()
