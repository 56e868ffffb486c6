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
