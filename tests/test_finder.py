"""The tile finder (vision/photos/finder.py) on real photos it never trained on, on rendered tiles and on bad input;
and bench/photos.py's quick mode."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.photos.finder import FoundTile, TileFinder, box_iou, match_boxes

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
VALID = DATA / "tiles-photos-roboflow" / "images" / "valid"

# valid photos of different kinds: a top-down grid, a hand on a rack, a busy table (never trained on)
PHOTOS = [
    "IMG_2745_JPG.rf.308809a3baedbc5defd2b090b668b675.jpg",
    "hand_003_jpg.rf.4d77450281a0bb7760671a162d83bf7c.jpg",
    "hand_016_jpg.rf.146843be36fa4d2596f2d47aca3a1020.jpg",
    "IMG_20231107_231752_jpg.rf.a057bda738fc2a8e467e6cfe5880cb7e.jpg",
]


@pytest.fixture(scope="module")
def finder() -> TileFinder:
    return TileFinder.load()


def _labels(photo: Path, shape: tuple[int, ...]) -> np.ndarray:
    h, w = shape[:2]
    lab = photo.parents[2] / "labels" / photo.parent.name / (photo.stem + ".txt")
    rows = [[float(v) for v in line.split()[1:]] for line in lab.read_text().splitlines() if len(line.split()) == 5]
    b = np.array(rows).reshape(-1, 4)
    return np.stack([(b[:, 0] - b[:, 2] / 2) * w, (b[:, 1] - b[:, 3] / 2) * h,
                     (b[:, 0] + b[:, 2] / 2) * w, (b[:, 1] + b[:, 3] / 2) * h], axis=1)  # fmt: skip


@pytest.mark.data
def test_most_labelled_tiles_of_real_photos_are_found(finder):
    if not VALID.is_dir():
        pytest.skip(f"{VALID} not found")
    labelled = found = extra = 0
    for name in PHOTOS:
        img = cv2.imread(str(VALID / name), cv2.IMREAD_COLOR)
        assert img is not None, name
        labels = _labels(VALID / name, img.shape)
        tiles = finder.find(img)
        assert all(isinstance(t, FoundTile) and 0 < t.score <= 1 for t in tiles)
        assert all(0 <= t.box[0] < t.box[2] <= img.shape[1] and 0 <= t.box[1] < t.box[3] <= img.shape[0]
                   for t in tiles)  # fmt: skip
        m = match_boxes(labels, [t.box for t in tiles])
        labelled += len(labels)
        found += m.found
        extra += m.extra
        # the tiles of these photos are face up: the flag says so
        assert sum(t.face_up for t in tiles) >= 0.9 * len(tiles), name
    assert found >= 0.9 * labelled, f"found {found} of {labelled}"
    assert extra <= 0.1 * labelled, f"{extra} extra boxes for {labelled} tiles"


@pytest.mark.data
def test_a_photo_scaled_to_12_megapixels_gives_the_same_tiles_in_its_own_pixels(finder):
    if not VALID.is_dir():
        pytest.skip(f"{VALID} not found")
    img = cv2.imread(str(VALID / PHOTOS[1]), cv2.IMREAD_COLOR)
    big = cv2.resize(img, (4000, 3000), interpolation=cv2.INTER_LINEAR)
    labels = _labels(VALID / PHOTOS[1], big.shape)
    m = match_boxes(labels, [t.box for t in finder.find(big)])
    assert m.found >= 0.9 * len(labels)
    # the same photo as a 16-bit image, mirrored (a view with negative strides) and grey: still read
    wide = img.astype(np.uint16) * 257
    small = _labels(VALID / PHOTOS[1], img.shape)
    assert match_boxes(small, [t.box for t in finder.find(wide)]).found >= 0.9 * len(labels)
    mirrored = finder.find(img[:, ::-1])
    assert len(mirrored) >= 0.9 * len(labels)
    assert len(finder.find(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY))) >= 0.5 * len(labels)


@pytest.mark.data
@pytest.mark.parametrize("stretch", [(8.0, 1.0), (1.0, 6.0)])
def test_a_photo_scaled_out_of_its_proportions_is_stretched_back(finder, stretch):
    """A hand photo squeezed into another shape (as an app or a screenshot does): the tiles are found in the
    picture as given, where the network alone, seeing tiles many times too wide or tall, finds few."""
    if not VALID.is_dir():
        pytest.skip(f"{VALID} not found")
    img = cv2.imread(str(VALID / PHOTOS[2]), cv2.IMREAD_COLOR)
    fx, fy = stretch
    odd = cv2.resize(img, (round(img.shape[1] * fx), round(img.shape[0] * fy)), interpolation=cv2.INTER_LINEAR)
    labels = _labels(VALID / PHOTOS[2], odd.shape)
    plain = match_boxes(labels, [t.box for t in finder._find(odd, None)])  # the network's one pass
    m = match_boxes(labels, [t.box for t in finder.find(odd)])
    assert m.found >= 0.9 * len(labels) > plain.found, (m.found, plain.found, len(labels))
    assert m.extra <= 0.1 * len(labels)
    assert all(0 <= t.box[0] < t.box[2] <= odd.shape[1] and 0 <= t.box[1] < t.box[3] <= odd.shape[0]
               for t in finder.find(odd))  # fmt: skip


@pytest.mark.data
def test_a_row_cropped_from_a_hand_photo_is_read_once(finder, mocker):
    """A player's crop of their hand (a strip over six times as long as high): its tiles, touching, cover the
    strip, so it is read as it is, in one pass of the network, not squeezed at every factor."""
    if not VALID.is_dir():
        pytest.skip(f"{VALID} not found")
    path = next(VALID.glob("hand_012_*"))
    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    labels = _labels(path, img.shape)
    top, bottom = int(labels[:, 1].min()) - 5, int(labels[:, 3].max()) + 5
    row = img[max(0, top):bottom]
    assert row.shape[1] > 6 * row.shape[0]
    passes = mocker.spy(finder, "_find")
    m = match_boxes(labels - [0, max(0, top), 0, max(0, top)], [t.box for t in finder.find(row)])
    assert passes.call_count == 1
    assert m.found == len(labels) and m.extra == 0, (m.found, m.extra, len(labels))


@pytest.mark.data
def test_a_photo_the_publisher_squeezed_into_a_square_is_read(finder):
    """A real valid photo: a column of sideways tiles squeezed into 640x640 (each tile ~12 times too wide)."""
    if not VALID.is_dir():
        pytest.skip(f"{VALID} not found")
    name = "393854945_852296709760039_4771389946093548377_n_jpg.rf.1b9b0ff4e4a26ff0c26d0bb3fc5e8c45.jpg"
    path = next(VALID.glob(name.split("_")[0] + "_*"))
    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    labels = _labels(path, img.shape)
    m = match_boxes(labels, [t.box for t in finder.find(img)])
    assert m.found >= len(labels) - 1 and m.extra <= 1, (m.found, m.extra, len(labels))


def test_backs_and_faces_are_told_apart_on_a_rendered_table(finder):
    """A dealt wall lies face down, the ponds and a hand face up: the flag follows."""
    from hardware_sims.camera_render import CameraPose, Discard, MeldView, SeatView, TableView, render

    seats = tuple(SeatView(tuple(Discard(t) for t in ("1m", "5p", "9s", "E", "C", "3s")),
                           (MeldView(("2p", "2p", "2p", "2p"), called=None, face_down=(0, 3)),), ())
                  for _ in range(4))  # fmt: skip
    frame, truth = render(TableView(seats, dora=("7m",)), camera=CameraPose.overhead())
    tiles = [t for t in truth.tiles if not t.occluded]
    found = finder.find(frame, input_size=1280)
    m = match_boxes([[*t.corners_px.min(0), *t.corners_px.max(0)] for t in tiles], [f.box for f in found])
    assert m.found >= 0.95 * len(tiles), f"{m.found} of {len(tiles)}"
    backs = [fi for li, fi in m.pairs if not tiles[li].face_up]
    faces = [fi for li, fi in m.pairs if tiles[li].face_up]
    assert backs and faces
    assert sum(not found[i].face_up for i in backs) >= 0.75 * len(backs)
    assert sum(found[i].face_up for i in faces) >= 0.95 * len(faces)


@pytest.mark.parametrize("image", [
    np.zeros((0, 0, 3), np.uint8),  # empty
    np.zeros((5, 5, 3), np.uint8),  # too small to hold a tile
    np.full((480, 640, 3), (40, 110, 30), np.uint8),  # plain felt
    np.zeros((480, 640), np.uint8),  # grey, black
    None,
])  # fmt: skip
def test_an_image_without_tiles_gives_no_tiles(finder, image):
    assert finder.find(image) == []


def test_odd_arrays_are_read_or_refused_clearly(finder):
    rng = np.random.default_rng(1)
    noise = rng.integers(0, 256, (300, 400, 3), dtype=np.uint8)
    assert len(finder.find(noise)) <= 3  # static is no table of tiles
    as_float = noise.astype(np.float32) / 255.0  # a float image in 0..1
    assert isinstance(finder.find(as_float), list)
    bgra = cv2.cvtColor(noise, cv2.COLOR_BGR2BGRA)
    assert isinstance(finder.find(bgra), list)
    assert finder.find(np.zeros((50, 50, 7), np.uint8)) == []  # no image has seven channels
    with pytest.raises(TypeError, match="image array"):
        finder.find("photo.jpg")


def test_a_missing_model_says_how_to_get_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="reinstall tablesvc"):
        TileFinder(tmp_path / "none.onnx")


def test_matching_uses_each_box_once_and_needs_iou_one_half():
    labels = [[0, 0, 10, 10], [10, 0, 20, 10]]
    found = [[0, 0, 10, 10], [1, 0, 11, 10], [14, 0, 24, 10]]  # a second box on the first tile; one too far off
    m = match_boxes(labels, found)
    assert m.pairs == ((0, 0),) and m.extra == 2
    assert box_iou([[0, 0, 10, 10]], [[5, 0, 15, 10]])[0, 0] == pytest.approx(1 / 3)


@pytest.mark.data
def test_photos_bench_quick_mode():
    if not VALID.is_dir():
        pytest.skip(f"{VALID} not found")
    out = subprocess.run([sys.executable, "bench/photos.py", "--quick"], cwd=ROOT, capture_output=True, text=True,
                         timeout=600, check=True).stdout  # fmt: skip
    # the first 10 photos (the full run: docs/vision.md): all of them, then those not stretched by the publisher
    # the finder's own rows (not its rows at other score thresholds, nor the finder with the reader)
    rows = [ln for ln in out.splitlines() if re.match(r"ours: finder\s+[\d.]+ %", ln)]
    every, plain = (float(re.findall(r"([\d.]+) %", ln)[0]) for ln in rows)
    assert plain >= 85.0 and every >= 60.0, out
    read = [ln for ln in out.splitlines() if ln.startswith("ours: finder + reader")]
    assert len(read) == 2 and all(float(re.findall(r"([\d.]+) %", ln)[2]) <= 2.0 for ln in read), out  # wrong
    assert "mahjong-detector" in out  # measured beside, or a line saying why not
    rendered = re.search(r"face up found (\d+)/(\d+)", out)
    assert rendered and int(rendered.group(1)) >= 0.95 * int(rendered.group(2)), out
