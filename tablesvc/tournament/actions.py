"""What the ``tournament`` command and the web server both do: read the standings, seat a round.

Kept apart from both so that a referee's HTTP call and the organiser's
command line do exactly the same thing with the same checks.
"""

from __future__ import annotations

from tablesvc.rules.ruleset import get_ruleset
from tablesvc.tournament import seating as seats
from tablesvc.tournament.model import PlayerStatus, Round, RoundStatus, Seating, SeatingMethod, TournamentError
from tablesvc.tournament.seating import SeatingQuality
from tablesvc.tournament.standings import Standings, standings
from tablesvc.tournament.tournament_db import TournamentStore

__all__ = ["current_standings", "next_round", "seat_round"]


def current_standings(store: TournamentStore, tid: int) -> Standings:
    t = store.tournament(tid)
    return standings(t, store.players(tid), store.tables(tid), store.rounds(tid), store.hall_games(tid),
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
            plans = [seats.shuffled(numbers, history, clubs=clubs, top=top, seed=seed)]
    saved = store.save_seatings(tid, dict(zip(targets, plans, strict=True)), method)
    return saved, seats.quality([*history, *(r.seating for r in saved)],
                                {p.number: p.club for p in players if p.club} if t.separate_clubs else None)


def _ranked(store: TournamentStore, tid: int, numbers: list[int]) -> list[int]:
    """The players to seat, best standing first (substitutes by their own total)."""
    st = current_standings(store, tid)
    order = {row.player.number: i for i, row in enumerate(st.players)}
    return sorted(numbers, key=lambda n: order.get(n, len(order)))
