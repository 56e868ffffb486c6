"""The events of a game: what a table can observe (input) and what the engine concludes (output).

Input events are what hardware, a camera, a referee or a recorded log can
tell: dice, the deal, discards, calls, kans, riichi, wins, draws, rulings
and corrections. Concealed draws are optional: a camera over the table never
sees them, so the engine infers them; a recorded log gives them and the
engine then checks them.

Every event is a frozen dataclass with a fixed ``type`` string, and turns
into a JSON-ready dict and back (:func:`to_dict`, :func:`from_dict`) for the
journal and MQTT. Tiles are written in mjai notation (``"5mr"``), hands as
lists of them, the one notation of every MQTT topic; :func:`from_dict` also
reads compact hand strings (``"123m406p"``), as people type them and as
older journals hold them.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from tablesvc.engine.clock import MAX_MINUTES
from tablesvc.rules.game_end import MAX_MORE_HANDS
from tablesvc.tiles import Tile, parse_tile, parse_tiles

__all__ = [
    "ABORT_KINDS",
    "CLOCK_EVENTS",
    "ENTRY_EVENTS",
    "EVENT_TYPES",
    "AbortEntry",
    "AbortiveDraw",
    "AddedKan",
    "Call",
    "Chombo",
    "ChomboEntry",
    "ClockAddHand",
    "ClockExtend",
    "ClockStart",
    "ConcealedKan",
    "DeadHand",
    "DiceRolled",
    "Discard",
    "DoraRevealed",
    "Draw",
    "DrawEntry",
    "EndGame",
    "EnteredWin",
    "Event",
    "ExhaustiveDraw",
    "GameStart",
    "HandStart",
    "Ron",
    "RonClaim",
    "ScoreSheet",
    "SetScores",
    "TimeUp",
    "Tsumo",
    "WinEntry",
    "from_dict",
    "red_five_in",
    "to_dict",
]

Hand = tuple[Tile, ...]


@dataclass(frozen=True)
class Event:
    """Base of every input event."""

    type: ClassVar[str] = ""


@dataclass(frozen=True)
class GameStart(Event):
    """Seating is settled: player names by seat, and the situation the engine takes the game up in.

    By default the game starts at East 1 with seat 0 the first East, no
    counters, no sticks and the rule set's starting points. A table switched
    on during a game (or a record cut at the front) gives the situation
    instead: ``round`` (``"S2"``), ``honba``, riichi ``sticks`` on the table,
    each seat's ``scores`` and the ``dealer`` seat (default: the seat that
    deals this round when seat 0 dealt East 1). The engine then plays on as
    if it had seen the earlier hands: the deal rotates from there, South 4
    (or the West round, under rules that play it) ends the game, and the
    seat that dealt East 1, which the dealer and round imply, breaks ties.
    """

    type: ClassVar[str] = "start_game"
    players: tuple[str, str, str, str] = ("East", "South", "West", "North")
    rules: str = "ema2012"
    round: str = "E1"
    honba: int = 0
    sticks: int = 0
    scores: tuple[int, int, int, int] | None = None
    dealer: int | None = None


@dataclass(frozen=True)
class DiceRolled(Event):
    """The dealer's dice (2.5); they fix the wall break."""

    type: ClassVar[str] = "dice"
    dice: tuple[int, int]


@dataclass(frozen=True)
class HandStart(Event):
    """The wall is ready and the tiles are dealt (13 each; the dealer's 14th is the first draw).

    ``hands`` is given where the deal is known (a recorded log, hand cameras),
    otherwise None.
    """

    type: ClassVar[str] = "hand_start"
    hands: tuple[Hand, Hand, Hand, Hand] | None = None


@dataclass(frozen=True)
class DoraRevealed(Event):
    """A dora indicator turned over: the first at the deal, then one per kan."""

    type: ClassVar[str] = "dora"
    tile: Tile


@dataclass(frozen=True)
class Draw(Event):
    """A draw, where it can be seen (a log, a hand camera). Optional: the engine infers draws."""

    type: ClassVar[str] = "draw"
    seat: int
    tile: Tile | None = None


@dataclass(frozen=True)
class Discard(Event):
    """A tile put in the pond; ``riichi`` = laid sideways as a riichi declaration."""

    type: ClassVar[str] = "discard"
    seat: int
    tile: Tile
    riichi: bool = False
    tsumogiri: bool | None = None


@dataclass(frozen=True)
class Call(Event):
    """Chi, pon or open kan of the latest discard; ``tiles`` is the whole meld shown."""

    type: ClassVar[str] = "call"
    seat: int
    kind: str
    tiles: Hand
    called: Tile
    from_seat: int


@dataclass(frozen=True)
class AddedKan(Event):
    """A pon made into a kan with the fourth tile (3.3.7)."""

    type: ClassVar[str] = "kakan"
    seat: int
    tile: Tile


@dataclass(frozen=True)
class ConcealedKan(Event):
    """Four tiles declared as a concealed kan (3.3.8)."""

    type: ClassVar[str] = "ankan"
    seat: int
    tiles: Hand


@dataclass(frozen=True)
class RonClaim:
    """One player's ron: the hand shown (concealed tiles with the winning tile), where seen."""

    seat: int
    hand: Hand | None = None


@dataclass(frozen=True)
class Ron(Event):
    """One or more rons on the latest discard (or on a kan being added: chankan)."""

    type: ClassVar[str] = "ron"
    from_seat: int
    claims: tuple[RonClaim, ...]
    ura: Hand = ()
    """Ura dora indicators turned over for a riichi winner, where seen."""


@dataclass(frozen=True)
class Tsumo(Event):
    """A self-drawn win; ``hand`` is the concealed tiles shown, the drawn tile included."""

    type: ClassVar[str] = "tsumo"
    seat: int
    hand: Hand | None = None
    win_tile: Tile | None = None
    """The drawn tile that won; needed where the draw itself was not seen."""
    ura: Hand = ()


@dataclass(frozen=True)
class ExhaustiveDraw(Event):
    """The last discard passed: who shows tenpai (riichi players must)."""

    type: ClassVar[str] = "exhaustive_draw"
    tenpai: tuple[bool, bool, bool, bool]
    hands: tuple[Hand | None, Hand | None, Hand | None, Hand | None] | None = None


ABORT_KINDS = ("nine_terminals", "four_winds", "four_riichi", "four_kans", "triple_ron")


@dataclass(frozen=True)
class AbortiveDraw(Event):
    """An abortive draw called at the table (3.4.3); the engine checks that it holds.

    ``kind`` is one of :data:`ABORT_KINDS`; ``seat`` is the declarer of nine terminals.
    """

    type: ClassVar[str] = "abortive_draw"
    kind: str
    seat: int | None = None


@dataclass(frozen=True)
class Chombo(Event):
    """A referee's chombo ruling (3.4.6): the hand is replayed."""

    type: ClassVar[str] = "chombo"
    seat: int
    reason: str = ""


@dataclass(frozen=True)
class DeadHand(Event):
    """A referee's dead-hand ruling (3.4.7): that player can no longer win or call."""

    type: ClassVar[str] = "dead_hand"
    seat: int
    reason: str = ""


@dataclass(frozen=True)
class SetScores(Event):
    """A referee sets the scores (a correction of the points on the table)."""

    type: ClassVar[str] = "set_scores"
    scores: tuple[int, int, int, int]
    reason: str = ""


@dataclass(frozen=True)
class EndGame(Event):
    """A referee ends the game now (time limit): final ranking from the current scores."""

    type: ClassVar[str] = "end_game"
    reason: str = ""


@dataclass(frozen=True)
class ClockStart(Event):
    """A tournament clock for this game: ``minutes`` of guaranteed time ending at ``deadline`` (ISO 8601, as
    the feed writes times; the service writes it from the minutes when the command arrives), then the time
    ``rule`` (``ema``, ``finish_hand`` or ``more_hands`` with ``more_hands`` of them, see
    :class:`~tablesvc.rules.game_end.TimeRule`)."""

    type: ClassVar[str] = "clock_start"
    minutes: int
    deadline: str
    rule: str = "ema"
    more_hands: int = 0


@dataclass(frozen=True)
class ClockExtend(Event):
    """A referee gives this table ``minutes`` more (a dispute stopped play): the deadline moves."""

    type: ClassVar[str] = "clock_extend"
    minutes: int
    reason: str = ""


@dataclass(frozen=True)
class ClockAddHand(Event):
    """A referee lets this table play one more hand after time."""

    type: ClassVar[str] = "clock_add_hand"
    reason: str = ""


@dataclass(frozen=True)
class TimeUp(Event):
    """The guaranteed time is over: sent by the service's timer at the deadline, or by a referee. Without a
    clock running, ``rule`` (default ``ema``) says what follows."""

    type: ClassVar[str] = "time_up"
    reason: str = ""
    rule: str | None = None


# ------------------------------------------------------------------ a game played by its results
# A table without devices (the players' phones) tells the engine each hand's result at once, the way a score
# sheet does: the engine scores it, settles it and moves the game on exactly as for a hand seen tile by tile.
# Each entry may name the ``hand_number`` it is for (the game's hands so far, a chombo's replayed hand counted):
# an entry for a hand already entered is refused, so that two phones entering the same hand at once enter it
# once, the first to arrive.


@dataclass(frozen=True)
class ScoreSheet(Event):
    """This table enters hands by their results: between two entries a hand is being played (the clock's
    time-up counts it as the hand in play). Sent once, right after ``start_game``; any entry implies it."""

    type: ClassVar[str] = "score_sheet"


@dataclass(frozen=True)
class EnteredWin:
    """One winner of an entered hand. Either the hand as shown (``hand``: the concealed tiles with the winning
    tile, ``win_tile``, ``melds`` as ``KIND:TILES`` like ``pon:555m``), scored by the engine, or, where nobody
    shows it, its value as counted at the table: ``han`` and ``fu``, or ``yakuman`` multiples. The flags are
    what the tiles cannot show (riichi is the entry's ``riichi``); ``pao`` is the seat liable for it."""

    seat: int
    hand: Hand | None = None
    win_tile: Tile | None = None
    melds: tuple[str, ...] = ()
    han: int | None = None
    fu: int | None = None
    yakuman: int = 0
    double_riichi: bool = False
    ippatsu: bool = False
    haitei: bool = False
    houtei: bool = False
    rinshan: bool = False
    chankan: bool = False
    tenhou: bool = False
    chiihou: bool = False
    renhou: bool = False
    pao: int | None = None


@dataclass(frozen=True)
class WinEntry(Event):
    """A hand won: ``from_seat`` dealt in (None: a tsumo, one winner), one or more ``wins`` (a double ron),
    the seats that put a ``riichi`` stick down in the hand, the ``dora`` and ``ura`` indicators."""

    type: ClassVar[str] = "win_entry"
    wins: tuple[EnteredWin, ...]
    from_seat: int | None = None
    riichi: tuple[int, ...] = ()
    dora: Hand = ()
    ura: Hand = ()
    hand_number: int | None = None


@dataclass(frozen=True)
class DrawEntry(Event):
    """A hand drawn at the end of the wall: who was ``tenpai``, the ``riichi`` sticks put down, and the seats
    with ``nagashi`` mangan (under rules that play it)."""

    type: ClassVar[str] = "draw_entry"
    tenpai: tuple[bool, bool, bool, bool]
    riichi: tuple[int, ...] = ()
    nagashi: tuple[int, ...] = ()
    hand_number: int | None = None


@dataclass(frozen=True)
class AbortEntry(Event):
    """An abortive draw (``kind`` one of :data:`ABORT_KINDS` but triple ron, which is a ron by three);
    ``seat`` declared nine terminals."""

    type: ClassVar[str] = "abort_entry"
    kind: str
    seat: int | None = None
    riichi: tuple[int, ...] = ()
    hand_number: int | None = None


@dataclass(frozen=True)
class ChomboEntry(Event):
    """A chombo in the hand being played (3.4.6): penalised, and the hand is replayed."""

    type: ClassVar[str] = "chombo_entry"
    seat: int
    reason: str = ""
    hand_number: int | None = None


#: The events of a game played by its results.
ENTRY_EVENTS = (ScoreSheet, WinEntry, DrawEntry, AbortEntry, ChomboEntry)


#: The clock's events: they change no hand, and the exporters of a game's record pass over them.
CLOCK_EVENTS = (ClockStart, ClockExtend, ClockAddHand, TimeUp)

EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (
        GameStart,
        DiceRolled,
        HandStart,
        DoraRevealed,
        Draw,
        Discard,
        Call,
        AddedKan,
        ConcealedKan,
        Ron,
        Tsumo,
        ExhaustiveDraw,
        AbortiveDraw,
        Chombo,
        DeadHand,
        SetScores,
        EndGame,
        *CLOCK_EVENTS,
        *ENTRY_EVENTS,
    )
}


# ------------------------------------------------------------------ codec


def _encode(value: Any) -> Any:
    if isinstance(value, Tile):
        return value.mjai
    if isinstance(value, RonClaim):
        return {"seat": value.seat, "hand": _encode(value.hand)}
    if isinstance(value, EnteredWin):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    return value


def _tiles_in(value: Any) -> Iterator[Tile]:
    """Every tile an event (or a part of one: a tuple, a claim, an entered win) holds."""
    if isinstance(value, Tile):
        yield value
    elif isinstance(value, tuple | list):
        for v in value:
            yield from _tiles_in(v)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _tiles_in(getattr(value, f.name))


def red_five_in(event: Event) -> Tile | None:
    """The first red five an event shows (a draw, a discard, a call, a hand shown, a dora indicator): what a
    table playing without red fives is warned of and a replay under such a rule set refuses."""
    return next((t for t in _tiles_in(event) if t.red), None)


def to_dict(event: Event) -> dict[str, Any]:
    """``{"type": ..., field: value}`` with tiles in mjai notation and hands as lists of them."""
    out: dict[str, Any] = {"type": event.type}
    for f in dataclasses.fields(event):
        out[f.name] = _encode(getattr(event, f.name))
    return out


class EventFormatError(ValueError):
    """A dict that is not a well-formed event; the message names the field."""


#: Points a score (or a set_scores value) may take: far beyond any real game (a player ends a game with a few
#: hundred thousand at most), yet small enough that no absurd number reaches the engine or the feed.
SCORE_LIMIT = 1_000_000
#: The range of every whole-number field of an event, by field name: a number outside it is refused with the field
#: and the range, before the engine sees it.
INT_RANGES: dict[str, tuple[int, int]] = {
    "seat": (0, 3),
    "from_seat": (0, 3),
    "dice": (1, 6),
    "scores": (-SCORE_LIMIT, SCORE_LIMIT),
    # a game taken up midway: more counters or sticks than these no real table has seen
    "honba": (0, 99),
    "sticks": (0, 99),
    "dealer": (0, 3),
    # the tournament clock: minutes of time or of an extension, hands played after time
    "minutes": (1, MAX_MINUTES),
    "more_hands": (0, MAX_MORE_HANDS),
    # a hand entered by its result
    "riichi": (0, 3),
    "nagashi": (0, 3),
    "pao": (0, 3),
    "han": (1, 130),
    "fu": (20, 110),
    "yakuman": (0, 6),
    "hand_number": (0, 999),
}
#: The longest text an event field may hold (a player's name, a rule set with house rules, a reason).
MAX_TEXT = 500


def _field(where: str) -> str:
    """``ron.claims[0].seat`` -> ``seat``: the field name a range is looked up by."""
    return re.sub(r"\[\d+\]", "", where).rsplit(".", 1)[-1]


def _decode(hint: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        return _decode(options[0], value, where)
    if hint is Tile:
        if not isinstance(value, str):
            raise EventFormatError(f"{where}: a tile is a string like '5m', not {value!r}")
        try:
            return parse_tile(value)
        except ValueError as exc:
            raise EventFormatError(f"{where}: {exc}") from None
    if hint is RonClaim:
        if not isinstance(value, dict):
            raise EventFormatError(f"{where}: a ron claim is an object with seat and hand")
        return RonClaim(seat=_decode(int, value.get("seat"), f"{where}.seat"),
                        hand=_decode(Hand | None, value.get("hand"), f"{where}.hand"))
    if hint is EnteredWin:
        if not isinstance(value, dict):
            raise EventFormatError(f"{where}: a win is an object with seat and hand, or han and fu")
        hints = typing.get_type_hints(EnteredWin, globalns={**globals(), "Hand": Hand})
        names = [f.name for f in dataclasses.fields(EnteredWin)]
        unknown = sorted(set(value) - set(names))
        if unknown:
            raise EventFormatError(f"{where}: unknown field(s) {', '.join(unknown)}")
        if "seat" not in value:
            raise EventFormatError(f"{where}: missing field seat")
        return EnteredWin(**{n: _decode(hints[n], value[n], f"{where}.{n}") for n in names if n in value})
    if origin is tuple:
        args = typing.get_args(hint)
        if args == (Tile, Ellipsis):
            if isinstance(value, str):
                try:
                    return tuple(parse_tiles(value))
                except ValueError as exc:
                    raise EventFormatError(f"{where}: {exc}") from None
            if isinstance(value, list):
                return tuple(_decode(Tile, v, where) for v in value)
            raise EventFormatError(f"{where}: tiles are a string like '123m' or a list of tiles")
        if not isinstance(value, list | tuple):
            raise EventFormatError(f"{where}: expected a list, not {value!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise EventFormatError(f"{where}: expected {len(args)} items, not {len(value)}")
        return tuple(_decode(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, value, strict=True)))
    if hint is bool:
        if not isinstance(value, bool):
            raise EventFormatError(f"{where}: expected true or false, not {value!r}")
        return value
    if hint is int:
        low, high = INT_RANGES[_field(where)]
        if isinstance(value, bool) or not isinstance(value, int):
            raise EventFormatError(f"{where}: expected a whole number from {low} to {high}, not {_short(value)}")
        if not low <= value <= high:
            raise EventFormatError(f"{where}: {_short(value)} is out of range: a whole number from {low} to {high}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise EventFormatError(f"{where}: expected a string, not {_short(value)}")
        if len(value) > MAX_TEXT:
            raise EventFormatError(f"{where}: {len(value)} characters; at most {MAX_TEXT}")
        return value
    raise EventFormatError(f"{where}: cannot read a value of type {hint}")  # pragma: no cover


def _short(value: Any) -> str:
    """A value for an error message, never longer than a line (a 401-digit number is not echoed back)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**12:
        return f"a {len(str(abs(value)))}-digit number"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_HINTS: dict[type, dict[str, Any]] = {}
_ENTRY_TYPES = frozenset(cls.type for cls in ENTRY_EVENTS)
_CLOCK_TYPES = frozenset(cls.type for cls in CLOCK_EVENTS)


def from_dict(data: dict[str, Any]) -> Event:
    """The event a dict describes; :class:`EventFormatError` names what is wrong."""
    if not isinstance(data, dict):
        raise EventFormatError("an event is a JSON object")
    kind = data.get("type")
    cls = EVENT_TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        table = [t for t in EVENT_TYPES if t not in _ENTRY_TYPES and t not in _CLOCK_TYPES]
        raise EventFormatError(f"unknown event type {_short(kind)}; known: {', '.join(table)}, the clock's clock_* "
                               "and time_up, a hand's result's *_entry (docs/engine.md)")
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls, globalns={**globals(), "Hand": Hand})
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names - {"type"})
    if unknown:
        raise EventFormatError(f"{kind}: unknown field(s) {', '.join(unknown)}")
    missing = sorted(f.name for f in dataclasses.fields(cls) if f.name not in data
                     and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
    if missing:
        raise EventFormatError(f"{kind}: missing field(s) {', '.join(missing)}")
    kwargs = {name: _decode(hints[name], data[name], f"{kind}.{name}") for name in names if name in data}
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as exc:
        raise EventFormatError(f"{kind}: {exc}") from None

