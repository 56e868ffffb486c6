"""EmbeddingClassifier: the packaged ONNX network in cv2.dnn, enrollment as prototypes, the calibrated
rejection (flowers, seasons, backs, noise, other sets), persistence, and enrollment from several frames.

Thresholds on the shared data were measured with ``python bench/vision.py`` (docs/vision.md,
sections f-h) and set below the measured figures with a margin.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from bench.vision_real import camera_crop, read_all
from hardware_sims.camera_render import CameraPose, Effects, SeatView, TableView, render
from hardware_sims.tile_art import drawn_tile_set, load_tile_set, random_back
from vision.naming.classifier import TILES, TileClassifier
from vision.naming.embedding import MODEL_PATH, EmbeddingClassifier, TileEmbedder
from vision.naming.enrollment import ENROLL_LAYOUT, EnrollmentError, enroll_from_frames, separability

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FLUFFY = DATA / "tiles-fluffystuff"
PHOTOS = DATA / "tiles-photos-camerash"


def _need(path: Path) -> None:
    if not path.is_dir():
        pytest.skip(f"{path} not found (../shared/data)")


@pytest.fixture(scope="module")
def fluffy_faces() -> dict[str, np.ndarray]:
    _need(FLUFFY)
    return load_tile_set(FLUFFY).faces


@pytest.fixture(scope="module")
def fluffy_emb(fluffy_faces: dict[str, np.ndarray]) -> EmbeddingClassifier:
    clf = EmbeddingClassifier()
    clf.enroll(fluffy_faces)
    return clf


def test_the_packaged_model_runs_in_opencv_dnn() -> None:
    assert MODEL_PATH.is_file() and MODEL_PATH.stat().st_size < 5_000_000
    net = cv2.dnn.readNetFromONNX(str(MODEL_PATH))
    assert not net.empty()
    emb = TileEmbedder()([np.full((52, 39, 3), 200, np.uint8), drawn_tile_set().faces["1m"]])
    assert emb.shape == (2, 128)
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-4)
    assert float(emb[0] @ emb[1]) < 0.99  # a blank crop and a tile face are not the same point


def test_artwork_enrolled_set_read_in_four_orientations(fluffy_emb: EmbeddingClassifier,
                                                        fluffy_faces: dict[str, np.ndarray]) -> None:
    """FluffyStuff enrolled from its artwork, camera-like crops 64 and 40 px tall turned 0/90/180/270."""
    rng = np.random.default_rng(7)
    rots = [None, cv2.ROTATE_90_CLOCKWISE, cv2.ROTATE_180, cv2.ROTATE_90_COUNTERCLOCKWISE]
    samples = []
    for i, t in enumerate(TILES):
        crop = camera_crop(fluffy_faces[t], 64 if i % 2 else 40, rng)
        r = rots[i % 4]
        samples.append((t, crop if r is None else cv2.rotate(crop, r)))
    tally = read_all(fluffy_emb, samples, any_orientation=True)
    assert tally.wrong <= 1, tally.confusions
    assert tally.right >= 30, tally.line()


def test_a_colouring_never_seen_enrolled_from_its_artwork(fluffy_faces: dict[str, np.ndarray]) -> None:
    """FluffyStuff inverted to a dark face (training never inverted FluffyStuff; bench/vision.py (g)
    measures 99.7-99.8 % on 1,480 crops), enrolled from that artwork, read in any orientation: no wrong
    answer (a network that reads only a third of these right fails here)."""
    from bench.vision_real import invert

    art = {t: invert(f) for t, f in fluffy_faces.items()}
    clf = EmbeddingClassifier()
    clf.enroll(art)
    rng = np.random.default_rng(11)
    rots = [None, cv2.ROTATE_90_CLOCKWISE, cv2.ROTATE_180, cv2.ROTATE_90_COUNTERCLOCKWISE]
    samples = []
    for i, t in enumerate(TILES * 2):
        crop = camera_crop(art[t], 64 if i % 2 else 40, rng)
        r = rots[i % 4]
        samples.append((t, crop if r is None else cv2.rotate(crop, r)))
    tally = read_all(clf, samples, any_orientation=True)
    assert tally.wrong == 0, tally.confusions
    assert tally.right >= len(samples) - 2, tally.line()


def test_a_crop_reads_the_same_either_way_up_and_the_turn_is_found(fluffy_emb: EmbeddingClassifier,
                                                                   fluffy_faces: dict[str, np.ndarray]) -> None:
    """Both ways up are averaged (half_turn), so a crop and its half turn score alike; the turn reported by
    classify_any_orientation is still the one that makes the tile upright (a tile read upside down by the
    LDA's callers, e.g. the far player's, must say so)."""
    rng = np.random.default_rng(5)
    for t in ("1m", "7p", "E", "C", "W"):  # faces unlike their half turn (a 9s, a 1p may report either)
        crop = camera_crop(fluffy_faces[t], 52, rng)
        a, b = fluffy_emb.scores(crop), fluffy_emb.scores(cv2.rotate(crop, cv2.ROTATE_180))
        assert a[0] == b[0] == t and abs(a[1] - b[1]) < 1e-5 and abs(a[2] - b[2]) < 1e-5
        for turn, code in ((0, None), (90, cv2.ROTATE_90_COUNTERCLOCKWISE), (180, cv2.ROTATE_180),
                           (270, cv2.ROTATE_90_CLOCKWISE)):  # fmt: skip
            lying = crop if code is None else cv2.rotate(crop, code)  # turned by -turn: `turn` makes it upright
            tile, _, found = fluffy_emb.classify_any_orientation(lying)
            assert (tile, found) == (t, turn), (t, turn)


def test_thresholds_are_calibrated_per_enrolled_set(fluffy_emb: EmbeddingClassifier) -> None:
    drawn = EmbeddingClassifier()
    drawn.enroll(drawn_tile_set().faces)
    for clf in (drawn, fluffy_emb):
        assert 0.0 < clf.min_margin < 0.5
        assert 0.0 < clf.min_similarity < 1.0
        assert set(clf.report) == set(TILES)
    assert (drawn.min_similarity, drawn.min_margin) != (fluffy_emb.min_similarity, fluffy_emb.min_margin)


def test_backs_noise_and_felt_are_unknown(fluffy_emb: EmbeddingClassifier) -> None:
    rng = np.random.default_rng(3)
    others = [load_tile_set(FLUFFY).back, drawn_tile_set().back, np.full((52, 39, 3), (60, 110, 35), np.uint8),
              rng.integers(0, 255, (52, 39, 3), dtype=np.uint8)]
    others += [camera_crop(o, 52, rng) for o in others[:2] for _ in range(4)]
    # backs of other colours, plain or printed (a seed the packaged not-tile prototypes were not made with)
    others += [camera_crop(random_back(random.Random(s)), 52, rng) for s in range(100, 112)]
    answers = [fluffy_emb.classify(o)[0] for o in others]
    assert answers == [None] * len(others)


@pytest.fixture(scope="module")
def camerash() -> list:
    _need(PHOTOS)
    from vision.photos.data import camerash_photos

    return camerash_photos(half=1)  # the half never trained on


def test_flowers_and_seasons_are_unknown(camerash: list) -> None:
    """Enrolled from three photos per kind of the measuring half: its flowers and seasons stay unknown. The
    packaged "not a tile" prototypes (flowers of the *training* photos only) do it: without them some of
    these flowers lie nearer to a kind than that kind's lead allows, and are read as it."""
    from bench.vision_real import looks, pick_enrollment

    enroll = pick_enrollment(camerash, 3, 5)
    flowers = [(None, c.image) for c in camerash if c.tile is None]
    clf = EmbeddingClassifier()
    # the enrolled photos' own looks made as read_all makes every photo's (once a run: the other tests of this
    # file read these photos too); enrolled with them it holds what it embeds itself (bit for bit, tested below)
    views, _ = looks([img for imgs in enroll.values() for img in imgs], (0, 180))
    clf.enroll(enroll, looks=views.transpose(1, 0, 2))
    tally = read_all(clf, flowers)
    assert tally.others >= 30
    assert tally.others_rejected == tally.others, tally.line()
    bare = replace(clf, not_tiles=False)  # the same enrolled copies, calibrated and read without those prototypes
    bare._refit()
    assert read_all(bare, flowers).others_rejected < tally.others


def test_other_sets_enrolled_from_artwork_are_never_guessed_wrong_often(camerash: list,
                                                                       fluffy_emb: EmbeddingClassifier) -> None:
    """Real photos of sets never enrolled, the model enrolled from FluffyStuff art: few wrong answers."""
    tally = read_all(fluffy_emb, [(c.tile, c.image) for c in camerash])
    assert tally.wrong <= 0.02 * tally.known, tally.line()
    assert tally.others_rejected >= 0.9 * tally.others, tally.line()


def test_save_load_gives_identical_answers(fluffy_emb: EmbeddingClassifier, fluffy_faces, tmp_path: Path) -> None:
    path = tmp_path / "set.npz"
    fluffy_emb.save(path)
    back = TileClassifier.load(path)  # the file says which method enrolled it
    assert isinstance(back, EmbeddingClassifier)
    assert back.tiles == fluffy_emb.tiles
    rng = np.random.default_rng(1)
    crops = [camera_crop(fluffy_faces[t], 52, rng) for t in TILES[::3]]
    for c in crops:
        a, b = fluffy_emb.scores(c), back.scores(c)
        assert a[0] == b[0] and abs(a[1] - b[1]) < 2e-3
    assert abs(back.min_margin - fluffy_emb.min_margin) < 2e-3
    lda = TileClassifier(augment_per_image=2)  # an LDA model file as any: its method's features and labels
    lda.enroll({"1m": fluffy_faces["1m"]})  # one kind: no metric fitted (a file keeps none; its load refits)
    lda.save(tmp_path / "lda.npz")
    with pytest.raises(ValueError, match="LDA"):
        EmbeddingClassifier.load(tmp_path / "lda.npz")


def test_a_set_enrolled_with_another_network_is_refused(fluffy_emb: EmbeddingClassifier, tmp_path: Path) -> None:
    """Prototypes made by an earlier network mean nothing to the installed one: load says so and says what to do,
    rather than reading every tile against them."""
    fluffy_emb.save(tmp_path / "set.npz")
    with np.load(tmp_path / "set.npz") as z:
        saved = {k: z[k] for k in z.files}
    assert str(saved["network"]) == fluffy_emb.embedder.fingerprint
    np.savez_compressed(tmp_path / "other.npz", **{**saved, "network": np.array("0123456789abcdef")})
    with pytest.raises(ValueError, match=r"other\.npz: .*network 0123456789abcdef.*enroll the set again"):
        TileClassifier.load(tmp_path / "other.npz")
    np.savez_compressed(tmp_path / "old.npz", **{k: v for k, v in saved.items() if k != "network"})
    with pytest.raises(ValueError, match="an earlier version of the tile embedding"):
        TileClassifier.load(tmp_path / "old.npz")


def test_nothing_enrolled_and_one_kind_are_errors(fluffy_faces) -> None:
    clf = EmbeddingClassifier(augment_per_image=1)
    with pytest.raises(RuntimeError, match="nothing enrolled"):
        clf.classify(fluffy_faces["1m"])
    clf.enroll({"1m": fluffy_faces["1m"]})
    with pytest.raises(RuntimeError, match="two kinds"):
        clf.classify(fluffy_faces["1m"])
    with pytest.raises(ValueError, match="unknown tile name"):
        clf.enroll({"1x": fluffy_faces["1m"]})


def test_looks_made_once_serve_every_classifier_of_the_network_bit_for_bit() -> None:
    """A crop's looks (as it lies, turned half round) read by any classifier of the network give the embeddings
    it makes itself, and an enrollment given its images' looks holds what it would have embedded."""
    faces = drawn_tile_set().faces
    rng = np.random.default_rng(3)
    crops = {t: [camera_crop(faces[t], 70, rng) for _ in range(2)] for t in ("1m", "2m", "E", "5pr")}
    flat = [c for cs in crops.values() for c in cs]
    looks = EmbeddingClassifier().looks_of(flat)
    assert looks.shape == (2, len(flat), 128)
    for half_turn in (True, False):
        made, given = (EmbeddingClassifier(half_turn=half_turn, augment_per_image=2) for _ in range(2))
        made.enroll(crops)
        given.enroll(crops, looks=looks)
        assert np.array_equal(given._emb, made._emb) and given._labels == made._labels
        assert (given.min_similarity, given.min_margin) == (made.min_similarity, made.min_margin)
        assert np.array_equal(made.embed_looks(looks), made.embed_many(flat))
        assert made.same_network(given) and not made.same_network(TileClassifier())
    with pytest.raises(ValueError, match="looks of 7 images given for 8"):
        EmbeddingClassifier(augment_per_image=1).enroll(crops, looks=looks[:, :7])
    with pytest.raises(ValueError, match="turned looks"):
        EmbeddingClassifier().enroll(crops, looks=looks[:1])


# ------------------------------------------------------------------ enrollment from several frames
def _layout_frame(tiles, camera: CameraPose, effects: Effects, seed: int, rows=None) -> np.ndarray:
    rows = rows or [SeatView(hand=ENROLL_LAYOUT.get(seat, ())) for seat in range(4)]
    frame, _ = render(TableView(seats=tuple(rows)), camera=camera, tiles=tiles, effects=effects,
                      rng=np.random.default_rng(seed))  # type: ignore[arg-type]
    return frame


def test_enroll_from_several_frames_adds_prototypes_and_reads_a_game() -> None:
    _need(FLUFFY)
    from tests.test_detection import busy_view
    from vision.table.calibration import calibrate
    from vision.table.pipeline import FramePipeline

    tiles = load_tile_set(FLUFFY)
    camera = CameraPose.oblique(25.0)
    frames = [_layout_frame(tiles, camera, Effects(noise_sigma=3.0, gradient=0.2, jpeg_quality=90), 40),
              _layout_frame(tiles, camera, Effects(noise_sigma=4.0, gradient=-0.3, glare=50.0, jpeg_quality=85), 41)]
    calibration = calibrate(frames[0])
    clf = enroll_from_frames(frames, calibration)
    assert isinstance(clf, EmbeddingClassifier)
    assert clf.tiles == TILES
    report = separability(clf)
    assert [r.tile for r in report] == TILES and all(r.images == 2 for r in report)
    assert sum(1 for r in report if r.needs_more) <= 6, [r for r in report if r.needs_more]

    game, truth = render(busy_view(), camera=camera, tiles=tiles, effects=Effects.realistic(),
                         rng=np.random.default_rng(31))  # fmt: skip
    readings = FramePipeline(calibration, None, clf, confirm_frames=1).process(game)
    names = {(t.zone, t.seat, t.index): t.tile for t in truth.tiles if t.face_up}
    got = {(d.zone, d.seat, d.index): d.tile for d in readings.tiles if d.face_up}
    wrong = [(k, v, got.get(k)) for k, v in names.items() if got.get(k) not in (v, None)]
    assert wrong == []
    assert sum(got.get(k) == v for k, v in names.items()) >= 0.95 * len(names)

    # a frame short of a tile: refused naming that frame, nothing enrolled
    rows = [SeatView(hand=ENROLL_LAYOUT.get(seat, ())) for seat in range(4)]
    rows[1] = SeatView(hand=ENROLL_LAYOUT[1][:-1])
    bad = _layout_frame(tiles, camera, Effects(), 42, rows)
    before = len(clf._labels)
    with pytest.raises(EnrollmentError, match="frame 2: seat 1's row shows 15 tiles"):
        enroll_from_frames([frames[0], bad], calibration, classifier=clf)
    assert len(clf._labels) == before
