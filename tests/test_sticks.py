"""The reconciliation of the game's scores with the stick trays, as pure code (tablesvc/sticks.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablesvc.sticks import Expected, Reconciler, SticksStatus, describe_differences

PLAYERS = ("Aoi", "Ben", "Chloe", "Dai")


def expected(scores, sticks=0, check="hand 1 (East 1) payments", pending=None) -> Expected:
    return Expected(tuple(scores), sticks, check, PLAYERS, pending)


def test_trays_that_agree_are_ok_and_a_mispayment_is_raised_when_the_next_hand_starts():
    r = Reconciler(grace=5.0)
    r.expect(expected([30000] * 4, check="game start"), 0.0)
    assert r.read([30000] * 4, 0, 0.5).status is SticksStatus.OK
    # Chloe won 7,700 from Ben, who paid 3,900 only
    r.expect(expected([30000, 22300, 37700, 30000]), 10.0)
    verdict = r.read([30000, 26100, 33900, 30000], 0, 12.0)
    assert verdict.status is SticksStatus.WAITING  # a payment may be in progress
    assert r.tick(13.0) is None
    raised = r.payments_over(14.0)
    assert raised.status is SticksStatus.MISMATCH
    assert [(d.seat, d.tray, d.game, d.difference) for d in raised.differences] == [
        (1, 26100, 22300, 3800), (2, 33900, 37700, -3800)]
    assert raised.text == ("Ben's tray holds 26,100, the game says 22,300; Chloe's 3,800 less "
                           "(after hand 1 (East 1) payments)")
    # the players fix their trays: the alert clears by itself
    assert r.read([30000, 22300, 37700, 30000], 0, 20.0).status is SticksStatus.OK


def test_a_difference_held_still_for_the_grace_is_raised_without_a_next_hand():
    r = Reconciler(grace=5.0)
    r.expect(expected([25000] * 4), 0.0)
    assert r.read([24000, 25000, 25000, 26000], 0, 1.0).status is SticksStatus.WAITING
    assert r.tick(5.9) is None
    verdict = r.tick(6.0)
    assert verdict.status is SticksStatus.MISMATCH
    assert verdict.text.startswith("Aoi's tray holds 24,000, the game says 25,000; Dai's 1,000 more")


def test_riichi_sticks_on_the_table_are_accounted_for():
    r = Reconciler(grace=5.0)
    # Ben declared riichi; the engine has not accepted it yet: his stick may be down already, or not yet
    r.expect(expected([25000] * 4, pending=1, check="Ben's riichi"), 0.0)
    assert r.read([25000, 24000, 25000, 25000], 1, 1.0).status is SticksStatus.OK
    assert r.read([25000, 25000, 25000, 25000], 0, 3.0).status is SticksStatus.OK
    # accepted: the stick must be on the table now
    r.expect(expected([25000, 24000, 25000, 25000], sticks=1, check="Ben's riichi"), 4.0)
    assert r.verdict.status is SticksStatus.WAITING
    verdict = r.payments_over(5.0)
    assert verdict.status is SticksStatus.MISMATCH
    assert verdict.text.startswith("Ben's tray holds 25,000, the game says 24,000; "
                                   "0 riichi sticks lie on the table, the game says 1")
    assert r.read([25000, 24000, 25000, 25000], 1, 6.0).status is SticksStatus.OK


def test_trays_that_do_not_add_up_are_a_payment_in_progress_then_a_device_fault():
    r = Reconciler(grace=5.0, incomplete_limit=3)
    r.expect(expected([25000] * 4), 0.0)
    assert r.read([25000, 17300, 25000, 25000], 0, 1.0).status is SticksStatus.WAITING  # sticks in a hand
    assert r.read([25000, 17300, 32700, 25000], 0, 2.0).status is SticksStatus.WAITING  # paid: no grace yet
    r = Reconciler(grace=5.0, incomplete_limit=3)
    r.expect(expected([25000] * 4), 0.0)
    for t in (1.0, 2.0):
        r.read([25000, 24000, 25000, 25000], 0, t)
        assert r.verdict.status is SticksStatus.WAITING
    verdict = r.read([25000, 24000, 25000, 25000], 0, 3.0)
    assert verdict.status is SticksStatus.FAULT and not verdict.differences
    assert "99,000 in all; the game has 100,000" in verdict.text
    # at the next hand, a table that does not add up is a fault at once, never a score alert
    r = Reconciler()
    r.expect(expected([25000] * 4), 0.0)
    r.read([25000, 24000, 25000, 25000], 0, 1.0)
    assert r.payments_over(2.0).status is SticksStatus.FAULT


def test_a_reader_that_never_settles_is_a_fault_until_it_settles():
    r = Reconciler(grace=5.0, flutter_readings=5, flutter_window=2.0)
    r.expect(expected([25000] * 4), 0.0)
    statuses = [r.read([25000 + 100 * (i % 2), 25000 - 100 * (i % 2), 25000, 25000], 0, 1.0 + 0.1 * i) or r.verdict
                for i in range(8)]
    assert statuses[-1].status is SticksStatus.FAULT and "never settle" in statuses[-1].text
    assert all(v.status is not SticksStatus.MISMATCH for v in statuses)
    assert (r.payments_over(2.0) or r.verdict).status is SticksStatus.FAULT
    assert r.tick(3.0) is None  # still within the window of the last reading
    settled = r.tick(4.0)  # quiet: trusted again, its last reading compared (Aoi 100 over, Ben 100 under)
    assert settled.status is SticksStatus.WAITING and settled.reading.trays == (25100, 24900, 25000, 25000)
    assert r.read([25000] * 4, 0, 5.0).status is SticksStatus.OK


def test_the_last_reading_of_a_burst_is_compared_once_the_reader_is_quiet():
    """A loose contact: 1,000 readings in 0.4 s, then the reader holds still. Its last reading is how the trays
    lie (it sends nothing more until they change): compared, and its difference raised after the grace, and
    seen by a referee's recheck; never "no tray reading yet" for ever."""
    r = Reconciler(grace=5.0)
    r.expect(expected([30000] * 4, check="game start"), 0.0)
    for i in range(1000):
        r.read([30000 - 100 * (i % 5), 30000 + 100 * (i % 5), 30000, 30000], 0, 1.0 + 0.0004 * i)
    last = r.read([29600, 30400, 30000, 30000], 0, 1.4) or r.verdict
    assert last.status is SticksStatus.FAULT and "never settle" in last.text
    quiet = r.tick(3.5)
    assert quiet.status is SticksStatus.WAITING and quiet.reading.trays == (29600, 30400, 30000, 30000)
    raised = r.tick(6.5)  # still for the grace since the last reading
    assert raised.status is SticksStatus.MISMATCH
    assert raised.text.startswith("Aoi's tray holds 29,600, the game says 30,000; Ben's 400 more")
    r.recheck(7.0)
    assert r.verdict.reading.trays == (29600, 30400, 30000, 30000)
    assert r.payments_over(8.0).status is SticksStatus.MISMATCH


def test_a_lost_reader_is_a_fault_and_found_again_compares_again():
    r = Reconciler()
    r.expect(expected([25000] * 4), 0.0)
    r.read([25000] * 4, 0, 0.1)
    assert r.lost("the sticks link is silent for 3.0 s", 1.0).status is SticksStatus.FAULT
    assert r.verdict.fault == "the sticks link is silent for 3.0 s"
    assert r.found(2.0).status is SticksStatus.OK


def test_the_referee_dismisses_and_rechecks():
    r = Reconciler(grace=1.0)
    r.expect(expected([25000] * 4), 0.0)
    r.read([26000, 24000, 25000, 25000], 0, 0.0)
    assert r.payments_over(0.5).status is SticksStatus.MISMATCH
    dismissed = r.dismiss(1.0)
    assert dismissed.status is SticksStatus.WAITING and "fix their trays" in dismissed.text
    assert r.tick(10.0) is None  # the same reading is not raised again
    assert r.read([25500, 24500, 25000, 25000], 0, 11.0).status is SticksStatus.WAITING  # half fixed
    assert r.tick(12.0).status is SticksStatus.MISMATCH
    assert r.recheck(13.0).status is SticksStatus.WAITING
    assert r.tick(14.0).status is SticksStatus.MISMATCH


def test_nothing_is_compared_without_a_game_or_with_a_score_below_zero():
    r = Reconciler()
    assert r.read([25000] * 4, 0, 0.0).status is SticksStatus.OFF
    verdict = r.expect(expected([-1000, 41000, 30000, 30000]), 1.0)
    assert verdict.status is SticksStatus.OFF and "Aoi below zero" in verdict.text


@given(st.lists(st.integers(0, 600).map(lambda x: x * 100), min_size=4, max_size=4), st.integers(0, 5),
       st.integers(-50, 50).map(lambda x: x * 100), st.integers(0, 3), st.integers(0, 3))
def test_a_stick_moved_between_two_trays_is_named_with_both_seats_and_the_amount(scores, sticks, amount, a, b):
    """Any mispayment between two seats keeps the table's total: it is a mismatch naming exactly those two seats,
    never a fault; no mispayment at all is OK."""
    r = Reconciler(grace=0.0)
    r.expect(expected(scores, sticks), 0.0)
    trays = list(scores)
    trays[a] += amount
    trays[b] -= amount
    if min(trays) < 0:
        return
    verdict = r.read(trays, sticks, 1.0) or r.verdict
    if a == b or amount == 0:
        assert verdict.status is SticksStatus.OK
        return
    assert verdict.status is SticksStatus.MISMATCH
    assert {(d.seat, d.difference) for d in verdict.differences} == {(a, amount), (b, -amount)}


def test_describe_differences_reads_like_the_referee_would_say_it():
    from tablesvc.sticks import Difference

    text = describe_differences([Difference(1, "Ben", 24000, 25000), Difference(3, "Dai", 26000, 25000)])
    assert text == "Ben's tray holds 24,000, the game says 25,000; Dai's 1,000 more"
    assert describe_differences([], (1, 2)) == "1 riichi stick lies on the table, the game says 2"


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="flutter_readings >= 2"):
        Reconciler(flutter_readings=1)


def test_a_raised_alert_stands_as_raised_while_the_next_hand_is_being_paid():
    r = Reconciler(grace=5.0)
    r.expect(expected([25000] * 4), 0.0)
    r.read([26000, 24000, 25000, 25000], 0, 1.0)
    raised = r.payments_over(2.0)
    assert raised.status is SticksStatus.MISMATCH
    # the next hand: Chloe pays Dai 8,000; the trays are not paid yet: the alert is the one raised, not the payment
    assert r.expect(expected([25000, 25000, 17000, 33000], check="hand 2 (East 2) payments"), 3.0) is None
    assert r.verdict == raised
    paid = r.read([26000, 24000, 17000, 33000], 0, 5.0)
    assert paid.status is SticksStatus.MISMATCH and paid.check == "hand 1 (East 1) payments"
    assert [d.seat for d in paid.differences] == [0, 1]
    # the referee takes the trays' scores: agreed at once, without a new reading
    assert r.expect(expected([26000, 24000, 17000, 33000], check="the referee's scores"), 6.0).status is \
        SticksStatus.OK


def test_the_bench_catches_every_mispayment_and_raises_nothing_on_games_paid_right():
    """``python bench/sticks.py --quick``: generated games through the service's comparison and the simulator's
    players, each paid right and with one hand paid short."""
    from tests.test_benches import number, run_bench

    out = run_bench("sticks")
    games = number(r"games\s+(\d+) generated", out)
    assert "games paid right              0 score alerts, 0 reader faults" in out
    caught = number(r"(\d+)/\d+ caught", out)
    assert caught >= games - 1 and number(r"not caught\s+(\d+)/", out) == number(r"(\d+) of them while", out)
    assert number(r"(\d+)/\d+ with the right seats and amount", out) == caught
    in_hand, later = number(r"(\d+)/\d+ in their hand", out), number(r"caught later\s+(\d+)/", out)
    assert in_hand + later == caught and in_hand >= games - 2
    assert number(r"raised when\s+(\d+)/", out) == in_hand  # as the next hand started


def test_tablesvc_watch_shows_the_sticks_comparison():
    import json

    from tablesvc.watch import Watcher

    watcher = Watcher()
    watcher.feed("tablesvc/club/t1/status", json.dumps({"status": "online"}).encode())
    text = "Ben's tray holds 24,000, the game says 25,000; Dai's 1,000 more (after the payments of hand 3 (E3))"
    watcher.feed("tablesvc/club/t1/sticks", json.dumps({"status": "mismatch", "text": text}).encode())
    assert f"! sticks mismatch: {text}" in watcher.render(legend=False)
    watcher.feed("tablesvc/club/t1/sticks", json.dumps({"status": "ok", "text": "the trays agree"}).encode())
    assert "  sticks ok: the trays agree" in watcher.render(legend=False)


def test_a_riichi_declared_while_an_alert_stands_neither_blames_the_declaring_seat_nor_shows_a_score_the_game_lacks():
    """Hand 2 paid 1,000 short (Aoi 1,000 under, Chloe 1,000 over) and raised; in hand 3 Dai puts a riichi stick
    down before the engine hears the riichi: the alert stays as raised (it does not name Dai nor "2 riichi
    sticks"); once the riichi is pending, the differences are said in the game's own scores."""
    r = Reconciler(grace=5.0)
    r.expect(expected([30000, 30000, 30000, 29000], sticks=1, check="the payments of hand 2 (E2)"), 0.0)
    r.read([29000, 30000, 31000, 29000], 1, 1.0)
    raised = r.payments_over(2.0)
    assert raised.status is SticksStatus.MISMATCH
    assert raised.text.startswith("Aoi's tray holds 29,000, the game says 30,000; Chloe's 1,000 more")
    assert r.read([29000, 30000, 31000, 28000], 2, 3.0) is None  # Dai's stick down, not heard yet: unchanged
    assert r.verdict == raised and "Dai" not in r.verdict.text
    pending = r.expect(expected([30000, 30000, 30000, 29000], sticks=1, check="Dai's riichi", pending=3), 4.0)
    assert pending is None or "Dai" not in pending.text
    r.payments_over(5.0)
    assert r.verdict.status is SticksStatus.MISMATCH and "Dai" not in r.verdict.text
    games = {d.seat: d.game for d in r.verdict.differences}
    assert games == {0: 30000, 2: 30000}  # the game's scores, not one it does not have
    # Dai paid Chloe 1,000 as well besides putting the riichi stick down: said with the game's 29,000
    r.read([29000, 30000, 32000, 27000], 2, 6.0)
    r.payments_over(7.0)
    dai = next(d for d in r.verdict.differences if d.seat == 3)
    assert (dai.tray, dai.game, dai.difference) == (28000, 29000, -1000)
