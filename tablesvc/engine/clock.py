"""A game's tournament clock, as the engine folds it from the clock events.

The engine keeps no time: a clock is a deadline written in its
``clock_start`` event (the service turns "75 minutes" into a wall-clock
deadline when it receives the command), moved by ``clock_extend``, and time
runs out only when a ``time_up`` event says so (the service's timer sends it
at the deadline, a referee may send it by hand). From then on the clock
counts the hands left (:func:`~tablesvc.rules.game_end.hands_after_time`),
and the hand that uses up the last one ends the game on time. So a journal
replayed after a restart gives the same clock, and a test plays a game on
time without waiting.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from tablesvc.rules.game_end import MAX_MORE_HANDS, TimeRule, hands_after_time

__all__ = ["MAX_MINUTES", "Clock", "ClockError", "parse_deadline"]

#: The longest guaranteed time (and the most a referee adds at once), in minutes: a whole day.
MAX_MINUTES = 24 * 60


class ClockError(ValueError):
    """A clock event that does not fit the clock as it stands; the message is for a referee."""


def parse_deadline(text: str) -> float:
    """A deadline written as the feed writes times (ISO 8601 with a zone, e.g. ``2026-11-26T12:00:00.000Z``)
    as seconds since the epoch; ClockError says what a deadline looks like."""
    try:
        when = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        raise ClockError(f"deadline {text!r} is not a time like 2026-11-26T12:00:00.000Z") from None
    if when.tzinfo is None:
        raise ClockError(f"deadline {text!r} has no time zone: end it with Z (UTC) or an offset like +01:00")
    return when.timestamp()


@dataclass(frozen=True)
class Clock:
    """One game's clock. ``deadline`` is when the guaranteed time ends (epoch seconds; ``None`` for a time-up a
    referee called without a clock running). ``hands_left`` is None while time runs, then the hands still to
    be played, the one in play counted."""

    deadline: float | None
    minutes: int
    rule: TimeRule = TimeRule.EMA
    more_hands: int = 0
    extended: int = 0  # minutes referees added
    added: int = 0  # hands referees added
    hands_left: int | None = None

    @classmethod
    def start(cls, minutes: int, deadline: str, rule: str, more_hands: int) -> Clock:
        if not 1 <= minutes <= MAX_MINUTES:
            raise ClockError(f"a guaranteed time of {minutes} minutes; 1 to {MAX_MINUTES}")
        try:
            time_rule = TimeRule.named(rule)
        except ValueError as exc:
            raise ClockError(str(exc)) from None
        if time_rule is TimeRule.MORE_HANDS and not 1 <= more_hands <= MAX_MORE_HANDS:
            raise ClockError(f"the rule more_hands plays 1 to {MAX_MORE_HANDS} hands after time, not {more_hands}")
        if time_rule is not TimeRule.MORE_HANDS and more_hands:
            raise ClockError(f"more_hands is given only with the rule more_hands, not with {rule}")
        return cls(deadline=parse_deadline(deadline), minutes=minutes, rule=time_rule, more_hands=more_hands)

    @property
    def time_up(self) -> bool:
        return self.hands_left is not None

    def remaining(self, now: float) -> float | None:
        """Seconds of guaranteed time left at ``now`` (0 once it is over); None without a deadline."""
        if self.deadline is None:
            return None
        return 0.0 if self.time_up else max(0.0, self.deadline - now)

    def due(self, now: float) -> bool:
        """The deadline has passed and no time-up has been recorded yet: the service sends ``time_up``."""
        return not self.time_up and self.deadline is not None and now >= self.deadline

    def extend(self, minutes: int) -> Clock:
        """``minutes`` more. After time was up the clock runs again to the moved deadline (and a new time-up
        follows when that has passed too): the hands counted since are forgotten."""
        if not 1 <= minutes <= MAX_MINUTES:
            raise ClockError(f"an extension of {minutes} minutes; 1 to {MAX_MINUTES}")
        if self.deadline is None:
            raise ClockError("this game's time-up was called without a clock: add a hand instead")
        return replace(self, deadline=self.deadline + 60 * minutes, extended=self.extended + minutes,
                       hands_left=None)

    def add_hand(self) -> Clock:
        """One more hand after time (counted at once if time is already up)."""
        if self.added >= MAX_MORE_HANDS:
            raise ClockError(f"{self.added} hands were already added; at most {MAX_MORE_HANDS}")
        return replace(self, added=self.added + 1,
                       hands_left=self.hands_left + 1 if self.hands_left is not None else None)

    def expire(self, hand_in_play: bool) -> Clock:
        """Time is up: the hands still to be played by the rule, plus those referees added."""
        if self.time_up:
            raise ClockError("time is already up")
        return replace(self, hands_left=hands_after_time(self.rule, hand_in_play, self.more_hands) + self.added)

    def hand_in_play_at_time_up(self) -> Clock:
        """Time was up between hands, and the hand then entered by its result turns out to have been in play
        (a table entering results is always playing a hand): one more hand to play, as :meth:`expire` with
        ``hand_in_play`` would have counted."""
        if self.hands_left is None:
            raise ClockError("time is not up")
        return replace(self, hands_left=self.hands_left + 1)

    def hand_played(self) -> Clock:
        """A hand (not a chombo's, which is replayed) has ended; after time it uses up one of those left."""
        if self.hands_left is None:
            return self
        return replace(self, hands_left=max(0, self.hands_left - 1))

    @property
    def over(self) -> bool:
        """Time is up and no hand is left to play: the game ends on time."""
        return self.hands_left == 0
