"""The README's first command: the demo runs a whole table end to end and says how to watch it."""

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from hardware_sims.generator import generate_game
from tablesvc.cli import main
from tablesvc.replay import replay
from tests.test_service_mqtt import service  # noqa: F401 - the fixture


def test_demo_plays_a_whole_game_over_an_embedded_broker():
    proc = subprocess.run([sys.executable, "-m", "tablesvc", "demo", "--speed", "0", "--seed", "13"],
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "(embedded, MQTT 3.1.1)" in out and "tablesvc watch --broker mqtt://127.0.0.1:" in out
    assert "mosquitto_sub -h 127.0.0.1" in out
    assert re.search(r"overlay: +http://127\.0\.0\.1:\d+/overlay/demo/table-1", out)  # the web pages came up
    assert re.search(r"^  dashboard: +http://127\.0\.0\.1:\d+/$", out, re.M)
    assert re.search(r"console: +http://127\.0\.0\.1:\d+/referee/demo/table-1 +\(referee password", out)
    # the game of seed 13 (a short one: 823 events), replayed through the engine from the generator's record:
    # every hand's result and the final ranking arrived over MQTT as the engine scores them
    report = replay(generate_game(13), strict=True)
    deltas = [tuple(0 if d == "0" else int(d) for d in m.split())
              for m in re.findall(r"^  [ESWN]\d-\d.*\[(.*)\]$", out, re.M)]
    assert deltas == [h.deltas for h in report.hands]
    names = generate_game(13).players
    final = ", ".join(f"{s.place}. {names[s.seat]} {s.points} ({s.result:+d})" for s in report.final.standings)
    assert f"final: {final}" in out, out[-600:]
    assert "refused" not in proc.stderr  # nothing the table showed was misread by the service


def test_watch_once_shows_the_table(service, mosquitto, capsys):  # noqa: F811 - the fixture
    assert main(["watch", "--broker", mosquitto.url, "--once", "1.5"]) == 0
    out = capsys.readouterr().out
    assert "club/t1  [online]" in out


def test_demo_plays_a_recorded_game_file(mosquitto):
    """On a broker of its own, every payload the demo publishes is checked against its topic's schema."""
    from tests.conftest import MJLOG_DIR
    from tests.test_service_mqtt import Subscriber

    game = MJLOG_DIR / "double-ron.mjlog"
    if not game.exists():
        import pytest

        pytest.skip("../shared/data/tenhou-mjlog not found")
    sub = Subscriber(mosquitto.port)
    proc = subprocess.run([sys.executable, "-m", "tablesvc", "demo", "--speed", "0", "--game", str(game),
                           "--broker", mosquitto.url, "--site", "club", "--table", "t1"],
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # the game's result is its last message: the demo may exit before the subscriber has everything
    sub.wait_for(lambda: any(r["type"] == "game_result" for r in sub.of("results")), what="the game's result")
    double = [r for r in sub.of("results") if r["type"] == "hand_result" and len(r["wins"]) == 2]
    assert double and all(w["name"] == double[0]["players"][w["seat"]] and w["win_tile"] in w["hand"]
                          for w in double[0]["wins"])
    hands = sub.of("broadcast/hands")  # the simulator knows every hand: the broadcast shows them with waits
    assert len(hands) > 100 and any(s["waits"] for h in hands for s in h["seats"])
    sub.close()  # fails on any payload that did not match its schema
    assert "rules tenhou" in proc.stdout
    assert "E4-0" in proc.stdout and "[+9700 0 +8000 -15700]" in proc.stdout  # the double ron, over MQTT
    assert "final: 1. " in proc.stdout and "-1400" in proc.stdout


def test_demo_at_full_speed_publishes_every_state(mosquitto):
    """``--speed 0`` skips only the pauses: every event the table journals reaches the feed with its state, and
    every change of the hands while one is played (deal, indicator, discard, call, kan) reaches
    ``broadcast/hands`` with the same seq, in order."""
    from tests.test_service_mqtt import Subscriber

    sub = Subscriber(mosquitto.port)
    proc = subprocess.run([sys.executable, "-m", "tablesvc", "demo", "--speed", "0", "--seed", "5", "--hands", "2",
                           "--web", "off", "--broker", mosquitto.url, "--site", "club", "--table", "t1"],
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # the second hand's result is the demo's last message: once it is here, every earlier one is (one publisher,
    # one subscription, in order); the demo has exited, but its last messages may still be on their way
    sub.wait_for(lambda: sum(r["type"] == "hand_result" for r in sub.of("results")) == 2, what="both hands' results")
    events = sub.of("events")
    last = events[-1]["seq"]
    assert [r["seq"] for r in sub.of("results")][-1] == last
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(1, last + 1)) and last > 100
    states = [s["seq"] for s in sub.of("state") if s["seq"] >= 1]
    assert states == seqs  # one state per event, none skipped, in order
    changes = [e["seq"] for e in events
               if e["event"]["type"] in ("hand_start", "dora", "discard", "call", "ankan", "kakan")]
    hands = [h["seq"] for h in sub.of("broadcast/hands")]
    assert hands == sorted(hands) and set(changes) <= set(hands), sorted(set(changes) - set(hands))
    sub.close()


def test_demo_through_the_camera_reads_the_felt_and_scores_each_hand_as_the_record():
    """``--camera``: every change of the felt is rendered, read by vision and only then reaches the engine;
    the hands' results over MQTT equal the generated game's, and every camera reading is printed."""
    import re

    from hardware_sims.generator import generate_game

    # two short hands (120 events, each won, with riichi): every change of the felt is rendered and read
    proc = subprocess.run([sys.executable, "-m", "tablesvc", "demo", "--camera", "--speed", "0", "--seed", "16",
                           "--hands", "2"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "37 tile kinds enrolled from the tile art" in out
    deltas = [tuple(0 if d == "0" else int(d) for d in m.split()) for m in re.findall(r"^  [ESWN]\d-\d.*\[(.*)\]$",
                                                                                      out, re.M)]
    assert deltas == [h.deltas for h in generate_game(16).hands[:2]]
    seen = [line for line in out.splitlines() if line.startswith("  camera: ")]
    assert sum("discards" in line for line in seen) > 20 and any("dora indicator 1:" in line for line in seen)
    changes = re.search(r"camera: (\d+) of (\d+) table changes read exactly", out)
    assert changes and changes[1] == changes[2]
    assert "final:" not in out and "refused" not in proc.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_the_demo_removes_its_temporary_directory_however_it_is_stopped(tmp_path, sig):
    """kill, docker stop and timeout send SIGTERM, a closed terminal SIGHUP, Ctrl-C SIGINT: each ends the
    demo as Ctrl-C does, its temporary directory (journal, pseudo-terminals) removed."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "tablesvc", "demo", "--speed", "1", "--seed", "5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 120
        line = ""
        while "overlay:" not in line:  # the table is up and playing: its journal is in the directory
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()[-2000:]
            line = proc.stdout.readline()
        work = list(tmp_path.glob("tablesvc-demo-*"))
        assert len(work) == 1 and any(work[0].rglob("*.sqlite3")), list(tmp_path.rglob("*"))
        proc.send_signal(sig)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in proc.stderr.read()
    assert not work[0].exists(), list(work[0].rglob("*"))
