"""Tile recognition by a learnt embedding: a club's set enrolled as prototypes, read by nearest prototype.

A small CNN (``vision/models/tile_embed.onnx``, trained by ``training/train_embedding.py`` on real
photos of many sets and domain-randomised renders) maps a 48x64 colour crop to a 128-d unit vector
in which crops of one kind lie close whatever the set's design, light and camera. It runs with
OpenCV's ``dnn`` module (no other runtime dependency).

A set is **enrolled** from a few images per kind (artwork, photos, frame crops): each image and a
few camera-like copies of it (:class:`~vision.naming.features.CameraAugmenter`) are embedded, and the mean
of each image's copies is one **prototype** of its kind (a kind has as many prototypes as images:
several frames, turned tiles, other lights). A crop goes to the kind of its most similar
prototype (cosine). Two gates make an answer ``None`` (unknown), **calibrated per enrolled set
from the enrollment images themselves** (:meth:`EmbeddingClassifier.calibrate`): each copy is
read against the prototypes built without it (leave one image out where a kind has several), which
gives how similar a crop of the same kind and of the nearest other kind are *in this set*:

- ``min_similarity``: a crop must be more similar to its best kind than crops of other kinds
  reach (the ``impostor_quantile`` of the nearest-other-kind similarity): flowers, seasons,
  backs and other sets lie lower;
- ``min_margin``: the lead of the best kind over the runner-up must be at least
  ``margin_fraction`` of the set's median lead (and never under ``margin_floor``).

The defaults (0.95, 0.3) were chosen with ``python training/tune_rejection.py`` on training photos
only (docs/vision.md).

A fixed threshold set on mixed photos is far too strict on some sets, so the set's own spread sets
them here.

Every crop, enrolled or read, is embedded as it lies and turned half round, and the two vectors are
averaged (``half_turn``): the network learnt both ways up (the far player's tiles reach the camera upside
down), so the pair agrees on the kind and averages away what one look got wrong. On real photos it
cut the wrong answers that pass the gates by a fifth to a half for the price of a second pass
(docs/vision.md, "The learnt embedding").
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from .features import CameraAugmenter, to_bgr
from .model_file import EMBED_FORMAT, LDA_FORMAT, OtherNetwork, read_model
from .tile_set import TILES, GridLayout, read_tile_directory, rotate

__all__ = ["EMBED_FORMAT", "MODEL_PATH", "NOT_TILES_PATH", "EmbeddingClassifier", "OtherNetwork", "TileEmbedder"]

MODEL_PATH = Path(__file__).resolve().parents[1] / "models" / "tile_embed.onnx"
#: flowers, seasons and backs as the network sees them (training/not_tiles.py): the runner-up they deserve
NOT_TILES_PATH = Path(__file__).resolve().parents[1] / "models" / "not_tiles.npy"
EMBED_W, EMBED_H = 48, 64
class TileEmbedder:
    """Crops -> unit 128-d embeddings with the packaged ONNX network (OpenCV dnn, CPU)."""

    def __init__(self, path: str | Path = MODEL_PATH) -> None:
        if not Path(path).is_file():
            raise FileNotFoundError(f"tile embedding model {path} is missing: reinstall tablesvc "
                                    "(it ships in the package) or run training/train_embedding.py")  # fmt: skip
        self.net = cv2.dnn.readNetFromONNX(str(path))
        #: which network this is: a set's embeddings mean something only in the network that made them
        self.fingerprint = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
        self.net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
        self.net.setPreferableTarget(cv2.dnn.DNN_TARGET_CPU)
        #: one network is shared by every classifier of the process (:func:`shared_embedder`) and an OpenCV
        #: ``Net`` is not safe to share between threads: one forward pass at a time, its output copied out
        self._net_lock = threading.Lock()

    @staticmethod
    def prepare(image: np.ndarray) -> np.ndarray:
        img = to_bgr(image)
        interp = cv2.INTER_AREA if img.shape[0] > EMBED_H else cv2.INTER_LINEAR
        return cv2.resize(img, (EMBED_W, EMBED_H), interpolation=interp)

    def __call__(self, images: Sequence[np.ndarray]) -> np.ndarray:
        if not images:
            return np.zeros((0, 128), np.float32)
        blob = cv2.dnn.blobFromImages([self.prepare(i) for i in images], scalefactor=1 / 63.75,
                                      size=(EMBED_W, EMBED_H), mean=(127.5, 127.5, 127.5), swapRB=False)  # fmt: skip
        with self._net_lock:
            self.net.setInput(blob)
            out = self.net.forward().reshape(len(images), -1).astype(np.float32)  # astype: a copy
        return out / (np.linalg.norm(out, axis=1, keepdims=True) + 1e-9)


@lru_cache(maxsize=2)
def shared_embedder(path: str = str(MODEL_PATH)) -> TileEmbedder:
    """One network per process (reading it takes ~20 ms; every classifier can share it)."""
    return TileEmbedder(path)


@lru_cache(maxsize=1)
def not_tile_prototypes() -> np.ndarray:
    """The packaged "not a tile" prototypes (k, 128); none (0, 128) where the file is missing."""
    if not NOT_TILES_PATH.is_file():
        return np.zeros((0, 128), np.float32)
    return np.load(NOT_TILES_PATH).astype(np.float32)


@dataclass
class EmbeddingClassifier:
    """Enroll a tile set as prototypes in the learnt embedding, then classify upright crops.

    Same interface as :class:`~vision.naming.classifier.TileClassifier` (``enroll``, ``enroll_directory``,
    ``scores``, ``decide``, ``classify``, ``classify_any_orientation``, ``save``, ``load``), so the
    pipeline, the service and the CLI take either. ``min_similarity`` / ``min_margin`` are set by
    :meth:`calibrate` after every enrollment (unless ``calibrated`` is False: then they are kept).
    ``unsure_below``: the pipeline reads shifted crops of a tile whose best similarity is under it
    (``unsure_lead_below``: or whose lead over the runner-up is; 0 = the similarity alone).
    ``half_turn``: embed each crop both ways up and average (module docstring). ``not_tiles``: the
    packaged flower, season and back prototypes (``training/not_tiles.py``) compete as a runner-up: a
    crop must lead them as it leads every other kind (in reading and in the calibration alike).
    """

    augment_per_image: int = 12
    impostor_quantile: float = 0.95
    margin_fraction: float = 0.3
    margin_floor: float = 0.03
    min_similarity: float = 0.5
    min_margin: float = 0.05
    unsure_below: float = 0.8
    unsure_lead_below: float = 0.0
    half_turn: bool = True
    not_tiles: bool = True
    calibrated: bool = True
    slot_shift_px: float = 1.8
    slot_turn_deg: float = 3.0
    seed: int = 0
    _emb: np.ndarray = field(default_factory=lambda: np.zeros((0, 128), np.float32), repr=False)
    _labels: list[str] = field(default_factory=list, repr=False)
    _image_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32), repr=False)
    _kinds: list[str] = field(default_factory=list, repr=False)
    _protos: np.ndarray = field(default_factory=lambda: np.zeros((0, 128), np.float32), repr=False)
    _proto_kind: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32), repr=False)
    #: the prototypes in kind order, where each kind's run starts, and those kinds (for :meth:`_kind_sims`)
    _by_kind: tuple[np.ndarray, np.ndarray, np.ndarray] = field(
        default_factory=lambda: (np.zeros(0, np.intp), np.zeros(0, np.intp), np.zeros(0, np.intp)), repr=False)
    report: dict[str, dict[str, float]] = field(default_factory=dict, repr=False)

    @property
    def embedder(self) -> TileEmbedder:
        return shared_embedder()

    @property
    def tiles(self) -> list[str]:
        return list(self._kinds)

    def _embed(self, images: Sequence[np.ndarray]) -> np.ndarray:
        """Unit embeddings of ``images``: with ``half_turn``, the mean of each crop's and its half turn's."""
        if not len(images):
            return self.embedder(images)
        return self.embed_looks(self.looks_of(images, turned=self.half_turn))

    def looks_of(self, images: Sequence[np.ndarray], turned: bool = True) -> np.ndarray:
        """The :class:`TileEmbedder` rows of ``images`` as they lie and, with ``turned``, turned half round, in one
        network pass: (2, n, 128), or (1, n, 128) without ``turned``. Classifiers of one network
        (:meth:`same_network`) read the same looks, each by :meth:`embed_looks`."""
        n = len(images)
        if not turned:
            return self.embedder(images).reshape(1, n, -1)
        z = self.embedder([*images, *(cv2.rotate(to_bgr(i), cv2.ROTATE_180) for i in images)])
        return np.stack([z[:n], z[n:]])

    def embed_looks(self, looks: np.ndarray) -> np.ndarray:
        """The embeddings (n, 128) this classifier reads crops by (:meth:`embed_many`), from their
        :meth:`looks_of` (which must hold the turned looks where ``half_turn``)."""
        if not self.half_turn:
            return looks[0]
        if len(looks) < 2:
            raise ValueError("a half_turn classifier reads each crop both ways up: give the turned looks too")
        return self.both_ways_of(looks[0], looks[1])

    def same_network(self, other: object) -> bool:
        """Whether ``other`` is an embedding classifier of the same network (its looks mean the same)."""
        return isinstance(other, EmbeddingClassifier) and other.embedder.fingerprint == self.embedder.fingerprint

    @staticmethod
    def both_ways_of(upright: np.ndarray, turned: np.ndarray) -> np.ndarray:
        """The ``half_turn`` embeddings (n, 128) of crops whose two looks, as they lie and turned half round,
        were embedded apart (rows of :class:`TileEmbedder` output): what :meth:`embed_many` gives for them."""
        z = upright + turned
        return z / (np.linalg.norm(z, axis=1, keepdims=True) + 1e-9)

    # ------------------------------------------------------------------ enrollment
    def enroll(self, images_by_tile: Mapping[str, Sequence[np.ndarray] | np.ndarray],
               looks: np.ndarray | None = None) -> None:
        """Add images: ``{'1m': image or [images], ...}``; each image becomes one prototype of its kind.

        ``looks``: the images' own :meth:`looks_of`, in the order given here (kind by kind, each kind's images
        in order), where they were made already (by a classifier of the same network); only the camera-like
        copies then go through the network."""
        aug = CameraAugmenter(slot_shift_px=self.slot_shift_px, slot_turn_deg=self.slot_turn_deg,
                              seed=self.seed + len(self._labels))  # fmt: skip
        next_id = int(self._image_ids.max()) + 1 if self._image_ids.size else 0
        embs, labels, ids = [], [], []
        at = 0
        for tile, imgs in images_by_tile.items():
            if tile not in TILES:
                raise ValueError(f"unknown tile name {tile!r}: expected mjai notation such as '1m', '5mr', 'E'")
            for img in [imgs] if isinstance(imgs, np.ndarray) else list(imgs):
                bgr = to_bgr(img)  # once: artwork is large BGRA, and its copies are made from it
                copies = aug.copies(bgr, self.augment_per_image)
                batch = [bgr, *copies]
                if looks is None:
                    embs.append(self._embed(batch))
                else:
                    embs.append(np.vstack([self.embed_looks(looks[:, at : at + 1]), self._embed(copies)]))
                at += 1
                labels += [tile] * len(batch)
                ids += [next_id] * len(batch)
                next_id += 1
        if looks is not None and looks.shape[1] != at:
            raise ValueError(f"looks of {looks.shape[1]} images given for {at} images")
        if not embs:
            return
        self._emb = np.vstack([self._emb, *embs]).astype(np.float32)
        self._labels += labels
        self._image_ids = np.concatenate([self._image_ids, np.array(ids, np.int32)])
        self._refit()

    def enroll_directory(self, path: str | Path) -> list[str]:
        """As :meth:`TileClassifier.enroll_directory` (notation or FluffyStuff names, ``1m_2.png`` adds)."""
        found = read_tile_directory(path)
        self.enroll(found)
        return list(found)

    def enroll_grid(self, image: np.ndarray, layout: object = None) -> list[str]:
        layout = layout if isinstance(layout, GridLayout) else GridLayout()
        found: dict[str, list[np.ndarray]] = {}
        for tile, crop in layout.cells(image):
            found.setdefault(tile, []).append(crop)
        self.enroll(found)
        return list(found)

    def _refit(self) -> None:
        order = {t: i for i, t in enumerate(TILES)}
        self._kinds = sorted(set(self._labels), key=lambda t: order.get(t, len(order)))
        pos = {t: i for i, t in enumerate(self._kinds)}
        image_ids = np.unique(self._image_ids)
        protos, kinds = [], []
        for i in image_ids:
            sel = self._image_ids == i
            m = self._emb[sel].mean(axis=0)
            protos.append(m / (np.linalg.norm(m) + 1e-9))
            kinds.append(pos[self._labels[int(np.flatnonzero(sel)[0])]])
        self._protos = np.stack(protos).astype(np.float32)
        self._proto_kind = np.array(kinds, np.int32)
        order = np.argsort(self._proto_kind, kind="stable")
        present, starts = np.unique(self._proto_kind[order], return_index=True)
        self._by_kind = (order, starts, present)
        if self.calibrated and len(self._kinds) >= 2:
            self.calibrate()

    def _kind_sims(self, sims: np.ndarray) -> np.ndarray:
        """(n, prototypes) similarities -> (n, kinds): each kind's best prototype (-2 for a kind without one).

        The columns are taken in kind order (:attr:`_by_kind`) and each kind's run is reduced at once."""
        out = np.full((sims.shape[0], len(self._kinds)), -2.0, np.float32)
        order, starts, present = self._by_kind
        if len(order) and sims.shape[0]:
            out[:, present] = np.maximum.reduceat(sims[:, order], starts, axis=1)
        return out

    def calibrate(self) -> dict[str, dict[str, float]]:
        """Set the two gates from the enrollment copies read against prototypes built without them.

        For a copy of image *i*: its own kind's similarity is to the kind's other images'
        prototypes where it has any, else to image *i*'s prototype made from its other copies; the
        nearest other kind's similarity is to every other prototype. ``min_similarity`` is the
        ``impostor_quantile`` of the nearest-other-kind similarities (what an other kind reaches),
        ``min_margin`` is ``margin_fraction`` of the median lead of the own kind. Also fills
        :attr:`report` (per kind: median own similarity, median lead, nearest other kind).
        """
        sims = self._emb @ self._protos.T  # (copies, prototypes)
        pos = {t: i for i, t in enumerate(self._kinds)}
        own_k = np.array([pos[t] for t in self._labels], np.int32)
        proto_ids = np.unique(self._image_ids)
        proto_of_copy = np.searchsorted(proto_ids, self._image_ids)
        # leave one image out
        sims_loo = sims.copy()
        sims_loo[np.arange(len(sims)), proto_of_copy] = -2.0
        kind_sims = self._kind_sims(sims_loo)
        own = kind_sims[np.arange(len(sims)), own_k]
        alone = own < -1.5  # the kind's only image: its prototype without this copy
        if alone.any():
            for idx in np.flatnonzero(alone):
                sel = self._image_ids == self._image_ids[idx]
                n = int(sel.sum())
                rest = self._emb[sel].sum(axis=0) - self._emb[idx]
                if n > 1:
                    own[idx] = float(self._emb[idx] @ (rest / (np.linalg.norm(rest) + 1e-9)))
                else:
                    own[idx] = 1.0
        other = kind_sims.copy()
        other[np.arange(len(sims)), own_k] = -2.0
        best_other = np.maximum(other.max(axis=1), self._not_tile_sims(self._emb))
        nearest = other.argmax(axis=1)
        lead = own - best_other
        self.min_similarity = float(np.quantile(best_other, self.impostor_quantile))
        self.min_margin = float(max(self.margin_floor, self.margin_fraction * np.median(lead)))
        self.report = {}
        for k, t in enumerate(self._kinds):
            sel = own_k == k
            counts = np.bincount(nearest[sel], minlength=len(self._kinds))
            self.report[t] = {
                "images": float(len(np.unique(self._image_ids[sel]))),
                "own": float(np.median(own[sel])),
                "lead": float(np.median(lead[sel])),
                "worst_lead": float(np.quantile(lead[sel], 0.05)),
                "read_wrong": float(np.mean(lead[sel] <= 0)),
                "nearest": self._kinds[int(counts.argmax())],
            }
        return self.report

    # ------------------------------------------------------------------ classification
    def _check(self) -> None:
        if not self._labels:
            raise RuntimeError("nothing enrolled: call enroll(), enroll_directory() or enroll_grid() first")
        if len(self._kinds) < 2:
            raise RuntimeError("enroll at least two kinds: the runner-up kind is part of every answer")

    def _not_tile_sims(self, emb: np.ndarray) -> np.ndarray:
        """Each row's similarity to the nearest "not a tile" prototype (-2 when they are not used)."""
        others = not_tile_prototypes() if self.not_tiles else np.zeros((0, 128), np.float32)
        if not len(others):
            return np.full(len(emb), -2.0, np.float32)
        return (emb @ others.T).max(axis=1)

    def scores_of(self, emb: np.ndarray) -> list[tuple[str, float, float]]:
        """(best kind, its similarity, the runner-up's similarity) for each embedding row; the runner-up
        is the second kind or a "not a tile" prototype, whichever is nearer."""
        ks = self._kind_sims(emb @ self._protos.T)
        top2 = np.argsort(-ks, axis=1)[:, :2]
        nt = self._not_tile_sims(emb)
        return [(self._kinds[a], float(ks[i, a]), float(max(ks[i, b], nt[i]))) for i, (a, b) in enumerate(top2)]

    def ranked_many(self, images: Sequence[np.ndarray], k: int = 3) -> list[tuple[tuple[str, float, float], float,
                                                                                  list[tuple[str, float]]]]:
        """For each crop: its :meth:`scores` triple, its similarity to the nearest "not a tile" prototype (a
        flower, a season, a back; -2 without them) and the ``k`` most similar kinds, best first (the best
        guesses shown for a tile the reader is not sure of). One network pass."""
        self._check()
        return self.ranked_of(self._embed(list(images)), k)

    def embed_many(self, images: Sequence[np.ndarray]) -> np.ndarray:
        """The unit embeddings the classifier reads ``images`` by (both ways up where ``half_turn``): for a caller
        that looks at the crops with more than the kinds (the photo reader's tile-or-not verifier)."""
        return self._embed(list(images))

    def ranked_of(self, emb: np.ndarray, k: int = 3) -> list[tuple[tuple[str, float, float], float,
                                                                   list[tuple[str, float]]]]:
        """:meth:`ranked_many` of embeddings already made (:meth:`embed_many`)."""
        self._check()
        ks = self._kind_sims(emb @ self._protos.T)
        nt = self._not_tile_sims(emb)
        order = np.argsort(-ks, axis=1)[:, :max(2, k)]
        out = []
        for i, row in enumerate(order):
            a, b = int(row[0]), int(row[1])
            triple = (self._kinds[a], float(ks[i, a]), float(max(ks[i, b], nt[i])))
            out.append((triple, float(nt[i]), [(self._kinds[int(j)], float(ks[i, int(j)])) for j in row[:k]]))
        return out

    def scores(self, image: np.ndarray) -> tuple[str, float, float]:
        """(best kind, cosine to its nearest prototype, the runner-up kind's), without rejection."""
        self._check()
        return self.scores_of(self._embed([image]))[0]

    def scores_many(self, images: Sequence[np.ndarray]) -> list[tuple[str, float, float]]:
        """:meth:`scores` for several crops in one network pass (cheaper per crop)."""
        self._check()
        return self.scores_of(self._embed(list(images)))

    def decide(self, tile: str, s1: float, s2: float) -> tuple[str | None, float]:
        conf = float(np.clip(s1, 0.0, 1.0))
        if s1 < self.min_similarity or s1 - s2 < self.min_margin:
            return None, conf
        return tile, conf

    def classify(self, image: np.ndarray) -> tuple[str | None, float]:
        return self.decide(*self.scores(image))

    def classify_any_orientation(
        self, image: np.ndarray, rotations: Sequence[int] = (0, 180, 90, 270)
    ) -> tuple[str | None, float, int]:
        """Read the crop turned by each of ``rotations`` (one network pass) and keep the most similar.

        With ``half_turn`` a turn and its opposite are read as one (their embeddings averaged, as every
        crop is), and of the two the one nearer to the kind's prototypes is reported as the turn."""
        self._check()
        return self.any_orientation_of(self.embedder([rotate(image, r) for r in rotations]), rotations)

    def any_orientation_of(self, single: np.ndarray, rotations: Sequence[int] = (0, 180, 90, 270),
                           ) -> tuple[str | None, float, int]:  # fmt: skip
        """:meth:`classify_any_orientation` of a crop whose turns by each of ``rotations`` were embedded already,
        one look each (``single``: one :class:`TileEmbedder` row per turn, in the order of ``rotations``)."""
        self._check()
        if not self.half_turn:
            got = self.scores_of(single)
            i = max(range(len(got)), key=lambda j: got[j][1])
            tile, conf = self.decide(*got[i])
            return tile, conf, rotations[i]
        index = {r % 360: i for i, r in enumerate(rotations)}
        pairs = [(index[r], index.get((r + 180) % 360)) for r in index if r < 180 or (r - 180) not in index]
        zs = []
        for a, b in pairs:
            z = single[a] if b is None else single[a] + single[b]
            zs.append(z / (np.linalg.norm(z) + 1e-9))
        got = self.scores_of(np.stack(zs))
        i = max(range(len(got)), key=lambda j: got[j][1])
        a, b = pairs[i]
        kind = self._kinds.index(got[i][0])
        protos = self._protos[self._proto_kind == kind]
        if b is not None and float((single[b] @ protos.T).max()) > float((single[a] @ protos.T).max()):
            a = b
        tile, conf = self.decide(*got[i])
        return tile, conf, rotations[a]

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | Path) -> None:
        """Write the enrolled set (embeddings of every copy, labels, parameters; not the network)."""
        params = {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")
                  and f.name != "report"}  # fmt: skip
        np.savez_compressed(Path(path), format=np.array(EMBED_FORMAT), emb=self._emb.astype(np.float16),
                            ids=self._image_ids, labels=np.array(json.dumps(self._labels)),
                            params=np.array(json.dumps(params)),
                            network=np.array(self.embedder.fingerprint))  # fmt: skip

    @classmethod
    def from_npz(cls, z: Mapping[str, np.ndarray]) -> EmbeddingClassifier:
        keys = getattr(z, "files", z)
        network = f"network {z['network']}" if "network" in keys else "an earlier version"
        if network != f"network {shared_embedder().fingerprint}":
            raise OtherNetwork(f"this tile set was enrolled with {network} of the tile embedding, not the installed "
                               f"one ({shared_embedder().fingerprint}), so its prototypes mean nothing to it: enroll "
                               "the set again (tablesvc vision enroll)")
        clf = cls(**json.loads(str(z["params"])))
        clf._emb = z["emb"].astype(np.float32)
        clf._image_ids = z["ids"].astype(np.int32)
        clf._labels = list(json.loads(str(z["labels"])))
        clf._refit()
        return clf

    @classmethod
    def load(cls, path: str | Path) -> EmbeddingClassifier:
        """Read a model written by :meth:`save`; one of the LDA method is refused, naming the file."""

        def lda(z: Any) -> None:  # refused below, once it is read as a whole LDA model (else it is no model)
            json.loads(str(z["params"]))
            json.loads(str(z["labels"]))
            z["feats"].astype(np.float32)

        clf = read_model(path, {EMBED_FORMAT: cls.from_npz, LDA_FORMAT: lda})
        if clf is None:
            raise ValueError(f"{path}: a tile model of the LDA method, not the embedding's")
        return clf
