"""``/score`` in a real Chromium with real shared photos: read, correct a tile, score; uploads bounded.

The tile finder is a network of its own; until it is installed the server here is given a finder that
returns the photo's labelled boxes (``LabelBoxFinder``), so the page, the reading of real pixels and the
scoring are what is tested. A server with the packaged reader says plainly that the finder is missing.
"""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed (pip install -e '.[test]')")

from tablesvc.mqtt.url import BrokerURL
from tablesvc.web.server import WebServer
from tablesvc.web.settings import WebSettings
from tests import web_support
from tests.web_support import shot, viewport, wait_js
from vision.photos.reader import FinderMissing, LabelBoxFinder, PhotoReader, load_finder, load_tiles

broker, browser = web_support.broker, web_support.browser
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tiles-photos-roboflow"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"needs the shared photos in {DATA}")


def photo(stem: str) -> Path:
    return next((DATA / "images" / "valid").glob(f"{stem}_*"))


class PhotoBoxes:
    """A finder for the test's photo of the moment: the labelled boxes of the photo the test uploads next."""

    def __init__(self) -> None:
        self.labels = LabelBoxFinder([])

    def use(self, path: Path) -> None:
        self.labels = LabelBoxFinder.for_photo(path)

    def find(self, image):
        return self.labels.find(image)


@pytest.fixture(scope="module")
def boxes():
    return PhotoBoxes()


@pytest.fixture(scope="module")
def web(broker, boxes):
    tiles = load_tiles()
    server = WebServer(BrokerURL.parse(broker.url), listen=("127.0.0.1", 0), settings=WebSettings(rules="ema2016"),
                       photo_reader=lambda: PhotoReader(boxes, tiles))
    server.start()
    yield server
    server.stop()


def _post(server, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.request("POST", path, body=body, headers=headers)
    response = conn.getresponse()
    status, data = response.status, json.loads(response.read())
    conn.close()
    return status, data


def upload(driver, server, path: Path) -> None:
    driver.get(f"{server.url}/score")
    wait_js(driver, "document.body.dataset.state === 'ready'")
    driver.find_element("id", "photo").send_keys(str(path))
    wait_js(driver, "['read', 'error'].includes(document.body.dataset.state)", 60)


def test_read_correct_and_score_a_hand_on_a_phone(web, boxes, browser):
    viewport(browser, 390, 844)
    path = photo("hand_005")  # 888s 111s 345s 765s 99s on a rack: a pure bamboo hand
    boxes.use(path)
    upload(browser, web, path)
    assert browser.execute_script("return document.body.dataset.state") == "read"
    names = browser.execute_script("return [...document.querySelectorAll('#boxes .box span')].map(s => s.textContent)")
    assert names == ["8s", "8s", "8s", "1s", "1s", "1s", "3s", "4s", "5s", "7s", "6s", "5s", "9s", "9s"]
    # the boxes lie over the photo where the labels put them (left to right, in the photo's picture)
    rects = browser.execute_script(
        "const img = document.getElementById('shot').getBoundingClientRect();"
        "return [...document.querySelectorAll('#boxes .box')].map(b => { const r = b.getBoundingClientRect();"
        "return [(r.left - img.left) / img.width, (r.top - img.top) / img.height]; })")
    first = LabelBoxFinder.for_photo(path).rows
    xs = sorted(cx - w / 2 for cx, _, w, _ in first)
    assert [round(x, 2) for x, _ in rects] == pytest.approx([round(x, 2) for x in xs], abs=0.02)
    shot(browser, "score-phone-read")

    # tap the 3s and make it a 2s (a corrected tile is marked)
    browser.execute_script("document.querySelectorAll('#row button.tile')[6].click()")
    wait_js(browser, "document.getElementById('picker').open")
    browser.execute_script("document.querySelector('#choices [data-tile=\"2s\"]').click()")
    wait_js(browser, "!document.getElementById('picker').open")
    assert browser.execute_script("return document.querySelectorAll('#boxes .box span')[6].textContent") == "2s"
    assert "fixed" in browser.execute_script("return document.querySelectorAll('#boxes .box')[6].className")
    # 2s 4s 5s is no run: the page says why it cannot score
    browser.execute_script("document.querySelector('#win-form select[name=win]').value = '9s';"
                           "document.getElementById('score-button').click()")
    wait_js(browser, "['scored', 'refused'].includes(document.body.dataset.state)")
    assert browser.execute_script("return document.body.dataset.state") == "refused"
    assert "Cannot score" in browser.find_element("id", "result").text
    # put the 3s back, tsumo with riichi, the dealer, one dora indicator
    browser.execute_script("document.querySelectorAll('#row button.tile')[6].click()")
    wait_js(browser, "document.getElementById('picker').open")
    browser.execute_script("document.querySelector('#choices [data-tile=\"3s\"]').click()")
    browser.execute_script(
        "const f = document.getElementById('win-form');"
        "f.querySelector('[value=tsumo]').checked = true; f.querySelector('[name=riichi]').checked = true;"
        "f.querySelector('[name=seat]').value = 'E'; f.querySelector('[name=win]').value = '9s';"
        "document.getElementById('add-dora').click()")
    wait_js(browser, "document.getElementById('picker').open")
    assert browser.execute_script("return document.querySelectorAll('#choices button.none').length") == 0
    browser.execute_script("document.querySelector('#choices [data-tile=\"8s\"]').click()")
    wait_js(browser, "!document.getElementById('picker').open")
    assert browser.execute_script("return document.getElementById('dora').value") == "8s"
    browser.execute_script("document.getElementById('score-button').click()")
    wait_js(browser, "document.body.dataset.state === 'scored'")
    result = browser.find_element("id", "result").text
    # the same hand scored as typed on the command line's path: riichi, tsumo, chinitsu, dora 2 (9s x2)
    from tablesvc.scorecard import ScoreRequest, score

    typed = score(ScoreRequest.from_mapping({"hand": "11134556788899s", "win": "9s", "tsumo": True, "riichi": True,
                                             "seat": "E", "dora": ["8s"], "rules": "ema2016"}))
    assert f"{typed.settlement.deltas[typed.winner]} points" in result
    for y in typed.value.yaku:
        assert y.name in result
    assert "rules ema2016" in result
    shot(browser, "score-phone-scored")
    browser.execute_script("window.scrollTo(0, 0)")
    viewport(browser, 1280, 900)
    shot(browser, "score-desktop")


def test_unsure_tiles_are_red_and_must_be_said(web, boxes, browser):
    viewport(browser, 390, 844)
    path = photo("hand_001")  # three flowers at the right: unknown
    boxes.use(path)
    upload(browser, web, path)
    unknown = browser.execute_script("return document.querySelectorAll('#boxes .box.unknown').length")
    assert unknown == 3
    assert "3 not sure" in browser.find_element("id", "status").text
    browser.execute_script("document.getElementById('score-button').click()")
    wait_js(browser, "document.body.dataset.state === 'refused'")
    assert "could not be read" in browser.find_element("id", "result").text
    # removing the three flowers leaves 11 tiles: still no hand, and said so
    for _ in range(3):
        browser.execute_script("document.querySelector('#row button.tile.unknown').click()")
        wait_js(browser, "document.getElementById('picker').open")
        browser.execute_script("document.querySelector('#actions button.none').click()")
        wait_js(browser, "!document.getElementById('picker').open")
    assert browser.execute_script("return document.querySelectorAll('#boxes .box').length") == 11


def test_a_bad_photo_is_one_line_on_the_page(web, browser, tmp_path):
    viewport(browser, 390, 844)
    text = tmp_path / "hand.png"
    text.write_bytes(b"this is not a picture")
    upload(browser, web, text)
    assert browser.execute_script("return document.body.dataset.state") == "error"
    assert "not a photo" in browser.find_element("id", "error").text


def test_uploads_are_bounded_in_type_and_size_before_the_body_is_read(web):
    status, data = _post(web, "/api/score/read", b"hello", {"Content-Type": "text/plain"})
    assert status == 415 and "send a photo" in data["error"]
    # a declared 30 MB: refused at once, with nothing of the body sent
    sock = socket.create_connection(("127.0.0.1", web.port), timeout=10)
    sock.sendall(b"POST /api/score/read HTTP/1.1\r\nHost: x\r\nContent-Type: image/jpeg\r\n"
                 b"Content-Length: 31457280\r\n\r\n")
    answer = b""
    while b"}" not in answer:  # the status line, the headers, then the JSON
        got = sock.recv(65536)
        if not got:
            break
        answer += got
    sock.close()
    answer = answer.decode()
    assert answer.startswith("HTTP/1.1 413") and "over 20 MB" in answer
    # no declared length (chunked): cut off once past 20 MB
    conn = http.client.HTTPConnection("127.0.0.1", web.port, timeout=60)
    chunk = b"\xff\xd8\xff" + b"\0" * (1 << 20)
    conn.request("POST", "/api/score/read", body=iter([chunk] * 22), headers={"Content-Type": "image/jpeg"},
                 encode_chunked=True)
    response = conn.getresponse()
    assert response.status == 413
    conn.close()
    # an image's header claiming 48 megapixels is refused from the header
    import struct

    ihdr = struct.pack(">IIBBBBB", 8000, 6000, 8, 2, 0, 0, 0)
    bomb = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\0" * 64
    status, data = _post(web, "/api/score/read", bomb, {"Content-Type": "image/png"})
    assert status == 400 and "megapixels" in data["error"]


def test_the_hand_call_checks_what_it_is_sent(web):
    status, data = _post(web, "/api/score/hand", b"[1, 2", {"Content-Type": "application/json"})
    assert status == 400 and "JSON" in data["error"]
    hand = [{"tile": t} for t in ["1m", "2m", "3m", "4m", "5m", "6m", "7m", "8m", "9m", "1p", "1p", "2p", "3p"]]
    body = {"groups": [hand, [{"tile": "4p"}]], "tsumo": True, "dora": ["9m"]}
    status, data = _post(web, "/api/score/hand", json.dumps(body).encode(), {"Content-Type": "application/json"})
    assert status == 200 and data["win"] == "4p" and data["rules"] == "ema2016"
    assert {y["key"] for y in data["yaku"]} >= {"tsumo", "ittsu"}
    body["groups"][0][0]["tile"] = "1z9"
    status, data = _post(web, "/api/score/hand", json.dumps(body).encode(), {"Content-Type": "application/json"})
    assert status == 422 and data["error"]


def test_without_the_tile_finder_the_page_says_so(broker, browser):
    try:
        load_finder()
    except FinderMissing:
        pass
    else:
        pytest.skip("the tile finder is installed")
    server = WebServer(BrokerURL.parse(broker.url), listen=("127.0.0.1", 0))
    server.start()
    try:
        viewport(browser, 390, 844)
        upload(browser, server, photo("hand_005"))
        assert "tile finder is not installed" in browser.find_element("id", "error").text
        status, data = _post(server, "/api/score/read", photo("hand_005").read_bytes(),
                             {"Content-Type": "image/jpeg"})
        assert status == 503 and "tile finder" in data["error"]
    finally:
        server.stop()


def test_the_dashboard_links_the_score_page(web):
    conn = http.client.HTTPConnection("127.0.0.1", web.port, timeout=10)
    conn.request("GET", "/")
    page = conn.getresponse().read().decode()
    conn.close()
    assert 'href="/score"' in page
    conn = http.client.HTTPConnection("127.0.0.1", web.port, timeout=10)
    conn.request("GET", "/score")
    response = conn.getresponse()
    page = response.read().decode()
    assert response.status == 200 and 'capture="environment"' in page and 'accept="image/*"' in page


def test_with_the_tile_finder_the_page_reads_a_real_photo(broker, browser):
    try:
        load_finder()
    except FinderMissing:
        pytest.skip("the tile finder is not installed yet")
    server = WebServer(BrokerURL.parse(broker.url), listen=("127.0.0.1", 0))
    server.start()
    try:
        viewport(browser, 390, 844)
        upload(browser, server, photo("hand_005"))
        assert browser.execute_script("return document.body.dataset.state") == "read"
        assert browser.execute_script("return document.querySelectorAll('#boxes .box').length") >= 10
    finally:
        server.stop()


def test_a_phone_photo_stored_sideways_is_shown_and_read_upright(web, boxes, browser, tmp_path):
    """Phones store the sensor's pixels and an EXIF orientation: the page shows the photo upright (as the
    browser does) and the boxes, read from the upright photo, lie over the same tiles."""
    import struct

    import cv2

    src = photo("hand_005")
    upright = cv2.imread(str(src))[120:520]  # 640x400, the rack's row of tiles in the middle
    stored = cv2.rotate(upright, cv2.ROTATE_90_COUNTERCLOCKWISE)  # as the sensor saw it: 400x640
    jpg = cv2.imencode(".jpg", stored, [cv2.IMWRITE_JPEG_QUALITY, 92])[1].tobytes()
    tiff = b"MM\x00*\x00\x00\x00\x08" + struct.pack(">H", 1) + struct.pack(">HHIHH", 0x0112, 3, 1, 6, 0) + b"\0" * 4
    app1 = b"Exif\x00\x00" + tiff
    path = tmp_path / "sideways.jpg"
    path.write_bytes(jpg[:2] + b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + jpg[2:])
    rows = []  # the labels, in the upright 640x400 crop's own fractions
    for cx, cy, w, h in LabelBoxFinder.for_photo(src).rows:
        rows.append((cx, (cy * 640 - 120) / 400, w, h * 640 / 400))
    boxes.labels = LabelBoxFinder(rows)
    viewport(browser, 390, 844)
    upload(browser, web, path)
    assert browser.execute_script("return document.body.dataset.state") == "read"
    names = browser.execute_script("return [...document.querySelectorAll('#boxes .box span')].map(s => s.textContent)")
    # read upright: the tiles themselves, as laid
    assert names == ["8s", "8s", "8s", "1s", "1s", "1s", "3s", "4s", "5s", "7s", "6s", "5s", "9s", "9s"]
    shown = browser.execute_script(
        "const img = document.getElementById('shot'); const r = img.getBoundingClientRect();"
        "return [img.naturalWidth, img.naturalHeight, r.width / r.height];")
    assert shown[:2] == [640, 400] and abs(shown[2] - 1.6) < 0.02  # shown upright, as the boxes are
