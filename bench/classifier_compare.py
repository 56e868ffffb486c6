"""Compare tile classifiers on synthetic and real tiles: `python bench/classifier_compare.py`.

Prints, per method and data set: top-1 accuracy, unknown rate, wrong-answer rate, the
rejection of flowers/seasons (they must come out unknown) and ms per classification on
one core. The figures in docs/vision.md come from this script. Needs ../shared/data.

Methods (same normalisation, vision.naming.features):
  template  cv2.matchTemplate TM_CCOEFF_NORMED on grey (+-2 px search) + colour-layout cosine
  lda       vision.TileClassifier: HOG + fine top HOG + colour, camera-path augmentation, discriminant
            metric, nearest kind mean (was hog-knn: cosine 1-NN, until the LDA metric replaced it)
  hog-svm   same features and augmentation, cv2.ml linear SVM (no confidence: never unknown)
  orb       reported as keypoint counts only: see docs/vision.md
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import csv
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision.naming.classifier import FLUFFY_NAMES, TileClassifier
from vision.naming.features import (
    CANON_H,
    CANON_W,
    Augmenter,
    colour_features,
    combined_features,
    compose_on_body,
    normalise,
    photo_label_to_tile,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FLUFFY = DATA / "tiles-fluffystuff"
PHOTOS = DATA / "tiles-photos-camerash"

Scorer = Callable[[np.ndarray], tuple[str, float, float]]


# ---------------------------------------------------------------------------- data


@cache
def fluffy_tiles() -> dict[str, np.ndarray]:
    """FluffyStuff artwork composited on a drawn body, by mjai tile (composed once per run: the synthetic set
    and the enrollment use the same faces; callers only read them)."""
    out = {}
    for stem, tile in FLUFFY_NAMES.items():
        out[tile] = compose_on_body(cv2.imread(str(FLUFFY / f"{stem}.png"), cv2.IMREAD_UNCHANGED))
    return out


def fluffy_unrelated() -> list[np.ndarray]:
    """Not a face-up tile: the set's back and '?' blank, plus noise."""
    rng = np.random.default_rng(7)
    ims = [compose_on_body(cv2.imread(str(FLUFFY / f"{s}.png"), cv2.IMREAD_UNCHANGED)) for s in ("Back", "Blank")]
    ims += [rng.integers(0, 256, (48, 36, 3), dtype=np.uint8) for _ in range(4)]
    return ims


def frame_sized_augmenters(seed: int) -> list[Augmenter]:
    """Test distortions at tile sizes seen in a 1920x1080 overhead frame (30x40 .. 45x60 px)."""
    return [
        Augmenter(
            rotation_deg=5, scale=0.08, shift=0.05, perspective=0.07, blur_sigma=1.0, noise_sigma=10,
            brightness=0.35, contrast=0.25, colour_cast=0.1, jpeg_quality_min=55, out_size=size, seed=seed + i,
        )
        for i, size in enumerate([(30, 40), (36, 48), (45, 60)])
    ]  # fmt: skip


def synthetic_set(per_tile: int, seed: int = 1000) -> list[tuple[str | None, np.ndarray]]:
    """Augmented FluffyStuff crops (red fives included) and unrelated images (label None)."""
    augs = frame_sized_augmenters(seed)
    out: list[tuple[str | None, np.ndarray]] = []
    for tile, img in fluffy_tiles().items():
        out += [(tile, augs[i % len(augs)](img)) for i in range(per_tile)]
    for img in fluffy_unrelated():
        out += [(None, augs[i % len(augs)](img)) for i in range(per_tile // 2)]
    return out


def photo_rows() -> list[tuple[str, str | None, str]]:
    """(file, tile or None for flowers/seasons, label) for every real photo, in data.csv order."""
    with open(PHOTOS / "data.csv", newline="") as fh:
        return [(r["image-name"], photo_label_to_tile(r["label-name"]), r["label-name"]) for r in csv.DictReader(fh)]


@cache
def photo_image(name: str) -> np.ndarray:
    """The BGR image of the real photo ``name``, decoded once per run, and only where it is read."""
    return cv2.imread(str(PHOTOS / "tiles-resized" / name))


def photo_images(step: int = 1) -> tuple[tuple[str | None, np.ndarray], ...]:
    """(tile or None, BGR image) of every ``step``-th real photo in data.csv order."""
    return tuple((tile, photo_image(name)) for name, tile, _ in photo_rows()[::step])


def photo_split(step: int = 1) -> tuple[dict[str, np.ndarray], list[tuple[str | None, np.ndarray]]]:
    """First photo of each riichi kind for enrollment; every other photo (flowers included) for test, every
    ``step``-th of them."""
    enroll: dict[str, np.ndarray] = {}
    test: list[tuple[str | None, str]] = []
    for name, tile, _ in photo_rows():
        if tile is not None and tile not in enroll:
            enroll[tile] = photo_image(name)
        else:
            test.append((tile, name))
    return enroll, [(tile, photo_image(name)) for tile, name in test[::step]]


# ---------------------------------------------------------------------------- methods


@dataclass
class TemplateMatcher:
    """Grey TM_CCOEFF_NORMED with a +-2 px search window, blended with the colour-layout cosine."""

    colour_blend: float = 0.25
    pad: int = 2
    _tiles: list[str] = field(default_factory=list)
    _grey: list[np.ndarray] = field(default_factory=list)
    _colour: list[np.ndarray] = field(default_factory=list)
    _colour_norm: list[np.floating] = field(default_factory=list)  # each template's colour block's norm

    def enroll(self, images: dict[str, np.ndarray]) -> None:
        for tile, img in images.items():
            canon = normalise(img)
            self._tiles.append(tile)
            self._grey.append(cv2.cvtColor(canon, cv2.COLOR_BGR2GRAY))
            self._colour.append(colour_features(canon))
            self._colour_norm.append(np.linalg.norm(self._colour[-1]))

    def scores(self, image: np.ndarray) -> tuple[str, float, float]:
        canon = normalise(image)
        big = cv2.resize(canon, (CANON_W + 2 * self.pad, CANON_H + 2 * self.pad))
        grey = cv2.cvtColor(big, cv2.COLOR_BGR2GRAY)
        col = colour_features(canon)
        col_norm = np.linalg.norm(col)
        s = np.array(
            [
                (1 - self.colour_blend) * float(cv2.matchTemplate(grey, t, cv2.TM_CCOEFF_NORMED).max())
                + self.colour_blend * float(c @ col) / (float(c_norm * col_norm) + 1e-6)
                for t, c, c_norm in zip(self._grey, self._colour, self._colour_norm, strict=True)
            ]
        )
        order = np.argsort(-s)
        return self._tiles[order[0]], float(s[order[0]]), float(s[order[1]])


@dataclass
class HogSvm:
    """cv2.ml linear SVM on the same augmented HOG+colour features as the kNN."""

    augment_per_image: int = 40
    _svm: cv2.ml.SVM | None = None
    _tiles: list[str] = field(default_factory=list)

    def enroll(self, images: dict[str, np.ndarray]) -> None:
        aug = Augmenter(seed=0, jpeg_quality_min=60, resample_h=(36, 60))
        x, y = [], []
        self._tiles = list(images)
        for i, img in enumerate(images.values()):
            x.append(combined_features(normalise(img)))
            y.append(i)
            for _ in range(self.augment_per_image):
                x.append(combined_features(aug(img)))
                y.append(i)
        svm = cv2.ml.SVM_create()
        svm.setType(cv2.ml.SVM_C_SVC)
        svm.setKernel(cv2.ml.SVM_LINEAR)
        svm.setC(10.0)
        svm.train(np.array(x, np.float32), cv2.ml.ROW_SAMPLE, np.array(y, np.int32))
        self._svm = svm

    def scores(self, image: np.ndarray) -> tuple[str, float, float]:
        assert self._svm is not None
        _, r = self._svm.predict(combined_features(normalise(image))[None, :])
        return self._tiles[int(r[0, 0])], 1.0, 0.0


def make_methods(enroll_images: dict[str, np.ndarray],
                 wanted: tuple[str, ...] = ("template", "lda", "hog-svm")) -> dict[str, tuple[Scorer, float, float]]:
    """Enroll the wanted methods on the same images; value = (scorer, min_similarity, min_margin)."""
    methods: dict[str, tuple[Scorer, float, float]] = {}
    if "template" in wanted:
        t = TemplateMatcher()
        t.enroll(enroll_images)
        methods["template"] = (t.scores, 0.55, 0.03)
    if "lda" in wanted:
        k = TileClassifier()
        k.enroll(enroll_images)
        methods["lda"] = (k.scores, k.min_similarity, k.min_margin)
    if "hog-svm" in wanted:
        s = HogSvm()
        s.enroll(enroll_images)
        methods["hog-svm"] = (s.scores, 0.0, 0.0)
    return methods


# ---------------------------------------------------------------------------- measuring


@dataclass
class Result:
    known: int = 0
    correct: int = 0
    unknown: int = 0
    wrong: int = 0
    others: int = 0
    others_rejected: int = 0
    raw_correct: int = 0
    seconds: float = 0.0
    calls: int = 0

    def row(self, method: str, dataset: str) -> str:
        def pct(a: int, b: int) -> str:
            return f"{100 * a / b:6.1f}" if b else "     -"

        ms = 1000 * self.seconds / max(1, self.calls)
        return (
            f"| {dataset:<26} | {method:<8} | {pct(self.correct, self.known)} | {pct(self.raw_correct, self.known)} "
            f"| {pct(self.unknown, self.known)} | {pct(self.wrong, self.known)} "
            f"| {pct(self.others_rejected, self.others)} | {pct(self.others - self.others_rejected, self.others)} "
            f"| {ms:5.2f} |"
        )


def evaluate(scorer: Scorer, thr: tuple[float, float], samples: list[tuple[str | None, np.ndarray]]) -> Result:
    res = Result()
    for truth, img in samples:
        t0 = time.perf_counter()
        tile, s1, s2 = scorer(img)
        res.seconds += time.perf_counter() - t0
        res.calls += 1
        accepted = s1 >= thr[0] and s1 - s2 >= thr[1]
        if truth is None:
            res.others += 1
            res.others_rejected += not accepted
            continue
        res.known += 1
        res.raw_correct += tile == truth
        if not accepted:
            res.unknown += 1
        elif tile == truth:
            res.correct += 1
        else:
            res.wrong += 1
    return res


HEADER = (
    "| data set                   | method   | top-1 %| raw % | unkn % | wrong %| rej. other %| false-acc %| ms |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|---:|"
)


def orb_keypoints(images: list[np.ndarray]) -> float:
    """Mean ORB keypoints on canonical crops (why ORB is not a candidate at frame resolution)."""
    orb = cv2.ORB_create(nfeatures=100, edgeThreshold=8, patchSize=15)
    return float(np.mean([len(orb.detect(cv2.cvtColor(normalise(i), cv2.COLOR_BGR2GRAY), None)) for i in images]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-tile", type=int, default=60, help="augmented test crops per FluffyStuff kind")
    ap.add_argument("--methods", default="template,lda,hog-svm")
    ap.add_argument("--quick", action="store_true",
                    help="5 crops per kind, template matching only, every third photo read (the tests)")
    args = ap.parse_args()
    if args.quick:
        args.per_tile, args.methods = 5, "template"
    if not FLUFFY.is_dir() or not PHOTOS.is_dir():
        print(f"shared data not found under {DATA}", file=sys.stderr)
        return 2
    cv2.setNumThreads(1)
    wanted = args.methods.split(",")
    print(HEADER)

    fl = fluffy_tiles()
    syn = synthetic_set(args.per_tile)
    step = 3 if args.quick else 1  # the same enrollment, a third of the photos read
    enroll_photos, photo_test = photo_split(step)
    all_photos = list(photo_images(step))
    for name, (scorer, a, b) in make_methods(fl, tuple(wanted)).items():
        if name in wanted:
            print(evaluate(scorer, (a, b), syn).row(name, "FluffyStuff augmented"), flush=True)
            print(evaluate(scorer, (a, b), all_photos).row(name, "photos, enrolled artwork"), flush=True)
    for name, (scorer, a, b) in make_methods(enroll_photos, tuple(wanted)).items():
        if name in wanted:
            print(evaluate(scorer, (a, b), photo_test).row(name, "photos, 1 photo per kind"), flush=True)
    print(f"\nORB keypoints on a 36x48 crop (FluffyStuff): {orb_keypoints(list(fl.values())):.1f} mean")
    print(f"synthetic: {len(syn)} crops; photos: {len(photo_test)} test after enrollment of {len(enroll_photos)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
