"""Setting up a real seat camera from the command line: the cards printed, the strip found from them in the
camera's own frame (or given by hand), the club's set enrolled from the camera, and ``tablesvc run --check``
reading what the configuration names. Frames are rendered, written as PNG and decoded by OpenCV."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from hardware_sims.hand_render import STRIP_W, HandEffects, HandView, SeatPose, render_cards, render_hand
from hardware_sims.seat_cams import enrollment_frames
from hardware_sims.tile_art import digits_tile_set, drawn_tile_set
from tablesvc.cli import main
from vision.naming.classifier import TileClassifier
from vision.seat.calibration import CARD_IDS, SeatCalibration
from vision.seat.reader import SeatReader
from vision.table.calibration import detect_markers

POSE = SeatPose(elevation_deg=50.0, distance_mm=380.0, offset_mm=-20.0, roll_deg=-2.0)
HAND = ("1m", "2m", "3m", "5pr", "6p", "7p", "9s", "9s", "E", "E", "C", "C", "F")


def test_the_cards_print_with_their_markers(tmp_path, capsys):
    out = tmp_path / "cards.png"
    assert main(["vision", "seat-cards", str(out), "--dpi", "200"]) == 0
    sheet = cv2.imread(str(out))
    assert sorted(detect_markers(sheet)) == sorted(CARD_IDS)
    assert "26 x 35 mm" in capsys.readouterr().out


@pytest.mark.parametrize(("elevation", "squeeze"), [(50.0, None), (25.0, None), (65.0, (640, 640))])
def test_the_strip_is_found_from_the_cards_in_the_cameras_frame(tmp_path, capsys, elevation, squeeze):
    pose = SeatPose(elevation_deg=elevation, distance_mm=420.0, offset_mm=25.0, roll_deg=2.0)
    frame = render_cards(pose, drawn_tile_set(), HandEffects(noise_sigma=3, blur_sigma=0.6, jpeg_quality=80,
                                                             squeeze_to=squeeze), np.random.default_rng(1))
    cv2.imwrite(str(tmp_path / "cards.png"), frame)
    assert main(["vision", "seat-calibrate", "--camera", str(tmp_path / "cards.png"),
                 "--out", str(tmp_path / "seat.json")]) == 0
    cal = SeatCalibration.load(tmp_path / "seat.json")
    size = squeeze or pose.image_size
    truth = pose.strip_quad() * (np.array(size) / pose.image_size)
    assert cal.image_size == size and np.abs(cal.quad_for(size) - truth).max() < 2.5, "within 2.5 px of the truth"
    assert "from the cards, marker error" in capsys.readouterr().out
    assert cv2.imread(str(tmp_path / "seat-check.png")).shape[:2] == frame.shape[:2]


def test_corners_given_by_hand_and_a_frame_without_cards(tmp_path, capsys):
    frame, _ = render_hand(HandView(HAND), drawn_tile_set(), POSE)
    cv2.imwrite(str(tmp_path / "row.png"), frame)
    assert main(["vision", "seat-calibrate", "--camera", str(tmp_path / "row.png"), "--out", str(tmp_path / "a.json")
                 ]) == 1
    assert "the left card (marker 10) and the right card (marker 11) not seen" in capsys.readouterr().err
    corners = ["30,200", "610,195", "612,262", "28,268"]
    assert main(["vision", "seat-calibrate", "--camera", str(tmp_path / "row.png"), "--out", str(tmp_path / "b.json"),
                 "--corners", *corners, "--annotated", str(tmp_path / "b.png")]) == 0
    assert SeatCalibration.load(tmp_path / "b.json").quad_px == ((30, 200), (610, 195), (612, 262), (28, 268))
    assert (tmp_path / "b.png").exists()
    assert main(["vision", "seat-calibrate", "--camera", str(tmp_path / "row.png"), "--out", str(tmp_path / "c.json"),
                 "--corners", "30,200", "610", "612,262", "28,268"]) == 1
    assert "four X,Y pixel pairs" in capsys.readouterr().err


def test_the_set_is_enrolled_from_the_seat_camera_and_the_configuration_checked(tmp_path, capsys):
    """Enrolled from the three rows in order; the same frames given with two rows swapped are refused, saying
    which frame looks like which row, and nothing is written."""
    tiles = drawn_tile_set()
    cv2.imwrite(str(tmp_path / "cards.png"), render_cards(POSE, tiles, HandEffects(noise_sigma=2)))
    assert main(["vision", "seat-calibrate", "--camera", str(tmp_path / "cards.png"),
                 "--out", str(tmp_path / "seat.json")]) == 0
    rows = []
    for n, (image, _) in enumerate(enrollment_frames(tiles, POSE, HandEffects(noise_sigma=3, jpeg_quality=85))):
        cv2.imwrite(str(tmp_path / f"row{n}.png"), image)
        rows += ["--camera", str(tmp_path / f"row{n}.png")]
    assert main(["vision", "seat-enroll", *rows, "--calibration", str(tmp_path / "seat.json"),
                 "--out", str(tmp_path / "seat.npz")]) == 0
    assert "37 kinds enrolled from 3 frame(s)" in capsys.readouterr().out
    reader = SeatReader(TileClassifier.from_files(tmp_path / "seat.npz"), SeatCalibration.load(tmp_path / "seat.json"))
    seen = reader.read(render_hand(HandView(HAND, "4p"), tiles, POSE, HandEffects(noise_sigma=3),
                                   np.random.default_rng(3))[0])
    assert [t.tile for t in seen.row if t.tile] == [t for t, s in zip(HAND, seen.row, strict=True) if s.tile]
    assert sum(t.tile is None for t in seen.row) <= 1 and seen.drawn is not None and seen.drawn.tile == "4p"
    assert main(["vision", "seat-enroll", *rows[4:6], "--calibration", str(tmp_path / "seat.json"),
                 "--out", str(tmp_path / "bad.npz")]) == 1  # the third row (11 tiles) given first
    capsys.readouterr()
    assert main(["vision", "seat-enroll", *rows[2:4], *rows[0:2], *rows[4:6], "--calibration",
                 str(tmp_path / "seat.json"), "--out", str(tmp_path / "swapped.npz")]) == 1  # rows 1 and 2 swapped
    err = capsys.readouterr().err
    assert "enrollment frame 1 is given as row 1 (1m..4p) but looks like row 2 (5p..8s)" in err
    assert "enrollment frame 2 is given as row 2 (5p..8s) but looks like row 1 (1m..4p)" in err
    assert "Nothing was enrolled" in err and not (tmp_path / "swapped.npz").exists()
    (tmp_path / "table.toml").write_text(
        '[table]\nsite = "club"\nid = "t1"\n[mqtt]\nurl = "mqtt://127.0.0.1"\n'
        '[[camera]]\nkind = "hand"\nseat = "S"\nsource = 0\ncalibration = "seat.json"\nmodel = "seat.npz"\n')
    capsys.readouterr()
    assert main(["run", "--config", str(tmp_path / "table.toml"), "--check"]) == 0
    assert "seat cameras S (seat-S, 37 kinds)" in capsys.readouterr().out
    (tmp_path / "seat.npz").write_bytes(b"not a model")
    assert main(["run", "--config", str(tmp_path / "table.toml"), "--check"]) == 2
    assert "seat camera seat-S: cannot read its tile set" in capsys.readouterr().err


def test_a_set_the_packaged_sets_cannot_name_enrolls_with_a_warning_per_row(tmp_path, capsys):
    SeatCalibration.of(POSE.strip_quad(), STRIP_W, POSE.image_size).save(tmp_path / "seat.json")
    rows = []
    frames = enrollment_frames(digits_tile_set(), POSE, HandEffects(noise_sigma=3, jpeg_quality=85))
    for n, (image, _) in enumerate(frames):
        cv2.imwrite(str(tmp_path / f"row{n}.png"), image)
        rows += ["--camera", str(tmp_path / f"row{n}.png")]
    assert main(["vision", "seat-enroll", *rows, "--calibration", str(tmp_path / "seat.json"),
                 "--out", str(tmp_path / "seat.npz")]) == 0
    out = capsys.readouterr()
    assert "37 kinds enrolled from 3 frame(s)" in out.out and (tmp_path / "seat.npz").exists()
    warned = [line for line in out.err.splitlines() if line.startswith("tablesvc vision seat-enroll: warning: ")]
    assert len(warned) == 3 and "enrollment frame 3: the packaged tile sets name only" in warned[2]
