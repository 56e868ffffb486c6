"""Camera calibration: the homography from image pixels to table millimetres, from four ArUco markers.

A camera over a mahjong table is not fixed well enough to calibrate once at
installation: it gets bumped. So calibration must be cheap and automatic. The
four corner markers (see :class:`~vision.table.geometry.TableGeometry`) give 16
point pairs; a least-squares homography over all of them is exact for a flat
table under a pinhole camera, and the residual (reported in mm) says how
much to trust it. :func:`moved` re-detects the markers in a live frame and
tells when they are no longer where the calibration puts them, so the
pipeline can recalibrate instead of filing tiles in the wrong zone.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from vision.table.geometry import TableGeometry

__all__ = [
    "Calibration",
    "CalibrationError",
    "MoveCheck",
    "calibrate",
    "detect_markers",
    "marker_sheet",
    "moved",
]

log = logging.getLogger(__name__)


class CalibrationError(RuntimeError):
    """Calibration is impossible on this frame; ``missing`` lists the marker ids not found."""

    def __init__(self, message: str, missing: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self.missing = missing


@dataclass(frozen=True)
class Calibration:
    """Image -> table homography of one camera pose, with its quality and what it was fitted on.

    ``homography`` maps pixels (x, y) to table mm; ``error_mm`` is the RMS
    distance between the detected marker corners mapped to the table and
    their true positions; ``markers_mm`` keeps those true positions so a
    saved calibration can check itself (:func:`moved`) without the geometry.
    """

    homography: np.ndarray
    error_mm: float
    image_size: tuple[int, int]  # (width, height)
    markers_mm: dict[int, np.ndarray] = field(repr=False)
    marker_dictionary: str = "DICT_4X4_50"

    def image_to_table(self, points: np.ndarray) -> np.ndarray:
        """(N, 2) pixel points -> (N, 2) table mm."""
        pts = np.asarray(points, np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, self.homography).reshape(-1, 2)

    def table_to_image(self, points: np.ndarray) -> np.ndarray:
        """(N, 2) table mm -> (N, 2) pixel points."""
        pts = np.asarray(points, np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, np.linalg.inv(self.homography)).reshape(-1, 2)

    def rectify(self, frame: np.ndarray, px_per_mm: float = 2.0, extent_mm: float = 440.0) -> np.ndarray:
        """Top-down view of the table: pixel (i, j) is table point ((j + 0.5) / s - e, (i + 0.5) / s - e).

        Detection and classification can then work in one scale and without
        perspective, whatever the camera pose.
        """
        n = round(2 * extent_mm * px_per_mm)
        to_rect = np.array([[px_per_mm, 0, extent_mm * px_per_mm - 0.5], [0, px_per_mm, extent_mm * px_per_mm - 0.5],
                            [0, 0, 1.0]])  # fmt: skip
        return cv2.warpPerspective(frame, to_rect @ self.homography, (n, n), flags=cv2.INTER_LINEAR)

    def to_json(self) -> dict[str, object]:
        return {
            "version": 1,
            "homography": self.homography.tolist(),
            "error_mm": self.error_mm,
            "image_size": list(self.image_size),
            "marker_dictionary": self.marker_dictionary,
            "markers_mm": {str(k): v.tolist() for k, v in self.markers_mm.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Calibration:
        if data.get("version") != 1:
            raise ValueError(f"unsupported calibration version {data.get('version')!r}")
        return cls(
            homography=np.array(data["homography"], np.float64),
            error_mm=float(data["error_mm"]),  # type: ignore[arg-type]
            image_size=tuple(data["image_size"]),  # type: ignore[arg-type]
            markers_mm={int(k): np.array(v, np.float64) for k, v in data["markers_mm"].items()},  # type: ignore[union-attr]
            marker_dictionary=str(data.get("marker_dictionary", "DICT_4X4_50")),
        )

    def save(self, path: str | Path) -> None:
        """Write as JSON (human-readable, versioned)."""
        Path(path).write_text(json.dumps(self.to_json(), indent=2), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        """Read a file written by :meth:`save`; anything else raises ``ValueError`` naming the file."""
        try:
            return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{path}: not a calibration written by 'tablesvc vision calibrate' "
                             f"({type(exc).__name__}: {exc})") from exc  # fmt: skip


def _detector(dictionary: str) -> cv2.aruco.ArucoDetector:
    params = cv2.aruco.DetectorParameters()
    # sub-pixel corners: the homography is only as good as the 16 corners it is fitted on
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    return cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary)), params)


def detect_markers(frame: np.ndarray, dictionary: str = "DICT_4X4_50") -> dict[int, np.ndarray]:
    """Marker id -> (4, 2) corners in pixels (ArUco order) for every marker of ``dictionary`` in ``frame``."""
    gray = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    corners, ids, _ = _detector(dictionary).detectMarkers(gray)
    found: dict[int, np.ndarray] = {}
    if ids is not None:
        for c, i in zip(corners, ids.ravel(), strict=True):
            found.setdefault(int(i), c.reshape(4, 2).astype(np.float64))
    return found


def calibrate(frame: np.ndarray, geometry: TableGeometry | None = None) -> Calibration:
    """Fit the image -> table homography on the geometry's four markers seen in ``frame``.

    All four are required: three would do mathematically, but a calibration
    that silently loses a corner of the table degrades the far corner, and a
    missing marker usually means something lies on it. The error names the
    missing ids so the user knows which corner to clear.
    """
    geometry = geometry or TableGeometry()
    found = detect_markers(frame, geometry.marker_dictionary)
    missing = tuple(i for i in geometry.marker_ids if i not in found)
    if missing:
        names = ", ".join(f"{i} (at {geometry.marker_centre(i)} mm)" for i in missing)
        raise CalibrationError(f"calibration needs all four markers; not found: {names}", missing)
    truth = geometry.all_marker_corners()
    img = np.vstack([found[i] for i in geometry.marker_ids])
    tab = np.vstack([truth[i] for i in geometry.marker_ids])
    hom, _ = cv2.findHomography(img, tab, 0)
    if hom is None:
        raise CalibrationError("the marker corners do not define a homography (degenerate view)")
    hom = hom / hom[2, 2]
    mapped = cv2.perspectiveTransform(img.reshape(-1, 1, 2), hom).reshape(-1, 2)
    error = float(np.sqrt(np.mean(np.sum((mapped - tab) ** 2, axis=1))))
    h, w = frame.shape[:2]
    log.info("calibrated %dx%d frame: RMS marker error %.2f mm", w, h, error)
    return Calibration(hom, error, (w, h), truth, geometry.marker_dictionary)


@dataclass(frozen=True)
class MoveCheck:
    """Result of :func:`moved`; true when the camera moved. ``error_mm`` is the worst marker corner.

    ``seen`` lists the markers found; with none seen (a hand over every
    corner), ``moved`` is False and ``error_mm`` is None: nothing says the
    camera moved, and the next frame will tell.
    """

    moved: bool
    error_mm: float | None
    seen: tuple[int, ...]

    def __bool__(self) -> bool:
        return self.moved


def moved(calibration: Calibration, frame: np.ndarray, tolerance_mm: float = 5.0) -> MoveCheck:
    """Are the markers still where ``calibration`` says? Any visible marker off by > ``tolerance_mm`` says moved.

    Markers hidden by a hand are skipped rather than counted as moved, because
    a hand passing is the common case and recalibrating then would fail.
    """
    found = detect_markers(frame, calibration.marker_dictionary)
    seen = tuple(sorted(i for i in found if i in calibration.markers_mm))
    if not seen:
        return MoveCheck(False, None, ())
    worst = 0.0
    for i in seen:
        mapped = calibration.image_to_table(found[i])
        worst = max(worst, float(np.linalg.norm(mapped - calibration.markers_mm[i], axis=1).max()))
    if worst > tolerance_mm:
        log.warning("camera moved: a marker corner is %.1f mm off its calibrated place", worst)
    return MoveCheck(worst > tolerance_mm, worst, seen)


def marker_sheet(geometry: TableGeometry | None = None, dpi: float = 300.0) -> np.ndarray:
    """A printable sheet (grey uint8) with the four markers at true size for ``dpi``, labelled.

    Each marker sits in its white margin with its id and the corner it goes
    to; printed at ``dpi`` with no scaling, the black square measures
    ``marker_size`` mm. The printed top of every marker points away from
    seat 0 (East), as the geometry assumes.
    """
    geometry = geometry or TableGeometry()
    px_per_mm = dpi / 25.4
    side = round(geometry.marker_size * px_per_mm)
    quiet = round(geometry.marker_quiet * px_per_mm)
    label = round(12 * px_per_mm)
    cell_w, cell_h = side + 2 * quiet + round(20 * px_per_mm), side + 2 * quiet + label + round(10 * px_per_mm)
    sheet = np.full((2 * cell_h, 2 * cell_w), 255, np.uint8)
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, geometry.marker_dictionary))
    corner_names = {0: "seat 0 (East) right corner", 1: "seat 1 right corner", 2: "seat 2 right corner",
                    3: "seat 3 right corner"}  # fmt: skip
    for k, mid in enumerate(geometry.marker_ids):
        x0, y0 = (k % 2) * cell_w + quiet + round(10 * px_per_mm), (k // 2) * cell_h + quiet
        sheet[y0 : y0 + side, x0 : x0 + side] = cv2.aruco.generateImageMarker(dictionary, mid, side, borderBits=1)
        scale = px_per_mm * 0.12
        text = f"id {mid}: {corner_names.get(k, '')}, {geometry.marker_size:g} mm, top away from East"
        cv2.putText(sheet, text, (x0 - quiet, y0 + side + quiet + label // 2), cv2.FONT_HERSHEY_SIMPLEX, scale * 0.5,
                    0, max(1, round(scale)), cv2.LINE_AA)  # fmt: skip
    return sheet
