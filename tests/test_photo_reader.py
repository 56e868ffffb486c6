"""The photo reader on real shared photos (their labelled boxes standing in for the finder), its layout, the
hand a photo makes, and every bad photo answered in one line."""

from __future__ import annotations

import struct
from pathlib import Path

import cv2
import numpy as np
import pytest

from tablesvc.photo_hand import LaidTile, NotAHand, hand_from_groups
from tablesvc.scorecard import ScoreRequest, score
from vision.photos.input import MAX_BYTES, BadPhoto, decode_photo, load_photo, read_header
from vision.photos.layout import reading_order, row_angle
from vision.photos.reader import FinderMissing, LabelBox, LabelBoxFinder, PhotoReader, annotate, load_finder, load_tiles

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tiles-photos-roboflow"
needs_photos = pytest.mark.skipif(not DATA.is_dir(), reason=f"needs the shared photos in {DATA}")


def photo(stem: str) -> Path:
    return next((DATA / "images" / "valid").glob(f"{stem}_*"))


def labels(path: Path) -> list[str | None]:
    names = [None if n == "other" else n for n in (DATA / "classes.txt").read_text().split()]
    text = (DATA / "labels" / "valid" / (path.stem + ".txt")).read_text()
    return [names[int(line.split()[0])] for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def tiles():
    return load_tiles()


# ------------------------------------------------------------------ bad photos


def test_what_is_not_a_photo_gets_one_line(tmp_path):
    text = tmp_path / "hand.jpg"
    text.write_text("1m2m3m: not a photo at all\n")
    with pytest.raises(BadPhoto) as err:
        load_photo(text)
    assert str(err.value).startswith(str(text)) and "not a photo" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(BadPhoto, match="no such file"):
        load_photo(tmp_path / "missing.jpg")
    with pytest.raises(BadPhoto, match="not a file"):
        load_photo(tmp_path)
    with pytest.raises(BadPhoto, match="empty"):
        decode_photo(b"")


def test_a_photo_over_20_mb_is_refused_unread(tmp_path, mocker):
    big = tmp_path / "big.jpg"
    with big.open("wb") as f:  # a sparse file: its size is all that is looked at
        f.truncate(MAX_BYTES + 1)
    read = mocker.spy(Path, "read_bytes")
    with pytest.raises(BadPhoto, match=r"20\.0 MB: photos up to 20 MB"):
        load_photo(big)
    assert read.call_count == 0


def _png_header(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\0\0\0\0"


def test_a_decompression_bomb_is_refused_from_its_header(mocker):
    decode = mocker.spy(cv2, "imdecode")
    with pytest.raises(BadPhoto, match=r"8000x6000 \(48 megapixels\).*up to 40 megapixels"):
        decode_photo(_png_header(8000, 6000) + b"\0" * 64)
    assert decode.call_count == 0
    jpg = cv2.imencode(".jpg", np.zeros((30, 50, 3), np.uint8))[1]
    assert read_header(jpg.tobytes()) == read_header(jpg.tobytes())
    assert (read_header(jpg.tobytes()).width, read_header(jpg.tobytes()).height) == (50, 30)
    webp = cv2.imencode(".webp", np.zeros((30, 50, 3), np.uint8))[1]
    assert (read_header(webp.tobytes()).width, read_header(webp.tobytes()).height) == (50, 30)


def test_a_damaged_photo_is_one_line():
    jpg = cv2.imencode(".jpg", np.full((60, 80, 3), 128, np.uint8))[1]
    with pytest.raises(BadPhoto, match="damaged JPEG"):
        decode_photo(jpg.tobytes()[:40])


def test_the_exif_orientation_turns_the_photo_upright():
    img = np.zeros((40, 80, 3), np.uint8)
    img[:, :40] = 255  # white on the left as stored
    jpg = cv2.imencode(".jpg", img)[1].tobytes()
    tiff = b"MM\x00*\x00\x00\x00\x08" + struct.pack(">H", 1) + struct.pack(">HHIHH", 0x0112, 3, 1, 6, 0) + b"\0" * 4
    app1 = b"Exif\x00\x00" + tiff
    turned = decode_photo(jpg[:2] + b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + jpg[2:])
    assert turned.shape[:2] == (80, 40)  # orientation 6: turned a quarter clockwise
    assert turned[5, 20].mean() > 200 and turned[75, 20].mean() < 50


# ------------------------------------------------------------------ layout and hands


def test_reading_order_rows_left_to_right_and_groups_by_gaps():
    # a hand of 13 touching tiles, the winning tile apart, given shuffled; a meld on a row below
    hand = [(10 + 40 * i, 100, 48 + 40 * i, 150) for i in range(13)]
    win = [(10 + 40 * 13 + 30, 100, 48 + 40 * 13 + 30, 150)]
    meld = [(100, 200, 138, 250), (140, 210, 190, 248), (192, 200, 230, 250)]  # the middle one sideways
    boxes = hand + win + meld
    rng = np.random.default_rng(3)
    order = rng.permutation(len(boxes))
    layout = reading_order([boxes[i] for i in order])
    back = [[int(order[i]) for i in g] for g in layout.groups]
    assert back == [list(range(13)), [13], [14, 15, 16]]
    assert layout.rows == [0, 0, 1]
    assert reading_order([]).groups == []


@pytest.mark.parametrize("degrees", [-40, -25, 20, 35])
def test_an_askew_row_is_read_along_itself(degrees):
    """A hand photographed askew: 13 tiles touching, the winning tile pushed apart, rows at an angle."""
    a = np.radians(degrees)
    along = np.array([np.cos(a), np.sin(a)])
    ext = (40 * abs(np.cos(a)) + 56 * abs(np.sin(a))) / 2, (40 * abs(np.sin(a)) + 56 * abs(np.cos(a))) / 2
    steps = [42.0 * k for k in range(13)] + [42.0 * 13 + 26]
    centres = [np.array([400.0, 400.0]) + s * along for s in steps]
    boxes = [(round(x - ext[0]), round(y - ext[1]), round(x + ext[0]), round(y + ext[1])) for x, y in centres]
    order = np.random.default_rng(5).permutation(len(boxes))
    layout = reading_order([boxes[i] for i in order])
    assert [[int(order[i]) for i in g] for g in layout.groups] == [list(range(13)), [13]]
    assert abs(row_angle(boxes) - degrees) < 1


def _laid(text: str) -> list[LaidTile]:
    return [LaidTile(None if t == "?" else t.lstrip("#"), not t.startswith("#")) for t in text.split()]


def test_a_laid_hand_gives_its_concealed_part_melds_and_winning_tile():
    groups = [_laid("2m 3m 4m 2p 3p 4p 6s 7s 8s 5p"), _laid("5p"), _laid("#C C C #C")]
    hand = hand_from_groups([groups[0], groups[2], groups[1]])
    assert hand.win == "5p" and hand.melds == ["ankan:CCCC"] and len(hand.concealed) == 11
    answer = score(ScoreRequest.from_mapping({**hand.mapping(), "tsumo": True}))
    assert {y.key for y in answer.value.yaku} == {"tsumo", "chun"} and answer.value.fu == 60  # a dragon ankan
    assert hand_from_groups([_laid("1m 1m 2m 3m 4m 5m 6m 7m 8m 9m"), _laid("P P P")], win="9m").melds == \
        ["pon:PPP"]
    chi = hand_from_groups([_laid("1m 1m 2m 3m 4m 5m 6m 7m 8m 9m"), _laid("4s 3s 5s"), _laid("9m")])
    assert chi.melds == ["chi:4s3s5s"] and chi.win == "9m"
    touching = hand_from_groups([_laid("1m 1m 2m 3m 4m 5m 6m 7m"), _laid("4s 3s 5s 6p 6p 6p"), _laid("9m")])
    assert touching.melds == ["chi:4s3s5s", "pon:6p6p6p"]  # two melds laid side by side


@pytest.mark.parametrize(("groups", "win", "why"), [
    (["1m 2m ? 4m"], None, "could not be read"),
    (["1m 2m 3m 4m 5m 6m 7m 8m 9m 1p 1p 2p 3p 4p"], None, "no tile lies apart"),
    (["1m 2m 3m 4m 5m 6m 7m 8m 9m 1p 1p 2p", "3p", "4p"], None, "2 tiles lie apart"),
    (["1m 2m 3m 4m 5m 6m 7m 8m 9m 1p 1p", "2p 5p 9s", "4p"], None, "is not a meld"),
    (["1m 2m 3m 4m 5m 6m 7m 8m", "2p 3p 4p 5p 9s", "4p"], None, "nor melds laid side by side"),
    (["1m 2m 3m 4m 5m 6m 7m 8m 9m 1p 1p", "2p #3p 4p", "4p"], None, "face down"),
])
def test_what_is_no_hand_says_why(groups, win, why):
    with pytest.raises(NotAHand, match=why):
        hand_from_groups([_laid(g) for g in groups], win)


def test_an_unknown_tile_beside_a_whole_hand_is_left_out_and_never_completes_one():
    from tablesvc.photo_hand import laid_hand

    # hand_015 as the finder reads it: a box on the photo's edge (unknown) before a whole kokushi
    kokushi = "1s 1s 9s 1m 9m 1p 9p P C F E S W N"
    hand = laid_hand([_laid("? " + kokushi)], win="N")
    assert hand.left_out == 1 and sorted(hand.concealed) == sorted(kokushi.split())
    answer = score(ScoreRequest.from_mapping({**hand.mapping(), "rules": "ema2016"}))
    assert answer.value.han >= 13  # kokushi musou, a yakuman
    # an unknown tile inside a 14-tile row: the 13 read would make a hand only with a tile not seen: refused
    with pytest.raises(NotAHand, match="could not be read"):
        laid_hand([_laid("1m 2m 3m 4m 5m 6m 7m 8m 9m 1p 1p 2p 3p ?")], win="4p")
    # with a concealed kan set apart, its fourth tile is not counted twice
    kan = laid_hand([_laid("? 1m 2m 3m 4m 5m 6m 7m 8m 9m 1p"), _laid("#C C C #C"), _laid("1p")])
    assert kan.left_out == 1 and kan.melds == ["ankan:CCCC"] and kan.win == "1p"
    # a kan with its fourth tile unread is no pon: the unread tile in a meld is never left out
    with pytest.raises(NotAHand, match="could not be read"):
        laid_hand([_laid("1m 2m 3m 4m 5m 6m 7m 8m 9m 1p"), _laid("C C C ?"), _laid("1p")])


# ------------------------------------------------------------------ the reader on real photos


def test_the_finder_missing_is_said_plainly():
    try:
        finder = load_finder()
    except FinderMissing as exc:
        missing = str(exc)
    else:
        assert hasattr(finder, "find")  # installed: the reader's tests cover it
        return
    assert "tile finder" in missing and "\n" not in missing


@needs_photos
def test_hand_photos_are_read_right_with_unsure_tiles_unknown(tiles):
    right = wrong = total = 0
    for stem in ("hand_002", "hand_004", "hand_005", "hand_009", "hand_012", "hand_015"):
        path = photo(stem)
        image = load_photo(path)
        finder = LabelBoxFinder.for_photo(path)
        truth = dict(zip((b.box for b in finder.find(image)), labels(path), strict=True))
        reading = PhotoReader(finder, tiles).read(image, str(path))
        assert len(reading.tiles) == 14 and reading.problem() is None
        assert [len(g) for g in reading.groups] == [14]  # one row, left to right
        xs = [t.box[0] for t in reading.tiles]
        assert xs == sorted(xs)
        for t in reading.tiles:
            total += 1
            right += t.tile == truth[t.box]
            wrong += t.tile is not None and t.tile != truth[t.box]
            assert t.face_up and 0 <= t.confidence <= 1
    assert wrong == 0 and right >= 0.9 * total, (right, wrong, total)


@needs_photos
def test_flowers_are_unknown_and_the_annotated_copy_marks_each_tile(tiles):
    path = photo("hand_001")  # 1s..9s C C and three flowers
    image = load_photo(path)
    finder = LabelBoxFinder.for_photo(path)
    truth = dict(zip((b.box for b in finder.find(image)), labels(path), strict=True))
    reading = PhotoReader(finder, tiles).read(image, str(path))
    flowers = [t for t in reading.tiles if truth[t.box] is None]
    assert len(flowers) == 3 and all(t.tile is None for t in flowers)
    assert [t.tile for t in reading.tiles][:3] == ["1s", "2s", "3s"]
    out = annotate(image, reading)
    assert out.shape == image.shape and not np.array_equal(out, image)
    for t in reading.tiles:  # each box's outline is drawn: green for a sure name, amber for a guess, red for unknown
        x0, y0, _, y1 = t.box
        edge = out[y0 + (y1 - y0) // 2, x0].astype(int)
        if t.tile and t.sure:
            assert edge[1] > 150 and edge[2] < 100
        elif t.tile:
            assert edge[2] > 200 and edge[1] > 120
        else:
            assert edge[2] > 200 and edge[1] < 100
    js = reading.to_json()
    assert set(js) == {"photo", "tiles"}
    assert set(js["tiles"][0]) == {"tile", "box", "confidence", "face_up", "sure", "guesses"}


def test_no_tiles_and_only_backs_are_told_apart(tiles):
    felt = np.full((480, 640, 3), (40, 110, 30), np.uint8)
    empty = PhotoReader(LabelBoxFinder([]), tiles).read(felt)
    assert empty.tiles == [] and "no tiles found" in empty.problem()

    class Backs:
        def find(self, image):
            return [LabelBox((100 + 60 * i, 200, 150 + 60 * i, 270), face_up=False) for i in range(4)]

    backs = PhotoReader(Backs(), tiles).read(felt)
    assert len(backs.tiles) == 4 and all(t.tile is None for t in backs.tiles)
    assert "only tile backs" in backs.problem() and backs.text() == "# # # #"


@needs_photos
def test_a_white_dragon_the_finder_takes_for_a_back_is_read_and_real_backs_stay_backs(tiles):
    """hand_014's white dragons are blank white faces: boxes flagged face down are read by the embedding,
    which knows backs, so only a face it is sure of turns face up."""
    path = photo("hand_014")
    image = load_photo(path)
    finder = LabelBoxFinder.for_photo(path)
    names = labels(path)

    class AllBacks:  # every labelled box handed over as a back
        def find(self, img):
            return [LabelBox(b.box, face_up=False) for b in finder.find(img)]

    reading = PhotoReader(AllBacks(), tiles).read(image, str(path))
    truth = dict(zip((b.box for b in finder.find(image)), names, strict=True))
    whites = [t for t in reading.tiles if truth[t.box] == "P"]
    assert len(whites) == 3 and all(t.face_up and t.tile == "P" for t in whites)
    assert all(t.tile in (None, truth[t.box]) for t in reading.tiles)  # nothing turned face up is misread
    felt = np.full((300, 400, 3), (40, 110, 30), np.uint8)
    green_backs = PhotoReader(type("G", (), {"find": lambda self, img: [
        LabelBox((100, 100, 150, 170), face_up=False)]})(), tiles).read(felt)  # fmt: skip
    assert [(t.face_up, t.tile) for t in green_backs.tiles] == [(False, None)]


@needs_photos
def test_an_unsure_tile_is_read_again_from_a_tighter_cut(tiles):
    """Boxes reaching over the neighbouring tile (as a finder's box may): unsure at first, named from a
    tighter cut where two cuts agree."""
    path = photo("hand_012")
    image = load_photo(path)
    finder = LabelBoxFinder.for_photo(path)
    names = labels(path)
    loose = [LabelBox((max(0, b.box[0] - (b.box[2] - b.box[0]) * 4 // 5), b.box[1], b.box[2], b.box[3]))
             for b in finder.find(image)]  # fmt: skip

    class Loose:
        def find(self, img):
            return loose

    reader = PhotoReader(Loose(), tiles)
    reading = reader.read(image, str(path))
    truth = dict(zip((b.box for b in loose), names, strict=True))
    right = sum(t.tile == truth[t.box] for t in reading.tiles)
    wrong = sum(t.tile is not None and t.tile != truth[t.box] for t in reading.tiles)
    reader._second_look = lambda *a: None  # the first look alone
    first = PhotoReader.read(reader, image, str(path))
    right_first = sum(t.tile == truth[t.box] for t in first.tiles)
    wrong_first = sum(t.tile is not None and t.tile != truth[t.box] for t in first.tiles)
    assert right > right_first and wrong <= wrong_first <= 1, (right, right_first, wrong, wrong_first)
