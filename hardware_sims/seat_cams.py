"""A generated game seen by the four seat cameras: each seat's standing hand rendered after every event
that changes it, read by ``vision.seat`` and decoded under what the engine knows, with the truth beside it.

Used by ``tablesvc demo --hand-cams`` and ``bench/hands.py``. Each seat camera has its own pose (20-70
degrees above the table, close or far, a little off centre and tilted), the table one felt colour, the
room's light drifting from frame to frame; a hand reaches in over the row on some frames (those frames are
not whole, as on a real table). The club's set is enrolled from each seat camera itself: the 37 kinds
stood in three rows before the game, each row upright and then tilted back by 2, 4 and 6 degrees
(``vision.seat.enroll_from_rows``).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np

from hardware_sims.hand_render import FELTS, STRIP_W, HandEffects, HandView, SeatPose, render_hand
from hardware_sims.tile_art import TileSet
from tablesvc.engine.engine import Engine
from tablesvc.engine.events import Event, HandStart
from tablesvc.engine.state import GameState
from tablesvc.formats.record import RecordedGame
from tablesvc.service.seat_hands import knowledge_of
from vision.naming.embedding import EmbeddingClassifier
from vision.naming.tile_set import TILES
from vision.seat.calibration import SeatCalibration
from vision.seat.consensus import HandConsensus, HandReading
from vision.seat.reader import ENROLL_ROWS, SeatReader, enroll_from_rows

__all__ = ["SeatCams", "SeatState", "StateResult", "enrollment_frames", "seat_state", "write_video"]

#: the webcam of a steep mount (``hd_from_deg``): a usual webcam's 720p mode, as the product advises where a
#: 640x480 picture shows the faces under :data:`vision.seat.calibration.MIN_FACE_PX` high
HD = (1280, 720)
HD_FROM_DEG = 50.0
ENROLL_LEANS = (0.0, 2.0, 4.0, 6.0)  # degrees the enrollment rows lean back: upright, then as players tilt them


@dataclass(frozen=True)
class SeatState:
    """One seat's true concealed hand at a moment: sorted tiles (the drawn one apart)."""

    tiles: tuple[str, ...]
    drawn: str | None


@dataclass(frozen=True)
class StateResult:
    """A hand state after its frames: the truth, what was published, and how they compare."""

    seat: int
    truth: SeatState
    reading: HandReading
    exact: bool
    wrong: int  # published sure tiles the seat does not hold
    frames: int
    hand_id: str = ""


@dataclass
class CamStats:
    frames: int = 0
    read_crops: int = 0
    ms: list[float] = field(default_factory=list)


def enrollment_frames(tiles: TileSet, pose: SeatPose, effects: HandEffects | None = None,
                      rng: np.random.Generator | None = None, rows: tuple[tuple[str, ...], ...] | None = None,
                      ) -> list[tuple[np.ndarray, list[str]]]:
    """Frames of the enrollment rows (default: the 37 kinds in three rows, :data:`ENROLL_ROWS`) as the seat
    camera at ``pose`` sees them, each with its tiles left to right: what ``tablesvc vision seat-enroll`` and
    :func:`vision.seat.enroll_from_rows` take."""
    rng = rng if rng is not None else np.random.default_rng(0)
    return [(render_hand(HandView(tuple(r)), tiles, pose, effects, rng)[0], list(r))
            for r in (rows if rows is not None else ENROLL_ROWS)]


def write_video(path: str | Path, frames: list[np.ndarray], fps: float = 5.0, quality: int = 95) -> Path:
    """Write ``frames`` (BGR, one size) as a Motion-JPEG AVI that OpenCV's ``VideoCapture`` (a camera's
    ``source``) plays at ``fps``: a seat camera's footage for the service and its tests. ``quality``: the
    JPEG quality of each frame (a webcam's stream is about 90-95)."""
    path = Path(path)
    h, w = frames[0].shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (w, h))
    if not writer.isOpened():
        raise RuntimeError(f"OpenCV cannot write {path} (Motion-JPEG AVI)")
    writer.set(cv2.VIDEOWRITER_PROP_QUALITY, quality)
    try:
        for frame in frames:
            writer.write(frame)
    finally:
        writer.release()
    return path


def _order(t: str) -> tuple[int, bool]:
    return (TILES.index(t[:2]) if t[:2] in TILES else len(TILES), t.endswith("r"))


def seat_state(state: GameState, seat: int) -> SeatState | None:
    s = state.hand.seats[seat] if state.hand is not None else None  # type: ignore[attr-defined]
    if s is None or s.hand is None:
        return None
    tiles = [t.mjai for t in s.hand]
    drawn = s.drawn.mjai if s.drawn is not None else None
    if drawn is not None and drawn in tiles:
        tiles.remove(drawn)
    return SeatState(tuple(sorted(tiles, key=_order)), drawn)


class SeatCams:
    """Four seat cameras on one table, each with its reader (enrolled from itself) and its consensus."""

    def __init__(self, tiles: TileSet, seed: int = 0, frames_per_state: int = 6, hand_rate: float = 0.15,
                 felt: str | None = None, squeeze: bool = False, hd_from_deg: float | None = HD_FROM_DEG,
                 sure_after: int | None = None, check_enrollment: bool = True) -> None:
        self.tiles = tiles
        self.rng = np.random.default_rng(seed)
        self.frames_per_state = frames_per_state
        #: with a number, a state's frames stop once the published hand is sure of every tile and at least this
        #: many frames were read (a quick run's); None: every state is shown ``frames_per_state`` frames
        self.sure_after = sure_after
        #: each camera's enrollment frames are checked by the packaged tile sets for rows swapped, reversed or
        #: shifted (:func:`vision.seat.check_rows`), as ``tablesvc vision seat-enroll`` checks a club's; without,
        #: the rows are enrolled as rendered (they are the named rows by construction)
        self.check_enrollment = check_enrollment
        self.hand_rate = hand_rate
        self.felt = felt or str(self.rng.choice(list(FELTS)))
        u = self.rng.uniform
        self.poses = [SeatPose(elevation_deg=float(u(20, 70)), distance_mm=float(u(330, 600)),
                               offset_mm=float(u(-40, 40)), roll_deg=float(u(-3, 3))) for _ in range(4)]
        if hd_from_deg is not None:  # a steep mount gets a 1280x720 webcam (docs/vision.md, the seat camera)
            self.poses = [replace(p, image_size=HD) if p.elevation_deg >= hd_from_deg else p for p in self.poses]
        # a square stream of the camera's width (640x480 -> 640x640), as some capture apps deliver
        self.squeeze = [(p.image_size[0],) * 2 if squeeze and i % 2 else None for i, p in enumerate(self.poses)]
        self.readers: list[SeatReader] = []
        self.consensus = [HandConsensus(seat) for seat in range(4)]
        self.stats = [CamStats() for _ in range(4)]
        self._t = 0
        self._lean = [0.0] * 4  # how far the row leans back: the player's, from state to state
        for seat, pose in enumerate(self.poses):
            cal = SeatCalibration.of(pose.strip_quad(), STRIP_W, pose.image_size)
            namer = EmbeddingClassifier(half_turn=False, augment_per_image=4)  # four real looks per kind already
            rows = []
            for lean in ENROLL_LEANS:  # each row stood up, then tilted back a little, as players hold them
                self._lean[seat] = lean
                rows += [(self.frame(seat, HandView(tuple(r)), hand=False)[0], list(r)) for r in ENROLL_ROWS]
            enroll_from_rows(namer, cal, rows, check=check_enrollment)
            self.readers.append(SeatReader(namer, cal))

    def effects(self, seat: int, hand: bool) -> HandEffects:
        """The room's light drifts slowly (a sine over frames), the webcam is noisy; sometimes a hand reaches in."""
        self._t += 1
        drift = 0.85 + 0.2 * math.sin(self._t / 40.0 + seat)
        tint = (1.0 + 0.06 * math.sin(self._t / 60.0), 1.0, 1.0 - 0.06 * math.sin(self._t / 60.0))
        over = float(self.rng.uniform(40, 330)) if hand and self.rng.random() < self.hand_rate else None
        return HandEffects(felt=self.felt, light=drift, tint=tint, noise_sigma=float(self.rng.uniform(2, 5)),
                           blur_sigma=float(self.rng.uniform(0.3, 0.9)), jpeg_quality=int(self.rng.integers(65, 90)),
                           hand_over=over, squeeze_to=self.squeeze[seat], lean_deg=self._lean[seat])

    def frame(self, seat: int, view: HandView, hand: bool = True) -> tuple[np.ndarray, object]:
        return render_hand(view, self.tiles, self.poses[seat], self.effects(seat, hand), self.rng)

    def show(self, seat: int, truth: SeatState, state: GameState, hand_id: str) -> StateResult:
        """Render ``frames_per_state`` frames of the seat's row (fewer with ``sure_after``), read and fold them;
        the reading at the end."""
        know = knowledge_of(state, seat, hand_id)
        cons = self.consensus[seat]
        cons.feed(None, know)
        view = HandView(truth.tiles, truth.drawn, start_mm=float(self.rng.uniform(3, 12)))
        self._lean[seat] = float(self.rng.uniform(0, 6))
        n = 0
        for _ in range(self.frames_per_state):
            image, _ = self.frame(seat, view)
            t0 = time.process_time()
            seen = self.readers[seat].read(image)
            reading = cons.feed(seen, know)
            st = self.stats[seat]
            st.frames += 1
            st.read_crops += seen.read
            st.ms.append((time.process_time() - t0) * 1000)
            n += 1
            if self.sure_after is not None and n >= self.sure_after and reading.complete:
                break
        reading = cons.reading
        truth_all = Counter(truth.tiles) + (Counter([truth.drawn]) if truth.drawn else Counter())
        published = Counter(reading.tiles) + (Counter([reading.drawn]) if reading.drawn else Counter())
        wrong = sum((published - truth_all).values())
        exact = reading.complete and published == truth_all and reading.drawn == truth.drawn
        return StateResult(seat, truth, reading, exact, wrong, n, hand_id)

    def play(self, game: RecordedGame, max_hands: int | None = None) -> Iterator[StateResult]:
        """Every state of every seat whose hand an event changed, in order, after its frames."""
        engine = Engine(GameState(players=game.players))
        hands = 0
        hand_id = ""
        for event in game.events:
            before = [seat_state(engine.state, s) for s in range(4)]
            self._apply(engine, event)
            if isinstance(event, HandStart):
                hands += 1
                if max_hands is not None and hands > max_hands:
                    return
                hand_id = f"h{hands}"
            for seat in range(4):
                now = seat_state(engine.state, seat)
                if now is not None and now != before[seat]:
                    yield self.show(seat, now, engine.state, hand_id)

    @staticmethod
    def _apply(engine: Engine, event: Event) -> None:
        engine.apply(event)
