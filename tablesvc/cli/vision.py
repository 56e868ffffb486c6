"""``tablesvc vision``: print the calibration markers, calibrate a camera, enroll a tile set, check an image;
the same for a seat camera (its cards, its strip, its set); read the tiles in photos."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("vision", help="camera set-up (markers, calibration, enrollment, check); read photos",
                       description="Set up the camera over a table: print the four ArUco markers for the table "
                       "corners, calibrate the camera from a frame in which all four are visible, enroll your "
                       "tile set from the camera, and check what it reads. Set up a seat camera the same way "
                       "(seat-cards, seat-calibrate, seat-enroll). Or read the tiles in any photo "
                       "(read: no markers needed).")
    vsub = p.add_subparsers(dest="vision_command", metavar="ACTION", required=True)
    m = vsub.add_parser("markers", help="write the marker sheet (print it at 100 %% scale)")
    m.add_argument("out", metavar="OUT.png")
    m.add_argument("--dpi", type=float, default=300.0, help="print resolution (default: %(default)s)")
    m.add_argument("--geometry", metavar="FILE", help="table geometry TOML (default: a standard automatic table)")
    m.set_defaults(run=run_markers)
    c = vsub.add_parser("calibrate", help="find the markers and save the calibration")
    c.add_argument("--camera", required=True, metavar="SOURCE",
                   help="an image file, a video file, a device index (0) or an rtsp:// / http:// URL")
    c.add_argument("--out", default="calibration.json", metavar="FILE", help="where to save (default: %(default)s)")
    c.add_argument("--geometry", metavar="FILE", help="table geometry TOML (default: a standard automatic table)")
    c.set_defaults(run=run_calibrate)
    e = vsub.add_parser("enroll", help="enroll the club's tile set from its camera; save the model",
                        description="Enroll your tile set from the camera over your table: lay the tiles face up "
                        "as hands (seat 0 / East: 1m..9m then 1p..9p; seat 1 / South: 1s..9s then E S W N P F C; "
                        "seat 2 / West: 5mr 5pr 5sr, if your set has red fives), each row left to right as that "
                        "seat sees it, then run this. Give --camera several times (frames with the tiles turned "
                        "or the light moved) or add frames later with --add: every frame adds to one model. "
                        "Prints per kind how well it stands apart and which kinds need more frames. The model "
                        "goes to [camera] model.")
    e.add_argument("--camera", required=True, metavar="SOURCE", action="append",
                   help="an image file, a video file, a device index (0) or an rtsp:// / http:// URL; "
                   "repeat for several frames")
    e.add_argument("--calibration", metavar="FILE", help="a saved calibration (default: calibrate from the frame)")
    e.add_argument("--out", default="tiles.npz", metavar="FILE", help="where to save (default: %(default)s)")
    e.add_argument("--add", action="store_true", help="add the frames to the model already in --out")
    e.add_argument("--method", choices=("embedding", "lda"), default="embedding",
                   help="embedding (default): the learnt tile embedding, a prototype per frame and kind, its "
                   "rejection calibrated on your frames (98-99 %% right on real photos where lda reads 23-47 %%); "
                   "lda: the hand-made features with a discriminant metric (exact on rendered frames and ten times "
                   "cheaper per new tile: a table seen for the first time is read in ~40 ms instead of ~0.3 s); "
                   "see docs/vision.md")
    e.add_argument("--geometry", metavar="FILE", help="table geometry TOML (default: a standard automatic table)")
    e.set_defaults(run=run_enroll)
    k = vsub.add_parser("check", help="read an image: annotated copy and what lies in each zone",
                        description="Read one image of the table: write an annotated copy (tile boxes, names, "
                        "zones) and print what lies in each zone. Enroll your tile set with --tiles (or a saved "
                        "--model); without either, the project's own drawn tiles are used.")
    k.add_argument("image", metavar="IMAGE")
    k.add_argument("--calibration", metavar="FILE", help="a saved calibration (default: calibrate from IMAGE)")
    which = k.add_mutually_exclusive_group()
    which.add_argument("--tiles", metavar="DIR", help="a directory of tile images named 1m.png .. 5mr.png, E.png ..")
    which.add_argument("--model", metavar="FILE", help="a saved classifier (.npz)")
    k.add_argument("--out", metavar="FILE", help="the annotated copy (default: IMAGE-check.png)")
    k.add_argument("--geometry", metavar="FILE", help="table geometry TOML (default: a standard automatic table)")
    k.set_defaults(run=run_check)
    _seat_parsers(vsub)
    r = vsub.add_parser("read", help="read the tiles in photos (no markers, no calibration)",
                        description="Read every tile in real photos of tiles (a hand, melds, a pond; taken with "
                        "a phone, no markers): the tiles in reading order (rows top to bottom, each left to right, "
                        "groups set apart by gaps), each with its box in pixels of the photo and how sure the "
                        "reader is; a tile it is not sure of is unknown (?), never guessed; flowers, seasons and "
                        "backs are unknown. Common Japanese sets need no enrollment; give a club's enrolled set "
                        "with --model.",
                        epilog="--json prints one object per photo and line: {\"photo\": PATH, \"tiles\": "
                        "[{\"tile\": \"5mr\" or null, \"box\": [x0, y0, x1, y1], \"confidence\": 0.97, "
                        "\"face_up\": true}, ...]} ({\"photo\": PATH, \"error\": ...} for a photo that cannot be "
                        "read). Exit status: 0 every photo read, 1 a photo could not be read or shows no tile "
                        "face up, 2 bad command line, 3 the tile finder is not installed.")
    r.add_argument("photos", metavar="PHOTO", nargs="+", help="JPEG, PNG or WebP photos (up to 20 MB, 40 megapixels)")
    r.add_argument("--json", action="store_true", help="one JSON object per photo and line")
    r.add_argument("--annotated", metavar="OUT.png",
                   help="write a copy with each tile's box and name (several photos: OUT-<photo>.png); a photo "
                   "over 3200 px is read, and drawn, at half size or less")
    _photo_options(r)
    r.set_defaults(run=run_read)


def _seat_parsers(vsub: argparse._SubParsersAction) -> None:
    """``seat-cards``, ``seat-calibrate`` and ``seat-enroll``: a seat camera ([[camera]] kind = "hand")."""
    cards = vsub.add_parser("seat-cards", help="write the two seat camera calibration cards (print at 100 %%)",
                            description="Write the two cards a seat camera is calibrated with: each the size of a "
                            "tile's face (26 x 35 mm) with an ArUco marker (ids 10 and 11). Print at 100 % scale, "
                            "glue each on a stiff card cut to its frame.")
    cards.add_argument("out", metavar="OUT.png")
    cards.add_argument("--dpi", type=float, default=300.0, help="print resolution (default: %(default)s)")
    cards.set_defaults(run=run_seat_cards)
    cal = vsub.add_parser("seat-calibrate", help="find the row's strip in a seat camera's frame and save it",
                          description="Calibrate a seat camera: stand the two cards (seat-cards) upright where the "
                          "player's row stands, faces to the camera, the left card as the row's first tile and the "
                          "right card as its fifteenth (14 tiles' width between them), and run this with the camera "
                          "as it will stay. Or give the strip's four corners yourself with --corners. Writes the "
                          "strip ([[camera]] calibration) and an annotated frame to check: the strip drawn in, cut "
                          "into its 15 tile places, should frame the row's tiles.")
    cal.add_argument("--camera", required=True, metavar="SOURCE",
                     help="an image file, a video file, a device index (0) or an rtsp:// / http:// URL")
    cal.add_argument("--out", default="seat.json", metavar="FILE", help="where to save (default: %(default)s)")
    cal.add_argument("--corners", metavar="X,Y", nargs=4,
                     help="the strip's corners in the frame's pixels instead of the cards: top-left, top-right, "
                     "bottom-right, bottom-left of a strip 15 tiles long and one tile high standing where the "
                     "row's faces stand, e.g. --corners 30,210 610,205 612,262 28,268")
    cal.add_argument("--annotated", metavar="OUT.png",
                     help="the annotated frame (default: the --out file's name with -check.png)")
    cal.set_defaults(run=run_seat_calibrate)
    enr = vsub.add_parser("seat-enroll", help="enroll the club's set from a seat camera; save the model",
                          description="Enroll your tile set from the seat camera itself: stand the 37 kinds as "
                          "three rows where the player's row stands, left to right: 1m..9m 1p..4p; then 5p..9p "
                          "1s..8s; then 9s E S W N P F C 5mr 5pr 5sr (without red fives: --no-red, the third row "
                          "ends at C). Give one --camera frame per row, in that order; more frames (the rows again, "
                          "tilted back a little, the light moved) make the set surer. The model goes to "
                          "[[camera]] model. Each frame is checked against the packaged tile sets: a frame that "
                          "clearly shows another row (rows swapped, a row right to left or one place on) is "
                          "refused, saying which; one they can confirm too little of (a set unlike the common "
                          "Japanese ones) is enrolled with a warning.")
    enr.add_argument("--camera", required=True, metavar="SOURCE", action="append",
                     help="one frame per row, in the rows' order (repeat the three rows for more looks): an "
                     "image file, a video file, a device index or a URL")
    enr.add_argument("--calibration", required=True, metavar="FILE", help="the strip (seat-calibrate)")
    enr.add_argument("--no-red", action="store_true", help="the set has no red fives")
    enr.add_argument("--out", default="seat.npz", metavar="FILE", help="where to save (default: %(default)s)")
    enr.set_defaults(run=run_seat_enroll)


def run_seat_cards(args: argparse.Namespace) -> int:
    import cv2
    import numpy as np

    from vision.seat.calibration import CARD_IDS, seat_card

    px_per_mm = args.dpi / 25.4
    gap = round(15 * px_per_mm)
    faces = [np.pad(seat_card(i, px_per_mm), 2, constant_values=0) for i in CARD_IDS]  # a thin frame to cut along
    label = round(12 * px_per_mm)
    h = max(f.shape[0] for f in faces) + 2 * gap + label
    sheet = np.full((h, sum(f.shape[1] for f in faces) + 3 * gap), 255, np.uint8)
    x = gap
    for face, name in zip(faces, ("left: the row's first tile", "right: its fifteenth"), strict=True):
        sheet[gap : gap + face.shape[0], x : x + face.shape[1]] = face
        cv2.putText(sheet, name, (x, gap + face.shape[0] + label // 2), cv2.FONT_HERSHEY_SIMPLEX,
                    px_per_mm * 0.06, 0, max(1, round(px_per_mm * 0.1)), cv2.LINE_AA)
        x += face.shape[1] + gap
    if not cv2.imwrite(args.out, sheet):
        print(f"tablesvc vision seat-cards: cannot write {args.out}", file=sys.stderr)
        return 1
    print(f"{args.out}: two cards of 26 x 35 mm at {args.dpi:g} dpi; print at 100 % and stand them where the row "
          "stands, then run 'tablesvc vision seat-calibrate'")
    return 0


def run_seat_calibrate(args: argparse.Namespace) -> int:
    import cv2
    import numpy as np

    from vision.seat.calibration import STRIP_MM, TILE_W_MM, SeatCalibration, SeatCalibrationError, calibrate_seat

    frame = _frame(args)
    if frame is None:
        return 1
    size = (frame.shape[1], frame.shape[0])
    try:
        if args.corners:
            try:
                quad = np.array([[float(v) for v in c.split(",")] for c in args.corners])
            except ValueError:
                raise SeatCalibrationError("--corners takes four X,Y pixel pairs, e.g. 30,210") from None
            calibration, how = SeatCalibration.of(quad, STRIP_MM, size), "from the corners given"
        else:
            calibration, error = calibrate_seat(frame)
            how = f"from the cards, marker error {error:.2f} mm"
    except SeatCalibrationError as exc:
        print(f"tablesvc vision seat-calibrate: {exc}", file=sys.stderr)
        return 1
    calibration.save(args.out)
    quad = calibration.quad_for(size)
    annotated = frame.copy()
    cv2.polylines(annotated, [np.round(quad).astype(np.int32)], True, (0, 200, 255), 2, cv2.LINE_AA)
    places = round(calibration.strip_mm / TILE_W_MM)
    for k in range(1, places):
        f = k / places
        top, bottom = quad[0] + f * (quad[1] - quad[0]), quad[3] + f * (quad[2] - quad[3])
        cv2.line(annotated, tuple(np.round(top).astype(int)), tuple(np.round(bottom).astype(int)), (0, 200, 255), 1,
                 cv2.LINE_AA)
    out = args.annotated or str(Path(args.out).with_name(Path(args.out).stem + "-check.png"))
    if not cv2.imwrite(out, annotated):
        print(f"tablesvc vision seat-calibrate: cannot write {out}", file=sys.stderr)
        return 1
    print(f"{args.out}: the row's strip {how}, in a {size[0]}x{size[1]} frame; check it on {out} (the strip cut "
          f"into its {places} tile places should frame the row)")
    return 0


def run_seat_enroll(args: argparse.Namespace) -> int:
    from vision.naming.embedding import EmbeddingClassifier
    from vision.naming.enrollment import separability
    from vision.seat.calibration import SeatCalibration, SeatCalibrationError
    from vision.seat.reader import ENROLL_ROWS, enroll_from_rows

    rows = list(ENROLL_ROWS)
    if args.no_red:
        rows[2] = tuple(t for t in rows[2] if not t.endswith("r"))
    frames = []
    for n, source in enumerate(args.camera):
        frame = _grab(source)
        if frame is None:
            print(f"tablesvc vision seat-enroll: no frame from {source}", file=sys.stderr)
            return 1
        frames.append((frame, list(rows[n % len(rows)])))
    try:
        calibration = SeatCalibration.load(args.calibration)
        classifier = EmbeddingClassifier(half_turn=False)  # a standing tile is never upside down
        got = enroll_from_rows(classifier, calibration, frames,
                               warn=lambda m: print(f"tablesvc vision seat-enroll: warning: {m}", file=sys.stderr))
        classifier.save(args.out)
    except (SeatCalibrationError, OSError, ValueError) as exc:
        print(f"tablesvc vision seat-enroll: {exc}", file=sys.stderr)
        return 1
    missing = [t for row in rows for t in row if t not in got]
    print(f"{args.out}: {len(got)} kinds enrolled from {len(frames)} frame(s)"
          + (f"; not yet shown: {' '.join(missing)} (add the rows that hold them)" if missing else ""))
    weak = [r.tile for r in separability(classifier) if r.needs_more]
    print(f"kinds that need more frames: {' '.join(weak)}" if weak else "every kind stands apart")
    return 0


def _geometry(path: str | None):
    from vision.table.geometry import load_geometry

    return load_geometry(path)


def run_markers(args: argparse.Namespace) -> int:
    import cv2

    from vision.table.calibration import marker_sheet

    try:
        sheet = marker_sheet(_geometry(args.geometry), dpi=args.dpi)
    except (OSError, ValueError) as exc:
        print(f"tablesvc vision markers: {exc}", file=sys.stderr)
        return 1
    if not cv2.imwrite(args.out, sheet):
        print(f"tablesvc vision markers: cannot write {args.out}", file=sys.stderr)
        return 1
    print(f"{args.out}: {sheet.shape[1]}x{sheet.shape[0]} px at {args.dpi:g} dpi; print at 100 % and put marker k "
          "at seat k's right-hand corner (0 = East)")
    return 0


def _grab(source: str):
    import cv2

    path = Path(source)
    if path.suffix.lower() in (".png", ".jpg", ".jpeg", ".bmp") and path.exists():
        return cv2.imread(str(path))
    capture = cv2.VideoCapture(int(source) if source.isdigit() else source)
    try:
        ok, frame = capture.read()
        return frame if ok else None
    finally:
        capture.release()


def _frame(args: argparse.Namespace):
    """One frame from ``--camera``, or None after saying so (as the command that asked)."""
    frame = _grab(args.camera)
    if frame is None:
        print(f"tablesvc vision {args.vision_command}: no frame from {args.camera}", file=sys.stderr)
    return frame


def run_calibrate(args: argparse.Namespace) -> int:
    from vision.table.calibration import CalibrationError, calibrate

    frame = _frame(args)
    if frame is None:
        return 1
    try:
        calibration = calibrate(frame, _geometry(args.geometry))
    except CalibrationError as exc:
        print(f"tablesvc vision calibrate: {exc}", file=sys.stderr)
        return 1
    calibration.save(args.out)
    print(f"{args.out}: calibrated, marker error {calibration.error_mm:.2f} mm over a "
          f"{frame.shape[1]}x{frame.shape[0]} frame")
    return 0


def _classifier(args: argparse.Namespace):
    from vision.naming.classifier import TileClassifier

    if args.model or args.tiles:
        return TileClassifier.from_files(args.model, args.tiles)
    from hardware_sims.tile_art import drawn_tile_set  # the project's own drawing, for a first look

    classifier = TileClassifier()
    classifier.enroll(drawn_tile_set().faces)
    return classifier


def run_enroll(args: argparse.Namespace) -> int:
    from vision.naming.classifier import TileClassifier
    from vision.naming.embedding import EmbeddingClassifier
    from vision.naming.enrollment import EnrollmentError, enroll_from_frames, separability
    from vision.table.calibration import Calibration, CalibrationError, calibrate

    frames = []
    for source in args.camera:
        frame = _grab(source)
        if frame is None:
            print(f"tablesvc vision enroll: no frame from {source}", file=sys.stderr)
            return 1
        frames.append(frame)
    try:
        geometry = _geometry(args.geometry)
        calibration = Calibration.load(args.calibration) if args.calibration else calibrate(frames[0], geometry)
        if args.add:
            classifier = TileClassifier.load(args.out)
        else:
            classifier = EmbeddingClassifier() if args.method == "embedding" else TileClassifier()
        classifier = enroll_from_frames(frames, calibration, geometry, classifier)
        classifier.save(args.out)
    except (CalibrationError, EnrollmentError, OSError, ValueError) as exc:
        print(f"tablesvc vision enroll: {exc}", file=sys.stderr)
        return 1
    print(f"{args.out}: {len(classifier.tiles)} kinds enrolled from {len(frames)} frame(s) "
          f"({' '.join(classifier.tiles)})")
    if isinstance(classifier, EmbeddingClassifier):
        report = separability(classifier)
        print(f"answers need a similarity of {classifier.min_similarity:.3f} and a lead of "
              f"{classifier.min_margin:.3f} over the runner-up (set from these frames)")
        print("kind  images  lead   worst  nearest")
        for r in report:
            print(f"{r.tile:<5} {r.images:>6}  {r.lead:.3f}  {r.worst_lead:.3f}  {r.nearest:<6} {r.needs_more}")
        weak = [r.tile for r in report if r.needs_more]
        print(f"kinds that need more frames: {' '.join(weak)}" if weak else "every kind stands apart")
    return 0


def run_check(args: argparse.Namespace) -> int:
    import cv2
    import numpy as np

    from vision.table.calibration import Calibration, CalibrationError, calibrate
    from vision.table.geometry import TileRect
    from vision.table.pipeline import FramePipeline

    frame = cv2.imread(args.image)
    if frame is None:
        print(f"tablesvc vision check: cannot read the image {args.image}", file=sys.stderr)
        return 1
    geometry = _geometry(args.geometry)
    try:
        calibration = Calibration.load(args.calibration) if args.calibration else calibrate(frame, geometry)
        classifier = _classifier(args)
    except (CalibrationError, OSError, ValueError) as exc:
        print(f"tablesvc vision check: {exc}", file=sys.stderr)
        return 1
    readings = FramePipeline(calibration, geometry, classifier, confirm_frames=1).process(frame)
    annotated = frame.copy()
    for seat in range(4):
        for zone in ("pond", "meld", "hand", "wall"):
            polygon = calibration.table_to_image(geometry.zone_polygon(seat, zone)).astype(np.int32)
            cv2.polylines(annotated, [polygon], True, (200, 200, 0), 1)
    for t in readings.tiles:
        w, h = geometry.tile_w, geometry.tile_h
        rect = TileRect(t.center_mm[0], t.center_mm[1], w, h, t.angle)
        box = calibration.table_to_image(rect.corners()).astype(np.int32)
        colour = (0, 200, 0) if t.tile else ((128, 128, 128) if not t.face_up else (0, 0, 255))
        cv2.polylines(annotated, [box], True, colour, 2)
        label = t.tile or ("back" if not t.face_up else "?")
        x, y = box.min(axis=0)
        cv2.putText(annotated, label, (int(x), int(y) - 3), cv2.FONT_HERSHEY_SIMPLEX, 0.5, colour, 1, cv2.LINE_AA)
    out = args.out or str(Path(args.image).with_name(Path(args.image).stem + "-check.png"))
    cv2.imwrite(out, annotated)

    def names(tiles) -> str:
        return " ".join((t.tile or "?") + ("*" if t.sideways else "") for t in tiles) or "-"

    for seat, reading in enumerate(readings.seats):
        melds = "  ".join(names(m.tiles) for m in reading.melds) or "-"
        print(f"seat {seat} ({'ESWN'[seat]})  pond: {names(reading.pond)}   melds: {melds}   hand: "
              f"{names(reading.hand)}")
    print(f"dora indicators: {names(readings.dora)}   ura indicators: {names(readings.ura)}")
    unknown = sum(1 for t in readings.tiles if t.face_up and not t.tile)
    print(f"{len(readings.tiles)} tiles, {unknown} unknown, {readings.ms:.0f} ms; annotated copy: {out}")
    return 0


FINDER_MISSING = 3


def _photo_options(p: argparse.ArgumentParser) -> None:
    """The options every command that reads a photo takes."""
    p.add_argument("--model", metavar="FILE", help="a club's enrolled tile set (tablesvc vision enroll) instead of "
                   "the packaged common Japanese sets")
    p.add_argument("--boxes", metavar="PATH", help="take the tile boxes from a YOLO label file (class cx cy w h, "
                   "normalised) or a folder of them named after the photos, instead of the tile finder: to "
                   "measure the naming alone, or to use another detector's boxes")


def photo_reader(args: argparse.Namespace, photo: str):
    """The reader for ``photo`` as the options say; raises FinderMissing, OSError or ValueError."""
    from vision.photos.reader import LabelBoxFinder, PhotoReader

    finder = None
    if args.boxes:
        boxes = Path(args.boxes)
        finder = LabelBoxFinder.from_file(boxes / f"{Path(photo).stem}.txt" if boxes.is_dir() else boxes)
    return PhotoReader.load(args.model, finder)


def read_photo(args: argparse.Namespace, photo: str):
    """(the reading, the image) of one photo, or (None, error line); FinderMissing is raised."""
    from vision.photos.input import BadPhoto, load_photo_scaled
    from vision.photos.reader import READ_SIDE

    try:
        image, scale = load_photo_scaled(photo, READ_SIDE)
        return photo_reader(args, photo).read(image, photo, scale), image
    except BadPhoto as exc:
        return None, str(exc)
    except (OSError, ValueError) as exc:
        return None, f"{photo}: {exc}"


def _annotated_path(out: str, photo: str, several: bool) -> str:
    if not several:
        return out
    p = Path(out)
    return str(p.with_name(f"{p.stem}-{Path(photo).stem}{p.suffix or '.png'}"))


def run_read(args: argparse.Namespace) -> int:
    import json

    import cv2

    from vision.photos.reader import FinderMissing, annotate

    status = 0
    for photo in args.photos:
        try:
            reading, image = read_photo(args, photo)
        except FinderMissing as exc:
            print(f"tablesvc vision read: {exc}", file=sys.stderr)
            return FINDER_MISSING
        if reading is None:
            print(f"tablesvc vision read: {image}", file=sys.stderr)
            if args.json:
                print(json.dumps({"photo": photo, "error": image}))
            status = 1
            continue
        problem = reading.problem()
        if problem:
            print(f"tablesvc vision read: {photo}: {problem}", file=sys.stderr)
            status = 1
        if args.annotated:
            out = _annotated_path(args.annotated, photo, len(args.photos) > 1)
            if not cv2.imwrite(out, annotate(image, reading)):
                print(f"tablesvc vision read: cannot write {out}", file=sys.stderr)
                status = 1
        if args.json:
            print(json.dumps(reading.to_json()))
            continue
        unknown = sum(1 for t in reading.tiles if t.face_up and t.tile is None)
        unsure = sum(1 for t in reading.tiles if t.face_up and t.tile is not None and not t.sure)
        dropped = f", {reading.dropped} boxes on no tile dropped" if reading.dropped else ""
        print(f"{photo}: {reading.text()}")
        print(f"  {len(reading.tiles)} tiles, {unsure} not sure (shown 5p?), {unknown} unknown{dropped}, "
              f"{reading.ms:.0f} ms")
        for t in reading.tiles:
            name = t.tile or ("back" if not t.face_up else "?")
            name += "" if t.sure or not t.face_up or t.tile is None else "?"
            guesses = "" if t.sure or not t.guesses else "  best guesses " + " ".join(k for k, _ in t.guesses)
            print(f"  {name:<5} box {t.box[0]},{t.box[1]},{t.box[2]},{t.box[3]}  confidence {t.confidence:.2f}"
                  f"{guesses}")
    return status
