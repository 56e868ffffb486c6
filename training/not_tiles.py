"""Build the embedding's "not a tile" prototypes (vision/models/not_tiles.npy): `python training/not_tiles.py`

A club's set is enrolled from its 37 kinds only, so a flower, a season or a tile's back has no kind of
its own to lose to: it is rejected only when it lies far from every kind. Some lie close to one (a
season's figure near a bamboo, a flower's round emblem near the one of circles). These prototypes give
them a place of their own: k-means centres of the embeddings of flowers and seasons photographed in the
*training* photos (roboflow ``train``, Camerash's training half: the measured splits never enter) and of
the drawn and FluffyStuff tile backs. The classifier reads them as one more runner-up
(vision/naming/embedding.py): a crop nearer to them than its lead allows is unknown. Runs in a few seconds with
the packaged network (no torch).

Backs of random colours are left out on purpose: the network learnt them as a class of their own (they
lie far from every kind), and as prototypes here they lay near faces of colourings it never saw: with 40
of them, a dark-faced FluffyStuff read 97 % instead of 99.7-100 % (2.7 % unknown) and the roboflow
``valid`` crops 94.6 % instead of 97.8 % (``bench/vision.py`` sections f and g).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hardware_sims.tile_art import drawn_tile_set, load_tile_set  # noqa: E402
from vision.naming.embedding import NOT_TILES_PATH, EmbeddingClassifier  # noqa: E402
from vision.naming.features import CameraAugmenter  # noqa: E402
from vision.photos.data import DATA, camerash_photos, camerash_split, roboflow_crops  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=32, help="prototypes (k-means centres)")
    ap.add_argument("--out", type=Path, default=NOT_TILES_PATH)
    args = ap.parse_args()
    cv2.setNumThreads(1)
    flowers = [c.image for c in roboflow_crops("train") if c.tile is None]
    flowers += [c.image for c in camerash_split(camerash_photos())[0] if c.tile is None]
    aug = CameraAugmenter(seed=7)
    backs = [drawn_tile_set().back, load_tile_set(DATA / "tiles-fluffystuff").back]
    backs = [b for b in backs for _ in range(3)]
    backs = [aug(b) for b in backs]
    clf = EmbeddingClassifier()  # embeds as the classifier reads (both ways up, averaged)
    z = clf._embed(flowers + backs).astype(np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 100, 1e-4)
    cv2.setRNGSeed(7)
    _, _, centres = cv2.kmeans(z, args.k, None, criteria, 5, cv2.KMEANS_PP_CENTERS)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    np.save(args.out, centres.astype(np.float16))
    print(f"{len(flowers)} flowers and seasons, {len(backs)} backs -> {args.k} prototypes in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
