"""The state of a game as the engine folds it from events.

Plain mutable dataclasses, copied with :meth:`GameState.clone` before an
event is applied, so that a rejected event leaves the caller's state as it
was and ``apply(state, event)`` stays a pure function.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from tablesvc.engine.clock import Clock
from tablesvc.tiles import Tile

__all__ = ["GameState", "HandState", "MeldState", "Phase", "PondTile", "SeatState", "Step"]


class Phase(Enum):
    """Where the game is."""

    NOT_STARTED = "not_started"
    BETWEEN_HANDS = "between_hands"  # waiting for dice / the deal
    DEALING = "dealing"  # dealt, waiting for the first dora indicator
    PLAYING = "playing"
    GAME_OVER = "game_over"


class Step(Enum):
    """Whose move it is inside a hand, and what kind."""

    DRAW = "draw"  # ``turn`` acquires a tile (a wall draw, or a replacement after a kan)
    DISCARD = "discard"  # ``turn`` holds 14 and must discard (or win, or kan)
    CLAIMS = "claims"  # the last discard may be claimed; otherwise the next seat draws
    CHANKAN = "chankan"  # an added kan may be robbed; otherwise the replacement draw


@dataclass
class MeldState:
    kind: str  # chi pon kan ankan kakan
    tiles: list[Tile]
    called: Tile | None = None
    from_seat: int | None = None
    after_riichi: bool = False  # a concealed kan declared in riichi: checked on the hand shown at a win (3.4.6)


@dataclass(slots=True, frozen=True)
class PondTile:
    """One discard. Slotted: one is made at every discard of every hand. Frozen (a call replaces it), so
    that copies of a state share their pond tiles."""

    tile: Tile
    riichi: bool = False  # laid sideways
    tsumogiri: bool | None = None
    called: bool = False  # taken by another player


@dataclass
class SeatState:
    hand: list[Tile] | None = None
    """The concealed tiles where known (a log, hand cameras); None where not seen."""
    count: int = 13
    """How many concealed tiles the seat holds; always known."""
    melds: list[MeldState] = field(default_factory=list)
    pond: list[PondTile] = field(default_factory=list)
    riichi: bool = False
    double_riichi: bool = False
    ippatsu: bool = False
    riichi_discard: int | None = None  # pond index of the riichi declaration
    drawn: Tile | None = None  # the tile just drawn, where seen
    draws: int = 0
    discards: int = 0
    kuikae: frozenset[int] = frozenset()  # kinds that may not be discarded this turn
    dead: bool = False
    nagashi: bool = True  # every discard a terminal/honour and none called, so far
    passed: list[Tile] = field(default_factory=list)  # others' tiles let pass since own last discard/call
    riichi_passed: list[Tile] = field(default_factory=list)  # others' tiles let pass since riichi

    @property
    def is_open(self) -> bool:
        # most seats have no meld: then the answer costs no generator
        return bool(self.melds) and any(m.kind != "ankan" for m in self.melds)


@dataclass
class HandState:
    round: int
    honba: int
    sticks: int  # riichi sticks on the table (carried over + deposited this hand)
    dealer: int
    dice: tuple[int, int] | None = None
    seats: list[SeatState] = field(default_factory=lambda: [SeatState() for _ in range(4)])
    dora: list[Tile] = field(default_factory=list)
    pending_dora: int = 0  # kan dora still to be turned over
    wall: int = 70  # draws left in the live wall (the dealer's 14th tile counts as a draw)
    turn: int = 0
    step: Step = Step.DRAW
    rinshan: bool = False  # the current draw / the tile just drawn is a kan replacement
    after_call: bool = False  # the seat to discard got its tile by chi/pon (no kan, no tsumo)
    last_discard: tuple[int, Tile] | None = None
    kakan: tuple[int, Tile] | None = None  # an added kan that may be robbed
    interrupted: bool = False  # a call or kan happened (ends the uninterrupted first go-around)
    kans: list[int] = field(default_factory=list)  # seat of each kan, in order
    riichi_pending: int | None = None  # seat whose riichi discard has not yet passed
    deposits: list[int] = field(default_factory=list)  # seats that put a riichi stick down this hand
    first_discards: list[Tile] = field(default_factory=list)  # for four winds
    pao: dict[int, tuple[str, int]] = field(default_factory=dict)  # winner seat -> (yakuman key, liable seat)
    visible: list[int] = field(default_factory=lambda: [0] * 34)  # tiles of each kind known to be out
    visible_red: int = 0  # bit per suit: a red five of that suit is known to be out

    @property
    def riichi_count(self) -> int:
        return sum(s.riichi for s in self.seats)


@dataclass
class GameState:
    rules: str = "ema2012"
    players: tuple[str, str, str, str] = ("East", "South", "West", "North")
    phase: Phase = Phase.NOT_STARTED
    scores: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    round: int = 0  # 0..3 East 1-4, 4..7 South 1-4, 8.. West
    honba: int = 0
    sticks: int = 0
    dealer: int = 0
    first_dealer: int = 0  # the seat that dealt (or would have dealt) East 1: breaks ties at the end
    dice: tuple[int, int] | None = None  # rolled for the coming hand
    hand: HandState | None = None
    hand_number: int = 0  # hands played (replays of a chombo included)
    penalties: list[int] = field(default_factory=lambda: [0, 0, 0, 0])  # final-score penalties
    results: list = field(default_factory=list)  # HandResult of every finished hand
    final: object | None = None  # GameResult once over
    clock: Clock | None = None  # the tournament clock, when the game is played on time (immutable)
    by_results: bool = False  # hands are entered by their results (a score sheet, the players' phones)

    def clone(self) -> GameState:
        """A copy that shares only immutable parts (tiles, finished results)."""
        d = self.__dict__
        hand = d["hand"]
        new = _new(type(self))
        new.__dict__ = {**d, "scores": list(d["scores"]), "penalties": list(d["penalties"]),
                        "results": list(d["results"]), "hand": _clone_hand(hand) if hand is not None else None}
        return new


#: a copy is a new instance given its dict in one go, without ``copy.copy``'s pickling protocol or the dataclass
#: constructor: a table copies its state before every event it journals
_new = object.__new__


def _clone_hand(h: HandState) -> HandState:
    d = h.__dict__
    new = _new(type(h))
    new.__dict__ = {**d, "seats": [_clone_seat(s) for s in h.seats], "dora": list(d["dora"]), "kans": list(d["kans"]),
                    "deposits": list(d["deposits"]), "first_discards": list(d["first_discards"]), "pao": dict(d["pao"]),
                    "visible": list(d["visible"])}
    return new


def _clone_seat(s: SeatState) -> SeatState:
    d = s.__dict__
    hand = d["hand"]
    melds = d["melds"]
    new = _new(type(s))
    new.__dict__ = {**d, "hand": list(hand) if hand is not None else None,
                    "melds": [_clone_meld(m) for m in melds] if melds else [],
                    "pond": list(d["pond"]),  # pond tiles are frozen: shared
                    "passed": list(d["passed"]), "riichi_passed": list(d["riichi_passed"])}
    return new


def _clone_meld(m: MeldState) -> MeldState:
    new = _new(type(m))
    new.__dict__ = {**m.__dict__, "tiles": list(m.tiles)}
    return new
