"""A table with no devices, fed by the players' phones: a real table service on a real Mosquitto, the web server's
``/api/play`` and ``/play`` page (in headless Chromium at a phone's 390x844), entries settled by the engine, sent
once whatever the retries, the first of two phones entering the same hand winning."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from hardware_sims.pytest_plugin import eventually
from tablesvc.config import parse_config
from tablesvc.service import TableService
from tablesvc.web.play import play_token
from tests.conftest import DATA
from tests.web_support import REFEREE_PASSWORD, broker, browser, shot, viewport, wait_js, web  # noqa: F401

SECRET = b"test-secret-key-0123456789"  # web_support's secret_key


class PhoneTable:
    """A table service with no devices: only commands (the phones' entries, a referee's) feed it."""

    def __init__(self, broker_url: str, data_dir: Path, site: str, table: str) -> None:
        self.site, self.table = site, table
        self.config = parse_config(f'[table]\nsite = "{site}"\nid = "{table}"\ndata_dir = "{data_dir}"\n'
                                   f'[mqtt]\nurl = "{broker_url}"\n')
        self.service = TableService(self.config, new_game=True)

    def start(self) -> PhoneTable:
        self.service.start()
        assert self.service.link.wait_ready(15)
        return self

    def stop(self) -> None:
        self.service.stop()

    def kinds(self) -> list[str]:
        return [e.kind for e in self.service.journal.entries()]


def api(server, site: str, table: str, body: dict, token: str | None = None) -> tuple[int, dict]:
    token = play_token(SECRET, site, table) if token is None else token
    request = urllib.request.Request(f"{server.url}/api/play/{site}/{table}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", "X-Table-Token": token})
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def wait_until(predicate, timeout: float = 15.0, message: str = "") -> None:
    eventually(predicate, timeout, what=message)


def state(server, site: str, table: str) -> dict:
    feed = server.store.table(site, table)
    return (feed.state or {}) if feed is not None else {}


@pytest.fixture
def phone_table(broker, tmp_path):  # noqa: F811
    tables = []

    def make(server, table: str = "p1", site: str = "club") -> PhoneTable:
        t = PhoneTable(broker.url, tmp_path / table, site, table).start()
        tables.append(t)
        wait_until(lambda: server.store.table(site, table) is not None, message="the web server sees the table")
        return t

    yield make
    for t in tables:
        t.stop()


def _ron(hand_number: int, han: int = 3, fu: int = 30, riichi=()) -> dict:
    return {"type": "win_entry", "from_seat": 2, "wins": [{"seat": 1, "han": han, "fu": fu}], "riichi": list(riichi),
            "hand_number": hand_number}


def test_entries_over_the_api_once_each_first_phone_wins(web, phone_table):  # noqa: F811
    table = phone_table(web, "api")
    status, answer = api(web, "club", "api", {"action": "start", "key": "start-0001",
                                              "players": ["Ann", "Bo", "Cy", "Di"]})
    assert status == 200, answer
    wait_until(lambda: state(web, "club", "api").get("phase") == "between_hands", message="the game starts")
    assert table.kinds()[:2] == ["start_game", "score_sheet"]
    # a phone without the table's token is refused, whatever it sends
    assert api(web, "club", "api", {"action": "preview", "event": _ron(0)}, token="guess")[0] == 403
    # the preview settles the entry on a copy: every payment, the game unchanged
    status, preview = api(web, "club", "api", {"action": "preview", "event": _ron(0, riichi=(1,))})
    assert status == 200, preview
    assert preview["deltas"] == [0, 3900 + 1000, -3900, 0] and preview["deposits"] == [1]
    assert preview["scores"][1] == 30000 + 3900 and len(table.kinds()) == 2
    # sent twice with the same key (a phone that lost the answer): entered once, the first reply again
    first = api(web, "club", "api", {"action": "enter", "key": "hand-0000-a", "event": preview["event"]})
    again = api(web, "club", "api", {"action": "enter", "key": "hand-0000-a", "event": preview["event"]})
    assert first[0] == again[0] == 200 and first[1]["data"] == again[1]["data"]
    assert table.kinds().count("win_entry") == 1
    # two phones enter the next hand at the same moment: one is entered, the other is told it was
    results: list[tuple[int, dict]] = []
    barrier = threading.Barrier(2)

    def phone(key: str, event: dict) -> None:
        barrier.wait()
        results.append(api(web, "club", "api", {"action": "enter", "key": key, "event": event}))

    draw = {"type": "draw_entry", "tenpai": [True, False, False, False], "hand_number": 1}
    threads = [threading.Thread(target=phone, args=("phone-one-1", _ron(1))),
               threading.Thread(target=phone, args=("phone-two-1", draw))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(code for code, _ in results) == [200, 409], results
    loser = next(answer for code, answer in results if code == 409)
    assert "hand 2 is already entered" in loser["error"]
    assert table.kinds().count("win_entry") + table.kinds().count("draw_entry") == 2
    # what cannot be is refused with the engine's reason, before anything is sent
    status, refusal = api(web, "club", "api", {"action": "preview", "event": _ron(2, han=1, fu=20)})
    assert status == 422 and "a ron is never 20 fu" in refusal["error"]
    # a referee corrects a phone's entry as any table's: the first hand was a draw after all
    from tablesvc.mqtt.link import IncomingMessage

    first = next(e.seq for e in table.service.journal.entries() if e.kind == "win_entry")
    amend = {"command": "amend", "transaction": "referee-amend-1", "seq": first,
             "event": {"type": "draw_entry", "tenpai": [False, True, False, False], "riichi": [1], "hand_number": 0}}
    table.service.inbox.put(("cmd", IncomingMessage(f"{table.config.topics.base}/cmd", json.dumps(amend).encode())))
    assert table.service.wait_idle(20)
    wait_until(lambda: (web.store.table("club", "api").results or [{}])[0].get("result") == "exhaustive_draw",
               message="the corrected first hand on the feed")
    assert table.service.table.state.results[0].deltas == (-1000, 3000, -1000, -1000)
    assert len(table.service.table.state.results) == 2  # the second hand is played again on the corrected game


PHOTOS = DATA / "tiles-photos-roboflow"


class PhotoBoxes:
    """The tile finder for the photo the test uploads: the photo's labelled boxes (tests/test_web_score.py's way);
    the tiles in them are read by the packaged reader, as on ``/score``."""

    def __init__(self) -> None:
        from vision.photos.reader import LabelBoxFinder

        self.labels = LabelBoxFinder([])

    def use(self, path: Path) -> None:
        from vision.photos.reader import LabelBoxFinder

        self.labels = LabelBoxFinder.for_photo(path)

    def find(self, image):
        return self.labels.find(image)


@pytest.fixture(scope="module")
def boxes():
    return PhotoBoxes()


@pytest.fixture(scope="module")
def photo_web(broker, boxes, tmp_path_factory):  # noqa: F811
    """A web server reading photos through :class:`PhotoBoxes`, with the records a collector writes."""
    from tablesvc.mqtt.link import BrokerURL
    from tablesvc.web.server import WebServer
    from tablesvc.web.settings import WebSettings
    from tests.web_support import _HASH
    from vision.photos.reader import PhotoReader, load_tiles

    tiles = load_tiles()
    db = str(tmp_path_factory.mktemp("records") / "club.sqlite3")
    server = WebServer(BrokerURL.parse(broker.url), listen=("127.0.0.1", 0),
                       settings=WebSettings(referee_password=_HASH, secret_key=SECRET.decode(), records_db=db,
                                            reply_timeout=2.0),
                       photo_reader=lambda: PhotoReader(boxes, tiles))
    server.start()
    assert server.link.wait_connected(10)
    server.records_db = db
    yield server
    server.stop()


def api_get(server, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(f"{server.url}{path}", timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def scan(png: bytes) -> str:
    """What a phone's camera reads from a QR code on the screen (OpenCV's detector)."""
    import cv2
    import numpy as np

    image = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    text, _, _ = cv2.QRCodeDetector().detectAndDecode(image)
    assert text, "no QR code read from the screen"
    return text


def tap(driver, css: str, timeout: float = 15.0) -> None:
    """A tap on what ``css`` finds, once the page shows it (failing with the selector and the page's text)."""
    try:
        eventually(lambda: driver.execute_script(
            "const e = document.querySelector(arguments[0]); if (!e || e.offsetParent === null) return false;"
            "e.scrollIntoView({block: 'center'}); e.click(); return true;", css), timeout, interval=0.05)
    except AssertionError:
        raise AssertionError(f"nothing to tap at {css}: the page shows "
                             f"{driver.find_element('id', 'app').text[:600]!r}") from None


def small_targets(driver) -> list[str]:
    return driver.execute_script(
        "return [...document.querySelectorAll('#actions button, #entry button, #confirm button, #start button, "
        "#entry label.camera, #entry input')].filter(e => e.offsetParent !== null).map(e => {"
        "const r = e.getBoundingClientRect(); return r.height < 44 || r.width < 44 ? e.outerHTML.slice(0, 80) : null;"
        "}).filter(Boolean)")


def read_tiles(driver) -> list[str]:
    """The tiles a phone shows as read from the winner's photo (seat 1's), in order."""
    return driver.execute_script("return [...document.querySelectorAll('[data-read=\"1\"] button.tile')]"
                                 ".map(b => b.querySelector('img') ? b.querySelector('img').alt : b.textContent)")


def sheet_small_targets(driver) -> list[str]:
    """The tile sheet's buttons under a finger's width (44 CSS px)."""
    return driver.execute_script(
        "return [...document.querySelectorAll('#picker button')].filter(e => e.offsetParent !== null).map(e => {"
        "const r = e.getBoundingClientRect(); return r.height < 44 || r.width < 44 ? e.outerHTML.slice(0, 80) : null;"
        "}).filter(Boolean)")


def check_and_confirm(driver, *, wait_hand: int | None = None) -> str:
    tap(driver, "#check")
    wait_js(driver, "!document.getElementById('confirm').hidden || !document.getElementById('notice').hidden",
            message="the payments or a refusal")
    assert not driver.find_element("id", "confirm").get_attribute("hidden"), driver.find_element("id", "notice").text
    text = driver.find_element("id", "confirm").text
    tap(driver, "#confirm-button")
    if wait_hand is not None:
        wait_js(driver, f"document.body.dataset.hand === '{wait_hand}' || document.body.dataset.phase === 'game_over'",
                message=f"hand {wait_hand} on the board")
    return text


def ron(driver, winner: int, dealt_in: int, han: int, fu: int | None = None, riichi=()) -> None:
    tap(driver, "#actions [data-kind=ron]")
    tap(driver, f"[data-step=from] [data-seat='{dealt_in}']")
    tap(driver, f"[data-step=winners] [data-seat='{winner}']")
    for seat in riichi:
        tap(driver, f"[data-step=riichi] [data-seat='{seat}']")
    tap(driver, f"[data-step=han-{winner}] [data-value='{han}']")
    if fu is not None:
        tap(driver, f"[data-step=fu-{winner}] [data-value='{fu}']")


def test_a_whole_game_from_two_phones(photo_web, boxes, phone_table, browser, broker, tmp_path, mocker):  # noqa: F811
    if not PHOTOS.is_dir():
        pytest.skip(f"needs the shared photos in {PHOTOS}")
    from tests.test_records_collector import CollectorProcess

    collector = CollectorProcess(broker.url, photo_web.records_db, "play-records", tmp_path)
    collector.start()
    table = phone_table(photo_web, "p2")
    try:
        # a viewer's dashboard shows no code; the referee's shows each table's, and a phone scans it
        assert api_get(photo_web, "/play-code/club/p2.svg")[0] == 403
        viewport(browser, 1280, 900)
        browser.get(f"{photo_web.url}/login?next=/")
        browser.find_element("name", "password").send_keys(REFEREE_PASSWORD)
        browser.find_element("css selector", "form button[type=submit]").click()
        wait_js(browser, "document.querySelector('.table-card[data-table=\"p2\"] .phone-code img')",
                message="the table's code on the referee's dashboard")
        wait_js(browser, "document.querySelector('.phone-code img').complete && "
                         "document.querySelector('.phone-code img').naturalWidth > 0", message="the code drawn")
        shot(browser, "play-dashboard-code")
        url = scan(browser.find_element("css selector", ".table-card[data-table='p2'] .phone-code img")
                   .screenshot_as_png)
        assert url == f"{photo_web.url}/play/club/p2#t={play_token(SECRET, 'club', 'p2')}"
        browser.delete_all_cookies()  # the phone is no referee's
        viewport(browser, 390, 844)
        browser.get(url)
        wait_js(browser, "document.body.dataset.phase === 'not_started'", message="the page follows the table")
        phone_a = browser.current_window_handle
        assert "#t=" not in browser.current_url  # the token is kept on the phone, not shown
        for i, name in enumerate(("Ann", "Bo", "Cy", "Di")):
            browser.find_element("name", f"p{i}").send_keys(name)
        shot(browser, "play-start")
        assert small_targets(browser) == []
        tap(browser, "#start-button")
        wait_js(browser, "document.body.dataset.phase === 'between_hands'", message="the game starts")
        shot(browser, "play-board")
        assert small_targets(browser) == []

        # E1, hand 1: Bo (seat 1) in riichi wins by tsumo; the hand is photographed and read
        photo = next((PHOTOS / "images" / "valid").glob("hand_005_*"))  # 888s 111s 345s 765s 99s
        boxes.use(photo)
        tap(browser, "#actions [data-kind=tsumo]")
        tap(browser, "[data-step=winners] [data-seat='1']")
        tap(browser, "[data-step=riichi] [data-seat='1']")
        browser.find_element("css selector", "input[data-photo='1']").send_keys(str(photo))
        wait_js(browser, "document.body.dataset.photos === '1'", 60, "the photo read")
        assert read_tiles(browser) == ["8s", "8s", "8s", "1s", "1s", "1s", "3s", "4s", "5s", "7s", "6s", "5s", "9s",
                                       "9s"], read_tiles(browser)
        # corrected as on /score, by the same tile sheet: a tile taken out, the tile missed added back with "+",
        # the last tile laid apart as the winning tile
        tap(browser, "[data-read='1'] button.tile[data-index='3']")
        wait_js(browser, "document.getElementById('picker').open", message="the tile sheet opens")
        guesses = browser.execute_script("return [...document.querySelectorAll('#picker .guesses button')]"
                                         ".filter(b => b.offsetParent !== null).map(b => b.dataset.guess)")
        assert 0 < len(guesses) <= 3 and guesses[0] == "1s", guesses  # a tile not sure: its best guesses first
        assert sheet_small_targets(browser) == []
        wait_js(browser, "[...document.querySelectorAll('#picker img')].every(i => i.complete)",
                message="the tile sheet's pictures")
        shot(browser, "play-photo-sheet")
        tap(browser, "#picker [data-action='remove']")
        wait_js(browser, "!document.getElementById('picker').open", message="the tile sheet closes")
        assert len(read_tiles(browser)) == 13
        tap(browser, "[data-read='1'] button.add[data-group='0']")
        wait_js(browser, "document.getElementById('picker').open", message="the tile sheet for a missed tile")
        tap(browser, "#picker .choices [data-tile='1s']")
        wait_js(browser, "document.querySelectorAll('[data-read=\"1\"] button.tile').length === 14",
                message="the missed tile added")
        assert browser.execute_script("return document.querySelectorAll('[data-read=\"1\"] button.tile.fixed')"
                                      ".length") == 1
        tap(browser, "[data-read='1'] button.tile[data-index='12']")  # the last 9s (the 1s added is after it)
        wait_js(browser, "document.getElementById('picker').open", message="the tile sheet for the winning tile")
        tap(browser, "#picker [data-action='apart']")
        wait_js(browser, "document.querySelector('[data-read-status=\"1\"]').textContent.includes('winning tile: 9s')",
                message="the 9s laid apart as the winning tile")
        assert browser.execute_script("return [...document.querySelectorAll('[data-read=\"1\"] .group')]"
                                      ".map(g => g.querySelectorAll('button.tile').length).at(-1)") == 1
        shot(browser, "play-photo")
        assert small_targets(browser) == []
        tap(browser, "#check")
        wait_js(browser, "!document.getElementById('confirm').hidden", message="the payments")
        payments = browser.find_element("id", "confirm").text
        assert "Chinitsu" in payments and "Riichi" in payments and "Menzen Tsumo" in payments
        assert browser.execute_script("return document.getElementById('actions').offsetParent") is None
        shot(browser, "play-payments")
        tap(browser, "#confirm-button")
        wait_js(browser, "document.body.dataset.hand === '1'", message="hand 1 entered")
        first = photo_web.store.table("club", "p2").results[-1]
        assert first["result"] == "win" and first["wins"][0]["seat"] == 1 and first["wins"][0]["hand"]
        # chinitsu riichi tsumo, 7 han or more, by a non-dealer: at least a haneman, 6000 from the dealer
        assert first["deltas"][0] <= -6000 and first["deltas"][1] >= 12000 + 1000

        # E2, hand 2: both phones enter at once, one a ron, the other a draw: the first to arrive wins
        browser.switch_to.new_window("tab")
        phone_b = browser.current_window_handle
        viewport(browser, 390, 844)
        browser.get(f"{photo_web.url}/play/club/p2")  # the token kept from the code scanned on this phone
        wait_js(browser, "document.body.dataset.hand === '1'", message="phone B sees hand 2 being played")
        tap(browser, "#actions [data-kind=draw]")
        tap(browser, "[data-step=tenpai] [data-seat='0']")
        tap(browser, "#check")
        wait_js(browser, "!document.getElementById('confirm').hidden", message="phone B's payments")
        browser.switch_to.window(phone_a)
        ron(browser, winner=3, dealt_in=2, han=2, fu=30)
        tap(browser, "#check")
        wait_js(browser, "!document.getElementById('confirm').hidden", message="phone A's payments")
        browser.execute_script("document.getElementById('confirm-button').click()")
        browser.switch_to.window(phone_b)
        # phone B confirms too: the table refuses its entry (409), or its page, seeing the hand entered as it comes
        # to the front, takes its draft back first; either way it says so and enters nothing
        browser.execute_script("const b = document.getElementById('confirm-button'); if (b) b.click();")
        wait_js(browser, "!document.getElementById('notice').hidden && document.body.dataset.hand === '2'",
                message="phone B is told")
        assert "another phone" in browser.find_element("id", "notice").text
        shot(browser, "play-second-phone")
        browser.switch_to.window(phone_a)
        wait_js(browser, "document.body.dataset.entered === '2'", message="phone A's entry went in")
        assert table.kinds().count("draw_entry") == 0
        assert photo_web.store.table("club", "p2").results[-1]["wins"][0]["seat"] == 3

        # E3, hand 3: an exhaustive draw, the dealer Cy noten (from phone B), whose first answer is lost on the
        # way back (the table entered it, the phone never heard): the page sends it again with the same key and
        # the table answers with its first reply, entering nothing twice
        lost: list[bytes] = []
        feed = photo_web.store.feed

        def losing_first_answer(topic: str, payload: bytes) -> None:
            if topic.endswith("/cmd/reply") and not lost and b'"phone-' in payload:
                lost.append(payload)
                return
            feed(topic, payload)

        mocker.patch.object(photo_web.store, "feed", side_effect=losing_first_answer)
        browser.switch_to.window(phone_b)
        tap(browser, "#actions [data-kind=draw]")
        tap(browser, "[data-step=tenpai] [data-seat='0']")
        tap(browser, "[data-step=tenpai] [data-seat='3']")
        check_and_confirm(browser, wait_hand=3)
        wait_js(browser, "document.body.dataset.entered === '1'", 30, "phone B's entry answered after its retry")
        assert lost and int(browser.execute_script("return document.body.dataset.retries")) >= 1
        assert table.kinds().count("draw_entry") == 1
        assert "Entered: exhaustive draw" in browser.find_element("id", "notice").text
        # E4, hand 4: a chombo by Ann (the hand is replayed)
        tap(browser, "#actions [data-kind=chombo]")
        tap(browser, "[data-step=offender] [data-seat='0']")
        assert "pays 8,000" in check_and_confirm(browser, wait_hand=4)
        # E4 again, then South: five hands won by a non-dealer, the last ending the game
        browser.switch_to.window(phone_a)
        for winner, dealt_in in ((0, 1), (1, 2), (2, 3), (3, 0), (0, 1)):
            ron(browser, winner=winner, dealt_in=dealt_in, han=3, fu=40)
            check_and_confirm(browser, wait_hand=None)
            wait_js(browser, "document.getElementById('actions').hidden === false || "
                             "document.body.dataset.phase === 'game_over'", message="the next hand")
        wait_js(browser, "document.body.dataset.phase === 'game_over'", message="the game ends after South 4")
        assert browser.execute_script("return document.getElementById('actions').offsetParent") is None
        browser.execute_script("window.scrollTo(0, 0)")
        assert browser.find_elements("css selector", "#board .final li")
        shot(browser, "play-final")
        results = photo_web.store.table("club", "p2").results
        assert [r["result"] for r in results] == ["win", "win", "exhaustive_draw", "chombo", *["win"] * 5]
        assert photo_web.store.table("club", "p2").final["ranking"]
        # the overlay shows the phone table as any table: its players and their final scores
        browser.get(f"{photo_web.url}/overlay/club/p2?view=scores")
        scores = [f"{score:,}" for score in table.service.table.state.scores]
        wait_js(browser, "[...document.querySelectorAll('.score-bar .player .score')].map(e => e.textContent)"
                f".join('|') === {'|'.join(scores)!r}", message=f"the overlay shows the scores {scores}")
        assert browser.execute_script("return [...document.querySelectorAll('.score-bar .player .name')]"
                                      ".map(e => e.textContent)") == ["Ann", "Bo", "Cy", "Di"]
        assert browser.find_element("css selector", ".score-bar .round").text == "Final"

        # the records hold the game and the standings show it
        def standings():
            with urllib.request.urlopen(f"{photo_web.url}/api/standings", timeout=10) as response:
                return json.loads(response.read())

        wait_until(lambda: len(standings().get("players") or []) == 4, 30, "the standings show the phone game")
        players = {p["name"]: p for p in standings()["players"]}
        assert set(players) == {"Ann", "Bo", "Cy", "Di"} and all(p["games"] == 1 for p in players.values())
        browser.get(f"{photo_web.url}/standings")
        wait_js(browser, "document.body.innerText.includes('Cy')", message="the standings page")
        shot(browser, "play-standings")
    finally:
        collector.terminate()


def test_bench_quick_mode_prints_tap_to_confirmed():
    from tests.test_benches import number, run_bench

    out = run_bench("phone_table")
    assert number(r"entries\s+(\d+) confirmed", out) == 16
    assert "0 refused or lost" in out and "every table holds exactly the hands entered" in out
    p50, p99 = number(r"tap -> confirmed\s+p50 ([\d.]+) ms", out), number(r"tap -> confirmed.*p99 ([\d.]+) ms", out)
    assert 0 < p50 <= p99 < 5000
    assert number(r"tap -> payments shown\s+p50 ([\d.]+) ms", out) > 0


def test_demo_phones_plays_a_game_from_two_scripted_phones():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "tablesvc", "demo", "--phones", "--speed", "0", "--web", "127.0.0.1:0"],
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    assert "/play/demo/table-1#t=" in out.stdout  # the page, with the table's token
    assert "phone A: entered" in out.stdout or "phone B: entered" in out.stdout
    assert "is already entered" in out.stdout  # the second of the same-moment entries
    assert "chombo by Aoi" in out.stdout and "exhaustive draw" in out.stdout
    ranking = out.stdout.split("final ranking:")[1].splitlines()[1:5]
    assert [line.split()[0] for line in ranking] == ["1.", "2.", "3.", "4."]
