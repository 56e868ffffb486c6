"""The photo reader's naming on real photos, the finder left out: ``python bench/photo_reader.py [--quick]``

Every photo of the roboflow ``valid`` split (never trained on, never used for the packaged prototypes)
is read by :class:`vision.photos.reader.PhotoReader` with the packaged tile set, its boxes given by the
photo's own labels (:class:`~vision.photos.reader.LabelBoxFinder`): what is measured is the naming of
tiles where they lie, as the reader does it for a photo (crop, turn, both ways up, gates), not the
finder. Labels as corrected by ``vision.photos.data`` (errata, one-label photos left out).

Prints, over the labelled tiles that are riichi tiles: right / wrong / unknown; flowers and seasons
reported unknown; the **hand photos** (``hand_*``) whose labels make a valid riichi hand (a row of 14
tiles read in order, won by ron on the last, through :mod:`tablesvc.photo_hand`), scored exactly: every
tile right and the score equal to the labels' score; ms per photo (median, p95, one core, finder excluded).
Then the same hand photos read whole, the packaged tile finder giving the boxes (where it is installed).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, not bench/, comes first

from tablesvc.photo_hand import LaidTile, hand_from_groups
from tablesvc.scorecard import ScoreRequest, score
from tablesvc.tiles import parse_tiles
from vision.photos.data import ROBOFLOW, ROBOFLOW_ERRATA, one_label_photos, roboflow_names
from vision.photos.reader import LabelBoxFinder, PhotoReader, load_tiles


def labelled(photo: Path) -> list[str | None]:
    """The photo's label per line, corrected by the errata."""
    names = roboflow_names()
    errata = {(p, line): seen for p, line, _, seen in ROBOFLOW_ERRATA}
    label = ROBOFLOW / "labels" / photo.parent.name / (photo.stem + ".txt")
    out = []
    for number, line in enumerate(label.read_text().splitlines()):
        parts = line.split()
        if len(parts) == 5:
            out.append(errata.get((photo.name, number), names[int(parts[0])]))
    return out


def score_of(tiles: list[str | None]) -> tuple[int, int, int] | None:
    """(han, fu, total) of the tiles as one concealed hand won by ron on the last, or None where they make
    none (the hand photos are rows of 14 tiles, the winning tile last, no gap before it)."""
    try:
        hand = hand_from_groups([[LaidTile(t) for t in tiles]], win=tiles[-1])
        return _value(hand.mapping())
    except ValueError:
        return None


def _value(mapping: dict) -> tuple[int, int, int]:
    answer = score(ScoreRequest.from_mapping({**mapping, "rules": "ema2016"}))
    return answer.value.han, answer.value.fu, answer.settlement.deltas[answer.winner]


def with_finder(classifier, hands: list[Path], labels: dict[str, list[str | None]], repeat: int) -> None:
    """The hand photos read whole, as ``tablesvc score --photo PHOTO --win TILE`` reads them: the tile finder
    gives the boxes, the reader names them, :func:`tablesvc.photo_hand.laid_hand` makes the hand (the
    winning tile named: the labels' last, as the photos set none apart). Exact when the hand holds the
    labelled 14 tiles and scores as the labels do; also counted, the stricter match of the labelled boxes
    (each of the 14 found with IoU >= 0.5 and named right)."""
    from tablesvc.photo_hand import laid_hand
    from vision.photos.finder import match_boxes
    from vision.photos.reader import FinderMissing, load_finder

    try:
        finder = load_finder()
    except FinderMissing as exc:
        print(f"with the finder        not measured: {exc}")
        return
    exact = valid = boxed = beyond = 0
    ms: list[float] = []
    misses: list[str] = []
    for photo in hands:
        image = cv2.imread(str(photo), cv2.IMREAD_COLOR)
        boxes = [b.box for b in LabelBoxFinder.for_photo(photo).find(image)]
        names = labels[photo.name]
        order = sorted(range(len(boxes)), key=lambda i: (boxes[i][0] + boxes[i][2]) / 2)
        want = [names[i] for i in order]
        expected = score_of(want)
        if expected is None:
            continue
        valid += 1
        reader = PhotoReader(finder, classifier)
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            reading = reader.read(image, str(photo))
            times.append((time.perf_counter() - start) * 1000)
        ms.append(min(times))
        groups = [[LaidTile(reading.tiles[k].tile, reading.tiles[k].face_up) for k in g] for g in reading.groups]
        try:
            hand = laid_hand(groups, want[-1])
            got = _value(hand.mapping())
            in_melds = [str(t) for m in hand.melds for t in parse_tiles(m.split(":")[1])]
            tiles = sorted(t.rstrip("r") for t in hand.concealed + in_melds)
            ok = got == expected and tiles == sorted(t for t in want if t)
        except ValueError as exc:
            ok, got = False, str(exc)
        exact += ok
        beyond += ok and len(reading.tiles) > len(boxes)
        if not ok:
            misses.append(f"{photo.name[:8]} ({reading.text()}: {got})")
        match = match_boxes(boxes, [t.box for t in reading.tiles])
        read = [t.tile.rstrip("r") if t.tile else None for t in reading.tiles]
        by_box = {a: read[b] for a, b in match.pairs}
        boxed += len(by_box) == len(boxes) and all(by_box[i] == names[i] for i in range(len(boxes)))
    print(f"with the finder        {exact} of {valid} valid hands scored exactly, as `score --photo` reads them ("
          f"{beyond} of them with more tiles found than the hand's 14, left out as the command does); {boxed} of "
          f"{valid} with every labelled box found (IoU >= 0.5) and named right; ms per photo, finder and reader "
          f"together, median {statistics.median(ms):.1f}")
    for miss in misses:
        print(f"  not exact: {miss}")


def twelve_megapixels(classifier, photos: list[Path], runs: int = 5) -> list[float]:
    """ms to decode a 4000x3000 JPEG of a hand photo (at half size, as the commands and /score do) and
    read its 14 tiles."""
    from vision.photos.input import decode_photo, photo_scale
    from vision.photos.reader import READ_SIDE

    path = next(p for p in photos if p.name.startswith("hand_005"))
    big = cv2.resize(cv2.imread(str(path)), (4000, 3000), interpolation=cv2.INTER_CUBIC)
    data = cv2.imencode(".jpg", big, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()
    reader = PhotoReader(LabelBoxFinder.for_photo(path), classifier)
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        image = decode_photo(data, keep_side=READ_SIDE)  # as the commands and the page decode it
        reader.read(image, scale=photo_scale(data, image))
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the first 40 photos and every hand photo")
    ap.add_argument("--model", help="a club's saved tile set instead of the packaged one")
    ap.add_argument("--repeat", type=int, default=1,
                    help="read each photo this many times and keep its fastest (past other jobs on a shared machine)")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    if not ROBOFLOW.is_dir():
        print(f"no photos: {ROBOFLOW} is missing")
        return 1
    photos = sorted((ROBOFLOW / "images" / "valid").iterdir())
    labels = {p.name: labelled(p) for p in photos}
    failed = one_label_photos(labels)
    photos = [p for p in photos if p.name not in failed]
    if args.quick:
        photos = photos[:40] + [p for p in photos[40:] if p.name.startswith("hand_")]
    classifier = load_tiles(args.model)
    right = wrong = unknown = flowers = flowers_unknown = 0
    hands = hands_exact = 0
    ms: list[float] = []
    confusions: dict[tuple[str, str], int] = {}
    for photo in photos:
        image = cv2.imread(str(photo), cv2.IMREAD_COLOR)
        finder = LabelBoxFinder.for_photo(photo)
        truth = dict(zip((b.box for b in finder.find(image)), labels[photo.name], strict=True))
        reader = PhotoReader(finder, classifier)
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            reading = reader.read(image, str(photo))
            times.append((time.perf_counter() - start) * 1000)
        ms.append(min(times))
        for t in reading.tiles:
            want = truth[t.box]
            if want is None:
                flowers += 1
                flowers_unknown += t.tile is None
            elif t.tile is None:
                unknown += 1
            elif t.tile.rstrip("r") == want:  # the labels have no red fives
                right += 1
            else:
                wrong += 1
                confusions[want, t.tile] = confusions.get((want, t.tile), 0) + 1
        if photo.name.startswith("hand_"):
            expected = score_of([truth[t.box] for t in reading.tiles])
            if expected is None:
                continue
            hands += 1
            read = [t.tile.rstrip("r") if t.tile else None for t in reading.tiles]
            all_right = all(truth[t.box] == name for t, name in zip(reading.tiles, read, strict=True))
            hands_exact += all_right and score_of(read) == expected
    known = max(1, right + wrong + unknown)
    print(f"photos                 {len(photos)} of roboflow valid (labelled boxes as the finder)")
    print(f"tiles                  {right + wrong + unknown}: right {100 * right / known:.2f} %, wrong "
          f"{100 * wrong / known:.2f} %, unknown {100 * unknown / known:.2f} %")
    worst = ", ".join(f"{a}->{b} x{n}" for (a, b), n in sorted(confusions.items(), key=lambda kv: -kv[1])[:5])
    print(f"worst                  {worst or '-'}")
    print(f"flowers and seasons    {flowers_unknown} of {flowers} unknown")
    print(f"hand photos            {hands_exact} of {hands} valid hands scored exactly")
    fastest = f", the fastest of {args.repeat} reads each" if args.repeat > 1 else ""
    print(f"ms per photo           median {statistics.median(ms):.1f}, p95 {float(np.percentile(ms, 95)):.1f} "
          f"(finder excluded, one core{fastest})")
    with_finder(classifier, [p for p in photos if p.name.startswith("hand_")], labels, args.repeat)
    big = twelve_megapixels(classifier, photos, max(5, args.repeat))
    print(f"12 MP photo            fastest {min(big):.1f} ms, median {statistics.median(big):.1f} of {len(big)} "
          "(JPEG decoded and read, 14 tiles, finder excluded)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
