"""Read the tiles in a real photo: where they lie (the tile finder), what each is (the tile embedding).

The finder (:mod:`vision.photos.finder`, a network of its own) gives a box per tile with a face/back flag; each
face-up box is cut out (a little margin, a sideways box turned upright) and named by the learnt
embedding (:mod:`vision.naming.embedding`) against a set of prototypes:

- by default the **packaged set** (``vision/models/photo_tiles.npz``, made by
  ``training/photo_prototypes.py`` from the artwork of two Japanese sets and the most typical real crops
  of the training photos), so a player's photo needs no enrollment;
- a **club's enrolled set** (``tablesvc vision enroll``) when one is given: its own tiles read best.

An answer the embedding is not sure of (its calibrated similarity and lead gates) is ``None``: the tile
is reported as unknown, never guessed. Flowers, seasons and backs are unknown too: they are no tile of
a riichi hand. The tiles come in reading order with their groups (:mod:`vision.photos.layout`).

Anything that can find boxes serves as the finder (``find(image) -> [objects with box, score, face_up]``):
:class:`LabelBoxFinder` gives the labelled boxes of a YOLO-labelled photo, which measures the naming
alone (``bench/photo_reader.py``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np

from vision.naming.embedding import EmbeddingClassifier, not_tile_prototypes

from .layout import reading_order, tile_shaped
from .verifier import TileVerifier, box_features, packaged_verifier

__all__ = ["PACKAGED_TILES", "READ_SIDE", "FinderMissing", "LabelBoxFinder", "PhotoReader", "PhotoReading", "ReadTile",
           "annotate", "is_tile", "load_finder", "load_tiles"]

log = logging.getLogger(__name__)

PACKAGED_TILES = Path(__file__).resolve().parents[1] / "models" / "photo_tiles.npz"
#: a photo is decoded at a half, a quarter or an eighth where its long side stays at least this long: a tile
#: of a 12-megapixel photo of a whole table is still ~40 px, and the decoding takes a third of the time
READ_SIDE = 1600
Box = tuple[int, int, int, int]
#: similarity at which a box the finder took for a back is read as the face the embedding sees
SURE_FACE = 0.9
#: the gates (similarity, lead) for a box out of a tile's proportions, a picture squeezed out of shape: its
#: tile is a few pixels across one way, and the usual gates let 6 % of such tiles be misread (roboflow valid)
ODD_SHAPE_GATES = (0.75, 0.2)
#: the gates (similarity, lead) a name must pass to be shown as sure (``training/calibrate_sure.py``: chosen on sets
#: held out so that at most 0.3 % of sure names are wrong on the set left out); a name short of them is shown unsure
#: with its best guesses
SURE_GATES = (0.87, 0.0)
#: how many best guesses an unsure tile shows
GUESSES = 3
#: what keeps a finder's box (:func:`is_tile`): the finder's score at which its box is kept whatever the photo, and
#: the median score of a photo's boxes under which its weaker boxes are dropped
NOT_A_TILE = {"finder_sure": 0.6, "photo_median": 0.38}


class FinderMissing(RuntimeError):
    """The tile finder's model is not installed, so photos cannot be read (the message says what to do)."""


class Found(Protocol):
    box: tuple[int, int, int, int]
    score: float
    face_up: bool


class Finder(Protocol):
    def find(self, image_bgr: np.ndarray) -> Sequence[Found]: ...


def load_finder() -> Finder:
    """The packaged tile finder; :class:`FinderMissing` when it is not installed or not usable."""
    try:
        from vision.photos.finder import LOAD_ERRORS, TileFinder  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise FinderMissing("the tile finder is not installed (vision/finder.py and its model): update "
                            "tablesvc; photos cannot be read without it") from None
    try:
        return TileFinder.load()
    except LOAD_ERRORS as exc:
        raise FinderMissing(f"the tile finder's model is not installed or cannot be loaded ({exc}): reinstall "
                            "tablesvc; photos cannot be read without it") from None


def load_tiles(model: str | Path | None = None) -> Any:
    """A club's saved tile set (``tablesvc vision enroll``), or the packaged photo set when ``model`` is None."""
    from vision.naming.classifier import TileClassifier

    path = Path(model) if model else PACKAGED_TILES
    if not path.is_file():
        hint = "reinstall tablesvc (it ships in the package) or run training/photo_prototypes.py" if not model \
            else "give the file `tablesvc vision enroll` wrote"
        raise FileNotFoundError(f"tile set {path} is missing: {hint}")
    return TileClassifier.load(path)


@dataclass(frozen=True)
class LabelBox:
    """A box from a label file, shaped as the finder's answers."""

    box: Box
    score: float = 1.0
    face_up: bool = True
    angle: float = 0.0


@dataclass
class LabelBoxFinder:
    """The boxes of a YOLO label file (``class cx cy w h``, normalised) as a finder: for measuring the
    naming without the finder's misses, and for tests. Scaled to whatever image it is given."""

    rows: list[tuple[float, float, float, float]] = field(default_factory=list)
    #: its boxes are given, not guessed: none is dropped as no tile
    given: bool = True

    @classmethod
    def from_file(cls, path: str | Path) -> LabelBoxFinder:
        rows = []
        for line in Path(path).read_text().splitlines():
            parts = line.split()
            if len(parts) == 5:
                cx, cy, w, h = (float(v) for v in parts[1:])
                rows.append((cx, cy, w, h))
        return cls(rows)

    @classmethod
    def for_photo(cls, photo: str | Path) -> LabelBoxFinder:
        """The label file of a roboflow photo (``images/<split>/X.jpg`` -> ``labels/<split>/X.txt``)."""
        p = Path(photo)
        return cls.from_file(p.parents[2] / "labels" / p.parent.name / (p.stem + ".txt"))

    def find(self, image_bgr: np.ndarray) -> list[LabelBox]:
        h, w = image_bgr.shape[:2]
        out = []
        for cx, cy, bw, bh in self.rows:
            x0, y0 = max(0, round((cx - bw / 2) * w)), max(0, round((cy - bh / 2) * h))
            x1, y1 = min(w, round((cx + bw / 2) * w)), min(h, round((cy + bh / 2) * h))
            if x1 > x0 and y1 > y0:
                out.append(LabelBox((x0, y0, x1, y1)))
        return out


@dataclass(frozen=True)
class ReadTile:
    """One tile of a photo: its name in notation (None: unknown, a flower or a back), its box in pixels of
    the photo, how similar it was to its kind (0..1), face up, and the group it lies in (reading order)."""

    tile: str | None
    box: Box
    confidence: float
    face_up: bool
    group: int = 0
    sideways: bool = False
    #: the name is sure (:meth:`PhotoReader.is_sure`): shown as read; otherwise shown unsure with ``guesses``
    sure: bool = False
    #: the most similar kinds, best first, with their similarity (an unsure tile's best guesses)
    guesses: tuple[tuple[str, float], ...] = ()
    lead: float = 0.0
    finder_score: float = 1.0
    not_tile: float = -2.0

    def to_json(self) -> dict[str, Any]:
        return {"tile": self.tile, "box": list(self.box), "confidence": round(self.confidence, 3),
                "face_up": self.face_up, "sure": self.sure, "guesses": [k for k, _ in self.guesses]}


@dataclass(frozen=True)
class PhotoReading:
    """What a photo holds, in reading order; ``groups``: the tiles' indices group by group."""

    photo: str
    width: int
    height: int
    tiles: list[ReadTile]
    groups: list[list[int]]
    ms: float = 0.0
    #: boxes of the finder dropped as no tile (:func:`is_tile`)
    dropped: int = 0
    #: the row of each group (0 = the top row): a photo of a whole table has several
    rows: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"photo": self.photo, "tiles": [t.to_json() for t in self.tiles]}

    @property
    def face_up(self) -> list[ReadTile]:
        return [t for t in self.tiles if t.face_up]

    def problem(self) -> str | None:
        """Why this photo shows nothing to read (no tiles, only backs), or None."""
        if not self.tiles:
            return "no tiles found in the photo: photograph the tiles from closer, face up, in good light"
        if not self.face_up:
            return f"only tile backs in the photo ({len(self.tiles)}): turn the tiles face up"
        return None

    def text(self) -> str:
        """The tiles group by group, ``?`` for unknown, ``5p?`` for a name not sure (its best guess), ``#`` for a
        back, ``*`` for a sideways tile."""
        def name(t: ReadTile) -> str:
            if not t.face_up:
                shown = "#"
            elif t.tile is None:
                shown = "?"
            else:
                shown = t.tile if t.sure else f"{t.tile}?"
            return shown + ("*" if t.sideways else "")

        return "  ".join(" ".join(name(self.tiles[i]) for i in g) for g in self.groups) or "-"


@dataclass
class Look:
    """The finder's boxes of a photo and a first reading of each (:meth:`PhotoReader.look`): ``best`` the
    embedding's (kind, similarity, runner-up) per box index, ``features`` the verifier's rows (None without one)."""

    found: list[Any]
    boxes: list[Box]
    sideways: list[bool]
    best: dict[int, tuple[str, float, float]]
    not_tile: dict[int, float]
    guesses: dict[int, list[tuple[str, float]]]
    features: np.ndarray | None


@dataclass
class PhotoReader:
    """Finder + embedding (module docstring). ``min_score``: finder answers below it are dropped;
    ``margin``: the crop around each box, as a fraction of its size."""

    finder: Finder
    classifier: Any
    min_score: float = 0.3
    margin: float = 0.06
    both_ways: bool = False
    #: keep every box of the finder, even those the verifier or :func:`is_tile` drops (to measure the rule itself);
    #: a finder whose boxes are ``given`` (:class:`LabelBoxFinder`) has every box kept too
    keep_all: bool = False
    #: (similarity, lead) a name must pass to be shown sure (:data:`SURE_GATES`)
    sure_gates: tuple[float, float] = SURE_GATES
    #: tile or not (:mod:`vision.photos.verifier`): a box it calls no tile is dropped; None: :func:`is_tile` decides
    verifier: TileVerifier | None = field(default_factory=packaged_verifier)

    @classmethod
    def load(cls, model: str | Path | None = None, finder: Finder | None = None) -> PhotoReader:
        """The packaged finder (:class:`FinderMissing` without it) and tile set (or a club's ``model``)."""
        classifier = load_tiles(model)
        return cls(finder if finder is not None else load_finder(), classifier)

    def _crop(self, image: np.ndarray, box: Box) -> np.ndarray:
        x0, y0, x1, y1 = box
        mx, my = (x1 - x0) * self.margin, (y1 - y0) * self.margin
        h, w = image.shape[:2]
        crop = image[int(max(0, y0 - my)):int(min(h, y1 + my)), int(max(0, x0 - mx)):int(min(w, x1 + mx))]
        return np.ascontiguousarray(crop)

    def _second_look(self, image: np.ndarray, boxes: list[Box], sideways: list[bool],
                     best: dict[int, tuple[str, float, float]], faces: list[bool]) -> None:  # fmt: skip
        """Tiles the embedding is unsure of, read again from tighter cuts (:func:`_tighter`): a name that
        at least two cuts give, each passing the gates, replaces the unsure one, unless it is the white
        dragon (a cut inside any tile may show only its blank face), and unless two names have two cuts
        each. Boxes out of a tile's proportions (a picture squeezed out of shape) are left unsure: their cuts
        are too few pixels across to agree on, and so are backs (``faces`` false: the finder's flag; a wall of
        them would pay five cuts each for nothing). Only the unsure faces pay for it."""
        unsure = [i for i, got in best.items()
                  if faces[i] and self.classifier.decide(*got)[0] is None and _in_shape(boxes[i])]
        crops, owner = [], []
        for i in unsure:
            for b in _tighter(boxes[i]):
                if b[2] - b[0] < 4 or b[3] - b[1] < 4:
                    continue
                crop = self._crop(image, b)
                crops.append(cv2.rotate(crop, cv2.ROTATE_90_CLOCKWISE) if sideways[i] else crop)
                owner.append(i)
        if not crops:
            return
        votes: dict[int, dict[str, list[tuple[str, float, float]]]] = {}
        for i, got in zip(owner, self.classifier.scores_many(crops), strict=True):
            if got[0] != "P" and self.classifier.decide(*got)[0] is not None:
                votes.setdefault(i, {}).setdefault(got[0], []).append(got)
        for i, names in votes.items():
            agreed = [seen for seen in names.values() if len(seen) >= 2]
            if len(agreed) == 1:  # two names with two cuts each: the tile stays unsure
                best[i] = max(agreed[0], key=lambda g: g[1])

    def _named(self, got: tuple[str, float, float], box: Box) -> tuple[str | None, float]:
        """The embedding's answer for a box through the gates; a box out of a tile's proportions passes only
        the stricter :data:`ODD_SHAPE_GATES` (the usual gates misread such squeezed tiles)."""
        name, conf = self.classifier.decide(*got)
        if not _in_shape(box) and (got[1] < ODD_SHAPE_GATES[0] or got[1] - got[2] < ODD_SHAPE_GATES[1]):
            name = None
        return name, conf

    def _ranked(self, crops: list[np.ndarray]) -> tuple[list[tuple[tuple[str, float, float], float,
                                                                   list[tuple[str, float]]]], np.ndarray | None]:
        """Each crop's (kind, similarity, runner-up), its similarity to "not a tile" and its best guesses, and the
        crops' embeddings (the verifier's eye): the embedding gives all in one pass; another classifier (the
        LDA) its one answer, and no embeddings (made apart where the verifier needs them)."""
        if hasattr(self.classifier, "ranked_of") and getattr(self.classifier, "half_turn", False):
            emb = self.classifier.embed_many(crops)
            return self.classifier.ranked_of(emb, GUESSES), emb
        return [(got, -2.0, [(got[0], got[1])]) for got in self.classifier.scores_many(crops)], None

    def look(self, image: np.ndarray, features: bool = False) -> Look:
        """The finder's boxes of ``image`` and a first reading of each (:class:`Look`): what :meth:`read` decides
        from, and what ``training/tile_or_not.py`` learns the verifier's features from (``features``: made even
        without a verifier)."""
        found = [f for f in self.finder.find(image) if f.score >= self.min_score]
        boxes = [tuple(int(v) for v in f.box) for f in found]
        crops, owner, sideways = [], [], []
        for i in range(len(found)):
            x0, y0, x1, y1 = boxes[i]
            wide = (x1 - x0) > 1.25 * (y1 - y0)
            sideways.append(wide)
            if x1 - x0 < 4 or y1 - y0 < 4:
                continue  # a back is read too: a blank white dragon looks like one to the finder
            crop = self._crop(image, boxes[i])
            crops.append(cv2.rotate(crop, cv2.ROTATE_90_CLOCKWISE) if wide else crop)
            owner.append(i)
            if self.both_ways or 0.8 * (y1 - y0) <= x1 - x0 <= 1.25 * (y1 - y0):  # square-ish: which way up?
                crops.append(crop if wide else cv2.rotate(crop, cv2.ROTATE_90_CLOCKWISE))
                owner.append(i)
        best: dict[int, tuple[str, float, float]] = {}
        not_tile: dict[int, float] = {}
        guesses: dict[int, list[tuple[str, float]]] = {}
        upright: dict[int, int] = {}  # a box's first crop: the one the verifier looks at
        ranked, emb = self._ranked(crops)
        for k, (i, (got, nt, ranks)) in enumerate(zip(owner, ranked, strict=True)):
            upright.setdefault(i, k)
            if i not in best or got[1] > best[i][1]:
                best[i], not_tile[i], guesses[i] = got, nt, ranks
        rows_of = None
        if features or (self.verifier is not None and not getattr(self.finder, "given", False)):
            if emb is None:  # another classifier named the crops: the verifier's eye is the embedding still
                emb = EmbeddingClassifier().embed_many(crops) if crops else np.zeros((0, 128), np.float32)
            dims = emb.shape[1] if len(emb) else 128
            rows = [upright.get(i) for i in range(len(found))]
            look_crops = [crops[k] if k is not None else np.zeros((4, 4, 3), np.uint8) for k in rows]
            look_emb = np.stack([emb[k] if k is not None else np.zeros(dims, np.float32) for k in rows]) \
                if rows else np.zeros((0, dims), np.float32)
            nts = np.array([not_tile.get(i, -2.0) if not_tile.get(i, -2.0) > -2.0 else
                            float((look_emb[i] @ not_tile_prototypes().T).max(initial=-1.0))
                            for i in range(len(found))], np.float32)
            rows_of = box_features(look_crops, look_emb, boxes, [f.score for f in found], nts)
        return Look(found, boxes, sideways, best, not_tile, guesses, rows_of)

    def read(self, image: np.ndarray, photo: str = "", scale: float = 1.0) -> PhotoReading:
        """Every tile in ``image`` (BGR), named where sure, in reading order. ``scale``: pixels of the photo
        per pixel of ``image`` where it was decoded reduced (:data:`READ_SIDE`): boxes are given in the
        photo's pixels. A box on something that is no tile (the verifier, :mod:`vision.photos.verifier`; without
        it :func:`is_tile`) is dropped, counted in :attr:`PhotoReading.dropped`."""
        start = time.perf_counter()
        seen = self.look(image)
        found, boxes, sideways = seen.found, seen.boxes, seen.sideways
        best, not_tile, guesses = seen.best, seen.not_tile, seen.guesses
        if self.keep_all or getattr(self.finder, "given", False):
            kept = list(range(len(found)))
        elif seen.features is not None:
            keep = self.verifier.is_tile(seen.features)
            kept = [i for i in range(len(found)) if keep[i]]
        else:
            median = float(np.median([f.score for f in found])) if found else 0.0
            kept = [i for i, f in enumerate(found) if is_tile(f.score, median)]
        first = dict(best)
        # the boxes dropped as no tile are never shown: only the faces kept pay for a second look
        kept_set = set(kept)
        self._second_look(image, boxes, sideways, best, [f.face_up and i in kept_set for i, f in enumerate(found)])
        for i, got in best.items():
            if got != first[i]:  # a second look's name leads the guesses
                guesses[i] = [(got[0], got[1]), *((k, v) for k, v in guesses[i] if k != got[0])][:GUESSES]
        named = {i: self._named(got, boxes[i]) for i, got in best.items()}
        # what the finder took for a back is a face where the embedding is sure of it (the blank white dragon
        # of many sets); the embedding knows backs (its "not a tile" kinds), so a real back stays one
        face_up = [f.face_up or (i in best and best[i][1] >= SURE_FACE and named[i][0] is not None)
                   for i, f in enumerate(found)]
        layout = reading_order([boxes[i] for i in kept])
        group_of = {kept[i]: g for g, members in enumerate(layout.groups) for i in members}
        h, w = image.shape[:2]
        if scale != 1.0:
            h, w = round(h * scale), round(w * scale)
        tiles = []
        for i in (kept[k] for k in layout.order):
            name, conf = named.get(i, (None, 0.0))
            box = boxes[i] if scale == 1.0 else _scaled(boxes[i], scale, w, h)
            if not face_up[i]:
                name = None
            got = best.get(i)
            lead = got[1] - got[2] if got else 0.0
            sure = name is not None and self.is_sure(got, boxes[i])
            shown = tuple(guesses.get(i, ())) if face_up[i] else ()
            tiles.append(ReadTile(name, box, float(conf), face_up[i], group_of[i], sideways[i], sure,
                                  tuple((k, round(v, 3)) for k, v in shown), float(lead), float(found[i].score),
                                  float(not_tile.get(i, -2.0))))  # fmt: skip
        groups = _positions(layout.groups)
        ms = (time.perf_counter() - start) * 1000
        log.debug("%s: %d tiles, %d unknown, %d dropped, %.0f ms", photo, len(tiles),
                  sum(t.tile is None for t in tiles), len(found) - len(kept), ms)  # fmt: skip
        return PhotoReading(photo, w, h, tiles, groups, ms, len(found) - len(kept), list(layout.rows))

    def is_sure(self, got: tuple[str, float, float] | None, box: Box) -> bool:
        """A name shown as sure: past :attr:`sure_gates` (similarity, lead; :data:`SURE_GATES`), calibrated on sets
        held out (``training/calibrate_sure.py``), and never on a box out of a tile's proportions. A club's enrolled set
        keeps its own gates where they are stricter."""
        if got is None or not _in_shape(box):
            return False
        sim_gate = max(self.sure_gates[0], getattr(self.classifier, "min_similarity", 0.0))
        lead_gate = max(self.sure_gates[1], getattr(self.classifier, "min_margin", 0.0))
        return got[1] >= sim_gate and got[1] - got[2] >= lead_gate


def _positions(groups: list[list[int]]) -> list[list[int]]:
    """Groups of indices into the kept boxes -> groups of positions in reading order."""
    position = {i: k for k, i in enumerate(i for g in groups for i in g)}
    return [[position[i] for i in g] for g in groups]


def is_tile(score: float, photo_median: float) -> bool:
    """Whether a finder's box is kept as a tile, or dropped as something else the finder took for one (a printed
    page, coins, a camera, a chair): a box the finder is sure of is kept (:data:`NOT_A_TILE` ``finder_sure``); a
    weaker one only in a photo whose boxes are not weak as a whole (their median score at least ``photo_median``):
    a photo of tiles has many boxes the finder is sure of, a photo of the room a scatter of weak ones. Chosen on the
    clutter photos trained on and half of the roboflow ``valid`` photos; what the embedding says of a box did not
    tell clutter from tiles there (``bench/hands.py`` measures the rule on the other half and unseen clutter)."""
    return score >= NOT_A_TILE["finder_sure"] or photo_median >= NOT_A_TILE["photo_median"]


def _in_shape(box: Box) -> bool:
    """A box of a tile's proportions (:data:`~vision.photos.layout.TILE_PROPORTIONS`)."""
    return tile_shaped(box[3] - box[1], max(1, box[2] - box[0]))


def _tighter(box: Box) -> list[Box]:
    """Boxes inside ``box`` where the face may lie: a finder's box around a standing tile holds its body
    too (the face in its upper or lower part, or to one side), or some table around it."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    dx, dy = round(0.1 * w), round(0.1 * h)
    kx, ky = round(0.2 * w), round(0.2 * h)
    return [(x0 + dx, y0 + dy, x1 - dx, y1 - dy), (x0, y0, x1, y1 - ky), (x0, y0 + ky, x1, y1),
            (x0, y0, x1 - kx, y1), (x0 + kx, y0, x1, y1)]  # fmt: skip


def _scaled(box: Box, scale: float, w: int, h: int) -> Box:
    x0, y0, x1, y1 = box
    return (max(0, round(x0 * scale)), max(0, round(y0 * scale)), min(w, round(x1 * scale)), min(h, round(y1 * scale)))


_GREEN, _AMBER, _RED, _GREY = (40, 190, 40), (30, 160, 245), (40, 40, 230), (150, 150, 150)


def annotate(image: np.ndarray, reading: PhotoReading) -> np.ndarray:
    """A copy of the photo with each tile's box and name (green: sure, amber: a best guess not sure, shown ``5p?``;
    red: unknown; grey: a back); ``image``
    may be the photo decoded reduced: the boxes are scaled to it."""
    out = image.copy()
    k = image.shape[1] / reading.width if reading.width else 1.0
    scale = max(0.4, min(out.shape[:2]) / 900)
    thick = max(1, round(scale * 2))
    for t in reading.tiles:
        x0, y0, x1, y1 = (round(v * k) for v in t.box)
        colour = _GREY if not t.face_up else (_RED if not t.tile else _GREEN if t.sure else _AMBER)
        cv2.rectangle(out, (x0, y0), (x1, y1), colour, thick)
        label = "back" if not t.face_up else (t.tile or "?") + ("" if t.sure or not t.tile else "?")
        (tw, th), base = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
        ty = y0 - 3 if y0 - th - 6 > 0 else y1 + th + 3
        cv2.rectangle(out, (x0, ty - th - 3), (x0 + tw + 4, ty + base), colour, -1)
        cv2.putText(out, label, (x0 + 2, ty), cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255), thick, cv2.LINE_AA)
    return out
