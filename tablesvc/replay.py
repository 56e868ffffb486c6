"""Play a recorded game through the engine and compare it with what the record says.

Used by ``tablesvc replay`` and by the tests that prove the engine on real
games: every hand's start (round, counters, sticks, dealer, scores) and every
hand's deltas must equal the record's; the final scores too.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields, is_dataclass
from dataclasses import replace as _replace
from pathlib import Path

from tablesvc.archive import is_journal, load_game, to_record
from tablesvc.engine.engine import Engine, Rejected
from tablesvc.engine.events import Event, GameStart, HandStart
from tablesvc.engine.results import GameResult, HandResult, round_name
from tablesvc.engine.state import GameState
from tablesvc.formats.mjai import parse_mjai
from tablesvc.formats.mjlog import parse_mjlog
from tablesvc.formats.record import RecordedGame, RecordError, ReplayReport
from tablesvc.formats.tenhou6 import parse_tenhou6
from tablesvc.rules.ruleset import PRESETS, UnknownRuleSetError, get_ruleset
from tablesvc.storage.journal import JournalError
from tablesvc.tiles import Tile

__all__ = ["KNOWN_LOBBY_RULES", "LobbyRule", "Mismatch", "Refused", "ReplayReport", "explain_by_lobby_rules",
           "load_record", "replay"]


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


def replay(record: RecordedGame, *, strict: bool = False, rules: str | None = None) -> ReplayReport:
    """Play ``record``; with ``strict`` raise :class:`Mismatch` at the first disagreement.

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
        try:
            outputs = engine.apply(event)
        except Rejected as exc:
            report.state = engine.state
            where = _where(record, hand_index)
            raise Refused(f"{where}: event {index} ({event.type}) refused: {exc}", report) from None
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
        red = next((t for t in _tiles_of(event) if t.red), None)
        if red is not None:
            where = f"hand {hand}, event {index} ({event.type})" if hand else f"event {index} ({event.type})"
            having = ", ".join(name for name, preset in PRESETS.items() if preset.red_fives)
            raise RecordError(f"{record.source}: the record uses red fives ({red.mjai} at {where}) and "
                              f"{ruleset.name} plays without them: replay it under a rule set that has red fives "
                              f"({having}; --rules chooses)")


def _tiles_of(value: object) -> Iterator[Tile]:
    """Every tile an event (or a part of one) holds."""
    if isinstance(value, Tile):
        yield value
    elif isinstance(value, tuple | list):
        for v in value:
            yield from _tiles_of(v)
    elif is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            yield from _tiles_of(getattr(value, f.name))


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
