"""Train the photo reader's tile-or-not verifier (vision/models/tile_or_not.npz): `python training/tile_or_not.py`

A logistic regression over :func:`vision.photos.verifier.box_features` (the embedding of each finder box's crop,
the finder's evidence, the crop's shape and colour), made exactly as the reader makes them
(:meth:`vision.photos.reader.PhotoReader.look`), from what may be trained on only:

- **tiles**: the finder's boxes on the roboflow ``train`` photos that overlap a labelled tile (IoU >= 0.5; flowers,
  seasons and backs are tiles too: the reader shows them as unknown);
- **no tile**: the finder's boxes on those photos that overlap no labelled tile at all (the room behind the
  tables: floors, hands, racks, printed boxes), and every box on views of the clutter photos kept for training
  (``training/clutter.py`` ``TRAIN``: the ``MEASURE`` photos are never looked at here).

The gate (a photo's boxes are kept where their median chance is at least it) is chosen by five folds over the
pictures (the model fitted on four, the fifth scored): of the gates that keep at least ``--keep`` of the tiles'
boxes out of fold, the one that keeps fewest boxes on pictures with no tile. roboflow ``valid`` is never read.
No torch; the finder and the embedding on 450 photos and 376 pictures of clutter take about three and a half
minutes on one core, the fits seconds. The figures it prints are out of fold, on training pictures; the product's
figures are ``bench/hands.py --only photos`` on what was never trained on.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "training"))

from clutter import clutter_photos, clutter_views, generated_clutter  # noqa: E402

from bench.photos import load_folder  # noqa: E402
from vision.photos.data import ROBOFLOW, roboflow_names  # noqa: E402
from vision.photos.finder import box_iou  # noqa: E402
from vision.photos.reader import PhotoReader  # noqa: E402
from vision.photos.verifier import VERIFIER_PATH, TileVerifier  # noqa: E402


def _far_from(box: np.ndarray, labels: np.ndarray) -> bool:
    """Whether ``box`` lies a tile's size away from every labelled box (not on a heap the labels left out)."""
    if not len(labels):
        return True
    size = float(np.median(np.maximum(labels[:, 2] - labels[:, 0], labels[:, 3] - labels[:, 1])))
    grown = labels + np.array([-size, -size, size, size])
    return bool((box_iou(box[None], grown) == 0).all())


def gather(reader: PhotoReader, clutter_per_photo: int, generated: int,
           seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """(features, label: 1 tile, 0 no tile, 2 neither for sure (a box beside a tile: only counted in its photo's
    median), group: the photo each row came from (its views share a fold), view: the picture it was found in)."""
    xs, ys, gs, vs = [], [], [], []
    photos = load_folder(ROBOFLOW / "images" / "train", ROBOFLOW / "labels" / "train", roboflow_names(), errata=False)
    for g, p in enumerate(photos):
        img = cv2.imread(str(p.path), cv2.IMREAD_COLOR)
        seen = reader.look(img, features=True)
        if not len(seen.boxes):
            continue
        boxes = np.asarray(seen.boxes, np.float64)
        best = box_iou(boxes, p.boxes).max(axis=1) if len(p.boxes) else np.zeros(len(boxes))
        for i, b in enumerate(best):
            label = 1 if b >= 0.5 else 0 if _far_from(boxes[i], p.boxes) else 2
            xs.append(seen.features[i]), ys.append(label), gs.append(g), vs.append(g)
    group = len(photos)
    views = clutter_views(clutter_photos("train"), per_photo=clutter_per_photo, seed=seed)
    names = sorted({v.split("#")[0] for v, _ in views})
    for v, (name, img) in enumerate(views + generated_clutter(generated, seed=seed)):
        seen = reader.look(img, features=True)
        base = name.split("#")[0]
        g = group + names.index(base) if base in names else group + len(names) + int(name.split("#")[1])
        for i in range(len(seen.boxes)):  # a clutter photo's views fall in one fold
            xs.append(seen.features[i]), ys.append(0), gs.append(g), vs.append(group + len(names) + generated + v)
    return np.asarray(xs, np.float32), np.asarray(ys, np.int8), np.asarray(gs, np.int32), np.asarray(vs, np.int32)


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Standardised logistic regression, each class weighted to half the loss (L-BFGS, scipy)."""
    from scipy.optimize import minimize

    mean = x.mean(axis=0)
    scale = x.std(axis=0) + 1e-6
    z = (x - mean) / scale
    w_pos, w_neg = 0.5 / max(1, y.sum()), 0.5 / max(1, (1 - y).sum())
    weight = np.where(y == 1, w_pos, w_neg)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:-1], theta[-1]
        m = z @ w + b
        p = 1 / (1 + np.exp(-np.clip(m, -30, 30)))
        ll = -(weight * (y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))).sum() + 0.5 * l2 * (w @ w)
        r = weight * (p - y)
        return float(ll), np.concatenate([z.T @ r + l2 * w, [r.sum()]])

    res = minimize(loss, np.zeros(z.shape[1] + 1), jac=True, method="L-BFGS-B", options={"maxiter": 2000})
    return mean, scale, res.x[:-1], float(res.x[-1])


def choose(chance: np.ndarray, y: np.ndarray, view: np.ndarray, keep: float) -> tuple[float, float, int]:
    """The photo gate from out-of-fold chances: a picture's boxes are kept where their median chance is at least
    the gate. Of the gates that keep at least ``keep`` of the tiles' boxes, the one that keeps fewest boxes in
    pictures with no tile (then most tiles). Returns the gate, the share of tiles kept and the boxes kept on none."""
    views, inverse = np.unique(view, return_inverse=True)
    medians = np.array([np.median(chance[view == v]) for v in views])[inverse]
    tile_photo = np.isin(view, view[y == 1])
    best = None
    for photo in np.round(np.arange(0.05, 0.96, 0.025), 3):
        kept = medians >= photo
        share = float(kept[y == 1].mean())
        junk = int(kept[(y == 0) & ~tile_photo].sum())
        if share >= keep and (best is None or (junk, -share) < (best[2], -best[1])):
            best = (float(photo), share, junk)
    if best is None:
        raise SystemExit(f"no gate keeps {keep:.1%} of the tiles' boxes")
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", type=float, default=0.985, help="share of the tiles' boxes kept, out of fold")
    ap.add_argument("--l2", type=float, default=1e-3, help="L2 penalty on the standardised weights")
    ap.add_argument("--clutter-views", type=int, default=16, help="views of each clutter photo trained on")
    ap.add_argument("--generated", type=int, default=200, help="drawn pictures of clutter (coins, print, cards)")
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--cache", type=Path, help="keep the gathered features here (read back where present)")
    ap.add_argument("--out", type=Path, default=VERIFIER_PATH)
    args = ap.parse_args()
    cv2.setNumThreads(1)
    start = time.time()
    if args.cache and args.cache.is_file():
        with np.load(args.cache) as z:
            x, y, g, view = z["x"], z["y"], z["g"], z["v"]
    else:
        reader = PhotoReader.load()
        reader.verifier = None
        x, y, g, view = gather(reader, args.clutter_views, args.generated, args.seed)
        if args.cache:
            np.savez_compressed(args.cache, x=x, y=y, g=g, v=view)
    sure = y != 2
    print(f"{int((y == 1).sum())} tile boxes, {int((y == 0).sum())} boxes on no tile, {int((y == 2).sum())} beside "
          f"tiles (counted in their photo only), {len(np.unique(view))} pictures; "
          f"gathered in {time.time() - start:.0f} s")
    rng = np.random.default_rng(args.seed)
    groups = np.unique(g)
    fold_of = dict(zip(groups, rng.permutation(len(groups)) % 5, strict=True))
    fold = np.array([fold_of[v] for v in g])
    chance = np.zeros(len(y))
    for k in range(5):
        train = (fold != k) & sure
        mean, scale, w, b = fit(x[train], y[train], args.l2)
        chance[fold == k] = 1 / (1 + np.exp(-np.clip(((x[fold == k] - mean) / scale) @ w + b, -30, 30)))
    photo, share, junk = choose(chance, y, view, args.keep)
    clutter_views_n = len(np.unique(view[~np.isin(view, view[y == 1])]))
    print(f"out of fold: a photo's median chance >= {photo:.3f} keeps {share:.2%} "
          f"of the tiles' boxes and {junk} boxes in {clutter_views_n} pictures with no tile")
    mean, scale, w, b = fit(x[sure], y[sure], args.l2)
    TileVerifier(mean, scale, w, b, photo).save(args.out)
    print(f"{args.out} written, {time.time() - start:.0f} s in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
