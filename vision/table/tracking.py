"""Temporal filter: successive :class:`~vision.table.pipeline.ZoneReadings` -> camera observations.

A zone's content counts only when the same *complete* reading (every tile
known, none occluded) was seen in ``stable_frames`` frames in a row; frames
whose reading of that zone is incomplete (a hand over it, a blur the
classifier will not name, a dropped frame passed as ``None``) neither count
nor break the run, and never create an event. When a stable content differs
from the committed one:

- pond extended -> one :class:`TileDiscarded` per new tile (with its sideways flag);
- pond lost its last tile -> nothing: it was called and its meld will follow;
- meld area gained a meld -> :class:`MeldSeen` (called tile and the side it came from; a
  concealed kan's face-down ends are taken as the kind of its face-up middle tiles);
  a meld that gained a stacked tile -> :class:`KanAdded`;
- dora ring gained a face-up tile -> :class:`DoraIndicatorSeen`;
- ura indicators turned over in front of the dora indicators -> :class:`UraIndicatorsSeen`;
- a hand laid down -> :class:`HandRevealed` (a tile set apart after it is a tsumo's ``win_tile``);
- anything else (the table cleared for a new hand) is committed silently.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from vision.table.observations import (
    CameraObservation,
    DoraIndicatorSeen,
    HandRevealed,
    KanAdded,
    MeldSeen,
    TileDiscarded,
    UraIndicatorsSeen,
)
from vision.table.pipeline import MeldReading, ReadTile, ZoneReadings

__all__ = ["ZoneTracker"]

log = logging.getLogger(__name__)

PondKey = tuple[tuple[str, bool], ...]
MeldKey = tuple[tuple[tuple[str | None, bool, bool], ...], ...]


@dataclass
class _Zone:
    committed: tuple = ()
    candidate: tuple | None = None
    count: int = 0

    def offer(self, content: tuple | None, needed: int) -> tuple | None:
        """Feed one frame's complete reading (None = incomplete); returns the content when it becomes stable."""
        if content is None:
            return None
        if content == self.candidate:
            self.count += 1
        else:
            self.candidate, self.count = content, 1
        if self.count >= needed and content != self.committed:
            return content
        return None


def _complete(tiles: tuple[ReadTile, ...], allow_face_down: bool = False) -> bool:
    return all(not t.occluded and (t.known or (allow_face_down and not t.face_up)) for t in tiles)


def _pond_key(tiles: tuple[ReadTile, ...]) -> PondKey | None:
    return tuple((t.tile, t.sideways) for t in tiles) if _complete(tiles) else None  # type: ignore[misc]


def _meld_key(melds: tuple[MeldReading, ...]) -> MeldKey | None:
    if not all(_complete(m.tiles, allow_face_down=True) for m in melds):
        return None
    return tuple(tuple((t.tile, t.sideways, t.stacked) for t in m.tiles) for m in melds)


def _from_side(meld: tuple[tuple[str | None, bool, bool], ...]) -> tuple[str | None, str | None]:
    base = [t for t in meld if not t[2]]
    for i, (tile, side, _) in enumerate(base):
        if side:
            where = "left" if i == 0 else "right" if i == len(base) - 1 else "across"
            return tile, where
    return None, None


def _meld_tiles(meld: tuple[tuple[str | None, bool, bool], ...], called: str | None) -> tuple[str, ...]:
    """A meld's tiles; the face-down ends of a concealed kan are the kind its face-up tiles show.

    A red five among them is shown face up by custom: face-down ends are read as plain tiles.
    """
    known = [t[0] for t in meld if t[0] is not None]
    kinds = {t[:2] if t.endswith("r") else t for t in known}
    if called is None and len(meld) == 4 and len(known) < 4 and len(kinds) == 1:
        plain = kinds.pop()
        return tuple(t[0] if t[0] is not None else plain for t in meld)
    return tuple(known)


class ZoneTracker:
    """``update(readings, timestamp) -> [observations]``; ``None`` readings stand for a dropped frame."""

    def __init__(self, camera: str = "camera", stable_frames: int = 3) -> None:
        self.camera = camera
        self.stable_frames = stable_frames
        self._ponds = [_Zone() for _ in range(4)]
        self._melds = [_Zone() for _ in range(4)]
        self._hands = [_Zone() for _ in range(4)]
        self._dora = _Zone()
        self._ura = _Zone()

    def update(self, readings: ZoneReadings | None, timestamp: float = 0.0) -> list[CameraObservation]:
        if readings is None:
            return []
        out: list[CameraObservation] = []
        kw = {"camera": self.camera, "timestamp": timestamp}
        n = self.stable_frames
        for seat, sr in enumerate(readings.seats):
            zone = self._ponds[seat]
            new = zone.offer(_pond_key(sr.pond), n)
            if new is not None:
                old = zone.committed
                if new[: len(old)] == old:
                    out += [TileDiscarded(seat=seat, tile=t, sideways=s, **kw) for t, s in new[len(old) :]]
                elif new == old[:-1]:
                    log.debug("seat %d: pond's last tile %s taken (a call)", seat, old[-1])
                else:
                    log.info("seat %d: pond changed beyond a discard or a call; committed silently", seat)
                zone.committed = new
            zone = self._melds[seat]
            new = zone.offer(_meld_key(sr.melds), n)
            if new is not None:
                old = zone.committed
                for i, meld in enumerate(new):
                    if i < len(old) and meld == old[i]:
                        continue
                    if i < len(old) and len(meld) == len(old[i]) + 1 and any(t[2] for t in meld):
                        added = next(t[0] for t in meld if t[2])
                        out.append(KanAdded(seat=seat, tile=added, **kw))
                        continue
                    called, side = _from_side(meld)
                    tiles = _meld_tiles(meld, called)
                    out.append(MeldSeen(seat=seat, tiles=tiles, called=called, from_side=side, **kw))
                zone.committed = new
            zone = self._hands[seat]
            key = tuple((t.tile, t.apart) for t in sr.hand) if _complete(sr.hand) else None
            new = zone.offer(key, n)
            if new is not None:
                if new:
                    win = next((t for t, apart in new if apart), None)
                    out.append(HandRevealed(seat=seat, tiles=tuple(t for t, _ in new), win_tile=win, **kw))
                zone.committed = new
        new = self._dora.offer(_pond_key(readings.dora), n)
        if new is not None:
            old = self._dora.committed
            if new[: len(old)] == old:
                out += [DoraIndicatorSeen(index=i, tile=t, **kw) for i, (t, _) in enumerate(new) if i >= len(old)]
            self._dora.committed = new
        new = self._ura.offer(_pond_key(readings.ura), n)
        if new is not None:
            if new:
                out.append(UraIndicatorsSeen(tiles=tuple(t for t, _ in new), **kw))
            self._ura.committed = new
        return out
