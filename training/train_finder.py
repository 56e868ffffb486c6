"""Train the tile finder (vision/models/tile_finder.onnx): `python training/train_finder.py --minutes 57`

Needs the ``train`` extra (``pip install -e ".[train]"``: torch, CPU build) and ``../shared/data``.
The product never imports this: it runs the exported ONNX file with OpenCV's dnn module
(:mod:`vision.photos.finder` decodes the output and suppresses overlaps with numpy and cv2).

Data (see docs/vision.md for the figures and the attribution); the ``valid`` split is only measured:

- **real photos**: the ``train`` split of ``tiles-photos-roboflow`` (450 photos, 7,506 boxes; every label,
  flowers and seasons included, is "a tile face up"), un-stretched by a random aspect ratio (the
  publisher stretched every photo to 640x640), scaled so tiles are 10-150 px at the network's input,
  cut or padded to the training size, turned by quarter turns, recoloured, blurred, noised, JPEG'd;
- **composites**: tiles pasted on generated felt, wood and cloth: the project's drawn faces, the
  FluffyStuff faces and real ``train`` crops (face up), drawn, FluffyStuff and random backs (face down),
  laid as touching rows (hands, ponds, melds), grids or scattered, each with a body rim and a visible
  thickness (standing or lying tiles seen obliquely), soft shadows, a perspective view of the whole,
  glare, light gradient, blur, noise, JPEG and skin-coloured fingers over some tiles;
- **rendered table frames** (``hardware_sims.camera_render``, busy tables as ``bench/vision.py`` draws them,
  seeds apart from the bench's), cut at random, so that a camera's view of the table is found too.

Network (CenterNet-style, one scale): 5 strided stages (16-32-48-96-128 channels, BN + ReLU), a top-down
path back to stride 4 (24 channels), and a head per stride-4 cell: 2 heat maps (a tile face up / face
down lies centred here; sigmoid), the box's log width and height, and the centre's offset inside the
cell. 0.59 M parameters (2.35 MB), about 0.4 G multiply-adds for a 416x320 input. Loss: the penalty-reduced focal
loss on elliptical Gaussian targets (TTFNet's, alpha 0.54), L1 on log size and offset at the centres.
The learning rate follows a cosine over the wall-clock budget (``--minutes``): a slower machine trains
fewer steps in the same time. One thread by default (``--threads``).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hardware_sims.tile_art import drawn_tile_set, load_tile_set, random_back  # noqa: E402
from vision.photos.data import DATA, ROBOFLOW, roboflow_crops  # noqa: E402

OUT = ROOT / "vision" / "models" / "tile_finder.onnx"
STRIDE = 4
SIZE = 320  # training crops are SIZE x SIZE


# ------------------------------------------------------------------------------------------- network
def _conv(cin: int, cout: int, stride: int = 1, k: int = 3) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU(inplace=True))  # fmt: skip


class FinderNet(nn.Module):
    """Image (normalised BGR) -> (N, 6, H/4, W/4): heat logits face up / face down, log w, log h, dx, dy.

    The sigmoid of the heat is taken by the reader (cv2.dnn mis-read a slice-sigmoid-concat tail: the
    exported file ends at the last convolution)."""

    def __init__(self) -> None:
        super().__init__()
        self.s1 = _conv(3, 16, 2)  # /2
        self.s2 = nn.Sequential(_conv(16, 32, 2), _conv(32, 32))  # /4
        self.s3 = nn.Sequential(_conv(32, 48, 2), _conv(48, 48))  # /8
        self.s4 = nn.Sequential(_conv(48, 96, 2), _conv(96, 96), _conv(96, 96))  # /16
        self.s5 = nn.Sequential(_conv(96, 128, 2), _conv(128, 128))  # /32
        self.l5 = _conv(128, 64, k=1)
        self.l4 = _conv(96, 64, k=1)
        self.m4 = _conv(64, 48)
        self.l3 = _conv(48, 48, k=1)
        self.m3 = _conv(48, 32)
        self.l2 = _conv(32, 32, k=1)
        self.m2 = _conv(32, 24)
        self.head = nn.Sequential(_conv(24, 24), nn.Conv2d(24, 6, 1))
        with torch.no_grad():
            self.head[-1].bias[:2].fill_(-4.6)  # heat starts near 0.01 (CenterNet's prior)
            self.head[-1].bias[2:4].fill_(math.log(8.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c2 = self.s2(self.s1(x))
        c3 = self.s3(c2)
        c4 = self.s4(c3)
        c5 = self.s5(c4)
        p4 = self.m4(self.l4(c4) + F.interpolate(self.l5(c5), scale_factor=2.0, mode="nearest"))
        p3 = self.m3(self.l3(c3) + F.interpolate(p4, scale_factor=2.0, mode="nearest"))
        p2 = self.m2(self.l2(c2) + F.interpolate(p3, scale_factor=2.0, mode="nearest"))
        return self.head(p2)


def load_onnx(net: FinderNet, path: Path) -> None:
    """Start from an exported finder (its batch norms folded into the convolutions): each convolution takes
    the folded weights, its batch norm becomes the folded bias with unit statistics. Train such a network
    with its batch norms frozen (:func:`freeze_norms`): batch statistics would undo the folding."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    with torch.no_grad():
        for node in model.graph.node:
            if node.op_type != "Conv":
                continue
            # '/s2/s2.0/s2.0.0/Conv_output_0' -> 's2.0.0'; the last convolution's output is the graph's 'maps'
            where = node.output[0].rsplit("/", 2)[-2] if "/" in node.output[0] else "head.1"
            conv = net.get_submodule(where)
            conv.weight.copy_(torch.from_numpy(inits[node.input[1]].copy()))
            bias = torch.from_numpy(inits[node.input[2]].copy())
            if conv.bias is not None:
                conv.bias.copy_(bias)
                continue
            head, _, last = where.rpartition(".")
            bn = net.get_submodule(f"{head}.{int(last) + 1}" if head else str(int(last) + 1))
            bn.weight.fill_(1.0)
            bn.bias.copy_(bias)
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)


def freeze_norms(net: nn.Module) -> None:
    """Batch norms in eval mode (their statistics kept) while the rest trains."""
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()


# ------------------------------------------------------------------------------------------- targets, loss
def make_targets(boxes: np.ndarray, face: np.ndarray, size: int) -> tuple[np.ndarray, ...]:
    """Boxes (n, 4) x0 y0 x1 y1 in input pixels -> heat (2, g, g), regression (4, g, g), mask (g, g)."""
    g = size // STRIDE
    heat = np.zeros((2, g, g), np.float32)
    reg = np.zeros((4, g, g), np.float32)
    mask = np.zeros((g, g), np.float32)
    order = np.argsort(-(boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])) if len(boxes) else []
    for i in order:  # large first: a small tile's centre wins its cell
        x0, y0, x1, y1 = boxes[i]
        w, h = x1 - x0, y1 - y0
        cx, cy = (x0 + x1) / 2 / STRIDE, (y0 + y1) / 2 / STRIDE
        ix, iy = int(cx), int(cy)
        if not (0 <= ix < g and 0 <= iy < g) or w < 2 or h < 2:
            continue
        sx, sy = max(0.5, 0.54 * w / STRIDE / 6), max(0.5, 0.54 * h / STRIDE / 6)
        rx, ry = int(3 * sx) + 1, int(3 * sy) + 1
        xa, xb, ya, yb = max(0, ix - rx), min(g, ix + rx + 1), max(0, iy - ry), min(g, iy + ry + 1)
        xs = np.arange(xa, xb, dtype=np.float32) - ix
        ys = np.arange(ya, yb, dtype=np.float32) - iy
        gau = np.exp(-(xs[None, :] ** 2) / (2 * sx * sx) - (ys[:, None] ** 2) / (2 * sy * sy))
        c = 0 if face[i] else 1
        heat[c, ya:yb, xa:xb] = np.maximum(heat[c, ya:yb, xa:xb], gau)
        reg[:, iy, ix] = (math.log(w / STRIDE), math.log(h / STRIDE), cx - ix, cy - iy)
        mask[iy, ix] = 1.0
    return heat, reg, mask


def loss_fn(out: torch.Tensor, heat: torch.Tensor, reg: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
    p = torch.sigmoid(out[:, :2]).clamp(1e-4, 1 - 1e-4)
    pos = heat.eq(1).float()
    neg_w = (1 - heat) ** 4
    pos_loss = (torch.log(p) * (1 - p) ** 2 * pos).sum()
    neg_loss = (torch.log(1 - p) * p**2 * neg_w * (1 - pos)).sum()
    n = pos.sum().clamp(min=1.0)
    focal = -(pos_loss + neg_loss) / n
    m = mask.unsqueeze(1)
    nm = mask.sum().clamp(min=1.0)
    size_l = (F.l1_loss(out[:, 2:4], reg[:, :2], reduction="none") * m).sum() / nm
    off_l = (F.l1_loss(out[:, 4:6], reg[:, 2:4], reduction="none") * m).sum() / nm
    return focal + size_l + off_l, focal, size_l, off_l


# ------------------------------------------------------------------------------------------- photometric
def _jpeg(img: np.ndarray, rng: random.Random) -> np.ndarray:
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, rng.randint(40, 95)])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else img


def photometric(img: np.ndarray, rng: random.Random, strength: float = 1.0) -> np.ndarray:
    f = img.astype(np.float32)
    h, w = f.shape[:2]
    if rng.random() < 0.15 * strength:
        f = f[..., rng.sample([0, 1, 2], 3)]
    f = f * np.array([rng.uniform(1 - 0.2 * strength, 1 + 0.15 * strength) for _ in range(3)], np.float32)
    f = f * rng.uniform(1 - 0.45 * strength, 1 + 0.3 * strength) + rng.uniform(-25, 25) * strength
    if rng.random() < 0.4:
        gx, gy = rng.uniform(-0.5, 0.5), rng.uniform(-0.5, 0.5)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        f = f * (1 + gx * (xx / w - 0.5) + gy * (yy / h - 0.5))[..., None]
    if rng.random() < 0.3:  # glare
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(0.05, 0.3) * w
        f = f + rng.uniform(40, 170) * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r))[..., None]
    out = np.clip(f, 0, 255).astype(np.uint8)
    if rng.random() < 0.35:
        out = cv2.GaussianBlur(out, (0, 0), rng.uniform(0.4, 1.6))
    if rng.random() < 0.35:
        out = np.clip(out + np.random.normal(0, rng.uniform(2, 9), out.shape), 0, 255).astype(np.uint8)
    if rng.random() < 0.5:
        out = _jpeg(out, rng)
    return out


def turn(img: np.ndarray, boxes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Quarter turns clockwise (k) of a square image and its boxes."""
    s = img.shape[1]
    for _ in range(k % 4):
        img = cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE)
        if len(boxes):  # (x, y) -> (s - y, x)
            boxes = np.stack([s - boxes[:, 3], boxes[:, 0], s - boxes[:, 1], boxes[:, 2]], axis=1)
    return img, boxes


def clip_boxes(boxes: np.ndarray, face: np.ndarray, size: int, keep: float = 0.55) -> tuple[np.ndarray, np.ndarray]:
    """Boxes cut by the crop's edge: kept (clipped) while most of the tile is inside, dropped otherwise."""
    if not len(boxes):
        return boxes.reshape(0, 4), face
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    c = np.clip(boxes, 0, size)
    inside = (c[:, 2] - c[:, 0]).clip(0) * (c[:, 3] - c[:, 1]).clip(0)
    ok = inside >= keep * np.maximum(area, 1e-6)
    return c[ok], face[ok]


# ------------------------------------------------------------------------------------------- real photos
def load_real(split: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """(photo, boxes in its pixels) for every photo of ``split``; every label counts as a tile face up."""
    out = []
    for img_path in sorted((ROBOFLOW / "images" / split).iterdir()):
        lab = ROBOFLOW / "labels" / split / (img_path.stem + ".txt")
        img = cv2.imread(str(img_path), cv2.IMREAD_COLOR)
        if img is None or not lab.is_file():
            continue
        h, w = img.shape[:2]
        rows = [[float(v) for v in line.split()[1:]] for line in lab.read_text().splitlines() if len(line.split()) == 5]
        b = np.array(rows, np.float32).reshape(-1, 4)
        boxes = np.stack([(b[:, 0] - b[:, 2] / 2) * w, (b[:, 1] - b[:, 3] / 2) * h,
                          (b[:, 0] + b[:, 2] / 2) * w, (b[:, 1] + b[:, 3] / 2) * h], axis=1)  # fmt: skip
        out.append((img, boxes.astype(np.float32)))
    return out


def place(img: np.ndarray, boxes: np.ndarray, sx: float, sy: float, rng: random.Random,
          fill: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Scale ``img`` by (sx, sy) and cut a SIZE x SIZE window (padding with ``fill``); a window smaller
    than the image is placed around a random tile (most of a table frame is felt)."""
    h, w = img.shape[:2]
    nw, nh = max(1, round(w * sx)), max(1, round(h * sy))
    small = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_AREA if sx < 1 else cv2.INTER_LINEAR)
    ox = rng.randint(min(0, SIZE - nw), max(0, SIZE - nw))
    oy = rng.randint(min(0, SIZE - nh), max(0, SIZE - nh))
    if len(boxes) and rng.random() < 0.85:
        fx, fy = boxes[rng.randrange(len(boxes))].reshape(2, 2).mean(0) * np.float32([sx, sy])
        if nw > SIZE:
            ox = int(np.clip(-fx + rng.uniform(0.1, 0.9) * SIZE, SIZE - nw, 0))
        if nh > SIZE:
            oy = int(np.clip(-fy + rng.uniform(0.1, 0.9) * SIZE, SIZE - nh, 0))
    canvas = np.full((SIZE, SIZE, 3), fill, np.uint8)
    xa, ya = max(0, ox), max(0, oy)
    xb, yb = min(SIZE, ox + nw), min(SIZE, oy + nh)
    canvas[ya:yb, xa:xb] = small[ya - oy : yb - oy, xa - ox : xb - ox]
    b = boxes * np.float32([sx, sy, sx, sy]) + np.float32([ox, oy, ox, oy])
    return canvas, b


def real_sample(photos: list, rng: random.Random) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    img, boxes = rng.choice(photos)
    med = float(np.median(boxes[:, 2] - boxes[:, 0])) if len(boxes) else 60.0
    target = math.exp(rng.uniform(math.log(14), math.log(110)))  # median tile width at the input
    s = min(target / max(med, 4.0), 1.6)
    aspect = math.exp(rng.uniform(-0.35, 0.35))
    fill = tuple(rng.randint(0, 255) for _ in range(3))
    canvas, b = place(img, boxes, s * aspect, s / aspect, rng, fill)
    face = np.ones(len(b), bool)
    b, face = clip_boxes(b, face, SIZE)
    canvas, b = turn(canvas, b, rng.randint(0, 3))
    if rng.random() < 0.5:
        canvas = canvas[:, ::-1].copy()
        if len(b):
            b = np.stack([SIZE - b[:, 2], b[:, 1], SIZE - b[:, 0], b[:, 3]], axis=1)
    return photometric(canvas, rng), b, face


# ------------------------------------------------------------------------------------------- composites
#: photos with no tile (``training/clutter.py``'s training part), set by :func:`main` with ``--clutter``: what
#: stands behind a real table, as backgrounds and as pictures with no tile at all
CLUTTER: list[np.ndarray] = []


def clutter_background(rng: random.Random, n: int) -> np.ndarray:
    """A random cut of a clutter photo, scaled, turned and recoloured, ``n`` x ``n``."""
    img = rng.choice(CLUTTER)
    h, w = img.shape[:2]
    f = rng.uniform(0.3, 1.0)
    ch, cw = max(16, int(h * f)), max(16, int(w * f * rng.uniform(0.6, 1.4)))
    ch, cw = min(ch, h), min(cw, w)
    y, x = rng.randint(0, h - ch), rng.randint(0, w - cw)
    out = cv2.resize(img[y:y + ch, x:x + cw], (n, n), interpolation=cv2.INTER_LINEAR)
    if rng.random() < 0.5:
        out = cv2.rotate(out, rng.choice([cv2.ROTATE_90_CLOCKWISE, cv2.ROTATE_180, cv2.ROTATE_90_COUNTERCLOCKWISE]))
    return out


def background(rng: random.Random, n: int) -> np.ndarray:
    if CLUTTER and rng.random() < 0.3:
        return clutter_background(rng, n)
    kind = rng.random()
    base = np.array([rng.randint(0, 255) for _ in range(3)], np.float32)
    if kind < 0.35:  # felt: a saturated green/blue/red/grey with fine noise
        base = np.array(rng.choice([(40, 110, 30), (90, 60, 20), (40, 40, 120), (60, 60, 60), (110, 80, 30),
                                    (30, 70, 20)]), np.float32) * rng.uniform(0.6, 1.5)  # fmt: skip
        img = base + np.random.normal(0, rng.uniform(2, 10), (n, n, 3)).astype(np.float32)
    elif kind < 0.6:  # wood: brown with stretched grain
        base = np.array([rng.uniform(20, 90), rng.uniform(50, 130), rng.uniform(90, 200)], np.float32)
        grain = cv2.resize(np.random.normal(0, 1, (n, max(2, n // 24))).astype(np.float32), (n, n))
        grain = cv2.GaussianBlur(grain, (0, 0), 1.5)
        img = base * (1 + 0.18 * grain[..., None])
        if rng.random() < 0.5:
            img = np.ascontiguousarray(img.transpose(1, 0, 2))
    elif kind < 0.85:  # cloth: checks or stripes of two colours
        other = np.array([rng.randint(0, 255) for _ in range(3)], np.float32)
        p = rng.randint(4, 40)
        yy, xx = np.mgrid[0:n, 0:n]
        pat = ((xx // p + yy // p) % 2) if rng.random() < 0.5 else ((xx // p) % 2)
        img = np.where(pat[..., None] == 1, base, other).astype(np.float32)
        img += np.random.normal(0, 4, (n, n, 3)).astype(np.float32)
    else:  # desk/paper: plain with a soft blob pattern
        blobs = cv2.resize(np.random.normal(0, 1, (6, 6)).astype(np.float32), (n, n), interpolation=cv2.INTER_CUBIC)
        img = base * (1 + 0.25 * blobs[..., None])
    return np.clip(img, 0, 255).astype(np.uint8)


class TileSource:
    def __init__(self) -> None:
        drawn = drawn_tile_set()
        fluffy = load_tile_set(DATA / "tiles-fluffystuff")
        self.art = [cv2.resize(f, (90, 120), interpolation=cv2.INTER_AREA) for ts in (drawn, fluffy)
                    for f in ts.faces.values()]  # fmt: skip
        # the Unicode colour faces too (34 kinds, no red fives); the mono set is kept apart, only measured
        colour = DATA / "tiles-art-unicode" / "colour"
        for p in sorted(colour.glob("*.png")) if colour.is_dir() else []:
            face = cv2.imread(str(p), cv2.IMREAD_UNCHANGED)
            if face is None:
                continue
            if face.ndim == 3 and face.shape[2] == 4:  # on an ivory body
                a = face[..., 3:].astype(np.float32) / 255
                face = (face[..., :3] * a + np.float32([225, 240, 245]) * (1 - a)).astype(np.uint8)
            elif face.ndim == 2:
                face = cv2.cvtColor(face, cv2.COLOR_GRAY2BGR)
            self.art.append(cv2.resize(face, (90, 120), interpolation=cv2.INTER_AREA))
        self.backs = [cv2.resize(ts.back, (90, 120), interpolation=cv2.INTER_AREA) for ts in (drawn, fluffy)]
        self.crops = []
        for c in roboflow_crops("train"):
            h, w = c.image.shape[:2]
            m = (max(1, round(h * 0.05)), max(1, round(w * 0.05)))
            core = c.image[m[0] : h - m[0], m[1] : w - m[1]]  # the 6 % margin off again: the tile itself
            if core.size and min(core.shape[:2]) >= 16:
                self.crops.append(cv2.resize(core, (90, 120), interpolation=cv2.INTER_AREA))

    def pick(self, rng: random.Random, back_p: float) -> tuple[np.ndarray, bool]:
        if rng.random() < back_p:
            if rng.random() < 0.5:
                return random_back(rng), False
            return rng.choice(self.backs), False
        if rng.random() < 0.55:
            face = rng.choice(self.crops)
        else:
            face = rng.choice(self.art)
            if rng.random() < 0.3:  # ink hue turned
                hsv = cv2.cvtColor(face, cv2.COLOR_BGR2HSV)
                hsv[..., 0] = (hsv[..., 0].astype(np.int32) + rng.randint(0, 179)) % 180
                face = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)
        if rng.random() < 0.5:
            face = cv2.rotate(face, cv2.ROTATE_180)
        return face, True


def _skin(rng: random.Random) -> tuple[int, int, int]:
    return (rng.randint(60, 170), rng.randint(100, 190), rng.randint(150, 235))


def composite_sample(src: TileSource, rng: random.Random) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tiles laid on a generated surface, seen through a random perspective."""
    n = SIZE + 64
    canvas = background(rng, n).astype(np.float32)
    tw = math.exp(rng.uniform(math.log(12), math.log(70)))  # tile width on the canvas
    th = tw * rng.uniform(1.2, 1.45)
    depth = tw * rng.uniform(0.0, 0.7)  # visible thickness (side of the tile)
    body = np.array(rng.choice([(225, 235, 240), (200, 215, 220), (170, 200, 210), (235, 235, 235)]), np.float32)
    side = np.array(rng.choice([(40, 150, 40), (200, 120, 40), (30, 30, 180), (230, 230, 230), (60, 170, 230),
                                (40, 40, 40)]), np.float32) * rng.uniform(0.7, 1.1)  # fmt: skip
    back_p = rng.choice([0.0, 0.0, 0.15, 0.5, 1.0])
    if CLUTTER and rng.random() < 0.12:  # a picture of the room with no tile at all: every box there is wrong
        empty = np.zeros((0, 4), np.float32)
        out = cv2.resize(clutter_background(rng, n), (SIZE, SIZE), interpolation=cv2.INTER_AREA)
        return photometric(out, rng), empty, np.zeros(0, bool)
    # lay out tile centres (canvas px) with an angle per row
    tiles: list[tuple[float, float, float]] = []  # cx, cy, angle
    layout = rng.random()
    if layout < 0.55:  # rows of touching tiles (hands, ponds, melds)
        rows = rng.randint(1, 5)
        ang0 = rng.uniform(-180, 180) if rng.random() < 0.5 else rng.choice([0, 90, 180, 270]) + rng.uniform(-8, 8)
        gap = tw * rng.choice([0.0, 0.0, 0.02, 0.1, 0.3])
        for r in range(rows):
            count = rng.randint(3, 16)
            a = math.radians(ang0 + rng.uniform(-4, 4))
            ux, uy = math.cos(a), math.sin(a)
            vx, vy = -uy, ux
            cx0 = rng.uniform(0, n)
            cy0 = rng.uniform(0, n)
            off = (r - rows / 2) * (th + depth + rng.uniform(2, 10))
            for i in range(count):
                t = (i - count / 2) * (tw + gap)
                tiles.append((cx0 + ux * t + vx * off, cy0 + uy * t + vy * off, ang0 + rng.uniform(-2, 2)))
    elif layout < 0.8:  # scattered, any angle
        for _ in range(rng.randint(1, 25)):
            tiles.append((rng.uniform(0, n), rng.uniform(0, n), rng.uniform(-180, 180)))
    else:  # a grid (tiles laid out by kind)
        cols, rws = rng.randint(2, 9), rng.randint(2, 6)
        x0, y0 = rng.uniform(0, n / 2), rng.uniform(0, n / 2)
        gx, gy = tw * rng.uniform(1.0, 1.4), (th + depth) * rng.uniform(1.0, 1.3)
        for i in range(cols):
            for j in range(rws):
                tiles.append((x0 + i * gx, y0 + j * gy, rng.uniform(-3, 3)))
    # shadows first (light from one side), then tiles in order, then fingers
    shadow = np.zeros((n, n), np.uint8)
    light = (rng.uniform(-0.25, 0.25) * tw, rng.uniform(-0.25, 0.25) * tw)
    quads = []
    for cx, cy, ang in tiles:
        a = math.radians(ang)
        ux, uy, vx, vy = math.cos(a), math.sin(a), -math.sin(a), math.cos(a)
        hw, hh = tw / 2, th / 2
        face_q = np.float32([[cx + su * ux * hw + sv * vx * hh, cy + su * uy * hw + sv * vy * hh]
                             for su, sv in ((-1, -1), (1, -1), (1, 1), (-1, 1))])  # TL TR BR BL
        side_q = face_q + np.float32([vx * depth, vy * depth])  # the tile's body seen below its face
        quads.append((face_q, side_q))
        allq = np.vstack([face_q, side_q])
        hull = cv2.convexHull((allq + np.float32(light)).astype(np.int32))
        cv2.fillConvexPoly(shadow, hull, 255, cv2.LINE_AA)
    if quads:
        shadow = cv2.GaussianBlur(shadow, (0, 0), max(1.0, tw * 0.12))
        canvas *= (1 - rng.uniform(0.2, 0.55) * shadow.astype(np.float32) / 255)[..., None]
    boxes, faces = [], []
    for face_q, side_q in quads:
        img, up = src.pick(rng, back_p)
        # body: the side (thickness), then a rim around the face
        hull = cv2.convexHull(np.vstack([face_q, side_q]).astype(np.float32) * 8).astype(np.int32)
        cv2.fillConvexPoly(canvas, hull, side.tolist(), cv2.LINE_AA, shift=3)
        if depth > 1:
            mid_q = (face_q + side_q) / 2
            hull2 = cv2.convexHull(np.vstack([face_q, mid_q]).astype(np.float32) * 8).astype(np.int32)
            cv2.fillConvexPoly(canvas, hull2, (body * rng.uniform(0.8, 1.0)).tolist(), cv2.LINE_AA, shift=3)
        h, w = img.shape[:2]
        rim = rng.uniform(0.0, 0.08)
        src_q = np.float32([[-rim * w, -rim * h], [w * (1 + rim), -rim * h], [w * (1 + rim), h * (1 + rim)],
                            [-rim * w, h * (1 + rim)]])  # fmt: skip
        m = cv2.getPerspectiveTransform(src_q, face_q)
        x0, y0 = np.floor(face_q.min(0)).astype(int)
        x1, y1 = np.ceil(face_q.max(0)).astype(int) + 1
        xa, ya, xb, yb = max(0, x0), max(0, y0), min(n, x1), min(n, y1)
        if xb - xa < 2 or yb - ya < 2:
            continue
        tile_img = cv2.copyMakeBorder(img, 0, 0, 0, 0, cv2.BORDER_CONSTANT)
        shift = np.float64([[1, 0, -xa], [0, 1, -ya], [0, 0, 1]])
        warped = cv2.warpPerspective(tile_img, shift @ m, (xb - xa, yb - ya), flags=cv2.INTER_AREA,
                                     borderMode=cv2.BORDER_CONSTANT, borderValue=body.tolist())  # fmt: skip
        mask = np.zeros((yb - ya, xb - xa), np.uint8)
        cv2.fillConvexPoly(mask, ((face_q - np.float32([xa, ya])) * 8).astype(np.int32), 255, cv2.LINE_AA, shift=3)
        alpha = mask.astype(np.float32)[..., None] / 255
        canvas[ya:yb, xa:xb] = canvas[ya:yb, xa:xb] * (1 - alpha) + warped.astype(np.float32) * alpha
        allq = np.vstack([face_q, side_q])
        boxes.append([*allq.min(0), *allq.max(0)])
        faces.append(up)
    # a later tile may cover an earlier one: drop tiles mostly hidden (rows overlap only by chance)
    b = np.array(boxes, np.float32).reshape(-1, 4)
    face = np.array(faces, bool)
    if len(b) > 1:
        keep = np.ones(len(b), bool)
        for i in range(len(b)):
            later = b[i + 1 :]
            if not len(later):
                break
            ix = (np.minimum(b[i, 2], later[:, 2]) - np.maximum(b[i, 0], later[:, 0])).clip(0)
            iy = (np.minimum(b[i, 3], later[:, 3]) - np.maximum(b[i, 1], later[:, 1])).clip(0)
            area = (b[i, 2] - b[i, 0]) * (b[i, 3] - b[i, 1])
            if (ix * iy).max() > 0.35 * area:
                keep[i] = False
        b, face = b[keep], face[keep]
    # fingers: skin capsules reaching in from the edge, over a few tiles
    if rng.random() < 0.3:
        for _ in range(rng.randint(1, 3)):
            p0 = (rng.uniform(0, n), rng.choice([-10.0, n + 10.0]))
            p1 = (rng.uniform(0, n), rng.uniform(0, n))
            cv2.line(canvas, tuple(map(int, p0)), tuple(map(int, p1)), _skin(rng), int(tw * rng.uniform(0.5, 0.9)),
                     cv2.LINE_AA)  # fmt: skip
    # the whole scene through a perspective: a camera not straight above
    src_c = np.float32([[0, 0], [n, 0], [n, n], [0, n]])
    j = rng.uniform(0.0, 0.22) * SIZE
    dst_c = np.float32([[rng.uniform(-j, j), rng.uniform(-j, j)], [SIZE + rng.uniform(-j, j), rng.uniform(-j, j)],
                        [SIZE + rng.uniform(-j, j), SIZE + rng.uniform(-j, j)],
                        [rng.uniform(-j, j), SIZE + rng.uniform(-j, j)]]) + np.float32(
        [[-32, -32], [32, -32], [32, 32], [-32, 32]]) * (SIZE / n)
    m = cv2.getPerspectiveTransform(src_c, dst_c)
    out = cv2.warpPerspective(np.clip(canvas, 0, 255).astype(np.uint8), m, (SIZE, SIZE), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_REFLECT)  # fmt: skip
    if len(b):
        corners = np.stack([b[:, [0, 1]], b[:, [2, 1]], b[:, [2, 3]], b[:, [0, 3]]], axis=1).reshape(-1, 1, 2)
        t = cv2.perspectiveTransform(corners.astype(np.float32), m).reshape(-1, 4, 2)
        b = np.concatenate([t.min(1), t.max(1)], axis=1)
        # an axis-aligned box around a turned box's corners is looser than the tile: bring it in a little
        b = b.astype(np.float32)
    b, face = clip_boxes(b, face, SIZE)
    return photometric(out, rng), b, face


# ------------------------------------------------------------------------------------------- rendered frames
def render_pool(count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Rendered 1080p table frames (busy tables, overhead and oblique), their tile boxes and faces."""
    import importlib.util

    from hardware_sims.camera_render import BLUE_FELT, FELT, CameraPose, render

    spec = importlib.util.spec_from_file_location("bench_vision", ROOT / "bench" / "vision.py")
    bench_vision = importlib.util.module_from_spec(spec)
    sys.modules["bench_vision"] = bench_vision
    spec.loader.exec_module(bench_vision)  # the bench's busy tables and light (not the package `vision`)
    BENCH_EFFECTS, random_view = bench_vision.BENCH_EFFECTS, bench_vision.random_view

    rng = np.random.default_rng(seed)
    fluffy = load_tile_set(DATA / "tiles-fluffystuff")
    out = []
    for i in range(count):
        cam = CameraPose.overhead() if i % 2 == 0 else CameraPose.oblique(float(rng.uniform(20, 45)))
        frame, truth = render(random_view(rng), camera=cam, tiles=fluffy if i % 3 == 0 else None,
                              effects=BENCH_EFFECTS, rng=rng, felt=FELT if i % 4 else BLUE_FELT)  # fmt: skip
        boxes, faces = [], []
        for t in truth.tiles:
            if t.occluded:
                continue
            c = t.corners_px
            boxes.append([*c.min(0), *c.max(0)])
            faces.append(t.face_up)
        out.append((frame, np.array(boxes, np.float32).reshape(-1, 4), np.array(faces, bool)))
    return out


def render_sample(pool: list, rng: random.Random) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    frame, boxes, face = rng.choice(pool)
    med = float(np.median(boxes[:, 2] - boxes[:, 0])) if len(boxes) else 30.0
    s = math.exp(rng.uniform(math.log(12), math.log(45))) / med
    canvas, b = place(frame, boxes, s, s, rng, (0, 0, 0))
    # face flags follow the boxes through place(): same order
    b, f = clip_boxes(b, face.copy(), SIZE)
    canvas, b = turn(canvas, b, rng.randint(0, 3))
    return photometric(canvas, rng, 0.5), b, f


# ------------------------------------------------------------------------------------------- training
def to_tensor(imgs: list[np.ndarray]) -> torch.Tensor:
    x = np.stack(imgs).astype(np.float32)
    return torch.from_numpy((x / 255.0 - 0.5) / 0.25).permute(0, 3, 1, 2).contiguous()


def batch(photos: list, src: TileSource, pool: list, n: int, rng: random.Random,
          mix: tuple[float, float]) -> tuple[torch.Tensor, ...]:  # fmt: skip
    imgs, heats, regs, masks = [], [], [], []
    for _ in range(n):
        r = rng.random()
        if r < mix[0]:
            img, b, f = real_sample(photos, rng)
        elif r < mix[0] + mix[1]:
            img, b, f = composite_sample(src, rng)
        else:
            img, b, f = render_sample(pool, rng)
        h, g, m = make_targets(b, f, SIZE)
        imgs.append(np.ascontiguousarray(img))
        heats.append(h)
        regs.append(g)
        masks.append(m)
    return to_tensor(imgs), torch.from_numpy(np.stack(heats)), torch.from_numpy(np.stack(regs)), \
        torch.from_numpy(np.stack(masks))


def export(net: FinderNet, path: Path) -> None:
    was = [m.training for m in net.modules()]
    net.eval()
    path.parent.mkdir(parents=True, exist_ok=True)
    axes = {"image": {0: "n", 2: "h", 3: "w"}, "maps": {0: "n", 2: "gh", 3: "gw"}}
    torch.onnx.export(net, torch.zeros(1, 3, 320, 416), str(path), input_names=["image"], output_names=["maps"],
                      opset_version=13, dynamic_axes=axes, dynamo=False)  # fmt: skip
    cv2.dnn.readNetFromONNX(str(path))  # the runtime reads it, or this fails here
    for m, mode in zip(net.modules(), was, strict=True):
        m.training = mode


def quick_valid(path: Path, photos: list, limit: int = 80) -> str:
    """Found / extra on the first ``limit`` valid photos with the exported file (the product's decoder)."""
    from vision.photos.finder import TileFinder, match_boxes

    finder = TileFinder(path)
    found = labelled = extra = 0
    for img, boxes in photos[:limit]:
        got = [t.box for t in finder.find(img)]
        m = match_boxes(boxes, got)
        found += m.found
        labelled += len(boxes)
        extra += m.extra
    return f"valid[:{limit}] found {100 * found / max(1, labelled):.1f} % extra {100 * extra / max(1, labelled):.1f} %"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=57.0, help="wall-clock budget of the training loop")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=12)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--real", type=float, default=0.5, help="share of real photos in a batch")
    ap.add_argument("--composite", type=float, default=0.38, help="share of composites (the rest: rendered frames)")
    ap.add_argument("--renders", type=int, default=24, help="rendered table frames in the pool")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--clutter", action="store_true",
                    help="photos with no tile (training/clutter.py, scikit-image) as backgrounds and negatives")
    ap.add_argument("--checkpoint", type=Path, help="also save the torch weights here (to go on training later)")
    ap.add_argument("--init", type=Path, help="start from torch weights saved with --checkpoint, or from an exported "
                    ".onnx finder (its batch norms then stay frozen)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cv2.setNumThreads(1)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    rng = random.Random(args.seed)
    t0 = time.time()
    photos = load_real("train")
    valid = load_real("valid")
    src = TileSource()
    pool = render_pool(args.renders, 1000 + args.seed)
    if args.clutter:
        sys.path.insert(0, str(ROOT / "training"))
        from clutter import clutter_photos

        CLUTTER.extend(img for _, img in clutter_photos("train"))
    print(f"sources: {len(photos)} train photos ({sum(len(b) for _, b in photos)} boxes), {len(src.crops)} real "
          f"crops, {len(src.art)} art faces, {len(pool)} rendered frames; {len(valid)} valid photos "
          f"({time.time() - t0:.0f} s)", flush=True)
    net = FinderNet()
    frozen = bool(args.init) and args.init.suffix == ".onnx"
    if frozen:
        load_onnx(net, args.init)
        freeze_norms(net)
    elif args.init:
        net.load_state_dict(torch.load(args.init))
    print(f"parameters: {sum(p.numel() for p in net.parameters())}", flush=True)
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    budget = args.minutes * 60
    start = time.time()
    step, hist, last_save = 0, [], start
    while (frac := (time.time() - start) / budget) < 1.0:
        lr = args.lr * min(1.0, frac / 0.03) * 0.5 * (1 + math.cos(math.pi * frac))
        for g in opt.param_groups:
            g["lr"] = lr
        x, heat, reg, mask = batch(photos, src, pool, args.batch, rng, (args.real, args.composite))
        loss, focal, size_l, off_l = loss_fn(net(x), heat, reg, mask)
        opt.zero_grad()
        loss.backward()
        opt.step()
        hist.append((loss.item(), focal.item(), size_l.item(), off_l.item()))
        step += 1
        if step % 25 == 0:
            m = np.mean(hist[-25:], axis=0)
            print(f"step {step} {100 * frac:.0f} % lr {lr:.5f} loss {m[0]:.3f} (heat {m[1]:.3f} size {m[2]:.3f} "
                  f"offset {m[3]:.3f}) {(time.time() - start) / step:.2f} s/step", flush=True)
        if time.time() - last_save > 600:
            export(net, args.out)
            if args.checkpoint:
                torch.save(net.state_dict(), args.checkpoint)
            print(f"  saved; {quick_valid(args.out, valid)}", flush=True)
            last_save = time.time()
    export(net, args.out)
    if args.checkpoint:
        torch.save(net.state_dict(), args.checkpoint)
    print(f"done: {step} steps of {args.batch} in {(time.time() - start) / 60:.1f} min (seed {args.seed}); "
          f"{quick_valid(args.out, valid, 1000)}; wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)",
          flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
