"""The serial driver against simulated devices on real pseudo-terminals, opened by pyserial.

Every wait is on a condition with a generous timeout; nothing asserts how
long something took.
"""

from __future__ import annotations

import itertools
import logging
import os
import select
import socket
import threading
import tty
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import serial

from drivers.observations import (
    BadReason,
    Button,
    ButtonPressed,
    DeviceHealth,
    DeviceHello,
    DeviceKind,
    DiceRolled,
    HandStarted,
    Heartbeat,
    Observation,
    WallReady,
)
from drivers.protocol import BadFrame, decode_frame, encode
from drivers.serial_driver import SerialDriver
from hardware_sims.devices import PtyDevice
from hardware_sims.pytest_plugin import eventually

WAIT = 10.0  # seconds: far beyond what any step needs, so a busy machine does not fail a test


class Recorder:
    """Collects what a driver reports from its thread, and lets the test wait for it."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.observations: list[Observation] = []
        self.health: list[DeviceHealth] = []

    def observe(self, observation: Observation) -> None:
        with self._cond:
            self.observations.append(observation)
            self._cond.notify_all()

    def on_health(self, health: DeviceHealth) -> None:
        with self._cond:
            self.health.append(health)
            self._cond.notify_all()

    def wait_for(self, predicate: Callable[[], bool], timeout: float = WAIT) -> bool:
        with self._cond:
            return self._cond.wait_for(predicate, timeout)

    def events(self) -> list[Observation]:
        """Everything but heartbeats and hellos."""
        with self._cond:
            return [o for o in self.observations if not isinstance(o, (Heartbeat, DeviceHello))]

    def count(self, kind: type) -> int:
        with self._cond:
            return sum(isinstance(o, kind) for o in self.observations)

    def has_event(self, seq: int) -> bool:
        return any(o.seq == seq for o in self.events())


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def make_device(link: Path, device_id: str = "T1", kind: str = "table", **options) -> PtyDevice:
    options.setdefault("heartbeat_interval", 0.1)
    options.setdefault("resend_interval", 0.3)
    return PtyDevice(device_id, kind, link, **options)


def make_driver(name: str, link: Path, recorder: Recorder, **options) -> SerialDriver:
    options.setdefault("heartbeat_timeout", 1.5)
    options.setdefault("backoff", (0.05, 0.4))
    options.setdefault("health_interval", 0.5)
    return SerialDriver(name, str(link), on_observation=recorder.observe, on_health=recorder.on_health, **options)


@pytest.fixture
def table(tmp_path: Path) -> Iterator[PtyDevice]:
    with make_device(tmp_path / "ttyTABLE") as device:
        yield device


@pytest.fixture
def table_driver(table: PtyDevice, recorder: Recorder) -> Iterator[SerialDriver]:
    with make_driver("table", table.link_path, recorder) as driver:
        assert recorder.wait_for(lambda: recorder.count(DeviceHello) >= 1), "the device never said HELLO"
        yield driver


# -- the happy path ------------------------------------------------------------------------------


def test_driver_receives_hello_then_table_events_in_order(table, table_driver, recorder):
    hello = next(o for o in recorder.observations if isinstance(o, DeviceHello))
    assert (hello.device, hello.kind, hello.model) == ("T1", DeviceKind.TABLE, "sim")

    dice = table.roll_dice(3, 5)
    wall = table.wall_ready()
    hand = table.hand_started()
    assert recorder.wait_for(lambda: recorder.has_event(hand))

    events = recorder.events()
    assert [type(e) for e in events] == [DiceRolled, WallReady, HandStarted]
    assert [e.seq for e in events] == [dice, wall, hand]
    assert (events[0].d1, events[0].d2) == (3, 5)
    assert all(e.device == "T1" for e in events)
    assert all(a.timestamp <= b.timestamp for a, b in itertools.pairwise(events))

    health = table_driver.health()
    assert health.connected
    assert health.state == "connected"
    assert health.bad_total == 0
    assert health.frames_ok >= 4
    assert health.last_seen is not None


def test_acks_settle_every_event_and_stop_the_repeats(table, table_driver, recorder):
    seqs = [table.roll_dice(1, 2), table.wall_ready(), table.hand_started()]
    assert all(table.wait_acked(seq, WAIT) for seq in seqs)
    assert table.pending() == []
    repeats_so_far = table.resends

    # Let several repeat intervals pass (counted in heartbeats received, not in sleeps).
    beats = recorder.count(Heartbeat)
    assert recorder.wait_for(lambda: recorder.count(Heartbeat) >= beats + 15)
    assert table.resends == repeats_so_far
    assert [e.seq for e in recorder.events()] == seqs


def test_panel_buttons_arrive_in_order_next_to_a_table(tmp_path, table, table_driver, recorder):
    panel_recorder = Recorder()
    presses = [(0, Button.RIICHI), (1, Button.PON), (2, Button.RON), (3, Button.TSUMO), (0, Button.UNDO)]
    with (
        make_device(tmp_path / "ttyPANEL", "P1", "panel") as panel,
        make_driver("panel", panel.link_path, panel_recorder) as driver,
    ):
        assert panel_recorder.wait_for(lambda: panel_recorder.count(DeviceHello) >= 1)
        seqs = [panel.press(seat, button) for seat, button in presses]
        table.roll_dice(6, 6)
        assert panel_recorder.wait_for(lambda: panel_recorder.has_event(seqs[-1]))
        pressed = panel_recorder.events()
        assert [(e.seat, e.button) for e in pressed] == presses
        assert all(isinstance(e, ButtonPressed) and e.device == "P1" for e in pressed)
        assert driver.health().connected
    # Each driver hears only its own device.
    assert recorder.wait_for(lambda: recorder.count(DiceRolled) == 1)
    assert not any(isinstance(e, ButtonPressed) for e in recorder.events())


# -- acknowledgements and duplicates ---------------------------------------------------------------


def test_a_lost_ack_makes_the_device_repeat_and_the_driver_drops_the_duplicate(table, table_driver, recorder):
    table.drop_acks(1)
    repeated = table.roll_dice(2, 4)
    assert table.wait_acked(repeated, WAIT), "the repeat was not acknowledged"
    assert table.resends >= 1
    assert eventually(lambda: table_driver.health().frames_bad["duplicate"] >= 1)

    after = table.wall_ready()
    assert recorder.wait_for(lambda: recorder.has_event(after))
    assert [e.seq for e in recorder.events()] == [repeated, after]


def test_events_sent_before_the_host_listens_arrive_by_repeat_and_in_order(tmp_path, recorder):
    with make_device(tmp_path / "ttyTABLE", resend_interval=0.3, max_resends=20) as device:
        first, second = device.roll_dice(5, 1), device.wall_ready()
        with make_driver("table", device.link_path, recorder):
            assert recorder.wait_for(lambda: recorder.has_event(second))
            assert [e.seq for e in recorder.events()] == [first, second]


def test_a_device_gives_up_an_event_nobody_acknowledges(tmp_path):
    with make_device(tmp_path / "ttyTABLE", resend_interval=0.05, max_resends=3) as device:
        seq = device.hand_started()
        assert device.wait_for(lambda: seq in device.given_up, WAIT)
        assert device.resends == 3
        assert device.pending() == []


# -- bad input on the line ---------------------------------------------------------------------------


def test_noise_bad_checksums_and_overlong_lines_are_counted_and_good_frames_get_through(table, table_driver, recorder):
    seqs = [table.roll_dice(1, 1)]
    table.noise(b"\x00\xff\x7fline noise\r\n")
    seqs.append(table.wall_ready())
    table.noise(b"\x13\x11glued")  # no newline: glued to the front of the next frame
    table.bad_checksum_next()
    seqs.append(table.hand_started())
    table.overlong_line()
    seqs.append(table.roll_dice(2, 2))

    assert recorder.wait_for(lambda: all(recorder.has_event(seq) for seq in seqs))
    health = table_driver.health()
    assert health.frames_bad["garbage"] >= 2
    assert health.frames_bad["checksum"] >= 1
    assert health.frames_bad["overlong"] >= 1
    assert health.connected
    # Each event once, in the order sent (the corrupted one came again with its own seq).
    assert [e.seq for e in recorder.events()] == seqs


def test_a_refused_event_is_nakked_and_the_queue_goes_on(table, table_driver, recorder):
    refused = table.send_event("DICE", 9, 9)
    after = table.wall_ready()
    assert recorder.wait_for(lambda: recorder.has_event(after))
    assert table.naked == {refused: "arguments"}
    # counted as a bad frame: once, or more if the device repeated it before the NAK reached it (the
    # protocol's 500 ms repeat can win on a loaded machine); never delivered as an observation
    assert eventually(lambda: table_driver.health().frames_bad["arguments"] >= 1)
    assert not recorder.has_event(refused)


# -- failures of the device ----------------------------------------------------------------------------


def test_a_stall_beyond_the_heartbeat_timeout_marks_the_device_disconnected(table, table_driver, recorder):
    table.stall(3.0)
    assert recorder.wait_for(lambda: any(not h.connected and "silent" in h.state for h in recorder.health))
    # When the device speaks again the driver is back by itself.
    reports = len(recorder.health)
    assert recorder.wait_for(lambda: any(h.connected for h in recorder.health[reports:]))
    seq = table.hand_started()
    assert recorder.wait_for(lambda: recorder.has_event(seq))


def test_unplug_and_replug_the_driver_reconnects_on_its_own(table, table_driver, recorder):
    before = table.roll_dice(4, 4)
    assert recorder.wait_for(lambda: recorder.has_event(before))
    hellos = recorder.count(DeviceHello)

    table.unplug()
    assert recorder.wait_for(lambda: not recorder.health[-1].connected)
    assert eventually(lambda: "open failed" in table_driver.health().state)

    table.replug()
    assert recorder.wait_for(lambda: recorder.count(DeviceHello) > hellos)
    after = [table.wall_ready(), table.hand_started()]
    assert recorder.wait_for(lambda: recorder.has_event(after[-1]))
    assert [e.seq for e in recorder.events()] == [before, *after]
    health = table_driver.health()
    assert health.connected
    assert health.reconnects >= 1


def test_a_read_error_is_survived(table, table_driver, recorder, mocker):
    # Fault injection at the boundary: the next read of the real port raises once.
    original = serial.Serial.read
    armed = threading.Event()
    armed.set()

    def flaky_read(port, size=1):
        if armed.is_set():
            armed.clear()
            raise serial.SerialException("injected: cable glitch")
        return original(port, size)

    mocker.patch.object(serial.Serial, "read", autospec=True, side_effect=flaky_read)
    assert recorder.wait_for(lambda: any("injected: cable glitch" in h.state for h in recorder.health))
    seq = table.roll_dice(6, 1)
    assert recorder.wait_for(lambda: recorder.has_event(seq))
    assert eventually(lambda: table_driver.health().connected and table_driver.health().reconnects >= 1)


def test_a_callback_that_raises_is_logged_and_the_driver_goes_on(table, caplog):
    seen: list[Observation] = []
    delivered = threading.Event()

    def fragile(observation: Observation) -> None:
        if isinstance(observation, DeviceHello):
            raise RuntimeError("consumer bug")
        seen.append(observation)
        if isinstance(observation, WallReady):
            delivered.set()

    with (
        caplog.at_level(logging.ERROR, logger="drivers.serial_driver"),
        SerialDriver("table", str(table.link_path), on_observation=fragile, heartbeat_timeout=1.5) as driver,
    ):
        assert eventually(lambda: "consumer bug" in caplog.text)
        table.wall_ready()
        assert delivered.wait(WAIT)
        assert driver.running


# -- lifecycle and transports ----------------------------------------------------------------------------


def test_stop_ends_the_thread_and_reports_stopped(table, recorder):
    driver = make_driver("table", table.link_path, recorder)
    driver.start()
    assert recorder.wait_for(lambda: recorder.count(DeviceHello) >= 1)
    driver.stop()
    assert not driver.running
    assert recorder.health[-1].state == "stopped"
    assert not recorder.health[-1].connected
    driver.stop()  # idempotent
    with pytest.raises(RuntimeError):
        driver.start()


@pytest.mark.parametrize("url", ["/nonexistent/ttyUSB9", "nonsense://nowhere", "socket://127.0.0.1:1"])
def test_a_device_that_is_not_there_is_retried_without_crashing(url, recorder):
    driver = SerialDriver(
        "ghost", url, on_observation=recorder.observe, on_health=recorder.on_health, backoff=(0.05, 0.1)
    )
    with driver:
        assert recorder.wait_for(lambda: sum("open failed" in h.state for h in recorder.health) >= 1)
        assert eventually(lambda: driver.running)
    assert not driver.running
    assert recorder.health[-1].state == "stopped"


def test_a_socket_url_works_like_a_port(recorder):
    # A serial-over-TCP server (ser2net, an ESP32 bridge): socket://host:port, same driver, same protocol.
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    server.settimeout(WAIT)
    with server, make_driver("net", f"socket://127.0.0.1:{port}", recorder):
        connection, _ = server.accept()
        with connection:
            connection.settimeout(WAIT)
            received = b""
            while b"\n" not in received:
                received += connection.recv(256)
            assert decode_frame(received.split(b"\r\n")[0]).msg == "PING"
            connection.sendall(encode("N1", 0, "HELLO", "panel", "bridge", "0.1") + encode("N1", 1, "BTN", 1, "kan"))
            assert recorder.wait_for(lambda: recorder.has_event(1))
            while not any(b"ACK" in line for line in received.split(b"\r\n")[:-1]):  # a whole ACK line
                received += connection.recv(256)
            frames = [decode_frame(line) for line in received.split(b"\r\n")[:-1]]
            assert [(f.device, f.msg, f.args) for f in frames if f.msg == "ACK"] == [("N1", "ACK", ("1",))]
    assert recorder.events() == [
        ButtonPressed(device="N1", seq=1, timestamp=recorder.events()[0].timestamp, seat=1, button=Button.KAN)
    ]


# -- vendor adapters -------------------------------------------------------------------------------


def load_documented_adapter() -> type:
    """The AcmeTable adapter exactly as docs/serial-protocol.md shows it."""
    document = (Path(__file__).resolve().parents[1] / "docs" / "serial-protocol.md").read_text()
    block = next(b for b in document.split("```python\n")[1:] if b.startswith("class AcmeTable"))
    code = block.split("\ndriver = ")[0]
    namespace = {
        "BadFrame": BadFrame,
        "BadReason": BadReason,
        "DiceRolled": DiceRolled,
        "HandStarted": HandStarted,
        "Heartbeat": Heartbeat,
        "Observation": Observation,
    }
    exec(compile("from __future__ import annotations\n" + code, "serial-protocol.md", "exec"), namespace)
    return namespace["AcmeTable"]


def test_a_vendor_adapter_plugs_in_through_protocol_factory(recorder):
    adapter = load_documented_adapter()
    master, slave = os.openpty()
    tty.setraw(slave)
    try:
        with make_driver("acme", Path(os.ttyname(slave)), recorder, protocol_factory=adapter) as driver:
            received = b""
            while b"?\n" not in received:  # the adapter's probe on connect
                assert select.select([master], [], [], WAIT)[0], "the driver never probed the device"
                received += os.read(master, 64)
            os.write(master, b"S ready\nD 3 5\n\x00\xffjunk\nD 7 1\nH\n")
            assert recorder.wait_for(lambda: recorder.count(HandStarted) == 1)
            assert [type(o) for o in recorder.observations] == [Heartbeat, DiceRolled, HandStarted]
            assert (recorder.observations[1].d1, recorder.observations[1].d2) == (3, 5)
            assert eventually(lambda: driver.health().frames_bad["garbage"] == 2)
            assert driver.health().connected
    finally:
        os.close(master)
        os.close(slave)


def test_events_the_host_kept_before_it_started_are_acknowledged_again_not_delivered(tmp_path, recorder):
    """A restarted host (a new driver) is told which events its predecessor kept (the journal does it): the
    device's repeat of one whose ACK was lost is acknowledged and not delivered a second time."""
    with make_device(tmp_path / "ttyTABLE", resend_interval=2.0, max_resends=10) as device:
        with make_driver("table", device.link_path, recorder):
            device.drop_acks(1)  # the ACK is lost: the device repeats the event 2 s later
            seq = device.roll_dice(2, 5)
            assert recorder.wait_for(lambda: recorder.has_event(seq))
        assert seq not in device.acked
        again = Recorder()
        with make_driver("table", device.link_path, again, known_events=[("T1", seq, 0.5)]) as driver:
            assert device.wait_acked(seq, WAIT)
            assert device.resends >= 1
            assert eventually(lambda: driver.health().frames_bad["duplicate"] == 1)
            after = device.wall_ready()  # the next event is delivered as ever
            assert again.wait_for(lambda: again.has_event(after))
            assert [e.seq for e in again.events()] == [after]

