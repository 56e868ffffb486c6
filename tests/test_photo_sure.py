""""Sure" means sure: on real photos never trained on, a name the reader shows sure is right, every other face-up
tile carries its best guesses (its shown name first), and boxes the finder puts on a photo with no tile (real
clutter photos, scikit-image's, never trained on) are dropped rather than named (the tile-or-not verifier)."""

from __future__ import annotations

import sys
from pathlib import Path

import cv2
import pytest

from vision.photos.reader import SURE_GATES, LabelBoxFinder, PhotoReader, load_finder, load_tiles

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "tiles-photos-roboflow"
needs_photos = pytest.mark.skipif(not DATA.is_dir(), reason=f"needs the shared photos in {DATA}")


@pytest.fixture(scope="module")
def tiles():
    return load_tiles()


def labelled(path: Path) -> list[str | None]:
    """The photo's labels, as checked (``ROBOFLOW_ERRATA``: a label plainly wrong, the tile seen in its photo)."""
    from vision.photos.data import ROBOFLOW_ERRATA

    names = [None if n == "other" else n for n in (DATA / "classes.txt").read_text().split()]
    fix = {line: seen for photo, line, _, seen in ROBOFLOW_ERRATA if photo == path.name}
    label = DATA / "labels" / "valid" / (path.stem + ".txt")
    return [fix.get(k, names[int(line.split()[0])]) for k, line in enumerate(label.read_text().splitlines())
            if line.strip()]


@needs_photos
@pytest.mark.parametrize("stem", ["hand_001", "hand_009", "hand_016", "IMG_2768"])
def test_a_name_shown_sure_is_right_and_the_rest_carry_their_guesses(tiles, stem):
    path = next((DATA / "images" / "valid").glob(f"{stem}_*"))
    image = cv2.imread(str(path))
    finder = LabelBoxFinder.for_photo(path)
    truth = dict(zip((b.box for b in finder.find(image)), labelled(path), strict=True))
    reading = PhotoReader(finder, tiles).read(image, str(path))
    sure = [t for t in reading.tiles if t.sure]
    assert sure, "no tile shown sure"
    for t in sure:
        assert t.tile is not None and t.face_up and t.tile.rstrip("r") == truth[t.box], (t, truth[t.box])
        assert t.confidence >= SURE_GATES[0]
    for t in reading.tiles:
        if t.face_up:
            assert 1 <= len(t.guesses) <= 3 and t.guesses == tuple(sorted(t.guesses, key=lambda g: -g[1]))
            if t.tile is not None:
                assert t.guesses[0][0] == t.tile
    flowers = [t for t in reading.tiles if truth[t.box] is None]
    assert not any(t.sure for t in flowers)


@needs_photos
def test_stricter_gates_show_fewer_tiles_sure_never_more(tiles):
    path = next((DATA / "images" / "valid").glob("IMG_2768_*"))
    image = cv2.imread(str(path))
    counts = []
    for gates in ((0.5, 0.0), SURE_GATES, (0.95, 0.3)):
        reader = PhotoReader(LabelBoxFinder.for_photo(path), tiles, sure_gates=gates)
        counts.append(sum(t.sure for t in reader.read(image).tiles))
    assert counts[0] >= counts[1] >= counts[2] and counts[0] > counts[2], counts


def test_the_clutter_photos_never_trained_on_keep_at_most_one_box_in_twenty(tiles):
    """Every view of the clutter photos kept apart from training (``bench/hands.py``'s clutter line): the finder
    puts boxes on them; the reader keeps at most one per twenty photos, and says how many it dropped."""
    pytest.importorskip("skimage", reason="scikit-image (the test extra) gives the clutter photos")
    sys.path.insert(0, str(ROOT / "training"))
    from clutter import clutter_photos, clutter_views

    finder = load_finder()
    reader = PhotoReader(finder, tiles)
    assert reader.verifier is not None, "the packaged tile-or-not verifier (vision/models/tile_or_not.npz)"
    views = clutter_views(clutter_photos("measure"))
    given = kept = 0
    for k, (name, image) in enumerate(views):
        reading = reader.read(image, name)
        boxes = reading.dropped + len(reading.tiles)
        if k < 4:  # what it dropped is counted
            assert boxes == sum(f.score >= reader.min_score for f in finder.find(image))
        given += boxes
        kept += len(reading.tiles)
    assert given >= 100 and kept <= len(views) // 20, (given, kept, len(views))


def test_the_verifier_drops_the_coins_the_finder_is_confident_of(tiles):
    """A photo of coins: the finder's boxes are as strong as a photo of tiles' (its median score passes the finder's
    own rule), the verifier drops them all."""
    pytest.importorskip("skimage", reason="scikit-image (the test extra) gives the clutter photos")
    sys.path.insert(0, str(ROOT / "training"))
    from clutter import clutter_photos

    image = dict(clutter_photos("measure"))["coins"]
    by_rule = PhotoReader(load_finder(), tiles, verifier=None).read(image, "coins")
    assert len(by_rule.tiles) >= 10, "the finder's score alone keeps the coins"
    by_verifier = PhotoReader(load_finder(), tiles).read(image, "coins")
    assert by_verifier.tiles == [] and by_verifier.dropped == len(by_rule.tiles) + by_rule.dropped


def test_the_verifier_file_round_trips(tmp_path):
    import numpy as np

    from vision.photos.verifier import TileVerifier

    v = TileVerifier.load()
    v.save(tmp_path / "v.npz")
    again = TileVerifier.load(tmp_path / "v.npz")
    rows = np.random.default_rng(1).normal(size=(5, len(v.mean))).astype(np.float32)
    assert np.allclose(v.chance(rows), again.chance(rows)) and again.photo == pytest.approx(v.photo)


@needs_photos
def test_a_photo_of_tiles_keeps_its_tiles(tiles):
    path = next((DATA / "images" / "valid").glob("hand_009_*"))
    reading = PhotoReader(load_finder(), tiles).read(cv2.imread(str(path)), str(path))
    assert reading.dropped == 0 and len(reading.tiles) >= 14
