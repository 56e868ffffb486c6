"""Devices are who their link says: ids, kinds and seats bound per serial link, through real ptys and Mosquitto.

The hole this closes: a ``BTN,0,undo`` frame with an id configured nowhere,
written on the automatic table's link, was obeyed (the dice were taken back).
"""

from __future__ import annotations

from drivers.observations import BadReason
from drivers.protocol import encode
from tablesvc.engine.events import DiceRolled
from tablesvc.service import TableService
from tests.device_support import two_devices, two_links_config
from tests.test_service_mqtt import Subscriber, send_command


def _started(mosquitto, tmp_path, pty_device, panel_seats: str = "[0, 1, 2, 3]"):
    table_dev, panel_dev = devices = two_devices(pty_device)
    service = TableService(two_links_config(mosquitto, tmp_path, devices, panel=f"seats = {panel_seats}"))
    service.start()
    sub = Subscriber(mosquitto.port)
    assert service.link.wait_ready(15)
    send_command(sub, {"command": "start_game", "transaction": "go"})
    assert sub.wait_for(lambda: sub.of("cmd/reply"))
    seq = table_dev.roll_dice(3, 5)
    assert table_dev.wait_acked(seq, 10)
    assert sub.wait_for(lambda: any(isinstance(e, DiceRolled) for e in service.table.events), 10)
    return service, table_dev, panel_dev, sub


def _stop(service, sub):
    sub.close()
    service.stop()


def test_a_stranger_on_the_table_link_is_refused_counted_and_reported(mosquitto, tmp_path, pty_device):
    service, table_dev, _panel_dev, sub = _started(mosquitto, tmp_path, pty_device)
    try:
        before = (service.journal.last_seq, list(service.table.events))
        # a device id configured nowhere asks for an undo on the automatic table's link
        table_dev.noise(encode("X9", 7, "BTN", 0, "undo"))
        # the table's own id may not press seat buttons either, nor can it claim to be a panel
        table_dev.noise(encode("T1", 900, "BTN", 0, "undo"))
        table_dev.noise(encode("T1", 901, "HELLO", "panel", "fake", "1"))
        assert sub.wait_for(lambda: len(sub.of("errors")) >= 2, 10)
        errors = sub.of("errors")
        stranger = next(e for e in errors if e["detail"]["device"] == "X9")
        assert stranger["source"] == "table" and stranger["detail"]["reason"] == "identity"
        assert "X9" in stranger["error"] and "T1" in stranger["error"]  # names the id and what is allowed
        own = next(e for e in errors if e["detail"]["device"] == "T1")
        assert own["detail"]["reason"] == "forbidden" and "BTN" in own["error"]
        # the third frame's error may still be on its way: the link's counts are read once all three are in
        bad = service.drivers[0].health
        assert sub.wait_for(lambda: sum(bad().frames_bad.values()) >= 3, 10), bad().frames_bad
        assert bad().frames_bad[BadReason.IDENTITY.value] == 1
        assert bad().frames_bad[BadReason.FORBIDDEN.value] == 2
        assert service.wait_idle(10)
        assert (service.journal.last_seq, list(service.table.events)) == before  # nothing changed
        # the health topic carries the counts too
        assert sub.wait_for(lambda: any(d["frames_bad"].get("identity") == 1 for d in sub.of("devices/table")), 15)
        # and the real table still works
        seq = table_dev.hand_started()
        assert table_dev.wait_acked(seq, 10)
        assert sub.wait_for(lambda: service.journal.last_seq == before[0] + 1, 10)
    finally:
        _stop(service, sub)


def test_a_panel_speaks_only_for_its_own_seats(mosquitto, tmp_path, pty_device):
    service, _table_dev, panel_dev, sub = _started(mosquitto, tmp_path, pty_device, panel_seats="[0, 1]")
    try:
        before = service.journal.last_seq
        refused = panel_dev.press(2, "undo")  # seat 2 is not wired to this panel
        assert panel_dev.wait_for(lambda: refused in panel_dev.naked, 10)
        assert panel_dev.naked[refused] == "forbidden"  # refused on the wire: the panel does not repeat it
        assert sub.wait_for(lambda: any(e["detail"]["reason"] == "forbidden" for e in sub.of("errors")), 10)
        error = next(e for e in sub.of("errors") if e["detail"]["reason"] == "forbidden")
        assert error["source"] == "panel" and "seat 2" in error["error"] and "0, 1" in error["error"]
        # the panel may not roll dice either (written raw: the simulator itself refuses to)
        panel_dev.noise(encode("P1", 800, "DICE", 1, 1))
        assert sub.wait_for(lambda: service.drivers[1].health().frames_bad["forbidden"] == 2, 10)
        assert service.wait_idle(10)
        # counted, but not reported again so soon: a flood of refusals is not a flood of errors
        assert sum(e["detail"]["reason"] == "forbidden" for e in sub.of("errors")) == 1
        assert service.journal.last_seq == before
        # its own seat's undo is obeyed: the dice are taken back
        taken = panel_dev.press(0, "undo")
        assert panel_dev.wait_acked(taken, 10)
        assert sub.wait_for(lambda: service.journal.last_seq == before + 1, 10)
        assert not any(isinstance(e, DiceRolled) for e in service.table.events)
        assert service.drivers[1].health().frames_bad["forbidden"] == 2
    finally:
        _stop(service, sub)


# -- the binding in the protocol, as pure code ----------------------------------------------------

from drivers.binding import LinkBinding  # noqa: E402
from drivers.observations import ButtonPressed, DeviceKind  # noqa: E402
from drivers.protocol import BadFrame, HostProtocol, decode_frame  # noqa: E402

PANEL = LinkBinding(DeviceKind.PANEL, frozenset({"P1"}), frozenset({0, 1}))


def _replies(protocol: HostProtocol) -> list[tuple[str, str, tuple[str, ...]]]:
    out = protocol.data_to_send()
    return [(f.device, f.msg, f.args) for f in (decode_frame(x) for x in out.split(b"\r\n") if x)]


def test_a_stranger_is_not_answered_and_a_forbidden_event_is_nacked():
    protocol = HostProtocol(binding=PANEL)
    items = protocol.data_received(encode("X9", 1, "BTN", 0, "undo") + encode("P1", 2, "DICE", 1, 2)
                                   + encode("P1", 3, "BTN", 3, "ron") + encode("P1", 4, "HELLO", "table", "m", "1")
                                   + encode("P1", 5, "BTN", 1, "ron"), 1.0)
    reasons = [(i.reason.value, i.device, i.seq) if isinstance(i, BadFrame) else "ok" for i in items]
    assert reasons == [("identity", "X9", 1), ("forbidden", "P1", 2), ("forbidden", "P1", 3),
                       ("forbidden", "P1", 4), "ok"]
    assert isinstance(items[-1], ButtonPressed) and items[-1].seat == 1
    # the stranger gets nothing; the panel's refused events a NAK (not repeated); its HELLO is no event
    assert _replies(protocol) == [("P1", "NAK", ("2", "forbidden")), ("P1", "NAK", ("3", "forbidden")),
                                  ("P1", "ACK", ("5",))]
    assert protocol.device_id == "P1"


def test_without_a_binding_every_id_is_heard():
    protocol = HostProtocol()
    (item,) = protocol.data_received(encode("X9", 1, "BTN", 0, "undo"), 1.0)
    assert isinstance(item, ButtonPressed) and item.device == "X9"


def test_a_withdrawn_event_is_not_acknowledged_and_its_repeat_is_delivered():
    protocol = HostProtocol(binding=PANEL)
    frame = encode("P1", 7, "BTN", 0, "confirm")
    (first,) = protocol.data_received(frame, 1.0)
    protocol.withdraw(first)  # the host could not journal it
    assert _replies(protocol) == []
    (again,) = protocol.data_received(frame, 1.5)  # the device repeats it: delivered, not a duplicate
    assert isinstance(again, ButtonPressed) and again.seq == 7
    assert _replies(protocol) == [("P1", "ACK", ("7",))]


def test_bindings_refuse_what_cannot_be_wired():
    import pytest

    with pytest.raises(ValueError, match="at least one device id"):
        LinkBinding(DeviceKind.TABLE, frozenset())
    with pytest.raises(ValueError, match="seats"):
        LinkBinding(DeviceKind.PANEL, frozenset({"P1"}), frozenset({4}))


def test_refusals_are_reported_in_bursts_with_the_count_of_those_held_back(pty_device):
    """Through the driver on a real pty: the first refusal of a (reason, device) at once, then one per interval
    carrying how many were counted but not reported since."""
    import threading
    import time

    from drivers.serial_driver import SerialDriver
    from hardware_sims.pytest_plugin import eventually

    reports: list[tuple[str, str | None, int]] = []
    lock = threading.Lock()

    def on_refused(bad, held):
        with lock:
            reports.append((bad.reason.value, bad.device, held))

    device = pty_device("table", "T1", heartbeat_interval=0.2)
    driver = SerialDriver("table", str(device.link_path), on_observation=lambda o: None, on_refused=on_refused,
                          binding=LinkBinding(DeviceKind.TABLE, frozenset({"T1"})), refusal_interval=1.0)
    driver.start()
    try:
        eventually(lambda: driver.health().connected, 10, what="the driver connected")
        for seq in range(5):  # made-up ids share one report: a stream of them is not a stream of reports
            device.noise(encode(f"X{seq}", seq, "BTN", 0, "undo"))
        eventually(lambda: driver.health().frames_bad["identity"] >= 5, 10, what="five refused frames")
        assert driver.health().frames_bad["identity"] == 5
        with lock:
            assert reports == [("identity", "X0", 0)]
        time.sleep(1.1)  # the behaviour under test: past the refusal interval, the next refusal is reported
        device.noise(encode("X9", 9, "BTN", 0, "undo"))
        eventually(lambda: len(reports) >= 2, 10, what="the second report")
        with lock:
            assert reports == [("identity", "X0", 0), ("identity", "X9", 4)]
    finally:
        driver.stop()
