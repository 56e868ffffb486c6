"""What the feed says about a finished hand and the game, checked on payloads built from real engine runs.

The broker tests (test_service_mqtt.py) check every payload against its schema; these check what the
schema cannot: that the names are the players', the winning hand is the one shown, the ura indicators
are those turned over, and a result keeps the seq of the entry that produced it.
"""

from __future__ import annotations

from tablesvc.engine.events import Discard, EndGame, from_dict, to_dict
from tablesvc.mqtt.payloads import event_payload, iso_time, result_payload, state_payload, wire_event
from tablesvc.storage.journal import Entry, Journal
from tablesvc.storage.table import Table as LiveTable
from tests.feed_schemas import validate
from tests.scenario import Table, t, ts
from tests.test_engine_scenarios import DRAGON_PONS, PINFU_TANYAO, RIICHI_SECOND_TURN

PLAYERS = ("Ann", "Bob", "Cid", "Dan")


def test_a_riichi_tsumo_result_shows_the_hand_the_winning_tile_and_the_ura_indicators():
    tb = Table()
    tb.state.players = PLAYERS
    tb.start_hand(dora="W")
    tb.play(RIICHI_SECOND_TURN + " 2:dN 3:dW 0:dS")
    tb.tsumo(1, PINFU_TANYAO, "4s", ura="9m")
    payload = result_payload(tb.last_result, 17, PLAYERS)
    assert validate("results", payload) == []
    (win,) = payload["wins"]
    assert (win["seat"], win["name"], win["from"], win["from_name"]) == (1, "Bob", None, None)
    assert win["win_tile"] == "4s" and sorted(win["hand"]) == sorted(x.mjai for x in ts(PINFU_TANYAO))
    assert win["melds"] == []
    assert payload["dora"] == ["W"] and payload["ura"] == ["9m"]
    assert payload["players"] == list(PLAYERS) and payload["seq"] == 17
    assert payload["summary"].startswith("Bob tsumo: 5 han")


def test_a_ron_with_melds_names_winner_discarder_and_liable_player():
    tb = Table()
    tb.state.players = PLAYERS
    tb.start_hand()
    tb.play(DRAGON_PONS + " 2:d5s")
    tb.ron(1, "234m55s", ura="9m")  # indicators given, but the winner was not in riichi: none is shown
    payload = result_payload(tb.last_result, 40, PLAYERS)
    assert validate("results", payload) == []
    (win,) = payload["wins"]
    assert (win["name"], win["from_name"], win["pao_name"]) == ("Bob", "Cid", "Dan")
    assert win["win_tile"] == "5s" and win["hand"] == ["2m", "3m", "4m", "5s", "5s"]
    # the three dragon pons as they lie on the table: the called tile and whom it came from
    assert [(m["kind"], m["tiles"], m["called"], m["from"]) for m in win["melds"]] == [
        ("pon", ["P", "P", "P"], "P", 0), ("pon", ["F", "F", "F"], "F", 2), ("pon", ["C", "C", "C"], "C", 3)]
    assert payload["ura"] == []


def test_final_ranking_names_every_player():
    tb = Table()
    tb.state.players = PLAYERS
    tb.send(EndGame())
    payload = result_payload(tb.state.final, 3, PLAYERS)
    assert validate("results", payload) == []
    assert [(r["seat"], r["name"]) for r in payload["ranking"]] == [(0, "Ann"), (1, "Bob"), (2, "Cid"), (3, "Dan")]


def test_last_result_keeps_its_own_seq_after_later_entries_and_a_correction(tmp_path):
    scenario = Table()  # keeps the events it sent (scenario.events), to journal them on a live table
    scenario.start_hand()
    scenario.play(RIICHI_SECOND_TURN + " 2:dN 3:dW 0:dS")
    scenario.tsumo(1, PINFU_TANYAO, "4s", ura="9m")
    scenario.start_hand()  # the next hand is dealt and its dora turned: two entries after the win
    table = LiveTable(Journal(tmp_path / "t.sqlite3"))
    seqs = [table.submit(e, source="test", ts=float(n)).seq for n, e in enumerate(scenario.events)]
    won_at = seqs[-3]
    state = state_payload(table.state, seqs[-1], ts=3.0, result_seqs=table.result_seqs.hands)
    assert validate("state", state) == []
    assert state["seq"] == seqs[-1] and state["last_result"]["seq"] == won_at
    assert state["last_result"]["wins"][0]["win_tile"] == "4s"
    assert state["ts"] == "1970-01-01T00:00:03.000Z"
    # an undo of the new deal refolds the game from the journal: the result still comes from the same entry
    undo = table.undo(2, source="referee", ts=4.0).seq
    state = state_payload(table.state, undo, result_seqs=table.result_seqs.hands)
    assert state["seq"] == undo and state["last_result"]["seq"] == won_at
    assert table.result_seqs.hands == [won_at]


def test_one_time_format_and_one_tile_notation():
    assert iso_time(0) == "1970-01-01T00:00:00.000Z"
    assert iso_time(1_000_000_000.5) == "2001-09-09T01:46:40.500Z"  # epoch 10^9 (well known): UTC, ms, Z
    # a journal written with compact hand strings is published in mjai lists
    old = {"type": "tsumo", "seat": 1, "hand": "234567m23406p55s", "win_tile": "4p", "ura": "9m"}
    assert wire_event("tsumo", old)["hand"] == ["2m", "3m", "4m", "5m", "6m", "7m", "2p", "3p", "4p", "5pr", "6p",
                                                "5s", "5s"]
    assert wire_event("amend", {"seq": 4, "event": {"type": "discard", "seat": 0, "tile": "0m"}})["event"][
        "tile"] == "5mr"
    assert to_dict(from_dict(old)) == wire_event("tsumo", old)
    payload = event_payload(Entry(9, 1.5, "panel", "discard", to_dict(Discard(2, t("5pr"), riichi=True))))
    assert validate("events", payload) == [] and payload["ts"] == "1970-01-01T00:00:01.500Z"


LIMIT_BASE = {"mangan": 2000, "haneman": 3000, "baiman": 4000, "sanbaiman": 6000, "yakuman": 8000}


def _ahead_of_all_but(scores: list[int], seat: int, place: int) -> bool:
    """``seat`` ends at ``place`` or better outright: fewer than ``place`` - 1 others have as many points or more."""
    return sum(1 for s in range(4) if s != seat and scores[s] >= scores[seat]) <= place - 1


def _check_targets(detail: dict, scores: tuple[int, ...], dealer: int, honba: int, sticks: int) -> int:
    """Each ron and tsumo a seat is told it needs, paid by hand (counters: 300 a ron, 100 each a tsumo, the
    riichi sticks to the winner), gets it to the place it is named for; how many were checked."""
    seat, checked = detail["seat"], 0
    for target in detail["targets"]:
        for ron in target["ron"]:
            after = list(scores)
            after[seat] += ron["points"] + 300 * honba + 1000 * sticks
            after[ron["from"]] -= ron["points"] + 300 * honba
            assert _ahead_of_all_but(after, seat, target["place"]), (detail["name"], target["text"], scores)
            checked += 1
        if target["tsumo"] is not None:
            points = target["tsumo"]["points"]
            after = list(scores)
            for payer in (s for s in range(4) if s != seat):
                if points in LIMIT_BASE:
                    share = LIMIT_BASE[points] * (2 if dealer in (seat, payer) else 1)
                elif points.endswith(" all"):
                    share = int(points.split()[0])
                else:
                    non_dealer, from_dealer = (int(x) for x in points.split("/"))
                    share = from_dealer if payer == dealer else non_dealer
                after[payer] -= share + 100 * honba
                after[seat] += share + 100 * honba
            after[seat] += 1000 * sticks
            assert _ahead_of_all_but(after, seat, target["place"]), (detail["name"], target["text"], scores)
            checked += 1
    return checked


def test_state_carries_the_all_last_conditions_only_in_the_last_hand():
    """What each player needs in the last hand, checked by paying it out by hand: every ron and tsumo named
    gets the player to the place it is named for."""
    from hardware_sims.generator import generate_game
    from tablesvc.engine.engine import Engine

    record = generate_game(21)
    engine = Engine()
    seen_last = checked = 0
    for n, event in enumerate(record.events, 1):
        engine.apply(event)
        st = engine.state
        payload = state_payload(st, n)
        h = st.hand
        if st.phase.value == "game_over" or (h.round if h is not None else st.round) < 7:
            assert payload["conditions"] is None and payload["conditions_detail"] is None
            continue
        seen_last += 1
        scores = tuple(st.scores)
        dealer = 3 if h is None else h.dealer
        honba, sticks = (st.honba, st.sticks) if h is None else (h.honba, h.sticks)
        details = payload["conditions_detail"]
        assert [d["seat"] for d in details] == [0, 1, 2, 3] and payload["conditions"]
        for d in details:
            assert d["name"] == st.players[d["seat"]] and d["dealer"] == (d["seat"] == dealer)
            if scores.count(scores[d["seat"]]) == 1:  # the place now, where no tie needs a rule to break it
                assert d["place"] == 1 + sum(1 for x in scores if x > scores[d["seat"]]), (d, scores)
            checked += _check_targets(d, scores, dealer, honba, sticks)
        assert validate("state", payload) == []
    assert seen_last and checked, (seen_last, checked)
