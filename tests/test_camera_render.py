"""Camera renderer: the ground truth must describe the decoded pixels (read back with OpenCV)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from hardware_sims.camera_render import CameraPose, Discard, Effects, MeldView, SeatView, TableView, render
from hardware_sims.tile_art import FACE_SIZE, TILE_NAMES, drawn_tile_set, load_tile_set
from tests.conftest import DATA
from vision.table.calibration import detect_markers

FLUFFY = DATA / "tiles-fluffystuff"


def _jpeg(frame: np.ndarray, quality: int = 90) -> np.ndarray:
    ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def _all_faces_view() -> TableView:
    """All 37 faces spread over the four ponds, with a sideways tile in each, plus melds and dora."""
    names = list(TILE_NAMES)
    seats = []
    for k in range(4):
        chunk = names[k * 10 : k * 10 + 10]
        seats.append(SeatView(tuple(Discard(t, sideways=(i == 3)) for i, t in enumerate(chunk)),
                              melds=(MeldView(("2p", "3p", "4p"), called=1),)))  # fmt: skip
    return TableView(tuple(seats), dora=("7s",))  # type: ignore[arg-type]


def _crop(frame: np.ndarray, corners_px: np.ndarray, size: tuple[int, int] = (26 * 2, 35 * 2)) -> np.ndarray:
    """The tile's face, upright, cut out of the frame through its ground-truth corners."""
    w, h = size
    m = cv2.getPerspectiveTransform(corners_px.astype(np.float32),
                                    np.float32([[0, 0], [w, 0], [w, h], [0, h]]))  # fmt: skip
    return cv2.warpPerspective(frame, m, size, flags=cv2.INTER_LINEAR)


def _nearest(crop: np.ndarray, faces: dict[str, np.ndarray]) -> str:
    size = (crop.shape[1], crop.shape[0])
    scores = {}
    for t, f in faces.items():
        ref = cv2.resize(f, size, interpolation=cv2.INTER_AREA)
        scores[t] = float(cv2.matchTemplate(crop, ref, cv2.TM_CCOEFF_NORMED)[0, 0])
    return max(scores, key=scores.__getitem__)


@pytest.mark.parametrize(
    ("camera", "effects"),
    [
        (CameraPose.overhead(), Effects()),
        (CameraPose.oblique(35.0), Effects(noise_sigma=3.0, blur_sigma=0.6, gradient=0.2)),
    ],
    ids=["overhead", "oblique"],
)
def test_ground_truth_corners_cut_out_the_right_face(camera: CameraPose, effects: Effects) -> None:
    frame, gt = render(_all_faces_view(), camera=camera, effects=effects, rng=np.random.default_rng(7))
    frame = _jpeg(frame)
    faces = drawn_tile_set().faces
    face_up = [t for t in gt.tiles if t.face_up]
    assert len(face_up) == 37 + 4 * 3 + 1
    read = [(t, _nearest(_crop(frame, t.corners_px), faces)) for t in face_up]
    wrong = [(t.tile, t.seat, t.zone, got) for t, got in read if got != t.tile]
    assert wrong == []
    # a wrong corner order (the face upside down) must not match: the check above can fail
    t = next(t for t in face_up if t.tile == "3m")
    assert _nearest(_crop(frame, t.corners_px[[2, 3, 0, 1]]), faces) != "3m"


def test_orientation_and_sideways_in_each_seat_overhead() -> None:
    _, gt = render(_all_faces_view())
    for t in gt.tiles:
        if t.zone == "pond":
            assert t.sideways == (t.index == 3)
            assert t.orientation == (90 * t.seat + (90 if t.sideways else 0)) % 360
        if t.zone == "meld":
            assert t.sideways == (t.index == 1)
    assert {t.orientation for t in gt.tiles if t.zone == "pond" and not t.sideways} == {0, 90, 180, 270}


def test_oblique_orientation_is_relative_to_the_camera() -> None:
    # a camera behind seat 1 sees seat 1's tiles upright
    _, gt = render(_all_faces_view(), camera=CameraPose.oblique(30.0, azimuth_deg=90.0))
    seat1 = [t for t in gt.tiles if t.zone == "pond" and t.seat == 1 and not t.sideways]
    assert seat1 and {t.orientation for t in seat1} == {0}
    assert {t.orientation for t in gt.tiles if t.zone == "pond" and t.seat == 0 and not t.sideways} == {270}


def test_markers_are_drawn_where_the_truth_says() -> None:
    for camera in (CameraPose.overhead(), CameraPose.oblique(45.0, azimuth_deg=20.0)):
        frame, gt = render(_all_faces_view(), camera=camera, effects=Effects.realistic(), rng=np.random.default_rng(1))
        found = detect_markers(_jpeg(frame))
        assert sorted(found) == [0, 1, 2, 3]
        for i, c in found.items():
            assert np.abs(c - gt.markers_px[i]).max() < 1.5


def test_face_down_tiles_walls_and_dora() -> None:
    view = TableView(dora=("5mr", "E"), dora_seat=2, dora_stack=6, walls=True)
    frame, gt = render(view)
    walls = [t for t in gt.tiles if t.zone == "wall"]
    dora = [t for t in gt.tiles if t.zone == "dora"]
    assert len(walls) == 4 * 17 - 2 and all(t.tile is None for t in walls)
    assert [(t.tile, t.seat, t.index) for t in dora] == [("5mr", 2, 0), ("E", 2, 1)]
    # the back colour really is under a wall tile's centre, and a red five's face under the indicator
    back = drawn_tile_set().back
    c = walls[0].corners_px.mean(axis=0).round().astype(int)
    assert np.abs(frame[c[1], c[0]].astype(int) - back[FACE_SIZE[1] // 2, FACE_SIZE[0] // 2]).max() < 40
    assert _nearest(_crop(frame, dora[0].corners_px), drawn_tile_set().faces) == "5mr"


def test_effects_are_seeded_and_the_hand_occludes() -> None:
    view = _all_faces_view()
    eff = Effects(**{**Effects.realistic().__dict__, "hand": True, "hand_at_mm": (0.0, 130.0)})
    a, gta = render(view, effects=eff, rng=np.random.default_rng(5))
    b, _ = render(view, effects=eff, rng=np.random.default_rng(5))
    c, _ = render(view, effects=eff, rng=np.random.default_rng(6))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    occluded = [t for t in gta.tiles if t.occluded]
    under_palm = min(gta.tiles, key=lambda t: np.hypot(t.rect.cx - 0.0, t.rect.cy - 130.0))
    assert under_palm.occluded and len(occluded) < len(gta.tiles) / 2
    clean, _ = render(view)
    t = under_palm
    cx, cy = t.corners_px.mean(axis=0).round().astype(int)
    assert np.abs(a[cy, cx].astype(int) - (120, 150, 205)).max() < 60  # skin, not the tile
    assert np.abs(clean[cy, cx].astype(int) - a[cy, cx].astype(int)).max() > 20


def test_a_placement_seed_keeps_each_tile_where_it_was_put_down() -> None:
    """Jitter from the frame's rng moves every tile in every frame; from ``placement_seed`` a tile keeps its
    careless placement from frame to frame (noise stays per frame), and a new seed (a new hand) moves it."""

    def rects(effects: Effects, rng_seed: int, view: TableView) -> dict[tuple, tuple]:
        _, gt = render(view, effects=effects, rng=np.random.default_rng(rng_seed))
        return {(t.zone, t.seat, t.index): (t.rect.cx, t.rect.cy, t.rect.angle) for t in gt.tiles}

    view = _all_faces_view()
    shaky = Effects(noise_sigma=3.0, jitter_mm=1.5, jitter_deg=3.0)
    assert rects(shaky, 1, view) != rects(shaky, 2, view)
    still = Effects(noise_sigma=3.0, jitter_mm=1.5, jitter_deg=3.0, placement_seed=7)
    first = rects(still, 1, view)
    assert first == rects(still, 2, view)
    exact = rects(Effects(), 1, view)
    offsets = [np.hypot(first[k][0] - exact[k][0], first[k][1] - exact[k][1]) for k in exact]
    assert max(offsets) <= 1.5 * np.sqrt(2) + 1e-9 and np.mean(offsets) > 0.3
    # a tile added to a pond does not move the tiles already there
    seats = list(view.seats)
    seats[0] = SeatView((*seats[0].discards, Discard("9p")), seats[0].melds, seats[0].hand)
    grown = rects(still, 3, TableView(tuple(seats), dora=view.dora))  # type: ignore[arg-type]
    assert all(grown[k] == v for k, v in first.items())
    assert rects(Effects(noise_sigma=3.0, jitter_mm=1.5, jitter_deg=3.0, placement_seed=8), 1, view) != first


def test_noise_and_blur_change_the_image_as_asked() -> None:
    view = TableView()
    clean, _ = render(view)
    noisy, _ = render(view, effects=Effects(noise_sigma=6.0), rng=np.random.default_rng(2))
    diff = noisy.astype(float) - clean.astype(float)
    assert 4.5 < diff[400:700, 800:1100].std() < 7.5  # on the felt, away from saturation
    blurred, _ = render(view, effects=Effects(blur_sigma=3.0))
    edges = lambda im: cv2.Laplacian(cv2.cvtColor(im, cv2.COLOR_BGR2GRAY), cv2.CV_64F).var()  # noqa: E731
    assert edges(blurred) < 0.5 * edges(clean)


def test_drawn_faces_are_distinct_and_deterministic() -> None:
    faces = drawn_tile_set().faces
    assert list(faces) == list(TILE_NAMES) and len(faces) == 37
    small = {t: cv2.resize(f, (26, 35), interpolation=cv2.INTER_AREA) for t, f in faces.items()}
    for t, f in small.items():
        others = {k: v for k, v in small.items() if k != t}
        best = max(float(cv2.matchTemplate(f, v, cv2.TM_CCOEFF_NORMED)[0, 0]) for v in others.values())
        assert best < 0.97, t
    from hardware_sims.tile_art import draw_face

    assert np.array_equal(draw_face("5pr"), faces["5pr"])


@pytest.mark.data
def test_fluffystuff_set_loads_and_renders() -> None:
    if not FLUFFY.is_dir():
        pytest.skip(f"tile set not found at {FLUFFY}")
    ts = load_tile_set(FLUFFY)
    assert sorted(ts.faces) == sorted(TILE_NAMES)
    assert all(f.shape == (FACE_SIZE[1], FACE_SIZE[0], 3) for f in ts.faces.values())
    frame, gt = render(_all_faces_view(), tiles=ts)
    frame = _jpeg(frame)
    wrong = [t.tile for t in gt.tiles if t.face_up and _nearest(_crop(frame, t.corners_px), ts.faces) != t.tile]
    assert wrong == []


def test_tile_set_directory_by_notation(tmp_path) -> None:
    for t, f in drawn_tile_set().faces.items():
        cv2.imwrite(str(tmp_path / f"{t}.png"), f)
    ts = load_tile_set(tmp_path)
    assert np.abs(ts.faces["C"].astype(int) - drawn_tile_set().faces["C"]).max() <= 1
    (tmp_path / "9s.png").unlink()
    with pytest.raises(ValueError, match="9s"):
        load_tile_set(tmp_path)
