"""`tablesvc vision markers`, `calibrate`, `enroll` and `check` on real rendered frames."""

import cv2
import numpy as np

from hardware_sims.camera_render import CameraPose, Effects, TableView, render
from hardware_sims.tile_art import drawn_tile_set
from tablesvc.cli import main
from vision.table.calibration import Calibration, detect_markers
from vision.table.geometry import TableGeometry


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


def test_enroll_a_tile_set_from_the_camera_then_read_a_game_with_it(tmp_path, capsys):
    """A set the project did not draw (FluffyStuff), laid out as hands, enrolled from one camera frame."""
    import pytest

    from hardware_sims.camera_render import SeatView
    from hardware_sims.tile_art import load_tile_set
    from tests.conftest import DATA
    from tests.test_detection import busy_view
    from vision.naming.classifier import TileClassifier
    from vision.naming.enrollment import ENROLL_LAYOUT
    from vision.table.pipeline import FramePipeline

    if not (DATA / "tiles-fluffystuff").is_dir():
        pytest.skip("../shared/data/tiles-fluffystuff not found")
    tiles = load_tile_set(DATA / "tiles-fluffystuff")
    camera = CameraPose.oblique(25.0)
    rows = [SeatView(hand=ENROLL_LAYOUT.get(seat, ())) for seat in range(4)]
    layout = TableView(seats=tuple(rows))  # type: ignore[arg-type]
    frame, _ = render(layout, camera=camera, tiles=tiles, effects=Effects(noise_sigma=3.0, gradient=0.2,
                      jpeg_quality=90), rng=np.random.default_rng(30))  # fmt: skip
    image, model = tmp_path / "layout.png", tmp_path / "club.npz"
    cv2.imwrite(str(image), frame)
    assert main(["vision", "enroll", "--camera", str(image), "--out", str(model)]) == 0
    assert "37 kinds enrolled" in capsys.readouterr().out

    clf = TileClassifier.load(model)
    game, truth = render(busy_view(), camera=camera, tiles=tiles, effects=Effects.realistic(),
                         rng=np.random.default_rng(31))  # fmt: skip
    readings = FramePipeline(_calibrate(game), None, clf,
                             confirm_frames=1).process(game)  # fmt: skip
    names = {(t.zone, t.seat, t.index): t.tile for t in truth.tiles if t.face_up}
    got = {(d.zone, d.seat, d.index): d.tile for d in readings.tiles if d.face_up}
    wrong = [(k, v, got.get(k)) for k, v in names.items() if got.get(k) not in (v, None)]
    right = sum(got.get(k) == v for k, v in names.items())
    assert wrong == []
    assert right >= 0.97 * len(names)

    # a tile missing from a row: refused, naming the row
    rows[1] = SeatView(hand=ENROLL_LAYOUT[1][:-1])
    frame, _ = render(TableView(seats=tuple(rows)), camera=camera, tiles=tiles, rng=np.random.default_rng(32))  # type: ignore[arg-type]
    cv2.imwrite(str(image), frame)
    assert main(["vision", "enroll", "--camera", str(image), "--out", str(model)]) == 1
    assert "seat 1's row shows 15 tiles, the layout has 16" in capsys.readouterr().err


def _calibrate(frame):
    from vision.table.calibration import calibrate

    return calibrate(frame)


def test_enroll_from_several_frames_and_add_more_later(tmp_path, capsys):
    """Two frames in one command, a third added with --add: every kind gets an image per frame, and the
    per-kind report says how well each stands apart."""
    import pytest

    from hardware_sims.camera_render import SeatView
    from hardware_sims.tile_art import load_tile_set
    from tests.conftest import DATA
    from vision.naming.classifier import TileClassifier
    from vision.naming.enrollment import ENROLL_LAYOUT

    if not (DATA / "tiles-fluffystuff").is_dir():
        pytest.skip("../shared/data/tiles-fluffystuff not found")
    tiles = load_tile_set(DATA / "tiles-fluffystuff")
    rows = TableView(seats=tuple(SeatView(hand=ENROLL_LAYOUT.get(seat, ())) for seat in range(4)))  # type: ignore[arg-type]
    images = []
    for i, effects in enumerate((Effects(noise_sigma=3.0, gradient=0.2), Effects(noise_sigma=4.0, gradient=-0.3,
                                 glare=60.0), Effects(noise_sigma=3.0, blur_sigma=0.8))):  # fmt: skip
        frame, _ = render(rows, camera=CameraPose.oblique(20.0), tiles=tiles, effects=effects,
                          rng=np.random.default_rng(50 + i))
        images.append(tmp_path / f"layout{i}.png")
        cv2.imwrite(str(images[-1]), frame)
    lda = tmp_path / "club-lda.npz"  # the LDA takes several frames too (no per-kind report)
    assert main(["vision", "enroll", "--camera", str(images[0]), "--camera", str(images[1]), "--method", "lda",
                 "--out", str(lda)]) == 0  # fmt: skip
    assert "37 kinds enrolled from 2 frame(s)" in capsys.readouterr().out
    assert type(TileClassifier.load(lda)) is TileClassifier
    model = tmp_path / "club.npz"  # the default: the learnt embedding
    assert main(["vision", "enroll", "--camera", str(images[0]), "--camera", str(images[1]), "--out", str(model)]) == 0
    out = capsys.readouterr().out
    assert "37 kinds enrolled from 2 frame(s)" in out
    assert "kind  images  lead" in out and ("every kind stands apart" in out or "need more frames" in out)
    report = {ln.split()[0]: ln.split() for ln in out.splitlines() if ln.split() and ln.split()[0] in ENROLL_LAYOUT[0]}
    assert report["1m"][1] == "2" and len(report) == 18
    assert main(["vision", "enroll", "--camera", str(images[2]), "--out", str(model), "--add"]) == 0
    out = capsys.readouterr().out
    assert "37 kinds enrolled from 1 frame(s)" in out
    clf = TileClassifier.load(model)
    assert all(r["images"] == 3 for r in clf.report.values())
