"""Property tests for payments: every settlement balances, payers never gain, winners never lose.

Expected amounts are computed here from the rules (RULES.md 4: ron 4x / 6x base, tsumo 1x / 2x base,
each payment rounded up to 100; 300 per counter; 1000 per riichi stick), not from the code under test.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tablesvc.rules.payments import (
    RonWin,
    Settlement,
    final_standings,
    settle_chombo,
    settle_exhaustive_draw,
    settle_nagashi,
    settle_ron,
    settle_tsumo,
)
from tablesvc.rules.ruleset import PRESETS, ChomboPenalty, Nagashi, PaoLiability, RuleSet, get_ruleset
from tablesvc.rules.scoring import HandValue, Limit, base_points

PROPERTY = settings(max_examples=200, deadline=None)

FUS = (20, 25, *range(30, 111, 10))
ORDINARY_BASES = sorted({base_points(han, fu, r)[0] for han in range(1, 14) for fu in FUS for r in PRESETS.values()})

seats = st.integers(0, 3)
counters = st.integers(0, 10)
# every preset, and each with the liability a club may limit to the pao yakuman
presets = st.sampled_from(sorted(PRESETS)).map(PRESETS.__getitem__) | st.sampled_from(sorted(PRESETS)).map(
    lambda name: get_ruleset(f"{name}; pao_liability=yakuman"))


def ceil100(points: int) -> int:
    return (points + 99) // 100 * 100


def ron_value(base: int, dealer_wins: bool) -> int:
    return ceil100(base * (6 if dealer_wins else 4))


def tsumo_total(base: int, winner_is_dealer: bool) -> int:
    """What a tsumo brings in from the three others, counters aside."""
    if winner_is_dealer:
        return 3 * ceil100(2 * base)
    return ceil100(2 * base) + 2 * ceil100(base)


@st.composite
def hand_values(draw: st.DrawFn) -> HandValue:
    if draw(st.booleans()):
        base = draw(st.sampled_from(ORDINARY_BASES))
        return HandValue(han=3, fu=30, yaku=(), limit=Limit.NONE, base_points=base)
    multiple = draw(st.integers(1, 6))
    pao = draw(st.integers(0, min(multiple, 2)))
    return HandValue(
        han=13 * multiple,
        fu=30,
        yaku=(),
        limit=Limit.YAKUMAN,
        base_points=8000 * multiple,
        yakuman=multiple,
        pao_yakuman=pao,
    )


def liable_base(value: HandValue, pao: int | None, liability: PaoLiability) -> int:
    """What the pao player is liable for: the whole hand, or its pao yakuman alone (8000 a multiple)."""
    if pao is None or value.pao_yakuman == 0:
        return 0
    return value.base_points if liability is PaoLiability.HAND else 8000 * value.pao_yakuman


def assert_well_formed(s: Settlement) -> None:
    assert sum(s.deltas) == s.sticks_points
    for p in s.payments:
        assert p.amount > 0
        assert p.payer != p.payee
    payers = {p.payer for p in s.payments}
    payees = {p.payee for p in s.payments}
    for seat in payers - payees:  # payers never gain
        assert s.deltas[seat] < 0
    if s.sticks_to is None:
        assert s.sticks_points == 0


# ---------------------------------------------------------------- tsumo


@PROPERTY
@given(
    value=hand_values(),
    winner=seats,
    dealer=seats,
    pao=st.none() | seats,
    honba=counters,
    sticks=counters,
    liability=st.sampled_from(PaoLiability),
)
def test_tsumo_balances_and_pays_the_winner_exactly(
    value: HandValue, winner: int, dealer: int, pao: int | None, honba: int, sticks: int, liability: PaoLiability
) -> None:
    if pao == winner:
        pao = None
    s = settle_tsumo(value, winner, dealer, honba=honba, sticks=sticks, pao=pao, pao_liability=liability)
    assert_well_formed(s)
    assert s.sticks_points == 1000 * sticks
    assert s.sticks_to == (winner if sticks else None)
    liable = liable_base(value, pao, liability)
    ordinary = value.base_points - liable
    expected = 300 * honba + 1000 * sticks
    expected += ron_value(liable, winner == dealer) if liable else 0
    expected += tsumo_total(ordinary, winner == dealer) if ordinary else 0
    assert s.deltas[winner] == expected
    assert s.deltas[winner] > 0
    for seat in range(4):
        if seat != winner:
            assert s.deltas[seat] <= 0
    if liable:
        # the pao player pays at least the whole liable part and every counter
        assert s.paid_by(pao) >= ron_value(liable, winner == dealer) + 300 * honba
    else:
        # an ordinary tsumo: each pays its share + 100 per counter; the dealer pays the most
        for seat in range(4):
            if seat != winner:
                share = ceil100(value.base_points * (2 if dealer in (seat, winner) else 1))
                assert s.deltas[seat] == -(share + 100 * honba)


@PROPERTY
@given(multiple=st.integers(1, 6), winner=seats, dealer=seats, pao=seats, honba=counters)
def test_pao_changes_who_pays_not_how_much(multiple: int, winner: int, dealer: int, pao: int, honba: int) -> None:
    if pao == winner:
        pao = (winner + 1) % 4
    value = HandValue(
        han=13 * multiple,
        fu=30,
        yaku=(),
        limit=Limit.YAKUMAN,
        base_points=8000 * multiple,
        yakuman=multiple,
        pao_yakuman=1,
    )
    with_pao = settle_tsumo(value, winner, dealer, honba=honba, pao=pao)
    without = settle_tsumo(value, winner, dealer, honba=honba)
    assert with_pao.deltas[winner] == without.deltas[winner]


@PROPERTY
@given(value=hand_values(), winner=seats, other=seats)
def test_dealer_tsumo_worth_at_least_non_dealer(value: HandValue, winner: int, other: int) -> None:
    if other == winner:
        other = (winner + 1) % 4
    as_dealer = settle_tsumo(value, winner, winner)
    as_non_dealer = settle_tsumo(value, winner, other)
    assert as_dealer.deltas[winner] >= as_non_dealer.deltas[winner]


# ---------------------------------------------------------------- ron


@st.composite
def ron_cases(draw: st.DrawFn, pao_may_win: bool = True) -> tuple[list[RonWin], int, int, RuleSet, int, int]:
    rules = draw(presets)
    discarder = draw(seats)
    dealer = draw(seats)
    others = [s for s in range(4) if s != discarder]
    winners = draw(st.lists(st.sampled_from(others), min_size=1, max_size=3, unique=True))
    wins = []
    for w in winners:
        value = draw(hand_values())
        choices = [s for s in range(4) if s != w and (pao_may_win or s not in winners)]
        pao = draw(st.none() | st.sampled_from(choices))
        wins.append(RonWin(w, value, pao))
    return wins, discarder, dealer, rules, draw(counters), draw(counters)


def turn_order(winners: list[int], discarder: int) -> list[int]:
    return sorted(winners, key=lambda w: (w - discarder) % 4)


@PROPERTY
@given(case=ron_cases())
def test_ron_balances_net_of_sticks(case: tuple) -> None:
    wins, discarder, dealer, rules, honba, sticks = case
    s = settle_ron(wins, discarder, dealer, rules, honba=honba, sticks=sticks)
    assert sum(s.deltas) == s.sticks_points
    assert s.sticks_points == 1000 * sticks
    first = turn_order([w.winner for w in wins], discarder)[0]
    assert s.sticks_to == (first if sticks else None)
    for p in s.payments:
        assert p.amount > 0
        assert p.payer != p.payee


@PROPERTY
@given(case=ron_cases(pao_may_win=False))
def test_ron_pays_each_winner_exactly(case: tuple) -> None:
    wins, discarder, dealer, rules, honba, sticks = case
    s = settle_ron(wins, discarder, dealer, rules, honba=honba, sticks=sticks)
    assert_well_formed(s)
    order = turn_order([w.winner for w in wins], discarder)
    pao_owed = [0, 0, 0, 0]
    for win in wins:
        first = win.winner == order[0]
        # the whole hand, liable part or not: 8000-multiples make the two halves exact
        expected = ron_value(win.value.base_points, win.winner == dealer)
        if first or rules.multi_ron_honba_to_each:
            expected += 300 * honba
        if first:
            expected += 1000 * sticks
        assert s.deltas[win.winner] == expected
        assert s.deltas[win.winner] > 0  # winners never lose
        liable = liable_base(win.value, win.pao, rules.pao_liability)
        if liable and win.pao != discarder:
            pao_owed[win.pao] += ron_value(liable, win.winner == dealer) // 2
    winners = {w.winner for w in wins}
    for seat in range(4):
        if seat not in winners:
            assert s.deltas[seat] <= 0  # payers never gain
            if seat != discarder:
                assert s.deltas[seat] == -pao_owed[seat]
    assert s.deltas[discarder] < 0


@PROPERTY
@given(value=hand_values(), winner=seats, discarder=seats, other=seats, rules=presets)
def test_dealer_ron_costs_at_least_non_dealer_ron(
    value: HandValue, winner: int, discarder: int, other: int, rules: RuleSet
) -> None:
    if discarder == winner:
        discarder = (winner + 1) % 4
    if other == winner:
        other = (winner + 2) % 4
    as_dealer = settle_ron([RonWin(winner, value)], discarder, winner, rules)
    as_non_dealer = settle_ron([RonWin(winner, value)], discarder, other, rules)
    assert -as_dealer.deltas[discarder] >= -as_non_dealer.deltas[discarder]
    assert as_dealer.deltas[winner] >= as_non_dealer.deltas[winner]


# ---------------------------------------------------------------- draws, nagashi, chombo


@PROPERTY
@given(tenpai=st.tuples(st.booleans(), st.booleans(), st.booleans(), st.booleans()))
def test_noten_payments(tenpai: tuple[bool, bool, bool, bool]) -> None:
    s = settle_exhaustive_draw(tenpai)
    assert_well_formed(s)
    assert sum(s.deltas) == 0
    assert s.sticks_to is None
    ready = sum(tenpai)
    for seat in range(4):
        if ready in (0, 4):
            assert s.deltas[seat] == 0
        elif tenpai[seat]:
            assert s.deltas[seat] == 3000 // ready  # 3000, 1500, 1000
        else:
            assert s.deltas[seat] == -3000 // (4 - ready)  # -1000, -1500, -3000


@PROPERTY
@given(
    rules=st.sampled_from([r for r in PRESETS.values() if r.nagashi is not Nagashi.NONE]),
    players=st.lists(seats, min_size=1, max_size=4, unique=True),
    dealer=seats,
    honba=counters,
    sticks=counters,
)
def test_nagashi_balances(rules: RuleSet, players: list[int], dealer: int, honba: int, sticks: int) -> None:
    s = settle_nagashi(players, dealer, rules, honba=honba, sticks=sticks)
    assert sum(s.deltas) == s.sticks_points
    if rules.nagashi is Nagashi.WIN:
        assert s.sticks_points == 1000 * sticks
        if sticks:
            assert s.sticks_to == min(players, key=lambda p: (p - dealer) % 4)
    else:
        assert s.sticks_points == 0
        assert s.sticks_to is None
    if len(players) == 1:
        (p,) = players
        gain = 12000 if p == dealer else 8000
        if rules.nagashi is Nagashi.WIN:
            gain += 300 * honba + 1000 * sticks
        assert s.deltas[p] == gain
        assert all(s.deltas[o] < 0 for o in range(4) if o != p)


@PROPERTY
@given(rules=presets, offender=seats, dealer=seats)
def test_chombo_balances(rules: RuleSet, offender: int, dealer: int) -> None:
    s = settle_chombo(offender, dealer, rules)
    assert sum(s.deltas) == 0
    assert s.sticks_points == 0
    if rules.chombo is ChomboPenalty.FINAL_PENALTY:
        assert s.deltas == (0, 0, 0, 0)
        assert s.final_penalties[offender] == rules.chombo_final_points
        assert sum(s.final_penalties) == rules.chombo_final_points
    else:
        assert s.deltas[offender] == (-12000 if offender == dealer else -8000)
        assert all(s.deltas[o] > 0 for o in range(4) if o != offender)
        assert s.final_penalties == (0, 0, 0, 0)


# ---------------------------------------------------------------- final standings


score_values = st.one_of(
    st.sampled_from([20000, 25000, 30000, 35000]),  # small set: plenty of ties
    st.integers(-300, 900).map(lambda h: h * 100),
)


@st.composite
def final_cases(draw: st.DrawFn) -> tuple[RuleSet, list[int], int, int]:
    rules = draw(presets)
    sticks = draw(st.integers(0, 6))
    three = [draw(score_values) for _ in range(3)]
    fourth = 4 * rules.start_points - 1000 * sticks - sum(three)
    scores = draw(st.permutations([*three, fourth]))
    return rules, scores, sticks, draw(seats)


@PROPERTY
@given(case=final_cases())
def test_final_standings_sum_to_zero_and_rank(case: tuple) -> None:
    rules, scores, sticks, first_dealer = case
    standings = final_standings(scores, rules, leftover_sticks=sticks, first_dealer=first_dealer)
    assert sorted(st_.seat for st_ in standings) == [0, 1, 2, 3]
    assert sum(st_.result for st_ in standings) == 0
    assert sum(st_.uma for st_ in standings) == 0
    assert sum(st_.oka for st_ in standings) == rules.oka
    assert sum(st_.points for st_ in standings) == sum(scores) + 1000 * sticks
    places = [st_.place for st_ in standings]
    assert places[0] == 1
    assert all(1 <= p <= 4 for p in places)
    assert places == sorted(places)
    for st_ in standings:
        assert st_.result == st_.points - rules.return_points + st_.oka + st_.uma - st_.penalty
    if rules.ties_share_uma:
        for st_ in standings:
            assert st_.place == 1 + sum(1 for x in scores if x > scores[st_.seat])
            tied = [o for o in standings if scores[o.seat] == scores[st_.seat]]
            assert all(o.uma == st_.uma for o in tied)  # preset uma always divides evenly among the tied
            assert all(o.place == st_.place for o in tied)
    else:
        assert places == [1, 2, 3, 4]
        order = sorted(range(4), key=lambda s: (-scores[s], (s - first_dealer) % 4))
        assert [st_.seat for st_ in standings] == order
        assert [st_.uma for st_ in standings] == list(rules.uma)


@PROPERTY
@given(case=final_cases(), penalties=st.tuples(*[st.sampled_from([0, 20000])] * 4))
def test_final_standings_penalties_come_off_the_total(case: tuple, penalties: tuple[int, int, int, int]) -> None:
    rules, scores, sticks, first_dealer = case
    with_pen = final_standings(scores, rules, leftover_sticks=sticks, penalties=penalties, first_dealer=first_dealer)
    without = final_standings(scores, rules, leftover_sticks=sticks, first_dealer=first_dealer)
    assert sum(st_.result for st_ in with_pen) == -sum(penalties)
    # the penalty is taken after uma: places and uma are those of the game without it
    assert [(s.seat, s.place, s.uma) for s in with_pen] == [(s.seat, s.place, s.uma) for s in without]
    for a in with_pen:
        b = next(x for x in without if x.seat == a.seat)
        assert a.result == b.result - penalties[a.seat]
