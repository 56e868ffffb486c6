"""Build the photo reader's packaged tile set (vision/models/photo_tiles.npz): `python training/photo_prototypes.py`

A player who photographs a hand has enrolled nothing, so the photo reader needs prototypes that stand
for the common sets as they are: the learnt embedding (vision/naming/embedding.py) enrolled with

- the artwork of two Japanese sets (the project's drawn tiles and FluffyStuff's CC0 faces), the only
  source of red fives;
- the ``per_kind`` most typical real crops of each kind from the *training* photos only (roboflow
  ``train``, CC BY 4.0; Camerash's training half, MIT): the crops nearest their kind's mean embedding,
  so blurred, cut-off and odd-set crops stay out. The measured photos (roboflow ``valid``, Camerash's
  measuring half) never enter.

Each image becomes one prototype with ``augment`` camera-like copies; the rejection gates are
calibrated on them as for any enrolled set, with a lead of ``margin_fraction`` = 0.25 of the set's median
lead (the embedding's default is 0.3): chosen on the roboflow ``train`` photos read through the photo
reader (every other photo, their labelled boxes as the finder): 0.3 / 0.25 / 0.2 read 97.2 / 98.0 / 98.5 %
right with 0.40 / 0.46 / 0.54 % wrong; 0.25 keeps the wrong answers under half a percent.

No torch: the packaged network embeds, in half a minute on one core. The file names the network that made
it, so a retrained embedding refuses it until this is run again.
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

from hardware_sims.tile_art import drawn_tile_set, load_tile_set  # noqa: E402
from vision.naming.embedding import EmbeddingClassifier, shared_embedder  # noqa: E402
from vision.photos.data import DATA, PhotoCrop, camerash_photos, camerash_split, roboflow_crops  # noqa: E402
from vision.photos.reader import PACKAGED_TILES  # noqa: E402


def typical(crops: list[PhotoCrop], per_kind: int) -> dict[str, list[np.ndarray]]:
    """The ``per_kind`` crops of each kind nearest the kind's mean embedding."""
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-kind", type=int, default=4, help="real crops per kind from each photo collection")
    ap.add_argument("--augment", type=int, default=6, help="camera-like copies per image")
    ap.add_argument("--margin-fraction", type=float, default=0.25,
                    help="the lead an answer needs, as a fraction of the set's median lead (see the docstring)")
    ap.add_argument("--out", type=Path, default=PACKAGED_TILES)
    args = ap.parse_args()
    cv2.setNumThreads(1)
    start = time.monotonic()
    clf = EmbeddingClassifier(augment_per_image=args.augment, margin_fraction=args.margin_fraction, seed=17)
    for tile_set in (drawn_tile_set(), load_tile_set(DATA / "tiles-fluffystuff")):
        clf.enroll({t: [face] for t, face in tile_set.faces.items()})
    real = {"roboflow train": roboflow_crops("train"), "Camerash training half": camerash_split(camerash_photos())[0]}
    for name, crops in real.items():
        picked = typical(crops, args.per_kind)
        clf.enroll(picked)
        print(f"{name}: {sum(map(len, picked.values()))} crops of {len(picked)} kinds")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    clf.save(args.out)
    size = args.out.stat().st_size // 1024
    print(f"{len(clf._protos)} prototypes of {len(clf.tiles)} kinds -> {args.out} ({size} KB, "
          f"gates: similarity {clf.min_similarity:.3f}, lead {clf.min_margin:.3f}; "
          f"{time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
