"""A camera that *renders* the table: :class:`TableOutputs` whose camera side goes through vision.

:class:`~hardware_sims.table.DirectOutputs` hands the simulator's camera
observations straight to the service. :class:`CameraFeed` instead keeps a
:class:`~hardware_sims.camera_render.TableView` of what lies on the felt,
updates it from those observations (a discard joins its pond, a called tile
leaves the discarder's pond for the caller's meld, a pon grows into an added
kan, dora indicators are turned, hands are laid down), and after each change
renders frames of it (camera pose, tile set, effects), runs them through
:class:`~vision.table.pipeline.FramePipeline` and :class:`~vision.table.tracking.ZoneTracker`
and delivers only what the tracker reports. The simulator's observation is
used to build the picture and as the reference for the statistics, never
delivered.

Frames are processed synchronously inside :meth:`CameraFeed.camera`, so a
``confirm`` button pressed after a hand was laid down reaches the service
after the camera's :class:`HandRevealed`, as it would at a real table.

After a change, at least ``frames_per_change`` frames are rendered (the
tracker's stability window), and more, up to ``max_frames``, while the
tracker has not reported anything yet: a camera streams at 30 frames a
second, a few extra frames when one was unreadable is what happens in play.

Known gaps, on purpose and counted in :class:`FeedStats`:

- a concealed kan is laid with its ends face down and a red five, if any,
  face up in the middle (the usual etiquette: the camera cannot count a red
  five it never sees);
- when the effects ask for jitter, each tile is put down as carelessly in
  every frame of a hand (``Effects.placement_seed`` from the feed's seed and
  the hand's number): it lies still until the table is cleared.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from hardware_sims.camera_render import (
    CameraPose,
    Discard,
    Effects,
    MeldView,
    TableView,
    render,
)
from hardware_sims.table import DirectOutputs, TableOutputs
from hardware_sims.tile_art import TileSet, drawn_tile_set
from vision.naming.classifier import TileClassifier
from vision.photos.finder import TileFinder, finder_or_none
from vision.table.calibration import calibrate
from vision.table.geometry import TableGeometry
from vision.table.observations import (
    CameraObservation,
    DoraIndicatorSeen,
    HandRevealed,
    KanAdded,
    MeldSeen,
    TileDiscarded,
    UraIndicatorsSeen,
)
from vision.table.pipeline import FramePipeline, ZoneReadings
from vision.table.tracking import ZoneTracker

__all__ = ["CameraFeed", "Change", "FeedStats", "observation_key"]

FPS = 30.0
_SLOT = {"left": 0, "across": 1}  # index of the crosswise tile in the meld, left to right; 'right' = last


def _kind(tile: str) -> str:
    return tile[:-1] if tile.endswith("r") else tile


def observation_key(o: CameraObservation) -> tuple:
    """What an observation says, without camera name, timestamp or tile order within a set."""
    if isinstance(o, TileDiscarded):
        return ("discard", o.seat, o.tile, o.sideways)
    if isinstance(o, MeldSeen):
        return ("meld", o.seat, tuple(sorted(o.tiles)), o.from_side)
    if isinstance(o, KanAdded):
        return ("kan", o.seat, o.tile)
    if isinstance(o, DoraIndicatorSeen):
        return ("dora", o.index, o.tile)
    if isinstance(o, HandRevealed):
        return ("hand", o.seat, tuple(sorted(o.tiles)))
    if isinstance(o, UraIndicatorsSeen):
        return ("ura", tuple(o.tiles))
    return (type(o).__name__,)


@dataclass
class Change:
    """One change of the felt: the simulator's observation, what the tracker reported, frames it took."""

    source: CameraObservation | None  # None: the table cleared for a new hand
    emitted: list[CameraObservation]
    frames: int

    @property
    def exact(self) -> bool:
        if self.source is None:
            return not self.emitted
        return [observation_key(o) for o in self.emitted] == [observation_key(self.source)]


@dataclass
class FeedStats:
    changes: list[Change] = field(default_factory=list)
    frames: int = 0
    pipeline_ms: list[float] = field(default_factory=list)
    read_ms: list[float] = field(default_factory=list)  # frames read in full (not repeated by the motion gate)
    render_ms: list[float] = field(default_factory=list)
    occluded_frames: int = 0

    @property
    def first_divergence(self) -> Change | None:
        return next((c for c in self.changes if not c.exact), None)


class CameraFeed:
    """TableOutputs: device signals as :class:`DirectOutputs` does, the felt rendered and read by vision."""

    def __init__(
        self,
        deliver: Callable[[object], None],
        classifier: TileClassifier,
        *,
        tiles: TileSet | None = None,
        camera: CameraPose | None = None,
        effects: Effects | None = None,
        geometry: TableGeometry | None = None,
        frames_per_change: int = 3,
        max_frames: int = 10,
        occlude_every: int = 0,
        seed: int = 0,
        camera_name: str = "camera-feed",
        device: TableOutputs | None = None,
        on_frame: Callable[[np.ndarray, ZoneReadings], None] | None = None,
        finder: TileFinder | bool | None = True,
    ) -> None:
        self._deliver = deliver
        # the device side: straight to ``deliver`` (tests, bench) or real devices (the demo's serial ptys)
        self.device = device if device is not None else DirectOutputs(deliver)
        self.on_frame = on_frame  # every frame read, with its readings (the service's snapshots)
        self.tiles = tiles or drawn_tile_set()
        self.camera_pose = camera or CameraPose.overhead()
        effects = effects or Effects()
        # one room, one light: every frame of the feed shares the gradient and glare (noise stays per frame)
        self.effects = effects if effects.light_seed is not None else replace(effects, light_seed=seed)
        self.geometry = geometry or TableGeometry()
        self.frames_per_change = frames_per_change
        self.max_frames = max(max_frames, frames_per_change)
        self.occlude_every = occlude_every
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        self.hands = 0
        self.view = TableView()
        self.stats = FeedStats()
        self._frame_no = 0
        self._last_discarder: int | None = None
        first, _ = self._render()
        # the table camera's path: the packaged finder reads a tile pushed off its slot (False: none)
        found = finder_or_none() if finder is True else finder or None
        self.pipeline = FramePipeline(calibrate(first), self.geometry, classifier, finder=found)
        self.tracker = ZoneTracker(camera=camera_name, stable_frames=frames_per_change)

    # ------------------------------------------------------------ device side: straight through
    def dice(self, d1: int, d2: int) -> None:
        self.device.dice(d1, d2)

    def wall_ready(self) -> None:
        self.device.wall_ready()

    def hand_start(self) -> None:
        self.view = TableView()
        self.hands += 1
        self._last_discarder = None
        self._settle(None)  # the cleared table is committed silently before the hand starts
        self.device.hand_start()

    def button(self, seat: int, button: str) -> None:
        self.device.button(seat, button)

    # ------------------------------------------------------------ camera side: render and read
    def camera(self, observation: CameraObservation) -> None:
        self.view = self._updated(self.view, observation)
        self._settle(observation)

    def _updated(self, view: TableView, o: CameraObservation) -> TableView:
        seats = list(view.seats)
        if isinstance(o, TileDiscarded):
            sv = seats[o.seat]
            seats[o.seat] = replace(sv, discards=(*sv.discards, Discard(o.tile, o.sideways)))
            self._last_discarder = o.seat
        elif isinstance(o, MeldSeen):
            if o.from_side is None:  # concealed kan: the ends face down, a red five shown in the middle
                ordered = sorted(o.tiles, key=lambda t: not t.endswith("r"))
                meld = MeldView((ordered[2], ordered[0], ordered[1], ordered[3]), face_down=(0, 3))
            else:
                others = list(o.tiles)
                called = o.called if o.called in others else others[0]
                others.remove(called)
                at = _SLOT.get(o.from_side, len(others))
                meld = MeldView((*others[:at], called, *others[at:]), called=at)
                if self._last_discarder is not None:  # the called tile leaves the discarder's pond
                    d = seats[self._last_discarder]
                    seats[self._last_discarder] = replace(d, discards=d.discards[:-1])
                    self._last_discarder = None
            sv = seats[o.seat]
            seats[o.seat] = replace(sv, melds=(*sv.melds, meld))
        elif isinstance(o, KanAdded):
            sv = seats[o.seat]
            melds = list(sv.melds)
            for i, m in enumerate(melds):
                if m.called is not None and m.added is None and len(m.tiles) == 3 \
                        and {_kind(t) for t in m.tiles} == {_kind(o.tile)}:
                    melds[i] = replace(m, added=o.tile)
                    break
            else:
                raise ValueError(f"seat {o.seat} has no pon of {o.tile} to add to")
            seats[o.seat] = replace(sv, melds=tuple(melds))
        elif isinstance(o, DoraIndicatorSeen):
            return replace(view, dora=(*view.dora[: o.index], o.tile))
        elif isinstance(o, UraIndicatorsSeen):
            return replace(view, ura=tuple(o.tiles))
        elif isinstance(o, HandRevealed):
            hand = list(o.tiles)
            if o.win_tile is not None and o.win_tile in hand:  # a tsumo: the winning tile is laid apart
                hand.remove(o.win_tile)
            seats[o.seat] = replace(seats[o.seat], hand=tuple(hand), win_tile=o.win_tile if len(hand) < len(o.tiles)
                                    else None)  # fmt: skip
        return replace(view, seats=tuple(seats))  # type: ignore[arg-type]

    def _render(self, effects: Effects | None = None) -> tuple[np.ndarray, object]:
        t0 = time.perf_counter()
        # a tile lies still where it was put down, for the whole hand
        effects = replace(effects or self.effects, placement_seed=self.seed * 1000 + self.hands)
        out = render(self.view, geometry=self.geometry, camera=self.camera_pose, tiles=self.tiles,
                     effects=effects, rng=self.rng)  # fmt: skip
        self.stats.render_ms.append((time.perf_counter() - t0) * 1000)
        return out

    def _settle(self, source: CameraObservation | None) -> None:
        """Render frames of the current view until the tracker reports the change (or gives up)."""
        n_changes = len(self.stats.changes) + 1
        occlude = self.occlude_every > 0 and source is not None and n_changes % self.occlude_every == 0
        minimum = self.frames_per_change + (1 if occlude else 0)
        emitted: list[CameraObservation] = []
        frames = 0
        while frames < self.max_frames + (1 if occlude else 0):
            if frames >= minimum and (emitted or source is None):
                break
            effects = None
            if occlude and frames == 0:  # a player's hand over the table, somewhere over the play area
                effects = replace(self.effects, hand=True, hand_at_mm=None)
                self.stats.occluded_frames += 1
            frame, _ = self._render(effects)
            readings = self.pipeline.process(frame)
            if self.on_frame is not None:
                self.on_frame(frame, readings)
            self.stats.pipeline_ms.append(readings.ms)
            if not readings.still:
                self.stats.read_ms.append(readings.ms)
            self._frame_no += 1
            frames += 1
            for o in self.tracker.update(readings, self._frame_no / FPS):
                emitted.append(o)
                self._deliver(o)
        self.stats.frames += frames
        self.stats.changes.append(Change(source, emitted, frames))
