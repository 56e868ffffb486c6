"""Seating quality: judged against the fewest repeats any seating can have, not only against a random one.

``repeat_lower_bound`` is the counting bound (a player meets 3 per round and
has n - 1 others to meet); where it is 0 a seating without a single repeat
exists for these sizes (resolvable designs: the affine plane of order 4 for
16 players in 5 rounds, 28 players in 9 and 40 in 13, 24 players in 7 and
36 in 11 from stored starting rounds, 32 players in 10 from a stored paired design (the
social golfer problem's 8-4-10), and many more for the larger halls), so the plan must find
none where it has a construction, and elsewhere reach the bound or come close.
"""

from __future__ import annotations

import itertools
import random

import pytest

from tablesvc.tournament.designs import (
    GROUP_DESIGNS,
    PAIRED_DESIGNS,
    STARTERS,
    affine_rounds,
    developed_rounds,
    group_design_rounds,
    known_most_rounds,
    paired_rounds,
)
from tablesvc.tournament.model import Seating, TournamentError
from tablesvc.tournament.seating import interval, plan, quality, repeat_lower_bound, shuffled, swiss


def _random_plan(players: list[int], rounds: int, seed: int) -> list[Seating]:
    rng = random.Random(seed)
    out = []
    for _ in range(rounds):
        order = players[:]
        rng.shuffle(order)
        out.append(Seating(tuple(tuple(order[i:i + 4]) for i in range(0, len(order), 4))))
    return out


@pytest.mark.parametrize(("tables", "rounds", "most_repeats"), [
    (4, 5, 0),  # the affine plane: every round's seating forced by the ones before; found
    (4, 6, None),  # the bound (24) itself
    (6, 7, 0),  # 24 players: a stored starting round over Z_7 and three fixed players
    (7, 9, 0),  # 28 players: a resolvable 2-(28, 4, 1) design
    (10, 13, 0),  # 40 players: a resolvable 2-(40, 4, 1) design
    (12, 13, 0),  # 48 players: a transversal design over Z2 x Z2 x Z3, then a round within its rows
    (16, 21, 0),  # 64 players: the lines of AG(3, 4)
    (8, 7, 0),  # the transversal design over GF(8): 8 rounds without a repeat
    (8, 10, 0),  # 32 players: the paired design (social golfer 8-4-10)
    (16, 8, 0),
    (40, 10, 0),
    (60, 10, 0),
])
def test_plans_reach_the_fewest_repeats_possible_or_come_close(tables, rounds, most_repeats):
    players = list(range(1, 4 * tables + 1))
    seatings = plan(players, rounds, seed=3)
    q = quality(seatings)
    bound = repeat_lower_bound(len(players), rounds)
    assert q.repeat_bound == bound
    assert q.repeat_meetings >= bound  # the bound is a bound: nothing beats it
    if most_repeats is None:
        assert q.repeat_meetings == bound
    else:
        assert q.repeat_meetings <= bound + most_repeats
    assert q.most_meetings <= 2
    assert q.wind_spread <= 1 and q.unbalanced == 0
    for s in seatings:  # every player seated exactly once per round
        assert sorted(s.players()) == players
    best_random = min(quality(_random_plan(players, rounds, seed)).repeat_meetings for seed in range(20))
    assert q.repeat_meetings < best_random or best_random == bound


def test_round_by_round_seating_keeps_clubs_apart_and_the_top_table():
    players = list(range(1, 33))
    clubs = {p: f"club {(p - 1) // 4}" for p in players}  # eight clubs of four
    history: list[Seating] = []
    for r in range(4):
        top = (5, 9, 13, 17) if r else None  # the leading four, as the standings would give them
        s = shuffled(players, history, clubs=clubs, top=top, seed=r)
        if top:
            assert set(s.tables[0]) == set(top)
        history.append(s)
    q = quality(history, clubs)
    # the top table's four met again by force; nothing else is repeated and no club pair sits together
    assert q.club_meetings == 0
    assert q.repeat_meetings <= 3 * 6
    ignored = quality(plan(players, 4, seed=0), clubs)  # the same plan without asking to keep clubs apart
    assert ignored.club_meetings > 0


def test_swiss_and_interval_seat_by_standing():
    ranked = [7, 3, 9, 1, 2, 8, 4, 6, 5, 10, 11, 12]
    s = swiss(ranked)
    assert [set(t) for t in s.tables] == [{7, 3, 9, 1}, {2, 8, 4, 6}, {5, 10, 11, 12}]
    i = interval(ranked)
    assert [set(t) for t in i.tables] == [{7, 1, 4, 10}, {3, 2, 6, 11}, {9, 8, 5, 12}]


def test_winds_are_balanced_over_four_rounds():
    players = list(range(1, 17))
    seatings = plan(players, 4, seed=5)
    for p in players:
        winds = [next(t.index(p) for t in s.tables if p in t) for s in seatings]
        assert sorted(winds) == [0, 1, 2, 3], (p, winds)


@pytest.mark.parametrize("players", [list(range(1, 15)), [1, 2, 3, 4, 5, 6, 7, 1]])
def test_a_count_that_cannot_be_seated_or_a_player_twice_is_refused(players):
    with pytest.raises(TournamentError, match=r"multiple of 4|seated twice"):
        shuffled(players)


@pytest.mark.parametrize(("tables", "rounds"), [(8, 8), (43, 15), (60, 15), (20, 15)])
def test_halls_up_to_172_players_and_15_rounds_play_without_a_repeat(tables, rounds):
    players = list(range(1, 4 * tables + 1))
    seatings = plan(players, rounds, seed=11)
    q = quality(seatings)
    assert q.repeat_meetings == 0 and q.most_meetings == 1
    assert all(sorted(s.players()) == players for s in seatings)
    assert q.unbalanced == 0


def test_a_planned_hall_keeps_clubs_apart_where_they_fit():
    players = list(range(1, 65))
    clubs = {p: f"club {p % 7}" for p in players if p <= 56}  # seven clubs of 8 and 8 players of no club
    q = quality(plan(players, 10, clubs=clubs, seed=2), clubs)
    assert q.repeat_meetings == 0 and q.club_meetings == 0 == q.club_bound


def test_swiss_and_interval_part_clubs_nearest_in_the_standing():
    ranked = list(range(1, 17))
    clubs = {1: "A", 2: "A", 5: "B", 9: "B"}  # swiss seats 1 and 2 together; interval seats 1, 5, 9, 13
    s = swiss(ranked, clubs=clubs)
    assert quality([s], clubs).club_meetings == 0
    assert s.table_of(1) == 1 and s.table_of(2) == 2 and s.table_of(5) == 1  # 2 and 5 swapped: the nearest
    assert s.table_of(3) == s.table_of(4) == 1 and s.table_of(6) == 2  # and no one else moved
    i = interval(ranked, clubs=clubs)
    assert quality([i], clubs).club_meetings == 0
    lines = quality([swiss(ranked), swiss(ranked)]).lines()
    assert any(line.startswith("WARNING: 24 repeat meeting(s)") for line in lines), lines


@pytest.mark.parametrize("tables", sorted(STARTERS))
def test_every_stored_starting_round_develops_into_rounds_without_a_repeat(tables):
    w = STARTERS[tables][0]
    rounds = developed_rounds(tables)
    assert len(rounds) == w <= known_most_rounds(tables)
    met: dict[frozenset[int], int] = {}
    for r in rounds:
        assert sorted(p for four in r for p in four) == list(range(4 * tables))  # everyone once a round
        for four in r:
            for a, b in itertools.combinations(four, 2):
                met[frozenset((a, b))] = met.get(frozenset((a, b)), 0) + 1
    assert max(met.values()) == 1
    assert len(met) == 6 * tables * w  # every meeting a new pair
    n = 4 * tables
    if 3 * w == n - 1:  # a resolvable design: every pair meets, exactly once
        assert len(met) == n * (n - 1) // 2


def test_a_construction_keeps_clubs_apart_by_exchanging_players():
    players = list(range(1, 29))
    clubs = {p: f"club {p % 7}" for p in players}  # seven clubs of four, 7 of the 9 rounds of the design
    q = quality(plan(players, 7, clubs=clubs, seed=4), clubs)
    assert q.repeat_meetings == 0 and q.club_meetings == 0
    assert quality(plan(players, 7, seed=4), clubs).club_meetings > 0  # the same hall, clubs not asked apart


@pytest.mark.parametrize("tables", sorted(GROUP_DESIGNS))
def test_every_stored_group_design_meets_each_pair_of_two_rows_once_and_no_pair_of_one_row(tables):
    rounds = group_design_rounds(tables)
    assert len(rounds) == tables
    met: dict[frozenset[int], int] = {}
    for r in rounds:
        assert sorted(p for four in r for p in four) == list(range(4 * tables))
        for four in r:
            assert [p // tables for p in four] == [0, 1, 2, 3]  # one player of each row at every table
            for a, b in itertools.combinations(four, 2):
                met[frozenset((a, b))] = met.get(frozenset((a, b)), 0) + 1
    assert max(met.values()) == 1 and len(met) == 6 * tables * tables  # every pair of two rows, once


@pytest.mark.parametrize("tables", sorted(PAIRED_DESIGNS))
def test_every_stored_paired_design_meets_every_pair_of_two_pairs_once(tables):
    rounds = paired_rounds(tables)
    n = 4 * tables
    assert len(rounds) == (n - 1) // 3 == known_most_rounds(tables)  # the counting bound
    met: dict[frozenset[int], int] = {}
    for r in rounds:
        assert sorted(p for four in r for p in four) == list(range(n))  # everyone once a round
        for four in r:
            for a, b in itertools.combinations(four, 2):
                met[frozenset((a, b))] = met.get(frozenset((a, b)), 0) + 1
    assert max(met.values()) == 1
    never = [pair for pair in itertools.combinations(range(n), 2) if frozenset(pair) not in met]
    assert never == [(p, p + 1) for p in range(0, n, 2)]  # all the others meet, each pair once


def test_thirty_two_players_keep_the_rows_design_while_it_gives_the_rounds():
    """Up to 8 rounds the transversal design seats 32 players (its rows keep clubs of up to 8 apart); 9 or 10
    take the paired design, still without a repeat."""
    players = list(range(1, 33))
    clubs = {p: f"club {(p - 1) // 8}" for p in players}  # four clubs of eight: one per row
    q = quality(plan(players, 8, clubs=clubs, seed=5), clubs)
    assert q.repeat_meetings == 0 and q.club_meetings == 0
    for rounds in (9, 10):
        assert quality(plan(players, rounds, seed=5)).repeat_meetings == 0


def test_the_warning_says_whether_a_known_schedule_does_better():
    # 52 players: a resolvable 2-(52, 4, 1) design plays 17 rounds without a repeat, the stored starting round 15
    under = quality(plan(list(range(1, 53)), 16, seed=1)).lines()
    assert any(line.startswith("WARNING") and "a published schedule of this size has none" in line
               for line in under), under
    past = quality(plan(list(range(1, 21)), 6, seed=1)).lines()  # 20 players: 5 rounds known, 6 asked
    assert any(line.startswith("WARNING") and "no known schedule of this size has none" in line for line in past), past


def test_seated_round_by_round_a_tournament_gets_the_constructions_rounds(tmp_path, capsys):
    """28 players, 9 rounds, each seated (``seating``, no ``--all``) only once the one before has started: the
    rounds are the resolvable design's, as ``--all`` seats them, so the ninth still repeats no meeting."""
    from datetime import UTC, datetime, timedelta

    from tablesvc.cli import main
    from tablesvc.records.records_db import RecordsStore
    from tablesvc.tournament.tournament_db import TournamentStore

    db = str(tmp_path / "cup.sqlite3")
    (tmp_path / "players.csv").write_text("First name,Last name\n" + "".join(
        f"Player{i},Number{i}\n" for i in range(28)), encoding="utf-8")
    for argv in (["create", "Nine Rounds", "--rounds", "9"], ["import-players", str(tmp_path / "players.csv")],
                 ["tables", "--site", "hall", "--count", "7"]):
        assert main(["tournament", *argv, "--db", db]) == 0, argv
    store = TournamentStore(RecordsStore(db))
    try:
        tid = store.find()[0]
        for n in range(1, 10):
            assert main(["tournament", "seating", "--db", db]) == 0
            store.begin_start(tid, n)
            now = datetime.now(UTC)
            store.mark_started(tid, n, list(range(1, 8)), [], now.isoformat(timespec="seconds"),
                               (now + timedelta(minutes=75)).isoformat(timespec="seconds"))
            store.finish_round(tid, n)
        seatings = [r.seating for r in store.rounds(tid)]
    finally:
        store.records.close()
    q = quality(seatings)
    assert len(seatings) == 9 and q.repeat_meetings == 0 and q.most_meetings == 1
    assert q.unbalanced == 0
    assert "repeat meetings: 0" in capsys.readouterr().out


@pytest.mark.parametrize(("tables", "rounds"), [(4, 5), (16, 21), (64, 85)])
def test_the_affine_spaces_lines_meet_every_pair_once(tables, rounds):
    met: dict[frozenset[int], int] = {}
    built = affine_rounds(tables)
    assert len(built) == rounds
    for r in built:
        assert sorted(p for four in r for p in four) == list(range(4 * tables))
        for four in r:
            for a, b in itertools.combinations(four, 2):
                met[frozenset((a, b))] = met.get(frozenset((a, b)), 0) + 1
    n = 4 * tables
    assert set(met.values()) == {1} and len(met) == n * (n - 1) // 2


def _partitions(people: tuple[int, ...]):
    """Every way to seat ``people`` at tables of four (tables and seats unordered)."""
    if not people:
        yield ()
        return
    first, rest = people[0], people[1:]
    for mates in itertools.combinations(rest, 3):
        left = tuple(p for p in rest if p not in mates)
        for more in _partitions(left):
            yield ((first, *mates), *more)


@pytest.mark.parametrize("tables", [1, 2, 3])
def test_a_small_halls_bound_is_the_fewest_a_second_round_can_have(tables):
    """Independent of the bound's reasoning: every second round there is, counted against the first."""
    players = tuple(range(4 * tables))
    first = [set(players[i:i + 4]) for i in range(0, len(players), 4)]
    fewest = min(sum(1 for table in seating for a, b in itertools.combinations(table, 2)
                     if any(a in t and b in t for t in first))
                 for seating in _partitions(players))
    assert repeat_lower_bound(len(players), 2) == fewest
    seatings = plan(list(range(1, len(players) + 1)), 3, seed=1)
    assert quality(seatings).repeat_meetings >= repeat_lower_bound(len(players), 3) == 2 * fewest


@pytest.mark.parametrize(("tables", "rounds", "played"), [(7, 9, 3), (8, 9, 4), (6, 7, 1)])
def test_the_rest_of_a_plan_after_its_first_rounds_were_played_keeps_it_without_a_repeat(tables, rounds, played):
    """Seated round by round (or --all before the day) and then --all after some rounds: the later rounds
    are the same plan's, so a hall whose construction has no repeat keeps none, however the played rounds'
    tables were numbered and their seats turned."""
    players = list(range(1, 4 * tables + 1))
    whole = plan(players, rounds, seed=5)
    assert quality(whole).repeat_meetings == 0
    rng = random.Random(1)
    history = []
    for s in whole[:played]:  # the same fours, as the hall numbered and seated them
        fours = [list(four) for four in s.tables]
        rng.shuffle(fours)
        for four in fours:
            rng.shuffle(four)
        history.append(Seating(tuple(tuple(f) for f in fours)))
    rest = plan(players, rounds - played, history, seed=5)
    assert [{frozenset(t) for t in s.tables} for s in rest] == [{frozenset(t) for t in s.tables}
                                                              for s in whole[played:]]
    assert quality([*history, *rest]).repeat_meetings == 0


def test_rounds_played_otherwise_are_searched_against_not_taken_for_the_plans():
    players = list(range(1, 29))
    other = plan(players, 2, seed=11)  # another plan's first rounds: a different hall of fours
    ours = plan(players, 9, seed=5)
    assert {frozenset(t) for t in other[0].tables} != {frozenset(t) for t in ours[0].tables}
    rest = plan(players, 7, other, seed=5, attempts=1, passes=2)
    assert len(rest) == 7
    for s in rest:
        assert sorted(s.players()) == players
    assert [{frozenset(t) for t in s.tables} for s in rest] != [{frozenset(t) for t in s.tables} for s in ours[2:]]
    q = quality([*other, *rest])
    assert q.repeat_meetings >= q.repeat_bound
