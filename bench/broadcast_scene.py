"""The broadcast scene's share of "discard to the wait on the stream": `python bench/broadcast_scene.py`
(`--quick` for a short run, as the test does).

Prints the latency from a ``broadcast/hands`` payload's publication to the moment the ``hands`` scene has
drawn it (or a later payload that came within the same frame) in a real headless Chromium (p50, p99, max
over every payload), the part of it until the payload came off the scene's event stream, and the time the
scene's script spent building the scene for it (the rest is the page waiting for the screen's next frame, and
the machine: the load average is printed with the figures). A generated
game is played through the engine with every hand known; each state's payload is built as the table
service builds it (the analysis, :func:`tablesvc.analysis.broadcast.hands_payload`) and published on a
real Mosquitto at a table's pace times ``--rate``; the web server (in this process, with its broadcast
connection of its own) forwards it to the scene, which notes when each ``seq`` came off its stream and
when it was on screen (``Date.now()`` at the start of the next frame). The table's own share (discard to
published) is measured by ``bench/analysis.py``.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

KEY = "bench-broadcast-key-0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_mosquitto(work: Path) -> tuple[subprocess.Popen, int]:
    binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    port = free_port()
    conf = work / "mosquitto.conf"
    conf.write_text(f"user {getpass.getuser()}\nlistener {port} 127.0.0.1\nallow_anonymous true\n")
    proc = subprocess.Popen([binary, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, port
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError("mosquitto did not start") from None
            time.sleep(0.05)


def payloads(seed: int, limit: int) -> list[dict]:
    """Every state of a generated game with all hands known, as the service publishes it (``limit`` at most)."""
    from hardware_sims.generator import generate_game
    from tablesvc.analysis.broadcast import hands_payload
    from tablesvc.analysis.follow import RecordHands
    from tablesvc.analysis.seats import Analyst

    follow, analyst, out = RecordHands(), Analyst(), []
    for seq, event in enumerate(generate_game(seed).events, start=1):
        follow.step(event)
        state = follow.engine.state
        if state.hand is None:
            continue
        hands = [s.hand for s in state.hand.seats]
        drawn = [s.drawn for s in state.hand.seats]
        payload = hands_payload(state, hands, analyst.analyse(state, hands, drawn), seq=seq, ts=time.time(),
                                delay_s=0, drawn=drawn)
        if payload is not None:
            out.append(payload)
        if len(out) >= limit:
            break
    return out


def chromium():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--force-device-scale-factor=1", "--window-size=1920,1080"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"),
                            options=options)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run (the test's)")
    parser.add_argument("--states", type=int, default=300, help="payloads to publish (default 300)")
    parser.add_argument("--rate", type=float, default=1.0,
                        help="times a table's pace (one state every 0.5 s at 1; default 1)")
    args = parser.parse_args()
    count = 40 if args.quick else args.states
    gap = 0.5 / args.rate if not args.quick else 0.1

    from tablesvc.mqtt.url import BrokerURL
    from tablesvc.web.server import WebServer
    from tablesvc.web.settings import WebSettings

    work = Path(tempfile.mkdtemp(prefix="bench-broadcast-"))
    broker, port = start_mosquitto(work)
    server = WebServer(BrokerURL.parse(f"mqtt://127.0.0.1:{port}"), listen=("127.0.0.1", 0),
                       settings=WebSettings(broadcast_key=KEY))
    server.start()
    driver = chromium()
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="bench-broadcast")
    client.connect("127.0.0.1", port)
    client.loop_start()
    try:
        assert server.broadcast_link.wait_connected(10), "the web server's broadcast connection did not connect"
        states = payloads(17, count)
        driver.get(f"{server.url}/broadcast/bench/t1/hands?key={KEY}")
        deadline = time.monotonic() + 15
        while driver.execute_script("return document.body.dataset.connected") != "yes":
            if time.monotonic() > deadline:
                raise RuntimeError("the scene did not connect")
            time.sleep(0.05)
        sent: dict[int, float] = {}
        for i, payload in enumerate(states):
            payload["seq"] = i + 1  # one rendering each, in order
            sent[i + 1] = time.time() * 1000
            client.publish("tablesvc/bench/t1/broadcast/hands", json.dumps(payload), qos=1).wait_for_publish(10)
            time.sleep(gap)  # the table's pace: the next state comes later
        deadline = time.monotonic() + 15
        rendered: dict[int, float] = {}
        while max(rendered, default=0) < len(sent) and time.monotonic() < deadline:
            rendered = {int(s): t for s, t in driver.execute_script("return window.tablesvcBroadcast.rendered")}
            time.sleep(0.1)
        arrived = {int(s): t for s, t in driver.execute_script("return window.tablesvcBroadcast.arrived")}
        work = sorted(ms for _, ms in driver.execute_script("return window.tablesvcBroadcast.work"))
        streamed = sorted(arrived[s] - sent[s] for s in sent if s in arrived)
        # a payload is on screen once it, or a later one that replaced it within the same frame, is drawn
        def shown(seq: int) -> float | None:
            times = [t for s, t in rendered.items() if s >= seq]
            return min(times) if times else None

        latencies = sorted(shown(s) - sent[s] for s in sent if shown(s) is not None)
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else float("nan")
        print(f"broadcast/hands published -> hands scene drawn in Chromium: {len(latencies)}/{len(sent)} drawn, "
              f"p50 {statistics.median(latencies):.1f} ms, p99 {p99:.1f} ms, max {latencies[-1]:.1f} ms "
              f"(one state every {gap * 1000:.0f} ms; {len(rendered)} frames drew a new payload)")
        if streamed:
            print(f"  of which published -> off the scene's stream: p50 {statistics.median(streamed):.1f} ms, "
                  f"p99 {streamed[min(len(streamed) - 1, int(len(streamed) * 0.99))]:.1f} ms")
        if work:
            print(f"  of which the scene's script building it: p50 {statistics.median(work):.1f} ms, "
                  f"p99 {work[min(len(work) - 1, int(len(work) * 0.99))]:.1f} ms (the rest is waiting for the "
                  f"screen's next frame, and the machine)")
        print(f"  load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        return 0 if len(latencies) == len(sent) else 1
    finally:
        client.loop_stop()
        client.disconnect()
        driver.quit()
        server.stop()
        broker.terminate()
        broker.wait(10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
