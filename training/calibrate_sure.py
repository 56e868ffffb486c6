"""Choose when the photo reader shows a name as sure, leave one set out: ``python training/calibrate_sure.py``

"Sure" must mean sure on a tile set the reader never saw. Every tile of the held-out material is read as the
reader reads it (finder boxes, crops, both ways up, second look, gates) and kept with what the reader knows of
it (similarity to its best kind, lead over the runner-up, box in shape). The material comes in sets that share
nothing (a set of tiles, a photographer, a kind of view):

- the roboflow ``valid`` photos (never trained on, no prototype from them), split by who took them, as their
  names tell: ``IMG_*`` (one phone), ``hand_*`` (hands on racks), ``Screenshot*`` (screenshots, many squeezed)
  and the numbered photos (a social network's); each tile matched to its label by the finder's box (IoU >= 0.5);
- Camerash's measuring half (single tiles, many sets, the other half made prototypes);
- the two Unicode artworks (``tiles-art-unicode``: colour and mono strokes, never seen by the network nor the
  prototypes), drawn as phone crops: 28-90 px tall, perspective, blur, noise, JPEG, upside down half the time.

For each set left out, gates (similarity, lead) are chosen on the others: the pair that shows the most tiles as
sure while at most ``--target`` of those are wrong; then the set left out is read with them. The gates kept
(:data:`vision.photos.reader.SURE_GATES`) are chosen on all sets together, the same way. Prints, per set: tiles,
sure, wrong among sure (with the gates chosen without it), and the gates. Readings are cached in ``--cache``.
"""

from __future__ import annotations

import argparse
import sys
import zlib
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision.photos.data import DATA, ROBOFLOW, camerash_photos, camerash_split, roboflow_names  # noqa: E402
from vision.photos.finder import match_boxes  # noqa: E402
from vision.photos.reader import LabelBoxFinder, PhotoReader, _in_shape  # noqa: E402

SIMS = np.round(np.arange(0.50, 0.96, 0.01), 2)
LEADS = np.round(np.arange(0.00, 0.41, 0.01), 2)


def photo_set(name: str) -> str:
    """Who took a roboflow photo, as its name tells."""
    for prefix in ("IMG_", "hand_", "Screenshot"):
        if name.startswith(prefix):
            return f"roboflow {prefix.rstrip('_')}"
    return "roboflow numbered"


def read_roboflow(reader: PhotoReader) -> list[tuple[str, str, str | None, float, float, bool]]:
    """(set, truth, name, similarity, lead, in shape) for every labelled riichi tile the finder found."""
    from vision.photos.data import ROBOFLOW_ERRATA, one_label_photos

    names = roboflow_names()
    errata = {(p, line): seen for p, line, _, seen in ROBOFLOW_ERRATA}
    labels = {}
    for path in sorted((ROBOFLOW / "images" / "valid").iterdir()):
        label = ROBOFLOW / "labels" / "valid" / (path.stem + ".txt")
        if label.is_file():
            labels[path.name] = [errata.get((path.name, n), names[int(p.split()[0])])
                                 for n, p in enumerate(label.read_text().splitlines()) if len(p.split()) == 5]
    skip = one_label_photos(labels)
    out = []
    for path in sorted((ROBOFLOW / "images" / "valid").iterdir()):
        if path.name not in labels or path.name in skip:
            continue
        img = cv2.imread(str(path))
        truth_boxes = LabelBoxFinder.for_photo(path).find(img)
        reading = reader.read(img, path.name)
        m = match_boxes([b.box for b in truth_boxes], [t.box for t in reading.tiles])
        for li, fi in m.pairs:
            truth, t = labels[path.name][li], reading.tiles[fi]
            if truth is None or not t.face_up:
                continue
            out.append((photo_set(path.name), truth, t.tile, t.confidence, t.lead, _in_shape(t.box)))
    return out


def read_crops(reader: PhotoReader, set_name: str, crops: list[tuple[str, np.ndarray]]) -> list[tuple]:
    """Single-tile pictures read as the reader reads a box that fills them."""
    out = []
    for truth, img in crops:
        h, w = img.shape[:2]
        reader.finder = _WholeBox()
        reading = reader.read(img)
        if reading.tiles:
            t = reading.tiles[0]
            out.append((set_name, truth, t.tile, t.confidence, t.lead, _in_shape(t.box)))
        del h, w
    return out


class _WholeBox:
    def find(self, image: np.ndarray) -> list:
        from vision.photos.reader import LabelBox

        h, w = image.shape[:2]
        m = 0.05
        return [LabelBox((round(w * m), round(h * m), round(w * (1 - m)), round(h * (1 - m))))]


def art_crops(folder: Path, per_kind: int, seed: int) -> list[tuple[str, np.ndarray]]:
    """A drawn artwork's faces as a phone shows a tile: on an ivory body, 28-90 px tall, seen askew."""
    rng = np.random.default_rng(seed)
    out = []
    for path in sorted(folder.glob("*.png")):
        face = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        if face is None:
            continue
        if face.ndim == 3 and face.shape[2] == 4:
            a = face[..., 3:].astype(np.float32) / 255
            face = (face[..., :3] * a + np.float32([225, 240, 245]) * (1 - a)).astype(np.uint8)
        elif face.ndim == 2:
            face = cv2.cvtColor(face, cv2.COLOR_GRAY2BGR)
        face = cv2.resize(face, (90, 120), interpolation=cv2.INTER_AREA)
        body = cv2.copyMakeBorder(face, 8, 8, 8, 8, cv2.BORDER_CONSTANT, value=(215, 230, 236))
        h, w = body.shape[:2]
        for _ in range(per_kind):
            j = rng.uniform(0, 0.08, (4, 2)) * [w, h]
            src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
            dst = np.float32(src + j * [[1, 1], [-1, 1], [-1, -1], [1, -1]])
            img = cv2.warpPerspective(body, cv2.getPerspectiveTransform(src, dst), (w, h),
                                      borderMode=cv2.BORDER_REPLICATE)  # fmt: skip
            tall = int(rng.uniform(28, 90))
            img = cv2.resize(img, (max(8, round(tall * w / h)), tall), interpolation=cv2.INTER_AREA)
            img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 1.0))
            img = np.clip(img * rng.uniform(0.7, 1.15) + rng.normal(0, rng.uniform(1, 6), img.shape), 0, 255)
            _, enc = cv2.imencode(".jpg", img.astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, int(rng.uniform(50, 95))])
            img = cv2.imdecode(enc, cv2.IMREAD_COLOR)
            if rng.random() < 0.5:
                img = cv2.rotate(img, cv2.ROTATE_180)
            out.append((path.stem, img))
    return out


def collect(cache: Path) -> dict[str, np.ndarray]:
    if cache.is_file():
        z = np.load(cache, allow_pickle=False)
        return {k: z[k] for k in z.files}
    reader = PhotoReader.load()
    reader.keep_all = True  # every box the finder gives, as the rule that drops some is measured apart
    rows = read_roboflow(reader)
    print(f"roboflow valid: {len(rows)} tiles", flush=True)
    _, measuring = camerash_split(camerash_photos())
    rows += read_crops(reader, "camerash measuring half", [(c.tile, c.image) for c in measuring if c.tile])
    for art in ("colour", "mono"):
        rows += read_crops(reader, f"unicode {art} art", art_crops(DATA / "tiles-art-unicode" / art, 12,
                                                                  zlib.crc32(art.encode())))
    data = {"set": np.array([r[0] for r in rows]), "truth": np.array([r[1] for r in rows]),
            "name": np.array([r[2] or "" for r in rows]), "sim": np.array([r[3] for r in rows], np.float32),
            "lead": np.array([r[4] for r in rows], np.float32), "shape": np.array([r[5] for r in rows], bool)}
    np.savez(cache, **data)
    return data


def same(name: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """A name is right when it is the labelled kind (a red five labelled a five counts as a five, and back)."""
    def kind(t: str) -> str:
        return t[:2] if t.endswith("r") and len(t) == 3 else t

    return np.array([kind(n) == kind(t) for n, t in zip(name, truth, strict=True)])


def choose(d: dict[str, np.ndarray], sel: np.ndarray, target: float) -> tuple[float, float]:
    named = (d["name"] != "") & d["shape"] & sel
    right = same(d["name"], d["truth"])
    best, gates = -1, (0.95, 0.4)
    for s in SIMS:
        for lead in LEADS:
            sure = named & (d["sim"] >= s) & (d["lead"] >= lead)
            n = int(sure.sum())
            wrong = int((sure & ~right).sum())
            if n and wrong <= target * n and n > best:
                best, gates = n, (float(s), float(lead))
    return gates


def report(d: dict[str, np.ndarray], target: float) -> tuple[float, float]:
    right = same(d["name"], d["truth"])
    sets = sorted(set(d["set"].tolist()))
    print(f"{'set left out':<26} {'tiles':>6} {'sure':>7} {'wrong among sure':>17}  gates chosen without it")
    total_sure = total_wrong = 0
    for held in sets:
        out = d["set"] == held
        s, lead = choose(d, ~out, target)
        sure = out & (d["name"] != "") & d["shape"] & (d["sim"] >= s) & (d["lead"] >= lead)
        n, wrong = int(sure.sum()), int((sure & ~right).sum())
        total_sure += n
        total_wrong += wrong
        print(f"{held:<26} {int(out.sum()):>6} {100 * n / max(1, int(out.sum())):>6.1f}% "
              f"{wrong:>5} = {100 * wrong / max(1, n):5.2f} %  sim >= {s:.2f}, lead >= {lead:.2f}")
    print(f"{'all, each left out':<26} {len(right):>6} {100 * total_sure / len(right):>6.1f}% "
          f"{total_wrong:>5} = {100 * total_wrong / max(1, total_sure):5.2f} %")
    gates = choose(d, np.ones(len(right), bool), target)
    print(f"gates chosen on all sets (vision.photos.reader.SURE_GATES): sim >= {gates[0]:.2f}, lead >= {gates[1]:.2f}")
    return gates


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", type=float, default=0.001, help="wrong among sure allowed on the sets chosen on")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/tablesvc-sure.npz"))
    args = ap.parse_args()
    cv2.setNumThreads(1)
    report(collect(args.cache), args.target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
