"""``/score`` finished for a phone, in a real Chromium at 390x844 with real shared photos: every tap target a
finger's size, a missed tile added, a meld set apart and the winning tile marked, a whole table's hand picked
by its row before anything else, and tiles the reader is not sure of shown amber, never as read.

The finder here gives the photo's labelled boxes (``LabelBoxFinder``, as in ``test_web_score.py``), so what is
tested is the page and the naming of real pixels; screenshots go where the other web tests put theirs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed (pip install -e '.[test]')")

from tablesvc.mqtt.link import BrokerURL
from tablesvc.scorecard import ScoreRequest, score
from tablesvc.web.app import WebSettings
from tablesvc.web.server import WebServer
from tests import web_support
from tests.web_support import shot, viewport, wait_js
from vision.photos.reader import SURE_GATES, LabelBoxFinder, PhotoReader, load_tiles

broker, browser = web_support.broker, web_support.browser
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tiles-photos-roboflow"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"needs the shared photos in {DATA}")
#: the least a finger can tap (CSS px)
FINGER = 44


def photo(stem: str) -> Path:
    return next((DATA / "images" / "valid").glob(f"{stem}_*"))


class PhotoBoxes:
    """The labelled boxes of the photo the test uploads next (optionally some left out, as a finder misses)."""

    def __init__(self) -> None:
        self.labels = LabelBoxFinder([])

    def use(self, path: Path, leave_out: tuple[int, ...] = ()) -> None:
        rows = LabelBoxFinder.for_photo(path).rows
        self.labels = LabelBoxFinder([r for k, r in enumerate(sorted(rows)) if k not in leave_out])

    def find(self, image):
        return self.labels.find(image)


@pytest.fixture(scope="module")
def boxes():
    return PhotoBoxes()


@pytest.fixture(scope="module")
def reader(boxes):
    return PhotoReader(boxes, load_tiles())


@pytest.fixture(scope="module")
def web(broker, reader):
    server = WebServer(BrokerURL.parse(broker.url), listen=("127.0.0.1", 0), settings=WebSettings(rules="ema2016"),
                       photo_reader=lambda: reader)
    server.start()
    yield server
    server.stop()


def upload(driver, server, path: Path, states: str = "['read', 'error']") -> None:
    viewport(driver, 390, 844)
    driver.get(f"{server.url}/score")
    wait_js(driver, "document.body.dataset.state === 'ready'")
    driver.find_element("id", "photo").send_keys(str(path))
    wait_js(driver, f"{states}.includes(document.body.dataset.state)", 60)


def sizes(driver, selector: str) -> list[list[float]]:
    return driver.execute_script(
        f"return [...document.querySelectorAll({selector!r})].map(e => {{ const r = e.getBoundingClientRect();"
        "return [r.width, r.height]; })")


def tap(driver, selector: str, index: int = 0) -> None:
    driver.execute_script(f"document.querySelectorAll({selector!r})[{index}].click()")


def choose(driver, selector: str) -> None:
    wait_js(driver, "document.getElementById('picker').open", message="the tile sheet did not open")
    driver.execute_script(f"document.querySelector({selector!r}).click()")
    wait_js(driver, "!document.getElementById('picker').open", message="the tile sheet did not close")


def score_on_page(driver) -> str:
    driver.execute_script("document.getElementById('score-button').click()")
    wait_js(driver, "['scored', 'refused'].includes(document.body.dataset.state)")
    return driver.find_element("id", "result").text


def typed(**request) -> int:
    answer = score(ScoreRequest.from_mapping({"rules": "ema2016", **request}))
    return answer.settlement.deltas[answer.winner]


def test_tap_targets_are_a_fingers_size_and_a_missed_tile_is_added(web, boxes, browser):
    path = photo("hand_005")  # 888s 111s 345s 765s 99s on a rack
    boxes.use(path, leave_out=(6,))  # the finder "missed" the 3s
    upload(browser, web, path)
    tiles = sizes(browser, "#row button.tile")
    assert len(tiles) == 13
    for w, h in [*tiles, *sizes(browser, "#row button.add")]:
        assert w >= FINGER and h >= FINGER, f"a tap target of {w}x{h} CSS px"
    # the row is one line that scrolls sideways rather than shrinking its tiles
    assert browser.execute_script("const r = document.getElementById('row'); return r.scrollWidth > r.clientWidth")
    shot(browser, "score-phone-row")
    # 13 tiles make no hand: the page says so, then the missed 3s is added with "+"
    assert "Cannot score" in score_on_page(browser)
    tap(browser, "#row button.add")
    wait_js(browser, "document.getElementById('picker').open")
    for w, h in sizes(browser, "#choices button"):
        assert w >= FINGER and h >= FINGER, f"a tile to pick of {w}x{h} CSS px"
    shot(browser, "score-phone-add")
    choose(browser, '#choices [data-tile="3s"]')
    assert len(sizes(browser, "#row button.tile")) == 14
    assert browser.execute_script("return document.getElementById('win').value") == "9s"  # the row's last tile
    result = score_on_page(browser)
    assert browser.execute_script("return document.body.dataset.state") == "scored", result
    assert f"{typed(hand='11134556788899s', win='9s')} points" in result


def test_a_meld_is_set_apart_and_the_winning_tile_marked(web, boxes, browser):
    path = photo("hand_005")
    boxes.use(path)
    upload(browser, web, path)
    # the 888s pon set apart: tap the first 1s, "set apart from here", then the 8s group is alone on the left
    tap(browser, "#row button.tile", 3)
    choose(browser, '#actions [data-action="split"]')
    groups = browser.execute_script("return [...document.querySelectorAll('#row .group')].map(g => "
                                    "g.querySelectorAll('button.tile').length)")
    assert groups == [3, 11]
    # the first 9s is the winning tile: laid apart, and named the winning tile
    tap(browser, "#row button.tile", 12)
    for w, h in sizes(browser, "#actions button"):
        assert w >= FINGER and h >= FINGER
    shot(browser, "score-phone-tile-sheet")
    choose(browser, '#actions [data-action="apart"]')
    groups = browser.execute_script("return [...document.querySelectorAll('#row .group')].map(g => "
                                    "g.querySelectorAll('button.tile').length)")
    assert groups == [3, 10, 1]
    assert browser.execute_script("return document.getElementById('win').value") == "9s"
    result = score_on_page(browser)
    assert browser.execute_script("return document.body.dataset.state") == "scored", result
    want = typed(hand="11134556799s", meld=["pon:888s"], win="9s")
    assert f"{want} points" in result
    assert want != typed(hand="11134556788899s", win="9s")  # the open pon changed the score: it counted
    shot(browser, "score-phone-meld-apart")


def test_a_whole_table_photo_asks_for_the_hands_row_first(web, boxes, browser):
    path = photo("IMG_2743")  # three rows of tiles, 14 / 13 / 14
    boxes.use(path)
    upload(browser, web, path, "['pick', 'error']")
    assert browser.execute_script("return document.body.dataset.state") == "pick"
    assert "tap a tile of the hand" in browser.find_element("id", "status").text
    assert sizes(browser, "#row button.tile") == []  # nothing to correct before the hand is chosen
    assert not browser.find_element("id", "conditions").is_displayed()
    shot(browser, "score-phone-pick-row")
    rows = browser.execute_script("return [...document.querySelectorAll('#boxes .box')].map(b => "
                                  "b.getBoundingClientRect().top)")
    top = min(range(len(rows)), key=lambda k: rows[k])
    tap(browser, "#boxes .box", top)
    wait_js(browser, "document.body.dataset.state === 'read'")
    kept = len(sizes(browser, "#row button.tile"))
    assert kept == 14, f"the top row holds 14 tiles, {kept} kept"
    assert len(sizes(browser, "#boxes .box")) == 14
    assert browser.find_element("id", "conditions").is_displayed()


def test_tiles_not_sure_are_amber_with_their_guesses_never_as_read(web, boxes, reader, browser):
    path = photo("hand_005")
    boxes.use(path)
    reader.sure_gates = (1.01, 1.0)  # no name passes: every tile is shown not sure
    try:
        upload(browser, web, path)
    finally:
        reader.sure_gates = SURE_GATES
    classes = browser.execute_script("return [...document.querySelectorAll('#row button.tile')].map(b => b.className)")
    assert len(classes) == 14 and all("unsure" in c.split() for c in classes), classes
    assert browser.execute_script("return document.querySelectorAll('#boxes .box:not(.unsure)').length") == 0
    colour = browser.execute_script("return getComputedStyle(document.querySelector('#boxes .box')).borderTopColor")
    assert colour != "rgb(63, 209, 122)"  # the sure green
    assert "14 not sure" in browser.find_element("id", "status").text
    shot(browser, "score-phone-unsure")
    # a tap offers the best guesses first; the first is the shown name
    tap(browser, "#row button.tile", 6)
    wait_js(browser, "document.getElementById('picker').open")
    guesses = browser.execute_script(
        "return [...document.querySelectorAll('#guesses button')].map(b => b.dataset.guess)")
    assert guesses[0] == "3s" and len(guesses) == 3
    choose(browser, '#guesses [data-guess="3s"]')
    assert "unsure" not in browser.execute_script("return document.querySelectorAll('#row button.tile')[6].className")
    # scored with the others taken as their guesses, and the result says they were guesses
    result = score_on_page(browser)
    assert f"{typed(hand='11134556788899s', win='9s')} points" in result
    assert "13 tile(s) not sure were taken as shown" in result
