"""What the web tests share: a live simulated table, the web server, a real headless Chromium, screenshots.

Everything is real: a Mosquitto the tests start, the table service fed by the
table simulator (observations as the drivers produce them), the web server on
a free port, and Debian's Chromium driven by Selenium: the module-scoped
fixtures ``broker``, ``web`` and ``browser`` below, which a web test module
imports by name. One Chromium per test process (its start costs more CPU than
most of a module's tests), each module given it as a new one: a tab of its own,
no cookies, storage or cache of any earlier module's pages.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from hardware_sims.generator import generate_game
from hardware_sims.pytest_plugin import eventually
from hardware_sims.table import DirectOutputs, TableSimulator
from tablesvc.config import parse_config
from tablesvc.engine.events import GameStart
from tablesvc.mqtt.link import IncomingMessage
from tablesvc.mqtt.url import BrokerURL
from tablesvc.service import TableService
from tablesvc.web.auth import hash_password
from tablesvc.web.server import WebServer
from tablesvc.web.settings import WebSettings
from tests.conftest import Mosquitto

REFEREE_PASSWORD = "correct horse battery"
_HASH = hash_password(REFEREE_PASSWORD)
SCRIPTED_SEED = 17  # E1 draw; E2 Ben's riichi, ron from Aoi with ura dora (haneman); calls; S4 draw; the final


def screenshot_dir() -> Path:
    """``TABLESVC_SCREENSHOTS=docs/img`` writes the pictures the docs show; else a temporary directory."""
    target = os.environ.get("TABLESVC_SCREENSHOTS")
    path = Path(target) if target else Path(tempfile.gettempdir()) / "tablesvc-screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path


@lru_cache(maxsize=8)
def _generated(seed: int):
    return generate_game(seed)


def generated_game(seed: int):
    """``generate_game(seed)``, generated once per test process (most web tests play the scripted game, which
    takes longer to deal than to copy); a copy each time, as a test may change its record."""
    return copy.deepcopy(_generated(seed))


class LiveTable:
    """One table service playing a generated game, step by step, through the table simulator."""

    def __init__(self, broker_url: str, data_dir: Path, *, site: str = "club", table: str = "t1",
                 seed: int = SCRIPTED_SEED) -> None:
        self.site, self.table = site, table
        self.config = parse_config(f'[table]\nsite = "{site}"\nid = "{table}"\ndata_dir = "{data_dir}"\n'
                                   f'[mqtt]\nurl = "{broker_url}"\n')
        # the module's broker may still hold an earlier test's game of this table: each test starts a new one
        self.service = TableService(self.config, new_game=True)
        self.record = generated_game(seed)
        self.sim = TableSimulator(self.record, DirectOutputs(self.service.observe), start_game=self._start)
        self.index = 0

    def _start(self, event: GameStart) -> None:
        self.command({"command": "start_game", "players": list(event.players), "rules": event.rules})

    def start(self) -> LiveTable:
        self.service.start()
        assert self.service.link.wait_ready(15)
        return self

    def command(self, command: dict[str, Any]) -> None:
        """A referee command as the service receives it from MQTT, each with a transaction of its own (the
        service answers a transaction it has seen with its first reply, without running it again)."""
        self._transactions = getattr(self, "_transactions", 0) + 1
        body = {"transaction": f"test-{self._transactions}", **command}
        self.service.inbox.put(("cmd", IncomingMessage(f"{self.config.topics.base}/cmd", json.dumps(body).encode())))
        assert self.service.wait_idle(20)

    def play_to(self, index: int) -> None:
        """Show the record's events up to (not including) ``index``."""
        while self.index < min(index, len(self.record.events)):
            self.sim.show(self.record.events[self.index])
            self.index += 1
        assert self.service.wait_idle(30)

    def play_until(self, predicate) -> int:
        """Show events until ``predicate(event)`` holds for the one just shown; its index."""
        while self.index < len(self.record.events):
            event = self.record.events[self.index]
            self.sim.show(event)
            self.index += 1
            if predicate(event):
                break
        assert self.service.wait_idle(30)
        return self.index - 1

    @property
    def seq(self) -> int:
        return self.service.journal.last_seq

    def stop(self) -> None:
        self.service.stop()


def start_web(broker_url: str, *, idle_alert: float = 600.0, clock: Any = None, **settings: Any) -> WebServer:
    """The web server on a free port; ``settings`` override WebSettings (the referee password by default);
    ``clock`` times its sessions and sign-in guard (a test's own clock moves them on)."""
    options = {"referee_password": _HASH, "secret_key": "test-secret-key-0123456789", **settings}
    server = WebServer(BrokerURL.parse(broker_url), listen=("127.0.0.1", 0), idle_alert=idle_alert,
                       settings=WebSettings(**options), **({"clock": clock} if clock is not None else {}))
    server.start()
    # subscribed, not only connected: a message published between the CONNACK and the SUBACK never reaches it
    assert server.link.wait_ready(10), "the web server's subscriptions were not acknowledged"
    return server


def require_chromium() -> tuple[str, str]:
    """Chromium's and chromedriver's paths; the test is skipped, saying what to install, where either is missing
    (a bench that starts its own browser asks this, not for a browser of its own just to find out)."""
    pytest.importorskip("selenium.webdriver")
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if binary is None or not Path(driver_path).exists():
        pytest.skip("chromium and chromium-driver are not installed (.ci/run installs them with apt-get)")
    return binary, driver_path


def chromium():
    """A headless Chromium (Debian's chromium + chromium-driver) under Selenium."""
    binary, driver_path = require_chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--hide-scrollbars", "--force-device-scale-factor=1", "--window-size=1920,1080"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(driver_path), options=options)


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    """A Mosquitto of the module's own, on a free loopback port."""
    mq = Mosquitto(tmp_path_factory.mktemp("mosquitto"))
    mq.start()
    yield mq
    mq.stop()


@pytest.fixture(scope="module")
def web(broker):
    """The web server on a free port, subscribed to the module's broker."""
    server = start_web(broker.url)
    yield server
    server.stop()


_SHARED: list[Any] = []  # the test process's Chromium, started by the first module that asks for one


def _quit_shared() -> None:
    while _SHARED:
        _SHARED.pop().quit()


def _alive(driver: Any) -> bool:
    try:
        driver.window_handles  # noqa: B018 - a command to the browser
    except Exception:  # a browser that crashed or was quit: the next module starts another
        return False
    return True


def _as_new(driver: Any) -> None:
    """The browser as a new one for the next module: one new tab (every other closed, with what a test left
    open in it: an alert, a viewport of its own), and no cookies, storage or cache of any origin."""
    from selenium.common.exceptions import NoAlertPresentException

    with contextlib.suppress(NoAlertPresentException):
        driver.switch_to.alert.dismiss()
    old = driver.window_handles
    driver.switch_to.new_window("tab")
    fresh = driver.current_window_handle
    for handle in old:
        driver.switch_to.window(handle)
        driver.close()
    driver.switch_to.window(fresh)
    driver.execute_cdp_cmd("Storage.clearDataForOrigin", {"origin": "*", "storageTypes": "all"})
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.execute_cdp_cmd("Network.clearBrowserCache", {})


@pytest.fixture(scope="module")
def browser(request):
    """The test process's headless Chromium for the module, as a new one (see :func:`_as_new`); started by the
    first module that asks and quit at the end of the session, or where it cannot be made new again."""
    if not (_SHARED and _alive(_SHARED[0])):
        _quit_shared_quietly()
        _SHARED.append(chromium())
        request.config.add_cleanup(_quit_shared)
    driver = _SHARED[0]
    yield driver
    try:
        _as_new(driver)
    except Exception:  # whatever the module left that a new tab does not clear: the next module starts another
        _quit_shared_quietly()


def _quit_shared_quietly() -> None:
    try:
        _quit_shared()
    except Exception:  # a browser already gone
        _SHARED.clear()


def viewport(driver, width: int, height: int) -> None:
    """Resize so that the page's viewport (not the window) is width x height."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


def wait_js(driver, script: str, timeout: float = 15.0, message: str = "") -> Any:
    """Poll ``return <script>`` until it is truthy; its value."""
    last: list[Any] = [None]

    def value() -> Any:
        last[0] = driver.execute_script(f"return {script}")
        return last[0]

    try:
        return eventually(value, timeout, interval=0.05)
    except AssertionError:
        raise AssertionError(f"timed out waiting for {script!r} {message} (last value {last[0]!r})") from None


def wait_seq(driver, seq: int, timeout: float = 15.0) -> None:
    wait_js(driver, f"Number(document.body.dataset.seq || 0) >= {seq}", timeout, f"(seq {seq})")


def shot(driver, name: str, *, backdrop: bool = False) -> Path:
    """A screenshot into :func:`screenshot_dir`. ``backdrop``: a stand-in for the camera picture the
    overlay lies on in OBS (the overlay itself is transparent)."""
    if backdrop:
        driver.execute_script(
            "document.documentElement.style.background = 'radial-gradient(ellipse at 40% 45%, #4b5a52, #1d2421 70%)'")
    path = screenshot_dir() / f"{name}.png"
    driver.save_screenshot(str(path))
    if backdrop:
        driver.execute_script("document.documentElement.style.background = ''")
    return path
