"""Standing hands read for real: the figures of the seat camera and of the photo reader, in one place.

``python bench/hands.py`` prints, section by section:

- **seat cameras** (rendered games): each seat's standing hand rendered from the generated game
  (``hardware_sims/hand_render.py``: camera 20-70 degrees above the table, racks, hands reaching
  in, light drifting, webcam noise, several felt colours, each artwork set), read frame by frame
  by ``vision.seat`` and decoded under what the engine knows. Printed: hand states exact after
  consensus, tiles published wrong (target 0), tiles still unknown, and ms per frame for five
  cameras (four seats + the table camera in play) on one core.
- **photos** (leave-one-set-out, clutter, ``mahjong-detector`` beside it): the photo reader's
  sections, listed by ``photo_sections`` below; each is a function ``(args) -> None`` that prints
  its own table.

``--quick`` runs a small version of every section (``tests/test_bench_hands.py`` runs it): the seat
cameras read the first 40 hand states of one game's first hand, the drawn set only, each state's frames
until its published hand is sure of every tile (at least three frames, at most the full run's six); their
enrollment rows, rendered as named, are enrolled without the packaged sets' check of their order (a full run
checks them; ``tests/test_seat_camera.py`` tests the check).
Everything runs on one thread (a full run niced): the figures are one core's.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

def photo_sections() -> list[Callable[[argparse.Namespace], None]]:
    """The photo reader's sections (leave-one-set-out per held-out set and view, false boxes on clutter photos,
    mahjong-detector where installed): each prints its table; run after the seat cameras'. Imported only when
    they run: the photo reader's modules are no part of a run of the seat cameras alone."""
    from bench.hands_photos import SECTIONS

    return SECTIONS


def seat_cameras(args: argparse.Namespace) -> None:
    """The rendered seat-camera games: hand states exact after consensus, wrong tiles, ms per frame."""
    from bench.hands_seat import run_seat_bench

    run_seat_bench(args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="a small version of every section (seconds; seat cameras: the first 40 hand states of "
                        "one hand, each read until sure, the drawn set)")
    parser.add_argument("--games", type=int, default=None, help="seat cameras: generated games per tile set")
    parser.add_argument("--seed", type=int, default=1, help="seat cameras: the first game's seed")
    parser.add_argument("--hands", type=int, default=None,
                        help="seat cameras: hands of each game (default: 3, quick: 1; 0: the whole game)")
    parser.add_argument("--hd-from", type=float, default=50.0, metavar="DEG",
                        help="seat cameras: a camera at least this many degrees up is a 1280x720 webcam, as the "
                        "product advises for steep mounts (default 50; 91: every camera 640x480)")
    parser.add_argument("--only", choices=("seats", "photos"), default=None, help="run one part only")
    parser.add_argument("--annotate", type=Path, metavar="PNG",
                        help="write one annotated frame of each seat camera mid-game here and stop "
                        "(docs/img/seat-cameras.png)")
    args = parser.parse_args(argv)
    if not args.quick:
        # a full run takes an hour: it yields to the machine's other work. A quick run is a test's, and
        # a niced test would wait behind every other worker of the suite.
        with contextlib.suppress(OSError):
            os.nice(10)
    import cv2

    cv2.setNumThreads(1)  # the figures are one core's
    if args.annotate is not None:
        from bench.hands_seat import annotated_frames

        annotated_frames(args.annotate)
        return 0
    if args.only in (None, "seats"):
        seat_cameras(args)
    if args.only in (None, "photos"):
        for section in photo_sections():
            section(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
