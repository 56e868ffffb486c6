"""The MERS tournament weight as the EMA's "Basics for ranking system" adds it up: duration + players +
countries + qualification, each threshold at its edge."""

from __future__ import annotations

import pytest

from tablesvc.tournament.export import mers_weight
from tablesvc.tournament.model import TournamentError


@pytest.mark.parametrize(("players", "weight"), [(16, 0.0), (40, 0.0), (41, 0.5), (80, 0.5), (81, 1.0), (172, 1.0)])
def test_players_over_40_weigh_a_half_and_over_80_one(players, weight):
    assert mers_weight(players, 1, days=1).players_weight == weight


@pytest.mark.parametrize(("countries", "weight"), [(1, 0.0), (5, 0.0), (6, 0.5), (9, 0.5), (10, 1.0), (23, 1.0)])
def test_six_to_nine_countries_weigh_a_half_and_ten_or_more_one(countries, weight):
    assert mers_weight(16, countries, days=1).countries_weight == weight


def test_the_total_adds_a_day_each_and_one_for_qualification():
    assert mers_weight(84, 12, days=2, qualification=True).total == 2 + 1 + 1 + 1
    assert mers_weight(52, 7, days=3).total == 3 + 0.5 + 0.5
    assert "MERS weight: 1 (duration 1 day(s)" in mers_weight(16, 2, days=1).line()


def test_without_the_days_there_is_no_total_and_the_line_says_how_to_give_them():
    w = mers_weight(52, 7)
    assert w.total is None
    assert "players 52 +0.5, countries 7 +0.5" in w.line() and "--days" in w.line()


@pytest.mark.parametrize("days", [0, 4])
def test_a_mers_tournament_lasts_one_to_three_days(days):
    with pytest.raises(TournamentError, match="1, 2 or 3 days"):
        mers_weight(16, 1, days=days)
