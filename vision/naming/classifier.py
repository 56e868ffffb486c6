"""Tile classification: which of the 34 kinds (plus red fives) an upright tile crop shows, or unknown.

Method (chosen by measurement, see docs/vision.md and ``python bench/classifier_compare.py``):
each enrolled image is normalised to 36x48, distorted into a few dozen camera-like
copies (rotation, scale, perspective, blur, noise, light), and each copy is described
by HOG of the grey image plus a coarse, white-balanced chroma layout (the colour
block is what tells a red five from a plain five). A crop is classified by cosine
nearest neighbour over all enrolled copies; the best and the runner-up *kind* give a
similarity and a margin, and an answer below either threshold is reported as
``None`` (unknown), never as a guess.

Tile designs differ between sets, so a set is enrolled: from a dict of images,
from a directory of images named by notation (or by FluffyStuff names), or from
one photo of the tiles laid in a grid (:class:`GridLayout`). ``save``/``load``
keep an enrolled model so a club enrolls once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from .features import CameraAugmenter, normalise, tile_features, to_bgr
from .model_file import EMBED_FORMAT, LDA_FORMAT, read_model
from .tile_set import DEFAULT_GRID, FLUFFY_NAMES, TILES, GridLayout, read_tile_directory
from .tile_set import rotate as _rotate

#: re-exported: the tile set is :mod:`vision.naming.tile_set`
__all__ = ["DEFAULT_GRID", "FLUFFY_NAMES", "TILES", "GridLayout", "TileClassifier", "read_tile_directory"]

#: what ``save`` writes (:mod:`vision.naming.model_file`)
MODEL_FORMAT = LDA_FORMAT


@dataclass
class TileClassifier:
    """Enroll a tile set, then classify upright tile crops of any size.

    Each enrolled image becomes ``augment_per_image`` copies as a table camera would crop it
    (:class:`~vision.naming.features.CameraAugmenter`); their features give a discriminant metric (the
    within-kind scatter of the copies whitened, projected on the directions that separate the
    kinds, LDA) in which a crop goes to the nearest kind mean. Similarities come from distances
    in that space (:meth:`scores`); two gates make an answer ``None``:

    - ``min_similarity``: the best kind's similarity (is the crop that kind's face at all?
      flowers, seasons, tile backs, noise and other sets' designs lie far from every kind);
    - ``min_margin``: its lead over the runner-up kind's similarity (two kinds fit nearly as
      well: a guess, so not given).

    ``shrinkage`` pulls the within-kind scatter towards its mean variance (the copies of one
    image underestimate how a real crop varies). ``slot_shift_px`` / ``slot_turn_deg``: the
    copies are cut up to that far off the face (uniform), as the detector cuts a crop along the
    nominal slot while the tile lies a little beside it (1.5 mm, 3 degrees at ~1.2 px/mm).
    Thresholds were set on measurements (docs/vision.md, ``python bench/frame_crops.py``).
    """

    min_similarity: float = 0.62
    min_margin: float = 0.02
    augment_per_image: int = 60
    colour_weight: float = 1.2
    shrinkage: float = 0.6
    slot_shift_px: float = 1.8
    slot_turn_deg: float = 3.0
    seed: int = 0
    _raw: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32), repr=False)
    _labels: list[str] = field(default_factory=list, repr=False)
    _class_index: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32), repr=False)
    _kinds: list[str] = field(default_factory=list, repr=False)
    _proj: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32), repr=False)
    _proj_origin: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32), repr=False)
    _kind_means: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32), repr=False)
    _scale: float = field(default=1.0, repr=False)

    # ------------------------------------------------------------------ enrollment

    @property
    def tiles(self) -> list[str]:
        """The kinds enrolled so far (sorted in TILES order, unknown names last)."""
        return list(self._kinds)

    def _describe(self, canon: np.ndarray) -> np.ndarray:
        return tile_features(canon, self.colour_weight)

    def enroll(self, images_by_tile: Mapping[str, Sequence[np.ndarray] | np.ndarray]) -> None:
        """Add exemplars: ``{'1m': image or [images], ...}``. Any size/format (BGR, BGRA, grey).

        Each image is enrolled as itself plus ``augment_per_image`` camera-like copies.
        Calling again adds to what is enrolled (more photos of a kind make it more robust).
        """
        aug = CameraAugmenter(slot_shift_px=self.slot_shift_px, slot_turn_deg=self.slot_turn_deg,
                              seed=self.seed + len(self._labels))  # fmt: skip
        new_feats: list[np.ndarray] = []
        new_labels: list[str] = []
        for tile, imgs in images_by_tile.items():
            if tile not in TILES:
                raise ValueError(f"unknown tile name {tile!r}: expected mjai notation such as '1m', '5mr', 'E'")
            seq = [imgs] if isinstance(imgs, np.ndarray) else list(imgs)
            for img in seq:
                bgr = to_bgr(img)  # once: artwork is large BGRA, and its copies are made from it
                new_feats.append(self._describe(normalise(bgr)))
                new_labels.append(tile)
                for copy in aug.copies(bgr, self.augment_per_image):
                    new_feats.append(self._describe(normalise(copy)))
                    new_labels.append(tile)
        if not new_feats:
            return
        stacked = np.stack(new_feats).astype(np.float32)
        self._raw = stacked if self._raw.size == 0 else np.vstack([self._raw, stacked])
        self._labels.extend(new_labels)
        self._reindex()

    def _reindex(self) -> None:
        self._index_kinds()
        x = self._raw.astype(np.float64)
        means = np.stack([x[self._class_index == i].mean(axis=0) for i in range(len(self._kinds))])
        if len(self._kinds) >= 2:
            self._fit_metric(x, means)

    def _index_kinds(self) -> None:
        """The kinds enrolled (in TILES order) and each copy's kind."""
        order = {t: i for i, t in enumerate(TILES)}
        self._kinds = sorted(set(self._labels), key=lambda t: order.get(t, len(order)))
        pos = {t: i for i, t in enumerate(self._kinds)}
        self._class_index = np.array([pos[t] for t in self._labels], np.int32)

    def _fit_metric(self, x: np.ndarray, means: np.ndarray) -> None:
        """LDA: whiten the within-kind scatter (shrunk towards its mean variance), keep the
        directions along which the kind means spread, and the kind means in that space.

        With ``S`` the shrunk scatter and ``M`` the centred kind means, the projection is
        ``S^-1 M^T V diag(1/sv)``, ``V`` and ``sv`` the eigenvectors and square roots of the
        eigenvalues of the kinds' Gram matrix ``M S^-1 M^T``: the same space as whitening by a
        Cholesky factor of ``S`` and taking the singular vectors of the whitened means, with one
        solve of ``S`` and no factor. ``S`` is a multiple of the identity plus a rank-``n`` update,
        so where there are fewer copies than features (and the shrinkage is not near 0) the solve
        is an ``n x n`` one (Woodbury)."""
        within = x - means[self._class_index]
        n, d = within.shape
        mean_var = float(np.einsum("ij,ij->", within, within)) / max(1, n) / d
        a = (1.0 - self.shrinkage) / max(1, n)  # S = a W^T W + c I
        c = self.shrinkage * mean_var + 1e-9
        origin = means.mean(axis=0)
        centred = means - origin
        if n < d and self.shrinkage >= 0.05:  # the n x n system stays well conditioned (< 1 + 19 d)
            inner = a * (within @ within.T)
            inner[np.diag_indices(n)] += c
            solved = (centred.T - a * within.T @ np.linalg.solve(inner, within @ centred.T)) / c
        else:
            cov = a * (within.T @ within)
            cov[np.diag_indices(d)] += c
            solved = np.linalg.solve(cov, centred.T)  # S^-1 M^T, (d, kinds)
        gram = centred @ solved
        evals, vecs = np.linalg.eigh((gram + gram.T) / 2)
        sv = np.sqrt(np.clip(evals[::-1], 0.0, None))  # the whitened means' singular values, largest first
        vecs = vecs[:, ::-1]
        keep = max(1, min(len(self._kinds) - 1, int(np.sum(sv > sv[0] * 1e-6))))
        proj = solved @ (vecs[:, :keep] / np.where(sv[:keep] > 0, sv[:keep], 1.0))
        self._proj = proj.astype(np.float32)
        self._proj_origin = origin.astype(np.float32)
        self._kind_means = (centred @ proj).astype(np.float32)
        # the unit of distance: the median, over kinds, of the squared distance to the nearest other kind
        between = ((self._kind_means[:, None, :] - self._kind_means[None, :, :]) ** 2).sum(axis=2)
        np.fill_diagonal(between, np.inf)
        self._scale = float(np.median(between.min(axis=1)))

    def enroll_directory(self, path: str | Path) -> list[str]:
        """Enroll every image in ``path`` named by notation (``1m.png``, ``5mr.png``, ``E.png``)
        or by FluffyStuff name (``Man1.png``, ``Pin5-Dora.png``, ``Ton.png``).

        Other files (``Back.png``, ``README.md``) are skipped; a name may carry a suffix
        after an underscore (``1m_2.jpg``) to enroll several photos of one kind.
        Returns the tiles enrolled.
        """
        found = read_tile_directory(path)
        self.enroll(found)
        return sorted(found, key=TILES.index)

    def enroll_grid(self, image: np.ndarray, layout: GridLayout | None = None) -> list[str]:
        """Enroll from one image of the tiles laid in a grid (see :class:`GridLayout` for the order)."""
        layout = layout or GridLayout()
        found: dict[str, list[np.ndarray]] = {}
        for tile, crop in layout.cells(image):
            found.setdefault(tile, []).append(crop)
        self.enroll(found)
        return list(found)

    # ------------------------------------------------------------------ classification

    def scores(self, image: np.ndarray) -> tuple[str, float, float]:
        """(best kind, its similarity, the runner-up kind's similarity), without rejection.

        A kind's similarity is ``1 - d2 / scale``: ``d2`` the squared distance of the crop to the
        kind's mean in the discriminant space, ``scale`` the median squared distance between a
        kind's mean and its nearest other kind's: 1 on the mean, 0 as far from it as neighbouring
        kinds are from each other, negative beyond. The lead ``s1 - s2`` is then the (scaled)
        log-likelihood ratio of the two kinds under a shared Gaussian spread.
        Exposed for calibration and benchmarks; use :meth:`classify` for answers.
        """
        return self.scores_many([image])[0]

    def scores_many(self, images: Sequence[np.ndarray]) -> list[tuple[str, float, float]]:
        """:meth:`scores` of several crops, projected and compared in one matrix product (the pipeline's
        shifted crops of an unsure tile: a cold frame reads a few dozen of them)."""
        if not self._labels:
            raise RuntimeError("nothing enrolled: call enroll(), enroll_directory() or enroll_grid() first")
        if len(self._kinds) < 2:
            raise RuntimeError("enroll at least two kinds: the metric is learnt from what tells kinds apart")
        if not len(images):
            return []
        f = np.stack([self._describe(normalise(i)) for i in images])
        z = (f - self._proj_origin) @ self._proj
        d2 = (z * z).sum(axis=1)[:, None] - 2.0 * z @ self._kind_means.T + (self._kind_means**2).sum(axis=1)[None, :]
        top2 = np.argpartition(d2, 1, axis=1)[:, :2]
        out = []
        for row, (a, b) in zip(d2, top2, strict=True):
            best, second = (a, b) if row[a] <= row[b] else (b, a)
            s1, s2 = 1.0 - row[[best, second]] / self._scale
            out.append((self._kinds[best], float(s1), float(s2)))
        return out

    def classify(self, image: np.ndarray) -> tuple[str | None, float]:
        """Upright tile crop (any size, BGR/BGRA/grey) -> (tile or None, confidence in [0, 1]).

        The confidence is the best kind's similarity; the answer is ``None`` when that
        similarity is under ``min_similarity`` (the crop is far from every kind: not a tile face,
        or a set not enrolled) or its lead over the runner-up kind's is under ``min_margin``
        (two kinds fit nearly equally well: a guess, so not given).
        """
        return self.decide(*self.scores(image))

    def decide(self, tile: str, s1: float, s2: float) -> tuple[str | None, float]:
        """The answer for :meth:`scores` output: (tile, confidence), or (None, confidence) when unsure."""
        conf = float(np.clip(s1, 0.0, 1.0))
        if s1 < self.min_similarity or s1 - s2 < self.min_margin:
            return None, conf
        return tile, conf

    def classify_any_orientation(
        self, image: np.ndarray, rotations: Sequence[int] = (0, 180, 90, 270)
    ) -> tuple[str | None, float, int]:
        """Try the crop turned by each of ``rotations`` (degrees clockwise) and keep the best.

        Returns (tile or None, confidence, rotation that makes the crop upright). The
        opposite player's tiles reach the camera upside down, sideways ones at 90/270.
        A kind that looks the same turned (1p, 8s...) may report either rotation.
        """
        best: tuple[str | None, float, int, float] = (None, -1.0, 0, -1.0)
        for rot in rotations:
            turned = _rotate(image, rot)
            tile, s1, s2 = self.scores(turned)
            ok = s1 >= self.min_similarity and s1 - s2 >= self.min_margin
            if s1 > best[1]:
                best = (tile if ok else None, s1, rot, s2)
        tile, s1, rot, _ = best
        return tile, float(np.clip(s1, 0.0, 1.0)), rot

    # ------------------------------------------------------------------ persistence

    def save(self, path: str | Path) -> None:
        """Write the enrolled model to ``path`` (.npz: features, labels and parameters as JSON).

        The features of every enrolled copy are kept (not only the fitted metric), so that
        :meth:`enroll` can add to a loaded model; the fitted metric is kept too (where two kinds or more
        are enrolled), so that ``load`` reads it rather than fitting it again from the features.
        Stored, not deflated: the float features of a few thousand copies (tens of MB) shrink by a sixth at
        most, and deflating them takes seconds where storing them takes a tenth of one (reading them back alike).
        """
        params = {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}
        metric = {"proj": self._proj, "proj_origin": self._proj_origin, "kind_means": self._kind_means,
                  "scale": np.array(self._scale, np.float64)} if self._proj.size else {}  # fmt: skip
        np.savez(
            Path(path),
            format=np.array(MODEL_FORMAT),
            feats=self._raw,
            labels=np.array(json.dumps(self._labels)),
            params=np.array(json.dumps(params)),
            **metric,
        )

    @classmethod
    def from_files(cls, model: str | Path | None = None, tiles: str | Path | None = None) -> TileClassifier:
        """The classifier a configuration names: a saved ``model`` (:meth:`load`), or a directory of
        ``tiles`` enrolled now (``enroll_directory``, a few seconds). A set enrolled from artwork is
        enrolled in the learnt embedding (:class:`~vision.naming.embedding.EmbeddingClassifier`, returned
        as such): it reads an artwork it never trained on best (an unseen dark set: 98.7 / 99.8 % at
        64 / 40 px with 0 wrong, the LDA 96.3 / 97.9 %). Raises ``ValueError`` with a message a club can
        act on (neither given, both given, a file that is no model, no tile images)."""
        if (model is None) == (tiles is None):
            raise ValueError("give either a saved tile model or a directory of tile images to enroll, not "
                             f"{'both' if model is not None else 'neither'}")  # fmt: skip
        if model is not None:
            return cls.load(model)
        from .embedding import EmbeddingClassifier

        clf = EmbeddingClassifier()
        clf.enroll_directory(tiles)  # type: ignore[arg-type]
        return clf  # type: ignore[return-value]

    @classmethod
    def load(cls, path: str | Path) -> TileClassifier:
        """Read a model written by :meth:`save` (or by :meth:`EmbeddingClassifier.save
        <vision.naming.embedding.EmbeddingClassifier.save>`, which is returned as such: the file says which
        method enrolled it); answers are identical to the saved classifier's.

        Raises ``ValueError`` naming the file when it is no model, one of an older format, or a set
        enrolled in the embedding of another network than the installed one."""
        from .embedding import EmbeddingClassifier

        def lda(z: Any) -> TileClassifier:
            clf = cls(**json.loads(str(z["params"])))
            clf._raw = z["feats"].astype(np.float32)
            clf._labels = list(json.loads(str(z["labels"])))
            clf._index_kinds()
            if "proj" in z.files and len(clf._kinds) >= 2:  # the metric as fitted when saved
                clf._proj = z["proj"].astype(np.float32)
                clf._proj_origin = z["proj_origin"].astype(np.float32)
                clf._kind_means = z["kind_means"].astype(np.float32)
                clf._scale = float(z["scale"])
            else:  # a file without it: fitted again from the features
                clf._reindex()
            return clf

        return read_model(path, {EMBED_FORMAT: EmbeddingClassifier.from_npz, MODEL_FORMAT: lda})  # type: ignore[return-value]
