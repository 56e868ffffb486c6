"""`tablesvc replay --json --analysis` (waits on wins, tenpai on draws, a line per state) and `--feed` (the
game onto a real Mosquitto, hands on broadcast/hands), through the command line."""

import json
import threading

import pytest

from hardware_sims.pytest_plugin import eventually
from tablesvc.cli import main
from tests.conftest import MJLOG_DIR
from tests.feed_schemas import validate

pytestmark = pytest.mark.skipif(not MJLOG_DIR.is_dir(), reason="../shared/data/tenhou-mjlog not found")
GAME = MJLOG_DIR / "double-ron.mjlog"


def test_analysis_adds_waits_tenpai_and_state_lines(capsys):
    assert main(["replay", str(GAME), "--json", "--analysis", "--strict"]) == 0
    objects = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    states = [o for o in objects if "state" in o]
    hands = [o for o in objects[1:] if "round" in o]
    assert [h["round"] for h in hands] == ["E1", "E2", "E3", "E4"] and objects[-1]["final_scores"]
    assert all(w["waits"] for h in hands for w in h["wins"])  # every winner was ready
    e4 = hands[3]
    assert len(e4["wins"]) == 2 and set(e4["wins"][0]["waits"]) & set(e4["wins"][1]["waits"])  # one tile, two rons
    assert hands[1]["result"] == "exhaustive_draw" and hands[1]["tenpai"]
    assert set(hands[1]["tenpai"]) <= {"E", "S", "W", "N"}
    assert len(states) > 200 and states[0]["analysis"]["seats"][0]["seat"] == "E"
    assert any(s["deal_in"] for st in states for s in st["analysis"]["seats"])
    assert all(set(s) == {"seat", "shanten", "waits", "karaten", "furiten", "ukeire", "deal_in"}
               for st in states for s in st["analysis"]["seats"])


def test_analysis_needs_json(capsys):
    assert main(["replay", str(GAME), "--analysis"]) == 2
    assert "--json" in capsys.readouterr().err


def test_feed_plays_the_game_onto_the_broker(mosquitto, capsys, tmp_path):
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    got: list[tuple[str, dict]] = []
    lock = threading.Lock()
    subscribed = threading.Event()
    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2)

    def on_message(_c, _u, m) -> None:
        with lock:
            got.append((m.topic, json.loads(m.payload)))

    client.on_message = on_message
    client.on_subscribe = lambda *_: subscribed.set()
    client.on_connect = lambda c, *_: c.subscribe("tablesvc/rehearsal/t9/#", qos=1)
    client.connect("127.0.0.1", mosquitto.port)
    client.loop_start()
    try:
        assert subscribed.wait(10)
        code = main(["replay", str(GAME), "--feed", "--broker", mosquitto.url, "--speed", "0",
                     "--site", "rehearsal", "--table", "t9"])
        assert code == 0, capsys.readouterr().err
        eventually(lambda: any(t.endswith("/results") and p.get("type") == "game_result" for t, p in got), 20,
                   what="the final result")
        with lock:
            hands = [p for t, p in got if t.endswith("/broadcast/hands")]
            results = [p for t, p in got if t.endswith("/results") and p.get("type") == "hand_result"]
        assert len(results) == 4 and len(hands) > 100
        assert all(validate("broadcast/hands", p) == [] for p in hands)
        assert any(s["drawn"] for p in hands for s in p["seats"])  # the replay gives its draws: drawn tiles show
        assert "broadcast/hands" in capsys.readouterr().out
    finally:
        client.loop_stop()
        client.disconnect()
