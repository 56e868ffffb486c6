"""Play a recorded game through the engine and compare it with what the record says.

Used by ``tablesvc replay`` and by the tests that prove the engine on real
games: every hand's start (round, counters, sticks, dealer, scores) and every
hand's deltas must equal the record's; the final scores too.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import replace as _replace
from pathlib import Path
from typing import Protocol

from tablesvc.archive import is_journal, load_game, to_record
from tablesvc.engine.engine import Engine, Rejected
from tablesvc.engine.events import (
    AbortEntry,
    AbortiveDraw,
    ChomboEntry,
    DrawEntry,
    EnteredWin,
    Event,
    GameStart,
    HandStart,
    Ron,
    ScoreSheet,
    WinEntry,
    red_five_in,
)
from tablesvc.engine.results import GameResult, HandResult, WinResult, round_name
from tablesvc.engine.state import GameState
from tablesvc.formats.mjai import parse_mjai
from tablesvc.formats.mjlog import parse_mjlog
from tablesvc.formats.record import RecordedGame, RecordError, ReplayReport
from tablesvc.formats.tenhou6 import parse_tenhou6
from tablesvc.rules.ruleset import PRESETS, UnknownRuleSetError, get_ruleset
from tablesvc.rules.scoring import yaku_key
from tablesvc.storage.journal import JournalError

__all__ = ["KNOWN_LOBBY_RULES", "LobbyRule", "Mismatch", "Refused", "ReplayReport", "ReplayWatch",
           "explain_by_lobby_rules", "load_record", "replay", "replay_results", "result_entries"]


class ReplayWatch(Protocol):
    """Sees each state of a replay: before an event, and after it with what the engine concluded."""

    def before(self, state: GameState, event: Event) -> None: ...

    def after(self, state: GameState, index: int, event: Event, outputs: list) -> None: ...


class Mismatch(AssertionError):
    """The engine and the record disagree; the message names the hand and both values.

    ``report`` holds what was played up to the disagreement (the hands before it), so that a caller can
    still show them.
    """

    def __init__(self, message: str, report: ReplayReport | None = None) -> None:
        super().__init__(message)
        self.report = report


class Refused(Mismatch):
    """The engine refused one of the record's events: the replay stops there (strict or not); ``report``
    holds every hand played before it."""


def load_record(path: str | Path, fmt: str | None = None) -> RecordedGame:
    """Read a game file in any supported format (detected from the content unless ``fmt`` says)."""
    p = Path(path)
    if fmt in (None, "journal") and is_journal(p):  # a table's journal (tablesvc games): as the service played it
        try:
            return to_record(load_game(p))
        except JournalError as exc:
            raise RecordError(str(exc)) from None
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"cannot read {p}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise RecordError(f"{p} is not a text file") from None
    kind = fmt or _detect(text)
    if kind == "mjlog":
        return parse_mjlog(text, str(p))
    if kind == "mjai":
        return parse_mjai(text, str(p))
    if kind == "tenhou6":
        return parse_tenhou6(text, str(p))
    raise RecordError(f"{p}: unknown format {kind!r} (mjlog, mjai or tenhou6)")


def _detect(text: str) -> str:
    head = text.lstrip()[:200]
    if head.startswith("<"):
        return "mjlog"
    if head.startswith("{") and '"log"' in text[:100000] and '"type"' not in head[:40]:
        return "tenhou6"
    return "mjai"


def replay(record: RecordedGame, *, strict: bool = False, rules: str | None = None,
           watch: ReplayWatch | None = None) -> ReplayReport:
    """Play ``record``; with ``strict`` raise :class:`Mismatch` at the first disagreement.

    ``watch`` sees every state of the one engine that plays the record, before and after each event (the
    analysis of ``replay --analysis`` reads them there, with no second engine).

    Without ``strict`` disagreements are collected in the report. An event
    the engine refuses always stops the replay with the engine's reason. A
    record with red fives under rules without them is refused before it
    starts (:class:`RecordError`), naming the presets that have them.
    """
    engine = Engine()
    report = ReplayReport(record=record, state=engine.state)
    hand_index = -1
    events: list[Event] = record.events
    if rules is not None:
        events = [_replace(e, rules=rules) if isinstance(e, GameStart) else e for e in events]
    _check_red_fives(record, events)

    def disagree(message: str) -> None:
        if strict:
            report.state = engine.state
            raise Mismatch(message, report)
        report.mismatches.append(message)

    for index, event in enumerate(events):
        if isinstance(event, HandStart):
            hand_index += 1
            if hand_index < len(record.hands):
                _check_start(engine.state, record.hands[hand_index], disagree)
        if watch is not None:
            watch.before(engine.state, event)
        try:
            outputs = engine.apply(event)
        except Rejected as exc:
            report.state = engine.state
            where = _where(record, hand_index)
            raise Refused(f"{where}: event {index} ({event.type}) refused: {exc}", report) from None
        if watch is not None:
            watch.after(engine.state, index, event, outputs)
        for out in outputs:
            if isinstance(out, HandResult):
                report.hands.append(out)
                if 0 <= hand_index < len(record.hands):
                    expected = record.hands[hand_index].deltas
                    if expected is not None and tuple(expected) != out.deltas:
                        disagree(f"{_where(record, hand_index)}: deltas {list(out.deltas)}, "
                                 f"record says {list(expected)}")
            elif isinstance(out, GameResult):
                report.final = out
    report.state = engine.state
    if report.final is None and record.final_scores is not None:
        disagree(f"the record ends the game after {_where(record, hand_index)} but the engine would play on")
    if report.final is None:
        report.stopped = _stopped(record, hand_index, engine.state)
    elif record.final_scores is not None and tuple(record.final_scores) != report.final.scores:
        disagree(f"final scores {list(report.final.scores)}, record says {list(record.final_scores)}")
    if report.final is not None and record.final_scores is None and record.hands and hand_index + 1 < len(
            record.hands):
        disagree(f"the engine ended the game after {_where(record, hand_index)} but the record goes on")
    return report


def _check_red_fives(record: RecordedGame, events: list[Event]) -> None:
    """A record with red fives cannot be played under rules without them; say so, and which presets have them."""
    start = next((e for e in events if isinstance(e, GameStart)), None)
    if start is None:
        return
    try:
        ruleset = get_ruleset(start.rules)
    except UnknownRuleSetError:
        return  # the engine refuses the start_game with the reason
    if ruleset.red_fives:
        return
    hand = 0
    for index, event in enumerate(events):
        hand += isinstance(event, HandStart)
        red = red_five_in(event)
        if red is not None:
            where = f"hand {hand}, event {index} ({event.type})" if hand else f"event {index} ({event.type})"
            having = ", ".join(name for name, preset in PRESETS.items() if preset.red_fives)
            raise RecordError(f"{record.source}: the record uses red fives ({red.mjai} at {where}) and "
                              f"{ruleset.name} plays without them: replay it under a rule set that has red fives "
                              f"({having}; --rules chooses)")


def _check_start(state: GameState, expected, disagree) -> None:
    got = (state.round, state.honba, state.sticks, state.dealer, tuple(state.scores))
    want = (expected.round, expected.honba, expected.sticks, expected.dealer, tuple(expected.scores))
    if got != want:
        disagree(f"hand {round_name(expected.round)}-{expected.honba}: engine starts it at round "
                 f"{round_name(got[0])}, {got[1]} counters, {got[2]} sticks, dealer seat {got[3]}, scores "
                 f"{list(got[4])}; record says {round_name(want[0])}, {want[1]} counters, {want[2]} sticks, "
                 f"dealer seat {want[3]}, scores {list(want[4])}")


def _where(record: RecordedGame, hand_index: int) -> str:
    if 0 <= hand_index < len(record.hands):
        h = record.hands[hand_index]
        return f"hand {hand_index + 1} ({round_name(h.round)}-{h.honba})"
    return "before the first hand"


def _stopped(record: RecordedGame, hand_index: int, state: GameState) -> str:
    if state.hand is not None:
        return f"the record ends in the middle of {_where(record, hand_index)}, before its result"
    return f"the record ends after {_where(record, hand_index)}, before the end of the game"


@dataclass(frozen=True)
class LobbyRule:
    """A rule some lobbies or tournament rooms play that the presets do not: a house-rule switch and what it
    means, so that a record played under it can be named and replayed exactly (``--rules "tenhou; ..."``)."""

    switch: str
    value: str
    meaning: str


KNOWN_LOBBY_RULES: tuple[LobbyRule, ...] = (
    LobbyRule("kiriage", "yes", "4 han 30 fu and 3 han 60 fu rounded up to mangan"),
    LobbyRule("dealer_stops_when_top", "no", "the dealer keeps the deal in the last hand even when first"),
    LobbyRule("dealer_keeps_deal", "no", "the deal passes after every hand"),
)


def explain_by_lobby_rules(record: RecordedGame, played: str) -> tuple[str, LobbyRule] | None:
    """The rule set (``played`` with one known lobby rule added) under which ``record`` replays exactly, every
    hand and the final scores, and that rule; None when no single known rule explains the difference."""
    try:
        base = get_ruleset(played)
    except UnknownRuleSetError:
        return None
    for rule in KNOWN_LOBBY_RULES:
        if base.switch_text(rule.switch) == rule.value:
            continue  # already played so
        text = f"{played}; {rule.switch}={rule.value}"
        try:
            get_ruleset(text)
            report = replay(record, strict=True, rules=text)
        except (Mismatch, RecordError, UnknownRuleSetError):
            continue
        if report.final is not None or report.stopped is not None:
            return get_ruleset(text).name, rule
    return None


# ------------------------------------------------------------------ the game as a score sheet

#: The situations a winner ticks on a score sheet (the tiles cannot show them), by the yaku that says so.
_FLAG_BY_YAKU = {"daburu_riichi": "double_riichi", "ippatsu": "ippatsu", "haitei": "haitei", "houtei": "houtei",
                 "rinshan": "rinshan", "chankan": "chankan", "tenhou": "tenhou", "chiihou": "chiihou",
                 "renhou": "renhou", "renhou_yakuman": "renhou"}


def result_entries(record: RecordedGame, played: list[HandResult], rules: str | None = None) -> list[Event]:
    """The game as a score sheet holds it: its start, then each hand's result alone (the winners' hands as
    shown with what the tiles cannot show, the dealer-in, the tenpai seats of a draw, the nagashi seats, the
    riichi declarations). ``played`` are the hands the record's tile-level replay ended with, in order: where
    the result came from, never what it moved (the entries are settled afresh)."""
    start = next((e for e in record.events if isinstance(e, GameStart)), None)
    if start is None:
        raise RecordError(f"{record.source}: the record has no start of game")
    if rules is not None:
        start = _replace(start, rules=rules)
    events: list[Event] = [start, ScoreSheet()]
    for index, hand in enumerate(played):
        end = record.hands[index].end_event if index < len(record.hands) else None
        ending = record.events[end] if end is not None else None
        events.append(_entry(hand, ending))
    return events


def _entry(hand: HandResult, ending: Event | None) -> Event:
    riichi = tuple(hand.deposits)
    if hand.kind == "chombo":
        return ChomboEntry(seat=hand.chombo or 0)
    if hand.draw == "nagashi":
        tenpai = hand.tenpai or (False, False, False, False)
        return DrawEntry(tenpai=tenpai, riichi=riichi, nagashi=tuple(s for s in range(4) if hand.deltas[s] > 0))
    if hand.kind == "win":
        return WinEntry(wins=tuple(_entered_win(w, riichi) for w in hand.wins), from_seat=hand.wins[0].from_seat,
                        riichi=riichi, dora=hand.dora, ura=hand.ura)
    if hand.kind == "exhaustive_draw":
        return DrawEntry(tenpai=hand.tenpai or (False, False, False, False), riichi=riichi)
    if hand.draw == "triple_ron" and isinstance(ending, Ron):
        return WinEntry(wins=tuple(EnteredWin(seat=c.seat) for c in ending.claims), from_seat=ending.from_seat,
                        riichi=riichi)
    seat = ending.seat if isinstance(ending, AbortiveDraw) else None
    return AbortEntry(kind=hand.draw or "", seat=seat, riichi=riichi)


def _entered_win(win: WinResult, riichi: tuple[int, ...]) -> EnteredWin:  # noqa: ARG001 - riichi is the entry's
    flags = {_FLAG_BY_YAKU[key]: True for key in (yaku_key(name) for name, _ in win.yaku) if key in _FLAG_BY_YAKU}
    melds = tuple(f"{m.kind}:{''.join(t.compact for t in m.tiles)}" for m in win.melds)
    return EnteredWin(seat=win.seat, hand=win.hand, win_tile=win.win_tile, melds=melds, pao=win.pao, **flags)


def replay_results(record: RecordedGame, *, strict: bool = False, rules: str | None = None) -> ReplayReport:
    """Play ``record`` from its hand results alone (:func:`result_entries`) and compare every hand's deltas
    and start, and the final scores, with the record's own; :class:`Mismatch` with ``strict``, as
    :func:`replay`."""
    tiles = replay(record, strict=strict, rules=rules)
    engine = Engine()
    report = ReplayReport(record=record, state=engine.state, stopped=tiles.stopped)

    def disagree(message: str) -> None:
        if strict:
            report.state = engine.state
            raise Mismatch(message, report)
        report.mismatches.append(message)

    hand_index = -1
    for event in result_entries(record, tiles.hands, rules):
        is_entry = not isinstance(event, GameStart | ScoreSheet)
        if is_entry:
            hand_index += 1
            if hand_index < len(record.hands):
                _check_start(engine.state, record.hands[hand_index], disagree)
        try:
            outputs = engine.apply(event)
        except Rejected as exc:
            report.state = engine.state
            raise Refused(f"{_where(record, hand_index)}: the entry ({event.type}) is refused: {exc}",
                          report) from None
        for out in outputs:
            if isinstance(out, HandResult):
                report.hands.append(out)
                expected = record.hands[hand_index].deltas if hand_index < len(record.hands) else None
                if expected is not None and tuple(expected) != out.deltas:
                    disagree(f"{_where(record, hand_index)}: deltas {list(out.deltas)}, record says {list(expected)}")
            elif isinstance(out, GameResult):
                report.final = out
    report.state = engine.state
    if report.final is None and record.final_scores is not None:
        disagree(f"the record ends the game after {_where(record, hand_index)} but the entries play on")
    elif report.final is not None and record.final_scores is not None and \
            tuple(record.final_scores) != report.final.scores:
        disagree(f"final scores {list(report.final.scores)}, record says {list(record.final_scores)}")
    if report.final is not None and tiles.final is not None and \
            [s.seat for s in report.final.standings] != [s.seat for s in tiles.final.standings]:
        disagree("the final ranking differs from the tile-level replay's")
    return report
