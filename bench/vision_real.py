"""Real-pixel sections of ``bench/vision.py``: the learnt embedding beside the LDA on the same crops.

(f) real photos, a set enrolled from at most 3 real images per kind, the rest read: the Camerash
    measuring half (never trained on) and the roboflow ``valid`` split enrolled from ``train`` crops
    (3 picked at random per kind, and the 3 most typical of each kind's train crops: the ones nearest
    the kind's mean embedding, as a club enrolls good pictures of its own set), read in any of the four
    orientations (a photo's box does not say which way its tile lies); labels as corrected by
    ``vision.photos.data`` (the line "as published" reads them as the publisher wrote them);
(g) a colouring the network never saw (FluffyStuff inverted to a dark face, and FluffyStuff with its
    ink hues turned and channels swapped), enrolled from that artwork only, crops cut at 64 and 40 px
    tall and turned 0/90/180/270, read by ``classify_any_orientation``;
(h) real photos of sets never enrolled, enrolled from artwork of a similar design (FluffyStuff,
    the project's drawn tiles): right / wrong / unknown, flowers and seasons rejected.

Every figure is over crops the network did not train on; see training/train_embedding.py.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, not bench/, comes first

from vision.naming.classifier import TILES, TileClassifier
from vision.naming.embedding import EmbeddingClassifier, shared_embedder
from vision.naming.tile_set import rotate
from vision.photos.data import CAMERASH, ROBOFLOW, PhotoCrop, camerash_photos, roboflow_labellings

Factory = Callable[[], "TileClassifier | EmbeddingClassifier"]
METHODS: dict[str, Factory] = {"embedding": EmbeddingClassifier, "lda": TileClassifier}


@cache
def _roboflow_labellings(split: str) -> tuple[list[PhotoCrop], list[PhotoCrop]]:
    return roboflow_labellings(split)


def _roboflow(split: str, corrected: bool = True) -> list[PhotoCrop]:
    """The roboflow crops of ``split``, decoded once per run: (f) and (h) read the same photos, (f) the ``valid``
    ones with labels as corrected and as published."""
    return _roboflow_labellings(split)[0 if corrected else 1]


def _sample(crops: Sequence[PhotoCrop], limit: int, seed: int) -> list[tuple[str | None, np.ndarray]]:
    """(truth, crop) of ``limit`` crops drawn by a seeded sample (every crop where ``limit`` is 0); the crops are
    drawn before their images are read, so that only the photos drawn are decoded."""
    if limit:
        crops = random.Random(seed).sample(list(crops), min(limit, len(crops)))
    return [(c.tile, c.image) for c in crops]


@lru_cache(maxsize=1)
def _camerash_measure() -> list[PhotoCrop]:
    """The Camerash measuring half, decoded once per run: (f) and (h) read the same photos."""
    return camerash_photos(half=1)


@dataclass
class Tally:
    known: int = 0
    right: int = 0
    wrong: int = 0
    unknown: int = 0
    raw: int = 0  # right if nothing were rejected
    others: int = 0
    others_rejected: int = 0
    ms: float = 0.0
    confusions: dict[tuple[str, str], int] = field(default_factory=dict)

    def line(self) -> str:
        k = max(1, self.known)
        conf = ", ".join(f"{a}->{b} x{n}" for (a, b), n in sorted(self.confusions.items(), key=lambda kv: -kv[1])[:4])
        oth = (f"; flowers/seasons unknown {100 * self.others_rejected / self.others:.1f} % of {self.others}"
               if self.others else "")  # fmt: skip
        return (f"right {100 * self.right / k:.2f} %, wrong {100 * self.wrong / k:.2f} %, unknown "
                f"{100 * self.unknown / k:.2f} % of {self.known} (raw top-1 {100 * self.raw / k:.2f} %){oth}; "
                f"{self.ms:.2f} ms/crop" + (f"; worst: {conf}" if conf else ""))


#: (id of a crop, turn) -> (the crop, its one-look embedding, the network seconds it took): the sections read the
#: same photos with several enrolled sets, and the network's look at a crop does not depend on the set, so each
#: look is made once per run (the crop is kept here, so that its id is not reused)
_LOOKS: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, float]] = {}


def looks(images: Sequence[np.ndarray], rotations: Sequence[int]) -> tuple[np.ndarray, float]:
    """(len(images), len(rotations), 128): each crop turned by each of ``rotations`` and embedded by the shared
    network, one look per row as :meth:`EmbeddingClassifier.classify_any_orientation` makes them; and the network
    seconds those looks took when they were made (a reading's cost, whichever reading made them first)."""
    todo = {(id(img), r): (img, r) for img in images for r in rotations if (id(img), r) not in _LOOKS}
    batch = list(todo.values())
    for start in range(0, len(batch), 64):
        part = batch[start:start + 64]
        t0 = time.perf_counter()
        z = shared_embedder()([rotate(img, r) for img, r in part])
        each = (time.perf_counter() - t0) / len(part)
        for (img, r), row in zip(part, z, strict=True):
            _LOOKS[id(img), r] = (img, row, each)
    got = [[_LOOKS[id(img), r] for r in rotations] for img in images]
    views = np.stack([[look[1] for look in row] for row in got]) if got else np.zeros((0, len(rotations), 128))
    return views, sum(look[2] for row in got for look in row)


def read_all(clf: TileClassifier | EmbeddingClassifier, samples: Sequence[tuple[str | None, np.ndarray]],
             any_orientation: bool = False) -> Tally:  # fmt: skip
    """Read every sample (truth, crop) and tally the answers; ``ms`` per crop counts the network passes of its
    looks (:func:`looks`) whether this reading made them or an earlier one did."""
    t = Tally()
    t0 = time.perf_counter()
    views, network_s = None, 0.0
    if isinstance(clf, EmbeddingClassifier):
        rotations = (0, 180, 90, 270) if any_orientation else (0, 180) if clf.half_turn else (0,)
        views, network_s = looks([img for _, img in samples], rotations)
        t0 = time.perf_counter()  # from here: the looks are counted at what they cost when made (network_s)
    for k, (truth, img) in enumerate(samples):
        if any_orientation:
            tile, _, _ = clf.classify_any_orientation(img) if views is None else clf.any_orientation_of(views[k])
            raw = tile
        else:
            if views is None:
                best, s1, s2 = clf.scores(img)
            else:
                emb = clf.both_ways_of(views[k, :1], views[k, 1:]) if clf.half_turn else views[k, :1]
                best, s1, s2 = clf.scores_of(emb)[0]
            tile, _ = clf.decide(best, s1, s2)
            raw = best
        if truth is None:
            t.others += 1
            t.others_rejected += tile is None
            continue
        t.known += 1
        t.raw += raw == truth
        if tile is None:
            t.unknown += 1
        elif tile == truth:
            t.right += 1
        else:
            t.wrong += 1
            t.confusions[(truth, tile)] = t.confusions.get((truth, tile), 0) + 1
    t.ms = 1000 * (time.perf_counter() - t0 + network_s) / max(1, len(samples))
    return t


def pick_enrollment(crops: Sequence[PhotoCrop], per_kind: int, seed: int) -> dict[str, list[np.ndarray]]:
    """Up to ``per_kind`` crops of each riichi kind, chosen by a seeded shuffle."""
    rng = random.Random(seed)
    order = list(crops)
    rng.shuffle(order)
    out: dict[str, list[np.ndarray]] = {}
    for c in order:
        if c.tile is not None and len(out.setdefault(c.tile, [])) < per_kind:
            out[c.tile].append(c.image)
    return out


def pick_typical(crops: Sequence[PhotoCrop], per_kind: int) -> dict[str, list[np.ndarray]]:
    """The ``per_kind`` crops of each kind nearest the kind's mean in the learnt embedding."""
    by_kind: dict[str, list[np.ndarray]] = {}
    for c in crops:
        if c.tile is not None:
            by_kind.setdefault(c.tile, []).append(c.image)
    out = {}
    for tile, images in by_kind.items():
        z = shared_embedder()(images)
        mean = z.mean(axis=0)
        out[tile] = [images[i] for i in np.argsort(-(z @ mean))[:per_kind]]
    return out


def real_enrolled(methods: Sequence[str], per_kind: int = 3, limit: int = 0, seed: int = 5) -> list[str]:
    """(f): enroll <= per_kind real images per kind, read the rest of that collection."""
    lines = []
    if CAMERASH.is_dir():
        measure = _camerash_measure()
        enroll = pick_enrollment(measure, per_kind, seed)
        used = {id(img) for imgs in enroll.values() for img in imgs}
        rest = [(c.tile, c.image) for c in measure if id(c.image) not in used][: limit or None]
        for m in methods:
            clf = METHODS[m]()
            clf.enroll(enroll)
            lines.append(f"  Camerash measuring half, {per_kind} photos per kind enrolled, {m:<9} "
                         f"{read_all(clf, rest).line()}")
    if ROBOFLOW.is_dir():
        train = _roboflow("train")
        # a quick run picks the most typical among a sample of the train crops, not all of them (each embedded)
        typical_from = random.Random(seed).sample(train, min(4 * limit, len(train))) if limit else train
        picks = {"at random": pick_enrollment(train, per_kind, seed),
                 "most typical": pick_typical(typical_from, per_kind)}
        valid = _sample(_roboflow("valid"), limit, seed)
        published = _sample(_roboflow("valid", corrected=False), limit, seed)
        for how, enroll in picks.items():
            for m in methods:
                clf = METHODS[m]()
                clf.enroll(enroll)
                lines.append(f"  roboflow valid, {per_kind} train crops per kind ({how}), {m:<9} "
                             f"{read_all(clf, valid, any_orientation=True).line()}")
                if how == "most typical":
                    lines.append(f"    ... labels as published (uncorrected), {m:<9} "
                                 f"{read_all(clf, published, any_orientation=True).line()}")
    return lines


# ------------------------------------------------------------------------------------------- (g)
def invert(face: np.ndarray) -> np.ndarray:
    """A dark-faced colouring: every channel inverted (ivory body -> near black, black ink -> white)."""
    return 255 - face


def recolour(face: np.ndarray) -> np.ndarray:
    """Ink hues turned by a third of the circle and blue/red swapped: red fives read blue, green bamboo red."""
    hsv = cv2.cvtColor(face, cv2.COLOR_BGR2HSV)
    hsv[..., 0] = (hsv[..., 0].astype(np.int32) + 60) % 180
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[..., ::-1].copy()


def camera_crop(face: np.ndarray, height: int, rng: np.random.Generator) -> np.ndarray:
    """The face as a camera crop ``height`` px tall: corners off by up to 3 %, a small turn, light,
    blur, noise, JPEG (the bench's own, not the training's augmentation)."""
    h, w = face.shape[:2]
    src = (np.array([[0, 0], [w, 0], [w, h], [0, h]]) + rng.uniform(-0.03, 0.03, (4, 2)) * [w, h]).astype(np.float32)
    ww = round(height * 0.75)
    m = cv2.getPerspectiveTransform(src, np.float32([[0, 0], [ww, 0], [ww, height], [0, height]]))
    out = cv2.warpPerspective(face, m, (ww, height), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)
    out = np.clip(out.astype(np.float32) * rng.uniform(0.8, 1.15) + rng.uniform(-15, 15), 0, 255)
    out = cv2.GaussianBlur(out, (0, 0), rng.uniform(0.4, 0.9))
    out = np.clip(out + rng.normal(0, 3, out.shape), 0, 255).astype(np.uint8)
    _, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(70, 95))])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def unseen_colouring(methods: Sequence[str], faces: dict[str, np.ndarray], per_kind: int = 8,
                     seed: int = 3) -> list[str]:  # fmt: skip
    """(g): enroll the recoloured artwork, read its crops at 64 / 40 px in the four orientations."""
    lines = []
    rots = {0: None, 90: cv2.ROTATE_90_CLOCKWISE, 180: cv2.ROTATE_180, 270: cv2.ROTATE_90_COUNTERCLOCKWISE}
    for cname, fn in (("inverted (dark face)", invert), ("ink hues turned, R/B swapped", recolour)):
        art = {t: fn(f) for t, f in faces.items()}
        for m in methods:
            clf = METHODS[m]()
            clf.enroll(art)
            for height in (64, 40):
                rng = np.random.default_rng(seed)
                samples = []
                for t in TILES:
                    for i in range(per_kind):
                        crop = camera_crop(art[t], height, rng)
                        r = rots[(i % 4) * 90]
                        samples.append((t, crop if r is None else cv2.rotate(crop, r)))
                lines.append(f"  {cname:<28} {m:<9} {height} px, 4 orientations: "
                             f"{read_all(clf, samples, any_orientation=True).line()}")
    return lines


def artwork_enrolled(methods: Sequence[str], sets: dict[str, dict[str, np.ndarray]], limit: int = 0,
                     enrolled: Mapping[tuple[str, str], TileClassifier | EmbeddingClassifier] | None = None,
                     ) -> list[str]:  # fmt: skip
    """(h): real photos of sets never enrolled, enrolled from artwork only. ``enrolled``: (set, method) ->
    that set's artwork already enrolled by ``METHODS[method]()`` (bench/vision.py's (a) classifiers), so that
    the same enrollment is not made twice."""
    lines = []
    data: list[tuple[str, list[tuple[str | None, np.ndarray]]]] = []
    if CAMERASH.is_dir():
        measure = _camerash_measure()
        data.append(("Camerash measuring half", [(c.tile, c.image) for c in measure][: limit or None]))
    if ROBOFLOW.is_dir():
        data.append(("roboflow valid", _sample(_roboflow("valid"), limit, 1)))
    for set_name, faces in sets.items():
        for m in methods:
            clf = (enrolled or {}).get((set_name, m))
            if clf is None:
                clf = METHODS[m]()
                clf.enroll(faces)
            for dname, samples in data:
                lines.append(f"  {dname}, enrolled from {set_name} art, {m:<9} {read_all(clf, samples).line()}")
    return lines
