"""Choose EmbeddingClassifier's rejection parameters on *training* photos: `python training/tune_rejection.py`

Enrolls 3 crops per kind from roboflow ``train`` (photos of one half, by name) and reads the crops
of the other half; also Camerash's training half enrolled from 3 of its photos per kind. For each
(impostor_quantile, margin_fraction) prints right / wrong / unknown and flowers rejected, so the
defaults can be chosen for wrong < 0.3 % without touching the measured splits (valid, Camerash's
measuring half).
"""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.vision_real import pick_enrollment
from vision.naming.embedding import EmbeddingClassifier
from vision.photos.data import camerash_photos, camerash_split, roboflow_crops


def evaluate(name: str, enroll: dict, rest: list, limit: int = 2500) -> None:
    clf = EmbeddingClassifier(calibrated=False)
    clf.enroll(enroll)
    rest = rest[:limit]
    clf.calibrate()
    sims = clf._emb @ clf._protos.T  # recompute the calibration distributions once
    del sims
    scores = clf.scores_many([c.image for c in rest])
    truth = [c.tile for c in rest]
    print(f"{name}: {sum(t is not None for t in truth)} tiles, {sum(t is None for t in truth)} flowers; raw top-1 "
          f"{100 * np.mean([s[0] == t for s, t in zip(scores, truth, strict=True) if t is not None]):.2f} %")
    for q in (0.9, 0.95, 0.99, 0.995, 0.999):
        for f in (0.1, 0.2, 0.3, 0.4, 0.5):
            clf.impostor_quantile, clf.margin_fraction = q, f
            clf.calibrate()
            right = wrong = unk = oth = rej = 0
            for (k, s1, s2), t in zip(scores, truth, strict=True):
                got, _ = clf.decide(k, s1, s2)
                if t is None:
                    oth += 1
                    rej += got is None
                elif got is None:
                    unk += 1
                elif got == t:
                    right += 1
                else:
                    wrong += 1
            n = max(1, right + wrong + unk)
            print(f"  q {q:<5} f {f:<4} sim>={clf.min_similarity:.3f} lead>={clf.min_margin:.3f}: right "
                  f"{100 * right / n:.2f} wrong {100 * wrong / n:.2f} unknown {100 * unk / n:.2f}; flowers rejected "
                  f"{100 * rej / max(1, oth):.1f} %", flush=True)


def main() -> int:
    train = roboflow_crops("train")
    a = [c for c in train if zlib.crc32(c.photo.encode()) % 2 == 0]
    b = [c for c in train if zlib.crc32(c.photo.encode()) % 2 == 1]
    evaluate("roboflow train, half A enrolled (3/kind), half B read", pick_enrollment(a, 3, 5), b)
    cam, _ = camerash_split(camerash_photos())
    enroll = pick_enrollment(cam, 3, 5)
    used = {id(i) for v in enroll.values() for i in v}
    evaluate("Camerash training half, 3/kind enrolled, rest read", enroll, [c for c in cam if id(c.image) not in used])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
