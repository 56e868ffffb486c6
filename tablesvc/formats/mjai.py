"""mjai JSON lines: the protocol of the mjai server and the programs that speak it.

One JSON object per line, ``{"type": ...}``; tiles in mjai notation (``5mr``
red five, ``E S W N`` winds, ``P F C`` white, green, red dragons, ``?`` a tile
not seen). The original server is gimite/mjai; Mortal (libriichi), mjai.app
and mjai-reviewer use the same events, with a few fields added or left out.

Reading (:func:`parse_mjai`) maps the events onto ours the way the Tenhou
importer does: ``start_game`` -> GameStart, ``start_kyoku`` -> HandStart and
the first DoraRevealed (mjai has no dice), ``tsumo`` -> Draw, ``reach`` marks
the next ``dahai`` of that seat as a riichi Discard, ``chi``/``pon``/
``daiminkan`` -> Call, ``kakan`` -> AddedKan, ``ankan`` -> ConcealedKan,
``dora`` -> DoraRevealed, consecutive ``hora`` on one discard -> one Ron
(a ``hora`` on oneself -> Tsumo), ``ryukyoku`` -> ExhaustiveDraw or
AbortiveDraw. ``reach_accepted`` is not needed (the engine places the stick
when the discard passes) and ``none`` lines are skipped. A line may also hold
a JSON array of events (the form mjai.app sends to bots).

Where the formats leave room, these are the choices made:

* Rules: mjai does not say which rules were played. Our own exports write
  the rule set's name in ``start_game`` as ``rules`` (a preset, house rules
  after it), and it is read back. Otherwise ``rules`` is "tenhou" for a
  ``start_game`` carrying a tenhou.net ``uri`` (gimite's converter of Tenhou
  logs), else the record's ``rules`` stays None and GameStart keeps its
  default; ``tablesvc replay`` says which rules it plays under, and
  ``--rules`` chooses.
* The game is taken up where the first ``start_kyoku`` stands (round,
  counters, sticks, dealer, scores), so a log that starts at any hand
  replays from there.
* Tenpai at an exhaustive draw, first found of: gimite's ``tenpais`` flags;
  the ``tehais`` shown (gimite shows the tenpai hands and writes a noten hand
  as ``?``); the ``deltas`` where they are noten payments (tenpai = paid);
  otherwise riichi players and the known hands that are ready (all-zero
  deltas mean all four or none: all four when a riichi player is among them
  or every hand is ready). ``can_act`` (Mortal's "may this bot answer") says
  nothing about tenpai and is ignored.
* A ``ryukyoku`` without ``reason`` (Mortal) is exhaustive when the wall is
  empty, nine terminals when it follows a draw, else four riichi, four kans
  or four winds when the hand shows them, else (tiles left after a discard)
  a triple ron.
* ``uradora_markers`` (gimite) and ``ura_markers`` (Mortal) are both read.
* A hand's deltas are the sum of its ``hora`` deltas, or the ``ryukyoku``
  deltas; None where they are not given. ``end_game`` ``scores`` are the
  final scores where given.

Writing (:func:`export_mjai`) follows the servers: ``start_game`` carries
``names`` and the ``rules`` the game was played under; every ``dahai`` has
``tsumogiri``; a riichi is ``reach``, ``dahai``, then ``reach_accepted``
(with ``deltas`` and ``scores``) just before the next ``tsumo`` or call, and
only if the discard was not won on; a concealed kan's new ``dora`` follows
the ``ankan`` at once, an open or added kan's comes just before that
player's next ``dahai`` (after the replacement ``tsumo``), or before the next
``tsumo`` when a second kan came first (Tenhou's order, and Mortal's
server's); ``hora`` carries ``pai``, ``ura_markers``, ``deltas`` and
``scores``, one per winner (and gimite's ``hora_tehais``, the concealed
tiles without the winning one, where the deal was not seen and the winner
showed the hand, so that a camera game replays); ``ryukyoku`` carries
gimite's ``reason``, ``tenpais``, ``tehais``, ``deltas`` and ``scores``;
``end_kyoku`` ends each
hand and ``end_game`` (with the final ``scores``) the game. Deltas and scores
are the engine's; a multiple ron is split per winner as Tenhou writes it
(:func:`split_win_deltas`). A kan dora the record reveals earlier than a
server would (a table playing other rules) stays where the record has it.
Draws the record did not see are written ``"?"``. mjai has no events for a
referee's rulings: a chombo is written as ``ryukyoku`` with reason
``chombo`` and an ``actor``, a game ended early as ``end_game`` with a
``reason`` (both read back); a dead hand or a score correction cannot be
written (:class:`RecordError`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tablesvc.engine.events import (
    AbortiveDraw,
    AddedKan,
    Call,
    Chombo,
    ConcealedKan,
    DeadHand,
    DiceRolled,
    Discard,
    DoraRevealed,
    Draw,
    EndGame,
    ExhaustiveDraw,
    GameStart,
    HandStart,
    Ron,
    RonClaim,
    SetScores,
    TimeUp,
    Tsumo,
)
from tablesvc.engine.results import GameResult, HandResult, Output, RiichiAccepted
from tablesvc.engine.state import Phase
from tablesvc.formats.record import HandRecord, RecordedGame, RecordError, ReplayReport, take_up_at_first_hand
from tablesvc.formats.tracker import HandTracker, guess_tenpai, noten_payment_tenpai
from tablesvc.formats.walk import Before, HandResults, split_win_deltas, tenhou_order, walk
from tablesvc.rules.ruleset import UnknownRuleSetError, get_ruleset
from tablesvc.text import find_invalid_text
from tablesvc.tiles import Tile

__all__ = ["MJAI_TILES", "UNKNOWN", "WINDS", "export_mjai", "parse_mjai", "tile_names", "write_draw", "write_win"]

MJAI_TILES: dict[str, Tile] = {
    t.mjai: t for t in (*(Tile.of(k) for k in range(34)), *(Tile.of(k, True) for k in (4, 13, 22)))
}
"""Every mjai tile name: ``1m``..``9s``, ``5mr 5pr 5sr``, ``E S W N P F C``."""

UNKNOWN = "?"
WINDS = "ESWN"

# ryukyoku reasons as gimite's server writes them, with the spellings other programs use
_REASONS = {
    "fanpai": "exhaustive",
    "ryukyoku": "exhaustive",
    "exhaustive": "exhaustive",
    "nagashimangan": "nagashi",
    "nagashi_mangan": "nagashi",
    "nagashi": "nagashi",
    "kyushukyuhai": "nine_terminals",
    "kyuushukyuuhai": "nine_terminals",
    "kyushu": "nine_terminals",
    "nine_terminals": "nine_terminals",
    "sufonrenta": "four_winds",
    "suufonrenta": "four_winds",
    "four_winds": "four_winds",
    "suchareach": "four_riichi",
    "suuchareach": "four_riichi",
    "suuchariichi": "four_riichi",
    "four_riichi": "four_riichi",
    "sukaikan": "four_kans",
    "suukaikan": "four_kans",
    "suukansanra": "four_kans",
    "four_kans": "four_kans",
    "sanchaho": "triple_ron",
    "sanchahou": "triple_ron",
    "triple_ron": "triple_ron",
    "chombo": "chombo",
}
# what we write, by the engine's draw kind (gimite's names)
_REASON_OUT = {
    "exhaustive": "fanpai",
    "nagashi": "nagashimangan",
    "nine_terminals": "kyushukyuhai",
    "four_winds": "sufonrenta",
    "four_riichi": "suchareach",
    "four_kans": "sukaikan",
    "triple_ron": "sanchaho",
}
_KNOWN_TYPES = frozenset({
    "start_game", "start_kyoku", "tsumo", "dahai", "reach", "reach_accepted", "chi", "pon", "daiminkan", "kakan",
    "ankan", "dora", "hora", "ryukyoku", "end_kyoku", "end_game", "none",
})
_CALL_KINDS = {"chi": ("chi", 2), "pon": ("pon", 2), "daiminkan": ("kan", 3)}


# ====================================================================== reading


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.game = RecordedGame(source=source)
        self.line = 0
        self.started = False
        self.hand_open = False
        self.reach_next = [False] * 4
        self.pending_wins: list[tuple[int, dict[str, Any]]] = []
        self.tracker = HandTracker()

    # ------------------------------------------------------------ fields

    def fail(self, kind: str, message: str, line: int | None = None) -> RecordError:
        return RecordError(f"{self.source}: line {line or self.line}: {kind}: {message}")

    def _get(self, ev: dict[str, Any], name: str) -> Any:
        if name not in ev:
            raise self.fail(ev["type"], f"the field {name!r} is missing")
        return ev[name]

    def seat(self, ev: dict[str, Any], name: str = "actor") -> int:
        v = self._get(ev, name)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 3:
            raise self.fail(ev["type"], f"{name} must be a seat 0..3, not {v!r}")
        return v

    def number(self, ev: dict[str, Any], name: str, low: int = 0, high: int | None = None) -> int:
        v = self._get(ev, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < low or (high is not None and v > high):
            span = f"{low}..{high}" if high is not None else f"at least {low}"
            raise self.fail(ev["type"], f"{name} must be a whole number {span}, not {v!r}")
        return v

    def tile(self, kind: str, value: Any, where: str, *, unknown: bool = False) -> Tile | None:
        if unknown and value == UNKNOWN:
            return None
        tile = MJAI_TILES.get(value) if isinstance(value, str) else None
        if tile is None:
            extra = " or '?'" if unknown else ""
            raise self.fail(kind, f"{where}: {value!r} is not an mjai tile (1m..9s, 5mr 5pr 5sr, E S W N P F C{extra})")
        return tile

    def known_tile(self, ev: dict[str, Any], name: str) -> Tile:
        t = self.tile(ev["type"], self._get(ev, name), name)
        assert t is not None
        return t

    def tile_list(self, ev: dict[str, Any], name: str, size: int | None = None, *,
                  unknown: bool = False) -> list[Tile | None]:
        return self.tiles_of(ev["type"], self._get(ev, name), name, size, unknown=unknown)

    def tiles_of(self, kind: str, value: Any, where: str, size: int | None = None, *,
                 unknown: bool = False) -> list[Tile | None]:
        if not isinstance(value, list) or (size is not None and len(value) != size):
            want = f"{size} tiles" if size is not None else "tiles"
            raise self.fail(kind, f"{where} must be a list of {want}, not {value!r}")
        return [self.tile(kind, x, f"{where}[{i}]", unknown=unknown) for i, x in enumerate(value)]

    def scores(self, ev: dict[str, Any], name: str) -> tuple[int, int, int, int] | None:
        v = ev.get(name)
        if v is None:
            return None
        if (not isinstance(v, list) or len(v) != 4
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in v)):
            raise self.fail(ev["type"], f"{name} must be four whole numbers, not {v!r}")
        return (v[0], v[1], v[2], v[3])

    # ------------------------------------------------------------ events

    def feed(self, line: int, ev: Any) -> None:
        self.line = line
        if not isinstance(ev, dict):
            raise RecordError(f"{self.source}: line {line}: an mjai event is a JSON object, not {ev!r}")
        kind = ev.get("type")
        if not isinstance(kind, str):
            raise RecordError(f"{self.source}: line {line}: an mjai event needs a \"type\"")
        if kind not in _KNOWN_TYPES:
            raise RecordError(f"{self.source}: line {line}: unknown mjai event type {kind!r}")
        if kind != "hora":
            self.flush_wins()
        getattr(self, f"on_{kind}")(ev)

    def on_none(self, ev: dict[str, Any]) -> None:
        pass

    def on_start_game(self, ev: dict[str, Any]) -> None:
        if self.started:
            raise self.fail("start_game", "the game has already started")
        names = ev.get("names")
        if names is not None:
            if not isinstance(names, list) or len(names) != 4 or not all(isinstance(n, str) for n in names):
                raise self.fail("start_game", f"names must be four strings, not {names!r}")
            self.game.players = tuple(n or f"Player {i + 1}" for i, n in enumerate(names))  # type: ignore[assignment]
        uri = ev.get("uri")
        if isinstance(uri, str) and "tenhou.net" in uri:
            self.game.rules = "tenhou"
        rules = ev.get("rules")
        if rules is not None:  # our own exports name the rule set
            if not isinstance(rules, str):
                raise self.fail("start_game", f"rules must be a rule set's name, not {rules!r}")
            try:
                self.game.rules = get_ruleset(rules).name
            except UnknownRuleSetError as exc:
                raise self.fail("start_game", f"rules: {exc}") from None
        self._start()

    def _start(self) -> None:
        if self.game.rules is not None:
            self.game.events.append(GameStart(players=self.game.players, rules=self.game.rules))
        else:
            self.game.events.append(GameStart(players=self.game.players))
        self.started = True

    def on_start_kyoku(self, ev: dict[str, Any]) -> None:
        if not self.started:
            self._start()
        bakaze = self._get(ev, "bakaze")
        if bakaze not in ("E", "S", "W", "N"):
            raise self.fail("start_kyoku", f"bakaze must be a wind E S W N, not {bakaze!r}")
        kyoku = self.number(ev, "kyoku", 1, 4)
        honba = self.number(ev, "honba")
        kyotaku = self.number(ev, "kyotaku")
        oya = self.seat(ev, "oya")
        scores = self.scores(ev, "scores")
        if scores is None:
            raise self.fail("start_kyoku", "the field 'scores' is missing")
        dora = self.known_tile(ev, "dora_marker")
        tehais = self._get(ev, "tehais")
        if not isinstance(tehais, list) or len(tehais) != 4:
            raise self.fail("start_kyoku", f"tehais must be four hands, not {tehais!r}")
        hands = [self.tiles_of("start_kyoku", h, f"tehais[{i}]", 13, unknown=True) for i, h in enumerate(tehais)]
        known = all(t is not None for h in hands for t in h)
        dealt = tuple(tuple(h) for h in hands) if known else None
        self.game.hands.append(HandRecord(round=WINDS.index(bakaze) * 4 + kyoku - 1, honba=honba, sticks=kyotaku,
                                          dealer=oya, scores=scores))
        self.game.events.append(HandStart(hands=dealt))  # type: ignore[arg-type]
        self.game.events.append(DoraRevealed(tile=dora))
        self.hand_open = True
        self.reach_next = [False] * 4
        self.tracker = HandTracker([None if any(t is None for t in h) else h for h in hands])  # type: ignore[misc]

    def on_tsumo(self, ev: dict[str, Any]) -> None:
        seat = self.seat(ev)
        tile = self.tile("tsumo", self._get(ev, "pai"), "pai", unknown=True)
        self.game.events.append(Draw(seat=seat, tile=tile))
        self.tracker.draw(seat, tile)

    def on_dahai(self, ev: dict[str, Any]) -> None:
        seat = self.seat(ev)
        tile = self.known_tile(ev, "pai")
        tsumogiri = ev.get("tsumogiri")
        if tsumogiri is not None and not isinstance(tsumogiri, bool):
            raise self.fail("dahai", f"tsumogiri must be true or false, not {tsumogiri!r}")
        riichi = self.reach_next[seat]
        self.reach_next[seat] = False
        self.game.events.append(Discard(seat=seat, tile=tile, riichi=riichi, tsumogiri=tsumogiri))
        self.tracker.discard(seat, tile, riichi)

    def on_reach(self, ev: dict[str, Any]) -> None:
        self.reach_next[self.seat(ev)] = True

    def on_reach_accepted(self, ev: dict[str, Any]) -> None:
        self.seat(ev)  # the engine places the stick itself when the discard passes

    def _call(self, ev: dict[str, Any]) -> None:
        kind, size = _CALL_KINDS[ev["type"]]
        seat, target = self.seat(ev), self.seat(ev, "target")
        called = self.known_tile(ev, "pai")
        own: list[Tile] = self.tile_list(ev, "consumed", size)  # type: ignore[assignment]
        tiles = tuple(sorted([*own, called], key=tenhou_order))
        self.game.events.append(Call(seat=seat, kind=kind, tiles=tiles, called=called, from_seat=target))
        self.tracker.call(seat, own, kind == "kan")

    on_chi = on_pon = on_daiminkan = _call

    def on_kakan(self, ev: dict[str, Any]) -> None:
        seat = self.seat(ev)
        tile = self.known_tile(ev, "pai")
        self.game.events.append(AddedKan(seat=seat, tile=tile))
        self.tracker.kan(seat, [tile])

    def on_ankan(self, ev: dict[str, Any]) -> None:
        seat = self.seat(ev)
        tiles: list[Tile] = self.tile_list(ev, "consumed", 4)  # type: ignore[assignment]
        self.game.events.append(ConcealedKan(seat=seat, tiles=tuple(sorted(tiles, key=tenhou_order))))
        self.tracker.kan(seat, tiles)

    def on_dora(self, ev: dict[str, Any]) -> None:
        self.game.events.append(DoraRevealed(tile=self.known_tile(ev, "dora_marker")))

    def on_hora(self, ev: dict[str, Any]) -> None:
        self.pending_wins.append((self.line, ev))

    def flush_wins(self) -> None:
        if not self.pending_wins:
            return
        wins, self.pending_wins = self.pending_wins, []
        first_line = wins[0][0]
        parsed = []
        for line, ev in wins:
            self.line = line
            actor, target = self.seat(ev), self.seat(ev, "target")
            pai = self.tile("hora", ev["pai"], "pai") if ev.get("pai") is not None else None
            ura_field = "ura_markers" if ev.get("ura_markers") is not None else "uradora_markers"
            ura = self.tile_list(ev, ura_field) if ev.get(ura_field) is not None else []
            shown = None
            if isinstance(ev.get("hora_tehais"), list) and pai is not None:
                concealed = self.tile_list(ev, "hora_tehais", unknown=True)
                if all(t is not None for t in concealed):
                    shown = (*concealed, pai)
            parsed.append((actor, target, pai, tuple(ura), shown, self.scores(ev, "deltas")))
        self.line = first_line
        ura = next((u for *_, u, _s, _d in parsed if u), ())
        actor, target = parsed[0][0], parsed[0][1]
        if actor == target:
            if len(parsed) > 1:
                raise self.fail("hora", "a tsumo is won by one player")
            pai, shown = parsed[0][2], parsed[0][4]
            self.game.events.append(Tsumo(seat=actor, hand=shown, win_tile=pai, ura=ura))  # type: ignore[arg-type]
        else:
            if any(p[1] != target or p[0] == p[1] for p in parsed):
                raise self.fail("hora", "the hora lines of one discard must all name the same target")
            claims = tuple(RonClaim(seat=p[0], hand=p[4]) for p in parsed)  # type: ignore[arg-type]
            self.game.events.append(Ron(from_seat=target, claims=claims, ura=ura))  # type: ignore[arg-type]
        deltas = None
        if all(p[5] is not None for p in parsed):
            deltas = tuple(sum(p[5][s] for p in parsed) for s in range(4))  # type: ignore[index]
        self._close_hand(deltas)  # type: ignore[arg-type]

    def on_ryukyoku(self, ev: dict[str, Any]) -> None:
        reason_text = ev.get("reason")
        if reason_text is None:
            reason = self.tracker.abort_kind() or "exhaustive"
        else:
            reason = _REASONS.get(str(reason_text).lower()) if isinstance(reason_text, str) else None
            if reason is None:
                raise self.fail("ryukyoku", f"unknown reason {reason_text!r}")
        deltas = self.scores(ev, "deltas")
        tr = self.tracker
        if reason in ("exhaustive", "nagashi"):
            self.game.events.append(ExhaustiveDraw(tenpai=self._tenpai(ev, reason, deltas)))
        elif reason == "triple_ron":
            discarder = tr.last_discarder if tr.last_discarder is not None else 0
            claims = tuple(RonClaim(seat=s) for s in range(4) if s != discarder)
            self.game.events.append(Ron(from_seat=discarder, claims=claims))
        elif reason == "chombo":
            detail = ev.get("detail")
            self.game.events.append(Chombo(seat=self.seat(ev), reason=detail if isinstance(detail, str) else ""))
        else:
            seat = None
            if reason == "nine_terminals":
                seat = self.seat(ev) if ev.get("actor") is not None else (tr.last[1] if tr.last else None)
            self.game.events.append(AbortiveDraw(kind=reason, seat=seat))
        self._close_hand(deltas)

    def _tenpai(self, ev: dict[str, Any], reason: str,
                deltas: tuple[int, int, int, int] | None) -> tuple[bool, bool, bool, bool]:
        flags = ev.get("tenpais")
        if flags is not None:
            if not isinstance(flags, list) or len(flags) != 4 or not all(isinstance(f, bool) for f in flags):
                raise self.fail("ryukyoku", f"tenpais must be four true/false flags, not {flags!r}")
            return (flags[0], flags[1], flags[2], flags[3])
        tehais = ev.get("tehais")
        if isinstance(tehais, list) and len(tehais) == 4:
            shown = [isinstance(h, list) and bool(h) and UNKNOWN not in h for h in tehais]
            return (shown[0], shown[1], shown[2], shown[3])
        if deltas is not None and reason == "exhaustive":
            paid = noten_payment_tenpai(deltas)
            if paid is not None:
                return paid
        # no money moved at an exhaustive draw: all four were tenpai, or none
        all_or_none = reason == "exhaustive" and deltas is not None and not any(deltas)
        return guess_tenpai(self.tracker.riichi, self.tracker.hands, all_or_none=all_or_none)

    def _close_hand(self, deltas: tuple[int, int, int, int] | None) -> None:
        if self.hand_open and self.game.hands:
            self.game.hands[-1].deltas = deltas
            self.game.hands[-1].end_event = len(self.game.events) - 1
        self.hand_open = False

    def on_end_kyoku(self, ev: dict[str, Any]) -> None:
        pass

    def on_end_game(self, ev: dict[str, Any]) -> None:
        if isinstance(ev.get("reason"), str):  # a referee ended the game (our own extension)
            self.game.events.append(EndGame(reason=ev["reason"]))
            self.hand_open = False
        scores = self.scores(ev, "scores")
        if scores is not None:
            self.game.final_scores = scores

    def finish(self) -> RecordedGame:
        self.flush_wins()
        take_up_at_first_hand(self.game)
        return self.game


def parse_mjai(text: str, source: str = "<mjai>") -> RecordedGame:
    """Read mjai JSON lines. A log cut short gives the hands up to where it stops.

    Errors name the line: JSON that does not parse, an unknown event type, a
    tile that is not an mjai tile name, a field missing or out of range.
    """
    reader = _Reader(source)
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RecordError(f"{source}: line {number}: not JSON ({exc.msg} at column {exc.colno})") from None
        bad = find_invalid_text(data)
        if bad:  # a name kept from here would fail every later export, publish and listing
            raise RecordError(f"{source}: line {number}: {bad} is not valid Unicode text (it holds a lone surrogate)")
        for ev in data if isinstance(data, list) else [data]:
            reader.feed(number, ev)
    if not reader.started:
        raise RecordError(f"{source}: no mjai events (start_game, start_kyoku ...)")
    return reader.finish()


# ====================================================================== writing


def tile_names(tiles: Sequence[Tile]) -> list[str]:
    """The tiles' mjai names, in the order given."""
    return [t.mjai for t in tiles]


def _shown(tiles: Sequence[Tile] | None) -> list[str]:
    """A hand laid down at the end, sorted as servers show it."""
    return tile_names(sorted(tiles or (), key=tenhou_order))


def export_mjai(record: RecordedGame, report: ReplayReport) -> str:
    """The game as mjai JSON lines (one event per line, compact JSON, a newline at the end)."""
    out: list[dict[str, Any]] = []
    results = HandResults(report)
    events = record.events
    # kan dora of each hand: record positions, to place them where a server reveals them
    kan_dora: list[int] = []
    hand_end: dict[int, int] = {}
    dealing = False
    current_start = -1
    for i, e in enumerate(events):
        if isinstance(e, HandStart):
            dealing, current_start = True, i
        elif isinstance(e, DoraRevealed):
            if dealing:
                dealing = False
            else:
                kan_dora.append(i)
        elif isinstance(e, Ron | Tsumo | ExhaustiveDraw | AbortiveDraw | Chombo | EndGame) and current_start >= 0:
            hand_end.setdefault(current_start, i)
    emitted: set[int] = set()
    hand_start = -1
    # kan dora owed, oldest first, each with the moment a server reveals it: "tsumo" or "discard"
    owed: list[str] = []
    hand_tiles: tuple[tuple[Tile, ...], ...] | None = None
    start_before: Before | None = None

    def reveal(index: int) -> None:
        """A server reveals the oldest owed kan dora now: the next one the record has in this hand."""
        if owed:
            owed.pop(0)
        stop = hand_end.get(hand_start, len(events))
        for j in kan_dora:
            if index <= j <= stop and j not in emitted:
                emitted.add(j)
                out.append({"type": "dora", "dora_marker": events[j].tile.mjai})  # type: ignore[attr-defined]
                return

    def open_kan() -> None:
        if owed and owed[-1] == "discard":  # a second kan before the discard: the first one's dora at the draw
            owed[-1] = "tsumo"
        owed.append("discard")

    def accepts(outputs: list[Output]) -> None:
        for o in outputs:
            if isinstance(o, RiichiAccepted):
                deltas = [0, 0, 0, 0]
                deltas[o.seat] = -1000
                out.append({"type": "reach_accepted", "actor": o.seat, "deltas": deltas, "scores": list(o.scores)})

    def tsumo(index: int, seat: int, tile: Tile | None) -> None:
        if owed and owed[0] == "tsumo":
            reveal(index)
        out.append({"type": "tsumo", "actor": seat, "pai": tile.mjai if tile else UNKNOWN})

    def end_hand(outputs: list[Output]) -> None:
        out.append({"type": "end_kyoku"})
        final = next((o for o in outputs if isinstance(o, GameResult)), None)
        if final is not None:
            final = report.final or final
            out.append({"type": "end_game", "scores": list(final.scores)})

    for step in walk(record, report):
        e, b, i = step.event, step.before, step.index
        if isinstance(e, GameStart):
            out.append({"type": "start_game", "names": list(e.players), "rules": e.rules})
            continue
        if isinstance(e, DiceRolled):
            continue
        if isinstance(e, HandStart):
            hand_start, hand_tiles, start_before = i, e.hands, b
            owed.clear()
            continue
        if isinstance(e, DoraRevealed):
            if b.phase is Phase.DEALING:
                sb = start_before or b
                tehais = ([tile_names(h) for h in hand_tiles] if hand_tiles is not None
                          else [[UNKNOWN] * 13 for _ in range(4)])
                out.append({"type": "start_kyoku", "bakaze": WINDS[(sb.round // 4) % 4], "dora_marker": e.tile.mjai,
                            "kyoku": sb.round % 4 + 1, "honba": sb.honba, "kyotaku": sb.sticks, "oya": sb.dealer,
                            "scores": list(sb.scores), "tehais": tehais})
            elif i not in emitted:  # the record reveals it before a server would
                emitted.add(i)
                if owed:
                    owed.pop(0)
                out.append({"type": "dora", "dora_marker": e.tile.mjai})
            continue
        if isinstance(e, DeadHand | SetScores):
            raise RecordError(f"{record.source}: mjai has no event for a referee's {e.type.replace('_', ' ')} "
                              f"(event {i})")
        if b.implied_draw is not None:
            accepts(step.outputs)
            guess = None
            if isinstance(e, Discard) and e.tsumogiri:
                guess = e.tile
            elif isinstance(e, Tsumo):
                guess = e.win_tile
            tsumo(i, b.implied_draw, guess)
        if isinstance(e, Draw):
            accepts(step.outputs)
            tsumo(i, e.seat, e.tile)
        elif isinstance(e, Discard):
            if e.riichi:
                out.append({"type": "reach", "actor": e.seat})
            while owed:  # an open kan's dora, just before the discard
                reveal(i)
            tsumogiri = e.tsumogiri if e.tsumogiri is not None else (b.drawn is not None and b.drawn == e.tile)
            out.append({"type": "dahai", "actor": e.seat, "pai": e.tile.mjai, "tsumogiri": bool(tsumogiri)})
        elif isinstance(e, Call):
            accepts(step.outputs)
            own = list(e.tiles)
            own.remove(e.called)
            kind = {"chi": "chi", "pon": "pon", "kan": "daiminkan"}[e.kind]
            out.append({"type": kind, "actor": e.seat, "target": e.from_seat, "pai": e.called.mjai,
                        "consumed": tile_names(own)})
            if e.kind == "kan":
                open_kan()
        elif isinstance(e, AddedKan):
            consumed = tile_names(b.pon.tiles) if b.pon is not None else [e.tile.plain.mjai] * 3
            out.append({"type": "kakan", "actor": e.seat, "pai": e.tile.mjai, "consumed": consumed})
            open_kan()
        elif isinstance(e, ConcealedKan):
            while owed:  # an open kan's dora still owed comes first
                reveal(i)
            out.append({"type": "ankan", "actor": e.seat, "consumed": tile_names(e.tiles)})
            owed.append("now")
            reveal(i)
        elif isinstance(e, Ron | Tsumo):
            result = results.next(step.outputs)
            accepts(step.outputs)
            if result is None:  # pragma: no cover - a win always ends the hand
                continue
            write_win(out, e, b, result)
            end_hand(step.outputs)
        elif isinstance(e, ExhaustiveDraw | AbortiveDraw | Chombo):
            result = results.next(step.outputs)
            accepts(step.outputs)
            if result is None:  # pragma: no cover
                continue
            write_draw(out, e, b, result)
            end_hand(step.outputs)
        elif isinstance(e, EndGame):
            final = report.final or next(o for o in step.outputs if isinstance(o, GameResult))
            out.append({"type": "end_game", "reason": e.reason or "ended by the referee", "scores": list(final.scores)})
        elif isinstance(e, TimeUp) and any(isinstance(o, GameResult) for o in step.outputs):
            # time ran out between hands with no hand left to play (the clock's other events write nothing)
            final = report.final or next(o for o in step.outputs if isinstance(o, GameResult))
            out.append({"type": "end_game", "reason": "time", "scores": list(final.scores)})
    return "".join(json.dumps(x, ensure_ascii=False, separators=(",", ":")) + "\n" for x in out)


def write_win(out: list[dict[str, Any]], e: Ron | Tsumo, b: Before, result: HandResult) -> None:
    """Append the ``hora`` lines of a win (one per winner; a triple ron that aborts is a ``ryukyoku``), given the
    state before it (:func:`tablesvc.formats.walk.capture`) and the engine's result. The file exporter and the
    live stream (:mod:`tablesvc.formats.mjai_live`) both write wins with it."""
    if result.kind != "win":  # a triple ron that aborts the hand
        claimants = {c.seat for c in e.claims} if isinstance(e, Ron) else set()
        out.append({"type": "ryukyoku", "reason": _REASON_OUT.get(result.draw or "", result.draw),
                    "tenpais": [s in claimants for s in range(4)],
                    "tehais": [_shown(b.hands[s]) if s in claimants and b.hands[s] is not None
                               else [UNKNOWN] * b.counts[s] for s in range(4)],
                    "deltas": list(result.deltas), "scores": list(result.scores)})
        return
    from_seat = e.from_seat if isinstance(e, Ron) else None
    rows = split_win_deltas(result, from_seat)
    scores = [s - d for s, d in zip(result.scores, result.deltas, strict=True)]
    for win, row in zip(result.wins, rows, strict=True):
        scores = [s + d for s, d in zip(scores, row, strict=True)]
        if isinstance(e, Ron):
            pai = b.claimed
            target = e.from_seat
        else:
            pai = e.win_tile or b.drawn
            target = e.seat
        ura = tile_names(e.ura) if b.riichi[win.seat] else []
        line = {"type": "hora", "actor": win.seat, "target": target, "pai": pai.mjai if pai else UNKNOWN,
                "ura_markers": ura, "deltas": list(row), "scores": scores}
        shown = (e.hand if isinstance(e, Tsumo)
                 else next((c.hand for c in e.claims if c.seat == win.seat), None))
        if b.hands[win.seat] is None and shown is not None and pai is not None and pai in shown:
            concealed = list(shown)  # the deal was not seen: the hand shown at the win is all there is
            concealed.remove(pai)
            line["hora_tehais"] = _shown(concealed)
        out.append(line)


def write_draw(out: list[dict[str, Any]], e: ExhaustiveDraw | AbortiveDraw | Chombo, b: Before,
                result: HandResult) -> None:
    """Append the ``ryukyoku`` line of a drawn hand (exhaustive, abortive, or a chombo), as :func:`write_win`."""
    if isinstance(e, Chombo):
        line = {"type": "ryukyoku", "reason": "chombo", "actor": e.seat}
        if e.reason:
            line["detail"] = e.reason
        out.append({**line, "deltas": list(result.deltas), "scores": list(result.scores)})
        return
    if isinstance(e, AbortiveDraw):
        line: dict[str, Any] = {"type": "ryukyoku", "reason": _REASON_OUT[e.kind]}
        if e.kind == "nine_terminals" and e.seat is not None:
            line["actor"] = e.seat
        line.update(deltas=list(result.deltas), scores=list(result.scores))
        out.append(line)
        return
    tenpai = result.tenpai or e.tenpai
    reason = _REASON_OUT["nagashi" if result.draw == "nagashi" else "exhaustive"]
    tehais = [_shown(b.hands[s]) if tenpai[s] and b.hands[s] is not None else [UNKNOWN] * b.counts[s]
              for s in range(4)]
    out.append({"type": "ryukyoku", "reason": reason, "tenpais": list(tenpai), "tehais": tehais,
                "deltas": list(result.deltas), "scores": list(result.scores)})
