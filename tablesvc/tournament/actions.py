"""What the ``tournament`` command and the web server both do: read the standings, seat a round, start one.

Kept apart from both so that a referee's HTTP call and the organiser's
command line do exactly the same thing with the same checks.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import update
from sqlalchemy.exc import SQLAlchemyError

from tablesvc.records.schema import RecordsError, tournament_rounds
from tablesvc.rules.ruleset import get_ruleset
from tablesvc.tournament import seating as seats
from tablesvc.tournament.model import (
    HallTable,
    Player,
    PlayerStatus,
    Round,
    RoundStatus,
    Seating,
    SeatingMethod,
    TournamentError,
)
from tablesvc.tournament.seating import SeatingQuality
from tablesvc.tournament.standings import Standings, standings
from tablesvc.tournament.tournament_db import TournamentStore

if TYPE_CHECKING:
    from tablesvc.tournament.hall import Hall, StartReport

__all__ = ["current_standings", "next_round", "seat_round", "start_round_once"]

_starting_lock = threading.Lock()
_starting: dict[tuple[str, int, int], threading.Lock] = {}


def current_standings(store: TournamentStore, tid: int, *, players: list[Player] | None = None,
                      hall: list[HallTable] | None = None, rounds: list[Round] | None = None) -> Standings:
    """The standings as the database holds them now. ``players``, ``hall`` and ``rounds``: those of ``tid`` where
    the caller has just read them (the web server's pages read them too, several times a second)."""
    t = store.tournament(tid)
    players = store.players(tid) if players is None else players
    hall = store.tables(tid) if hall is None else hall
    rounds = store.rounds(tid) if rounds is None else rounds
    return standings(t, players, hall, rounds, store.hall_games(tid, hall=hall, rounds=rounds),
                     store.penalties(tid), start_points=get_ruleset(t.rules).start_points)


def next_round(store: TournamentStore, tid: int) -> int:
    """The first round not started yet."""
    t = store.tournament(tid)
    played = {r.number for r in store.rounds(tid) if r.status is not RoundStatus.SEATED}
    for n in range(1, t.rounds + 1):
        if n not in played:
            return n
    raise TournamentError(f"every round of the tournament ({t.rounds}) has been played")


def seat_round(store: TournamentStore, tid: int, method: SeatingMethod, *, number: int | None = None,
               all_rounds: bool = False, seed: int = 0, prescribed: dict[int, Seating] | None = None,
               ) -> tuple[list[Round], SeatingQuality]:
    """Seat round ``number`` (default: the next one), or with ``all_rounds`` every round not started yet
    (shuffled only: the others seat by a standing not known yet). The quality is the whole tournament's as
    seated then."""
    t = store.tournament(tid)
    first = number or next_round(store, tid)
    rounds = store.rounds(tid)
    done = [r for r in rounds if r.number < first]
    if any(r.status is RoundStatus.SEATED for r in done):
        waiting = next(r.number for r in done if r.status is RoundStatus.SEATED)
        raise TournamentError(f"round {waiting} is seated and not started: start it before seating round {first}")
    history = [r.seating for r in done]
    players = [p for p in store.players(tid) if p.status is not PlayerStatus.WITHDRAWN]
    numbers = [p.number for p in players]
    clubs = {p.number: p.club for p in players if p.club} if t.separate_clubs else None
    hall = store.tables(tid)
    if len(numbers) // 4 > len(hall):
        raise TournamentError(f"{len(numbers)} players need {len(numbers) // 4} tables and the hall has {len(hall)}: "
                              "add tables with tablesvc tournament tables")
    if method is SeatingMethod.FILE:
        if not prescribed:
            raise TournamentError("a prescribed seating needs its file (--file)")
        targets = sorted(n for n in prescribed if n >= first) if all_rounds else [first]
        for n in targets:
            if n not in prescribed:
                raise TournamentError(f"the seating file has no round {n}")
        plans = [prescribed[n] for n in targets]
        if clubs:  # the organiser's own seating is kept as written: refused where it seats a club together
            for n, s in zip(targets, plans, strict=True):
                for i, four in enumerate(s.tables, 1):
                    mates = [p for p in four if any(q != p and clubs.get(q) and (clubs.get(p) or "").strip()
                                                    .casefold() == clubs[q].strip().casefold() for q in four)]
                    if mates:
                        names = {p.number: p.name for p in players}
                        raise TournamentError(
                            f"round {n}, table {i}: {', '.join(names[p] for p in mates)} are of one club and the "
                            "tournament keeps clubs apart (--separate-clubs): change the file, or create the "
                            "tournament without --separate-clubs")
    elif all_rounds:
        if method is not SeatingMethod.SHUFFLED:
            raise TournamentError(f"{method.value} seats by the standing of the round before: seat it round by round")
        targets = list(range(first, t.rounds + 1))
        plans = seats.plan(numbers, len(targets), history, clubs=clubs, seed=seed)
    else:
        targets = [first]
        ranked = _ranked(store, tid, numbers) if method is not SeatingMethod.SHUFFLED or t.top_table else numbers
        if method is SeatingMethod.SWISS:
            plans = [seats.swiss(ranked, history, seed=seed, clubs=clubs)]
        elif method is SeatingMethod.INTERVAL:
            plans = [seats.interval(ranked, history, seed=seed, clubs=clubs)]
        else:
            top = ranked[:4] if t.top_table and history else None
            planned = None if top else seats.next_of_plan(numbers, t.rounds, history, clubs=clubs, seed=seed)
            plans = [planned or seats.shuffled(numbers, history, clubs=clubs, top=top, seed=seed)]
    saved = store.save_seatings(tid, dict(zip(targets, plans, strict=True)), method)
    return saved, seats.quality([*history, *(r.seating for r in saved)],
                                {p.number: p.club for p in players if p.club} if t.separate_clubs else None)


def _ranked(store: TournamentStore, tid: int, numbers: list[int]) -> list[int]:
    """The players to seat, best standing first (substitutes by their own total)."""
    st = current_standings(store, tid)
    order = {row.player.number: i for i, row in enumerate(st.players)}
    return sorted(numbers, key=lambda n: order.get(n, len(order)))


def start_round_once(store: TournamentStore, tid: int, number: int, hall: Hall, *, retry: bool = False,
                     **options: Any) -> StartReport:
    """:func:`tablesvc.tournament.hall.start_round`, by one referee at a time: two referees pressing "start"
    together (two consoles, or a console and the command line) would both pass the "started once" check and
    both send ``start_game``; the tables refuse the second, and its report would then say no table started.

    So a first start claims the round in the database before any ``start_game`` is sent (``seated`` ->
    ``started`` in one conditional UPDATE that only one caller can win, across processes), and callers in
    one process queue on a lock of the round's; the loser is refused with the usual "a round is started
    once" message. A start that fails before it sends anything gives its claim back."""
    with _starting_lock:
        lock = _starting.setdefault((store.records.name, tid, number), threading.Lock())
    with lock:
        from tablesvc.tournament.hall import start_round

        if retry:
            return start_round(store, tid, number, hall, retry=True, **options)
        store.begin_start(tid, number)  # every check of a first start, refused here as before
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        if not _claim(store, tid, number, stamp):
            store.begin_start(tid, number)  # another caller won: refused, saying when it was started
            raise TournamentError(f"round {number} is being started by another referee")
        try:
            return start_round(store, tid, number, hall, retry=True, **options)
        except TournamentError:  # refused by its checks (a withdrawn player) before any start_game was sent
            _unclaim(store, tid, number, stamp)
            raise


def _claim(store: TournamentStore, tid: int, number: int, stamp: str) -> bool:
    where = (tournament_rounds.c.tournament_id == tid, tournament_rounds.c.number == number,
             tournament_rounds.c.status == RoundStatus.SEATED.value)
    try:
        with store.engine.begin() as conn:
            done = conn.execute(update(tournament_rounds).where(*where).values(
                status=RoundStatus.STARTED.value, started_at=stamp, started_tables="[]", offline_tables="[]"))
            return done.rowcount == 1
    except SQLAlchemyError as exc:
        raise RecordsError(f"cannot write to the records database {store.records.name}: {exc}") from None


def _unclaim(store: TournamentStore, tid: int, number: int, stamp: str) -> None:
    """Give back a claim whose start sent nothing (no table recorded as started)."""
    with store.engine.begin() as conn:
        conn.execute(update(tournament_rounds).where(
            tournament_rounds.c.tournament_id == tid, tournament_rounds.c.number == number,
            tournament_rounds.c.status == RoundStatus.STARTED.value, tournament_rounds.c.started_at == stamp,
            tournament_rounds.c.started_tables == "[]").values(status=RoundStatus.SEATED.value, started_at=None))
