"""The one tile model of tablesvc, and every notation users write tiles in.

A tile is one of 34 *kinds* (0-8 man, 9-17 pin, 18-26 sou, 27-33 the honours
E S W N P F C, the order Tenhou and the ``mahjong`` package use) plus a red
flag, which only a five can carry. Red fives are a property of a five rather
than extra kinds, because every rule (sets, waits, furiten, kuikae) treats a
red five as a five; only dora counting looks at the flag.

Physical identity (which of the four copies of a kind) matters where a source
tracks individual tiles: Tenhou logs and the ``mahjong`` package use 136 ids,
``kind * 4 + copy``, with copy 0 of each five (ids 16, 52, 88) being the red
one. :func:`assign_ids` gives a list of tiles distinct ids under that
convention.

Notations, all exact in both directions:

* mjai: ``1m``..``9s``, red ``5mr 5pr 5sr``, honours ``E S W N P F C``
  (P = white, F = green, C = red dragon);
* compact hand strings: ``123m406p789s1122z`` (``0`` = red five,
  ``1z``..``7z`` = E S W N P F C); honour letters may stand alone
  (``123mPPP``), and mjai tokens may be mixed in, separated by spaces;
* Tenhou 136 ids and the ``mahjong`` package's 34-count and 136-id arrays.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import Enum

__all__ = [
    "HONOR_LETTERS",
    "Suit",
    "Tile",
    "TileCountError",
    "TileParseError",
    "assign_ids",
    "format_tiles",
    "parse_tile",
    "parse_tiles",
    "tiles_from_34",
    "tiles_from_ids",
    "tiles_to_34",
]

HONOR_LETTERS = "ESWNPFC"
"""mjai letters of the honours in kind order: winds E S W N, dragons P F C."""

_HONOR_NAMES = ("East", "South", "West", "North", "White", "Green", "Red")
_RED_FIVE_IDS = frozenset({16, 52, 88})


class Suit(Enum):
    """The four families of tiles, valued by their compact-notation suffix."""

    MAN = "m"
    PIN = "p"
    SOU = "s"
    HONOR = "z"


_SUIT_ORDER = (Suit.MAN, Suit.PIN, Suit.SOU, Suit.HONOR)


class TileParseError(ValueError):
    """Text that is not valid tile notation; names the character and its position."""

    def __init__(self, text: str, position: int, reason: str) -> None:
        self.text = text
        self.position = position
        self.reason = reason
        char = text[position] if 0 <= position < len(text) else ""
        where = f"{char!r} at position {position}" if char else f"the end (position {position})"
        super().__init__(f"cannot read tiles {text!r}: {reason} at {where}")


class TileCountError(ValueError):
    """More copies of a kind (or of a red five) than a set of tiles holds."""


class Tile:
    """One tile: its kind (0..33) and whether it is a red five.

    There is exactly one object per tile (37 in all): ``Tile(kind, red)``,
    ``Tile.of`` and every parser return it, so equality is identity and
    comparing or hashing tiles costs nothing, which the engine does on every
    event. Tiles are immutable.
    """

    __slots__ = ("kind", "red")
    kind: int
    red: bool

    def __new__(cls, kind: int, red: bool = False) -> Tile:
        return _tile(kind, red)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("tiles are immutable")

    def __reduce__(self) -> tuple[type[Tile], tuple[int, bool]]:
        return (Tile, (self.kind, self.red))

    def __copy__(self) -> Tile:
        return self

    def __deepcopy__(self, memo: dict) -> Tile:
        return self

    def _key(self) -> tuple[int, bool]:
        return (self.kind, self.red)

    def __lt__(self, other: Tile) -> bool:
        return self._key() < other._key()

    def __le__(self, other: Tile) -> bool:
        return self._key() <= other._key()

    def __gt__(self, other: Tile) -> bool:
        return self._key() > other._key()

    def __ge__(self, other: Tile) -> bool:
        return self._key() >= other._key()

    @staticmethod
    def of(kind: int, red: bool = False) -> Tile:
        """The interned tile of this kind."""
        return _tile(kind, red)

    @staticmethod
    def from_id(tile_id: int) -> Tile:
        """The tile a Tenhou / ``mahjong`` 136 id stands for (16, 52, 88 are red)."""
        if not 0 <= tile_id < 136:
            raise ValueError(f"a 136 tile id must be 0..135, not {tile_id}")
        return _tile(tile_id // 4, tile_id in _RED_FIVE_IDS)

    @property
    def suit(self) -> Suit:
        return _SUIT_ORDER[self.kind // 9] if self.kind < 27 else Suit.HONOR

    @property
    def number(self) -> int:
        """1..9 for suited tiles, 1..7 for honours (the compact ``z`` number)."""
        return self.kind % 9 + 1 if self.kind < 27 else self.kind - 26

    @property
    def is_honor(self) -> bool:
        return self.kind >= 27

    @property
    def is_wind(self) -> bool:
        return 27 <= self.kind <= 30

    @property
    def is_dragon(self) -> bool:
        return self.kind >= 31

    @property
    def is_terminal(self) -> bool:
        return self.kind < 27 and self.kind % 9 in (0, 8)

    @property
    def is_terminal_or_honor(self) -> bool:
        return self.is_honor or self.is_terminal

    @property
    def is_simple(self) -> bool:
        return not self.is_terminal_or_honor

    @property
    def plain(self) -> Tile:
        """The same kind without the red flag."""
        return _tile(self.kind, False)

    @property
    def dora(self) -> Tile:
        """The dora this tile indicates: next number (9 -> 1), E->S->W->N->E, P->F->C->P."""
        k = self.kind
        if k < 27:
            return _tile(k - 8 if k % 9 == 8 else k + 1)
        if k <= 30:
            return _tile(27 if k == 30 else k + 1)
        return _tile(31 if k == 33 else k + 1)

    @property
    def mjai(self) -> str:
        """mjai name: ``1m``, ``5pr``, ``E``, ``P`` ..."""
        if self.kind >= 27:
            return HONOR_LETTERS[self.kind - 27]
        return f"{self.number}{self.suit.value}{'r' if self.red else ''}"

    @property
    def compact(self) -> str:
        """Compact name: ``1m``, ``0p`` (red five), ``5z`` (white dragon) ..."""
        return f"{0 if self.red else self.number}{self.suit.value}"

    @property
    def name(self) -> str:
        """Readable English name, for messages: '5 pin (red)', 'East wind', 'Red dragon'."""
        if self.kind >= 27:
            n = _HONOR_NAMES[self.kind - 27]
            return f"{n} {'wind' if self.kind <= 30 else 'dragon'}"
        suit = {Suit.MAN: "man", Suit.PIN: "pin", Suit.SOU: "sou"}[self.suit]
        return f"{self.number} {suit}{' (red)' if self.red else ''}"

    def __str__(self) -> str:
        return self.mjai

    def __repr__(self) -> str:
        return f"Tile({self.mjai})"


def _make(kind: int, red: bool) -> Tile:
    tile = object.__new__(Tile)
    object.__setattr__(tile, "kind", kind)
    object.__setattr__(tile, "red", red)
    return tile


_PLAIN = tuple(_make(k, False) for k in range(34))
_RED = {k: _make(k, True) for k in (4, 13, 22)}


def _tile(kind: int, red: bool = False) -> Tile:
    if red:
        try:
            return _RED[kind]
        except (KeyError, TypeError):
            raise ValueError("only a five of a suit can be red") from None
    if not isinstance(kind, int) or not 0 <= kind < 34:
        raise ValueError(f"tile kind must be 0..33, not {kind}")
    return _PLAIN[kind]


def parse_tile(text: str) -> Tile:
    """One tile in any notation: mjai (``5mr``, ``E``) or compact (``0m``, ``1z``)."""
    tiles = parse_tiles(text)
    if len(tiles) != 1:
        raise TileParseError(text, 0 if not tiles else len(text), f"expected one tile, found {len(tiles)}")
    return tiles[0]


def parse_tiles(text: str) -> list[Tile]:
    """Read a hand string, keeping the order written.

    Accepts compact groups (``123m``, ``0p`` = red five, ``1z``..``7z``),
    standalone honour letters (``PPP``), mjai tokens (``5mr``), and spaces or
    commas between any of them. Any error names the offending character and
    its position.
    """
    single = _SINGLE.get(text)
    if single is not None:  # the common case of one tile (a winning tile, a dora indicator)
        return [single]
    result: list[Tile] = []
    start = -1  # where the digits waiting for a suit letter begin
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if "0" <= c <= "9":
            if start < 0:
                start = i
        elif c in _GROUP:
            if start < 0:
                raise TileParseError(text, i, f"suit letter {c!r} with no numbers before it")
            table = _GROUP[c]
            if i + 1 < n and text[i + 1] == "r":
                if i - start != 1 or text[start] != "5" or c == "z":
                    raise TileParseError(text, i + 1, "'r' (red) may only follow a single five, as in 5mr")
                result.append(table[0])  # type: ignore[arg-type]
                i += 1
            else:
                for j in range(start, i):
                    tile = table[ord(text[j]) - 48]
                    if tile is None:
                        raise TileParseError(text, j, "honours are numbered 1z..7z (E S W N P F C)")
                    result.append(tile)
            start = -1
        elif c in _LETTER:
            if start >= 0:
                raise TileParseError(text, start, "numbers without a suit letter (m, p, s or z)")
            result.append(_LETTER[c])
        elif c in " ,\t":
            if start >= 0:
                raise TileParseError(text, start, "numbers without a suit letter (m, p, s or z)")
        else:
            raise TileParseError(text, i, "unknown character")
        i += 1
    if start >= 0:
        raise TileParseError(text, start, "numbers without a suit letter (m, p, s or z)")
    return result


# digit -> tile for each suit letter (0 = the red five); None where no tile exists (0z, 8z, 9z)
_GROUP: dict[str, list[Tile | None]] = {
    letter: [_RED[base + 4], *(_PLAIN[base + d - 1] for d in range(1, 10))]
    for letter, base in (("m", 0), ("p", 9), ("s", 18))
}
_GROUP["z"] = [None, *_PLAIN[27:34], None, None]
_LETTER = {letter: _PLAIN[27 + i] for i, letter in enumerate(HONOR_LETTERS)}
_SINGLE = {
    **{t.mjai: t for t in (*_PLAIN, *_RED.values())},
    **{t.compact: t for t in (*_PLAIN, *_RED.values())},
}


def format_tiles(tiles: Iterable[Tile], *, sort: bool = True) -> str:
    """Compact hand string (``123m406p11z``); sorted by kind unless ``sort=False``.

    Sorting puts a red five where its five belongs, so a parsed string that was
    already sorted formats back to itself.
    """
    seq = sorted(tiles, key=lambda t: (t.kind, not t.red)) if sort else list(tiles)
    out: list[str] = []
    run_suit: Suit | None = None
    for t in seq:
        if run_suit is not None and t.suit is not run_suit:
            out.append(run_suit.value)
        out.append("0" if t.red else str(t.number))
        run_suit = t.suit
    if run_suit is not None:
        out.append(run_suit.value)
    return "".join(out)


def tiles_to_34(tiles: Iterable[Tile]) -> list[int]:
    """Counts per kind: the ``mahjong`` package's 34-array."""
    counts = [0] * 34
    for t in tiles:
        counts[t.kind] += 1
    return counts


def tiles_from_34(counts: Sequence[int]) -> list[Tile]:
    """Tiles from a 34-count array (no red fives: the array cannot say)."""
    if len(counts) != 34:
        raise ValueError(f"a 34-array has 34 counts, not {len(counts)}")
    return [_tile(k) for k, c in enumerate(counts) for _ in range(c)]


def tiles_from_ids(ids: Iterable[int]) -> list[Tile]:
    """Tiles from Tenhou / ``mahjong`` 136 ids."""
    return [Tile.from_id(i) for i in ids]


def assign_ids(tiles: Sequence[Tile]) -> list[int]:
    """Distinct 136 ids for these tiles, in their order.

    A red five gets copy 0 (ids 16, 52, 88); plain tiles take copies 3, 2, 1,
    and copy 0 only when no red five of that kind is among the tiles (a fourth
    plain five exists only when red fives are off). Raises
    :class:`TileCountError` when a kind appears more than four times or a suit
    has two red fives, since no real set of tiles holds that.
    """
    next_plain: dict[int, int] = {}
    reds: set[int] = set()
    ids: list[int] = []
    for t in tiles:
        k = t.kind
        if t.red:
            if k in reds:
                raise TileCountError(f"2 x {t.name}: a set has only one")
            reds.add(k)
            ids.append(k * 4)
        else:
            copy = next_plain.get(k, 3)
            next_plain[k] = copy - 1
            ids.append(k * 4 + copy)
    for k, nxt in next_plain.items():
        used = 3 - nxt + (k in reds)
        if nxt < -1 or (nxt == -1 and k in reds):
            raise TileCountError(f"{used} x {Tile.of(k).name}: a set has only four")
    return ids
