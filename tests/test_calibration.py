"""Calibration from the four ArUco markers, on rendered and JPEG-decoded frames."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from hardware_sims.camera_render import CameraPose, Discard, Effects, SeatView, TableView, render
from hardware_sims.tile_art import TILE_NAMES
from vision.table.calibration import Calibration, CalibrationError, calibrate, detect_markers, marker_sheet, moved
from vision.table.geometry import TableGeometry

G = TableGeometry()
VIEW = TableView(tuple(SeatView(tuple(Discard(t, sideways=i == 2) for i, t in enumerate(TILE_NAMES[k * 9 : k * 9 + 9])))
                       for k in range(4)), dora=("C",), walls=True)  # type: ignore[arg-type]  # fmt: skip


def _frame(camera: CameraPose, seed: int = 0, effects: Effects | None = None):
    frame, gt = render(VIEW, camera=camera, effects=effects or Effects.realistic(), rng=np.random.default_rng(seed))
    ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 85])
    assert ok
    return cv2.imdecode(buf, cv2.IMREAD_COLOR), gt


@pytest.mark.parametrize(
    "camera",
    [CameraPose.overhead(), CameraPose.oblique(35.0), CameraPose.oblique(50.0, azimuth_deg=30.0, roll_deg=4.0)],
    ids=["overhead", "oblique35", "oblique50-turned"],
)
def test_calibration_maps_tiles_to_their_table_position(camera: CameraPose) -> None:
    frame, gt = _frame(camera)
    cal = calibrate(frame, G)
    assert cal.error_mm < 1.0
    assert cal.image_size == (1920, 1080)
    worst = max(np.linalg.norm(cal.image_to_table(t.corners_px) - t.rect.corners(), axis=1).max() for t in gt.tiles)
    assert worst < 2.0
    back = cal.table_to_image(gt.tiles[0].rect.corners())
    assert np.abs(back - gt.tiles[0].corners_px).max() < 2.0


def test_nudged_camera_is_noticed_and_a_still_one_is_not() -> None:
    pose = CameraPose.oblique(30.0)
    cal = calibrate(_frame(pose, seed=1)[0])
    assert not moved(cal, _frame(pose, seed=2)[0], tolerance_mm=3.0)  # same pose, new noise and light
    nudges = [
        CameraPose.oblique(30.0, azimuth_deg=1.5),
        CameraPose.oblique(32.0),
        CameraPose.oblique(30.0, target_mm=(8.0, 0.0), focal_px=None),
    ]
    for nudged in nudges:
        check = moved(cal, _frame(nudged, seed=3)[0], tolerance_mm=3.0)
        assert check and check.error_mm is not None and check.error_mm > 3.0 and check.seen == (0, 1, 2, 3)


def test_a_covered_marker_is_named() -> None:
    frame, gt = _frame(CameraPose.overhead())
    c = gt.markers_px[2]
    x0, y0 = c.min(axis=0).astype(int) - 5
    x1, y1 = c.max(axis=0).astype(int) + 5
    frame[y0:y1, x0:x1] = (120, 150, 205)  # something lies on marker 2
    with pytest.raises(CalibrationError, match=r"not found: 2 ") as err:
        calibrate(frame)
    assert err.value.missing == (2,)
    # a hand over one marker is not a camera move
    cal = calibrate(_frame(CameraPose.overhead())[0])
    check = moved(cal, frame)
    assert not check and check.seen == (0, 1, 3)


def test_no_markers_at_all() -> None:
    blank = np.full((1080, 1920, 3), 90, np.uint8)
    with pytest.raises(CalibrationError) as err:
        calibrate(blank)
    assert err.value.missing == (0, 1, 2, 3)
    cal = calibrate(_frame(CameraPose.overhead())[0])
    check = moved(cal, blank)
    assert not check.moved and check.error_mm is None


def test_save_load_round_trip(tmp_path: Path) -> None:
    cal = calibrate(_frame(CameraPose.oblique(40.0))[0])
    p = tmp_path / "cal.json"
    cal.save(p)
    back = Calibration.load(p)
    assert np.allclose(back.homography, cal.homography, rtol=0, atol=1e-12)
    assert back.error_mm == cal.error_mm and back.image_size == cal.image_size
    assert sorted(back.markers_mm) == [0, 1, 2, 3] and np.allclose(back.markers_mm[1], G.marker_corners(1))


@pytest.mark.parametrize("text", ["garbage", "{}", '{"version": 1}', "[1, 2]", '{"version": 1, "homography": 3}'])
def test_a_file_that_is_no_calibration_is_named(tmp_path: Path, text: str) -> None:
    path = tmp_path / "camera.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"camera\.json: not a calibration written by 'tablesvc vision calibrate'"):
        Calibration.load(path)


def test_rectified_view_puts_a_tile_where_the_geometry_says() -> None:
    frame, _ = _frame(CameraPose.oblique(40.0), effects=Effects())
    cal = calibrate(frame)
    top = cal.rectify(frame, px_per_mm=2.0, extent_mm=440.0)
    assert top.shape == (1760, 1760, 3)
    # the marker squares of the rectified view are where the geometry puts them, at 2 px/mm
    found = detect_markers(top)
    for i, c in found.items():
        assert np.abs(c / 2.0 - 440.0 - G.marker_corners(i)).max() < 1.5
    assert sorted(found) == [0, 1, 2, 3]


def test_marker_sheet_prints_true_size() -> None:
    dpi = 200.0
    sheet = marker_sheet(G, dpi)
    found = detect_markers(sheet)
    assert sorted(found) == [0, 1, 2, 3]
    side_px = G.marker_size / 25.4 * dpi
    for c in found.values():
        assert np.linalg.norm(c[1] - c[0]) == pytest.approx(side_px, abs=2.0)
