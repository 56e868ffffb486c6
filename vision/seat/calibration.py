"""Where a seat camera sees the row: the image corners of the row's face plane.

A seat camera is fixed to its seat (a clamp on the rack or a stand over the shoulder), so the
plane the standing tiles' faces stand in is fixed in its image too. It is given by four image
points: the corners (top-left, top-right, bottom-right, bottom-left) of a strip ``strip_mm`` long
and one tile high, standing where the tiles stand. The reader rectifies that strip and finds the
tiles along it; the simulator writes the strip it drew (``hardware_sims.hand_render``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["MIN_FACE_PX", "TILE_H_MM", "TILE_W_MM", "SeatCalibration", "SeatCalibrationError"]

TILE_W_MM = 26.0  # a standing tile's face, width ...
TILE_H_MM = 35.0  # ... and height
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
