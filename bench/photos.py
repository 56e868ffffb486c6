"""The tile finder on real photos, beside mahjong-detector: `python bench/photos.py [--quick] [--folder DIR]`

On the shared roboflow ``valid`` photos (296, never trained on) and on any folder of YOLO-labelled photos
(``--folder DIR``: ``DIR/images/**.jpg`` beside ``DIR/labels/**.txt``, class names from a
``classes.txt`` in DIR or above, in the project's notation; ``other`` = flower or season):

- a labelled tile is **found** when a box overlaps its label box with IoU >= 0.5, each box used once
  (greedy, highest IoU first); boxes matching no label are **extra**; flowers and seasons count in
  neither (a box on one is neither found nor extra); a face-down box on no label is counted apart
  ("backs": the photos label no backs), and so is a face-up box on no label whose centre lies on the
  tiles a photo labelled only in part leaves without boxes ("unlab.": the regions of
  ``vision.photos.data.ROBOFLOW_UNLABELLED``, drawn by eye; 17 photos label the rack and not the heap);
- found tiles are **right**, **wrong** or **unknown** by the name the photo reader gives
  (``vision/photos/reader.py`` with this finder; skipped where it is not installed), as shares of all
  labelled tiles; the roboflow labels as checked (``vision.photos.data``: the errata applied, the photos
  whose every box is labelled 1p left out of the naming);
- **ms per photo** on one core (cv2 and OpenMP limited to one thread), median and p95: the finder on the
  640x640 photos as published, and on the same photos made 4000x3000 (12 MP, as a phone takes them; the
  figure of the target), and the whole reader where installed;
- **rendered table frames** (``hardware_sims.camera_render``, busy tables as ``bench/vision.py`` draws
  them, drawn and FluffyStuff tiles, overhead and 35-degree cameras, seeds apart from training): every
  tile found? The finder reads them at a long side of 1280 px (a tile ~20 px at the network).

``mahjong-detector`` 0.0.6 (the reader on PyPI: a YOLOv8 ONNX model run by onnxruntime; not a project
dependency) runs on the same photos in its own environment, one thread: create it once with
``python3 -m venv .venv-detector && .venv-detector/bin/pip install mahjong-detector==0.0.6`` (or give
``--detector-python``). Its classes map to ours by name (tou/nan/sha/pe -> E S W N, haku/hatsu/chun ->
P F C). Where it is not installed the bench says so and goes on.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision.photos.data import (  # noqa: E402
    DATA,
    ROBOFLOW,
    ROBOFLOW_ERRATA,
    ROBOFLOW_UNLABELLED,
    one_label_photos,
    roboflow_names,
)
from vision.photos.finder import FoundTile, TileFinder, match_boxes  # noqa: E402
from vision.photos.layout import tile_shaped  # noqa: E402

DETECTOR_PYTHON = ROOT / ".venv-detector" / "bin" / "python"
THEIR_NAMES = {"tou": "E", "nan": "S", "sha": "W", "pe": "N", "haku": "P", "hatsu": "F", "chun": "C"}
MP12 = (4000, 3000)

# runs inside the detector's own environment (no cv2, no tablesvc): one thread, one JSON line per photo
DETECTOR_WORKER = r"""
import json, sys, time
import onnxruntime as rt
from PIL import Image
import importlib
pred = importlib.import_module("mahjong_detector.predict")  # the package exports a function of that name
from mahjong_detector.preprocess import preprocess_image
opts = rt.SessionOptions()
opts.intra_op_num_threads = 1
opts.inter_op_num_threads = 1
opts.execution_mode = rt.ExecutionMode.ORT_SEQUENTIAL
pred.threadlocal.session = rt.InferenceSession(str(pred.model_path), sess_options=opts,
                                               providers=["CPUExecutionProvider"])
for line in sys.stdin:
    path, w, h = line.rstrip("\n").split("\t")
    img = Image.open(path).convert("RGB")
    if int(w):
        img = img.resize((int(w), int(h)), Image.BILINEAR)
    t0 = time.perf_counter()
    x, pad = preprocess_image(img)
    dets = pred.predict(x, pad)
    ms = (time.perf_counter() - t0) * 1000
    boxes = [[d.x1, d.y1, d.x2, d.y2, pred.CLASS_NAMES[d.class_id], float(d.confidence)] for d in dets]
    print(json.dumps({"boxes": boxes, "ms": ms}), flush=True)
"""


# ------------------------------------------------------------------------------------------- data
@dataclass
class Photo:
    path: Path
    boxes: np.ndarray  # (n, 4) x0 y0 x1 y1, pixels of the photo
    names: list[str | None]  # None: flower or season
    named: bool = True  # its names are trusted (False: a labelling failure, left out of right/wrong)
    #: regions (pixels) of face-up tiles the publisher left unlabelled
    unlabelled: tuple[tuple[float, float, float, float], ...] = ()
    #: stretched far beyond any camera's picture by the publisher (its median labelled tile out of a tile's
    #: proportions, :data:`vision.photos.layout.TILE_PROPORTIONS`)
    stretched: bool = False


def _names_for(folder: Path) -> list[str | None]:
    for d in [folder, *folder.parents]:
        if (d / "classes.txt").is_file():
            return roboflow_names(d)
    raise FileNotFoundError(f"no classes.txt in {folder} or above: the label classes cannot be named")


def load_folder(images: Path, labels: Path, names: list[str | None], errata: bool, limit: int = 0) -> list[Photo]:
    """Every labelled photo under ``images`` (labels at the same relative path under ``labels``); ``limit``: only the
    first that many (a photo is decoded for its size, so those after it are not read at all)."""
    fix = {(p, line): seen for p, line, _, seen in ROBOFLOW_ERRATA} if errata else {}
    out: list[Photo] = []
    for img_path in sorted(p for p in images.rglob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png")):
        if limit and len(out) >= limit:
            break
        lab = labels / img_path.relative_to(images).with_suffix(".txt")
        if not lab.is_file():
            continue
        img = cv2.imread(str(img_path), cv2.IMREAD_COLOR)  # the labels are normalised: the size is needed
        if img is None:
            continue
        h, w = img.shape[:2]
        boxes, tiles = [], []
        for number, line in enumerate(lab.read_text().splitlines()):
            parts = line.split()
            if len(parts) != 5:
                continue
            cls, (cx, cy, bw, bh) = int(parts[0]), (float(v) for v in parts[1:])
            boxes.append([(cx - bw / 2) * w, (cy - bh / 2) * h, (cx + bw / 2) * w, (cy + bh / 2) * h])
            tiles.append(fix.get((img_path.name, number), names[cls] if cls < len(names) else None))
        b = np.array(boxes, np.float64).reshape(-1, 4)
        ratio = float(np.median((b[:, 3] - b[:, 1]) / np.maximum(b[:, 2] - b[:, 0], 1e-6))) if len(b) else 1.3
        regions = tuple((x0 * w, y0 * h, x1 * w, y1 * h)
                        for x0, y0, x1, y1 in (ROBOFLOW_UNLABELLED.get(img_path.name, ()) if errata else ()))
        out.append(Photo(img_path, b, tiles, unlabelled=regions, stretched=not tile_shaped(ratio, 1)))
    if errata:
        failed = one_label_photos({p.path.name: p.names for p in out})
        for p in out:
            p.named = p.path.name not in failed
    return out


# ------------------------------------------------------------------------------------------- scoring
@dataclass
class Score:
    tiles: int = 0  # labelled tiles (flowers and seasons apart)
    named_tiles: int = 0  # ... of photos whose names are trusted
    found: int = 0
    right: int = 0
    wrong: int = 0
    unknown: int = 0
    extra: int = 0
    backs: int = 0  # face-down boxes on no label
    unlabelled: int = 0  # face-up boxes on tiles the photo leaves unlabelled
    ms: list[float] = field(default_factory=list)
    ms12: list[float] = field(default_factory=list)
    named: bool = False  # right/wrong/unknown were measured
    plain: Score | None = None  # the same on the photos that are not stretched

    @classmethod
    def pair(cls, named: bool = False) -> Score:
        return cls(named=named, plain=cls(named=named))

    def add(self, photo: Photo, boxes: list, faces: list[bool], names: list[str | None] | None) -> None:
        if self.plain is not None and not photo.stretched:
            self.plain.add(photo, boxes, faces, names)
        m = match_boxes(photo.boxes, [b[:4] for b in boxes])
        is_tile = [n is not None for n in photo.names]
        self.tiles += sum(is_tile)
        if photo.named:
            self.named_tiles += sum(is_tile)
        matched_found = set()
        for li, fi in m.pairs:
            matched_found.add(fi)
            if not is_tile[li]:
                continue  # a flower or season: neither found nor extra
            self.found += 1
            if names is None or not photo.named:
                continue
            got = names[fi]
            if got is None:
                self.unknown += 1
            elif _plain(got) == photo.names[li]:
                self.right += 1
            else:
                self.wrong += 1
        for fi in m.unmatched_found:
            if not faces[fi]:
                self.backs += 1
            elif _inside(boxes[fi][:4], photo.unlabelled):
                self.unlabelled += 1
            else:
                self.extra += 1


def _inside(box: tuple | list, regions: tuple[tuple[float, float, float, float], ...]) -> bool:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return any(x0 <= cx <= x1 and y0 <= cy <= y1 for x0, y0, x1, y1 in regions)


def _plain(tile: str) -> str:
    """The labels have no red fives: 5mr is a 5m to them."""
    return tile[:2] if len(tile) == 3 and tile.endswith("r") else tile


def pctl(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def to_mp12(img: np.ndarray) -> np.ndarray:
    return cv2.resize(img, MP12, interpolation=cv2.INTER_LINEAR)


# ------------------------------------------------------------------------------------------- readers
def run_ours(photos: list[Photo], finder: TileFinder, reader: object | None, n12: int,
             also: tuple[float, ...] = ()) -> tuple[Score, Score | None, dict[float, Score]]:  # fmt: skip
    """The finder alone, and the photo reader (finder + names) where it is installed; ``also``: the finder's
    boxes kept from other score thresholds (above the finder's own), for the curve of found against extra."""
    ours, read = Score.pair(), (Score.pair(named=True) if reader is not None else None)
    others = {t: Score.pair() for t in also}
    for k, p in enumerate(photos):
        img = cv2.imread(str(p.path), cv2.IMREAD_COLOR)
        t0 = time.perf_counter()
        found: list[FoundTile] = finder.find(img)
        ours.ms.append((time.perf_counter() - t0) * 1000)
        ours.add(p, [t.box for t in found], [t.face_up for t in found], None)
        for t, s in others.items():
            kept = [f for f in found if f.score >= t]
            s.add(p, [f.box for f in kept], [f.face_up for f in kept], None)
        if k < n12:
            big = to_mp12(img)
            t0 = time.perf_counter()
            finder.find(big)
            ours.ms12.append((time.perf_counter() - t0) * 1000)
        if reader is not None and read is not None:
            t0 = time.perf_counter()
            reading = reader.read(img, str(p.path))  # type: ignore[attr-defined]
            read.ms.append((time.perf_counter() - t0) * 1000)
            tiles = list(reading.tiles)
            read.add(p, [t.box for t in tiles], [t.face_up for t in tiles], [t.tile for t in tiles])
    return ours, read, others


def run_detector(photos: list[Photo], python: Path, n12: int) -> Score | str:
    """mahjong-detector in its own environment; a line saying why where it cannot run."""
    if not python.is_file():
        return (f"mahjong-detector is not installed ({python} missing): python3 -m venv .venv-detector && "
                ".venv-detector/bin/pip install mahjong-detector==0.0.6")  # fmt: skip
    jobs = [f"{p.path}\t0\t0" for p in photos] + [f"{p.path}\t{MP12[0]}\t{MP12[1]}" for p in photos[:n12]]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    try:
        proc = subprocess.run([str(python), "-c", DETECTOR_WORKER], input="\n".join(jobs) + "\n", text=True,
                              capture_output=True, timeout=3600, env=env)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"mahjong-detector could not be run: {exc}"
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or len(lines) != len(jobs):
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return f"mahjong-detector could not be run (exit {proc.returncode}): {tail}"
    s = Score.pair(named=True)
    for p, got in zip(photos, lines, strict=False):
        names = [THEIR_NAMES.get(b[4], b[4]) for b in got["boxes"]]
        s.add(p, [b[:4] for b in got["boxes"]], [True] * len(names), names)
        s.ms.append(got["ms"])
    s.ms12 = [got["ms"] for got in lines[len(photos) :]]
    return s


# ------------------------------------------------------------------------------------------- rendered frames
@dataclass
class RenderScore:
    frames: int = 0
    face_up: int = 0
    face_down: int = 0
    found_up: int = 0
    found_down: int = 0
    flag_right: int = 0  # found tiles whose face/back flag is right
    extra: int = 0
    ms: list[float] = field(default_factory=list)


def run_renders(finder: TileFinder, frames: int, seed: int, size: int) -> RenderScore:
    from bench.vision import BENCH_EFFECTS, FLUFFY, random_view
    from hardware_sims.camera_render import CameraPose, render
    from hardware_sims.tile_art import drawn_tile_set, load_tile_set

    sets = [drawn_tile_set(), load_tile_set(FLUFFY)]
    cams = [CameraPose.overhead(), CameraPose.oblique(35.0)]
    rng = np.random.default_rng(seed)
    r = RenderScore()
    for i in range(frames):
        frame, truth = render(random_view(rng), camera=cams[i % 2], tiles=sets[(i // 2) % 2], effects=BENCH_EFFECTS,
                              rng=rng)  # fmt: skip
        t0 = time.perf_counter()
        found = finder.find(frame, input_size=size)
        r.ms.append((time.perf_counter() - t0) * 1000)
        tiles = [t for t in truth.tiles if not t.occluded]
        boxes = [[*t.corners_px.min(0), *t.corners_px.max(0)] for t in tiles]
        m = match_boxes(boxes, [f.box for f in found])
        r.frames += 1
        r.face_up += sum(t.face_up for t in tiles)
        r.face_down += sum(not t.face_up for t in tiles)
        for li, fi in m.pairs:
            if tiles[li].face_up:
                r.found_up += 1
            else:
                r.found_down += 1
            r.flag_right += found[fi].face_up == tiles[li].face_up
        r.extra += m.extra
    return r


def annotate(img: np.ndarray, found: list[FoundTile], labels: np.ndarray) -> np.ndarray:
    """The finder's boxes on a copy of the photo: green a labelled tile found (its score), orange a box on no
    label, red (thin) a labelled tile not found, grey a back."""
    out = img.copy()
    m = match_boxes(labels, [t.box for t in found])
    matched = {fi for _, fi in m.pairs}
    thick = max(1, round(max(img.shape[:2]) / 500))
    for li in set(range(len(labels))) - {li for li, _ in m.pairs}:
        x0, y0, x1, y1 = (int(v) for v in labels[li])
        cv2.rectangle(out, (x0, y0), (x1, y1), (40, 40, 230), thick)
    for i, t in enumerate(found):
        colour = (150, 150, 150) if not t.face_up else ((60, 200, 60) if i in matched else (0, 140, 255))
        cv2.rectangle(out, t.box[:2], t.box[2:], colour, thick + 1)
        cv2.putText(out, f"{t.score:.2f}", (t.box[0] + 2, t.box[1] + 12 * thick), cv2.FONT_HERSHEY_SIMPLEX,
                    0.35 * thick, colour, thick, cv2.LINE_AA)  # fmt: skip
    return out


# ------------------------------------------------------------------------------------------- report
def pct(a: int, b: int) -> str:
    return f"{100 * a / b:6.2f} %" if b else "     - "


def row(name: str, s: Score, timed: Score) -> str:
    names = (f"{pct(s.right, s.named_tiles)} {pct(s.wrong, s.named_tiles)} {pct(s.unknown, s.named_tiles)}"
             if s.named else f"{'-':>8} {'-':>8} {'-':>8}")  # fmt: skip
    t = timed
    ms12 = f"{statistics.median(t.ms12):7.0f} {pctl(t.ms12, 0.95):5.0f}" if t.ms12 else f"{'-':>7} {'-':>5}"
    return (f"{name:<28} {pct(s.found, s.tiles)} {names} {pct(s.extra, s.tiles)} {s.unlabelled:6d} {s.backs:6d} "
            f"{statistics.median(t.ms):7.1f} {pctl(t.ms, 0.95):6.1f} {ms12}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a few photos and frames (the test's run)")
    ap.add_argument("--folder", type=Path, action="append", default=[],
                    help="a YOLO-labelled folder (images/ and labels/ inside) measured besides roboflow valid")
    ap.add_argument("--photos", type=int, default=0, help="at most this many photos per folder (0: all)")
    ap.add_argument("--mp12", type=int, default=40, help="photos also timed at 12 MP")
    ap.add_argument("--renders", type=int, default=20, help="rendered table frames")
    ap.add_argument("--render-size", type=int, default=1280, help="the finder's long side on rendered frames")
    ap.add_argument("--seed", type=int, default=5, help="rendered frames' seed (training's are 1000+)")
    ap.add_argument("--detector-python", type=Path, default=DETECTOR_PYTHON,
                    help="python of the environment where mahjong-detector is installed")
    ap.add_argument("--no-detector", action="store_true")
    ap.add_argument("--no-reader", action="store_true", help="the finder alone (no names)")
    ap.add_argument("--thresholds", default="0.35,0.4,0.5",
                    help="also print the finder's figures with only its boxes scored at least these")
    ap.add_argument("--annotate", type=Path, nargs=2, metavar=("PHOTO", "OUT"),
                    help="only draw the finder's boxes on one labelled photo (docs/vision.md's picture)")
    args = ap.parse_args()
    if args.annotate:
        photo, out = args.annotate
        labelled = load_folder(photo.parent, photo.parents[2] / "labels" / photo.parent.name,
                               _names_for(photo.parents[2]), errata=False)  # fmt: skip
        p = next(x for x in labelled if x.path.name == photo.name)
        img = cv2.imread(str(photo), cv2.IMREAD_COLOR)
        found = TileFinder.load().find(img)
        m = match_boxes(p.boxes, [t.box for t in found])
        cv2.imwrite(str(out), annotate(img, found, p.boxes))
        print(f"{photo.name}: {len(p.boxes)} labelled, {m.found} found, {m.extra} extra -> {out}")
        return 0
    if args.quick:
        args.photos, args.mp12, args.renders = args.photos or 10, min(args.mp12, 3), min(args.renders, 2)
    cv2.setNumThreads(1)
    finder = TileFinder.load()
    reader, why = None, ""
    if not args.no_reader:
        try:
            from vision.photos.reader import PhotoReader  # type: ignore[import-not-found,unused-ignore]

            reader = PhotoReader.load(finder=finder)
        except Exception as exc:  # optional: any failure only means "no names measured"
            why = f"{type(exc).__name__}: {exc}"
    folders: list[tuple[str, list[Photo]]] = []
    if ROBOFLOW.is_dir():
        folders.append(("roboflow valid", load_folder(ROBOFLOW / "images" / "valid", ROBOFLOW / "labels" / "valid",
                                                      roboflow_names(), errata=True, limit=args.photos)))  # fmt: skip
    else:
        print(f"roboflow photos not found under {DATA}: only the folders given and the rendered frames")
    for f in args.folder:
        folders.append((str(f), load_folder(f / "images", f / "labels", _names_for(f / "labels"), errata=False,
                                            limit=args.photos)))
    print(f"one core (cv2.setNumThreads(1), OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}); finder "
          f"vision/models/tile_finder.onnx, long side {finder.input_size} px, score >= {finder.score_threshold}")
    if reader is None:
        print(f"photo reader: not measured ({why or '--no-reader'}); right/wrong/unknown need it")
    header = (f"{'reader':<28} {'found':>8} {'right':>8} {'wrong':>8} {'unknown':>8} {'extra':>8} {'unlab.':>6} "
              f"{'backs':>6} {'ms med':>7} {'p95':>6} {'12MP med':>7} {'p95':>5}")  # fmt: skip
    for name, photos in folders:
        if args.photos:
            photos = photos[: args.photos]
        tiles = sum(n is not None for p in photos for n in p.names)
        flowers = sum(n is None for p in photos for n in p.names)
        print(f"\n{name}: {len(photos)} photos, {tiles} labelled tiles (flowers and seasons apart: {flowers}); "
              f"12 MP = the photo resized to {MP12[0]}x{MP12[1]} ({min(args.mp12, len(photos))} photos); ms are "
              f"over all photos")
        also = tuple(float(t) for t in args.thresholds.split(",") if t and float(t) > finder.score_threshold)
        ours, read, others = run_ours(photos, finder, reader, args.mp12, also)
        theirs = "mahjong-detector: --no-detector" if args.no_detector else \
            run_detector(photos, args.detector_python, args.mp12)
        plain = [p for p in photos if not p.stretched]
        for title, pick in (("all photos", lambda s: s),
                            (f"the {len(plain)} photos not stretched beyond a camera's picture ("
                             f"{sum(n is not None for p in plain for n in p.names)} tiles)", lambda s: s.plain)):
            print(f"-- {title}")
            print(header)
            print(row("ours: finder", pick(ours), ours))
            for t, s in others.items():
                print(row(f"ours: finder, score >= {t:.2f}", pick(s), ours))
            if read is not None:
                print(row("ours: finder + reader", pick(read), read))
            print(row("mahjong-detector 0.0.6", pick(theirs), theirs) if isinstance(theirs, Score) else theirs)
    if args.renders:
        r = run_renders(finder, args.renders, args.seed, args.render_size)
        flag = pct(r.flag_right, r.found_up + r.found_down).strip()
        print(f"\nrendered table frames: {r.frames} frames 1920x1080 (drawn and FluffyStuff, overhead and 35 degrees, "
              f"bench/vision.py's busy tables and light), long side {args.render_size}: face up found "
              f"{r.found_up}/{r.face_up} ({pct(r.found_up, r.face_up).strip()}), face down found "
              f"{r.found_down}/{r.face_down}, face/back flag right {flag}, "
              f"extra {r.extra}; {statistics.median(r.ms):.0f} ms median, p95 {pctl(r.ms, 0.95):.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
