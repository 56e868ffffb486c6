"""``tablesvc vision``: print the calibration markers, calibrate a camera."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("vision", help="camera set-up: marker sheet, calibration",
                       description="Set up the camera over a table: print the four ArUco markers for the table "
                       "corners, then calibrate the camera from a frame in which all four are visible.")
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


def _geometry(path: str | None):
    from vision.geometry import load_geometry

    return load_geometry(path)


def run_markers(args: argparse.Namespace) -> int:
    import cv2

    from vision.calibration import marker_sheet

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


def run_calibrate(args: argparse.Namespace) -> int:
    from vision.calibration import CalibrationError, calibrate

    frame = _grab(args.camera)
    if frame is None:
        print(f"tablesvc vision calibrate: no frame from {args.camera}", file=sys.stderr)
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
