"""Where a seat camera sees the row: the image corners of the row's face plane.

A seat camera is fixed to its seat (a clamp on the rack or a stand over the shoulder), so the
plane the standing tiles' faces stand in is fixed in its image too. It is given by four image
points: the corners (top-left, top-right, bottom-right, bottom-left) of a strip ``strip_mm`` long
and one tile high, standing where the tiles stand. The reader rectifies that strip and finds the
tiles along it; the simulator writes the strip it drew (``hardware_sims.hand_render``).

A real seat camera is calibrated from itself (:func:`calibrate_seat`, ``tablesvc vision seat-calibrate``):
two cards the size of a tile's face, each with an ArUco marker (:func:`seat_card`, printed by
``tablesvc vision seat-cards``), stood upright where the row stands, the left card as the row's first
tile and the right card as its fifteenth, faces to the camera. Their eight marker corners fit the
strip's plane; the four corners can also be given by hand.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["CARD_IDS", "MIN_FACE_PX", "STRIP_MM", "TILE_H_MM", "TILE_W_MM", "SeatCalibration", "SeatCalibrationError",
           "calibrate_seat", "card_corners_mm", "seat_card"]

TILE_W_MM = 26.0  # a standing tile's face, width ...
TILE_H_MM = 35.0  # ... and height
STRIP_MM = 15 * TILE_W_MM  # the strip a seat camera is calibrated on: 14 tiles, the drawn tile's gap, a margin
CARD_IDS = (10, 11)  # the left and right cards' markers (DICT_4X4_50; the table camera's are 0-3)
CARD_MARKER_MM = 20.0  # a card's marker side: 3 mm of white beside it on a 26 mm card
CARD_DICTIONARY = "DICT_4X4_50"
#: a face fewer pixels high than this (the row's ends in the camera's picture) is read with tiles unsure: rendered
#: 640x480 seat cameras left 31 % of the tiles unsure per frame at 31 px (68 degrees up), 3.7 % at 33 px (59
#: degrees), none at 41 px (41 degrees). The reader says so once; a 1280x720 mode doubles the pixels
MIN_FACE_PX = 36.0


class SeatCalibrationError(ValueError):
    """A seat camera's calibration file that cannot be used; the message says what to fix."""


@dataclass(frozen=True)
class SeatCalibration:
    """The row's face plane in a seat camera's image: ``quad_px`` (4, 2) TL, TR, BR, BL of a strip
    ``strip_mm`` long and ``TILE_H_MM`` high, in a frame of ``image_size`` (w, h)."""

    quad_px: tuple[tuple[float, float], ...]
    strip_mm: float
    image_size: tuple[int, int]

    def __post_init__(self) -> None:
        quad = np.asarray(self.quad_px, np.float64)
        if quad.shape != (4, 2) or not np.all(np.isfinite(quad)):
            raise SeatCalibrationError("the row's corners must be four (x, y) image points: TL, TR, BR, BL")
        if self.strip_mm < 4 * TILE_W_MM:
            raise SeatCalibrationError(f"the strip is {self.strip_mm:g} mm long: it must hold a hand "
                                       f"(14 tiles are {14 * TILE_W_MM:g} mm)")
        a, b = quad[2] - quad[0], quad[3] - quad[1]
        area = 0.5 * abs(a[0] * b[1] - a[1] * b[0])
        if area < 200:
            raise SeatCalibrationError("the row's corners enclose almost nothing: give them in the order TL, TR, "
                                       "BR, BL around the row")

    @classmethod
    def of(cls, quad_px: np.ndarray, strip_mm: float, image_size: tuple[int, int]) -> SeatCalibration:
        return cls(tuple((float(x), float(y)) for x, y in np.asarray(quad_px, np.float64)), float(strip_mm),
                   (int(image_size[0]), int(image_size[1])))

    def quad_for(self, size: tuple[int, int]) -> np.ndarray:
        """The corners in a frame of ``size`` (w, h): a stream squeezed to another aspect keeps its plane."""
        sx, sy = size[0] / self.image_size[0], size[1] / self.image_size[1]
        return np.asarray(self.quad_px, np.float64) * [sx, sy]

    @property
    def face_px(self) -> float:
        """How many pixels high a tile's face stands in the camera's picture (the strip's ends, averaged)."""
        q = np.asarray(self.quad_px, np.float64)
        return float((np.linalg.norm(q[3] - q[0]) + np.linalg.norm(q[2] - q[1])) / 2)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps({"kind": "seat-camera", "quad_px": [list(p) for p in self.quad_px],
                                          "strip_mm": self.strip_mm, "image_size": list(self.image_size)}, indent=1))

    @classmethod
    def load(cls, path: str | Path) -> SeatCalibration:
        try:
            data = json.loads(Path(path).read_text())
            return cls.of(np.array(data["quad_px"], np.float64), float(data["strip_mm"]),
                          (int(data["image_size"][0]), int(data["image_size"][1])))
        except OSError as exc:
            raise SeatCalibrationError(f"cannot read the seat camera's calibration {path}: {exc.strerror}") from None
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise SeatCalibrationError(f"{path} is not a seat camera's calibration ({exc}); write it with "
                                       "SeatCalibration.save") from None


def card_corners_mm(strip_mm: float = STRIP_MM) -> dict[int, np.ndarray]:
    """Each card's marker corners (ArUco order: TL, TR, BR, BL) in strip millimetres (x along the row from the
    strip's left end, y down from the top of a standing tile's face): the left card stands as the first
    tile, the right card as the last of the strip, their markers centred on their faces."""
    m = CARD_MARKER_MM
    x0, y0 = (TILE_W_MM - m) / 2, (TILE_H_MM - m) / 2
    square = np.array([[x0, y0], [x0 + m, y0], [x0 + m, y0 + m], [x0, y0 + m]], np.float64)
    right = square.copy()
    right[:, 0] += strip_mm - TILE_W_MM
    return {CARD_IDS[0]: square, CARD_IDS[1]: right}


def seat_card(marker_id: int, px_per_mm: float) -> np.ndarray:
    """One card's face (grey uint8, ``TILE_W_MM`` x ``TILE_H_MM`` at ``px_per_mm``): white, its marker centred."""
    import cv2

    w, h = round(TILE_W_MM * px_per_mm), round(TILE_H_MM * px_per_mm)
    side = round(CARD_MARKER_MM * px_per_mm)
    card = np.full((h, w), 255, np.uint8)
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, CARD_DICTIONARY))
    x0, y0 = (w - side) // 2, (h - side) // 2
    card[y0 : y0 + side, x0 : x0 + side] = cv2.aruco.generateImageMarker(dictionary, marker_id, side, borderBits=1)
    return card


def calibrate_seat(frame: np.ndarray, strip_mm: float = STRIP_MM) -> tuple[SeatCalibration, float]:
    """The strip's corners in ``frame`` from the two cards (:func:`seat_card`) stood at the row's ends, and the
    fit's error (RMS, mm, of the eight marker corners). Raises :class:`SeatCalibrationError` saying which
    card is not seen."""
    import cv2

    from vision.table.calibration import detect_markers

    found = detect_markers(frame, CARD_DICTIONARY)
    missing = [(side, i) for side, i in zip(("left", "right"), CARD_IDS, strict=True) if i not in found]
    if missing:
        which = " and ".join(f"the {side} card (marker {i})" for side, i in missing)
        raise SeatCalibrationError(f"{which} not seen: stand both cards upright where the row stands, the left one "
                                   "as its first tile and the right one as its fifteenth, faces to the camera, "
                                   "in good light ('tablesvc vision seat-cards' prints them)")
    mm = card_corners_mm(strip_mm)
    src = np.vstack([mm[i] for i in CARD_IDS])
    dst = np.vstack([found[i] for i in CARD_IDS])
    h, _ = cv2.findHomography(src, dst, 0)
    if h is None:
        raise SeatCalibrationError("the cards' markers give no plane: stand the cards apart, at the row's two ends")
    back = cv2.perspectiveTransform(dst.reshape(-1, 1, 2), np.linalg.inv(h)).reshape(-1, 2)
    error = float(np.sqrt(np.mean(np.sum((back - src) ** 2, axis=1))))
    strip = np.array([[0, 0], [strip_mm, 0], [strip_mm, TILE_H_MM], [0, TILE_H_MM]], np.float64)
    quad = cv2.perspectiveTransform(strip.reshape(-1, 1, 2), h).reshape(-1, 2)
    return SeatCalibration.of(quad, strip_mm, (frame.shape[1], frame.shape[0])), error
