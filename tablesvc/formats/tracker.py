"""What an importer keeps of a hand to fill in what a record leaves out: hands, riichi, tenpai, aborts.

mjai and tenhou.net/6 both leave things unsaid (who was tenpai at a draw,
which abortive draw a bare ``ryukyoku`` was); both settle them the same way,
from a light trace of the hand kept while reading, before the engine plays it.
"""

from __future__ import annotations

from collections.abc import Sequence

from tablesvc.rules.shape import shanten
from tablesvc.tiles import Tile

__all__ = ["HandTracker", "guess_tenpai", "noten_payment_tenpai", "shanten"]

def noten_payment_tenpai(deltas: Sequence[int]) -> tuple[bool, bool, bool, bool] | None:
    """Who was tenpai, where ``deltas`` are exactly noten payments (3000 shared); else None."""
    ready = [d > 0 for d in deltas]
    k = sum(ready)
    if not 1 <= k <= 3:
        return None
    gain, loss = 3000 // k, -(3000 // (4 - k))
    if all(d == (gain if r else loss) for d, r in zip(deltas, ready, strict=True)):
        return (ready[0], ready[1], ready[2], ready[3])
    return None


def guess_tenpai(riichi: Sequence[bool], hands: Sequence[Sequence[Tile] | None], *,
                 all_or_none: bool) -> tuple[bool, bool, bool, bool]:
    """Tenpai where the record does not say: riichi players, and known hands that are ready.

    With ``all_or_none`` (no money moved at an exhaustive draw: all four were
    tenpai or none) the answer is all four when a riichi player or four ready
    hands say so, otherwise none.
    """
    ready = [riichi[s] or (hands[s] is not None and shanten(hands[s]) == 0) for s in range(4)]  # type: ignore[arg-type]
    if all_or_none:
        every = any(riichi) or all(ready)
        return (every, every, every, every)
    return (ready[0], ready[1], ready[2], ready[3])


class HandTracker:
    """Just enough of a hand to settle what a record leaves out: hands, riichi, wall, kans."""

    def __init__(self, hands: Sequence[Sequence[Tile] | None] | None = None) -> None:
        self.hands: list[list[Tile] | None] = [list(h) if h is not None else None for h in (hands or [None] * 4)]
        self.riichi = [False] * 4
        self.draws = 0
        self.kans: list[int] = []
        self.first_discards: list[Tile] = []
        self.interrupted = False
        self.last: tuple[str, int] | None = None  # (what, seat) of the last move
        self.last_discarder: int | None = None

    def _take(self, seat: int, tiles: Sequence[Tile]) -> None:
        hand = self.hands[seat]
        if hand is None:
            return
        for t in tiles:
            if t in hand:
                hand.remove(t)
            else:  # the record disagrees with itself; the engine will say where
                self.hands[seat] = None
                return

    def draw(self, seat: int, tile: Tile | None) -> None:
        self.draws += 1
        hand = self.hands[seat]
        if hand is not None:
            if tile is None:
                self.hands[seat] = None
            else:
                hand.append(tile)
        self.last = ("draw", seat)

    def discard(self, seat: int, tile: Tile, riichi: bool) -> None:
        self._take(seat, [tile])
        if riichi:
            self.riichi[seat] = True
        if not self.interrupted and len(self.first_discards) < 4:
            self.first_discards.append(tile)
        self.last = ("riichi" if riichi else "discard", seat)
        self.last_discarder = seat

    def call(self, seat: int, own: Sequence[Tile], kan: bool) -> None:
        self._take(seat, own)
        self.interrupted = True
        if kan:
            self.kans.append(seat)
        self.last = ("call", seat)

    def kan(self, seat: int, tiles: Sequence[Tile]) -> None:
        self._take(seat, tiles)
        self.interrupted = True
        self.kans.append(seat)
        self.last = ("kan", seat)
        self.last_discarder = seat

    def abort_kind(self) -> str | None:
        """The abortive draw the hand shows, for a ``ryukyoku`` that gives no reason."""
        if self.draws >= 70:
            return None
        if self.last is not None and self.last[0] == "draw":
            return "nine_terminals"
        if sum(self.riichi) == 4:
            return "four_riichi"
        if len(self.kans) >= 4 and len(set(self.kans)) > 1:
            return "four_kans"
        kinds = {t.kind for t in self.first_discards}
        if len(self.first_discards) == 4 and len(kinds) == 1 and self.first_discards[0].is_wind:
            return "four_winds"
        if self.last is not None and self.last[0] in ("discard", "riichi", "kan"):
            return "triple_ron"  # tiles are left and a discard passed: the one draw the rules leave
        return None
