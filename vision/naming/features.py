"""Pixels -> feature vectors for tile classification, plus the augmentations used to train on them.

Kept apart from :mod:`vision.naming.classifier` so that the benchmark can compare several
matchers (template, HOG + nearest neighbour, HOG + SVM) on exactly the same
normalisation: a difference in the table must come from the matcher, not from
how the crop was prepared.

Canonical crop: an upright tile, resized to ``CANON_W`` x ``CANON_H`` (3:4, the
shape of a tile face). 36x48 is close to the 30x40..45x60 px a tile covers in a
1920x1080 overhead frame, so a frame crop is neither much up- nor downscaled.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

__all__ = [
    "CANON_H",
    "CANON_W",
    "Augmenter",
    "CameraAugmenter",
    "colour_features",
    "compose_on_body",
    "hog_features",
    "normalise",
    "photo_label_to_tile",
    "tile_features",
    "to_bgr",
]

CANON_W = 36
CANON_H = 48

# HOG geometry: 6 px cells, 2x2-cell blocks with a one-cell stride over the 36x48 window
# (5 x 7 blocks x 4 cells x 9 bins = 1260 values). Small cells because a digit stroke is
# only 2-3 px wide at frame resolution.
_HOG = cv2.HOGDescriptor((CANON_W, CANON_H), (12, 12), (6, 6), (6, 6), 9)

# A finer HOG of the top of the face (4 px cells, 2x2-cell blocks, one-cell stride over rows
# 2..26 and columns 2..34: 7 x 5 blocks x 4 cells x 9 bins = 1260 values): that is where the
# man numerals are, about 12 px tall with 1.5 px strokes in a frame, which 6 px cells blur
# together (3m/5m/6m/8m/9m).
_HOG_TOP = cv2.HOGDescriptor((32, 24), (8, 8), (4, 4), (4, 4), 9)
TOP_ROWS, TOP_COLS = (2, 26), (2, 34)

# weight of the colour block against the unit-norm HOG block; colour is what separates a red
# five from a plain five (same shapes), and a red dragon from a green one in a grey view.
COLOUR_WEIGHT = 0.6


def to_bgr(image: np.ndarray) -> np.ndarray:
    """Any image array -> 3-channel uint8 BGR.

    Grey is expanded, BGRA is composited on white (tile artwork is usually a face
    drawn on transparency; the tile body it lies on is light), floats in [0, 1] are scaled.
    """
    img = np.asarray(image)
    if img.dtype != np.uint8:
        img = np.clip(img * 255.0 if img.max() <= 1.0 else img, 0, 255).astype(np.uint8)
    if img.ndim == 2:
        return cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    if img.shape[2] == 4:
        alpha = img[..., 3:4].astype(np.float32) / 255.0
        out = img[..., :3].astype(np.float32) * alpha + 255.0 * (1.0 - alpha)
        return out.astype(np.uint8)
    return img[..., :3]


def compose_on_body(
    artwork: np.ndarray, body_bgr: tuple[int, int, int] = (226, 236, 240), margin: float = 0.09
) -> np.ndarray:
    """Place face artwork (BGRA or BGR) on a drawn tile body, as a camera would see it.

    Artwork sets such as FluffyStuff draw only the face; a real tile crop also holds
    the ivory body, its rounded outline and a shaded rim. Enrolling and testing on the
    bare artwork would reward a matcher for features no camera will ever show.
    """
    art = np.asarray(artwork)
    h, w = art.shape[:2]
    mh, mw = round(h * margin), round(w * margin)
    hh, ww = h + 2 * mh, w + 2 * mw
    body = np.zeros((hh, ww, 3), np.uint8)
    body[:] = (60, 70, 75)  # outside the rounded corners: dark felt/rim
    r = max(4, min(hh, ww) // 10)
    rim = tuple(int(c * 0.82) for c in body_bgr)
    cv2.rectangle(body, (r, 0), (ww - r, hh), rim, -1)
    cv2.rectangle(body, (0, r), (ww, hh - r), rim, -1)
    for cx, cy in ((r, r), (ww - r, r), (r, hh - r), (ww - r, hh - r)):
        cv2.circle(body, (cx, cy), r, rim, -1)
    inset = max(2, min(mh, mw) // 3)
    cv2.rectangle(body, (inset, inset), (ww - inset, hh - inset), body_bgr, -1)
    if art.ndim == 3 and art.shape[2] == 4:
        alpha = art[..., 3:4].astype(np.float32) / 255.0
        face = body[mh : mh + h, mw : mw + w].astype(np.float32)
        body[mh : mh + h, mw : mw + w] = (art[..., :3] * alpha + face * (1 - alpha)).astype(np.uint8)
    else:
        body[mh : mh + h, mw : mw + w] = to_bgr(art)
    return body


def normalise(image: np.ndarray) -> np.ndarray:
    """Any upright tile crop -> canonical BGR ``CANON_W`` x ``CANON_H``.

    INTER_AREA when shrinking (anti-aliasing: a 600x800 artwork must not alias into
    speckle), linear when enlarging a small frame crop.
    """
    img = to_bgr(image)
    h = img.shape[0]
    interp = cv2.INTER_AREA if h > CANON_H else cv2.INTER_LINEAR
    return cv2.resize(img, (CANON_W, CANON_H), interpolation=interp)


def hog_features(canon: np.ndarray) -> np.ndarray:
    """Unit-norm HOG of the grey canonical crop.

    Gradient orientation histograms ignore absolute brightness and most of the
    contrast, which is what changes between a scan, a lit table and a shadow.
    """
    grey = cv2.cvtColor(canon, cv2.COLOR_BGR2GRAY)
    v = _HOG.compute(grey).ravel().astype(np.float32)
    return v / (np.linalg.norm(v) + 1e-6)


#: added to the second of two uint8 channels: both counted in one histogram of 512 bins
_SECOND_CHANNEL = np.array([0, 256], np.uint16)


def _medians_u8(two: np.ndarray) -> tuple[float, float]:
    """np.median of each channel of an (h, w, 2) uint8 image, from one histogram of both: the same values at a
    fraction of the cost (a cold frame computes them for every crop it reads). The first 256 bins cumulate to
    the pixel count, so the second channel's ranks lie that count further on."""
    n = two.shape[0] * two.shape[1]
    cum = np.bincount((two + _SECOND_CHANNEL).ravel(), minlength=512).cumsum()
    a_lo, a_hi, b_lo, b_hi = np.searchsorted(cum, [(n + 1) // 2, n // 2 + 1, n + (n + 1) // 2, n + n // 2 + 1])
    return (float(a_lo) + float(a_hi)) / 2.0, (float(b_lo - 256) + float(b_hi - 256)) / 2.0


def _norm(v: np.ndarray) -> np.floating:
    """``np.linalg.norm`` of a 1-D float vector, the same value (its own computation for one) without its
    argument handling: every enrolled copy and every read crop takes four."""
    return np.sqrt(v.dot(v))


def colour_features(canon: np.ndarray) -> np.ndarray:
    """Unit-norm coarse chroma layout (Lab a*, b* on a 3x4 grid), white-balanced on the body.

    The median chroma is subtracted first: most of a tile is its light body, so the
    median is the light's colour cast and removing it keeps a yellow lamp from
    painting every tile 'red'. Coarse (3x4) so that a few pixels of misalignment
    do not matter; the question it answers is only 'where is the ink red / green / blue'.
    """
    lab8 = cv2.cvtColor(canon, cv2.COLOR_BGR2LAB)
    body = np.array(_medians_u8(lab8[..., 1:]), np.float32) - 128.0
    ab = lab8[..., 1:].astype(np.float32) - (128.0 + body)
    # saturation weighting: grey ink (black numerals) contributes nothing to the chroma layout
    small = cv2.resize(ab, (3, 4), interpolation=cv2.INTER_AREA).ravel()
    # the total 'ink redness' as well, so the average count of red pixels counts even if spread: the means
    # of a*'s positive and negative parts ((mean |a*| +- mean a*) / 2) and of |b*|, from two channel means
    mean_a, _, _, _ = cv2.mean(ab)
    abs_a, abs_b, _, _ = cv2.mean(np.abs(ab))
    extra = np.array([(abs_a + mean_a) / 2, (abs_a - mean_a) / 2, abs_b], np.float32)
    # the body colour itself, weakly (a light cast moves it a little, a red tile back a lot)
    v = np.concatenate([small, extra * 2.0, body * 1.5]).astype(np.float32)
    return v / (_norm(v) + 8.0)  # +8: a nearly colourless tile keeps a short vector


def combined_features(canon: np.ndarray, colour_weight: float = COLOUR_WEIGHT) -> np.ndarray:
    """HOG and colour blocks concatenated and renormalised (one cosine compares both)."""
    v = np.concatenate([hog_features(canon), colour_weight * colour_features(canon)])
    return v / (np.linalg.norm(v) + 1e-9)


def tile_features(canon: np.ndarray, colour_weight: float = 1.2) -> np.ndarray:
    """The classifier's features: HOG (6 px cells), finer HOG of the top, chroma layout (2537 values).

    Each block is unit norm (the colour block shorter, times ``colour_weight``); not renormalised
    as a whole: the classifier's discriminant metric weighs the blocks itself.
    """
    grey = cv2.cvtColor(canon, cv2.COLOR_BGR2GRAY)
    v = _HOG.compute(grey).ravel()
    top = _HOG_TOP.compute(np.ascontiguousarray(grey[TOP_ROWS[0] : TOP_ROWS[1], TOP_COLS[0] : TOP_COLS[1]])).ravel()
    return np.concatenate(
        [v / (_norm(v) + 1e-6), top / (_norm(top) + 1e-6), colour_weight * colour_features(canon)]
    ).astype(np.float32)


@lru_cache(maxsize=64)
def _unit_grid(size: int) -> np.ndarray:
    """Row and column coordinates of a ``size`` x ``size`` patch scaled to -0.5 .. 0.5 (float32), made once per
    size: every copy of a face at that size lights the same grid. Read-only, as it is shared."""
    grid = np.mgrid[0:size, 0:size].astype(np.float32) / size - 0.5
    grid.flags.writeable = False
    return grid


# what lies around a tile in a frame: felt, its shadow, the centre panel, a neighbour's ivory, the rim
_SURROUNDS = ((60, 110, 35), (40, 80, 25), (45, 45, 45), (200, 210, 215), (40, 55, 75))


@dataclass
class CameraAugmenter:
    """Copies of a tile image as a 1080p table camera's crops show it (seeded: reproducible).

    The path of a frame crop, re-enacted: the face is warped to frame scale (0.8..1.6 px per mm
    of a 26 x 35 mm face, i.e. 28..56 px tall: a 1080p camera over a table gives 0.8..1.45, a closer
    or a 4K one more; with copies only up to 51 px, sharp 64 px crops of an unseen colouring lost
    3m to 2m, 11-14 in 1,480, none from 1.6; at 1.7 a plain FluffyStuff back began to read as the
    blank white dragon) at any quarter turn plus a few degrees, with an
    oblique camera's keystone, its foreshortening along the view (``foreshorten``: a 35-degree
    camera sees the far seats' tiles at 0.75..0.9 px per mm, squashed across the numerals' strokes,
    where 2m read as 3m before this range covered them) and a sub-pixel offset, onto felt; light
    gain, gradient and glare, colour cast, lens blur, sensor noise and JPEG are applied there; the
    face is then cut back to ``out_size`` along its corners, each off by ``misalign_px``
    (Gaussian), with bilinear interpolation, as the detector cuts its crops.

    A source of at most ``low_res_h`` px (a crop from a frame already: enrollment from a
    camera's view) has the camera's blur and noise in it: it is re-warped at 0.95..1.1 of its
    size, sharpened or blurred a little (``sharpen``, ``low_res_blur``) and given light noise.
    """

    out_size: tuple[int, int] = (39, 52)
    scale_px_per_mm: tuple[float, float] = (0.8, 1.6)
    rotation_deg: float = 4.0
    keystone: float = 0.12
    foreshorten: tuple[float, float] = (0.72, 1.0)
    blur_sigma: tuple[float, float] = (0.5, 1.3)
    noise_sigma: tuple[float, float] = (2.0, 7.0)
    gain: tuple[float, float] = (0.68, 1.05)
    glare: float = 45.0
    jpeg_quality: tuple[int, int] = (65, 95)
    misalign_px: float = 0.8
    slot_shift_px: float = 0.0
    slot_turn_deg: float = 0.0
    low_res_h: int = 80
    low_res_scale: tuple[float, float] = (0.95, 1.1)
    low_res_blur: float = 0.4
    sharpen: float = 1.5
    seed: int = 0

    def __post_init__(self) -> None:
        self._rng = np.random.default_rng(self.seed)

    def __call__(self, image: np.ndarray) -> np.ndarray:
        return self.copies(image, 1)[0]

    def copies(self, image: np.ndarray, n: int) -> list[np.ndarray]:
        """``n`` copies of ``image``, as ``n`` calls would make them (the same draws, in order): the source is
        brought to table space once, not once per copy (artwork of a few hundred px is shrunk for each)."""
        src = to_bgr(image)
        low_res = src.shape[0] <= self.low_res_h
        if not low_res:
            src = cv2.resize(src, (52, 70), interpolation=cv2.INTER_AREA)  # table space, 2 px per mm
        return [self._copy(src, low_res) for _ in range(n)]

    def _copy(self, src: np.ndarray, low_res: bool) -> np.ndarray:
        """One copy of ``src``: a low-resolution crop as it is, else the face in table space (52 x 70)."""
        rng = self._rng
        if low_res:
            face_h = rng.uniform(*self.low_res_scale) * src.shape[0]
            blur = rng.uniform(-self.sharpen, self.low_res_blur)
            gain, glare = rng.uniform(0.75, 1.2), rng.uniform(-20.0, 30.0)
            noise, keystone, misalign = rng.uniform(1.0, 5.0), 0.08, 1.0
        else:
            face_h = rng.uniform(*self.scale_px_per_mm) * 35.0
            blur = rng.uniform(*self.blur_sigma)
            gain, glare = rng.uniform(*self.gain), rng.uniform(0.0, self.glare)
            noise, keystone, misalign = rng.uniform(*self.noise_sigma), self.keystone, self.misalign_px
        h0, w0 = src.shape[:2]
        face_w = face_h * w0 / h0
        quad = np.array([[-face_w / 2, -face_h / 2], [face_w / 2, -face_h / 2],
                         [face_w / 2, face_h / 2], [-face_w / 2, face_h / 2]])  # fmt: skip
        k = rng.uniform(0.0, keystone)  # an oblique camera: the far edge shorter than the near one
        quad[:2, 0] *= 1 - k / 2
        quad[2:, 0] *= 1 + k / 2
        if not low_res:
            quad[:, 1] *= rng.uniform(*self.foreshorten)
            if rng.random() < 0.5:  # the near edge at the top (tile turned towards the camera)
                quad[:, 1] *= -1
                quad = quad[[3, 2, 1, 0]]
        a = np.radians(90.0 * int(rng.integers(4)) + rng.uniform(-self.rotation_deg, self.rotation_deg))
        rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        size = int(max(face_w, face_h)) + 12
        quad = quad @ rot.T + size / 2 + rng.uniform(-0.5, 0.5, 2)
        corners = np.float32([[0, 0], [w0, 0], [w0, h0], [0, h0]])
        m = cv2.getPerspectiveTransform(corners, np.float32(quad))
        if low_res:
            patch = cv2.warpPerspective(src, m, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        else:
            around = _SURROUNDS[int(rng.integers(len(_SURROUNDS)))]
            patch = cv2.warpPerspective(src, m, (size, size), flags=cv2.INTER_LINEAR, borderValue=around)
        d = rng.uniform(0.0, 2 * np.pi)
        yy, xx = _unit_grid(size)
        light = gain * (1.0 + rng.uniform(0.0, 0.08) * (xx * np.cos(d) + yy * np.sin(d)))
        spot = glare * (0.5 + 0.5 * (xx * np.cos(d + 1.0) + yy * np.sin(d + 1.0)))
        # float64 throughout (the light is): the pixels are promoted as they are multiplied, in place after that
        f = np.multiply(patch, light[..., None])
        f += spot[..., None]
        f *= (1.0 + rng.uniform(-0.03, 0.03, 3)).astype(np.float32)
        if blur > 0.25:
            f = cv2.GaussianBlur(f, (0, 0), blur)
        elif blur < 0:
            f += -blur * (f - cv2.GaussianBlur(f, (0, 0), 1.0))
        f += rng.normal(0.0, noise, f.shape).astype(np.float32)
        np.maximum(f, 0.0, out=f)  # np.clip(f, 0, 255) without its argument checks, as two ufuncs in place
        patch = np.minimum(f, 255.0, out=f).astype(np.uint8)
        q = int(rng.integers(self.jpeg_quality[0], self.jpeg_quality[1] + 1))
        ok, buf = cv2.imencode(".jpg", patch, [cv2.IMWRITE_JPEG_QUALITY, q])
        if ok:
            patch = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        w, h = self.out_size
        t = np.radians(rng.uniform(-self.slot_turn_deg, self.slot_turn_deg))
        turn = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
        centre = quad.mean(axis=0)
        shift = rng.uniform(-self.slot_shift_px, self.slot_shift_px, 2)
        cut = np.float32((quad - centre) @ turn.T + centre + shift + rng.normal(0.0, misalign, (4, 2)))
        m = cv2.getPerspectiveTransform(cut, np.float32([[0, 0], [w, 0], [w, h], [0, h]]))
        return cv2.warpPerspective(patch, m, (w, h), flags=cv2.INTER_LINEAR)


@dataclass
class Augmenter:
    """Random camera-like distortions of an upright tile crop (seeded: reproducible).

    Used both to train on a single enrollment image per kind and, with stronger
    settings, to build the test sets of the benchmark. Each knob is the largest
    value drawn; every sample draws uniformly below it.
    """

    rotation_deg: float = 4.0
    scale: float = 0.06
    shift: float = 0.04
    perspective: float = 0.05
    blur_sigma: float = 1.0
    noise_sigma: float = 8.0
    brightness: float = 0.25
    contrast: float = 0.2
    colour_cast: float = 0.08
    jpeg_quality_min: int = 100  # 100 = no JPEG step
    out_size: tuple[int, int] | None = None  # (w, h) of the output; None = canonical size
    # training: pass through a random lower height first (then back to out_size), so the
    # enrolled copies also look like a 30x40 frame crop upscaled; None = no resampling step
    resample_h: tuple[int, int] | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        self._rng = np.random.default_rng(self.seed)

    def __call__(self, image: np.ndarray) -> np.ndarray:
        """One distorted copy, at ``out_size`` (a frame-sized crop for tests, canonical for training)."""
        rng = self._rng
        src = to_bgr(image)
        w, h = self.out_size or (CANON_W, CANON_H)
        # work at 2x the output size then shrink: the blur of the final resize is realistic sensor blur
        ww, hh = 2 * w, 2 * h
        img = cv2.resize(src, (ww, hh), interpolation=cv2.INTER_AREA if src.shape[0] > hh else cv2.INTER_LINEAR)
        u = lambda m: float(rng.uniform(-m, m))  # noqa: E731
        corners = np.float32([[0, 0], [ww, 0], [ww, hh], [0, hh]])
        jitter = np.float32([[u(self.perspective) * ww, u(self.perspective) * hh] for _ in range(4)])
        m_persp = cv2.getPerspectiveTransform(corners, corners + jitter)
        rot = cv2.getRotationMatrix2D((ww / 2, hh / 2), u(self.rotation_deg), 1.0 + u(self.scale))
        rot[:, 2] += (u(self.shift) * ww, u(self.shift) * hh)
        m = np.vstack([rot, [0, 0, 1]]) @ m_persp
        border = tuple(int(c) for c in np.median(img.reshape(-1, 3), axis=0))
        img = cv2.warpPerspective(img, m, (ww, hh), flags=cv2.INTER_LINEAR, borderValue=border)
        f = img.astype(np.float32)
        f = f * (1.0 + u(self.contrast)) + 255.0 * u(self.brightness) * 0.5
        f *= 1.0 + np.array([u(self.colour_cast) for _ in range(3)], np.float32)
        # a lighting gradient across the tile (lamp to one side)
        gx = np.linspace(-1, 1, ww, dtype=np.float32)[None, :, None]
        f *= 1.0 + u(self.brightness) * 0.5 * gx
        sigma = float(rng.uniform(0, self.blur_sigma)) * 2
        if sigma > 0.3:
            f = cv2.GaussianBlur(f, (0, 0), sigma)
        img = np.clip(cv2.resize(f, (w, h), interpolation=cv2.INTER_AREA), 0, 255)
        if self.resample_h is not None:
            rh = int(rng.integers(self.resample_h[0], self.resample_h[1] + 1))
            small = cv2.resize(img, (max(4, round(rh * w / h)), rh), interpolation=cv2.INTER_AREA)
            img = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
        img = np.clip(img + rng.normal(0, float(rng.uniform(0, self.noise_sigma)), img.shape), 0, 255).astype(np.uint8)
        if self.jpeg_quality_min < 100:
            q = int(rng.integers(self.jpeg_quality_min, 96))
            ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, q])
            if ok:
                img = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        return img


_PHOTO_SUITS = {"characters": "m", "dots": "p", "bamboo": "s"}
_PHOTO_HONOURS = {
    "east": "E", "south": "S", "west": "W", "north": "N", "white": "P", "green": "F", "red": "C",
}  # fmt: skip


def photo_label_to_tile(label_name: str) -> str | None:
    """Camerash dataset label ('dots-5', 'honors-red', 'bonus-plum') -> mjai tile, None for flowers/seasons."""
    group, _, value = label_name.partition("-")
    if group in _PHOTO_SUITS:
        return f"{value}{_PHOTO_SUITS[group]}"
    if group == "honors":
        return _PHOTO_HONOURS[value]
    return None
