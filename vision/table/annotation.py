"""A camera frame drawn over with what vision read in it: for the club's dashboard and for people.

The service's snapshot (``camera/<name>/snapshot``) and anyone checking a
camera want the same picture: the zones where tiles are looked for, a box per
tile found with the kind it was read as (green), an unknown face-up tile in
red with a "?", face-down tiles in grey, tiles under a hand in orange, and a
banner above saying when, how many tiles were read, and, when the engine
refused what the camera reported, why. Only the table is shown (the frame cut
to its zones), and drawing is done after scaling it to the output size, so
text keeps its size whatever the camera's resolution.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from vision.table.calibration import Calibration
from vision.table.detection import DetectedTile
from vision.table.geometry import TableGeometry, TileRect

__all__ = ["annotate"]

GREEN = (60, 200, 60)
RED = (40, 40, 240)
GREY = (150, 150, 150)
ORANGE = (0, 150, 255)
ZONE_COLOURS = {"pond": (220, 200, 0), "meld": (220, 120, 220), "hand": (0, 220, 220), "wall": (200, 200, 200)}
_FONT = cv2.FONT_HERSHEY_SIMPLEX


def _text(img: np.ndarray, text: str, org: tuple[int, int], scale: float, colour: tuple[int, int, int],
          thickness: int = 1) -> None:
    """Text with a dark outline, readable on felt, tiles and glare alike."""
    cv2.putText(img, text, org, _FONT, scale, (0, 0, 0), thickness + 2, cv2.LINE_AA)
    cv2.putText(img, text, org, _FONT, scale, colour, thickness, cv2.LINE_AA)


def annotate(
    frame: np.ndarray,
    tiles: Sequence[DetectedTile],
    calibration: Calibration,
    geometry: TableGeometry | None = None,
    *,
    title: str = "",
    refused: str | None = None,
    size: int | None = 1024,
) -> np.ndarray:
    """The table's part of ``frame`` (BGR), its longer side scaled to ``size`` (None: as it is), annotated as
    the module says, under a banner: ``title`` (camera name, time) and the tiles read; ``refused``, the reason
    the engine refused the camera's last report, in red under it.
    """
    geometry = geometry or TableGeometry()
    img = frame if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    zones = {(seat, zone): calibration.table_to_image(geometry.zone_polygon(seat, zone))
             for seat in range(4) for zone in ZONE_COLOURS}
    corners = np.concatenate(list(zones.values()))
    pad = 0.04 * float(np.ptp(corners, axis=0).max())
    h0, w0 = img.shape[:2]
    x0, y0 = (max(0, int(v - pad)) for v in corners.min(axis=0))
    x1, y1 = (min(lim, int(v + pad)) for v, lim in zip(corners.max(axis=0), (w0, h0), strict=True))
    if x1 - x0 < 16 or y1 - y0 < 16:  # a calibration that puts the table off the frame: show all of it
        x0, y0, x1, y1 = 0, 0, w0, h0
    scale = 1.0 if not size else size / max(x1 - x0, y1 - y0)
    img = cv2.resize(img[y0:y1, x0:x1], (round((x1 - x0) * scale), round((y1 - y0) * scale)),
                     interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC)
    font = max(0.35, 0.45 * img.shape[1] / 1024)

    def to_image(points: np.ndarray) -> np.ndarray:
        return np.round((points - (x0, y0)) * scale).astype(np.int32)

    for (_, zone), polygon in zones.items():
        cv2.polylines(img, [to_image(polygon)], True, ZONE_COLOURS[zone], 1, cv2.LINE_AA)
    known = unknown = 0
    for t in tiles:
        rect = t.rect or TileRect(t.center_mm[0], t.center_mm[1], geometry.tile_w, geometry.tile_h, t.angle)
        box = to_image(calibration.table_to_image(rect.corners()))
        if t.occluded:
            colour, label = ORANGE, "hidden"
        elif not t.face_up:
            colour, label = GREY, ""
        elif t.tile is None:
            colour, label = RED, "?"
            unknown += 1
        else:
            colour, label = GREEN, t.tile
            known += 1
        cv2.polylines(img, [box], True, colour, 3 if colour is RED else 1, cv2.LINE_AA)
        if label:
            (tw, th), _ = cv2.getTextSize(label, _FONT, font, 1)
            cx, cy = box.mean(axis=0)
            _text(img, label, (int(cx - tw / 2), int(cy + th / 2)), font, colour)
    lines = [f"{title}  {known} tiles read, {unknown} unknown".strip()]
    if refused:
        lines.append(f"REFUSED: {refused}")
    line_h = int(30 * font / 0.45)
    banner = np.zeros((8 + line_h * len(lines), img.shape[1], 3), np.uint8)
    for i, line in enumerate(lines):
        big = font * 1.3
        fit = min(big, big * (img.shape[1] - 20) / max(1, cv2.getTextSize(line, _FONT, big, 2)[0][0]))
        _text(banner, line, (10, line_h * (i + 1) - line_h // 4), fit, RED if i else (255, 255, 255), 2 if i else 1)
    return np.vstack([banner, img])
