"""Impossible events are refused with a reason a referee can act on, and change nothing.

Every refusal goes through ``assert_unchanged_after``: the message must hold the
given fragments, the engine's state must equal a deep copy taken before, and
the pure ``apply`` must leave its input alone as well. Many of these events
would first imply an unseen draw; the refusal must undo that draw too.
"""

from __future__ import annotations

import pytest

from tablesvc.engine.engine import Engine, Rejected
from tablesvc.engine.events import (
    AbortiveDraw,
    AddedKan,
    Call,
    Chombo,
    ConcealedKan,
    DeadHand,
    DiceRolled,
    Discard,
    DoraRevealed,
    Draw,
    EndGame,
    Event,
    ExhaustiveDraw,
    GameStart,
    HandStart,
    Ron,
    RonClaim,
    SetScores,
    Tsumo,
)
from tablesvc.engine.state import Phase
from tests.scenario import Table, assert_unchanged_after, deal, t, ts

KNOWN_DEAL = deal(
    "123456789m23pEE",  # seat 0: after drawing N, discarding N leaves 1-9m 23p EE, waiting on 1p/4p
    "12349m159p19sESW",
    "147m258p369s5677z",
    "2568m3467p12478s",
)


def _known() -> Table:
    tb = Table()
    tb.start_hand(KNOWN_DEAL)
    return tb


def _camera(script: str = "", rules: str = "ema2012") -> Table:
    tb = Table(rules)
    tb.start_hand()
    tb.play(script)
    return tb


# ---------------------------------------------------------------- the deal


def test_fifth_tile_of_a_kind_in_the_deal() -> None:
    tb = Table()
    # five 1m: four in seat 0's hand and one in seat 1's
    hands = deal("1111m234567p123s", "1m234567s123456p", "234567m234567s9p", "ESWNPFC89p899s9m")
    assert_unchanged_after(tb.engine, HandStart(hands=hands), "impossible deal", "5 x 1 man")
    assert tb.state.phase is Phase.BETWEEN_HANDS


def test_two_red_fives_of_a_suit_in_the_deal() -> None:
    tb = Table()
    hands = deal("0m1234678m12345p", "0m1234678s12345p", "123456789s1234z", "2345678p234567s")
    assert_unchanged_after(tb.engine, HandStart(hands=hands), "impossible deal", "red")


def test_a_hand_of_twelve_in_the_deal() -> None:
    tb = Table()
    hands = deal("123456789m23pE", "12349m159p19sESW", "147m258p369s5677z", "2568m3467p12478s")
    assert_unchanged_after(tb.engine, HandStart(hands=hands), "13 tiles")


def test_fifth_tile_of_a_kind_on_the_table() -> None:
    tb = _camera("0:d1m 1:d1m 2:d1m 3:d1m")
    assert_unchanged_after(tb.engine, Discard(0, t("1m")), "fifth", "1 man")


# ---------------------------------------------------------------- turns


def test_discard_out_of_turn() -> None:
    tb = _camera("0:d2m")
    assert_unchanged_after(tb.engine, Discard(3, t("3m")), "seat 3 cannot discard now", "seat 1 draws")
    assert_unchanged_after(tb.engine, Discard(0, t("3m")), "seat 0 cannot discard now")


def test_discard_of_a_tile_not_held() -> None:
    tb = _known()
    tb.send(Draw(0, t("N")))
    assert_unchanged_after(tb.engine, Discard(0, t("9s")), "seat 0 does not hold 9s")
    tb.send(Discard(0, t("N")))


def test_draw_out_of_turn() -> None:
    tb = _known()
    assert_unchanged_after(tb.engine, Draw(1, t("N")), "seat 1 cannot draw now", "seat 0 is to draw")


def test_riichi_player_must_discard_the_drawn_tile() -> None:
    tb = _known()
    tb.send(Draw(0, t("N")), Discard(0, t("N"), riichi=True))
    tb.send(Draw(1, t("7p")), Discard(1, t("7p")), Draw(2, t("8p")), Discard(2, t("8p")))
    tb.send(Draw(3, t("9p")), Discard(3, t("9p")), Draw(0, t("6s")))
    assert_unchanged_after(tb.engine, Discard(0, t("1m")), "in riichi", "must discard the drawn tile 6s")
    assert_unchanged_after(tb.engine, Discard(0, t("6s"), riichi=True), "already in riichi")


# ---------------------------------------------------------------- calls


def test_chi_from_the_wrong_seat() -> None:
    tb = _camera("0:d3m")
    assert_unchanged_after(tb.engine, Call(2, "chi", ts("345m"), t("3m"), 0), "chi only from the player on the left")


@pytest.mark.parametrize(
    ("script", "call", "fragments"),
    [
        ("0:d3m", Call(2, "pon", ts("777p"), t("7p"), 0), ("the last discard was 3m, not 7p",)),
        ("0:d3m", Call(2, "pon", ts("333m"), t("3m"), 3), ("the last discard was seat 0's, not seat 3's",)),
        ("0:d3m 1:d4m", Call(2, "pon", ts("333m"), t("3m"), 0), ("the last discard was seat 1's",)),
        ("0:d3m", Call(0, "pon", ts("333m"), t("3m"), 0), ("cannot call their own discard",)),
        ("0:d3m", Call(2, "pon", ts("334m"), t("3m"), 0), ("identical",)),
        ("0:d3m", Call(1, "chi", ts("356m"), t("3m"), 0), ("consecutive",)),
    ],
    ids=["other-tile", "other-seat", "earlier-discard", "own-discard", "not-a-pon", "not-a-chi"],
)
def test_call_of_something_that_is_not_the_last_discard(script: str, call: Call, fragments: tuple[str, ...]) -> None:
    tb = _camera(script)
    assert_unchanged_after(tb.engine, call, *fragments)


def test_call_after_the_next_player_discarded() -> None:
    tb = _camera("0:d3m 1:+")  # seat 1 drew: seat 0's 3m can no longer be called
    assert_unchanged_after(tb.engine, Call(2, "pon", ts("333m"), t("3m"), 0), "cannot call now", "seat 1 is to discard")


def test_call_of_tiles_not_held() -> None:
    tb = _known()
    tb.send(Draw(0, t("N")), Discard(0, t("4m")))
    # seat 2 holds one 4m, not two
    assert_unchanged_after(tb.engine, Call(2, "pon", ts("444m"), t("4m"), 0), "seat 2 does not hold 4m")


def test_call_on_the_last_discard_only_ron() -> None:
    tb = _camera()
    tb.exhaust()
    assert tb.hand.wall == 0
    assert_unchanged_after(tb.engine, tb.event("3:pon"), "the last discard can be claimed only to win")
    assert_unchanged_after(tb.engine, tb.event("2:kan"), "only to win")


def test_a_riichi_player_cannot_call() -> None:
    tb = _camera("0:d1m 1:d9p 2:d3m 3:d4m 0:d6m 1:r1p 2:d2m 3:d3s 0:d7p")
    assert_unchanged_after(tb.engine, tb.event("1:pon"), "in riichi and cannot call")


def test_a_dead_hand_cannot_call_or_win() -> None:
    tb = _camera("0:d9m 1:d1p 2:dN 3:dW 0:d8m")
    tb.send(DeadHand(2, reason="14 tiles"))
    tb.play("1:d4s")
    assert_unchanged_after(tb.engine, tb.event("2:pon"), "dead hand")
    assert_unchanged_after(tb.engine, Ron(1, (RonClaim(2, ts("234m567m345p88p456s")),)), "dead hand")


# ---------------------------------------------------------------- kans


def test_fifth_kan() -> None:
    tb = _camera("0:ankan1m 0:ankan2m 0:ankan3m 0:ankan4m")  # four concealed kans by one player: play goes on
    assert tb.hand.kans == [0, 0, 0, 0]
    assert_unchanged_after(tb.engine, ConcealedKan(0, ts("6666p")), "four kans", "no fifth")
    tb.play("0:d9p")
    assert_unchanged_after(tb.engine, tb.event("1:kan"), "four kans", "no fifth")


def test_kan_in_the_turn_of_a_pon() -> None:
    tb = _camera("0:d2p 2:pon")
    assert_unchanged_after(tb.engine, ConcealedKan(2, ts("6666s")), "in the turn of a chi or pon")
    assert_unchanged_after(tb.engine, AddedKan(2, t("2p")), "in the turn of a chi or pon")


def test_added_kan_without_a_pon() -> None:
    tb = _camera("0:d2m 1:d3m")
    assert_unchanged_after(tb.engine, AddedKan(2, t("7p")), "no pon of 7p")


def test_no_concealed_kan_on_the_last_tile() -> None:
    tb = _camera()
    tb.burn(69)
    assert_unchanged_after(tb.engine, ConcealedKan(1, ts("9999s")), "no kan on the last tile")


def test_concealed_kan_robbed_only_for_thirteen_orphans() -> None:
    tb = _camera("0:d2m 1:d3m 2:d4m 3:d5m 0:ankan1m")
    # 23m + 1m would complete 123m 789m 345p 456s 11s, but only thirteen orphans may rob a concealed kan
    assert_unchanged_after(tb.engine, Ron(0, (RonClaim(2, ts("123m789m345p456s11s")),)), "thirteen orphans")


def test_dora_indicator_without_a_kan() -> None:
    tb = _camera("0:d2m")
    assert_unchanged_after(tb.engine, DoraRevealed(t("3p")), "no kan is waiting")


# ---------------------------------------------------------------- riichi


def test_riichi_with_an_open_hand() -> None:
    tb = _camera("0:d2p 2:pon 2:d1m 3:d4m 0:d6m 1:d9p")
    assert_unchanged_after(tb.engine, Discard(2, t("3s"), riichi=True), "cannot declare riichi with an open hand")


def test_riichi_with_fewer_than_1000_points() -> None:
    tb = Table()
    tb.send(SetScores((30000, 900, 30000, 59100)))
    tb.start_hand()
    tb.play("0:d2m")
    assert_unchanged_after(tb.engine, Discard(1, t("3m"), riichi=True), "900 points", "fewer than the 1000")


def test_riichi_not_tenpai_with_known_hands() -> None:
    tb = _known()
    tb.send(Draw(0, t("N")))
    # 1-9m 23p E N: not ready
    assert_unchanged_after(tb.engine, Discard(0, t("E"), riichi=True), "not tenpai after discarding E")
    tb.send(Discard(0, t("N"), riichi=True))  # 1-9m 23p EE: ready


def _riichi_then_draw(hand13: str, then: str) -> Table:
    """Seat 0 declares riichi on ``hand13`` (drawing and discarding F), the others discard, seat 0 draws ``then``."""
    tb = Table()
    tb.start_hand(deal(hand13, "13579m13579p135s", "468m2468p2468sEE", "99m99p99sSSWWCCP"))
    tb.send(Draw(0, t("F")), Discard(0, t("F"), riichi=True))
    for seat, tile in ((1, "7s"), (2, "3s"), (3, "6m")):
        tb.send(Draw(seat, t(tile)), Discard(seat, t(tile)))
    tb.send(Draw(0, t(then)))
    return tb


def test_a_riichi_kan_that_changes_the_wait_is_refused() -> None:
    """3.3.12: 2223m waits on 1m, 3m and 4m; a kan of 2m would leave the 3m alone (1m and 4m lost)."""
    tb = _riichi_then_draw("2223m456p789sNNN", "2m")
    assert_unchanged_after(tb.engine, ConcealedKan(0, ts("2222m")), "in riichi", "change the wait or the sets")


def test_a_riichi_kan_that_changes_the_sets_is_refused() -> None:
    """3.3.12: 222 33 444 678m EE waits on 3m or E before and after a kan of 2m, but 222 333 444m also reads
    as 234 234 234m: the kan would take that reading away, so the sets change."""
    tb = _riichi_then_draw("22233444678mEE", "2m")
    assert_unchanged_after(tb.engine, ConcealedKan(0, ts("2222m")), "in riichi", "change the wait or the sets")


def test_a_riichi_kan_on_a_set_the_hand_keeps_is_accepted() -> None:
    tb = _riichi_then_draw("222m567m456p789sN", "2m")  # waits on N alone, before and after the kan
    tb.send(ConcealedKan(0, ts("2222m")))
    assert [m.kind for m in tb.hand.seats[0].melds] == ["ankan"]


@pytest.mark.parametrize(("shown", "win", "valid"), [
    # before the kan 222 33 444 678m EE: 222 333 444m also reads 234 234 234m, the kan changed the sets
    ("333444678mEE", "3m", False),
    # before the kan 222m 567m 456p 789s N: the three 2m are a set in every reading, the wait stays N
    ("567m456p789sNN", "N", True),
])
def test_a_hidden_riichi_kan_is_checked_on_the_hand_shown_at_the_win(shown: str, win: str, valid: bool) -> None:
    """Hands unseen (a camera table): the kan after riichi is judged when the winner shows the hand (3.4.6)."""
    tb = _camera("0:rF 1:d9s 2:d9p 3:d9m 0:ankan2m 0:+")
    if valid:
        tb.tsumo(0, shown, win)
        assert tb.outputs[-1].wins[0].seat == 0
    else:
        assert_unchanged_after(tb.engine, Tsumo(0, ts(shown), t(win)), "concealed kan of 2m after riichi",
                               "changed the wait or the sets", "chombo")


def test_riichi_needs_four_tiles_left_in_the_wall() -> None:
    tb = _camera()
    tb.burn(66)
    assert tb.hand.wall == 4
    # seat 2 draws (3 left) and declares
    assert_unchanged_after(tb.engine, Discard(2, t("E"), riichi=True), "at least four tiles", "there are 3")
    tb = _camera()
    tb.burn(65)
    tb.send(Discard(1, t("E"), riichi=True))  # drawn with 4 left: allowed
    assert tb.hand.seats[1].riichi


# ---------------------------------------------------------------- wins

NO_YAKU = "123m789m345p11s456s"  # 123m 789m 345p 11s + 46s waiting on 5s: no yaku


def test_ron_with_no_yaku_is_a_chombo_to_declare() -> None:
    tb = _camera("0:d9m 1:d1p 2:dN 3:dW 0:d8m 1:d5s")
    assert_unchanged_after(tb.engine, Ron(1, (RonClaim(3, ts(NO_YAKU)),)), "no yaku", "chombo")


def test_ron_with_an_incomplete_hand_is_a_chombo_to_declare() -> None:
    tb = _camera("0:d9m 1:d1p 2:dN 3:dW 0:d8m 1:d5s")
    assert_unchanged_after(tb.engine, Ron(1, (RonClaim(3, ts("123m789m345p11s455s")),)), "not complete", "chombo")


def test_ron_in_furiten_is_a_chombo_to_declare() -> None:
    tb = _camera("0:d9m 1:d1p 2:dN 3:d7s 0:d8m 1:d4s")
    # seat 3 waits on 4s/7s and discarded 7s
    message = assert_unchanged_after(tb.engine, Ron(1, (RonClaim(3, ts("234m567m345p88p456s")),)), "furiten")
    assert "chombo" in message


def test_ron_when_nobody_discarded() -> None:
    tb = _camera("0:d2m 1:d3m")
    assert_unchanged_after(tb.engine, Ron(0, (RonClaim(2, ts("234m567m345p88p222m")),)), "nobody can ron from seat 0")


def test_tsumo_on_a_called_tile() -> None:
    tb = _camera("0:d9m 1:d1p 2:dN 3:dW 0:d2p 2:pon")
    assert_unchanged_after(tb.engine, Tsumo(2, ts("234m567m88p456s"), t("4s")), "a tsumo needs a drawn tile")


# ---------------------------------------------------------------- draws


def test_draw_when_the_wall_is_empty() -> None:
    tb = _camera()
    tb.exhaust()
    last = tb.hand.last_discard
    assert last is not None
    nxt = (last[0] + 1) % 4
    assert_unchanged_after(tb.engine, Draw(nxt), "cannot draw now", "the hand is drawn")
    assert_unchanged_after(tb.engine, Draw(nxt, t("E")), "cannot draw now")
    assert_unchanged_after(tb.engine, Discard(nxt, t("E")), "cannot discard now", "the hand is drawn")
    assert_unchanged_after(tb.engine, Tsumo(nxt, ts(NO_YAKU), t("5s")), "cannot win by tsumo now")


def test_exhaustive_draw_with_tiles_left() -> None:
    tb = _camera("0:d2m")
    assert_unchanged_after(tb.engine, ExhaustiveDraw((False, False, False, False)), "69 tiles are left")


def test_nine_terminals_needs_nine_kinds_with_known_hands() -> None:
    tb = _known()
    tb.send(Draw(0, t("N")), Discard(0, t("N")), Draw(1, t("6p")), Discard(1, t("6p")), Draw(2, t("8p")))
    # seat 2: 1m 9s P F C = five kinds
    assert_unchanged_after(tb.engine, AbortiveDraw("nine_terminals", seat=2), "fewer than nine")


def test_nine_terminals_only_on_the_first_draw() -> None:
    tb = _camera("0:d2m 1:d3m 2:d4m 3:d5m 0:d6m")
    assert_unchanged_after(tb.engine, AbortiveDraw("nine_terminals", seat=1), "first draw")


def test_four_winds_needs_the_same_wind() -> None:
    tb = _camera("0:dE 1:dE 2:dE 3:dS")
    assert_unchanged_after(tb.engine, AbortiveDraw("four_winds"), "four winds")


def test_four_winds_broken_by_a_call() -> None:
    tb = _camera("0:dE 1:dE 2:dE 3:ankanN 3:dE")  # a concealed kan interrupts the first go-around
    assert_unchanged_after(tb.engine, AbortiveDraw("four_winds"), "four winds")


# ---------------------------------------------------------------- game flow


@pytest.mark.parametrize(
    ("event", "fragment"),
    [
        (DiceRolled((3, 4)), "has not started"),
        (HandStart(), "has not started"),
        (DoraRevealed(t("1m")), "not started"),
        (Discard(0, t("1m")), "not started"),
        (Draw(0), "not started"),
        (Ron(0, (RonClaim(1, ts(NO_YAKU)),)), "not started"),
        (Tsumo(0, ts(NO_YAKU), t("5s")), "not started"),
        (Chombo(1), "during a hand"),
        (SetScores((30000, 30000, 30000, 30000)), "not started"),
        (EndGame(), "not started"),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, Event) else None,
)
def test_events_before_game_start(event: Event, fragment: str) -> None:
    engine = Engine()
    assert_unchanged_after(engine, event, fragment)
    assert engine.state.phase is Phase.NOT_STARTED


def test_game_start_twice_and_unknown_rules() -> None:
    tb = Table()
    assert_unchanged_after(tb.engine, GameStart(), "already started")
    with pytest.raises(Rejected, match="unknown rule set"):
        Engine().apply(GameStart(rules="ema1999"))


def test_nothing_after_the_game_is_over() -> None:
    tb = Table()
    tb.send(EndGame())
    assert_unchanged_after(tb.engine, EndGame(), "the game is over")
    assert_unchanged_after(tb.engine, HandStart(), "the game is over")


def test_house_rules_that_cannot_be_played_are_refused_at_the_start() -> None:
    engine = Engine()
    assert_unchanged_after(engine, GameStart(rules="ema2012; kiriage=maybe"), "house rule kiriage='maybe'",
                           "yes or no")
