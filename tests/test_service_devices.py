"""A game through real serial devices (pseudo-terminals) while the line is noisy and a cable is pulled."""

from __future__ import annotations

import threading

from hardware_sims.generator import generate_game
from hardware_sims.table import DeviceOutputs, TableSimulator
from tablesvc.config import parse_config
from tablesvc.engine.events import Discard
from tablesvc.service import TableService
from tests.device_support import table_toml, two_devices, two_links_config
from tests.test_service_mqtt import BASE, Subscriber, send_command


def test_noise_and_an_unplugged_panel_are_survived(mosquitto, tmp_path, pty_device):
    # the panel repeats an event for 6 s: longer than the driver's longest wait between reopening a pulled
    # cable's port (5 s), so an event pressed just after the cable is back reaches the reopened link, however
    # long the backoff has grown while the cable was out
    table_dev, panel_dev = devices = two_devices(pty_device, panel_resends=12)
    config = two_links_config(mosquitto, tmp_path, devices, table="heartbeat_timeout = 1.0",
                              panel="heartbeat_timeout = 1.0")
    service = TableService(config)
    service.start()
    sub = Subscriber(mosquitto.port)
    try:
        assert service.link.wait_connected(15)
        record = generate_game(38)  # a short whole game: 9 hands, 825 events
        outputs = DeviceOutputs(table_dev, panel_dev, service.observe)
        discards = 0
        unplugged = threading.Event()

        class Faulty(DeviceOutputs):
            """The same signals, with a noisy line and one pulled cable along the way."""

            def camera(self, observation):
                nonlocal discards
                super().camera(observation)
                if type(observation).__name__ == "TileDiscarded":
                    discards += 1
                    if discards % 25 == 0:
                        table_dev.noise(b"\x00\xffgarbage\r\n$T1,9,DICE,1*00\n")
                        panel_dev.bad_checksum_next()
                    if discards == 60:  # pull the panel's cable for longer than the heartbeat timeout
                        panel_dev.unplug()
                        assert sub.wait_for(lambda: any(not d["connected"] for d in sub.of("devices/panel")), 10)
                        panel_dev.replug()
                        unplugged.set()

        faulty = Faulty(table_dev, panel_dev, service.observe)

        def start(event):
            send_command(sub, {"command": "start_game", "players": list(event.players), "transaction": "go"})
            assert sub.wait_for(lambda: sub.of("cmd/reply"))

        TableSimulator(record, faulty, start_game=start).run()
        assert service.wait_idle(30)
        assert unplugged.is_set() and outputs.unacknowledged == 0 and faulty.unacknowledged == 0
        # the game is exactly the one played: every discard once, the same results
        played = [e for e in service.table.events if isinstance(e, Discard)]
        assert [(e.seat, e.tile) for e in played] == [(e.seat, e.tile) for e in record.events
                                                      if isinstance(e, Discard)]
        assert service.table.state.final is not None
        assert service.table.state.final.scores == record.final_scores
        # health told the story: bad frames counted, the panel went down and came back
        assert sub.wait_for(lambda: sub.of("devices/panel") and sub.of("devices/panel")[-1]["connected"], 10)
        panel = sub.of("devices/panel")
        assert any(not d["connected"] for d in panel) and panel[-1]["reconnects"] >= 1
        bad = service.drivers[0].health().bad_total + service.drivers[1].health().bad_total
        assert bad >= 2
        assert f"{BASE}/devices/table" in {t for t, _, _ in sub.messages}
    finally:
        sub.close()
        service.stop()


def test_camera_health_is_published(mosquitto, tmp_path):
    import cv2
    import numpy as np

    video = tmp_path / "table.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 25, (64, 48))
    for i in range(50):
        writer.write(np.full((48, 64, 3), i * 5 % 255, np.uint8))
    writer.release()
    config = parse_config(table_toml(mosquitto, tmp_path) + f"""[camera]
name = "overhead"
source = "{video}"
""")
    service = TableService(config)
    service.start()
    sub = Subscriber(mosquitto.port)
    try:
        assert sub.wait_for(lambda: any(d.get("frames", 0) > 0 for d in sub.of("devices/overhead")), 20)
        health = sub.of("devices/overhead")[-1]
        assert health["source"].endswith("table.avi") and "last_frame_ago" in health
    finally:
        sub.close()
        service.stop()
    # a clean stop leaves no device retained as connected: a late dashboard sees it stopped, counters kept
    later = Subscriber(mosquitto.port)
    try:
        assert later.wait_for(lambda: later.of("devices/overhead"), 10)
        last = later.of("devices/overhead")[-1]
        assert (last["connected"], last["state"]) == (False, "service stopped")
        assert last["frames"] > 0
    finally:
        later.close()


def test_a_camera_over_the_table_feeds_the_game(mosquitto, tmp_path):
    """A video of a (rendered) table, calibrated and with the tile set enrolled: the service reads
    the dora indicator and a discard from the frames alone."""
    import cv2
    import numpy as np

    from drivers.observations import HandStarted
    from hardware_sims.camera_render import CameraPose, Effects, SeatView, TableView, render
    from hardware_sims.camera_render import Discard as SeenDiscard
    from hardware_sims.tile_art import drawn_tile_set
    from tablesvc.engine.events import Discard as DiscardEvent
    from tablesvc.engine.events import DoraRevealed
    from vision.table.calibration import calibrate
    from vision.table.geometry import TableGeometry

    tiles = drawn_tile_set()
    (tmp_path / "tiles").mkdir()
    for name, face in tiles.faces.items():
        cv2.imwrite(str(tmp_path / "tiles" / f"{name}.png"), face)
    geometry, rng = TableGeometry(), np.random.default_rng(4)
    views = [TableView()] * 20 + [TableView(dora=("3p",))] * 10 + [
        TableView(dora=("3p",), seats=(SeatView(discards=(SeenDiscard("9p"),)), SeatView(), SeatView(),
                                       SeatView()))] * 12
    frames = [render(v, geometry=geometry, camera=CameraPose.overhead(), tiles=tiles, effects=Effects(), rng=rng)[0]
              for v in views]
    calibrate(frames[0], geometry).save(tmp_path / "cal.json")
    video = tmp_path / "table.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (1920, 1080))
    for f in frames:
        writer.write(f)
    writer.release()
    config = parse_config(table_toml(mosquitto, tmp_path) + f"""[camera]
name = "overhead"
source = "{video}"
calibration = "{tmp_path / 'cal.json'}"
tiles = "{tmp_path / 'tiles'}"
""")
    service = TableService(config)
    sub = Subscriber(mosquitto.port)
    service.start()
    try:
        assert service.link.wait_ready(15)  # a command sent before the service subscribed is never seen
        send_command(sub, {"command": "start_game", "transaction": "go"})
        assert sub.wait_for(lambda: sub.of("cmd/reply"))
        service.observe(HandStarted(device="T1", seq=1, timestamp=0.0))
        assert sub.wait_for(lambda: any(isinstance(e, DiscardEvent) for e in service.table.events), 60)
        seen = [e for e in service.table.events if isinstance(e, DoraRevealed | DiscardEvent)]
        assert seen[0] == DoraRevealed(tile=seen[0].tile) and seen[0].tile.mjai == "3p"
        assert seen[1].seat == 0 and seen[1].tile.mjai == "9p" and not seen[1].riichi
        assert service.reader is not None and service.reader.frames >= 20 and service.reader.errors == 0
    finally:
        sub.close()
        service.stop()
