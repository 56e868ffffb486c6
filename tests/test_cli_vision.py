"""`tablesvc vision markers` and `calibrate` on a real rendered frame."""

import cv2
import numpy as np

from hardware_sims.camera_render import CameraPose, Effects, TableView, render
from hardware_sims.tile_art import drawn_tile_set
from tablesvc.cli import main
from vision.calibration import Calibration, detect_markers
from vision.geometry import TableGeometry


def test_marker_sheet_has_the_four_markers(tmp_path, capsys):
    out = tmp_path / "markers.png"
    assert main(["vision", "markers", str(out), "--dpi", "150"]) == 0
    sheet = cv2.imread(str(out))
    assert sorted(detect_markers(sheet)) == [0, 1, 2, 3]
    assert "150 dpi" in capsys.readouterr().out


def test_calibrate_from_an_image_and_a_missing_marker(tmp_path, capsys):
    geometry = TableGeometry()
    frame, _ = render(TableView(), geometry=geometry, camera=CameraPose.oblique(30), tiles=drawn_tile_set(),
                      effects=Effects(), rng=np.random.default_rng(1))
    image = tmp_path / "frame.jpg"
    cv2.imwrite(str(image), frame)
    out = tmp_path / "cal.json"
    assert main(["vision", "calibrate", "--camera", str(image), "--out", str(out)]) == 0
    assert Calibration.load(out).error_mm < 2.0
    corners = detect_markers(frame)[2].astype(int)
    cv2.fillConvexPoly(frame, cv2.convexHull(corners), (40, 90, 40))  # a hand over marker 2
    cv2.imwrite(str(image), frame)
    assert main(["vision", "calibrate", "--camera", str(image), "--out", str(out)]) == 1
    assert "2" in capsys.readouterr().err


def test_check_reads_a_rendered_table(tmp_path, capsys):
    from hardware_sims.camera_render import Discard, SeatView

    view = TableView(seats=(SeatView(discards=(Discard("1m"), Discard("9p"), Discard("E", sideways=True))),
                            SeatView(), SeatView(discards=(Discard("5s"),)), SeatView()))
    frame, _ = render(view, geometry=TableGeometry(), camera=CameraPose.overhead(), tiles=drawn_tile_set(),
                      effects=Effects(), rng=np.random.default_rng(2))
    image = tmp_path / "table.png"
    cv2.imwrite(str(image), frame)
    assert main(["vision", "check", str(image)]) == 0
    out = capsys.readouterr().out
    assert "seat 0 (E)  pond: 1m 9p E*" in out
    assert "seat 2 (W)  pond: 5s" in out
    annotated = cv2.imread(str(tmp_path / "table-check.png"))
    assert annotated is not None and annotated.shape == frame.shape and not np.array_equal(annotated, frame)
