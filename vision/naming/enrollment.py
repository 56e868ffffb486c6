"""Enroll a club's tile set from its own camera: the 37 tiles laid out as hands on the table.

A classifier enrolled from artwork reads crops that went through a camera it
never saw; enrolled from the club's camera it learns the very pixels it will
read (its lens, light, white balance and tile set). The layout reuses the
slots the detector already knows, the revealed-hand rows in front of the
seats, so nothing has to be measured:

- in front of seat 0 (East): ``1m .. 9m`` then ``1p .. 9p`` (18 tiles, left to right);
- in front of seat 1 (South): ``1s .. 9s`` then ``E S W N P F C`` (16 tiles);
- in front of seat 2 (West): ``5mr 5pr 5sr`` (a set without red fives leaves this row out).

Each seat's row is read left to right *as that seat sees it*, like a hand laid
down at the end of a game. ``tablesvc vision enroll`` runs this on one or several
frames (turn the tiles, move the lights between them: every frame adds an image of
each kind to one model, :func:`enroll_from_frames`) and saves the model for the
service's ``[camera] model``; :func:`separability` says per kind how well it will
be told apart and which kinds need more images.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vision.naming.classifier import TileClassifier
from vision.naming.embedding import EmbeddingClassifier
from vision.table.calibration import Calibration
from vision.table.detection import TileDetector
from vision.table.geometry import TableGeometry

__all__ = [
    "ENROLL_LAYOUT",
    "EnrollmentError",
    "KindReport",
    "crops_from_layout",
    "enroll_from_frame",
    "enroll_from_frames",
    "separability",
]

_SUITED = {s: [f"{n}{s}" for n in range(1, 10)] for s in "mps"}

#: seat -> the tiles of its hand row, left to right as that seat sees them
ENROLL_LAYOUT: dict[int, tuple[str, ...]] = {
    0: (*_SUITED["m"], *_SUITED["p"]),
    1: (*_SUITED["s"], "E", "S", "W", "N", "P", "F", "C"),
    2: ("5mr", "5pr", "5sr"),
}


class EnrollmentError(ValueError):
    """The frame does not show the enrollment layout (a row missing, too short or face down)."""


def crops_from_layout(frame: np.ndarray, calibration: Calibration,
                      geometry: TableGeometry | None = None) -> dict[str, np.ndarray]:  # fmt: skip
    """Tile name -> upright crop, cut from ``frame`` as the detector cuts them for classification.

    Raises :class:`EnrollmentError` naming the row that does not match :data:`ENROLL_LAYOUT`
    (the red-five row may be absent: sets without red fives).
    """
    detector = TileDetector(calibration, geometry)
    tiles = detector.detect(frame)
    out: dict[str, np.ndarray] = {}
    for seat, names in ENROLL_LAYOUT.items():
        row = sorted((t for t in tiles if t.zone == "hand" and t.seat == seat), key=lambda t: t.index)
        if not row and seat == 2:
            continue  # no red fives in this set
        if len(row) != len(names):
            raise EnrollmentError(
                f"seat {seat}'s row shows {len(row)} tiles, the layout has {len(names)} "
                f"({' '.join(names)}): lay them edge to edge in the hand row in front of that seat"
            )
        hidden = [names[i] for i, t in enumerate(row) if not t.face_up or t.crop is None]
        if hidden:
            raise EnrollmentError(f"seat {seat}'s row: {' '.join(hidden)} face down or covered; turn them face up")
        for name, t in zip(names, row, strict=True):
            out[name] = t.crop  # type: ignore[assignment]
    return out


def enroll_from_frame(frame: np.ndarray, calibration: Calibration, geometry: TableGeometry | None = None,
                      classifier: TileClassifier | EmbeddingClassifier | None = None,
                      ) -> TileClassifier | EmbeddingClassifier:  # fmt: skip
    """A classifier enrolled from one frame of the layout (a new LDA one unless ``classifier`` is given)."""
    classifier = classifier or TileClassifier()
    classifier.enroll(crops_from_layout(frame, calibration, geometry))
    return classifier


def enroll_from_frames(frames: Sequence[np.ndarray], calibration: Calibration, geometry: TableGeometry | None = None,
                       classifier: TileClassifier | EmbeddingClassifier | None = None,
                       ) -> TileClassifier | EmbeddingClassifier:  # fmt: skip
    """Every frame's crops added to one classifier (a new embedding one unless ``classifier`` is given).

    All frames are checked before anything is enrolled: a frame that does not show the layout raises
    :class:`EnrollmentError` naming it (``frame 2: seat 1's row shows ...``) and the model is unchanged.
    """
    crops: list[dict[str, np.ndarray]] = []
    for i, frame in enumerate(frames, start=1):
        try:
            crops.append(crops_from_layout(frame, calibration, geometry))
        except EnrollmentError as exc:
            raise EnrollmentError(f"frame {i}: {exc}") from exc
    if not crops:
        raise EnrollmentError("no frame to enroll from")
    classifier = classifier or EmbeddingClassifier()
    merged: dict[str, list[np.ndarray]] = {}
    for c in crops:
        for tile, img in c.items():
            merged.setdefault(tile, []).append(img)
    classifier.enroll(merged)
    return classifier


@dataclass(frozen=True)
class KindReport:
    """How well one enrolled kind will be told apart (from the enrollment images themselves).

    ``lead``: the median lead of the kind's own similarity over the nearest other kind's, for
    copies read against prototypes built without their own image; ``worst_lead``: its 5 % quantile;
    ``nearest``: the kind most often the runner-up. ``needs_more``: says why more images would help
    (or empty): a lead under twice the answer margin, or copies that read as another kind.
    """

    tile: str
    images: int
    lead: float
    worst_lead: float
    nearest: str
    needs_more: str


def separability(classifier: EmbeddingClassifier) -> list[KindReport]:
    """Per enrolled kind: how far it stands from the others, and which kinds need more images."""
    out = []
    margin = classifier.min_margin
    for tile, r in classifier.report.items():
        why = ""
        if r["read_wrong"] > 0.02:
            why = f"{100 * r['read_wrong']:.0f} % of its copies read as {r['nearest']}"
        elif r["worst_lead"] < margin:
            why = f"some copies lead {r['nearest']} by less than the answer margin {margin:.3f}"
        elif r["lead"] < 2 * margin:
            why = f"close to {r['nearest']}"
        if why and r["images"] < 2:
            why += ": enroll another frame (turn the tile, change the light)"
        out.append(KindReport(tile, int(r["images"]), r["lead"], r["worst_lead"], r["nearest"], why))
    return out
