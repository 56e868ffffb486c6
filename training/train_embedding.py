"""Train the tile embedding (vision/models/tile_embed.onnx): `python training/train_embedding.py --minutes 55`

Needs the ``train`` extra (``pip install -e ".[train]"``: torch, CPU build) and ``../shared/data``.
The product never imports this: it runs the exported ONNX file with OpenCV's dnn module.

Data (see docs/vision.md for the figures and the attribution):
- real crops: ``tiles-photos-roboflow`` ``train`` split (the ``valid`` split is only measured) and
  the training half of ``tiles-photos-camerash`` (:func:`vision.photos.data.camerash_split`), 60 % of
  each batch (``--real-fraction``), drawn class-balanced (a kind, then one of its crops);
- domain-randomised renders of the project's drawn tiles and of the FluffyStuff faces: ink and body
  recoloured (hue turns, channel swaps; the drawn set also inverted to dark faces, FluffyStuff never,
  so that the bench's dark-faced FluffyStuff is a colouring the network has not seen), strokes
  thickened or thinned, perspective, turns (upside down half the time), glare, light gradient,
  blur, noise, down to 28 px tall and back, JPEG; tile backs of random colours as their own class.

Network: 7 conv layers (32 stride 2, 32 | 64-64 | 128-128-192, BN + ReLU, max pools after the third and
fifth; 40 M multiply-adds per crop, a few ms in cv2.dnn on one core) on 48x64 colour crops,
2x2 average pool, a 128-d embedding; trained with a cosine-margin head (CosFace, s=20, m=0.25;
a BatchNorm neck on the embedding, folded into the last layer for export) over
the 37 kinds plus "flower/season" and "back" (those two only push other things away from the
kinds; they are never enrolled). ~0.61 M parameters. The learning rate follows a cosine over the
wall-clock budget (``--minutes``), so a slower machine trains fewer steps in the same time.
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
from vision.naming.classifier import TILES  # noqa: E402
from vision.photos.data import DATA, camerash_photos, camerash_split, roboflow_crops  # noqa: E402

W, H = 48, 64
CLASSES = [*TILES, "flower", "back"]
CLS = {c: i for i, c in enumerate(CLASSES)}
OUT = ROOT / "vision" / "models" / "tile_embed.onnx"


# ------------------------------------------------------------------------------------------- network
class TileNet(nn.Module):
    def __init__(self, dim: int = 128) -> None:
        super().__init__()
        chans = [3, 32, 32, 64, 64, 128, 128, 192]
        layers: list[nn.Module] = []
        for i in range(7):
            stride = 2 if i == 0 else 1  # the first layer reads every pixel but keeps a quarter of them
            layers += [nn.Conv2d(chans[i], chans[i + 1], 3, stride=stride, padding=1, bias=False),
                       nn.BatchNorm2d(chans[i + 1]), nn.ReLU(inplace=True)]  # fmt: skip
            if i in (2, 4):
                layers.append(nn.MaxPool2d(2))
        self.features = nn.Sequential(*layers)
        self.pool = nn.AvgPool2d((4, 3))  # 8x6 -> 2x2
        self.fc = nn.Linear(192 * 4, dim)
        # "BN neck": centres the embedding, so no common direction dominates the cosine (without it
        # every crop's embedding pointed nearly the same way after 10 minutes and training crawled)
        self.neck = nn.BatchNorm1d(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.neck(self.fc(torch.flatten(self.pool(self.features(x)), 1)))

    def folded(self) -> nn.Module:
        """The same network in eval mode with the neck folded into the last linear layer (for export)."""
        fc = nn.Linear(self.fc.in_features, self.fc.out_features)
        bn = self.neck
        scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
        with torch.no_grad():
            fc.weight.copy_(self.fc.weight * scale[:, None])
            fc.bias.copy_((self.fc.bias - bn.running_mean) * scale + bn.bias)
        return nn.Sequential(self.features, self.pool, nn.Flatten(1), fc).eval()


class CosFace(nn.Module):
    def __init__(self, dim: int, n: int, s: float = 20.0, m: float = 0.25) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(n, dim) * 0.01)
        self.s, self.m = s, m

    def forward(self, emb: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        cos = F.normalize(emb) @ F.normalize(self.w).T
        logits = self.s * (cos - self.m * F.one_hot(y, cos.shape[1]))
        return F.cross_entropy(logits, y), cos


# ------------------------------------------------------------------------------------------- augmentation
def _jpeg(img: np.ndarray, rng: random.Random) -> np.ndarray:
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, rng.randint(45, 95)])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else img


def _photometric(img: np.ndarray, rng: random.Random, invert_p: float, swap_p: float = 0.3) -> np.ndarray:
    """Light, colour cast, glare, gradient, inversion: what a room and a design change."""
    f = img.astype(np.float32)
    if rng.random() < swap_p:  # channel swap: red ink becomes blue, green becomes red...
        f = f[..., rng.sample([0, 1, 2], 3)]
    if rng.random() < invert_p:
        f = 255.0 - f
    h, w = f.shape[:2]
    f = f * np.array([rng.uniform(0.75, 1.2) for _ in range(3)], np.float32)  # colour cast
    f = f * rng.uniform(0.5, 1.35) + rng.uniform(-30, 30)
    if rng.random() < 0.5:  # light gradient
        gx, gy = rng.uniform(-0.4, 0.4), rng.uniform(-0.4, 0.4)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        f = f * (1 + gx * (xx / w - 0.5) + gy * (yy / h - 0.5))[..., None]
    if rng.random() < 0.35:  # glare: a bright soft spot
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(0.15, 0.6) * w
        f = f + rng.uniform(40, 160) * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r))[..., None]
    return np.clip(f, 0, 255).astype(np.uint8)


def _degrade(img: np.ndarray, rng: random.Random) -> np.ndarray:
    """Resolution (down to 28 px tall), blur, noise, JPEG; returns W x H."""
    th = rng.randint(26, 80)
    small = cv2.resize(img, (max(8, round(th * 0.75)), th), interpolation=cv2.INTER_AREA)
    if rng.random() < 0.5:
        small = cv2.GaussianBlur(small, (0, 0), rng.uniform(0.3, 1.2))
    if rng.random() < 0.5:
        small = np.clip(small + np.random.normal(0, rng.uniform(1, 8), small.shape), 0, 255).astype(np.uint8)
    if rng.random() < 0.7:
        small = _jpeg(small, rng)
    return cv2.resize(small, (W, H), interpolation=cv2.INTER_LINEAR)


def _warp(img: np.ndarray, rng: random.Random, jitter: float, pad_colour: tuple[int, int, int]) -> np.ndarray:
    """Cut the tile out along corners that are off (shift, scale, perspective, small turn) -> 2W x 2H."""
    h, w = img.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    src += np.float32([[rng.uniform(-jitter, jitter) * w, rng.uniform(-jitter, jitter) * h] for _ in range(4)])
    ang = math.radians(rng.uniform(-6, 6))
    c, s = math.cos(ang), math.sin(ang)
    centre = src.mean(axis=0)
    src = (src - centre) @ np.float32([[c, -s], [s, c]]) + centre
    shift = np.float32([rng.uniform(-0.06, 0.06) * w, rng.uniform(-0.06, 0.06) * h])
    src += shift
    dst = np.float32([[0, 0], [2 * W, 0], [2 * W, 2 * H], [0, 2 * H]])
    m = cv2.getPerspectiveTransform(src, dst)
    return cv2.warpPerspective(img, m, (2 * W, 2 * H), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_CONSTANT,
                               borderValue=pad_colour)  # fmt: skip


_SURROUND = [(60, 110, 35), (40, 80, 25), (45, 45, 45), (200, 210, 215), (40, 55, 75), (90, 120, 160), (20, 20, 20)]


def augment_real(img: np.ndarray, rng: random.Random) -> np.ndarray:
    out = _warp(img, rng, 0.05, rng.choice(_SURROUND))
    if rng.random() < 0.5:
        out = cv2.rotate(out, cv2.ROTATE_180)
    out = _photometric(out, rng, invert_p=0.12, swap_p=0.15)
    return _degrade(out, rng)


def _recolour_ink(face: np.ndarray, rng: random.Random) -> np.ndarray:
    """Turn the hue of the coloured ink, change its saturation; black ink and the body stay."""
    hsv = cv2.cvtColor(face, cv2.COLOR_BGR2HSV).astype(np.int32)
    hsv[..., 0] = (hsv[..., 0] + rng.randint(0, 179)) % 180
    hsv[..., 1] = np.clip(hsv[..., 1] * rng.uniform(0.6, 1.3), 0, 255)
    return cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR)


def _stroke(face: np.ndarray, rng: random.Random) -> np.ndarray:
    k = rng.choice([2, 3, 3])  # on faces 256 px tall (load_sources): 1-2 % of the height, as 3-7 px at 800
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    return cv2.erode(face, kernel) if rng.random() < 0.6 else cv2.dilate(face, kernel)


def _body(face: np.ndarray, rng: random.Random) -> np.ndarray:
    """Tint the tile body (ivory, white, yellowish, bluish) by multiplying the light parts."""
    tint = np.array([rng.uniform(0.75, 1.05) for _ in range(3)], np.float32)
    f = face.astype(np.float32)
    light = (f.mean(axis=2, keepdims=True) / 255.0) ** 2
    return np.clip(f * (1 - light + light * tint), 0, 255).astype(np.uint8)


def augment_render(face: np.ndarray, rng: random.Random, invert_ok: bool) -> np.ndarray:
    if rng.random() < 0.4:
        face = _recolour_ink(face, rng)
    if rng.random() < 0.3:
        face = _stroke(face, rng)
    face = _body(face, rng)
    out = _warp(face, rng, 0.06, rng.choice(_SURROUND))
    if rng.random() < 0.5:
        out = cv2.rotate(out, cv2.ROTATE_180)
    out = _photometric(out, rng, invert_p=0.25 if invert_ok else 0.0)
    return _degrade(out, rng)


# ------------------------------------------------------------------------------------------- data
def to_tensor(batch: list[np.ndarray]) -> torch.Tensor:
    x = np.stack(batch).astype(np.float32) / 255.0
    return torch.from_numpy((x - 0.5) / 0.25).permute(0, 3, 1, 2).contiguous()


def _shrink(img: np.ndarray, height: int) -> np.ndarray:
    """At most ``height`` px tall: every copy is cut at 2W x 2H = 96x128 px, so larger sources only cost time."""
    if img.shape[0] <= height:
        return img
    return cv2.resize(img, (max(8, round(img.shape[1] * height / img.shape[0])), height), interpolation=cv2.INTER_AREA)


def load_sources() -> tuple[dict[int, list[np.ndarray]], list[tuple[int, np.ndarray, bool]]]:
    """Real crops by class (sampled class-balanced: no kind is learnt from fewer looks because a
    collection holds fewer of it) and the render faces."""
    real: dict[int, list[np.ndarray]] = {}
    cam_train, _ = camerash_split(camerash_photos())
    for c in [*roboflow_crops("train"), *cam_train]:
        real.setdefault(CLS[c.tile or "flower"], []).append(_shrink(c.image, 2 * H))
    renders: list[tuple[int, np.ndarray, bool]] = []
    drawn = drawn_tile_set()
    fluffy = load_tile_set(DATA / "tiles-fluffystuff")
    for ts, invert_ok in ((drawn, True), (fluffy, False)):
        for t, face in ts.faces.items():
            renders.append((CLS[t], _shrink(face, 4 * H), invert_ok))
        renders.append((CLS["back"], _shrink(ts.back, 4 * H), invert_ok))
    return real, renders


def sample_batch(real: dict[int, list[np.ndarray]], renders: list, n: int, rng: random.Random,
                 real_fraction: float = 0.6) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    imgs, ys = [], []
    classes = sorted(real)
    for _ in range(n):
        r = rng.random()
        if r < real_fraction:
            y = rng.choice(classes)
            img = rng.choice(real[y])
            imgs.append(augment_real(img, rng))
        elif r < real_fraction + (1 - real_fraction) * 0.93:
            y, face, inv = rng.choice(renders)
            imgs.append(augment_render(face, rng, inv))
        else:
            y = CLS["back"]
            imgs.append(augment_render(random_back(rng), rng, True))
        ys.append(y)
    return to_tensor(imgs), torch.tensor(ys)


def evaluate(net: TileNet, head: CosFace, crops: list, limit: int = 3000) -> float:
    net.eval()
    rows = [c for c in crops if c.tile is not None][:limit]
    right = 0
    with torch.no_grad():
        for i in range(0, len(rows), 256):
            part = rows[i : i + 256]
            x = to_tensor([cv2.resize(c.image, (W, H), interpolation=cv2.INTER_AREA) for c in part])
            cos = F.normalize(net(x)) @ F.normalize(head.w).T
            pred = cos.argmax(1).numpy()
            right += sum(CLASSES[p] == c.tile for p, c in zip(pred, part, strict=True))
    net.train()
    return right / max(1, len(rows))


def export(net: TileNet, path: Path) -> None:
    net.eval()
    path.parent.mkdir(parents=True, exist_ok=True)
    model = net.folded()
    with torch.no_grad():
        x = torch.randn(4, 3, H, W)
        assert torch.allclose(model(x), net(x), atol=1e-3), "folding the neck changed the output"
    torch.onnx.export(model, torch.zeros(1, 3, H, W), str(path), input_names=["crop"], output_names=["embedding"],
                      opset_version=13, dynamic_axes={"crop": {0: "n"}, "embedding": {0: "n"}},
                      dynamo=False)  # fmt: skip
    cv2.dnn.readNetFromONNX(str(path))  # the runtime reads it, or this fails here
    net.train()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=55.0, help="wall-clock budget of the training loop")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--real-fraction", type=float, default=0.6, help="share of real crops in a batch")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cv2.setNumThreads(1)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    rng = random.Random(args.seed)
    t0 = time.time()
    real, renders = load_sources()
    valid = roboflow_crops("valid")
    print(f"sources: {sum(map(len, real.values()))} real crops, {len(renders)} render faces; {len(valid)} valid crops "
          f"({time.time() - t0:.0f} s)", flush=True)
    net, head = TileNet(), CosFace(128, len(CLASSES))
    print(f"parameters: {sum(p.numel() for p in net.parameters())}", flush=True)
    opt = torch.optim.AdamW([*net.parameters(), *head.parameters()], lr=args.lr, weight_decay=5e-4)
    budget = args.minutes * 60
    start = time.time()
    step, losses, last_save = 0, [], start
    while (frac := (time.time() - start) / budget) < 1.0:
        lr = args.lr * (min(1.0, frac / 0.03)) * 0.5 * (1 + math.cos(math.pi * frac))
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = sample_batch(real, renders, args.batch, rng, args.real_fraction)
        loss, _ = head(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        step += 1
        if step % 100 == 0:
            print(f"step {step} {100 * frac:.0f} % lr {lr:.5f} loss {np.mean(losses[-100:]):.3f} "
                  f"({(time.time() - start) / step:.2f} s/step)", flush=True)
        if time.time() - last_save > 600:
            print(f"  valid top-1 (head) {100 * evaluate(net, head, valid, 1500):.1f} %", flush=True)
            export(net, args.out)
            last_save = time.time()
    export(net, args.out)
    print(f"done: {step} steps in {(time.time() - start) / 60:.1f} min; valid top-1 (head) "
          f"{100 * evaluate(net, head, valid, 100000):.2f} %; wrote {args.out} "
          f"({args.out.stat().st_size / 1e6:.2f} MB)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
