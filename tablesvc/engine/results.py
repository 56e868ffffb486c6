"""What the engine concludes: riichi sticks placed, hand results, the final ranking."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from tablesvc.rules.payments import Standing
from tablesvc.tiles import Tile

__all__ = ["GameResult", "HandResult", "Output", "RiichiAccepted", "ShownMeld", "WinResult", "round_index",
           "round_name"]

_WINDS = "ESWN"


def round_name(round_index: int) -> str:
    """``E1``..``E4``, ``S1``..``S4``, ``W1``.. for a round index 0.."""
    return f"{_WINDS[(round_index // 4) % 4]}{round_index % 4 + 1}"


def round_index(name: str) -> int:
    """The round index of ``E1``..``N4`` (``S2`` -> 5); ValueError names what a round looks like."""
    text = name.strip().upper() if isinstance(name, str) else ""
    if len(text) != 2 or text[0] not in _WINDS or text[1] not in "1234":
        raise ValueError(f"a round is a wind and a number, E1..E4, S1..S4, W1..W4 or N1..N4, not {name!r}")
    return _WINDS.index(text[0]) * 4 + int(text[1]) - 1


class Output:
    """Base of what the engine emits."""

    type = ""

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **asdict(self)}  # type: ignore[call-overload]


@dataclass(frozen=True)
class RiichiAccepted(Output):
    """A riichi discard passed unclaimed by ron: the stick is on the table."""

    type = "riichi_accepted"
    seat: int
    scores: tuple[int, int, int, int]


@dataclass(frozen=True)
class ShownMeld:
    """A meld of a winning hand as it lay on the table: ``called`` came ``from_seat`` (None when concealed)."""

    kind: str  # chi pon kan ankan kakan
    tiles: tuple[Tile, ...]
    called: Tile | None = None
    from_seat: int | None = None


@dataclass(frozen=True)
class WinResult:
    seat: int
    from_seat: int | None  # None for tsumo
    han: int
    fu: int
    yaku: tuple[tuple[str, int], ...]  # (name, han)
    limit: str
    points: int  # what the hand is worth, counters and sticks aside
    pao: int | None = None
    hand: tuple[Tile, ...] = ()
    """The concealed tiles shown, the winning tile included (melds apart)."""
    win_tile: Tile | None = None
    melds: tuple[ShownMeld, ...] = ()


@dataclass(frozen=True)
class HandResult(Output):
    """One finished hand. ``deltas`` are what the result moved (payments, counters,
    riichi sticks collected); riichi deposits of the hand are in ``deposits``."""

    type = "hand_result"
    hand_number: int
    round: int
    honba: int
    sticks: int  # riichi sticks on the table at the start of the hand
    dealer: int
    kind: str  # win, exhaustive_draw, abortive_draw, chombo
    deltas: tuple[int, int, int, int]
    scores: tuple[int, int, int, int]  # after the hand
    deposits: tuple[int, ...] = ()
    wins: tuple[WinResult, ...] = ()
    draw: str | None = None  # exhaustive, nagashi, nine_terminals, four_winds, four_riichi, four_kans, triple_ron
    tenpai: tuple[bool, bool, bool, bool] | None = None
    chombo: int | None = None
    dealer_continues: bool = False
    dora: tuple[Tile, ...] = ()
    """The dora indicators turned over when the hand ended."""
    ura: tuple[Tile, ...] = ()
    """The ura dora indicators turned over for a riichi winner (empty when none was shown)."""
    opened: tuple[bool, ...] = ()
    """Per seat: it had called a tile into an open meld when the hand ended (the records' call rate)."""

    @property
    def round_name(self) -> str:
        return round_name(self.round)

    def describe(self, players: tuple[str, ...] | None = None) -> str:
        """One line for people: who won from whom, han, fu, yaku, or the kind of draw."""

        def name(seat: int) -> str:
            return players[seat] if players else f"seat {seat}"

        if self.kind == "win":
            parts = []
            for w in self.wins:
                how = "tsumo" if w.from_seat is None else f"ron from {name(w.from_seat)}"
                yaku = ", ".join(f"{n} {h}" for n, h in w.yaku)
                limit = f" {w.limit}" if w.limit else ""
                pao = f", pao {name(w.pao)}" if w.pao is not None else ""
                if w.yaku:
                    parts.append(f"{name(w.seat)} {how}: {w.han} han {w.fu} fu{limit} ({yaku}){pao}")
                else:  # a value counted at the table (a hand entered by its result): han and fu, or the limit
                    value = f"{w.han} han {w.fu} fu{limit}" if w.fu else w.limit or f"{w.han} han"
                    parts.append(f"{name(w.seat)} {how}: {value}{pao}")
            return "; ".join(parts)
        if self.kind == "chombo":
            return f"chombo by {name(self.chombo or 0)}"
        if self.draw == "exhaustive" and self.tenpai is not None:
            ready = [name(s) for s in range(4) if self.tenpai[s]]
            return f"exhaustive draw, tenpai: {', '.join(ready) or 'nobody'}"
        return f"{self.kind.replace('_', ' ')}: {(self.draw or '').replace('_', ' ')}"


@dataclass(frozen=True)
class GameResult(Output):
    """The end of the game: standings best first, with uma. ``ended`` says what ended it: ``rules`` (the last
    hand, or a bust), ``time`` (the tournament clock) or ``referee`` (``end_game``)."""

    type = "game_result"
    standings: tuple[Standing, ...]
    scores: tuple[int, int, int, int]
    leftover_sticks: int = 0
    ended: str = "rules"
