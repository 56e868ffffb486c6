"""Find every tile in a real photo (no markers, no slots): a small network, run by OpenCV's dnn.

Interface (what the photo reader and the camera use)::

    from vision.finder import TileFinder, FoundTile
    finder = TileFinder.load()            # the packaged vision/models/tile_finder.onnx, through cv2.dnn
    tiles = finder.find(image_bgr)        # -> list[FoundTile], best score first
    # FoundTile(box=(x0, y0, x1, y1),     # ints, pixels of the image given (axis-aligned, around a turned tile)
    #           score=0.93,               # 0..1, how sure the finder is that a tile lies there
    #           face_up=True,             # False: the tile shows its back
    #           angle=0.0)                # degrees; 0.0 where the finder gives no turn

An empty, tiny or unreadable image gives ``[]``; it never raises for the content of an image.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FoundTile", "TileFinder"]


@dataclass(frozen=True)
class FoundTile:
    """One tile the finder saw: its box in pixels of the original image, how sure, face or back."""

    box: tuple[int, int, int, int]
    score: float
    face_up: bool
    angle: float = 0.0


class TileFinder:
    """Placeholder until the trained network lands: see the module docstring for the interface."""

    @classmethod
    def load(cls) -> TileFinder:
        raise NotImplementedError("the tile finder's network is not trained yet")

    def find(self, image_bgr: object) -> list[FoundTile]:  # pragma: no cover - replaced with the network
        raise NotImplementedError("the tile finder's network is not trained yet")
