"""The tournament's data as dataclasses: what the store keeps and every other module reads.

Players are numbered from 1 in the order they were entered; a seating names
players by number, four per table in seat order East, South, West, North.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

__all__ = [
    "HallTable",
    "Penalty",
    "PenaltyKind",
    "Player",
    "PlayerStatus",
    "Round",
    "RoundStatus",
    "Seating",
    "SeatingMethod",
    "TieBreak",
    "Tournament",
    "TournamentError",
    "check_time_rule",
]


class TournamentError(ValueError):
    """A tournament action refused; the message names the row, player, table or round and says why."""


def check_time_rule(text: str | None) -> str | None:
    """The rule at the end of a round's time as the tournament records it: ``ema`` (finish the hand in play,
    then one more), ``finish_hand``, or ``more_hands:N``."""
    if text is None:
        return None
    rule, _, more = text.partition(":")
    if rule not in ("ema", "finish_hand", "more_hands") or (rule == "more_hands") != bool(more) or \
            (more and not (more.isdigit() and 0 < int(more) <= 20)):
        raise TournamentError(f"time rule {text!r}: ema, finish_hand or more_hands:N (N from 1 to 20)")
    return text


class PlayerStatus(Enum):
    ACTIVE = "active"
    WITHDRAWN = "withdrawn"  # left the tournament: keeps the games played, seated no more
    SUBSTITUTE = "substitute"  # a replacement player: plays, is reported, is not ranked (EMA)


class RoundStatus(Enum):
    SEATED = "seated"  # a seating is there, the tables have not been started
    STARTED = "started"  # start_game was sent to every table
    FINISHED = "finished"  # closed by the organiser: nothing more is changed in it


class PenaltyKind(Enum):
    PENALTY = "penalty"  # points off the player's total
    WARNING = "warning"  # recorded and shown, no points


class SeatingMethod(Enum):
    """How a round's seating is made (Pantheon's four)."""

    SHUFFLED = "shuffled"  # optimised: no repeat meetings while possible, winds balanced, clubs apart, top table
    SWISS = "swiss"  # by standing: the leading four together, the next four ...
    INTERVAL = "interval"  # by standing, spread: table k gets places k, k+T, k+2T, k+3T
    FILE = "file"  # prescripted: read from a CSV file


class TieBreak(Enum):
    """How two players with the same total are ordered (the organiser chooses; announced before the day)."""

    PLACES = "places"  # more firsts, then more seconds, then more thirds
    AVERAGE_PLACE = "average_place"  # the better average place
    BEST_GAME = "best_game"  # the higher single game result
    SHARED = "shared"  # ties stand: both get the same place


@dataclass(frozen=True)
class Tournament:
    name: str
    rules: str  # the rule set sent in start_game ("ema2016" or with house rules)
    rounds: int
    tie_break: TieBreak = TieBreak.PLACES
    separate_clubs: bool = False
    top_table: bool = False  # keep the leading four at the first table (the stream's) from round 2 on
    time_rule: str | None = None  # the clock's rule at the end of time ("ema", "finish_hand", "hands:N"); recorded
    minutes: int | None = None  # the guaranteed playing time of a round, for the clock


@dataclass(frozen=True)
class Player:
    number: int
    name: str  # as sent to the table: unique in the tournament
    ema_id: str | None = None
    club: str | None = None
    country: str | None = None
    status: PlayerStatus = PlayerStatus.ACTIVE
    replaces: int | None = None  # a substitute: the player whose seat they took
    first_name: str | None = None  # as imported (or corrected): the EMA report's columns
    last_name: str | None = None

    @property
    def first_last(self) -> tuple[str, str]:
        """(first name, last name) for the EMA report: as imported or corrected; only a player entered with a
        single name is split, at the last space ("Niamh Ó Briain" needs ``rename --first --last`` then)."""
        if self.first_name or self.last_name:
            return self.first_name or "", self.last_name or ""
        parts = self.name.split()
        if len(parts) < 2:
            return self.name, ""
        return " ".join(parts[:-1]), parts[-1]


@dataclass(frozen=True)
class HallTable:
    number: int  # from 1: table 1 is the top (streamed) table
    site: str
    table_id: str


@dataclass(frozen=True)
class Seating:
    """One round: ``tables[i]`` are the four player numbers at hall table ``i + 1``, East first."""

    tables: tuple[tuple[int, int, int, int], ...]

    def players(self) -> list[int]:
        return [p for t in self.tables for p in t]

    def table_of(self, player: int) -> int | None:
        """The hall table number (from 1) the player sits at, or None."""
        for i, t in enumerate(self.tables):
            if player in t:
                return i + 1
        return None


@dataclass(frozen=True)
class Round:
    number: int
    status: RoundStatus
    seating: Seating
    method: SeatingMethod
    started_at: str | None = None  # ISO 8601 UTC
    started_tables: tuple[int, ...] = field(default_factory=tuple)  # the tables that answered ok
    offline_tables: tuple[int, ...] = field(default_factory=tuple)  # the tables that did not (listed, not skipped)
    deadline: str | None = None  # the round's one end of time (ISO 8601 UTC), the same for every table


@dataclass(frozen=True)
class Penalty:
    id: int
    round: int
    player: int
    points: int  # taken off the total (0 for a warning)
    reason: str
    hand: str | None  # the hand it was given in ("E3-1"), where the referee gives it
    kind: PenaltyKind
    at: str  # ISO 8601 UTC
