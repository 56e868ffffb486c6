"""All-last conditions against cases worked out by hand, the arithmetic written beside each.

Notation: in the last hand (South 4, dealer Dan, seat 3) a non-dealer's tsumo is written "n/d": each
non-dealer pays n, the dealer d (hand value, counters aside); a place counts only outright (a tie shared
under EMA, or lost by seat order under Tenhou, is not the place). Tsumo shares from base points b:
n = ceil100(b), d = ceil100(2b); the cheapest that matter here:
    b=240 300/500   b=320 400/700   b=400 400/800   b=480 500/1000   b=560 600/1200   b=640 700/1300
    b=720 800/1500  b=800 800/1600  b=880 900/1800  b=960 1000/2000  b=1120 1200/2300 ... mangan 2000/4000
Non-dealer rons 4b: 1000 1300 1600 2000 2300 2600 2900 3200 3600 3900 4500 5200 5800 6400 7100 7700 8000.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tablesvc.rules.conditions import all_last_conditions, describe
from tablesvc.rules.ruleset import get_ruleset
from tablesvc.rules.scoring import Limit

PLAYERS = ["Ann", "Bob", "Cid", "Dan"]
SOUTH_4 = 7


def lines(rules: str, scores, *, honba=0, sticks=0, dealer=3):
    conditions = all_last_conditions(get_ruleset(rules), SOUTH_4, scores, dealer, honba=honba, sticks=sticks)
    assert conditions is not None
    return dict(zip(PLAYERS, describe(conditions, PLAYERS), strict=True)), conditions


def test_non_dealer_places_by_tsumo_ron_and_draw():
    # EMA 2012. Ann 32000, Bob 28000, Cid 31000, Dan (dealer) 29000; no counters, no sticks.
    text, detail = lines("ema2012", [32000, 28000, 31000, 29000])
    # Bob (4th). 1st must pass Ann: after an n/d tsumo 28000+2n+d > 32000-n, i.e. 3n+d > 4000:
    #   800/1600 gives 4000 exactly, a tie (shared, not 1st); 900/1800 gives 4500. (Passing Cid needs only
    #   3n+d > 3000.) By ron from Ann 28000+R > 32000-R -> R > 2000, but Cid stays at 31000: R > 3000 -> 3200.
    #   From Cid or Dan Ann keeps 32000: R > 4000 -> 4500.
    # 2nd: pass two of three. Tsumo: Dan (dealer) needs 2n+2d > 1000 (300/500 does), Cid 3n+d > 3000:
    #   600/1200 ties at 3000, 700/1300 passes. Ron from Ann: Dan needs R > 1000, Ann R > 2000 -> 2300;
    #   from Cid: Dan R > 1000 and Cid 28000+R > 31000-R -> R > 1500 -> 1600; from Dan: Dan R > 500,
    #   Cid R > 3000 -> 3200. A draw (dealer noten, else he keeps the deal): Bob alone tenpai +3000 = 31000
    #   ties Ann at 31000 (shared 1st-2nd: 2nd), passes Cid 30000; with Cid also tenpai Bob has 29500 to
    #   Cid's 32500 and Ann's 30500 (3rd); with Ann also tenpai Bob ties Cid at 29500 (3rd): alone only.
    # 3rd: pass Dan: 300/500 tsumo (600+1000 > 1000); ron R > 1000 -> 1300 from Ann or Cid, from Dan
    #   R > 500 -> 1000; any tenpai at a draw (Bob gets 1000 at least, the noten dealer pays 1000 at least).
    assert text["Bob"] == [
        "1st with 900/1800 tsumo, 3200 from Ann or 4500 from Cid or Dan",
        "2nd with 700/1300 tsumo, 2300 from Ann, 1600 from Cid, 3200 from Dan or tenpai alone at a draw",
        "3rd with 300/500 tsumo, 1300 from Ann or Cid, 1000 from Dan or tenpai at a draw",
    ]
    # Cid (2nd) passes Ann with 3n+d > 1000: 300/500 (1400); ron from Ann 2R > 1000 -> 1000, from Bob or
    # Dan R > 1000 -> 1300. Draw: alone 34000 vs 31000; with Bob 32500 vs 31000; with Ann 32500 vs 33500:
    # tenpai with Ann noten.
    assert text["Cid"] == ["1st with 300/500 tsumo, 1000 from Ann, 1300 from Bob or Dan or tenpai at a draw "
                           "with Ann noten"]
    # Ann leads; Dan (dealer) under EMA plays on after any win or tenpai of his: no place is decided by it.
    assert text["Ann"] == [] and text["Dan"] == ["a win or tenpai keeps the deal"]
    bob = detail[1]
    assert (bob.place, bob.dealer, bob.dealer_keeps) == (4, False, False)
    first = bob.targets[0]
    assert (first.tsumo.price.han, first.tsumo.price.fu, first.tsumo.points) == (1, 110, "900/1800")
    assert [(r.from_seat, r.points, r.price.limit) for r in first.ron] == [(0, 3200, Limit.NONE),
                                                                             (2, 4500, Limit.NONE),
                                                                             (3, 4500, Limit.NONE)]
    assert detail[3].dealer_keeps and all(not t.reachable for t in detail[3].targets)
    # a limit is named by its own han: Cid's haneman is 6 han, not the first han count that reaches it
    _, tenhou = lines("tenhou", [31000, 29000, 20000, 20000])
    assert (tenhou[2].targets[0].tsumo.price.han, tenhou[2].targets[0].tsumo.price.fu) == (6, 0)


def test_counters_and_riichi_sticks_on_the_table_are_collected():
    # EMA 2012, two counters and two riichi sticks on the table. Ann 33000, Bob 27000, Cid 30000, Dan 28000.
    text, _ = lines("ema2012", [33000, 27000, 30000, 28000], honba=2, sticks=2)
    # Bob's n/d tsumo: each pays 200 more (100 a counter), Bob takes the 2000 on the table:
    #   27000 + 2n + d + 600 + 2000 > 33000 - n - 200  ->  3n + d > 3200: 600/1200 (3000) no, 700/1300 (3400).
    #   Without counters and sticks he would need 3n + d > 6000.
    # Ron from Ann: 27000 + R + 600 + 2000 > 33000 - R - 600  ->  R > 1400: 1600. From Cid or Dan (Ann keeps
    #   33000): R + 2600 > 6000 -> R > 3400: 3600.
    assert text["Bob"][0] == "1st with 700/1300 tsumo, 1600 from Ann or 3600 from Cid or Dan"
    # 2nd: 300/500 tsumo: Bob 27000 + 1100 + 600 + 2000 = 30700; Cid 29500, Dan 27300, Ann 32500. Ron 1000
    # from anyone: Bob 30600 over Cid (30000 or 28400) and Dan. A draw keeps the sticks on the table: alone
    # Bob has 30000, Cid 29000: 2nd; with Ann tenpai too Bob and Cid tie at 28500.
    assert text["Bob"][1] == "2nd with 300/500 tsumo, 1000 from Ann or Cid or Dan or tenpai alone at a draw"


def test_no_hand_reaches_first():
    # EMA 2012: Ann 80000, Bob 10000, Cid 15000, Dan 15000 (Cid and Dan tied, sharing 2nd-3rd).
    text, _ = lines("ema2012", [80000, 10000, 15000, 15000])
    # Bob's best: a yakuman (base 8000) by ron from Ann: 10000 + 32000 = 42000 against 80000 - 32000 = 48000.
    # 2nd: pass Cid and Dan. Tsumo: Cid needs 3n + d > 5000 (1000/2000 ties at 5000, 1200/2300 passes) and
    #   Dan 2n + 2d > 5000. Ron from Cid: Cid R > 2500, but Dan keeps 15000: R > 5000 -> 5200; from anyone
    #   5200.
    # 3rd: pass one: Dan with 2n + 2d > 5000 (800/1600 gives 4800, 900/1800 gives 5400); ron R > 2500 -> 2600
    #   from Cid or Dan, from Ann R > 5000 -> 5200.
    assert text["Bob"] == [
        "1st: out of reach",
        "2nd with 1200/2300 tsumo or 5200 from Ann or Cid or Dan",
        "3rd with 900/1800 tsumo, 5200 from Ann or 2600 from Cid or Dan",
    ]


def test_tenhou_dealer_stops_on_top_and_the_game_must_end():
    # Tenhou: 25000 start, 30000 return; after South 4 the game ends only when someone has 30000 (else West),
    # and a dealer who wins into first with 30000 ends it. Ann 27000, Bob 25000, Cid 24000, Dan 24000.
    text, detail = lines("tenhou", [27000, 25000, 24000, 24000])
    # Bob: a win that leaves everyone under 30000 plays on, so he needs 30000 himself: tsumo 2n + d >= 5000:
    # 1200/2300 = 4700 no, 1300/2600 = 5200; ron R >= 5000 -> 5200. Then he is first anyway: 2nd and 3rd
    # need the same hand and are not repeated.
    assert text["Bob"] == ["1st with 1300/2600 tsumo or 5200 from Ann or Cid or Dan"]
    # Dan (dealer): 24000 + 3x >= 30000 -> x >= 2000: 1800 all (b=880) gives 29400, 2000 all (b=960) 30000.
    # Dealer ron 6b: 5800 (b=960) gives 29800, 6800 (b=1120) 30800. A smaller win keeps the deal.
    assert text["Dan"] == ["a smaller win or tenpai keeps the deal", "1st with 2000 all tsumo or 6800 from Ann or "
                           "Bob or Cid"]
    # Cid and Dan tie at 24000: under Tenhou the earlier seat from the first dealer ranks higher.
    assert (detail[2].place, detail[3].place) == (3, 4)


def test_ties_are_broken_by_seat_order_under_tenhou():
    # Tenhou: Ann 31000, Bob 29000, Cid 20000, Dan 20000 (Ann already has 30000: a non-dealer win ends it).
    text, _ = lines("tenhou", [31000, 29000, 20000, 20000])
    # Bob by ron from Ann: 1000 makes 30000 each, a tie Ann (seat 0) wins; 1300 passes. Tsumo: 3n + d > 2000:
    # 400/800 ties, 500/1000 passes. From Cid or Dan: 29000 + R > 31000 -> 2000 ties, 2300 passes.
    # A draw: Bob alone +3000 = 32000 over Ann's 30000; with Ann tenpai 30500 each (Ann first); with Cid
    # tenpai, Ann noten: 30500 over 30000.
    assert text["Bob"] == ["1st with 500/1000 tsumo, 1300 from Ann, 2300 from Cid or Dan or tenpai at a draw "
                           "with Ann noten"]
    # Cid 2nd by ron from Bob: 3900 leaves Cid 23900 under Bob's 25100, 4500 ties at 24500 (Bob, seat 1,
    # ranks higher), 5200 passes. A mangan tsumo would pass Bob (28000 to 27000) but leaves Ann at 29000,
    # nobody at 30000: the game goes on into West, so it decides no place; a haneman does (Cid 32000).
    assert text["Cid"][1] == "2nd with a haneman tsumo, a haneman from Ann or Dan or 5200 from Bob"


def test_under_tenhou_a_bigger_hand_is_not_always_as_good():
    # Tenhou: Ann 25000, Bob 25000, Cid 30300, Dan (dealer) 19700. The game ends only with someone at 30000.
    text, _ = lines("tenhou", [25000, 25000, 30300, 19700])
    # Bob 2nd: a 300/500 tsumo leaves Cid at exactly 30000 (pays 300): the game ends, Bob 26100 is 2nd. A
    # 400/700 takes Cid to 29900 and nobody has 30000: play goes on into West, no place is decided. Bob's
    # own 30000 needs 2n + d >= 5000: 1300/2600 (30200), which is 1st. By ron from Ann or Dan 1000 ends it
    # (Cid keeps 30300); from Cid any ron takes Cid under 30000, so Bob needs 30000 himself: 5200.
    # A draw (Dan tenpai keeps the deal): Bob alone tenpai has 28000 and Cid pays 1000 (29300): nobody at
    # 30000, play goes on, no place. Bob and Cid tenpai: Cid 31800 ends it, Bob 26500 over Ann 23500: 2nd.
    # Bob and Ann: 26500 each, Cid 28800, play goes on. Bob, Ann and Cid: Bob and Ann 26000 each, Ann
    # (seat 0) ranks higher: 3rd. Only one draw does it, and it is said as it is.
    assert text["Bob"] == [
        "1st with 1300/2600 tsumo, 5800 from Ann or Dan or 5200 from Cid",
        "2nd with 300/500 tsumo, 1000 from Ann or Dan, 5200 from Cid or tenpai at a draw with Cid tenpai and "
        "Ann and Dan noten",
    ]


def test_two_han_minimum_and_only_in_the_last_hand():
    ema = get_ruleset("ema2012")
    # before South 4 there is no all-last position
    assert all_last_conditions(ema, SOUTH_4 - 1, [30000] * 4, 2) is None
    # five counters under EMA 2012: a win needs two han, so the cheapest non-dealer ron is seven pairs,
    # 2 han 25 fu (b = 25 x 2^4 = 400: 1600), not 1000. Bob 29000 against Ann 31000 (Cid, Dan 30000):
    # from Ann 29000 + R + 1500 > 31000 - R -> R > 250; from Cid 29000 + R + 1500 > 31000 -> R > 500:
    # any hand would do, the two-han minimum decides it. Under EMA 2016 (no minimum) it is 1000.
    conditions = all_last_conditions(ema, SOUTH_4, [31000, 29000, 30000, 30000], 3, honba=5)
    first = conditions[1].targets[0]
    assert [(r.points, r.price.han, r.price.fu) for r in first.ron] == [(1600, 2, 25)] * 3
    assert first.tsumo.points == "400/700" and first.tsumo.price.han == 2  # b=320: 2 han 20 fu, pinfu tsumo
    ema2016 = all_last_conditions(get_ruleset("ema2016"), SOUTH_4, [31000, 29000, 30000, 30000], 3, honba=5)
    assert [r.points for r in ema2016[1].targets[0].ron] == [1000] * 3


@settings(max_examples=40, deadline=None)
@given(rules=st.sampled_from(["ema2012", "ema2016", "ema2025", "tenhou"]),
       shifts=st.lists(st.integers(-150, 150), min_size=3, max_size=3),
       honba=st.integers(0, 6), sticks=st.integers(0, 3), dealer=st.integers(0, 3))
def test_every_condition_is_the_cheapest_that_works(rules, shifts, honba, sticks, dealer):
    """Against the definition, by a plain scan of every hand value: the named hand reaches the place, every
    cheaper one does not, and where no hand is named not even a yakuman does."""
    from tablesvc.rules.conditions import _Game

    ruleset = get_ruleset(rules)
    start = ruleset.start_points - 1000 * sticks // 4 // 100 * 100
    scores = [start + 100 * x for x in shifts]
    scores.append(4 * ruleset.start_points - 1000 * sticks - sum(scores))
    conditions = all_last_conditions(ruleset, SOUTH_4, scores, dealer, honba=honba, sticks=sticks)
    game = _Game(ruleset, SOUTH_4, tuple(scores), dealer, honba, sticks, (0, 0, 0, 0))
    for c in conditions:
        for target in c.targets:
            named = {None: target.tsumo.price if target.tsumo else None}
            named |= {r.from_seat: r.price for r in target.ron}
            for from_seat in [None, *(o for o in range(4) if o != c.seat)]:
                prices = game.tsumo_prices if from_seat is None else game.ron_prices
                works = [p for p in prices if (got := game.outcome(c.seat, p, from_seat)) is not None
                         and got <= target.place]
                assert named.get(from_seat) == (works[0] if works else None), (c.seat, target.place, from_seat)
            # the draw: every exhaustive draw the condition covers reaches the place; with none named, none does
            covered = [ok for tenpai, ok in _draws(game, c.seat, target.place).items()
                       if all(not tenpai[s] for s in target.draw_noten) and all(tenpai[s] for s in target.draw_tenpai)
                       and (target.draw != "tenpai alone" or sum(tenpai) == 1)]
            assert (all(covered) and covered) if target.draw else not any(_draws(game, c.seat, target.place).values())


def _draws(game, seat: int, place: int) -> dict[tuple[bool, ...], bool]:
    """Every exhaustive draw with ``seat`` tenpai, but those after which the dealer keeps the deal: whether
    the game ends with ``seat`` at ``place`` or better (plain enumeration, for the check above)."""
    from tablesvc.rules.game_end import game_ends
    from tablesvc.rules.payments import settle_exhaustive_draw

    out = {}
    for mask in range(16):
        tenpai = tuple(bool(mask >> s & 1) or s == seat for s in range(4))
        after = [x + d for x, d in zip(game.scores, settle_exhaustive_draw(tenpai).deltas, strict=True)]
        ends = game_ends(game.rules, SOUTH_4, after, game.dealer, tenpai[game.dealer])
        if not ends and tenpai[game.dealer]:
            continue
        out[tenpai] = ends and game.place(after, seat, leftover=game.sticks) <= place
    return out
