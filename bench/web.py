"""The web server under load: `python bench/web.py` (add `--quick` for a short run, as the test does).

Prints:
  - MQTT publish -> page updated latency (p50, p99, max) with 4 tables and 20 open pages: a publisher
    sends realistic ``state`` payloads (a mid-hand state of a generated game, ~3 kB) for 4 tables at a
    table's pace times ``--rate``; 20 SSE clients (5 per table, plain HTTP streams as a browser's
    EventSource reads them) time each state from its publication (a timestamp inside the payload) to
    the moment its SSE message is read;
  - the server's memory (VmRSS) with no table, then with 50 tables, each with its retained status,
    state and device health, a game's worth of events and its hand results.

The web server runs as its own process (`tablesvc web`), as in production; Mosquitto is started on a
free port (or give --broker). The figures in docs/web.md come from this script.
"""

from __future__ import annotations

import argparse
import getpass
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from hardware_sims.generator import generate_game
from tablesvc.engine.engine import Engine
from tablesvc.engine.events import to_dict
from tablesvc.mqtt.payloads import iso_time, result_payload, state_payload


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_mosquitto(work: Path) -> tuple[subprocess.Popen, int]:
    binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    port = free_port()
    conf = work / "mosquitto.conf"
    conf.write_text(f"user {getpass.getuser()}\nlistener {port} 127.0.0.1\nallow_anonymous true\n"
                    "max_queued_messages 0\n")
    proc = subprocess.Popen([binary, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    return proc, port


def wait_port(port: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


def wait_tables(port: int, names: set[str], timeout: float) -> int:
    """Wait until the server's /api/tables lists every table of ``names`` with its state (the last message
    published for each); how many it lists. Raises if it does not within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/api/tables")
        rows = json.loads(conn.getresponse().read())["tables"]
        conn.close()
        ready = {r["table"] for r in rows if r["site"] == "bench" and r["table"] in names and r["phase"] is not None}
        if ready == names:
            return len(ready)
        if time.monotonic() > deadline:
            raise RuntimeError(f"/api/tables lists {len(ready)} of the {len(names)} tables after {timeout:.0f} s")
        time.sleep(0.2)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def game_payloads(seed: int = 17) -> tuple[dict, list[dict], list[dict]]:
    """A mid-hand state, every journal entry of a game as ``events`` payloads, and its hand results."""
    record = generate_game(seed)
    engine = Engine()
    events, results, middle = [], [], None
    for seq, event in enumerate(record.events, 1):
        outputs = engine.apply(event)
        events.append({"schema": 1, "seq": seq, "ts": iso_time(time.time()), "source": "bench", "kind": event.type,
                       "event": to_dict(event)})
        results += [result_payload(o, seq, engine.state.players) for o in outputs if type(o).__name__ == "HandResult"]
        if middle is None and seq > 120 and engine.state.hand is not None:
            middle = state_payload(engine.state, seq)
    return middle, events, results


class Page(threading.Thread):
    """One open page: an SSE stream read as a browser does; latency of every bench state it receives."""

    def __init__(self, port: int, table: str) -> None:
        super().__init__(daemon=True)
        self.port, self.table = port, table
        self.latencies: list[float] = []
        self.ready = threading.Event()

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        conn.request("GET", f"/sse/table/bench/{self.table}", headers={"Accept": "text/event-stream"})
        response = conn.getresponse()
        kind = None
        while True:
            line = response.fp.readline()
            if not line:
                return
            line = line.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line[7:]
                if kind == "snapshot":
                    self.ready.set()
            elif line.startswith("data: ") and kind == "state":
                sent = json.loads(line[6:]).get("bench_sent")
                if sent is not None:
                    self.latencies.append(time.time() - sent)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run (the test's)")
    parser.add_argument("--broker", help="use this broker (mqtt://host:port) instead of starting Mosquitto")
    parser.add_argument("--rate", type=float, default=10.0, help="states per second per table (default 10)")
    args = parser.parse_args()
    messages = 40 if args.quick else 600  # per table
    memory_tables = 10 if args.quick else 50
    work = Path(tempfile.mkdtemp(prefix="bench-web-"))
    broker = None
    if args.broker:
        host_port = args.broker.split("//")[-1]
        port = int(host_port.rsplit(":", 1)[1])
    else:
        broker, port = start_mosquitto(work)
    web_port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "tablesvc", "web", "--broker", f"mqtt://127.0.0.1:{port}",
                               "--listen", f"127.0.0.1:{web_port}"], stdout=subprocess.DEVNULL,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    pub = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2)
    pub.max_queued_messages_set(0)
    try:
        wait_port(web_port)
        pub.connect("127.0.0.1", port)
        pub.loop_start()
        time.sleep(0.5)
        idle_rss = rss_kib(server.pid)
        state, events, results = game_payloads()

        # ---- latency: 4 tables, 20 pages
        tables = [f"t{i}" for i in range(4)]
        for t in tables:
            pub.publish(f"tablesvc/bench/{t}/status", json.dumps({"schema": 1, "status": "online"}), qos=1,
                        retain=True).wait_for_publish(5)
        time.sleep(0.3)
        pages = [Page(web_port, tables[i % 4]) for i in range(20)]
        for p in pages:
            p.start()
        for p in pages:
            if not p.ready.wait(15):
                raise RuntimeError("a page got no snapshot")
        interval = 1.0 / args.rate
        start = time.monotonic()
        for n in range(messages):
            for t in tables:
                payload = dict(state, seq=state["seq"] + n, bench_sent=time.time())
                pub.publish(f"tablesvc/bench/{t}/state", json.dumps(payload), qos=1, retain=True)
            time.sleep(max(0.0, start + (n + 1) * interval - time.monotonic()))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and sum(len(p.latencies) for p in pages) < 20 * messages:
            time.sleep(0.05)
        latencies = sorted(x * 1000 for p in pages for x in p.latencies)
        received = len(latencies)
        p50 = statistics.median(latencies)
        p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]
        print(f"latency publish->page: 4 tables, 20 pages, {messages} states/table at {args.rate:g}/s: "
              f"{received}/{20 * messages} received, p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {latencies[-1]:.1f} ms")
        loaded_rss = rss_kib(server.pid)

        # ---- memory: many tables with a whole game each
        for i in range(memory_tables):
            base = f"tablesvc/bench/m{i}"
            pub.publish(f"{base}/status", json.dumps({"schema": 1, "status": "online"}), qos=1, retain=True)
            pub.publish(f"{base}/devices/table", json.dumps({"schema": 1, "name": "table", "connected": True}),
                        qos=1, retain=True)
            for e in events:
                pub.publish(f"{base}/events", json.dumps(e), qos=1)
            for r in results:
                pub.publish(f"{base}/results", json.dumps(r), qos=1)
            pub.publish(f"{base}/state", json.dumps(state), qos=1, retain=True).wait_for_publish(10)
        # the state goes last: once the server lists every table with its state, it has taken in all of them
        listed = wait_tables(web_port, {f"m{i}" for i in range(memory_tables)}, timeout=60)
        with_tables = rss_kib(server.pid)
        per_table = (with_tables - loaded_rss) / memory_tables
        print(f"memory: {idle_rss / 1024:.1f} MiB idle, {loaded_rss / 1024:.1f} MiB after the latency run, "
              f"{with_tables / 1024:.1f} MiB with {memory_tables} more tables of {len(events)} events and "
              f"{len(results)} results each ({per_table:.0f} KiB per table; {listed} listed by /api/tables)")
        return 0 if received == 20 * messages else 1
    finally:
        pub.loop_stop()
        pub.disconnect()
        server.terminate()
        server.wait(10)
        if broker is not None:
            broker.terminate()
            broker.wait(10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
