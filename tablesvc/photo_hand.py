"""Turn the tiles read from a photo into a hand to score: the concealed part, the melds, the winning tile.

How players lay a winning hand for the table to see: the concealed tiles in a row, each called meld set
apart (three or four tiles, one of them often turned sideways; a concealed kan with its two end tiles
face down), and the winning tile a little apart from the rest. The photo reader gives the tiles in
reading order with the groups the gaps make (:mod:`vision.photos.layout`); here:

- the largest group is the concealed part;
- a group of one tile is the winning tile (unless the player names it, ``win``);
- every other group must be a meld: three of a kind (pon), a run of three in one suit (chi), four of a
  kind (an open kan; a concealed kan when it shows backs), or melds laid touching each other.

Whatever does not fit is a :class:`NotAHand` that says what was read and what is wrong with it, so the
player can retake the photo or correct a tile; nothing is guessed. The answer is a mapping in the
scoring request's own format (:mod:`tablesvc.scorecard`), so a photo and a typed hand are scored the
same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tablesvc.tiles import parse_tiles

__all__ = ["LaidTile", "NotAHand", "PhotoHand", "hand_from_groups", "laid_hand"]


class NotAHand(ValueError):
    """The tiles read do not make a hand that can be scored (the message says why)."""


@dataclass(frozen=True)
class LaidTile:
    """A tile as it lies: its name (None: unknown), face up or a back."""

    tile: str | None
    face_up: bool = True


@dataclass(frozen=True)
class PhotoHand:
    """A hand as laid: ``concealed`` includes the winning tile; melds as ``KIND:TILES``."""

    concealed: list[str]
    win: str
    melds: list[str] = field(default_factory=list)
    left_out: int = 0  # tiles elsewhere in the photo that are not part of the hand (:func:`laid_hand`)

    def mapping(self) -> dict[str, Any]:
        """The scoring request's ``hand``, ``win`` and ``meld`` (tablesvc.scorecard.ScoreRequest.from_mapping)."""
        return {"hand": " ".join(self.concealed), "win": self.win, "meld": list(self.melds)}

    def text(self) -> str:
        melds = "".join(f"  {m}" for m in self.melds)
        apart = f"  ({self.left_out} other tiles of the photo left out)" if self.left_out else ""
        return f"{' '.join(self.concealed)}{melds}  win {self.win}{apart}"


def _kind(tile: str) -> tuple[int, str]:
    parsed = parse_tiles(tile)[0]
    return parsed.number, parsed.suit  # red five = a five


def _meld(tiles: Sequence[LaidTile], where: str) -> str:
    faces = [t.tile for t in tiles if t.face_up]
    backs = len(tiles) - len(faces)
    if any(f is None for f in faces):
        raise NotAHand(f"{where}: a tile could not be read; retake the photo or correct it")
    names = [f for f in faces if f is not None]
    kinds = [_kind(n) for n in names]
    if len(tiles) == 4 and backs == 2 and len(set(kinds)) == 1:
        return f"ankan:{''.join(names + names)}"
    if backs:
        raise NotAHand(f"{where}: {backs} tile(s) face down; only a concealed kan shows backs (two, at its ends)")
    if len(tiles) in (3, 4) and len(set(kinds)) == 1:
        return f"{'pon' if len(tiles) == 3 else 'kan'}:{''.join(names)}"
    if len(tiles) == 3 and len({s for _, s in kinds}) == 1 and kinds[0][1] != "z":
        numbers = sorted(n for n, _ in kinds)
        if numbers[1] == numbers[0] + 1 and numbers[2] == numbers[1] + 1:
            return f"chi:{''.join(names)}"
    raise NotAHand(f"{where} ({' '.join(names)}) is not a meld: a pon, chi or kan has 3 or 4 tiles")


def _melds(tiles: Sequence[LaidTile], where: str) -> list[str]:
    """The melds a group makes: one meld, or several laid touching each other (split where every part is a
    meld; the first split found, trying three tiles before four)."""
    if len(tiles) <= 4:
        return [_meld(tiles, where)]

    def split(rest: Sequence[LaidTile]) -> list[str] | None:
        if not rest:
            return []
        for n in (3, 4):
            if len(rest) >= n:
                try:
                    first = _meld(rest[:n], where)
                except NotAHand:
                    continue
                tail = split(rest[n:])
                if tail is not None:
                    return [first, *tail]
        return None

    found = split(tiles)
    if found is None:
        names = " ".join(t.tile or "?" for t in tiles)
        raise NotAHand(f"{where} ({names}) is not a meld, nor melds laid side by side")
    return found


def hand_from_groups(groups: Sequence[Sequence[LaidTile]], win: str | None = None) -> PhotoHand:
    """The hand the groups make (module docstring); ``win`` names the winning tile instead of a lone one."""
    groups = [list(g) for g in groups if g]
    if not groups:
        raise NotAHand("no tiles were read")
    unknown = sum(1 for g in groups for t in g if t.face_up and t.tile is None)
    if unknown:
        raise NotAHand(f"{unknown} tile(s) could not be read (shown as ?): retake the photo closer and in even "
                       "light, or correct them")
    concealed_at = max(range(len(groups)), key=lambda k: len(groups[k]))
    lone = [k for k, g in enumerate(groups) if len(g) == 1 and k != concealed_at]
    if win is None:
        if not lone:
            raise NotAHand("no tile lies apart as the winning tile: push it a little away from the hand, or "
                           "name the winning tile")
        if len(lone) > 1:
            raise NotAHand(f"{len(lone)} tiles lie apart: name the winning tile")
    win_group = lone[0] if win is None and lone else None
    concealed = groups[concealed_at]
    if any(not t.face_up for t in concealed):
        raise NotAHand("the concealed part shows tile backs: lay the hand face up")
    names = [t.tile for t in concealed if t.tile is not None]
    melds = []
    for k, g in enumerate(groups):
        if k in (concealed_at, win_group):
            continue
        if win is not None and len(g) == 1 and g[0].face_up and g[0].tile is not None:
            names.append(g[0].tile)  # a tile laid apart when the player names the winning tile: the hand's
            continue
        melds.extend(_melds(g, f"group {k + 1}"))
    if win_group is not None:
        lone_tile = groups[win_group][0]
        if not lone_tile.face_up or lone_tile.tile is None:
            raise NotAHand("the tile lying apart is face down: lay the winning tile face up")
        win = lone_tile.tile
        names.append(win)
    assert win is not None
    if win_group is None and len(names) + 3 * len(melds) == 13:
        names.append(win)  # the player named a winning tile the photo does not show: it completes the hand
    return PhotoHand(names, win, melds)


def laid_hand(groups: Sequence[Sequence[LaidTile]], win: str | None = None) -> PhotoHand:
    """:func:`hand_from_groups`, and where the groups make no hand, two more readings of the photo.

    Gaps between tiles are uneven in real photos (a hand laid loosely, a box cut tight on one tile), so
    a group that is no meld may be a piece of the concealed part: then every tile is read as one concealed
    row, the winning tile being the one named or the last tile when it lies alone. And a photo may show
    more than the hand (the wall, a pond, tiles pushed aside): where the largest group is a whole hand by
    itself (14 tiles with the winning one, named or lying alone right after it), the rest is left out and
    counted (:attr:`PhotoHand.left_out`). Unknown tiles beside a whole hand (a box on the photo's edge, a
    flower by the row) are left out the same way, only where the tiles read hold all 14 by themselves. When
    none of these makes a hand, the first reason is the one given.
    """
    try:
        return hand_from_groups(groups, win)
    except NotAHand as first:
        reason = first
    groups = [list(g) for g in groups if g]
    tiles = [t for g in groups for t in g]
    if "could not be read" in str(reason):
        whole = _without_unknown(groups, win)
        if whole is not None:
            return whole
    if "is not a meld" in str(reason):
        last = win if win is not None else (tiles[-1].tile if len(groups[-1]) == 1 else None)
        if last is not None:
            try:
                return hand_from_groups([tiles], last)
            except NotAHand:
                pass
    if groups:
        at = max(range(len(groups)), key=lambda k: len(groups[k]))
        hand = [groups[at]]
        if win is None and at + 1 < len(groups) and len(groups[at + 1]) == 1:
            hand.append(groups[at + 1])
        size = sum(map(len, hand)) + (win is not None and len(hand) == 1 and len(groups[at]) == 13)
        if size == 14 and len(hand[0]) < len(tiles):
            try:
                found = hand_from_groups(hand, win)
            except NotAHand:
                pass
            else:
                return PhotoHand(found.concealed, found.win, found.melds, len(tiles) - sum(map(len, hand)))
    raise reason


def _without_unknown(groups: list[list[LaidTile]], win: str | None) -> PhotoHand | None:
    """The hand the read tiles make by themselves, where unknown tiles lie beside a whole hand (a box on the
    photo's edge, a flower laid by the row): only when the rest holds all 14 tiles (a kan's fourth apart),
    the winning tile among them, so that no tile the photo did not show is assumed; None otherwise. An
    unknown tile within a meld keeps it unread (a kan whose fourth tile is unread is no pon)."""
    row = max(range(len(groups)), key=lambda k: len(groups[k]), default=0)
    rest = [[t for t in g if t.tile is not None or not t.face_up] for g in groups]
    if any(0 < len(kept) < len(g) for k, (g, kept) in enumerate(zip(groups, rest, strict=True)) if k != row):
        return None
    rest = [g for g in rest if g]
    left = sum(map(len, groups)) - sum(map(len, rest))
    try:
        found = hand_from_groups(rest, win)
    except NotAHand:
        return None
    kans = sum(1 for m in found.melds if m.split(":")[0] in ("kan", "ankan"))
    if sum(map(len, rest)) - kans != 14:
        return None
    return PhotoHand(found.concealed, found.win, found.melds, found.left_out + left)

