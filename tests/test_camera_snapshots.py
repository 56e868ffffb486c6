"""The camera's annotated snapshot: a real Mosquitto, a video of a rendered table, OpenCV decoding what arrives."""

from __future__ import annotations

import base64
import itertools
from datetime import datetime

import cv2
import numpy as np
import pytest

from drivers.observations import HandStarted
from hardware_sims.camera_render import CameraPose, Discard, Effects, SeatView, TableView, render
from hardware_sims.tile_art import drawn_tile_set
from tablesvc.config import parse_config
from tablesvc.service import TableService
from tablesvc.service.snapshots import Snapshots
from tests.test_service_mqtt import Subscriber, send_command
from vision.table.calibration import calibrate
from vision.table.geometry import TableGeometry

INTERVAL = 1.5


def _decode(payload: dict) -> np.ndarray:
    image = cv2.imdecode(np.frombuffer(base64.b64decode(payload["jpeg"]), np.uint8), cv2.IMREAD_COLOR)
    assert image is not None, "the snapshot is no JPEG OpenCV can read"
    return image


def _red_in_banner(image: np.ndarray) -> int:
    """Pixels of the banner's red text (the refusal's reason): BGR with red high, blue and green low."""
    banner = image[:70].astype(int)
    return int(((banner[..., 2] > 180) & (banner[..., 1] < 90) & (banner[..., 0] < 90)).sum())


@pytest.fixture(scope="module")
def table_video(tmp_path_factory):
    """A rendered table: empty, then a dora indicator, then seat 2 discarding out of turn (refused)."""
    tmp = tmp_path_factory.mktemp("snapshots")
    tiles = drawn_tile_set()
    (tmp / "tiles").mkdir()
    for name, face in tiles.faces.items():
        cv2.imwrite(str(tmp / "tiles" / f"{name}.png"), face)
    geometry, rng = TableGeometry(), np.random.default_rng(7)
    out_of_turn = (SeatView(), SeatView(), SeatView(discards=(Discard("9p"),)), SeatView())
    views = [TableView()] * 20 + [TableView(dora=("3p",))] * 15 + [TableView(dora=("3p",), seats=out_of_turn)] * 25
    frames = [render(v, geometry=geometry, camera=CameraPose.overhead(), tiles=tiles, effects=Effects(), rng=rng)[0]
              for v in views]
    calibrate(frames[0], geometry).save(tmp / "cal.json")
    video = tmp / "table.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 8, (1920, 1080))
    for f in frames:
        writer.write(f)
    writer.release()
    return tmp, frames


def test_snapshots_arrive_rate_limited_decode_and_show_a_refused_event(mosquitto, tmp_path, table_video):
    tmp, _ = table_video
    config = parse_config(f"""
[table]
site = "club"
id = "t1"
data_dir = "{tmp_path / 'data'}"
[mqtt]
url = "{mosquitto.url}"
[camera]
name = "overhead"
source = "{tmp / 'table.avi'}"
calibration = "{tmp / 'cal.json'}"
tiles = "{tmp / 'tiles'}"
snapshot_interval = {INTERVAL}
""")
    service = TableService(config)
    sub = Subscriber(mosquitto.port)
    service.start()
    try:
        assert service.link.wait_ready(15)  # a command sent before the service subscribed is never seen
        send_command(sub, {"command": "start_game", "transaction": "go"})
        assert sub.wait_for(lambda: sub.of("cmd/reply"))
        service.observe(HandStarted(device="T1", seq=1, timestamp=0.0))
        snaps = lambda: sub.of("camera/overhead/snapshot")  # noqa: E731
        assert sub.wait_for(lambda: any(s["reason"] for s in snaps()), 90), "no snapshot of the refused discard"
        # the video goes on after the refusal: the periodic pictures go on too
        assert sub.wait_for(lambda: sum(not s["reason"] for s in snaps()) >= 3, 30)
    finally:
        sub.close()
        service.stop()
    errors = [e["error"] for e in sub.of("errors")]
    refused = [s for s in snaps() if s["reason"]]
    assert len(refused) == 1 and refused[0]["reason"] == errors[0]  # at once, with the engine's own reason
    assert refused[0]["reason"].startswith("seat 2 cannot discard")
    periodic = [s for s in snaps() if not s["reason"]]
    assert len(periodic) >= 2
    # rate-limited: a periodic picture never closer than the interval to the one before (a refusal goes out at
    # once, and the next periodic one waits the interval from it)
    def when(s: dict) -> float:  # ISO 8601 UTC, as every topic writes times
        return datetime.fromisoformat(s["ts"].replace("Z", "+00:00")).timestamp()

    ordered = sorted(snaps(), key=when)
    stamps = [when(s) for s in ordered]
    assert all(when(b) - when(a) >= INTERVAL * 0.9 for a, b in itertools.pairwise(ordered)
               if not b["reason"]), stamps
    seconds = stamps[-1] - stamps[0]
    assert len(stamps) <= seconds / INTERVAL + 2
    picture = _decode(refused[0])
    assert picture.shape == (refused[0]["height"], refused[0]["width"], 3)
    assert 1024 in (picture.shape[1], picture.shape[0] - 68)  # the table's longer side, under a 2-line banner
    assert refused[0]["tiles"] == 2 and refused[0]["unknown"] == 0  # the dora indicator and the 9p, both read
    assert _red_in_banner(picture) > 200 and _red_in_banner(_decode(periodic[0])) < 20
    # the table cut out of the frame (its felt), boxes and labels drawn over the tiles (green: read)
    table = picture[68 + 100:-100, 100:-100]
    felt = np.median(table.reshape(-1, 3), axis=0)
    assert felt[1] > felt[0] + 30 and felt[1] > felt[2] + 30
    b, g, r = (table[..., i].astype(int) for i in range(3))
    assert ((g > 160) & (g > b + 60) & (g > r + 60)).sum() > 50
    # retained: a dashboard opened later gets the latest picture
    late = Subscriber(mosquitto.port)
    try:
        assert late.wait_for(lambda: late.of("camera/overhead/snapshot"), 10)
        last = late.of("camera/overhead/snapshot")[-1]
        assert _decode(last).shape == (last["height"], last["width"], 3)
    finally:
        late.close()


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_snapshots_keep_their_interval_and_a_refusal_goes_out_at_once(table_video):
    tmp, frames = table_video
    from vision.table.calibration import Calibration

    sent: list[dict] = []
    clock = _Clock()
    snapshots = Snapshots("cam", Calibration.load(tmp / "cal.json"), None, sent.append, interval=5.0, clock=clock)
    snapshots.refused("nothing seen yet")  # no frame: nothing to show
    assert sent == []
    for step in range(30):  # 30 frames over 9.7 s: due at 0 s and 5 s only
        clock.now = 100.0 + step / 3
        snapshots.frame(frames[0], None)
    assert len(sent) == 2 and [s["reason"] for s in sent] == [None, None]
    snapshots.refused("seat 2 discarded out of turn")
    assert len(sent) == 3 and sent[-1]["reason"] == "seat 2 discarded out of turn"
    assert _red_in_banner(_decode(sent[-1])) > 200
    with pytest.raises(ValueError, match="interval"):
        Snapshots("cam", Calibration.load(tmp / "cal.json"), None, sent.append, interval=0)


def test_an_annotated_snapshot_of_a_busy_table_for_the_docs(table_video):
    """docs/img/camera-snapshot.png: a table in play read by the pipeline, the red dragon left out of the
    enrolled set so that it shows as an unknown tile, and a refusal's reason in the banner."""
    from pathlib import Path

    from hardware_sims.camera_render import MeldView
    from vision.naming.classifier import TileClassifier
    from vision.table.annotation import annotate
    from vision.table.calibration import Calibration
    from vision.table.pipeline import FramePipeline

    tmp, _ = table_video
    tiles = drawn_tile_set()
    classifier = TileClassifier(augment_per_image=10)
    classifier.enroll({k: v for k, v in tiles.faces.items() if k != "C"})
    ponds = (("9m", "1p", "S", "7s", "2m", "C", "4p"), ("N", "9s", "1m", "6p", "3s"),
             ("W", "8m", "2p", "5s", "E", "7p"), ("F", "1s", "9p", "4m", "6s", "3m"))
    seats = tuple(SeatView(discards=tuple(Discard(t, sideways=(s == 1 and i == 3)) for i, t in enumerate(p)))
                  for s, p in enumerate(ponds))
    seats = (seats[0], seats[1], SeatView(discards=seats[2].discards,
                                          melds=(MeldView(("5p", "5p", "5p"), called=0),)), seats[3])
    frame = render(TableView(seats=seats, dora=("3p",)), geometry=TableGeometry(), camera=CameraPose.overhead(),
                   tiles=tiles, effects=Effects(blur_sigma=0.5), rng=np.random.default_rng(3))[0]
    calibration = Calibration.load(tmp / "cal.json")
    readings = FramePipeline(calibration, None, classifier, confirm_frames=1).process(frame)
    unknown = [t for t in readings.tiles if t.face_up and t.tile is None]
    assert len(unknown) == 1 and unknown[0].zone == "pond" and unknown[0].seat == 0  # the red dragon
    picture = annotate(frame, readings.tiles, calibration, title="camera overhead  2026-11-24 00:20:00 UTC",
                       refused="seat 2 cannot discard now: seat 0 is to draw")
    assert _red_in_banner(picture) > 200
    out = Path(__file__).resolve().parent.parent / "docs" / "img" / "camera-snapshot.png"
    out.parent.mkdir(exist_ok=True)
    cv2.imwrite(str(out), picture)
