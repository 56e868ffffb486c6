"""Real tile photos for training and measuring the recogniser: ``../shared/data`` read, never copied.

Two sources, both mapped to the project's tile notation (``1m`` .. ``C``; ``None`` for a flower or
season, which a recogniser must call unknown):

- ``tiles-photos-roboflow`` (CC BY 4.0, "Chinese Mahjong Detection" by riichimahjongdetection,
  Roboflow Universe): 640x640 photos of many sets with a YOLO box per tile, ``train`` / ``valid``
  split by photo. :func:`roboflow_crops` cuts each box out (a little margin, a sideways box turned
  upright) and keeps the photo's name, so that a measure can enroll from some photos and read others.
- ``tiles-photos-camerash`` (MIT): 240x320 photos of single tiles. :func:`camerash_photos` reads them
  and :func:`camerash_split` halves them by a hash of the file name: one half may be trained on, the
  other is kept for measuring only.

Both are published with some wrong labels, found when the learnt embedding disagreed with a label and
checked by eye one by one (docs/vision.md, "Labels checked"); :data:`ROBOFLOW_ERRATA`,
:data:`CAMERASH_ERRATA` and the rule of :func:`one_label_photos` set them right when ``corrected`` (the
default) and only then. Only disagreements were looked at, and only labels plainly wrong were changed: a
box that could not be told for sure keeps its published label and counts against the recogniser.

Used by ``training/`` (training) and ``bench/vision.py`` (figures); the product never reads them.
"""

from __future__ import annotations

import csv
import zlib
from pathlib import Path

import cv2
import numpy as np

from vision.naming.features import photo_label_to_tile
from vision.photos.input import BadPhoto, read_header

__all__ = ["CAMERASH_ERRATA", "DATA", "ROBOFLOW_ERRATA", "ROBOFLOW_UNLABELLED", "PhotoCrop", "camerash_photos",
           "camerash_split", "one_label_photos", "roboflow_crops", "roboflow_labellings", "roboflow_names"]

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
ROBOFLOW = DATA / "tiles-photos-roboflow"
CAMERASH = DATA / "tiles-photos-camerash"


#: (photo, line of its label file, label as published, the tile the box shows), ``valid`` split; every one
#: seen in the photo (the box in its surroundings), not taken from the recogniser's answer
ROBOFLOW_ERRATA: tuple[tuple[str, int, str, str], ...] = (
    ("393862359_1016644659388196_9121892287557604620_n_jpg.rf.79dd5ad6b19e70a34b7fece27a09166d.jpg", 3, "E", "W"),
    ("hand_016_jpg.rf.146843be36fa4d2596f2d47aca3a1020.jpg", 5, "4p", "4m"),
    ("IMG_2770_JPG.rf.2299775b71c48ef04379c25ad449a208.jpg", 10, "9p", "4p"),
    ("395465309_716860696650128_7891072760470949603_n_jpg.rf.1bbc362cfc4ac7e3fa07fa0ba83ef809.jpg", 19, "5p", "5m"),
    ("370280965_2015775748788044_2111708559817730528_n_jpg.rf.f1de4d65c922ba779be7a4220fea8141.jpg", 8, "3m", "2m"),
    ("367749699_848989150106760_5345677025050704033_n_jpg.rf.a5d79f7e42d4296b0f7fe4499ecf056d.jpg", 11, "5p", "4p"),
    ("395718530_2252314648305598_5544118639271367857_n_jpg.rf.5a075c7e89b3ee4b6d3e699a0d9a3972.jpg", 10, "7m", "3m"),
    ("hand_016_jpg.rf.146843be36fa4d2596f2d47aca3a1020.jpg", 4, "5p", "5m"),
    ("hand_003_jpg.rf.4d77450281a0bb7760671a162d83bf7c.jpg", 8, "3s", "3p"),
    ("395943457_352951880638020_6708737081433333054_n_jpg.rf.e904d311bdc2e6894ab1f35e40f264e7.jpg", 14, "W", "E"),
    ("IMG_2745_JPG.rf.308809a3baedbc5defd2b090b668b675.jpg", 43, "6p", "6m"),
    ("hand_016_jpg.rf.146843be36fa4d2596f2d47aca3a1020.jpg", 3, "6p", "6m"),
    ("hand_003_jpg.rf.4d77450281a0bb7760671a162d83bf7c.jpg", 9, "2s", "2p"),
    ("387346484_873767617750613_8061285681302390151_n_jpg.rf.d28ac180693aec5f9394e09efe5f5985.jpg", 12, "7s", "6s"),
    ("395368434_1753592458387634_7405461030797290030_n_jpg.rf.ae8a26dcc22d4863f52204fa433972b1.jpg", 9, "2s", "4s"),
    ("IMG_20231107_231242_jpg.rf.0fefcec5972e3eaf3d983a88900ca834.jpg", 15, "4m", "4p"),
    ("396615245_1012553140002307_5358505426230168323_n_jpg.rf.fa70f677763ee9db936afe9c12ce62ef.jpg", 6, "9s", "5s"),
    ("IMG_20231107_231752_jpg.rf.a057bda738fc2a8e467e6cfe5880cb7e.jpg", 35, "4m", "C"),
    ("395566136_1148906989414345_3910274905337724886_n_jpg.rf.db9555fd023a358d4eab87ed452392fa.jpg", 15, "6p", "2p"),
    ("hand_003_jpg.rf.4d77450281a0bb7760671a162d83bf7c.jpg", 10, "1s", "1p"),
)

#: ``valid`` photos labelled only in part: the publisher labelled the player's rack and left the heap of
#: face-up tiles on the table beyond it without boxes. Each region (x0, y0, x1, y1, fractions of the photo)
#: was drawn by eye around such unlabelled tiles only (no hand, arm, rack or floor inside); a found box
#: whose centre lies in one and that matches no label is counted apart as "on unlabelled tiles", neither
#: found nor extra (``bench/photos.py``). Every other box on no label stays an extra.
ROBOFLOW_UNLABELLED: dict[str, tuple[tuple[float, float, float, float], ...]] = {
    "hand_010_jpg.rf.eaeb9ed3e5a8df85f028a97885eee6b3.jpg": ((0.33, 0.0, 0.92, 0.47), (0.17, 0.0, 0.27, 0.09)),
    "387641981_2045492965791937_5790211644647940396_n_jpg.rf.95a60cf9eea2833d81e6902034e841e5.jpg":
        ((0.08, 0.0, 0.9, 0.5),),
    "382645002_1008823510368523_1436380457729058904_n_jpg.rf.1a860dff2e0c9232688012dc3f97e1a8.jpg":
        ((0.05, 0.0, 0.82, 0.47),),
    "387328136_252973981072647_7654047833789061582_n_jpg.rf.2c568fdd560486cb249d099908cde87a.jpg":
        ((0.38, 0.0, 0.82, 0.45),),
    "387593807_2529741337185686_6863345406955859593_n_jpg.rf.d131f9cacf06e4c3c0695c91f583d182.jpg":
        ((0.02, 0.0, 0.85, 0.31),),
    "387594793_2588024031375884_8823196745796085082_n_jpg.rf.5160d8da54529544d05a5dcfa5b8eef0.jpg":
        ((0.15, 0.0, 1.0, 0.3),),
    "395575430_1555055608597031_2831266986981485103_n_jpg.rf.5519472381786a291613fb3e1bae0254.jpg":
        ((0.1, 0.0, 0.72, 0.36),),
    "395886722_203909736061323_2828891804523793322_n_jpg.rf.d6d1af9ceaf80a1ad853fc9e0649db9c.jpg":
        ((0.3, 0.0, 0.72, 0.34), (0.1, 0.0, 0.22, 0.08)),
    "hand_009_jpg.rf.7913c35339bcb5d0d3f07016e129b014.jpg": ((0.35, 0.0, 1.0, 0.35),),
    "387519660_760043225888461_3003236260871383171_n_jpg.rf.e4e26137258f5dda8a3810dd25343e68.jpg":
        ((0.18, 0.0, 0.65, 0.28),),
    "370280965_2015775748788044_2111708559817730528_n_jpg.rf.f1de4d65c922ba779be7a4220fea8141.jpg":
        ((0.38, 0.08, 0.6, 0.25),),
    "387471954_1282573685761619_5566297790876962704_n_jpg.rf.61df2c6c4333ba21361dc38ef7fbcafe.jpg":
        ((0.18, 0.0, 0.6, 0.3),),
    "395794817_2376513082523833_4038443797689914457_n_jpg.rf.c3b08eb983b05ca0aa6e5221282b42bf.jpg":
        ((0.1, 0.0, 1.0, 0.26),),
    "370216415_1595247967673442_2880924940207530598_n_jpg.rf.7cf9f90705d38b99ab26319953702932.jpg":
        ((0.25, 0.0, 0.6, 0.3),),
    "387463023_646617650955895_3268249314030450638_n_jpg.rf.22e7390c6be31edf7ab999d96989fb92.jpg":
        ((0.4, 0.75, 1.0, 1.0),),
    "395718530_2252314648305598_5544118639271367857_n_jpg.rf.5a075c7e89b3ee4b6d3e699a0d9a3972.jpg":
        ((0.0, 0.0, 0.85, 0.23),),
    "395983550_1465829734271701_3417836575134083219_n_jpg.rf.a71ec1e7c971ad5db6a895cf8d909b39.jpg":
        ((0.25, 0.0, 0.8, 0.2),),
}

#: photo -> the tile it shows, where the published label names another
CAMERASH_ERRATA: dict[str, str] = {"133.jpg": "8p", "350.jpg": "9p"}


def one_label_photos(labels: dict[str, list[str | None]], min_boxes: int = 6) -> set[str]:
    """Photos whose every box (at least ``min_boxes``) carries one tile's label: a labelling failure, not a
    photo of one kind of tile (``valid``: seven photos of a mixed table, 123 boxes all labelled 1p). Photos
    of flowers and seasons alone (``None``, several tiles under one label) are what they say."""
    return {photo for photo, tiles in labels.items()
            if len(tiles) >= min_boxes and len(set(tiles)) == 1 and tiles[0] is not None}  # fmt: skip


class PhotoCrop:
    """One real tile: ``tile`` in notation (None: flower/season), the BGR crop, the photo it came from.

    A roboflow crop is cut when its ``image`` is first read (:class:`_PhotoCuts`): a measure that reads a sample
    of a split decodes only the photos of that sample. ``image`` is one array for the life of the crop."""

    __slots__ = ("_cut", "_image", "photo", "tile")

    def __init__(self, tile: str | None, image: np.ndarray | tuple[_PhotoCuts, int], photo: str) -> None:
        self.tile = tile
        self.photo = photo
        self._image, self._cut = (image, None) if isinstance(image, np.ndarray) else (None, image)

    @property
    def image(self) -> np.ndarray:
        if self._image is None:
            cuts, k = self._cut  # type: ignore[misc]
            self._image = cuts.crop(k)
        return self._image

    def __repr__(self) -> str:
        return f"PhotoCrop(tile={self.tile!r}, photo={self.photo!r})"


class _PhotoCuts:
    """The boxes of one photo, cut all at once the first time one of them is read (one decoding per photo), each
    then the same array whichever labelling's crop reads it."""

    def __init__(self, path: Path, size: tuple[int, int], boxes: list[tuple[int, int, int, int, bool]]) -> None:
        self.path = path
        self.size = size  # (w, h) as its header gives it
        self.boxes = boxes  # x0, y0, x1, y1, turned a quarter
        self._crops: list[np.ndarray] | None = None

    def crop(self, k: int) -> np.ndarray:
        if self._crops is None:
            img = cv2.imread(str(self.path), cv2.IMREAD_COLOR)
            if img is None or (img.shape[1], img.shape[0]) != self.size:
                raise OSError(f"{self.path}: not decoded at the size its header gives {self.size}")
            self._crops = []
            for x0, y0, x1, y1, turned in self.boxes:
                crop = img[y0:y1, x0:x1]
                self._crops.append(np.ascontiguousarray(cv2.rotate(crop, cv2.ROTATE_90_CLOCKWISE) if turned else crop))
        return self._crops[k]


def _stored_size(path: Path) -> tuple[int, int] | None:
    """(width, height) of a JPEG from its header (:func:`~vision.photos.input.read_header`), without decoding it;
    None where the header does not settle what decoding gives: not a JPEG, or one with an EXIF block (the decoder
    turns the photo as its orientation says): decode it then."""
    data = path.read_bytes()
    try:
        header = read_header(data)
    except BadPhoto:
        return None
    if header.format != "JPEG" or b"Exif" in data[:65536]:
        return None
    return header.width, header.height


def roboflow_names(root: Path = ROBOFLOW) -> list[str | None]:
    """Class index -> tile (``classes.txt``; its ``other`` = flower or season -> None)."""
    names = (root / "classes.txt").read_text().split()
    return [None if n == "other" else n for n in names]


def roboflow_crops(split: str, root: Path = ROBOFLOW, margin: float = 0.06, min_side: int = 12,
                   corrected: bool = True) -> list[PhotoCrop]:  # fmt: skip
    """Every labelled tile of ``split`` (``train`` or ``valid``) as an upright-ish crop.

    ``corrected``: labels as set right by :data:`ROBOFLOW_ERRATA`, and without the photos of
    :func:`one_label_photos` (False: every box as published).

    The publisher stretched each photo to 640x640, so a box's aspect ratio says little; a box at
    least 1.25 times wider than tall is taken as a sideways tile and turned a quarter (which way is
    unknown: the recogniser is trained to read a tile upside down as well). Boxes under
    ``min_side`` px are skipped (a few specks in the labels).
    """
    return _roboflow_cut(split, root, margin, min_side, (corrected,))[0]


def roboflow_labellings(split: str, root: Path = ROBOFLOW, margin: float = 0.06, min_side: int = 12,
                        ) -> tuple[list[PhotoCrop], list[PhotoCrop]]:  # fmt: skip
    """:func:`roboflow_crops` of ``split`` corrected and as published, from one decoding of its photos: the
    crops of a box are one array in both lists (a caller that reads both labellings decodes each photo once)."""
    corrected, published = _roboflow_cut(split, root, margin, min_side, (True, False))
    return corrected, published


def _roboflow_cut(split: str, root: Path, margin: float, min_side: int, labellings: tuple[bool, ...],
                  ) -> list[list[PhotoCrop]]:  # fmt: skip
    """The crops of ``split`` in each of ``labellings`` (True: corrected, False: as published)."""
    if split not in ("train", "valid"):
        raise ValueError(f"split must be 'train' or 'valid', not {split!r}")
    names = roboflow_names(root)
    errata = {(photo, line): (published, seen) for photo, line, published, seen in ROBOFLOW_ERRATA} \
        if any(labellings) else {}  # fmt: skip
    outs: list[list[PhotoCrop]] = [[] for _ in labellings]
    for img_path in sorted((root / "images" / split).iterdir()):
        label_path = root / "labels" / split / (img_path.stem + ".txt")
        if not label_path.is_file():
            continue
        size = _stored_size(img_path)
        if size is None:  # the header does not say: its decoding does
            img = cv2.imread(str(img_path), cv2.IMREAD_COLOR)
            if img is None:
                continue
            size = (img.shape[1], img.shape[0])
        w, h = size
        cuts = _PhotoCuts(img_path, size, [])
        for number, line in enumerate(label_path.read_text().splitlines()):
            parts = line.split()
            if len(parts) != 5:
                continue
            cls = int(parts[0])
            tile = seen_tile = names[cls]
            if (img_path.name, number) in errata:
                published, seen_tile = errata[img_path.name, number]
                if published != names[cls]:
                    raise ValueError(f"{label_path}:{number + 1}: the erratum expects {published}, the file says "
                                     f"{names[cls]}: not the data this project measured")  # fmt: skip
            cx, cy, bw, bh = (float(v) for v in parts[1:])
            bw_px, bh_px = bw * w, bh * h
            if min(bw_px, bh_px) < min_side:
                continue
            mx, my = bw_px * margin, bh_px * margin
            x0, x1 = int(max(0, cx * w - bw_px / 2 - mx)), int(min(w, cx * w + bw_px / 2 + mx))
            y0, y1 = int(max(0, cy * h - bh_px / 2 - my)), int(min(h, cy * h + bh_px / 2 + my))
            xs, ys = range(w)[x0:x1], range(h)[y0:y1]  # the pixels img[y0:y1, x0:x1] holds
            if not xs or not ys:
                continue
            cuts.boxes.append((xs.start, ys.start, xs.stop, ys.stop, bw_px > 1.25 * bh_px))
            crop = (cuts, len(cuts.boxes) - 1)
            for out, corrected in zip(outs, labellings, strict=True):
                out.append(PhotoCrop(seen_tile if corrected else tile, crop, img_path.name))
    for k, corrected in enumerate(labellings):
        if corrected:
            labels: dict[str, list[str | None]] = {}
            for c in outs[k]:
                labels.setdefault(c.photo, []).append(c.tile)
            failed = one_label_photos(labels)
            outs[k] = [c for c in outs[k] if c.photo not in failed]
    return outs


def camerash_photos(root: Path = CAMERASH, corrected: bool = True, half: int | None = None) -> list[PhotoCrop]:
    """Every Camerash photo (one tile each), labelled in notation (flowers/seasons None); ``corrected``:
    with :data:`CAMERASH_ERRATA` applied. ``half``: only the photos of that half of :func:`camerash_split`
    (0 the training half, 1 the measuring half), in the same order; the others are not decoded."""
    out: list[PhotoCrop] = []
    with (root / "data.csv").open() as f:
        for row in csv.DictReader(f):
            if half is not None and _half(row["image-name"]) != half:
                continue
            img = cv2.imread(str(root / "tiles-resized" / row["image-name"]), cv2.IMREAD_COLOR)
            if img is not None:
                tile = photo_label_to_tile(row["label-name"])
                if corrected:
                    tile = CAMERASH_ERRATA.get(row["image-name"], tile)
                out.append(PhotoCrop(tile, img, row["image-name"]))
    return out


def camerash_split(photos: list[PhotoCrop]) -> tuple[list[PhotoCrop], list[PhotoCrop]]:
    """(train half, measure half) by a CRC of the file name: fixed, the same on every machine."""
    train = [p for p in photos if _half(p.photo) == 0]
    test = [p for p in photos if _half(p.photo) == 1]
    return train, test


def _half(name: str) -> int:
    """Which half of :func:`camerash_split` the photo ``name`` is in (0 training, 1 measuring)."""
    return zlib.crc32(name.encode()) % 2
