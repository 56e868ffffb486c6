"""The pytest plugin's fixtures (hardware_sims/pytest_plugin.py) work as docs/testing.md says, and its
example, an outside project's overlay test, passes when run on its own in an empty directory."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from drivers.serial_driver import SerialDriver
from hardware_sims.pytest_plugin import Recorder, eventually, subscribe

ROOT = Path(__file__).resolve().parents[1]


def test_the_plugin_is_registered_by_its_entry_point():
    from importlib.metadata import entry_points

    found = [e for e in entry_points(group="pytest11") if e.name == "tablesvc"]
    assert found and found[0].value == "hardware_sims.pytest_plugin"


def test_simulated_table_plays_a_game_to_its_final_scores(simulated_table, game_record):
    events = simulated_table.messages("events")
    states = simulated_table.messages("state")
    game = simulated_table.play(game_record(seed=3))
    assert simulated_table.wait_for(lambda: states and states[-1]["phase"] == "game_over")
    assert [s["score"] for s in states[-1]["seats"]] == list(game.final_scores)
    assert simulated_table.wait_for(lambda: events and events[-1]["seq"] == simulated_table.service.journal.last_seq)
    seqs = [e["seq"] for e in events]
    assert sorted(set(seqs)) == list(range(1, simulated_table.service.journal.last_seq + 1))


def test_pty_device_faults_reach_the_driver(pty_device):
    device = pty_device("panel")
    seen = []
    driver = SerialDriver("panel", str(device.link_path), on_observation=seen.append)
    driver.start()
    try:
        assert device.wait_acked(device.press(2, "ron"), 5)
        device.bad_checksum_next()
        seq = device.press(1, "tsumo")  # corrupted once, then resent intact
        assert device.wait_acked(seq, 5)
        eventually(lambda: driver.health().frames_bad["checksum"] >= 1, 5, what="the corrupted frame counted")
        assert [(o.seat, o.button.value) for o in seen if hasattr(o, "button")] == [(2, "ron"), (1, "tsumo")]
    finally:
        driver.stop()


def test_eventually_returns_the_value_or_fails_saying_what_did_not_happen():
    calls = []
    assert eventually(lambda: calls.append(1) or (len(calls) >= 3 and len(calls)), 5, interval=0) == 3
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"not within 0\.2 s: the moon rising"):
        eventually(lambda: False, 0.2, what="the moon rising")
    assert time.monotonic() - started >= 0.2


def test_a_recorder_wakes_its_waiter_and_fails_naming_what_it_holds():
    import threading

    recorder = Recorder()
    threading.Timer(0.05, recorder, args=("late",)).start()
    assert recorder.wait_for(lambda seen: "late" in seen, 10) and recorder == ["late"]
    with pytest.raises(AssertionError, match=r"a second item.*'late'"):
        recorder.wait_for(lambda seen: len(seen) > 1, 0.1, what="a second item")


def test_subscribe_returns_once_the_broker_will_deliver(mosquitto):
    """A message published the moment subscribe() returns reaches the subscriber (no sleep in between)."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    received = Recorder()
    clients = [mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5) for _ in range(2)]
    sub, pub = clients
    sub.on_message = lambda _c, _u, m: received(m.payload)
    for client in clients:
        client.connect("127.0.0.1", mosquitto.port)
        client.loop_start()
    try:
        for n in range(20):  # without the SUBACK, a message sent at once is lost now and then
            codes = subscribe(sub, f"plugin/{n}")
            assert [c.value for c in codes] == [1]  # granted QoS 1
            pub.publish(f"plugin/{n}", str(n).encode(), qos=1)
        received.wait_for(lambda seen: len(seen) == 20, 10, what="every message")
        assert received == [str(n).encode() for n in range(20)]
    finally:
        for client in clients:
            client.disconnect()
            client.loop_stop()


def test_the_documented_overlay_example_runs_in_an_outside_project(tmp_path):
    text = (ROOT / "docs" / "testing.md").read_text()
    block = re.search(r"```python\n(# test_overlay\.py\n.*?)```", text, re.S)
    assert block, "docs/testing.md has no test_overlay.py example"
    (tmp_path / "test_overlay.py").write_text(block.group(1))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_overlay.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


def test_camera_feed_renders_and_reads_the_table(camera_feed, game_record):
    from hardware_sims.table import TableSimulator
    from vision.table.observations import CameraObservation

    delivered = []
    sim = TableSimulator(game_record(seed=5), None, start_game=lambda _e: None)

    def stop_after_changes(observation) -> None:
        delivered.append(observation)
        if len(feed.stats.changes) >= 6:
            sim.stop()

    feed = camera_feed(stop_after_changes)
    sim.out = feed
    sim.run()
    changes = feed.stats.changes
    assert len(changes) >= 6 and all(c.exact for c in changes)  # every change read as the simulator showed it
    assert any(isinstance(o, CameraObservation) for o in delivered)  # what vision read reached the callback


def test_simulated_table_plays_through_the_camera_feed(simulated_table, camera_feed, game_record):
    """docs/testing.md's camera path, `simulated_table.play(feed=camera_feed(simulated_table.service.observe))`:
    the felt rendered and read by vision reaches the running service, which journals and publishes what the
    camera read. Stopped after the first changes of the felt (`until`): a frame takes about 0.2 s to render."""
    from tablesvc.engine.events import Discard, DoraRevealed
    from vision.table.observations import TileDiscarded

    events = simulated_table.messages("events")
    feed = camera_feed(simulated_table.service.observe)
    game = simulated_table.play(game_record(seed=5), feed=feed, until=lambda: len(feed.stats.changes) >= 6)
    changes = feed.stats.changes
    assert 6 <= len(changes) <= 7 and all(c.exact for c in changes)  # stopped there, each read as shown
    service = simulated_table.service
    played = [e for e in service.table.events if isinstance(e, Discard)]
    shown = [e for e in game.events if isinstance(e, Discard)][:len(played)]
    assert len(played) == sum(isinstance(c.source, TileDiscarded) for c in changes) >= 2
    assert [(e.seat, e.tile) for e in played] == [(e.seat, e.tile) for e in shown]
    dora = next(e for e in game.events if isinstance(e, DoraRevealed))
    assert [e for e in service.table.events if isinstance(e, DoraRevealed)] == [dora]
    assert simulated_table.wait_for(lambda: events and events[-1]["seq"] == service.journal.last_seq)
    assert [e["seq"] for e in events] == list(range(1, service.journal.last_seq + 1))
