"""Corrections to the tiles read from a photo, before the hand is made of them (``tablesvc score --photo``).

The reader numbers the tiles 1, 2, 3 ... in reading order (:meth:`Corrections.numbered` prints them so); a player
then says what is wrong with the numbers as printed, each correction independent of the others' order:

- ``fix N=TILE``: tile N is TILE (a misread tile, an unknown one, or a back that is a face);
- ``add TILE`` or ``add TILE@N``: a tile the reader missed, at the end of the concealed part (the largest group)
  or right after tile N in its group;
- ``remove N``: tile N is no tile of the hand (a box on something else, a tile of the wall);
- ``apart N`` or ``apart N-M``: tiles N..M lie apart as a group of their own: a meld set apart, or the winning tile;
- ``join N``: the group of tile N joins the group before it (a gap where the reader missed a tile split the hand).

A tile the player fixed or added is sure; a tile whose name the reader was not sure of keeps its best guess
unless fixed. Everything here is pure: no I/O; the CLI asks on a terminal and parses the options into these.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from tablesvc.tiles import TileParseError, parse_tiles

__all__ = ["BadCorrection", "Corrections", "Tile", "parse_correction"]


class BadCorrection(ValueError):
    """A correction that cannot apply (the message says which and why)."""


@dataclass(frozen=True)
class Tile:
    """A tile as read and corrected: its name (None: unknown), face up or a back, sure or a best guess, and the
    reader's best guesses (shown to the player for a tile not sure)."""

    tile: str | None
    face_up: bool = True
    sure: bool = True
    guesses: tuple[str, ...] = ()

    def shown(self) -> str:
        if not self.face_up:
            return "#"
        if self.tile is None:
            return "?"
        return self.tile if self.sure else f"{self.tile}?"


def _tile_name(text: str, what: str) -> str:
    text = text.strip()
    try:
        tiles = parse_tiles(text)
    except (TileParseError, ValueError) as exc:
        raise BadCorrection(f"{what}: {text!r} is not a tile ({exc}); write e.g. 7p, 5mr, E, P") from None
    if len(tiles) != 1:
        raise BadCorrection(f"{what}: {text!r} names {len(tiles)} tiles; name one")
    return text


@dataclass
class Corrections:
    """The corrections a player gave (module docstring); :meth:`apply` makes the corrected groups."""

    fixes: dict[int, str] = field(default_factory=dict)
    adds: list[tuple[str, int | None]] = field(default_factory=list)
    removes: set[int] = field(default_factory=set)
    aparts: list[tuple[int, int]] = field(default_factory=list)
    joins: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.fixes or self.adds or self.removes or self.aparts or self.joins)

    def add(self, text: str) -> None:
        """One correction in words (``fix 5=9s``, ``add 7p``, ``add 7p@3``, ``remove 14``, ``apart 12-14``)."""
        kind, what = parse_correction(text)
        if kind == "fix":
            number, _, name = what.partition("=")
            self.fixes[_number(number, text)] = _tile_name(name, text)
        elif kind == "add":
            name, _, after = what.partition("@")
            self.adds.append((_tile_name(name, text), _number(after, text) if after else None))
        elif kind == "remove":
            self.removes.update(_numbers(what, text))
        elif kind == "join":
            self.joins.append(_number(what, text))
        else:
            first, _, last = what.partition("-")
            a = _number(first, text)
            b = _number(last, text) if last else a
            if b < a:
                raise BadCorrection(f"{text}: give the tiles from the first to the last, e.g. apart 12-14")
            self.aparts.append((a, b))

    def apply(self, groups: Sequence[Sequence[Tile]]) -> list[list[Tile]]:
        """The groups as corrected: numbers are those of the tiles as read (1 = the first in reading order)."""
        numbered = [(n, t) for n, t in enumerate((t for g in groups for t in g), 1)]
        count = len(numbered)
        used = [*self.fixes, *self.removes, *self.joins, *(n for a in self.aparts for n in range(a[0], a[1] + 1)),
                *(n for _, n in self.adds if n is not None)]
        for n in used:
            if not 1 <= n <= count:
                raise BadCorrection(f"there is no tile {n}: the photo's tiles are numbered 1 to {count}")
        both = self.removes & ({*self.fixes} | {n for a in self.aparts for n in range(a[0], a[1] + 1)})
        if both:
            raise BadCorrection(f"tile {min(both)} is both removed and kept: say one")
        tiles = dict(numbered)
        for n, name in self.fixes.items():
            tiles[n] = Tile(name, True, True, ())
        # each group as numbers; the groups set apart leave their own and come right after it
        out: list[list[int]] = []
        n = 0
        for g in groups:
            out.append(list(range(n + 1, n + len(g) + 1)))
            n += len(g)
        for a, b in sorted(self.aparts):
            moving = set(range(a, b + 1))
            at = next(k for k, g in enumerate(out) if a in g)
            out = [[m for m in g if m not in moving] for g in out]
            out.insert(at + 1, list(range(a, b + 1)))
        for n in self.joins:
            at = next(k for k, g in enumerate(out) if n in g)
            if at == 0:
                raise BadCorrection(f"join {n}: tile {n} lies in the first group, there is none before it")
            out[at - 1].extend(out.pop(at))
        added: dict[int, list[tuple[int, Tile]]] = {}
        extra = count
        largest = max(range(len(out)), key=lambda k: len(out[k])) if out else None
        for name, after in self.adds:
            extra += 1
            tiles[extra] = Tile(name, True, True, ())
            if after is None:
                if largest is None:
                    out.append([])
                    largest = len(out) - 1
                out[largest].append(extra)
            else:
                added.setdefault(after, []).append((extra, tiles[extra]))
        result = []
        for g in out:
            row: list[Tile] = []
            for m in g:
                if m not in self.removes:
                    row.append(tiles[m])
                row.extend(t for _, t in added.get(m, ()))
            if row:
                result.append(row)
        return result

    @staticmethod
    def numbered(groups: Sequence[Sequence[Tile]]) -> str:
        """The tiles with their numbers, groups apart by ``|``: ``1 1s  2 2s  3 3s? | 4 E``."""
        parts, n = [], 0
        for g in groups:
            words = []
            for t in g:
                n += 1
                words.append(f"{n} {t.shown()}")
            parts.append("  ".join(words))
        return "  |  ".join(parts)


_WORDS = ("fix", "add", "remove", "apart", "join")


def parse_correction(text: str) -> tuple[str, str]:
    """``"fix 5=9s"`` -> ``("fix", "5=9s")``; a bare ``5=9s`` is a fix, a bare ``-14`` a removal."""
    text = text.strip()
    word, _, rest = text.partition(" ")
    if word in _WORDS and rest.strip():
        return word, rest.strip()
    if re.fullmatch(r"\d+\s*=\s*\S+", text):
        return "fix", text
    if re.fullmatch(r"-\d+", text):
        return "remove", text[1:]
    raise BadCorrection(f"{text!r}: say fix N=TILE, add TILE (or add TILE@N), remove N, apart N-M or join N")


def _number(text: str, where: str) -> int:
    text = text.strip()
    if not text.isdigit() or int(text) < 1:
        raise BadCorrection(f"{where}: {text!r} is not a tile number (1, 2, ... as printed)")
    return int(text)


def _numbers(text: str, where: str) -> list[int]:
    return [_number(p, where) for p in re.split(r"[,\s]+", text) if p]


def with_guess(tile: Tile, guess: str) -> Tile:
    """``tile`` taken as ``guess`` and sure (the player confirmed it)."""
    return replace(tile, tile=guess, face_up=True, sure=True)
