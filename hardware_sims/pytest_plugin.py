"""tablesvc's simulators as pytest fixtures, for the project's own tests and for anyone building on it.

Installed with tablesvc (the ``pytest11`` entry point ``tablesvc`` in pyproject.toml), so any project
that has tablesvc in its test environment gets these fixtures without importing anything. Every part is
real: a Mosquitto process on a free loopback port, serial devices on real pseudo-terminals read by the
real pyserial driver, the real service with its SQLite journal. ``docs/testing.md`` shows them at work.

Fixtures:

``mosquitto``
    A started :class:`Mosquitto` of the test's own (``.url``, ``.port``, ``.stop()``, ``.start()``);
    skips the test where the ``mosquitto`` binary is not installed.
``pty_device``
    A factory: ``pty_device("table")`` or ``pty_device("panel", device_id="PNL2")`` starts a
    :class:`~hardware_sims.devices.PtyDevice` on a real pseudo-terminal (its ``link_path`` is what a
    driver opens) with its faults on demand (``noise``, ``bad_checksum_next``, ``overlong_line``,
    ``stall``, ``drop_acks``, ``unplug``/``replug``); stopped after the test.
``stick_tray``
    A factory: ``stick_tray(trays=(25000,) * 4)`` starts a :class:`~hardware_sims.sticks.StickTray` (device
    kind ``sticks``, id ``STK1`` unless given) on a real pseudo-terminal: ``set_trays`` moves the sticks,
    reported once they settle (``settle=1.0`` s), ``flutter`` makes it never settle; stopped after the test.
``game_record``
    A factory: ``game_record(seed=7)`` generates a legal game, ``game_record(path)`` reads a recorded one
    (mjlog, mjai, tenhou.net/6).
``camera_feed``
    A factory: ``camera_feed(deliver)`` is a :class:`~hardware_sims.camera_feed.CameraFeed` that renders
    the table, reads the frames with the vision pipeline and delivers what the tracker reports (the
    drawn tile set's classifier is enrolled once per session).
``simulated_table``
    A running :class:`SimulatedTable`: the service (site ``sim``, table ``table-1``) publishing to the
    ``mosquitto`` fixture, reading an automatic table and a seat panel on pseudo-terminals;
    ``.play(seed=7)`` plays a game on them (``until=`` stops it early), ``.messages("state")`` collects
    what a topic receives.

Waiting, for every test (importable: ``from hardware_sims.pytest_plugin import eventually, Recorder, subscribe``):

:func:`eventually`
    ``eventually(lambda: ..., timeout, what="...")`` polls a condition until it holds and returns its value, or
    fails the test saying what did not happen in time: the one way a test waits for something it cannot be
    told about.
:class:`Recorder`
    A callback that keeps what it is called with and wakes whoever waits on it: ``on_observation=recorder``,
    then ``recorder.wait_for(lambda seen: ..., timeout, what="...")``.
:func:`subscribe`
    Subscribes a paho client and returns once the broker has acknowledged it (its SUBACK), so that whatever is
    published from then on reaches the client.

A test proves that something did not happen by waiting for a later event that must come after it (a message
published after the one that must not arrive, on the same connection), never by sleeping.
"""

from __future__ import annotations

import getpass
import json
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["Mosquitto", "Recorder", "SimulatedTable", "eventually", "free_port", "subscribe"]


def eventually(predicate: Callable[[], Any], timeout: float = 20.0, *, what: str = "",
               interval: float = 0.005) -> Any:
    """Wait until ``predicate()`` is true and return its value; fail the test (``AssertionError``) with ``what``
    if it is not within ``timeout`` seconds. For a state only polling can see (a file, a database, a
    process); where something calls back, a :class:`Recorder` or an event wakes the test instead.

    Polled every ``interval`` seconds at first, then less often, up to ten times a second: a wait that lasts
    (a whole game played) leaves the CPU to what it waits for."""
    deadline = time.monotonic() + timeout
    period, slowest = interval, max(interval, 0.1)
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"not within {timeout:g} s: {what or getattr(predicate, '__qualname__', predicate)}")
        time.sleep(period)  # the poll's period, the only pause a waiting test makes
        period = min(slowest, period * 1.5)


class Recorder(list):
    """A callback that keeps every argument it is called with, in order, and wakes :meth:`wait_for`.

    Thread-safe for one writer (a driver's thread, paho's loop) and any number of readers."""

    def __init__(self) -> None:
        super().__init__()
        self.changed = threading.Condition()

    def __call__(self, item: Any) -> None:
        with self.changed:
            self.append(item)
            self.changed.notify_all()

    def wait_for(self, predicate: Callable[[list[Any]], Any], timeout: float = 20.0, *, what: str = "") -> Any:
        """Wait until ``predicate(what was recorded)`` is true and return its value; fail the test saying
        ``what`` (and what was recorded) if it is not within ``timeout`` seconds."""
        with self.changed:
            value = self.changed.wait_for(lambda: predicate(list(self)), timeout)
            if not value:
                raise AssertionError(f"not within {timeout:g} s: {what or 'the recorded items'}; recorded "
                                     f"{len(self)}: {list(self)[-5:]!r}")
            return value


class _Subacks:
    """A paho client's on_subscribe: the reason codes of each acknowledged subscription, by message id."""

    def __init__(self, then: Callable[..., Any] | None) -> None:
        self.then = then
        self.acked: dict[int, list[Any]] = {}
        self.changed = threading.Condition()

    def __call__(self, client: Any, userdata: Any, mid: int, reason_codes: list[Any], properties: Any) -> None:
        with self.changed:
            self.acked[mid] = reason_codes
            self.changed.notify_all()
        if self.then is not None:
            self.then(client, userdata, mid, reason_codes, properties)


def subscribe(client: Any, topic: str, qos: int = 1, timeout: float = 10.0) -> list[Any]:
    """Subscribe a connected, looping paho client (callback API 2) to ``topic`` and return the broker's reason
    codes once its SUBACK has arrived: every message published after this returns reaches the client (where
    its account may read it). Fails the test if the broker does not answer within ``timeout`` seconds."""
    acks = client.on_subscribe
    if not isinstance(acks, _Subacks):
        acks = _Subacks(acks)
        client.on_subscribe = acks
    result, mid = client.subscribe(topic, qos)
    if result != 0:
        raise AssertionError(f"cannot subscribe to {topic}: paho error {result}")
    with acks.changed:
        if not acks.changed.wait_for(lambda: mid in acks.acked, timeout):
            raise AssertionError(f"the broker did not acknowledge the subscription to {topic} within {timeout:g} s")
        return acks.acked.pop(mid)


def free_port() -> int:
    """A TCP port nothing listens on at the moment, on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Mosquitto:
    """A Mosquitto broker of the test's own, on a free loopback port; can be stopped and restarted."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if Path("/usr/sbin/mosquitto").exists() else None)
        if binary is None:
            pytest.skip("mosquitto is not installed (.ci/run installs it with apt-get)")
        self.binary = binary
        self.port = free_port()
        self.workdir = workdir
        self.conf = workdir / "mosquitto.conf"
        self.conf.write_text(
            # as root, Mosquitto would drop to user 'mosquitto', who cannot write the test's directory
            f"user {getpass.getuser()}\n"
            f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence true\n"
            f"persistence_location {workdir}/\nautosave_interval 1\nmax_queued_messages 0\n"
            "set_tcp_nodelay true\n"  # as deploy/mosquitto.conf: no 40 ms Nagle wait for a reply after a PUBACK
        )
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> None:
        log = open(self.workdir / "mosquitto.log", "ab")  # noqa: SIM115 - kept open for the process
        self.proc = subprocess.Popen([self.binary, "-c", str(self.conf)], stdout=log, stderr=log)
        def listening() -> bool:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return True
            except OSError:
                return False

        eventually(listening, 10, what=f"mosquitto listening on port {self.port} (see {self.workdir}/mosquitto.log)")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()  # a clean stop: it saves its persistence file
            self.proc.wait(10)
            self.proc = None


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    """A started Mosquitto of the test's own on a free loopback port (anonymous, persistent); stopped after."""
    broker = Mosquitto(tmp_path)
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture
def pty_device(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Factory: ``pty_device("table"|"panel", device_id=None, **PtyDevice options)`` -> a started simulated
    device on a real pseudo-terminal; open its ``link_path`` with pyserial; faults on demand."""
    from hardware_sims.devices import PtyDevice

    started: list[PtyDevice] = []

    def make(kind: str = "table", device_id: str | None = None, **options: Any) -> PtyDevice:
        device_id = device_id or f"{'TBL' if kind == 'table' else 'PNL'}{len(started) + 1}"
        device = PtyDevice(device_id, kind, tmp_path / f"tty{device_id}", **options)
        device.start()
        started.append(device)
        return device

    yield make
    for device in started:
        device.stop()


@pytest.fixture
def stick_tray(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Factory: ``stick_tray(device_id="STK1", trays=(0, 0, 0, 0), riichi=0, settle=1.0, **PtyDevice options)`` ->
    a started :class:`~hardware_sims.sticks.StickTray` on a real pseudo-terminal; stopped after the test."""
    from hardware_sims.sticks import StickTray

    started: list[StickTray] = []

    def make(device_id: str | None = None, **options: Any) -> StickTray:
        device_id = device_id or f"STK{len(started) + 1}"
        tray = StickTray(device_id, tmp_path / f"tty{device_id}", **options)
        tray.start()
        started.append(tray)
        return tray

    yield make
    for tray in started:
        tray.stop()


@pytest.fixture
def game_record() -> Callable[..., Any]:
    """Factory: ``game_record(seed=7)`` a generated game, ``game_record("game.mjlog")`` a recorded one."""
    def make(source: int | str | Path | None = None, *, seed: int | None = None, rules: str = "ema2012") -> Any:
        if source is not None and not isinstance(source, int):
            from tablesvc.replay import load_record

            return load_record(source)
        from hardware_sims.generator import GeneratorOptions, generate_game

        return generate_game(seed if seed is not None else (source or 1), GeneratorOptions(rules=rules))

    return make


@pytest.fixture(scope="session")
def _drawn_classifier() -> Any:
    from hardware_sims.tile_art import drawn_tile_set
    from vision.naming.classifier import TileClassifier

    classifier = TileClassifier(augment_per_image=12)  # enough for rendered frames, quick to enroll
    classifier.enroll(drawn_tile_set().faces)
    return classifier


@pytest.fixture
def camera_feed(_drawn_classifier: Any) -> Callable[..., Any]:
    """Factory: ``camera_feed(deliver, **CameraFeed options)`` -> a camera that renders the table and delivers
    what the vision pipeline reads; a table simulator's outputs (``simulated_table.play(feed=...)``)."""
    from hardware_sims.camera_feed import CameraFeed

    def make(deliver: Callable[[object], None], **options: Any) -> CameraFeed:
        return CameraFeed(deliver, _drawn_classifier, **options)

    return make


class _StopWhen:
    """A table simulator's outputs that stop it once ``until()`` holds after a signal."""

    def __init__(self, outputs: Any, until: Callable[[], object], stop: Callable[[], None]) -> None:
        self._outputs = outputs
        self._until = until
        self._stop = stop

    def __getattr__(self, name: str) -> Callable[..., None]:
        signal = getattr(self._outputs, name)

        def send(*args: Any) -> None:
            signal(*args)
            if self._until():
                self._stop()

        return send


class SimulatedTable:
    """A table service on the test's broker with a simulated automatic table and seat panel on ptys."""

    site = "sim"
    table = "table-1"

    def __init__(self, broker: Mosquitto, workdir: Path, make_device: Callable[..., Any],
                 make_tray: Callable[..., Any] | None = None, extra_config: str = "") -> None:
        from tablesvc.config import parse_config
        from tablesvc.service import TableService

        self.broker = broker
        self.automatic_table = make_device("table", "TBL1")
        self.panel = make_device("panel", "PNL1")
        self.tray = make_tray("STK1") if make_tray is not None else None
        sticks = (f'[[serial]]\nname = "sticks"\nurl = "{self.tray.link_path}"\nkind = "sticks"\nids = ["STK1"]\n'
                  if self.tray is not None else "")
        self.config = parse_config(
            f'[table]\nsite = "{self.site}"\nid = "{self.table}"\ndata_dir = "{workdir / "data"}"\n'
            f'[mqtt]\nurl = "{broker.url}"\n'
            f'[[serial]]\nname = "table"\nurl = "{self.automatic_table.link_path}"\nkind = "table"\nids = ["TBL1"]\n'
            f'[[serial]]\nname = "panel"\nurl = "{self.panel.link_path}"\nkind = "panel"\nids = ["PNL1"]\n'
            + sticks + extra_config, "<simulated_table>")
        self.base = self.config.topics.base
        self.service = TableService(self.config, new_game=True)  # a broker shared by tests may hold another game
        self._clients: list[Any] = []

    def start(self) -> None:
        self.service.start()
        if not self.service.link.wait_ready(15):  # subscribed too: a command sent from now on is seen
            raise RuntimeError(f"the service cannot reach {self.broker.url}: {self.service.link.failure}")

    def stop(self) -> None:
        for client in self._clients:
            client.disconnect()
            client.loop_stop()
        self.service.stop()

    def messages(self, topic: str) -> list[Any]:
        """A list that fills with every message on ``<base>/<topic>`` from now on (JSON decoded), as a
        consumer subscribed to it sees them, retained ones included."""
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        received: list[Any] = []
        subscribed = threading.Event()
        client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        client.on_connect = lambda c, _u, _f, _r, _p: c.subscribe(f"{self.base}/{topic}", qos=1)
        client.on_subscribe = lambda *_: subscribed.set()
        client.on_message = lambda _c, _u, m: received.append(json.loads(m.payload) if m.payload else None)
        client.connect("127.0.0.1", self.broker.port)
        client.loop_start()
        self._clients.append(client)
        if not subscribed.wait(10):
            raise RuntimeError(f"cannot subscribe to {self.base}/{topic}")
        return received

    def play(self, game: Any = None, *, seed: int = 1, speed: float = 0.0, feed: Any = None,
             until: Callable[[], object] | None = None, mispay: Any = None) -> Any:
        """Play ``game`` (a :class:`~tablesvc.formats.record.RecordedGame`; default: generated from ``seed``)
        on the simulated devices, the referee starting it; returns the record once the service has
        handled every input. The camera's observations go straight to the service, unless ``feed`` (a
        ``camera_feed(table.service.observe)``) is given: then the whole table goes through it, the felt
        rendered and read by vision, the device signals handed to the service directly. ``until``, asked
        after each signal the table gives, stops the game early once it holds (the record returned is still
        the whole game, of which the table showed the beginning): a camera feed renders a few frames a
        second, so ``until=lambda: len(feed.stats.changes) >= 8`` keeps such a test to seconds. With a stick
        tray (``stick_table``) the players pay in sticks as they play (:attr:`players`), one hand wrong with
        ``mispay`` (a :class:`~hardware_sims.sticks.Mispayment`)."""
        from hardware_sims.generator import generate_game
        from hardware_sims.table import DeviceOutputs, TableSimulator
        from tablesvc.mqtt.link import IncomingMessage

        record = game if game is not None else generate_game(seed)

        def start(_event: object) -> None:
            command = {"command": "start_game", "players": list(record.players), "transaction": "sim"}
            self.service.inbox.put(("cmd", IncomingMessage(f"{self.base}/cmd", json.dumps(command).encode())))

        outputs = feed if feed is not None else DeviceOutputs(self.automatic_table, self.panel, self.service.observe)
        self.players = None
        if self.tray is not None:
            from hardware_sims.sticks import StickPlayers

            self.players = StickPlayers(self.tray, mispay=mispay)
        simulator = TableSimulator(record, outputs, speed=speed, start_game=start, after_event=self.players)
        if until is not None:
            simulator.out = _StopWhen(outputs, until, simulator.stop)
        simulator.run()
        self.service.wait_idle(60)
        return record

    @staticmethod
    def wait_for(predicate: Callable[[], object], timeout: float = 20.0, what: str = "") -> bool:
        """``eventually``: true once ``predicate()`` holds; fails the test if it does not within ``timeout``."""
        return bool(eventually(predicate, timeout, what=what))


@pytest.fixture
def simulated_table(mosquitto: Mosquitto, tmp_path: Path, pty_device: Callable[..., Any]) -> Iterator[SimulatedTable]:
    """A running table service (``tablesvc/sim/table-1``) on the ``mosquitto`` fixture, reading a simulated
    automatic table and seat panel; ``.play(seed=7)``, ``.messages("state")``, ``.wait_for(...)``."""
    table = SimulatedTable(mosquitto, tmp_path, pty_device)
    table.start()
    yield table
    table.stop()


@pytest.fixture
def stick_table(mosquitto: Mosquitto, tmp_path: Path, pty_device: Callable[..., Any],
                stick_tray: Callable[..., Any]) -> Iterator[SimulatedTable]:
    """A :func:`simulated_table` with a stick tray reader on a third link (``sticks``, id ``STK1``) whose trays
    the players keep as they play (``.play(seed=7, mispay=...)``, ``.tray``, ``.players``)."""
    table = SimulatedTable(mosquitto, tmp_path, pty_device, make_tray=stick_tray)
    table.start()
    yield table
    table.stop()
