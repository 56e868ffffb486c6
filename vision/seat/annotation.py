"""The annotated picture of a seat camera's frame: each tile found, its name (green: read, orange: unsure),
the row's strip, and the hand the consensus publishes."""

from __future__ import annotations

import cv2
import numpy as np

from vision.seat.calibration import TILE_H_MM
from vision.seat.consensus import HandReading
from vision.seat.reader import SeatFrame, SeatReader

__all__ = ["annotate_seat"]

GREEN = (60, 200, 60)
ORANGE = (0, 150, 255)
RED = (40, 40, 240)


def annotate_seat(frame: np.ndarray, reader: SeatReader, seen: SeatFrame, reading: HandReading | None = None,
                  caption: str = "") -> np.ndarray:
    """A copy of ``frame`` with what ``reader`` saw in it (``seen``) and, under it, the published hand."""
    out = frame.copy()
    size = (frame.shape[1], frame.shape[0])
    quad = reader.calibration.quad_for(size).astype(np.float32)
    strip_mm = reader.calibration.strip_mm
    src = np.array([[0, 0], [strip_mm, 0], [strip_mm, TILE_H_MM], [0, TILE_H_MM]], np.float32)
    to_image = cv2.getPerspectiveTransform(src, quad)
    cv2.polylines(out, [np.round(quad).astype(np.int32)], True, (200, 200, 200), 1, cv2.LINE_AA)
    tiles = list(seen.row) + ([seen.drawn] if seen.drawn is not None else [])
    for t in tiles:
        a, b = t.x_mm
        box = np.array([[[a, 0], [b, 0], [b, TILE_H_MM], [a, TILE_H_MM]]], np.float32)
        pts = cv2.perspectiveTransform(box, to_image)[0]
        colour = GREEN if t.tile is not None else ORANGE
        cv2.polylines(out, [np.round(pts).astype(np.int32)], True, colour, 2, cv2.LINE_AA)
        label = t.tile or "?"
        org = (int(pts[0][0]) + 2, int(min(pts[0][1], pts[1][1])) - 4)
        cv2.putText(out, label, org, cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 0), 3, cv2.LINE_AA)
        cv2.putText(out, label, org, cv2.FONT_HERSHEY_SIMPLEX, 0.45, colour, 1, cv2.LINE_AA)
    lines = [caption] if caption else []
    lines.append(f"frame: {seen.count} tiles, {'whole' if seen.whole else 'NOT whole (not counted)'}, "
                 f"{seen.read} read by the network")
    if reading is not None:
        hand = " ".join(reading.tiles) + " ?" * reading.unknown
        drawn = f" +{reading.drawn}" if reading.drawn else (" +?" if reading.drawn_unknown else "")
        lines.append(f"published: {hand}{drawn}")
    y = out.shape[0] - 10 - 18 * (len(lines) - 1)
    for line in lines:
        cv2.putText(out, line, (8, y), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 0), 3, cv2.LINE_AA)
        cv2.putText(out, line, (8, y), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 255, 255), 1, cv2.LINE_AA)
        y += 18
    return out
