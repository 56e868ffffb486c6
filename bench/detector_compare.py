"""Our vision pipeline beside the PyPI mahjong-detector: `python bench/detector_compare.py [--frames N]`

Renders N 1920x1080 frames per tile set (the project's drawn tiles and FluffyStuff) exactly as
``bench/vision.py`` does (its ``random_view`` and ``BENCH_EFFECTS``; overhead and 35-degree oblique
cameras alternate) and reads each frame two ways:

1. mahjong-detector (a YOLO ONNX model run with onnxruntime; ``preprocess_image``: grey,
   autocontrast, letterbox to 640x640; ``predict``: confidence > 0.5, NMS IoU 0.5). A detection counts
   for the face-up tile whose pixel polygon (``TileTruth.corners_px``) holds the box centre, each tile
   at most once (highest confidence first); detections on no face-up tile are counted as extra. It
   has no red fives (5mr is scored as 5m) and names honours tou/nan/sha/pe/haku/hatsu/chun.
2. ``vision.table.pipeline.FramePipeline`` with ``reset_cache()`` before each frame (cold: every tile
   classified), matched to the truth by (zone, seat, index) as ``bench/vision.py``'s ``accuracy()``.

Prints per reader: face-up tiles in the truth, tiles found (share), named right and named wrong (shares
of all face-up truth tiles), and median / p95 ms per frame on one core (OMP_NUM_THREADS=1,
``cv2.setNumThreads(1)``, onnxruntime intra/inter-op threads 1).

mahjong-detector is NOT a project dependency: install it into the venv only for this comparison
(``pip install mahjong-detector``, which pulls onnxruntime, Pillow, flatbuffers and protobuf) and uninstall
them afterwards.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import importlib
import importlib.metadata
import inspect
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.vision import BENCH_EFFECTS, FLUFFY, pctl, random_view
from hardware_sims.camera_render import CameraPose, GroundTruth, render
from hardware_sims.tile_art import TileSet, drawn_tile_set, load_tile_set
from vision.naming.classifier import TileClassifier
from vision.table.calibration import calibrate
from vision.table.pipeline import FramePipeline

# our notation -> mahjong-detector's class names (it has no red fives)
HONOURS = {"E": "tou", "S": "nan", "W": "sha", "N": "pe", "P": "haku", "F": "hatsu", "C": "chun"}


# a single image is read on its own: no waiting for a second frame to agree (as bench/vision.py's accuracy())
ONE_FRAME = {"confirm_frames": 1} if "confirm_frames" in inspect.signature(FramePipeline).parameters else {}


def theirs(tile: str) -> str:
    """Our tile name as mahjong-detector names it: '5mr' -> '5m', 'E' -> 'tou'."""
    return HONOURS.get(tile, tile[:2])


@dataclass
class Score:
    tiles: int = 0  # face-up tiles in the truth
    found: int = 0
    right: int = 0
    wrong: int = 0
    extra: int = 0  # detections on no face-up tile (mahjong-detector only)
    ms: list[float] = field(default_factory=list)
    found_by_zone: dict[str, list[int]] = field(default_factory=dict)  # zone -> [found, tiles]
    confusions: dict[tuple[str, str], int] = field(default_factory=dict)

    def count(self, zone: str, found: bool) -> None:
        z = self.found_by_zone.setdefault(zone, [0, 0])
        z[0] += found
        z[1] += 1


@dataclass
class Detector:
    """mahjong-detector's preprocess/predict with a one-thread onnxruntime session."""

    preprocess: Any
    predict: Any
    class_names: list[str]
    threads_note: str
    box_sides: list[float] = field(default_factory=list)  # sqrt(w*h) of every box, pixels of the frame
    confidences: list[float] = field(default_factory=list)
    pre_ms: list[float] = field(default_factory=list)

    def __call__(self, frame_bgr: np.ndarray) -> list[Any]:
        from PIL import Image

        img = Image.fromarray(cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2RGB))
        t0 = time.perf_counter()
        x, pad = self.preprocess(img)
        self.pre_ms.append((time.perf_counter() - t0) * 1000)
        dets = self.predict(x, pad)
        for d in dets:
            self.box_sides.append(float(np.sqrt(max(0, d.x2 - d.x1) * max(0, d.y2 - d.y1))))
            self.confidences.append(d.confidence)
        return dets


def load_detector() -> Detector | None:
    try:
        pre = importlib.import_module("mahjong_detector.preprocess")
        pred = importlib.import_module("mahjong_detector.predict")  # the package's `predict` name is the function
        import onnxruntime as rt
    except ImportError:
        return None
    # predict() makes its session lazily per thread (threadlocal.session) with default options, i.e. one
    # intra-op thread per core; there is no parameter for it, so put a one-thread session in its slot.
    note = "onnxruntime intra_op_num_threads=1, inter_op_num_threads=1 (session put in predict.threadlocal)"
    if hasattr(pred, "threadlocal") and hasattr(pred, "model_path"):
        opts = rt.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.execution_mode = rt.ExecutionMode.ORT_SEQUENTIAL
        pred.threadlocal.session = rt.InferenceSession(str(pred.model_path), sess_options=opts,
                                                       providers=["CPUExecutionProvider"])  # fmt: skip
    else:
        note = "onnxruntime threads NOT limited (this mahjong-detector version has no threadlocal session slot)"
    return Detector(pre.preprocess_image, pred.predict, list(pred.CLASS_NAMES), note)


def score_detector(dets: list[Any], truth: GroundTruth, names: list[str], s: Score) -> None:
    up = [t for t in truth.tiles if t.face_up]
    polys = [np.asarray(t.corners_px, np.float32).reshape(-1, 1, 2) for t in up]
    taken: dict[int, Any] = {}
    for d in sorted(dets, key=lambda d: -d.confidence):
        c = ((d.x1 + d.x2) / 2, (d.y1 + d.y2) / 2)
        hit = next((i for i, p in enumerate(polys) if i not in taken and cv2.pointPolygonTest(p, c, False) >= 0), None)
        if hit is None:
            s.extra += 1
        else:
            taken[hit] = d
    for i, t in enumerate(up):
        s.tiles += 1
        d = taken.get(i)
        s.count(t.zone, d is not None)
        if d is None:
            continue
        s.found += 1
        got, want = names[d.class_id], theirs(t.tile)
        if got == want:
            s.right += 1
        else:
            s.wrong += 1
            s.confusions[(want, got)] = s.confusions.get((want, got), 0) + 1


def score_pipeline(readings: Any, truth: GroundTruth, s: Score, folded: list[int]) -> None:
    got = {(d.zone, d.seat, d.index): d for d in readings.tiles}
    for t in truth.tiles:
        if not t.face_up:
            continue
        s.tiles += 1
        d = got.get((t.zone, t.seat, t.index))
        ok = d is not None and d.face_up
        s.count(t.zone, ok)
        if not ok:
            continue
        s.found += 1
        if d.tile is None:
            continue  # unknown: found but not named (neither right nor wrong)
        if d.tile == t.tile:
            s.right += 1
        else:
            s.wrong += 1
            s.confusions[(t.tile, d.tile)] = s.confusions.get((t.tile, d.tile), 0) + 1
        folded[0] += theirs(d.tile) == theirs(t.tile)  # right with red fives folded, as mahjong-detector is scored


def share(a: int, b: int) -> str:
    return f"{100 * a / b:5.1f} %" if b else "    -"


def report(label: str, s: Score, extra: str = "") -> None:
    print(f"  {label:<18} truth {s.tiles:4d}  found {s.found:4d} ({share(s.found, s.tiles)})  named right "
          f"{s.right:4d} ({share(s.right, s.tiles)})  named wrong {s.wrong:4d} ({share(s.wrong, s.tiles)})  "
          f"ms/frame median {statistics.median(s.ms):6.1f}, p95 {pctl(s.ms, 0.95):6.1f}{extra}")


def run_set(name: str, tiles: TileSet, det: Detector, n_frames: int, seed: int) -> None:
    t0 = time.perf_counter()
    clf = TileClassifier()
    clf.enroll(tiles.faces)
    print(f"\n{name}: enrolled {len(tiles.faces)} faces in {time.perf_counter() - t0:.1f} s; {n_frames} frames")
    rng = np.random.default_rng(seed)
    cameras = [CameraPose.overhead(), CameraPose.oblique(35.0)]
    pipes: dict[int, FramePipeline] = {}
    theirs_s, ours_s = Score(), Score()
    folded = [0]
    for i in range(n_frames):
        cam = i % len(cameras)
        frame, truth = render(random_view(rng), camera=cameras[cam], tiles=tiles, effects=BENCH_EFFECTS, rng=rng)
        t1 = time.perf_counter()
        dets = det(frame)
        theirs_s.ms.append((time.perf_counter() - t1) * 1000)
        score_detector(dets, truth, det.class_names, theirs_s)
        if cam not in pipes:
            pipes[cam] = FramePipeline(calibrate(frame), None, clf, **ONE_FRAME)
        pipes[cam].reset_cache()  # every frame is a new table: every tile classified
        t1 = time.perf_counter()
        readings = pipes[cam].process(frame)
        ours_s.ms.append((time.perf_counter() - t1) * 1000)
        score_pipeline(readings, truth, ours_s, folded)
    report("mahjong-detector", theirs_s, f"; {theirs_s.extra} extra boxes on no face-up tile")
    report("ours (cold)", ours_s, f"; right with red fives folded {share(folded[0], ours_s.tiles)}")
    for label, s in (("mahjong-detector", theirs_s), ("ours", ours_s)):
        zones = ", ".join(f"{z} {f}/{n}" for z, (f, n) in sorted(s.found_by_zone.items()))
        conf = ", ".join(f"{t}->{g} x{k}" for (t, g), k in sorted(s.confusions.items(), key=lambda kv: -kv[1])[:5])
        print(f"    {label} found by zone: {zones}; worst confusions: {conf or 'none'}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=20, help="frames per tile set (default 20)")
    ap.add_argument("--set", choices=["drawn", "fluffy"], action="append", help="tile set(s); default both")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="1 frame of the drawn set (what the tests run)")
    args = ap.parse_args()
    if args.quick:
        args.frames, args.set = 1, ["drawn"]
    cv2.setNumThreads(1)
    det = load_detector()
    if det is None:
        print("mahjong-detector is not installed (it is not a project dependency). For this comparison only:\n"
              "  . .venv/bin/activate && pip install mahjong-detector\n"
              "and afterwards (what it pulls into this venv): pip uninstall mahjong-detector onnxruntime Pillow "
              "flatbuffers protobuf")
        return 0
    import onnxruntime as rt

    ver = importlib.metadata.version("mahjong-detector")
    print(f"mahjong-detector {ver}, onnxruntime {rt.__version__}, OpenCV {cv2.__version__}; cv2 threads "
          f"{cv2.getNumThreads()}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}; {det.threads_note}")
    # first run outside the timing: onnxruntime allocates and optimises on its first call
    det(np.zeros((1080, 1920, 3), np.uint8))
    det.box_sides.clear()
    det.confidences.clear()
    det.pre_ms.clear()

    wanted = args.set or ["drawn", "fluffy"]
    for name in wanted:
        if name == "drawn":
            run_set("drawn", drawn_tile_set(), det, args.frames, args.seed)
        elif FLUFFY.is_dir():
            run_set("fluffy", load_tile_set(FLUFFY), det, args.frames, args.seed)
        else:
            print(f"\nfluffy: skipped, {FLUFFY} is absent")
    if det.box_sides:
        print(f"\nmahjong-detector boxes: {len(det.box_sides)}, side sqrt(w*h) median "
              f"{statistics.median(det.box_sides):.0f} px (p5 {pctl(det.box_sides, 0.05):.0f}, p95 "
              f"{pctl(det.box_sides, 0.95):.0f}) of the 1920x1080 frame; confidence median "
              f"{statistics.median(det.confidences):.2f}; preprocess (grey, autocontrast, 640x640) median "
              f"{statistics.median(det.pre_ms):.1f} ms of its time")
    else:
        print("\nmahjong-detector returned no boxes at all (confidence > 0.5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
