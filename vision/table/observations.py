"""What a camera over the table reports, zone by zone, once a change is stable.

The recogniser (vision issue) and the stand-in camera of the simulators emit
the same observations, so the service cannot tell them apart. They describe
only what lies face up on the felt: ponds, melds, dora indicators, a hand laid
down at the end; never a concealed draw. Tiles are named in mjai notation
(``5mr``, ``E``) so that this package needs nothing from the engine.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CameraObservation",
    "DoraIndicatorSeen",
    "HandRevealed",
    "KanAdded",
    "MeldSeen",
    "TileDiscarded",
    "UraIndicatorsSeen",
]


@dataclass(frozen=True, kw_only=True)
class CameraObservation:
    """Base: the camera's name and the monotonic time of the frame that settled the change."""

    camera: str
    timestamp: float


@dataclass(frozen=True, kw_only=True)
class TileDiscarded(CameraObservation):
    """A new tile lies at the end of a seat's pond; ``sideways`` = laid crosswise."""

    seat: int
    tile: str
    sideways: bool = False


@dataclass(frozen=True, kw_only=True)
class MeldSeen(CameraObservation):
    """A new set appeared in a seat's meld area.

    ``called`` is the crosswise tile (the claimed one) and ``from_side`` where
    it lies: 'left', 'across', 'right' (the player it was taken from), or
    None for a concealed kan (shown with its end tiles face down).
    """

    seat: int
    tiles: tuple[str, ...]
    called: str | None = None
    from_side: str | None = None


@dataclass(frozen=True, kw_only=True)
class KanAdded(CameraObservation):
    """A fourth tile was added to a seat's pon."""

    seat: int
    tile: str


@dataclass(frozen=True, kw_only=True)
class DoraIndicatorSeen(CameraObservation):
    """A dora indicator was turned face up on the dead wall (``index`` 0 is the first)."""

    index: int
    tile: str


@dataclass(frozen=True, kw_only=True)
class UraIndicatorsSeen(CameraObservation):
    """The tiles under the dora indicators, turned over for a riichi winner."""

    tiles: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class HandRevealed(CameraObservation):
    """A seat laid its concealed tiles face up (a win, tenpai at a draw, nine terminals).

    ``win_tile`` is the tile set apart from the others (the winning tile of a
    tsumo), where it can be told.
    """

    seat: int
    tiles: tuple[str, ...]
    win_tile: str | None = None
