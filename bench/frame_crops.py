"""The tile classifier alone, on crops cut from rendered frames: `python bench/frame_crops.py`.

Frames are rendered as in ``bench/vision.py`` (its ``random_view`` and ``BENCH_EFFECTS``: light
gradient, glare, noise, blur, JPEG, jittered tiles; overhead and 35-degree oblique cameras
alternate). Every face-up tile's upright crop is cut straight from the frame by warping its true
face corners (``TileTruth.corners_px``: TL, TR, BR, BL) to ``CROP_SIZE`` (39x52), exactly as
``TileDetector.crop`` does, so the figures measure the classifier and not detection.

Two enrollments:

- ``art``: the tile set's clean faces (``TileSet.faces``), as ``bench/vision.py`` does;
- ``frames``: the crops of ONE rendered frame in which each of the 37 kinds lies once (a club lays
  its tiles out on its table and the camera sees them), each enrolled under its true name. That
  frame has its own seed and its own camera (20-degree oblique, turned 15 degrees), never one of
  the test frames' seeds or cameras.

Prints, per tile set and enrollment: top-1, wrong, unknown, ms per ``classify`` on one core, red
fives, the worst confusions and the most often unknown kinds. ``--misalign`` also shifts and turns
each crop's corners as the detector's nominal slots would (up to 1.5 mm / 3 degrees off the tile);
``--no-slot-aug`` enrolls copies cut along their exact corners (the classifier's default cuts them
up to 1.8 px / 3 degrees off, as the detector's slots are).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.vision import BENCH_EFFECTS, random_view
from hardware_sims.camera_render import CameraPose, Discard, SeatView, TableView, render
from hardware_sims.tile_art import TILE_NAMES, TileSet, drawn_tile_set, load_tile_set
from vision.naming.classifier import TileClassifier

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FLUFFY = DATA / "tiles-fluffystuff"

CROP_SIZE = (39, 52)  # vision.table.detection.CROP_SIZE
TEST_CAMERAS = (CameraPose.overhead(), CameraPose.oblique(35.0))
ENROLL_CAMERA = CameraPose(tilt_deg=20.0, azimuth_deg=15.0)
ENROLL_SEED = 424242  # test frames use --seed (default 1) and never this one

Sample = tuple[str, np.ndarray]


def tile_sets(which: str) -> dict[str, TileSet]:
    out: dict[str, TileSet] = {}
    if which in ("drawn", "both"):
        out["drawn"] = drawn_tile_set()
    if which in ("fluffy", "both"):
        if not FLUFFY.is_dir():
            raise SystemExit(f"FluffyStuff tiles not found at {FLUFFY}")
        out["fluffy"] = load_tile_set(FLUFFY)
    return out


def cut(frame: np.ndarray, corners_px: np.ndarray, size: tuple[int, int] = CROP_SIZE) -> np.ndarray:
    """Upright crop: the face quadrilateral (TL, TR, BR, BL) warped to ``size`` (as TileDetector.crop)."""
    w, h = size
    m = cv2.getPerspectiveTransform(np.float32(corners_px), np.float32([[0, 0], [w, 0], [w, h], [0, h]]))
    return cv2.warpPerspective(frame, m, size, flags=cv2.INTER_LINEAR)


def misaligned(corners_px: np.ndarray, rng: np.random.Generator, mm: float = 1.5, deg: float = 3.0) -> np.ndarray:
    """The corners moved as a nominal slot is off a jittered tile: shift up to ``mm``, turn up to ``deg``."""
    c = np.float64(corners_px)
    px_per_mm = float(np.linalg.norm(c[1] - c[0])) / 26.0
    centre = c.mean(axis=0)
    a = np.radians(rng.uniform(-deg, deg))
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    shift = rng.uniform(-mm, mm, 2) * px_per_mm
    return (c - centre) @ rot.T + centre + shift


def frame_crops(tiles: TileSet, n_tiles: int, seed: int, misalign: bool = False) -> list[Sample]:
    """(truth, crop) for the face-up tiles of rendered bench frames until ``n_tiles`` are collected."""
    rng = np.random.default_rng(seed)
    jitter_rng = np.random.default_rng(seed + 7919)
    out: list[Sample] = []
    frames = 0
    while len(out) < n_tiles:
        camera = TEST_CAMERAS[frames % len(TEST_CAMERAS)]
        frame, truth = render(random_view(rng), camera=camera, tiles=tiles, effects=BENCH_EFFECTS, rng=rng)
        frames += 1
        for t in truth.tiles:
            if t.tile is None or t.occluded:
                continue
            corners = misaligned(t.corners_px, jitter_rng) if misalign else t.corners_px
            out.append((t.tile, cut(frame, corners)))
    return out[:n_tiles]


def enrollment_view() -> TableView:
    """All 37 faces once: 12 in seat 0's pond, 12 in seat 1's pond, 13 in seat 0's hand."""
    names = list(TILE_NAMES)
    return TableView(
        (
            SeatView(tuple(Discard(t) for t in names[:12]), hand=tuple(names[24:])),
            SeatView(tuple(Discard(t) for t in names[12:24])),
            SeatView(),
            SeatView(),
        )
    )


def enrollment_crops(tiles: TileSet, seed: int = ENROLL_SEED) -> dict[str, np.ndarray]:
    """One crop per kind from one rendered frame (own seed, own camera, the bench's effects)."""
    rng = np.random.default_rng(seed)
    frame, truth = render(enrollment_view(), camera=ENROLL_CAMERA, tiles=tiles, effects=BENCH_EFFECTS, rng=rng)
    crops = {t.tile: cut(frame, t.corners_px) for t in truth.tiles if t.tile is not None}
    missing = set(TILE_NAMES) - set(crops)
    if missing:
        raise RuntimeError(f"enrollment frame lacks {sorted(missing)}")
    return crops


@dataclass
class Score:
    tiles: int = 0
    correct: int = 0
    wrong: int = 0
    unknown: int = 0
    red: int = 0
    red_correct: int = 0
    seconds: float = 0.0
    confusions: Counter[tuple[str, str]] = field(default_factory=Counter)
    unknowns: Counter[str] = field(default_factory=Counter)

    def line(self) -> str:
        def pct(a: int, b: int) -> str:
            return f"{100 * a / b:.2f} %" if b else "-"

        conf = ", ".join(f"{t}->{g} x{n}" for (t, g), n in self.confusions.most_common(6)) or "none"
        unk = ", ".join(f"{t} x{n}" for t, n in self.unknowns.most_common(6)) or "none"
        return (
            f"top-1 {pct(self.correct, self.tiles)}, wrong {pct(self.wrong, self.tiles)}, unknown "
            f"{pct(self.unknown, self.tiles)} of {self.tiles}; {1000 * self.seconds / max(1, self.tiles):.3f} ms/tile; "
            f"red fives {pct(self.red_correct, self.red)} of {self.red}\n      worst confusions: {conf}\n"
            f"      most unknown: {unk}"
        )


def score(clf: TileClassifier, samples: list[Sample]) -> Score:
    s = Score()
    for truth, crop in samples:
        t0 = time.perf_counter()
        got, _ = clf.classify(crop)
        s.seconds += time.perf_counter() - t0
        s.tiles += 1
        red = truth.endswith("r")
        s.red += red
        if got is None:
            s.unknown += 1
            s.unknowns[truth] += 1
        elif got == truth:
            s.correct += 1
            s.red_correct += red
        else:
            s.wrong += 1
            s.confusions[(truth, got)] += 1
    return s


def enrolled(tiles: TileSet, mode: str, slot_aug: bool = True) -> TileClassifier:
    clf = TileClassifier() if slot_aug else TileClassifier(slot_shift_px=0.0, slot_turn_deg=0.0)
    clf.enroll(tiles.faces if mode == "art" else enrollment_crops(tiles))
    return clf


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiles", type=int, default=10000, help="test crops per tile set")
    ap.add_argument("--set", default="both", choices=("drawn", "fluffy", "both"))
    ap.add_argument("--enroll", default="art,frames", help="art, frames or art,frames")
    ap.add_argument("--seed", type=int, default=1, help="rng seed of the test frames")
    ap.add_argument("--misalign", action="store_true", help="crop along corners off by up to 1.5 mm / 3 deg")
    ap.add_argument(
        "--no-slot-aug",
        action="store_true",
        help="enroll copies cut along their exact corners (TileClassifier slot_shift_px=0, slot_turn_deg=0)",
    )
    ap.add_argument("--quick", action="store_true", help="200 crops of the drawn set, enrolled from art (the tests)")
    args = ap.parse_args()
    if args.quick:
        args.tiles, args.set, args.enroll = 200, "drawn", "art"
    if args.seed == ENROLL_SEED:
        raise SystemExit("the test seed must differ from the enrollment frame's seed")
    cv2.setNumThreads(1)
    print(
        f"options: --tiles {args.tiles} --set {args.set} --enroll {args.enroll} --seed {args.seed}"
        f"{' --misalign' if args.misalign else ''}{' --no-slot-aug' if args.no_slot_aug else ''}; "
        f"cv2 threads {cv2.getNumThreads()}, OpenCV {cv2.__version__}"
    )
    for name, ts in tile_sets(args.set).items():
        t0 = time.perf_counter()
        samples = frame_crops(ts, args.tiles, args.seed, args.misalign)
        print(f"{name}: {len(samples)} crops from rendered frames ({time.perf_counter() - t0:.0f} s)", flush=True)
        for mode in args.enroll.split(","):
            t0 = time.perf_counter()
            clf = enrolled(ts, mode, not args.no_slot_aug)
            t_enroll = time.perf_counter() - t0
            print(f"  {name:<6} enrolled from {mode:<6} ({t_enroll:.1f} s): {score(clf, samples).line()}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
