"""The standings from the tables' own results: a chombo (the table's own penalty, inside its game result) is
shown beside the referee's penalties, and a player with fewer games than the rounds finished is marked."""

from __future__ import annotations

from tablesvc.tournament.model import (
    HallTable,
    Player,
    PlayerStatus,
    Round,
    RoundStatus,
    Seating,
    SeatingMethod,
    Tournament,
)
from tablesvc.tournament.standings import standings
from tablesvc.tournament.tournament_db import GameRow, SeatRow

T = Tournament("Club Cup", "ema2016", 2)
PLAYERS = [Player(i, f"P{i}") for i in range(1, 5)] + [Player(5, "Gone", status=PlayerStatus.WITHDRAWN)]
HALL = [HallTable(1, "hall", "t1")]


def game(started: str, names: list[str], points: list[int], penalty: list[int]) -> GameRow:
    uma = [15000, 5000, -5000, -15000]
    order = sorted(range(4), key=lambda s: -points[s])
    seats = []
    for s in range(4):
        place = order.index(s) + 1
        seats.append(SeatRow(s, names[s], points[s], place, uma[place - 1], 0, penalty[s],
                             points[s] - 30000 + uma[place - 1] - penalty[s]))
    return GameRow("hall", "t1", started, started, "ema2016", True, 0, tuple(seats))


def test_a_chombo_is_shown_and_a_short_player_marked():
    rounds = [Round(1, RoundStatus.FINISHED, Seating(((5, 2, 3, 4),)), SeatingMethod.SHUFFLED,
                    "2026-11-27T09:00:00+00:00"),
              Round(2, RoundStatus.FINISHED, Seating(((1, 2, 3, 4),)), SeatingMethod.SHUFFLED,
                    "2026-11-27T11:00:00+00:00")]
    games = [game("2026-11-27T09:00:05+00:00", ["Gone", "P2", "P3", "P4"], [40000, 30000, 30000, 20000],
                  [0, 0, 0, 0]),
             game("2026-11-27T11:00:05+00:00", ["P1", "P2", "P3", "P4"], [45000, 25000, 30000, 20000],
                  [0, 20000, 0, 0])]  # P2's chombo at the table: 20,000 off their result
    st = standings(T, PLAYERS, HALL, rounds, games, [])
    rows = {p.player.name: p for p in st.players}
    assert rows["P2"].chombo == 20000 and rows["P2"].to_dict()["chombo"] == 20000
    assert rows["P2"].games_result == (30000 - 30000 + 5000) + (25000 - 30000 - 5000 - 20000)
    assert [n for n, p in rows.items() if st.incomplete(p)] == ["P1", "Gone"]  # one game of two each
    marks = {d["name"]: d["incomplete"] for d in st.to_dict()["players"]}
    assert not st.provisional and marks == {"P1": True, "P2": False, "P3": False, "P4": False, "Gone": True}
