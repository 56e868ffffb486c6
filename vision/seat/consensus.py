"""A seat's hand from many frames, under what the engine knows: consensus, then decoding. Pure.

A frame can be wrong in a way the next one is not (a hand passing, a tile being moved, light
changing) and the reader may be unsure of a tile seen from too steep an angle. So a hand is
published only from what several frames agree on, and only where the game allows it:

- **consensus**: a frame counts when its row is whole and holds as many tiles as the engine says the
  seat holds (13 plus the drawn one, less three for each meld); of the last ``window`` counted frames
  since the hand last changed, a tile is sure when at least ``agree`` name it alike with confidence
  ``trust`` and none names it otherwise with it (a frame unsure of it, or naming it weakly, does not count
  against it: a steep camera leaves some tiles unsure in one frame and not in the next, and a hand reaching
  over the faces gives a few weak names), or when at least ``guesses`` frames give it as their best kind,
  surely or not, and none gives another (a kind the reader always finds nearest but never leads its
  runner-up by the set's gate: a steep camera's 8m beside the other characters); a tile the published hand
  already holds for sure stays sure though the new frames do not place it (the row's agreed tiles and the
  known ones are joined where they agree); every other tile is unknown;
- **decoding under what the engine knows**: no kind more than four times counting every visible
  tile (ponds, melds, dora indicators) - a kind that would be is unknown wherever it stands; one red
  five per suit; the tiles that leave the hand (each discard, the hand's tiles of each call) are
  taken out of the published hand at once, before any frame shows it; a draw adds an unknown tile.

The result, :class:`HandReading`, is what the seat holds as far as it is sure: its sure tiles, how
many are unknown, the drawn tile if it stands apart. A tile not yet sure stays unknown.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vision.seat.kinds import kind_of

if TYPE_CHECKING:  # only named in annotations: the consensus is pure and loads no OpenCV
    from vision.seat.reader import SeatFrame, SeenTile

__all__ = ["HandConsensus", "HandReading", "SeatKnowledge", "kind_of", "readings_equal"]


@dataclass(frozen=True)
class SeatKnowledge:
    """What the engine knows of one seat's hand and the table, at the moment of a frame.

    ``holds``: concealed tiles the seat holds, the drawn one included; ``visible``: tiles of each of
    the 34 kinds out on the table (ponds, melds, dora indicators); ``red_out``: suits ('m', 'p', 's')
    whose red five is out; ``gone``: every tile that left this seat's hand this hand so far (its
    discards and the hand's tiles of its calls), in order.
    """

    holds: int
    visible: tuple[int, ...] = (0,) * 34
    red_out: frozenset[str] = frozenset()
    gone: tuple[str, ...] = ()
    hand_id: str = ""


@dataclass(frozen=True)
class HandReading:
    """A seat's concealed hand as far as the seat camera is sure: ``tiles`` sure (sorted, the drawn one
    apart), ``unknown`` the number not yet sure, ``drawn`` the drawn tile when it stands apart and is sure
    (``drawn_unknown`` when it stands apart but is not)."""

    seat: int
    tiles: tuple[str, ...] = ()
    unknown: int = 0
    drawn: str | None = None
    drawn_unknown: bool = False
    frames: int = 0
    hand_id: str = ""  # the hand it is a reading of (the engine's id, from SeatKnowledge)

    @property
    def holds(self) -> int:
        return len(self.tiles) + self.unknown + (self.drawn is not None or self.drawn_unknown)

    @property
    def complete(self) -> bool:
        """Every tile sure."""
        return self.unknown == 0 and not self.drawn_unknown

    def as_dict(self) -> dict[str, object]:
        return {"seat": self.seat, "tiles": list(self.tiles), "unknown": self.unknown, "drawn": self.drawn,
                "drawn_unknown": self.drawn_unknown}

    @classmethod
    def from_dict(cls, data: dict[str, object], hand_id: str = "") -> HandReading:
        """The reading :meth:`as_dict` wrote (a journalled one); ValueError when it is not one."""
        try:
            tiles = data["tiles"]
            drawn = data["drawn"]
            if not isinstance(tiles, list) or not all(isinstance(t, str) for t in tiles) or not (
                    drawn is None or isinstance(drawn, str)):
                raise TypeError("tiles must be names")
            return cls(int(data["seat"]), tuple(tiles), int(data["unknown"]), drawn,  # type: ignore[arg-type]
                       bool(data["drawn_unknown"]), hand_id=hand_id)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a seat's hand reading: {exc}") from None


def _order(tile: str) -> tuple[int, bool]:
    return (kind_of(tile), tile.endswith("r"))


@dataclass
class HandConsensus:
    """Folds one seat camera's frames and the engine's knowledge into the :class:`HandReading` to publish."""

    seat: int
    agree: int = 3
    window: int = 6
    guesses: int = 5
    trust: float = 0.8
    reading: HandReading = field(init=False)
    _frames: deque[SeatFrame] = field(init=False)
    _gone: tuple[str, ...] = field(default=(), init=False)
    _hand_id: str | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.reading = HandReading(self.seat)
        self._frames = deque(maxlen=max(self.agree, self.guesses, self.window))

    def feed(self, frame: SeatFrame | None, knowledge: SeatKnowledge) -> HandReading:
        """The reading after ``frame`` (None: only the knowledge changed)."""
        self._know(knowledge)
        if frame is not None and frame.whole and frame.count == knowledge.holds:
            if self._frames and self._frames[-1].count != frame.count:
                self._frames.clear()
            self._frames.append(frame)
            if len(self._frames) >= self.agree:
                self.reading = self._decode(self._agreed(), knowledge)
        return self.reading

    def resume(self, reading: HandReading, knowledge: SeatKnowledge) -> bool:
        """Take up ``reading`` (the last one kept before a restart) as the hand known now, when it is a reading of
        the hand in play and holds as many tiles as the engine says; False (and nothing taken) otherwise. The
        next frames are folded onto it as onto any reading."""
        if reading.seat != self.seat or not reading.hand_id or reading.hand_id != knowledge.hand_id \
                or reading.holds != knowledge.holds:
            return False
        self._hand_id, self._gone = knowledge.hand_id, knowledge.gone
        self._frames.clear()
        self.reading = reading
        return True

    # ---------------------------------------------------------------- the engine's knowledge
    def _know(self, k: SeatKnowledge) -> None:
        r = self.reading
        if k.hand_id != self._hand_id:  # a new hand: nothing of the last one holds
            self._hand_id, self._gone = k.hand_id, ()
            self._frames.clear()
            self.reading = HandReading(self.seat, unknown=k.holds, hand_id=k.hand_id)
            return
        new = list((Counter(k.gone) - Counter(self._gone)).elements()) if k.gone != self._gone else []
        self._gone = k.gone
        tiles, unknown, drawn, drawn_unknown = Counter(r.tiles), r.unknown, r.drawn, r.drawn_unknown
        for t in new:  # a discard or a call's tiles leave the hand at once
            if drawn == t:
                drawn = None
            elif tiles[t] > 0:
                tiles[t] -= 1
            elif drawn_unknown:
                drawn_unknown = False
            elif unknown > 0:
                unknown -= 1
            else:  # the published hand never held it: nothing of it can be trusted
                tiles, unknown, drawn, drawn_unknown = Counter(), k.holds, None, False
                break
        if new:
            self._frames.clear()
            # the drawn tile goes into the hand when another leaves (the player sorts it in)
            if drawn is not None:
                tiles[drawn] += 1
                drawn = None
            if drawn_unknown:
                unknown += 1
                drawn_unknown = False
        held = sum(tiles.values()) + unknown + (drawn is not None or drawn_unknown)
        if held < k.holds:  # a draw: one more tile, not yet seen
            unknown += k.holds - held
            self._frames.clear()
        elif held > k.holds:  # more than the engine says: only what the next frames agree on
            tiles, unknown, drawn, drawn_unknown = Counter(), k.holds, None, False
            self._frames.clear()
        self.reading = HandReading(self.seat, tuple(sorted(tiles.elements(), key=_order)), unknown, drawn,
                                   drawn_unknown, r.frames, k.hand_id)

    # ---------------------------------------------------------------- the frames
    def _agreed(self) -> tuple[list[str | None], str | None, bool]:
        latest = self._frames[-1]
        # frames whose row is as long as the latest one's (as many tiles in all: the drawn tile apart in each, or
        # sorted in): a place is the same tile in each
        frames = [f for f in self._frames if len(f.row) == len(latest.row)]
        if len(frames) < self.agree:
            return [None] * len(latest.row), None, latest.drawn is not None
        places = [self._alike([f.row[i] for f in frames]) for i in range(len(latest.row))]
        drawn_there = latest.drawn is not None
        drawn = self._alike([f.drawn for f in frames if f.drawn is not None]) if drawn_there else None
        return places, drawn, drawn_there

    def _alike(self, seen: list[SeenTile]) -> str | None:
        """The name at least :attr:`agree` frames give with confidence :attr:`trust` and no frame gives otherwise
        with it, or the best kind at least :attr:`guesses` frames give (surely or not) and no frame gives
        otherwise; None otherwise. A frame with no kind at all for the place counts neither way."""
        strong = Counter(t.tile for t in seen if t.tile is not None and t.confidence >= self.trust)
        if len(strong) > 1:
            return None
        if strong:
            name, n = next(iter(strong.items()))
            if n >= self.agree:
                return name
        weak = Counter(t.tile or t.guess for t in seen if (t.tile or t.guess) is not None)
        if len(weak) == 1:
            name, n = next(iter(weak.items()))
            if n >= self.guesses and (not strong or name in strong):
                return name
        return None

    def _with_known(self, row: Counter[str], places: int, drawn_there: bool, drawn: str | None) -> Counter[str]:
        """The row's agreed tiles joined with those the published hand already holds for sure (the engine's
        changes folded in): a tile sure before and still in the hand stays sure though the new frames do not
        place it. Only where the two agree: the frames name no tile beyond what the published hand left unknown.
        The hand is taken whole (the drawn tile apart or sorted in), the agreed drawn tile kept apart."""
        r = self.reading
        known = Counter(r.tiles) + Counter([r.drawn] if r.drawn is not None else [])
        open_ = r.unknown + r.drawn_unknown
        agreed = row + Counter([drawn] if drawn is not None else [])
        if sum(known.values()) + open_ != places + drawn_there or sum((agreed - known).values()) > open_:
            return row
        joined = agreed | known
        if drawn is not None:
            joined[drawn] -= 1
        joined = +joined
        return joined if sum(joined.values()) <= places else row

    def _decode(self, agreed: tuple[list[str | None], str | None, bool], k: SeatKnowledge) -> HandReading:
        places, drawn, drawn_there = agreed
        named = [t for t in places if t is not None] + ([drawn] if drawn else [])
        counts = Counter(kind_of(t) for t in named)
        too_many = {kind for kind, n in counts.items() if n + (k.visible[kind] if kind < len(k.visible) else 0) > 4}
        reds = Counter(t[1] for t in named if t.endswith("r"))
        bad_red = {s for s, n in reds.items() if n > 1 or s in k.red_out}

        def sure(t: str | None) -> str | None:
            if t is None or kind_of(t) in too_many or (t.endswith("r") and t[1] in bad_red):
                return None
            return t

        places = [sure(t) for t in places]
        drawn = sure(drawn)
        row = self._with_known(Counter(t for t in places if t is not None), len(places), drawn_there, drawn)
        tiles = sorted((t for t in row.elements() if sure(t) is not None), key=_order)
        unknown = len(places) - len(tiles)
        return HandReading(self.seat, tuple(tiles), unknown, drawn, drawn_there and drawn is None,
                           self.reading.frames + 1, k.hand_id)


def readings_equal(a: HandReading, b: Sequence[str], drawn: str | None) -> bool:
    """Whether ``a`` is exactly the hand ``b`` (any order) with ``drawn``, every tile sure."""
    return a.complete and Counter(a.tiles) == Counter(b) and a.drawn == drawn
