"""The 34 kinds of tile as indices, for the names the seat readers write.

Its own module so that the consensus and the enrollment check both take it without one importing the other
(the reader, which the consensus names, checks its enrollment frames).
"""

from __future__ import annotations

__all__ = ["kind_of"]

SUIT_INDEX = {"m": 0, "p": 9, "s": 18}
HONOURS = ("E", "S", "W", "N", "P", "F", "C")


def kind_of(tile: str) -> int:
    """0..33 for a tile name as the readers write it ('5pr' is a 5p)."""
    if tile in HONOURS:
        return 27 + HONOURS.index(tile)
    return SUIT_INDEX[tile[1]] + int(tile[0]) - 1
