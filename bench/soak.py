"""Soak: N simulated tables through one Mosquitto for M minutes: `python bench/soak.py [--quick]`

    python bench/soak.py [--tables 4] [--minutes 2] [--speed 20] [--broker mqtt://host:port] [--quick]

Each table is a process of its own running the real service (journal with
fsync per event, MQTT 5 to the broker) and playing generated games one after
another through the table simulator (``--speed``: 1 is real time, about a
second a discard; 0 as fast as the service takes them) until the time is up.
One subscriber takes every table's ``events``; at the end each table's
journal says which events exist (game by game), and the bench prints:

- events/s over all tables, as received by the subscriber;
- events lost (in a journal, never received) and doubled (received twice),
  each of which must be 0 on a healthy broker;
- per table: RSS of its process at start (service running, before the first
  game) and at the end, and CPU time used over the run as a share of one core.

``--minutes`` is capped at 60. The broker is the given one, else a Mosquitto
of its own (else the embedded amqtt broker).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, not bench/, comes first

import argparse
import json
import multiprocessing
import os
import tempfile
import threading
import time
from collections import defaultdict

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from bench.pipeline import start_broker, stop_broker

TICK = os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def table_process(index: int, url: str, work: str, seconds: float, speed: float, pipe) -> None:
    """One table: the service, then generated games until ``seconds`` have passed; sends the journal's
    event count of every game played."""
    from hardware_sims.generator import generate_game
    from hardware_sims.table import DirectOutputs, TableSimulator
    from tablesvc.config import parse_config
    from tablesvc.mqtt.link import IncomingMessage
    from tablesvc.service import TableService

    config = parse_config(f'[table]\nsite = "soak"\nid = "table-{index}"\ndata_dir = "{work}/data-{index}"\n'
                          f'[mqtt]\nurl = "{url}"\n')
    service = TableService(config)
    service.start()
    if not service.link.wait_connected(20):
        pipe.send(("error", f"table {index} cannot reach {url}: {service.link.failure}"))
        return
    service.wait_idle(10)
    pipe.send(("ready", os.getpid()))
    pipe.recv()  # go
    deadline = time.monotonic() + seconds
    games: list[int] = []
    seed = 1000 * index
    while time.monotonic() < deadline:
        record = generate_game(seed)
        seed += 1

        def start(_event, s=service, r=record, n=seed) -> None:
            command = {"command": "start_game", "players": list(r.players), "transaction": f"soak-{n}"}
            s.inbox.put(("cmd", IncomingMessage("soak", json.dumps(command).encode())))

        sim = TableSimulator(record, DirectOutputs(service.observe), speed=speed, start_game=start)
        timer = threading.Timer(max(0.0, deadline - time.monotonic()), sim.stop)  # a game cut at the deadline
        timer.start()
        sim.run()
        timer.cancel()
        service.wait_idle(120)
        games.append(service.journal.last_seq)
    service.publisher.drain(10)
    pipe.send(("done", games))
    pipe.recv()  # measured: stop
    service.stop()


class Subscriber:
    """Every table's events, in arrival order: (table, seq)."""

    def __init__(self, port: int) -> None:
        self.received: dict[str, list[int]] = defaultdict(list)
        self.lock = threading.Lock()
        self.first: float | None = None
        self.last: float | None = None
        self.client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5,
                                  client_id="soak-subscriber")
        self.client.on_message = self._message
        self.client.connect("127.0.0.1", port)
        self.client.subscribe("tablesvc/soak/+/events", qos=1)
        self.client.loop_start()
        time.sleep(0.5)

    def _message(self, _c, _u, msg) -> None:
        now = time.monotonic()
        seq = json.loads(msg.payload)["seq"]
        with self.lock:
            self.received[msg.topic.split("/")[2]].append(seq)
            self.first = self.first or now
            self.last = now

    def count(self) -> int:
        with self.lock:
            return sum(len(v) for v in self.received.values())

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def compare(games: list[int], got: list[int]) -> tuple[int, int]:
    """(lost, doubled) of one table: ``got`` split into games where seq starts again at 1."""
    runs: list[list[int]] = []
    for seq in got:
        if seq == 1 and (not runs or 1 in runs[-1]):
            runs.append([])
        if not runs:
            runs.append([])
        runs[-1].append(seq)
    lost = doubled = 0
    for i, expected in enumerate(games):
        seqs = runs[i] if i < len(runs) else []
        lost += len(set(range(1, expected + 1)) - set(seqs))
        doubled += len(seqs) - len(set(seqs))
    doubled += sum(len(r) for r in runs[len(games):])  # events of a game no journal holds
    return lost, doubled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--speed", type=float, default=20.0, help="1 = real time, 0 = as fast as it goes")
    parser.add_argument("--broker", help="an MQTT broker URL (default: own Mosquitto, else embedded)")
    parser.add_argument("--quick", action="store_true", help="2 tables for 10 s (what the tests run)")
    args = parser.parse_args()
    if args.quick:
        args.tables, args.minutes = 2, 10 / 60
    if not 0 < args.minutes <= 60 or not 1 <= args.tables <= 64:
        raise SystemExit("--minutes must be in (0, 60] and --tables in [1, 64]")
    work = Path(tempfile.mkdtemp(prefix="tablesvc-soak-"))
    url, owned = start_broker(args.broker, work)
    port = int(url.rsplit(":", 1)[1])
    ctx = multiprocessing.get_context("spawn")
    tables = []
    try:
        subscriber = Subscriber(port)
        for i in range(args.tables):
            ours, theirs = ctx.Pipe()
            proc = ctx.Process(target=table_process, args=(i, url, str(work), args.minutes * 60, args.speed, theirs),
                               daemon=True)
            proc.start()
            tables.append((proc, ours))
        starts = []
        for proc, pipe in tables:
            kind, value = pipe.recv()
            if kind == "error":
                raise SystemExit(value)
            starts.append((rss_mb(proc.pid), cpu_seconds(proc.pid)))
        began = time.monotonic()
        for _, pipe in tables:
            pipe.send("go")
        results = []
        for (proc, pipe), (rss0, cpu0) in zip(tables, starts, strict=True):
            kind, games = pipe.recv()
            results.append((games, rss0, rss_mb(proc.pid), cpu_seconds(proc.pid) - cpu0))
        elapsed = time.monotonic() - began
        expected = sum(sum(g) for g, *_ in results)
        deadline = time.monotonic() + 30
        while subscriber.count() < expected and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)  # a late duplicate would show
        for _, pipe in tables:
            pipe.send("stop")
        for proc, _ in tables:
            proc.join(20)
        subscriber.close()
    finally:
        for proc, _ in tables:
            if proc.is_alive():
                proc.kill()
        stop_broker(owned)
    lost = doubled = 0
    for i, (games, *_rest) in enumerate(results):
        table_lost, table_doubled = compare(games, subscriber.received.get(f"table-{i}", []))
        lost, doubled = lost + table_lost, doubled + table_doubled
    received = subscriber.count()
    print(f"broker                    {owned[0] if owned else url}")
    print(f"soak                      {args.tables} tables for {elapsed:.0f} s at speed {args.speed:g}: "
          f"{sum(len(g) for g, *_ in results)} games (the last of each table cut at the deadline), "
          f"{expected} events journalled, {received} received")
    print(f"events/s                  {expected / elapsed:.1f} over all tables ({expected / elapsed / args.tables:.1f} "
          f"per table)")
    print(f"events lost               {lost} (must be 0)")
    print(f"events doubled            {doubled} (must be 0)")
    for i, (games, rss0, rss1, cpu) in enumerate(results):
        print(f"table-{i:<3}                 RSS {rss0:.1f} MB at start, {rss1:.1f} MB at the end; CPU "
              f"{100 * cpu / elapsed:.1f} % of one core; {sum(games)} events in {len(games)} games")


if __name__ == "__main__":
    main()
