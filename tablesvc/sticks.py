"""The score sticks as a second witness: the game's scores compared with the trays, as pure code.

Automatic tables keep each player's points as sticks in a tray, and a stick
tray reader (``docs/serial-protocol.md``, device kind ``sticks``) reports the
four tray totals and the riichi sticks lying on the table each time they
settle. The engine's scores are what the game says; the trays are what the
players actually paid. :class:`Reconciler` compares the two and says, in
words a referee reads aloud, where they differ ("Ben's tray holds 24,000,
the game says 25,000; Dai's 1,000 more").

It never decides who is right: a difference is an alert, and the referee
rules (the players fix their trays, or the game takes the trays' scores).
A reader that cannot be trusted (lost, trays that do not add up to the
table's points, readings that never settle) is a *fault* of the device, never
a score alert.

When a difference becomes an alert: payments take a few seconds, and a
reader reports each settled step of them, so a difference seen right after a
hand's result (or a riichi) is not raised at once. It is raised when the next
hand starts (:meth:`Reconciler.payments_over`: the payments are over by
then), or when the trays have stayed still ``grace`` seconds without agreeing
(:meth:`Reconciler.tick`). A riichi declared but not yet accepted by the
engine may have its stick on the table or still in the tray: both agree.

No clock, no I/O: every method takes ``now`` (seconds, any monotonic clock).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["RIICHI_STICK", "Difference", "Expected", "Reading", "Reconciler", "SticksStatus", "Verdict",
           "describe_differences"]

RIICHI_STICK = 1000


class SticksStatus(StrEnum):
    """Where the comparison of game and trays stands."""

    OFF = "off"  # nothing compared: no reading yet, no game, or a score no tray can show
    WAITING = "waiting"  # the trays are being paid or counted: not (yet) compared
    OK = "ok"  # the trays agree with the game
    MISMATCH = "mismatch"  # the trays and the game disagree: the referee rules
    FAULT = "fault"  # the reader cannot be trusted (lost, trays not adding up, never settling)


@dataclass(frozen=True)
class Expected:
    """What the game says the table holds after ``check`` (``"hand 3 (East 3) payments"``).

    ``riichi_pending`` is the seat whose riichi the engine has not accepted yet (its discard may still be won
    on): its stick may lie on the table already, or still be in its tray.
    """

    scores: tuple[int, int, int, int]
    sticks: int
    check: str
    players: tuple[str, str, str, str] = ("East", "South", "West", "North")
    riichi_pending: int | None = None

    @property
    def total(self) -> int:
        """Every point the game says is on the table."""
        return sum(self.scores) + RIICHI_STICK * self.sticks

    def alternatives(self) -> list[tuple[tuple[int, int, int, int], int]]:
        """The (scores, sticks) the trays may show: as the game says, and with a pending riichi's stick down."""
        found = [(self.scores, self.sticks)]
        seat = self.riichi_pending
        if seat is not None:
            scores = list(self.scores)
            scores[seat] -= RIICHI_STICK
            found.append(((scores[0], scores[1], scores[2], scores[3]), self.sticks + 1))
        return found


@dataclass(frozen=True)
class Reading:
    """One settled reading of the trays; ``at`` is when it arrived (not compared)."""

    trays: tuple[int, int, int, int]
    riichi: int
    at: float = field(default=0.0, compare=False)

    @property
    def total(self) -> int:
        return sum(self.trays) + RIICHI_STICK * self.riichi


@dataclass(frozen=True)
class Difference:
    """One seat whose tray does not hold what the game says."""

    seat: int
    name: str
    tray: int
    game: int

    @property
    def difference(self) -> int:
        """Points the tray holds more (positive) or less (negative) than the game says."""
        return self.tray - self.game


@dataclass(frozen=True)
class Verdict:
    """The comparison as it stands: what to publish, and what a referee reads."""

    status: SticksStatus
    text: str
    check: str | None = None
    reading: Reading | None = None
    expected: Expected | None = None
    differences: tuple[Difference, ...] = ()
    riichi: tuple[int, int] | None = None  # (on the table, the game says) when they differ
    fault: str | None = None


def _stick_put_down(before: Reading | None, after: Reading) -> bool:
    """``after`` is ``before`` with one seat's riichi stick moved from its tray to the table."""
    if before is None or after.riichi != before.riichi + 1:
        return False
    changed = [s for s in range(4) if after.trays[s] != before.trays[s]]
    return len(changed) == 1 and after.trays[changed[0]] == before.trays[changed[0]] - RIICHI_STICK


def _points(value: int) -> str:
    return f"{value:,}"


def _sticks(count: int) -> str:
    return f"{count} riichi stick{'' if count == 1 else 's'}"


def describe_differences(differences: Sequence[Difference], riichi: tuple[int, int] | None = None) -> str:
    """The differences as a referee says them: the first seat in full, the others by how much they are off.

    ``Ben's tray holds 24,000, the game says 25,000; Dai's 1,000 more``.
    """
    parts = []
    for i, d in enumerate(differences):
        if i == 0:
            parts.append(f"{d.name}'s tray holds {_points(d.tray)}, the game says {_points(d.game)}")
        else:
            parts.append(f"{d.name}'s {_points(abs(d.difference))} {'more' if d.difference > 0 else 'less'}")
    if riichi is not None:
        on_table, game = riichi
        lie = "lies" if on_table == 1 else "lie"
        parts.append(f"{_sticks(on_table)} {lie} on the table, the game says {game}")
    return "; ".join(parts)


class Reconciler:
    """Compares the engine's scores with settled tray readings (see the module docstring).

    Each method returns the new :class:`Verdict` when what is to be published changed, else None.

    ``grace``: seconds the trays may stay still without agreeing before the difference is raised.
    ``incomplete_limit``: settled readings in a row whose points do not add up to the table's before that is a
    fault (one or two are a payment in progress: sticks in a player's hand).
    ``flutter_readings`` within ``flutter_window`` seconds: a reader whose trays never settle (a reader reports a
    tray only once it has held still for a second, so an honest one sends at most two in two seconds); it is
    trusted again with a reading that comes ``settle`` seconds (the protocol's second) after the one before, or
    once it has been quiet ``flutter_window`` seconds: its last reading is then how the trays lie, compared as
    any settled reading.
    """

    def __init__(self, *, grace: float = 5.0, incomplete_limit: int = 3, flutter_readings: int = 5,
                 flutter_window: float = 2.0, settle: float = 1.0) -> None:
        if grace < 0 or incomplete_limit < 1 or flutter_readings < 2 or flutter_window <= 0:
            raise ValueError("grace >= 0, incomplete_limit >= 1, flutter_readings >= 2, flutter_window > 0")
        self.grace = grace
        self.incomplete_limit = incomplete_limit
        self.flutter_readings = flutter_readings
        self.flutter_window = flutter_window
        self.settle = settle
        self.expected: Expected | None = None
        self.reading: Reading | None = None
        self.verdict = Verdict(SticksStatus.OFF, "no tray reading yet")
        self._recent: deque[float] = deque()
        self._flutter: str | None = None
        self._lost: str | None = None
        self._incomplete = 0
        self._still_since: float | None = None  # the trays disagree, not raised yet: since when they are still
        self._raised: str | None = None  # the check at which the difference was raised
        self._dismissed: Reading | None = None  # the reading the referee said is wrong (the trays get fixed)
        self._expected_at = 0.0

    # ------------------------------------------------------------------ inputs

    def expect(self, expected: Expected | None, now: float) -> Verdict | None:
        """The game now says ``expected`` (after a hand's result, a riichi, a game start, a ruling); None: no game."""
        if expected is not None and self.expected is not None and expected.check == self.expected.check and (
                expected.alternatives() == self.expected.alternatives()):
            return None
        self.expected = expected
        self._expected_at = now
        self._still_since = now
        return self._evaluate(now)

    def read(self, trays: Sequence[int], riichi: int, now: float) -> Verdict | None:
        """A settled reading arrived from the reader."""
        reading = Reading((trays[0], trays[1], trays[2], trays[3]), riichi, now)
        settled = not self._recent or now - self._recent[-1] >= 0.8 * self.settle  # some leeway for the link
        if self._flutter is not None and settled:
            self._flutter = None  # it held still for its settling time: this reading is one
            self._recent.clear()
            self._incomplete = 0
        self._recent.append(now)
        while self._recent and self._recent[0] < now - self.flutter_window:
            self._recent.popleft()
        if len(self._recent) >= self.flutter_readings:
            self._flutter = (f"the tray reader sent {self.flutter_readings} or more readings in "
                             f"{self.flutter_window:g} s: its trays never settle (a loose contact, a stick half in "
                             "its slot?)")
        self.reading = reading
        self._still_since = now
        expected = self.expected
        if expected is not None and min(expected.scores) >= 0 and reading.total != expected.total:
            self._incomplete += 1
        else:
            self._incomplete = 0  # adds up, or cannot (a score below zero is in no tray): no sign of a misread
        return self._evaluate(now)

    def payments_over(self, now: float) -> Verdict | None:
        """The next hand starts: whatever still disagrees is raised now (a mismatch, or a fault when the trays
        do not add up)."""
        if self.verdict.status is SticksStatus.WAITING and self._dismissed is None:
            if self._incomplete:
                self._incomplete = max(self._incomplete, self.incomplete_limit)
            self._still_since = now - self.grace
        return self._evaluate(now)

    def tick(self, now: float) -> Verdict | None:
        """Time passes: a difference held still for ``grace`` is raised; a reader that settled is trusted again."""
        if self._flutter is not None and (not self._recent or self._recent[-1] < now - self.flutter_window):
            # quiet for longer than its settling time: the last reading of the burst is how the trays lie now (a
            # reader sends nothing more until they change), so it is compared, not thrown away
            last = self._recent[-1] if self._recent else now
            self._flutter = None
            self._recent.clear()
            self._still_since = last
            expected, reading = self.expected, self.reading
            self._incomplete = int(expected is not None and reading is not None and min(expected.scores) >= 0
                                   and reading.total != expected.total)
        return self._evaluate(now)

    def lost(self, reason: str, now: float) -> Verdict | None:
        """The reader is gone (its link is silent or unplugged)."""
        self._lost = reason
        return self._evaluate(now)

    def found(self, now: float) -> Verdict | None:
        """The reader speaks again."""
        self._lost = None
        return self._evaluate(now)

    def dismiss(self, now: float) -> Verdict | None:
        """The referee rules the sticks wrong: the players fix their trays, and the next reading is compared."""
        self._raised = None
        self._dismissed = self.reading
        return self._evaluate(now)

    def recheck(self, now: float) -> Verdict | None:
        """The referee asks for a fresh comparison with the latest reading (raised again only after the grace)."""
        self._raised = None
        self._dismissed = None
        self._still_since = now
        self._incomplete = 0
        return self._evaluate(now)

    # ------------------------------------------------------------------ the comparison

    def _evaluate(self, now: float) -> Verdict | None:
        verdict = self._compare(now)
        if verdict == self.verdict:
            return None
        self.verdict = verdict
        return verdict

    def _compare(self, now: float) -> Verdict:
        expected, reading = self.expected, self.reading
        check = expected.check if expected is not None else None
        fault = self._lost or self._flutter
        if fault is not None:
            return Verdict(SticksStatus.FAULT, fault, check, reading, expected, fault=fault)
        if reading is None:
            return Verdict(SticksStatus.OFF, "no tray reading yet", check, None, expected)
        if expected is None:
            return Verdict(SticksStatus.OFF, "no game to compare the trays with", None, reading)
        below = [expected.players[s] for s in range(4) if expected.scores[s] < 0]
        if below:
            return Verdict(SticksStatus.OFF, f"not compared: {', '.join(below)} below zero, which no tray can show",
                           check, reading, expected)
        if reading.total != expected.total:
            text = (f"the trays hold {_points(sum(reading.trays))} and {_sticks(reading.riichi)} lie on the table, "
                    f"{_points(reading.total)} in all; the game has {_points(expected.total)} on the table")
            if self._incomplete >= self.incomplete_limit:
                fault = f"{text}: a stick is missing or misread"
                return Verdict(SticksStatus.FAULT, fault, check, reading, expected, fault=fault)
            return Verdict(SticksStatus.WAITING, f"{text} (sticks being paid?)", check, reading, expected)
        differences, riichi = self._differences(expected, reading)
        if not differences and riichi is None:
            self._raised = None
            self._dismissed = None
            return Verdict(SticksStatus.OK, f"the trays agree with the game after {check}", check, reading, expected)
        if (self._raised is not None and reading.at < self._expected_at and self.verdict.status is
                SticksStatus.MISMATCH):
            return self.verdict  # the game moved on, the trays not yet paid: the alert stands as it was raised
        if self._raised is not None and self.verdict.status is SticksStatus.MISMATCH and _stick_put_down(
                self.verdict.reading, reading):
            # a player put a riichi stick down before the engine heard the riichi: that is no new difference, so
            # the alert stands as it was raised instead of naming the declaring seat
            return self.verdict
        if self._dismissed is not None and self._dismissed == reading:
            return Verdict(SticksStatus.WAITING, "the referee ruled the sticks wrong: waiting for the players to "
                           "fix their trays", check, reading, expected, differences, riichi)
        self._dismissed = None
        if self._raised is None and self._still_since is not None and now - self._still_since >= self.grace:
            self._raised = check
        if self._raised is None:
            return Verdict(SticksStatus.WAITING, f"the trays differ from the game after {check} (sticks being "
                           "paid?)", check, reading, expected, differences, riichi)
        text = f"{describe_differences(differences, riichi)} (after {self._raised})"
        return Verdict(SticksStatus.MISMATCH, text, self._raised, reading, expected, differences, riichi)

    @staticmethod
    def _differences(expected: Expected, reading: Reading) -> tuple[tuple[Difference, ...], tuple[int, int] | None]:
        """The differences of the alternative that explains the reading best. Each is said in the game's own
        scores: where the pending riichi's stick is down, that seat's tray is counted with its stick (never "the
        game says" a score the game does not have)."""
        best: tuple[tuple[Difference, ...], tuple[int, int] | None] | None = None
        for scores, sticks in expected.alternatives():
            down = [RIICHI_STICK if scores[s] != expected.scores[s] else 0 for s in range(4)]
            differences = tuple(Difference(s, expected.players[s], reading.trays[s] + down[s], expected.scores[s])
                                for s in range(4) if reading.trays[s] != scores[s])
            riichi = (reading.riichi, sticks) if reading.riichi != sticks else None
            if best is None or len(differences) + (riichi is not None) < len(best[0]) + (best[1] is not None):
                best = (differences, riichi)
        assert best is not None
        return best
