"""The photo reader's sections of ``bench/hands.py``: held-out photos per source, clutter, taps to score, and
``mahjong-detector`` beside it where installed.

- **held out** (``photos_held_out``): every roboflow ``valid`` photo (none trained on, none made a prototype)
  read whole (the packaged finder, the packaged tile set, the rule that drops boxes on no tile), grouped by who
  took it as the names tell (``IMG_*`` one phone, ``hand_*`` hands on racks, ``Screenshot*`` screenshots, many
  squeezed; the numbered photos of a social network). The ``train`` split holds photos of the same sources: a
  source here is a view held out, not a tile set never seen (the only sets never seen are
  ``training/calibrate_sure.py``'s Unicode artworks). Per source: tiles found (IoU >= 0.5, as
  ``bench/photos.py``), named right / wrong / unknown (a name not sure counts as named by its best guess), wrong
  among the names shown sure, extra boxes per photo (boxes on the tiles a photo leaves unlabelled apart), photos
  read exactly (every labelled tile found and named right, every flower unknown, no extra box);
- **clutter** (``clutter``): scikit-image's photos with no tile that no finder trained on
  (``training/clutter.py`` ``MEASURE``), each whole and three views cut, scaled, turned or squeezed: the
  finder's boxes, and the reader's after dropping boxes on no tile, per 20 photos;
- **taps** (``taps_to_score``): the hand photos whose labels make a riichi hand, read whole, and the taps the
  ``/score`` page needs to score each right (the page's rules: picking the hand's row on a photo of more than a
  hand, 2 per tile to change, add or remove, 2 to name the winning tile when it is not the one the page assumes,
  1 for Score; a tile not sure whose best guess is right needs none);
- **mahjong-detector** (``detector``): the same photos per source, where its environment is installed
  (``bench/photos.py`` says how).

``--quick``: 3 photos per source, 4 clutter views, 2 hands.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, not bench/, comes first
ROOT = Path(__file__).resolve().parents[1]

from bench.photos import DETECTOR_PYTHON, Photo, Score, load_folder, run_detector  # noqa: E402
from vision.photos.data import ROBOFLOW, roboflow_names  # noqa: E402
from vision.photos.finder import match_boxes  # noqa: E402

SOURCES = ("IMG", "hand", "Screenshot", "numbered")


def source(photo: Path) -> str:
    """Who took a roboflow photo, as its name tells."""
    for prefix in ("IMG_", "hand_", "Screenshot"):
        if photo.name.startswith(prefix):
            return prefix.rstrip("_")
    return "numbered"


@lru_cache(maxsize=1)
def _named_valid_photos() -> tuple[Photo, ...]:
    """Every roboflow ``valid`` photo whose names are trusted, loaded once: the sections each take theirs from it
    (loading decodes every photo of the folder for its size)."""
    return tuple(p for p in load_folder(ROBOFLOW / "images" / "valid", ROBOFLOW / "labels" / "valid",
                                        roboflow_names(), errata=True) if p.named)  # fmt: skip


def valid_photos(quick: bool) -> list[Photo]:
    photos = list(_named_valid_photos())
    if quick:
        photos = [p for s in SOURCES for p in [q for q in photos if source(q.path) == s][:3]]
    return photos


@dataclass
class Held:
    """One source's figures."""

    score: Score = field(default_factory=lambda: Score(named=True))
    photos: int = 0
    exact: int = 0
    sure: int = 0
    sure_wrong: int = 0
    ms: list[float] = field(default_factory=list)


def _plain(tile: str | None) -> str | None:
    return tile[:2] if tile and len(tile) == 3 and tile.endswith("r") else tile


#: each photo's reading by the packaged reader, as the held-out section read it: the taps section counts taps on
#: the hand photos among them from the same reading (the reader is a function of the photo)
_READ: dict[Path, object] = {}


def read_held_out(photos: list[Photo], reader) -> dict[str, Held]:
    out = {s: Held() for s in SOURCES}
    for p in photos:
        img = cv2.imread(str(p.path), cv2.IMREAD_COLOR)
        start = time.perf_counter()
        reading = _READ[p.path] = reader.read(img, str(p.path))
        held = out[source(p.path)]
        held.ms.append((time.perf_counter() - start) * 1000)
        tiles = list(reading.tiles)
        boxes, faces, names = [t.box for t in tiles], [t.face_up for t in tiles], [t.tile for t in tiles]
        one = Score(named=True)
        one.add(p, boxes, faces, names)
        for key in ("tiles", "named_tiles", "found", "right", "wrong", "unknown", "extra", "backs", "unlabelled"):
            setattr(held.score, key, getattr(held.score, key) + getattr(one, key))
        flowers = [k for k, n in enumerate(p.names) if n is None]
        m = match_boxes(p.boxes, boxes)
        flower_named = any(names[b] is not None for a, b in m.pairs if a in flowers)
        held.photos += 1
        held.exact += one.found == one.tiles and one.right == one.tiles and one.extra == 0 and not flower_named
        for a, b in m.pairs:
            if p.names[a] is not None and tiles[b].sure:
                held.sure += 1
                held.sure_wrong += _plain(tiles[b].tile) != p.names[a]
    return out


def _pct(a: int, b: int) -> str:
    return f"{100 * a / max(1, b):5.1f} %"


def photos_held_out(args: argparse.Namespace) -> None:
    from vision.photos.reader import FinderMissing, PhotoReader

    try:
        reader = PhotoReader.load()
    except FinderMissing as exc:
        print(f"photos held out        not measured: {exc}")
        return
    photos = valid_photos(args.quick)
    held = read_held_out(photos, reader)
    print("\nphotos never trained on (roboflow valid, the packaged finder and tile set), per source held out")
    print(f"{'source':<11} {'photos':>6} {'tiles':>6} {'found':>8} {'right':>8} {'wrong':>8} {'unknown':>8} "
          f"{'sure wrong':>11} {'extra/photo':>11} {'exact':>9} {'ms median':>9}")
    total = Held()
    for name in SOURCES:
        h = held[name]
        s = h.score
        if not h.photos:
            continue
        print(f"{name:<11} {h.photos:>6} {s.tiles:>6} {_pct(s.found, s.tiles):>8} {_pct(s.right, s.tiles):>8} "
              f"{_pct(s.wrong, s.tiles):>8} {_pct(s.unknown, s.tiles):>8} {_pct(h.sure_wrong, h.sure):>11} "
              f"{s.extra / h.photos:>11.2f} {h.exact:>4} of {h.photos:<3} {statistics.median(h.ms):>9.0f}")
        for key in ("tiles", "found", "right", "wrong", "unknown", "extra"):
            setattr(total.score, key, getattr(total.score, key) + getattr(s, key))
        total.photos += h.photos
        total.exact += h.exact
        total.sure += h.sure
        total.sure_wrong += h.sure_wrong
        total.ms += h.ms
    s = total.score
    print(f"{'all':<11} {total.photos:>6} {s.tiles:>6} {_pct(s.found, s.tiles):>8} {_pct(s.right, s.tiles):>8} "
          f"{_pct(s.wrong, s.tiles):>8} {_pct(s.unknown, s.tiles):>8} {_pct(total.sure_wrong, total.sure):>11} "
          f"{s.extra / max(1, total.photos):>11.2f} {total.exact:>4} of {total.photos:<3} "
          f"{statistics.median(total.ms):>9.0f}")
    print(f"  shown sure: {total.sure} of {s.found} tiles found ({_pct(total.sure, s.found).strip()}), "
          f"{total.sure_wrong} of them wrong")


def clutter(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(ROOT / "training"))
    from clutter import clutter_photos, clutter_views

    from vision.photos.reader import FinderMissing, PhotoReader

    try:
        views = clutter_views(clutter_photos("measure"))
        reader = PhotoReader.load()
    except (ImportError, FinderMissing) as exc:
        print(f"clutter photos         not measured: {exc}")
        return
    if args.quick:
        views = views[:4]
    finder = boxes = named = sure = 0
    for name, img in views:
        found = reader.finder.find(img)
        finder += sum(f.score >= reader.min_score for f in found)
        reading = reader.read(img, name)
        boxes += len(reading.tiles)
        named += sum(t.tile is not None for t in reading.tiles)
        sure += sum(t.sure for t in reading.tiles)
    n = len(views)
    print(f"\nclutter photos with no tile (scikit-image, never trained on: {n} views of "
          f"{len({v.split('#')[0] for v, _ in views})} photos)")
    print(f"  finder's boxes         {finder} ({20 * finder / n:.1f} per 20 photos)")
    print(f"  reader's boxes kept    {boxes} ({20 * boxes / n:.1f} per 20 photos; target 1), {named} of them named, "
          f"{sure} shown sure")


@dataclass
class Taps:
    photo: str
    taps: int
    why: list[str]


def taps_for(reading, photo: Photo) -> Taps:
    """The taps the page needs to score ``photo``'s hand from ``reading`` (module docstring)."""
    why: list[str] = []
    taps = 1  # Score
    tiles = list(reading.tiles)
    rows = {g: reading.rows[k] for k, grp in enumerate(reading.groups) for g in grp}
    in_rows: dict[int, int] = {}
    for r in rows.values():
        in_rows[r] = in_rows.get(r, 0) + 1
    keep = set(range(len(tiles)))
    m = match_boxes(photo.boxes, [t.box for t in tiles])
    if len(tiles) > 18 or sum(n >= 3 for n in in_rows.values()) > 1:
        taps += 1
        why.append("picked the hand's row")
        hand_rows = [rows[b] for _, b in m.pairs]
        row = max(set(hand_rows), key=hand_rows.count) if hand_rows else 0
        keep = {k for k in keep if rows[k] == row}
    matched = {b: a for a, b in m.pairs if b in keep}
    for a, b in m.pairs:
        if b not in keep:
            taps += 2
            why.append(f"added {photo.names[a]} (outside the row)")
    for a in set(range(len(photo.names))) - {a for a, _ in m.pairs}:
        taps += 2
        why.append(f"added {photo.names[a]} (missed)")
    for b in sorted(keep):
        t = tiles[b]
        if b not in matched:
            taps += 2
            why.append(f"removed {t.tile or '?'} (no tile of the hand)")
        elif not t.face_up or _plain(t.tile) != photo.names[matched[b]]:
            taps += 2
            why.append(f"{t.tile or '?'} -> {photo.names[matched[b]]}")
    # the winning tile: the labels' rightmost; the page assumes the tile laid apart, else the row's last
    order = sorted(range(len(photo.names)), key=lambda a: photo.boxes[a][0] + photo.boxes[a][2])
    win = photo.names[order[-1]]
    kept = [b for g in reading.groups for b in g if b in keep]
    last = next((b for b in reversed(kept) if b in matched), None)
    if last is None or photo.names[matched[last]] != win:
        taps += 2
        why.append(f"named the winning tile {win}")
    return Taps(photo.path.name, taps, why)


def taps_to_score(args: argparse.Namespace) -> None:
    from bench.photo_reader import score_of
    from vision.photos.reader import FinderMissing, PhotoReader

    try:
        reader = PhotoReader.load()
    except FinderMissing as exc:
        print(f"taps to score          not measured: {exc}")
        return
    hands = []
    for p in valid_photos(False):
        if not p.path.name.startswith("hand_"):
            continue
        order = sorted(range(len(p.names)), key=lambda a: p.boxes[a][0] + p.boxes[a][2])
        if score_of([p.names[a] for a in order]) is not None:
            hands.append(p)
    if args.quick:
        hands = hands[:2]
    counted = []
    for p in hands:
        if p.path in _READ:
            reading = _READ[p.path]
        else:
            reading = reader.read(cv2.imread(str(p.path), cv2.IMREAD_COLOR), str(p.path))
        counted.append(taps_for(reading, p))
    taps = [c.taps for c in counted]
    print(f"\ntaps to score a hand on /score ({len(hands)} hand photos of roboflow valid whose labels make a riichi "
          "hand, read whole)")
    print(f"  taps: median {statistics.median(taps):g}, most {max(taps)}, each {taps} (target: median <= 2)")
    for c in counted:
        if c.why:
            print(f"  {c.photo[:8]}: {c.taps} ({'; '.join(c.why)})")


def detector(args: argparse.Namespace) -> None:
    photos = valid_photos(args.quick)
    theirs = run_detector(photos, DETECTOR_PYTHON, 0)
    if isinstance(theirs, str):
        print(f"\nmahjong-detector        {theirs}")
        return
    print("\nmahjong-detector 0.0.6 on the same photos: found / right / wrong "
          f"{_pct(theirs.found, theirs.tiles)} / {_pct(theirs.right, theirs.tiles)} / "
          f"{_pct(theirs.wrong, theirs.tiles)}, extra {theirs.extra / max(1, len(photos)):.2f} per photo")


#: the sections ``bench/hands.py`` runs after the seat cameras'
SECTIONS = [photos_held_out, clutter, taps_to_score, detector]
