"""Photos with no tile in them (scikit-image's sample photos, shipped offline with the package): what stands
behind a real table (a desk, a mug, printed pages, coins, a clock, shelves of things) for the tile finder to
learn as hard negatives, and for the benches to count the boxes a reader puts on them.

The photos are split once, by name, into those the finder may train on (:data:`TRAIN`) and those only ever
measured (:data:`MEASURE`); nothing measured is trained on. scikit-image is a training and bench dependency
(the ``train`` extra), never a runtime one: :func:`clutter_photos` raises :class:`ImportError` with what to
install where it is missing.
"""

from __future__ import annotations

import cv2
import numpy as np

__all__ = ["MEASURE", "TRAIN", "clutter_photos", "clutter_views"]

#: trained on (textures, faces, print, colour fields)
TRAIN = ("astronaut", "brick", "grass", "gravel", "moon", "text", "hubble_deep_field", "immunohistochemistry",
         "cell", "colorwheel", "logo")
#: only measured: a mug on a table, a rocket, a man with a camera, a cat, a printed page, coins (round like the
#: circles suit), a clock, a motorcycle in a room full of things, a retina
MEASURE = ("coffee", "rocket", "camera", "chelsea", "page", "coins", "clock", "stereo_motorcycle", "retina")


def _bgr(image: np.ndarray) -> np.ndarray:
    img = np.asarray(image)
    if img.dtype == bool:
        img = img.astype(np.uint8) * 255
    if img.dtype != np.uint8:
        img = np.clip(img.astype(np.float32) * (255.0 if img.max() <= 1.0 else 1.0), 0, 255).astype(np.uint8)
    if img.ndim == 2:
        return cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    if img.shape[2] == 4:
        return cv2.cvtColor(img, cv2.COLOR_RGBA2BGR)
    return cv2.cvtColor(img, cv2.COLOR_RGB2BGR)


def clutter_photos(part: str) -> list[tuple[str, np.ndarray]]:
    """(name, BGR image) of the ``"train"`` or ``"measure"`` photos."""
    try:
        from skimage import data
    except ImportError:
        raise ImportError("the clutter photos come with scikit-image: pip install scikit-image "
                          "(or pip install -e '.[train]')") from None
    names = {"train": TRAIN, "measure": MEASURE}[part]
    out = []
    for name in names:
        image = getattr(data, name)()
        if isinstance(image, tuple):  # a stereo pair: its left view
            image = image[0]
        out.append((name, _bgr(image)))
    return out


def clutter_views(photos: list[tuple[str, np.ndarray]], per_photo: int = 4,
                  seed: int = 5) -> list[tuple[str, np.ndarray]]:  # fmt: skip
    """Each photo as a phone might show it: whole, then cut, scaled up to a phone's size, turned a quarter
    or squeezed out of shape (``per_photo`` views each, the first the photo as it is)."""
    rng = np.random.default_rng(seed)
    out = []
    for name, img in photos:
        out.append((name, img))
        h, w = img.shape[:2]
        for k in range(1, per_photo):
            f = rng.uniform(0.5, 0.8)
            ch, cw = int(h * f), int(w * f)
            y, x = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
            view = img[y:y + ch, x:x + cw]
            scale = rng.uniform(1.5, 3.0)
            sx = scale * (rng.uniform(0.6, 1.6) if k % 3 == 0 else 1.0)
            view = cv2.resize(view, (max(8, int(cw * sx)), max(8, int(ch * scale))), interpolation=cv2.INTER_CUBIC)
            if k % 2 == 0:
                view = cv2.rotate(view, cv2.ROTATE_90_CLOCKWISE)
            out.append((f"{name}#{k}", np.ascontiguousarray(view)))
    return out
