"""The terminal view folds feed payloads into per-table screens."""

import json

from tablesvc.watch import Watcher, result_line


def feed(w, topic, payload):
    return w.feed(topic, json.dumps(payload).encode())


def test_views_per_table_with_status_state_devices_results():
    w = Watcher()
    feed(w, "tablesvc/club/t1/status", {"status": "online", "version": "0.1.0"})
    feed(w, "tablesvc/club/t1/state", {"round": "E2", "honba": 1, "sticks": 1, "wall": 40, "dora": ["3p"],
                                       "phase": "playing", "seats": [
                                           {"seat": 0, "name": "Ann", "wind": "N", "score": 25000, "riichi": True,
                                            "discards": [{"tile": "1m", "riichi": False},
                                                         {"tile": "E", "riichi": True}]},
                                           {"seat": 1, "name": "Bo", "wind": "E", "score": 35000, "discards": []}]})
    feed(w, "tablesvc/club/t1/devices/panel", {"connected": False, "state": "silent for 3.0 s", "frames_ok": 9,
                                               "frames_bad": {"checksum": 2}})
    line = feed(w, "tablesvc/club/t1/results", {
        "type": "hand_result", "hand": "E2-1", "result": "win", "deltas": [-3900, 3900, 0, 0],
        "wins": [{"seat": 1, "from": 0, "han": 3, "fu": 30, "limit": None}]})
    assert line == "club/t1  E2-1  Bo ron from Ann 3 han 30 fu  [-3900 +3900 0 0]"
    feed(w, "tablesvc/club/t2/status", {"status": "offline"})
    screen = w.render()
    assert "club/t1  [online]" in screen and "club/t2  [offline]" in screen
    assert "E2-1  sticks 1  wall 40  dora 3p" in screen
    assert "1m E*" in screen and "riichi" in screen
    assert "device panel: DOWN (silent for 3.0 s), 9 frames, 2 bad" in screen


def test_filter_and_garbage():
    w = Watcher(table="t2")
    assert feed(w, "tablesvc/club/t1/status", {"status": "online"}) is None
    w.feed("tablesvc/club/t2/state", b"\xff not json")
    w.feed("other/club/t2/state", b"{}")
    assert w.bad_messages == 1 and list(w.tables) == [("club", "t2")]


def test_final_ranking_line():
    line = result_line({"type": "game_result", "ranking": [{"seat": 2, "place": 1, "points": 41000, "result": 41000},
                                                           {"seat": 0, "place": 2, "points": 30000, "result": 0}]},
                       ["A", "B", "C", "D"])
    assert line == "final: 1. C 41000 (+41000), 2. A 30000 (+0)"


def test_melds_names_called_discards_final_ranking_and_the_legend():
    """Payloads built by the service's own code from a real engine game, as the feed carries them."""
    from tablesvc.engine.events import EndGame, SetScores
    from tablesvc.mqtt.payloads import result_payload, state_payload
    from tablesvc.watch import LEGEND
    from tests.scenario import Table
    from tests.test_engine_scenarios import DRAGON_PONS

    players = ("Ann", "Bob", "Cid", "Dan")
    tb = Table()
    tb.state.players = players
    tb.start_hand()
    tb.play(DRAGON_PONS)  # Bob pons white from Ann, green from Cid, red from Dan
    w = Watcher()
    feed(w, "tablesvc/club/t1/state", state_payload(tb.state, 20))
    screen = w.render()
    assert "melds: pon [P] P P <Ann; pon [F] F F <Cid; pon [C] C C <Dan" in screen
    assert "(P)" in screen and "(F)" in screen and "(C)" in screen  # Ann's, Cid's, Dan's discards taken
    bob = next(line for line in screen.splitlines() if "Bob" in line and "melds" not in line)
    assert bob.startswith(" >S Bob")  # Bob (South) is to discard after his last pon
    assert screen.endswith(LEGEND) and "[5m] called tile" in LEGEND and "(5m) discard taken" in LEGEND
    tb.send(SetScores((29000, 41000, 30000, 20000)), EndGame())
    final = result_payload(tb.state.final, 21, players)
    line = feed(w, "tablesvc/club/t1/results", final)
    # result = points - 30000 + uma (30000, 10000, -10000, -30000)
    assert line == "club/t1  final: 1. Bob 41000 (+41000), 2. Cid 30000 (+10000), 3. Ann 29000 (-11000), " \
                   "4. Dan 20000 (-40000)"
    feed(w, "tablesvc/club/t1/state", state_payload(tb.state, 21))
    screen = w.render(legend=False)
    assert "final ranking:" in screen and "    1. Bob           41000  uma +30000  result +41000" in screen
    assert "wall None" not in screen  # between hands and after the game there is no wall to count
    assert LEGEND not in screen


def test_all_last_conditions_are_shown_with_names():
    w = Watcher()
    feed(w, "tablesvc/club/t1/state", {"round": "S4", "honba": 0, "sticks": 0, "wall": 60, "dora": ["1m"],
                                       "phase": "playing", "turn": 3, "seats": [
                                           {"seat": s, "name": n, "wind": "ESWN"[(s + 1) % 4], "score": 30000,
                                            "discards": [], "melds": []} for s, n in enumerate(["Ann", "Bob",
                                                                                                 "Cid", "Dan"])],
                                       "conditions": [[], ["1st with a mangan tsumo or 3900 from Ann"], [], []]})
    assert "    Bob: 1st with a mangan tsumo or 3900 from Ann" in w.render()


def test_the_tournament_clock_in_a_line():
    w = Watcher()
    clock = {"deadline": "2026-11-26T12:15:00.000Z", "remaining_s": 600, "minutes": 75, "extended": 5,
             "rule": "ema", "more_hands": 0, "added": 0, "time_up": False, "hands_left": None}
    feed(w, "tablesvc/club/t1/state", {"round": "E3", "honba": 0, "sticks": 0, "phase": "playing", "seats": [],
                                       "clock": clock})
    assert "  clock: until 12:15:00 UTC (ema, +5 min)" in w.render()
    feed(w, "tablesvc/club/t1/state", {"round": "E4", "honba": 0, "sticks": 0, "phase": "playing", "seats": [],
                                       "clock": {**clock, "time_up": True, "hands_left": 2, "added": 1}})
    assert "  clock: time up, 2 hands left (ema, +5 min, +1 hand)" in w.render()
