"""A live table: the engine's state as the fold of a journal, with corrections.

:meth:`Table.submit` checks an event with the engine, writes it to the
journal, and only then returns what the engine concluded, so nothing is
published that a crash could lose. Corrections are journal entries too:
``undo`` takes back the last N game events, ``amend`` replaces one ("that
discard was 6p, not 5p"); the state is then refolded from the start, and a
correction that would make the game impossible is refused like any event.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from tablesvc.engine.engine import Engine, Rejected
from tablesvc.engine.events import Event, EventFormatError, from_dict, to_dict
from tablesvc.engine.results import GameResult, HandResult, Output
from tablesvc.engine.state import GameState
from tablesvc.storage.journal import Entry, Journal, JournalError

__all__ = ["Accepted", "ResultSeqs", "Table"]


@dataclass(frozen=True)
class Accepted:
    """An event or correction that is now in the journal, and what followed from it."""

    seq: int
    outputs: list[Output]


@dataclass
class ResultSeqs:
    """The journal seq of the event that ended each finished hand (in the order of ``GameState.results``) and
    the game (``final``): a result keeps its own seq wherever it is published again."""

    hands: list[int]
    final: int | None = None

    def note(self, seq: int, outputs: list[Output]) -> None:
        for output in outputs:
            if isinstance(output, HandResult):
                self.hands.append(seq)
            elif isinstance(output, GameResult):
                self.final = seq


class Table:
    """One table's game, folded from its journal."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self._effective: list[tuple[int, Event]] = []  # (journal seq, event) after corrections
        try:
            entries = list(journal.entries())
        except (sqlite3.DatabaseError, ValueError) as exc:  # quick_check passed, yet a row cannot be read
            raise journal.damaged(f"an entry cannot be read: {exc}") from None
        try:
            self._effective = self._resolve(entries)
            self.engine, self.result_seqs = self._fold(self._effective, startup=True)
        except (JournalError, Rejected) as exc:  # an entry that is no event, or a game the engine refuses
            raise journal.damaged(f"it does not fold into a game: {exc}") from None

    @property
    def state(self) -> GameState:
        return self.engine.state

    @property
    def events(self) -> list[Event]:
        """The game as it stands after corrections."""
        return [e for _, e in self._effective]

    def submit(self, event: Event, *, source: str, ts: float, command: tuple[str, str] | None = None) -> Accepted:
        """Apply and journal one event; :class:`Rejected` leaves both untouched. ``command`` is the referee
        command's (transaction key, digest), journalled with it."""
        backup = self.engine.state.clone()
        outputs = self.engine.apply(event)  # raises Rejected with the state unchanged
        try:
            seq = self.journal.append(event.type, to_dict(event), source=source, ts=ts, command=command)
        except Exception:
            self.engine.state = backup  # not durable: as if it never happened
            raise
        self._effective.append((seq, event))
        self.result_seqs.note(seq, outputs)
        return Accepted(seq, outputs)

    def undo(self, count: int = 1, *, source: str, ts: float, command: tuple[str, str] | None = None) -> Accepted:
        """Take back the last ``count`` game events (not the game start)."""
        if count < 1:
            raise Rejected("undo takes back at least one event")
        if count >= len(self._effective):
            raise Rejected(f"only {len(self._effective) - 1} event(s) can be undone")
        return self._correct("undo", {"count": count}, self._effective[:-count], source=source, ts=ts,
                             command=command)

    def amend(self, seq: int, event: Event, *, source: str, ts: float,
              command: tuple[str, str] | None = None) -> Accepted:
        """Replace the event journalled as ``seq`` and replay the rest after it."""
        index = next((i for i, (s, _) in enumerate(self._effective) if s == seq), None)
        if index is None:
            raise Rejected(f"there is no event {seq} in the game as it stands")
        effective = [*self._effective[:index], (seq, event), *self._effective[index + 1:]]
        return self._correct("amend", {"seq": seq, "event": to_dict(event)}, effective, source=source, ts=ts,
                             command=command)

    def _correct(self, kind: str, body: dict[str, Any], effective: list[tuple[int, Event]], *, source: str,
                 ts: float, command: tuple[str, str] | None = None) -> Accepted:
        engine, result_seqs = self._fold(effective)  # raises Rejected when the corrected game is impossible
        seq = self.journal.append(kind, body, source=source, ts=ts, command=command)
        self._effective = effective
        self.engine, self.result_seqs = engine, result_seqs
        return Accepted(seq, [])

    @staticmethod
    def _resolve(entries: list[Entry]) -> list[tuple[int, Event]]:
        effective: list[tuple[int, Event]] = []
        for entry in entries:
            try:
                if entry.kind == "undo":
                    del effective[len(effective) - int(entry.body["count"]):]
                elif entry.kind == "amend":
                    target = int(entry.body["seq"])
                    event = from_dict(entry.body["event"])
                    effective = [(s, event if s == target else e) for s, e in effective]
                else:
                    effective.append((entry.seq, from_dict(entry.body)))
            except (EventFormatError, KeyError, TypeError, ValueError) as exc:
                raise JournalError(f"journal entry {entry.seq} ({entry.kind}, from {entry.source}) cannot be "
                                   f"read: {exc}") from None
        return effective

    @staticmethod
    def _fold(effective: list[tuple[int, Event]], *, startup: bool = False) -> tuple[Engine, ResultSeqs]:
        engine = Engine()
        seqs = ResultSeqs([])
        for seq, event in effective:
            try:
                seqs.note(seq, engine.apply(event))
            except Rejected as exc:
                when = "journal entry" if startup else "after the correction, event"
                raise Rejected(f"{when} {seq} ({event.type}) is impossible: {exc}") from None
        return engine, seqs
