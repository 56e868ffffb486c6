"""What a winning hand is made of: concealed tiles, melds, and how it was won.

These are plain data, checked for physical possibility when built (a meld is
a real chi, pon or kan; no kind appears five times), so that every later
stage can trust them. Whether the hand *wins*, and for how much, is the
scoring module's job.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum, IntEnum

from tablesvc.tiles import Tile, parse_tiles

__all__ = [
    "Hand",
    "InvalidHandError",
    "Meld",
    "MeldKind",
    "WinConditions",
    "Wind",
]


def _kind_of(tile: Tile) -> int:
    return tile.kind


class InvalidHandError(ValueError):
    """A hand that cannot exist or cannot win as described; the message says why."""


class Wind(IntEnum):
    """Seat and round winds; the value is the seat index counted from East."""

    E = 0
    S = 1
    W = 2
    N = 3

    @property
    def tile(self) -> Tile:
        return Tile.of(27 + self.value)

    @property
    def title(self) -> str:
        return ("East", "South", "West", "North")[self.value]

    @classmethod
    def parse(cls, text: str | Wind) -> Wind:
        if isinstance(text, Wind):
            return text
        key = str(text).strip().upper()[:1]
        if key not in cls.__members__:
            raise InvalidHandError(f"unknown wind {text!r}: use E, S, W or N")
        return cls[key]


class MeldKind(Enum):
    """The declared sets. ``kan`` is an open kan called on a discard."""

    CHI = "chi"
    PON = "pon"
    KAN = "kan"
    ANKAN = "ankan"
    KAKAN = "kakan"

    @property
    def is_kan(self) -> bool:
        return self in _KANS

    @property
    def is_open(self) -> bool:
        return self is not MeldKind.ANKAN


# members read once here: a member read through its enum class is a lookup on the metaclass (about 0.1 us),
# and every meld built (each call, each win's melds) asks these
_KANS = (MeldKind.KAN, MeldKind.ANKAN, MeldKind.KAKAN)
_CHI = MeldKind.CHI


@dataclass(frozen=True)
class Meld:
    """A declared set, its tiles in the order given (a chi's tiles are sorted)."""

    kind: MeldKind
    tiles: tuple[Tile, ...]
    called: Tile | None = None
    """The tile taken from another player, where known."""

    def __post_init__(self) -> None:
        # every call and every win's melds are checked here: plain loops over the three or four tiles
        tiles = self.tiles
        n = len(tiles)
        want = 4 if self.kind in _KANS else 3
        if n != want:
            raise InvalidHandError(f"{self._label}: a {self.kind.value} has {want} tiles, not {n}")
        if self.kind is _CHI:
            ks = sorted([t.kind for t in tiles])
            if ks[0] >= 27 or ks[1] != ks[0] + 1 or ks[2] != ks[1] + 1 or ks[0] // 9 != ks[2] // 9:
                raise InvalidHandError(f"{self._label}: a chi is three consecutive tiles of one suit")
            object.__setattr__(self, "tiles", tuple(sorted(tiles, key=_kind_of)))
        else:
            first = tiles[0].kind
            for t in tiles:
                if t.kind != first:
                    raise InvalidHandError(f"{self._label}: a {self.kind.value} is {want} identical tiles")
        called = self.called
        if called is not None:
            for t in tiles:
                if t.kind == called.kind:
                    break
            else:
                raise InvalidHandError(f"{self._label}: the called tile {called.mjai} is not in the meld")

    @property
    def _label(self) -> str:
        return f"{self.kind.value} {''.join(t.mjai for t in self.tiles)}"

    @classmethod
    def parse(cls, text: str) -> Meld:
        """``KIND:TILES``, e.g. ``pon:PPP``, ``chi:345s``, ``ankan:0555p``."""
        kind_text, sep, tiles_text = text.partition(":")
        if not sep:
            raise InvalidHandError(f"meld {text!r}: write KIND:TILES, e.g. pon:PPP or chi:345s")
        try:
            kind = MeldKind(kind_text.strip().lower())
        except ValueError:
            kinds = ", ".join(k.value for k in MeldKind)
            raise InvalidHandError(f"meld {text!r}: unknown kind {kind_text!r} (one of {kinds})") from None
        return cls(kind, tuple(parse_tiles(tiles_text)))

    @property
    def notation(self) -> str:
        return f"{self.kind.value}:{''.join(t.compact for t in self.tiles)}"


@dataclass(frozen=True)
class WinConditions:
    """How and when the hand was won, and the table situation around it."""

    tsumo: bool = False
    seat: Wind = Wind.S
    round: Wind = Wind.E
    riichi: bool = False
    double_riichi: bool = False
    ippatsu: bool = False
    haitei: bool = False
    houtei: bool = False
    rinshan: bool = False
    chankan: bool = False
    tenhou: bool = False
    chiihou: bool = False
    renhou: bool = False
    nagashi: bool = False
    dora: tuple[Tile, ...] = ()
    """Dora indicators (not the dora themselves), kan dora included."""
    ura: tuple[Tile, ...] = ()
    """Ura dora indicators; they count only with riichi."""
    honba: int = 0
    sticks: int = 0

    def __post_init__(self) -> None:
        if self.honba < 0 or self.sticks < 0:
            raise InvalidHandError("counters and riichi sticks cannot be negative")
        if len(self.dora) > 5 or len(self.ura) > 5:
            raise InvalidHandError("at most five dora indicators (one plus four kan dora)")

    @property
    def is_dealer(self) -> bool:
        return self.seat is Wind.E


@dataclass(frozen=True)
class Hand:
    """A complete hand: concealed tiles (with the winning tile) and melds."""

    concealed: tuple[Tile, ...]
    win_tile: Tile
    melds: tuple[Meld, ...] = field(default=())

    def __post_init__(self) -> None:
        expected = 14 - 3 * len(self.melds)
        if len(self.melds) > 4:
            raise InvalidHandError(f"{len(self.melds)} melds: a hand has at most four")
        if len(self.concealed) != expected:
            total = len(self.concealed) + sum(len(m.tiles) for m in self.melds)
            raise InvalidHandError(
                f"{len(self.concealed)} concealed tiles with {len(self.melds)} meld(s) ({total} tiles in all): "
                f"a winning hand has {expected} concealed tiles, the winning tile included"
            )
        if self.win_tile not in self.concealed:
            if self.win_tile.plain in {t.plain for t in self.concealed}:
                red = "red " if self.win_tile.red else "plain "
                raise InvalidHandError(f"the winning tile {self.win_tile.mjai} is not in the hand as a {red}five")
            raise InvalidHandError(
                f"the winning tile {self.win_tile.mjai} is not among the concealed tiles "
                f"{' '.join(t.mjai for t in self.concealed)}: with {len(self.melds)} meld(s) the concealed tiles "
                f"are {expected}, the winning tile included"
            )

    @classmethod
    def parse(cls, concealed: str, win: str, melds: Sequence[str] = ()) -> Hand:
        tiles = parse_tiles(concealed)
        win_tiles = parse_tiles(win)
        if len(win_tiles) != 1:
            raise InvalidHandError(f"the winning tile {win!r} must be one tile")
        parsed_melds = tuple(Meld.parse(m) for m in melds)
        # Accept the hand written without its winning tile too (13-tile form), as
        # players often do; with the full count the winning tile must be in it.
        if len(tiles) == 13 - 3 * len(parsed_melds):
            tiles.append(win_tiles[0])
        return cls(tuple(tiles), win_tiles[0], parsed_melds)

    @property
    def all_tiles(self) -> list[Tile]:
        """Every tile of the hand, meld tiles included (a kan counts four)."""
        out = list(self.concealed)
        for m in self.melds:
            out.extend(m.tiles)
        return out

    @property
    def is_open(self) -> bool:
        return any(m.kind.is_open for m in self.melds)
