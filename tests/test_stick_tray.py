"""The stick tray reader (device kind ``sticks``): its frames, and the simulator on a real pseudo-terminal read by
the real serial driver."""

from __future__ import annotations

import threading
import time

import pytest

from drivers.binding import LinkBinding
from drivers.observations import BadReason, DeviceHello, DeviceKind, TraysRead
from drivers.protocol import BadFrame, FrameError, HostProtocol, decode_frame, encode, to_observation
from drivers.serial_driver import SerialDriver


def _observe(line: bytes) -> TraysRead:
    return to_observation(decode_frame(line.rstrip(b"\r\n")), 1.0)


def test_trays_frames_decode_to_each_seats_total_and_the_riichi_sticks():
    reading = _observe(encode("STK1", 7, "TRAYS", 24000, 25000, 26000, 24000, 1))
    assert isinstance(reading, TraysRead) and reading.is_event
    assert reading.trays == (24000, 25000, 26000, 24000) and reading.riichi == 1 and reading.total == 100000
    extra = _observe(encode("STK1", 8, "TRAYS", 0, 0, 0, 100, 0, "future"))  # a newer firmware's field: ignored
    assert extra.trays == (0, 0, 0, 100)


@pytest.mark.parametrize(("args", "why"), [
    ((24000, 25000, 26000, 24000), "needs 5"),
    ((24050, 25000, 26000, 24000, 0), "whole hundreds"),  # no stick is worth less than 100
    (("-100", 25000, 26000, 24000, 0), "whole hundreds"),  # a tray never holds less than nothing
    ((1_000_000, 0, 0, 0, 0), "whole hundreds"),
    ((25000, 25000, 25000, 25000, 100), "riichi sticks"),
])
def test_nonsense_trays_are_refused_as_arguments(args, why):
    with pytest.raises(FrameError, match=why) as caught:
        _observe(encode("STK1", 3, "TRAYS", *args))
    assert caught.value.reason is BadReason.ARGUMENTS


def test_only_a_stick_reader_may_send_trays_and_it_sends_nothing_else():
    sticks = HostProtocol(binding=LinkBinding(DeviceKind.STICKS, frozenset({"STK1"})))
    good = sticks.data_received(encode("STK1", 1, "TRAYS", 25000, 25000, 25000, 25000, 0), 1.0)
    assert isinstance(good[0], TraysRead) and b"ACK,1" in sticks.data_to_send()
    refused = sticks.data_received(encode("STK1", 2, "DICE", 3, 4), 1.0)
    assert isinstance(refused[0], BadFrame) and refused[0].reason is BadReason.FORBIDDEN
    table = HostProtocol(binding=LinkBinding(DeviceKind.TABLE, frozenset({"T1"})))
    refused = table.data_received(encode("T1", 1, "TRAYS", 25000, 25000, 25000, 25000, 0), 1.0)
    assert refused[0].reason is BadReason.FORBIDDEN and b"NAK,1,forbidden" in table.data_to_send()


class _Heard:
    def __init__(self) -> None:
        self.items: list[object] = []
        self.cond = threading.Condition()

    def __call__(self, observation: object) -> bool:
        with self.cond:
            self.items.append(observation)
            self.cond.notify_all()
        return True

    def readings(self) -> list[TraysRead]:
        with self.cond:
            return [o for o in self.items if isinstance(o, TraysRead)]

    def wait(self, predicate, timeout: float = 10.0) -> bool:
        with self.cond:
            return self.cond.wait_for(predicate, timeout)


def test_the_simulated_tray_reports_what_it_holds_after_hello_and_only_settled_changes(stick_tray):
    tray = stick_tray(trays=(25000,) * 4, settle=0.5, heartbeat_interval=0.2)
    heard = _Heard()
    binding = LinkBinding(DeviceKind.STICKS, frozenset({tray.device_id}))
    with SerialDriver("sticks", str(tray.link_path), on_observation=heard, binding=binding):
        assert heard.wait(lambda: heard.readings())  # the host opened the port: PING, HELLO, the reading
        assert any(isinstance(o, DeviceHello) and o.kind is DeviceKind.STICKS for o in heard.items)
        assert heard.readings()[-1].trays == (25000,) * 4
        before = len(heard.readings())
        # a payment: sticks out of Ben's tray, a moment in his hand, into Chloe's: only the settled end is told
        tray.set_trays((25000, 17300, 25000, 25000))
        time.sleep(0.1)  # the sticks a moment in his hand: the unsettled movement under test
        tray.set_trays((25000, 17300, 32700, 25000))
        assert tray.wait_reported(10)
        assert heard.wait(lambda: len(heard.readings()) > before)
        assert [r.trays for r in heard.readings()[before:]] == [(25000, 17300, 32700, 25000)]
        # a riichi stick onto the table
        tray.set_trays((25000, 16300, 32700, 25000), riichi=1)
        assert tray.wait_reported(10)
        assert heard.wait(lambda: heard.readings()[-1].riichi == 1)


def test_a_fluttering_tray_sends_reading_after_reading(stick_tray):
    tray = stick_tray(trays=(25000,) * 4, settle=1.0, heartbeat_interval=0.2)
    heard = _Heard()
    with SerialDriver("sticks", str(tray.link_path), on_observation=heard):
        assert heard.wait(lambda: heard.readings())
        start = len(heard.readings())
        tray.flutter(1.0)
        assert heard.wait(lambda: len(heard.readings()) >= start + 5)
        assert len({r.trays for r in heard.readings()[start:]}) > 1


def test_the_tray_refuses_what_no_tray_holds(stick_tray):
    tray = stick_tray()
    with pytest.raises(ValueError, match="whole hundreds"):
        tray.set_trays((25000, 25050, 25000, 25000))
    with pytest.raises(ValueError, match="a sticks does not send DICE"):
        tray.send_event("DICE", 1, 2)
