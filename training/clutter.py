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

__all__ = ["MEASURE", "TRAIN", "clutter_photos", "clutter_views", "generated_clutter"]

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


def generated_clutter(count: int, seed: int = 26, size: tuple[int, int] = (640, 480)) -> list[tuple[str, np.ndarray]]:
    """Pictures of what lies about a table with no tile in it, drawn: coins (discs with a rim and an embossed
    face), printed words and numbers (signs, book pages, score sheets), cards and phones (rounded rectangles), point
    sticks (long white bars with dots) and cables, on the :data:`TRAIN` photos or plain table colours. Hard negatives
    for the photo reader's tile-or-not verifier (``training/tile_or_not.py``); drawn from a seed, none of them the
    measured photos."""
    rng = np.random.default_rng(seed)
    backs = [img for _, img in clutter_photos("train")]
    fonts = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_COMPLEX, cv2.FONT_HERSHEY_TRIPLEX,
             cv2.FONT_HERSHEY_PLAIN, cv2.FONT_HERSHEY_SCRIPT_SIMPLEX)
    w, h = size
    out = []
    for n in range(count):
        if rng.random() < 0.5:
            src = backs[int(rng.integers(len(backs)))]
            img = cv2.resize(src, (w, h), interpolation=cv2.INTER_LINEAR)
        else:
            c0, c1 = rng.integers(20, 235, 3), rng.integers(20, 235, 3)
            t = np.linspace(0, 1, w, dtype=np.float32)[None, :, None]
            img = np.broadcast_to(c0 * (1 - t) + c1 * t, (h, w, 3)).astype(np.uint8).copy()
        img = np.ascontiguousarray(img)
        unit = float(rng.uniform(14, 70))  # the size things are drawn at: a tile-sized coin, a word, a card
        for _ in range(int(rng.integers(8, 40))):
            kind = rng.choice(["coin", "text", "card", "stick", "cable"], p=[0.35, 0.3, 0.15, 0.1, 0.1])
            x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
            colour = tuple(int(v) for v in rng.integers(0, 256, 3))
            if kind == "coin":
                r = int(unit * rng.uniform(0.3, 0.7))
                metal = np.array([rng.uniform(120, 230)] * 3) * (rng.uniform(0.7, 1.0, 3) if rng.random() < 0.4 else 1)
                cv2.circle(img, (x, y), r, tuple(float(v) * 0.6 for v in metal), -1, cv2.LINE_AA)
                cv2.circle(img, (x, y), max(1, int(r * 0.88)), tuple(float(v) for v in metal), -1, cv2.LINE_AA)
                cv2.circle(img, (x, y), max(1, int(r * 0.7)), tuple(float(v) * 0.75 for v in metal), 1, cv2.LINE_AA)
                if rng.random() < 0.6:
                    cv2.putText(img, str(int(rng.integers(1, 100))), (x - r // 2, y + r // 4), fonts[0],
                                r / 40, tuple(float(v) * 0.6 for v in metal), max(1, r // 12), cv2.LINE_AA)
            elif kind == "text":
                chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 "
                text = "".join(rng.choice(list(chars), int(rng.integers(1, 14))))
                scale = unit / 30 * rng.uniform(0.5, 1.5)
                cv2.putText(img, text, (x, y), fonts[int(rng.integers(len(fonts)))], scale, colour,
                            max(1, int(scale * rng.uniform(1, 3))), cv2.LINE_AA)
            elif kind == "card":
                cw, ch = int(unit * rng.uniform(0.8, 2.5)), int(unit * rng.uniform(0.8, 3.0))
                cv2.rectangle(img, (x, y), (x + cw, y + ch), colour, -1, cv2.LINE_AA)
                if rng.random() < 0.5:
                    inner = tuple(int(v) for v in rng.integers(0, 256, 3))
                    cv2.rectangle(img, (x + cw // 8, y + ch // 8), (x + cw - cw // 8, y + ch - ch // 8), inner, -1)
            elif kind == "stick":
                length, thick = int(unit * rng.uniform(3, 6)), max(2, int(unit * rng.uniform(0.1, 0.2)))
                angle = rng.uniform(0, np.pi)
                x1, y1 = int(x + length * np.cos(angle)), int(y + length * np.sin(angle))
                cv2.line(img, (x, y), (x1, y1), (235, 235, 235), thick, cv2.LINE_AA)
                for k in range(1, 6):
                    cx, cy = int(x + (x1 - x) * k / 6), int(y + (y1 - y) * k / 6)
                    cv2.circle(img, (cx, cy), max(1, thick // 3), colour, -1, cv2.LINE_AA)
            else:
                pts = np.cumsum(rng.normal(0, unit, (6, 2)), axis=0) + np.array([x, y])
                cv2.polylines(img, [pts.astype(np.int32)], False, colour, max(2, int(unit / 8)), cv2.LINE_AA)
        img = cv2.GaussianBlur(img, (0, 0), float(rng.uniform(0.3, 1.2)))
        noise = rng.normal(0, rng.uniform(1, 6), img.shape)
        img = np.clip(img.astype(np.float32) + noise, 0, 255).astype(np.uint8)
        out.append((f"generated#{n}", img))
    return out
