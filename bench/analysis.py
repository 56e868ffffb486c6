"""The analysis's cost per state, replay speed with and without it, and discard-to-published-wait latency.

    python bench/analysis.py [--games N] [--quick]

1. Every state of the shared Tenhou games (after each event), all four seats
   read by one incremental :class:`~tablesvc.analysis.seats.Analyst` as the
   service's broadcast reads them (shanten, waits with tiles left, furiten,
   ukeire, deal-in): median and p99 per state; beside it the ``mahjong``
   package's shanten alone for the same four hands.
2. Replay speed: the engine with full checks (``replay(strict=True)``), the
   analysis of ``replay --analysis`` (each win's waits, each draw's tenpai),
   and with every state's analysis too.
3. Latency: a table service on a real Mosquitto given a recorded game (events
   and hands, as ``replay --feed`` gives them); from the discard handed to the
   service to its ``broadcast/hands`` arriving at a subscriber, p50 and p99.

One process, one core (the service's worker is one thread). Costs (1, 2) are
the CPU time of the thread (``time.thread_time``): what a state costs on one
core, without the waits a shared machine's other processes add; the wall time
of the replays is printed beside them. The latency (3) is wall time, load and
all.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, not bench/, comes first

import argparse
import json
import os
import statistics
import tempfile
import threading
import time

from mahjong.shanten import Shanten

from tablesvc.analysis.follow import RecordHands
from tablesvc.analysis.replay import RecordAnalyst
from tablesvc.analysis.seats import Analyst
from tablesvc.engine.engine import Engine
from tablesvc.engine.events import Discard
from tablesvc.formats.mjlog import parse_mjlog
from tablesvc.replay import replay
from tablesvc.tiles import tiles_to_34

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tenhou-mjlog"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def per_state(records) -> tuple[list[float], list[float]]:
    ours, package = [], []
    shanten = Shanten()
    for record in records:
        engine, analyst = Engine(), Analyst()
        for event in record.events:
            engine.apply(event)
            h = engine.state.hand
            if h is None:
                continue
            start = time.thread_time()
            analyst.analyse(engine.state)
            ours.append(time.thread_time() - start)
            hands = [tiles_to_34(s.hand) for s in h.seats]
            start = time.thread_time()
            for counts in hands:
                shanten.calculate_shanten(counts)
            package.append(time.thread_time() - start)
    return ours, package


def timed(action) -> tuple[float, float]:
    """(thread CPU seconds, wall seconds) of ``action()``."""
    cpu, wall = time.thread_time(), time.perf_counter()
    action()
    return time.thread_time() - cpu, time.perf_counter() - wall


def replay_speed(records) -> tuple[int, tuple[float, float], tuple[float, float], tuple[float, float]]:
    hands = sum(len(replay(r, strict=True).hands) for r in records)  # also warms the tables up

    def plain() -> None:
        for r in records:
            replay(r, strict=True)

    def analysed(lines: bool) -> None:
        for r in records:
            replay(r, strict=True, watch=RecordAnalyst(lines=lines))

    return hands, timed(plain), timed(lambda: analysed(False)), timed(lambda: analysed(True))


def latency(record, discards: int) -> list[float]:
    """Seconds from each discard handed to the service to its broadcast/hands at a subscriber."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    from hardware_sims.pytest_plugin import Mosquitto
    from tablesvc.feed_replay import feed_config
    from tablesvc.service import TableService

    work = Path(tempfile.mkdtemp(prefix="bench-analysis-"))
    broker = Mosquitto(work)
    broker.start()
    arrived: dict[int, float] = {}
    cond = threading.Condition()
    ready = threading.Event()

    def on_message(_c, _u, msg) -> None:
        seq = json.loads(msg.payload)["seq"]
        with cond:
            arrived.setdefault(seq, time.perf_counter())
            cond.notify_all()

    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2)
    client.on_message = on_message
    client.on_subscribe = lambda *_: ready.set()
    client.on_connect = lambda c, *_: c.subscribe("tablesvc/bench/t1/broadcast/hands", qos=1)
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    ready.wait(10)
    service = TableService(feed_config(broker.url, site="bench", table="t1", data_dir=work / "data"), new_game=True)
    service.start()
    service.link.wait_connected(15)
    times: list[float] = []
    try:
        follower = RecordHands()
        for event in record.events:
            public, seen, _ = follower.step(event)
            sent = time.perf_counter()
            service.submit(public, "bench")
            if seen is not None:
                service.hands(seen)
            service.wait_idle(10)
            if isinstance(event, Discard):
                seq = service.journal.last_seq
                with cond:
                    cond.wait_for(lambda s=seq: s in arrived, timeout=5)
                    if seq in arrived:
                        times.append(arrived[seq] - sent)
                if len(times) >= discards:
                    break
    finally:
        service.stop()
        client.loop_stop()
        client.disconnect()
        broker.stop()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=0, help="how many games (default: all)")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--quick", action="store_true", help="3 games, 40 discards (what the tests run)")
    args = parser.parse_args()
    files = sorted(args.data.glob("*.mjlog"))
    if args.quick:
        files = files[:3]
    elif args.games:
        files = files[:args.games]
    if not files:
        raise SystemExit(f"no .mjlog files in {args.data}")
    records = [parse_mjlog(f.read_text(encoding="utf-8"), str(f)) for f in files]
    ours, package = per_state(records)
    us = 1e6
    print(f"states analysed           {len(ours)} ({len(files)} games), all four seats each; CPU time")
    print(f"analysis per state        median {statistics.median(ours) * us:7.0f} us   "
          f"p99 {pct(ours, 0.99) * us:7.0f} us   (target p99 <= 1000 us)")
    print(f"mahjong shanten, 4 hands  median {statistics.median(package) * us:7.0f} us   "
          f"p99 {pct(package, 0.99) * us:7.0f} us   (shanten alone, no waits, ukeire nor deal-in)")
    hands, plain, with_analysis, with_lines = replay_speed(records)
    for label, (cpu, wall), note in (("replay, full checks", plain, "target >= 3000"),
                                     ("replay + analysis", with_analysis, "waits on wins and draws; target >= 1000"),
                                     ("replay + every state", with_lines, "replay --analysis, every state's lines")):
        print(f"{label:<25} {hands / cpu:7.0f} hands/s CPU, {hands / wall:6.0f} wall  ({note})")
    times = latency(records[0], 40 if args.quick else 400)
    if times:
        ms = 1e3
        print(f"discard -> broadcast/hands at a subscriber  p50 {statistics.median(times) * ms:6.1f} ms   "
              f"p99 {pct(times, 0.99) * ms:6.1f} ms   ({len(times)} discards; target p99 <= 200 ms to the overlay)")
    print(f"cores: {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
