"""Hands per second replaying the shared Tenhou games through the engine, with full checking.

    python bench/replay.py [--rounds 3] [--quick]

Full checking: every event validated against the tracked hands (tiles held,
riichi in tenpai, kuikae, claim order), every win scored, every hand's deltas
compared with the record (``replay(strict=True)``). Parsing the XML is timed
apart. One process, one core. The aim is 3,000 hands/s. Wall time and the process's CPU time are
both printed: on a shared machine the CPU time is the fairer figure.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, not bench/, comes first

import argparse
import statistics
import time

from tablesvc.formats.mjlog import parse_mjlog
from tablesvc.replay import replay

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tenhou-mjlog"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="repeat and keep the median")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--quick", action="store_true", help="the first 10 games, 1 round (what the tests run)")
    args = parser.parse_args()
    files = sorted(args.data.glob("*.mjlog"))
    if args.quick:
        files, args.rounds = files[:10], 1
    if not files:
        raise SystemExit(f"no .mjlog files in {args.data}")
    texts = [(str(f), f.read_text(encoding="utf-8")) for f in files]
    parse_times, replay_times, replay_cpu = [], [], []
    hands = events = 0
    for _ in range(args.rounds):
        start = time.perf_counter()
        records = [parse_mjlog(text, name) for name, text in texts]
        parse_times.append(time.perf_counter() - start)
        start, cpu = time.perf_counter(), time.process_time()
        hands = events = 0
        for record in records:
            report = replay(record, strict=True)
            hands += len(report.hands)
            events += len(record.events)
        replay_times.append(time.perf_counter() - start)
        replay_cpu.append(time.process_time() - cpu)
    p, r = statistics.median(parse_times), statistics.median(replay_times)
    print(f"games replayed            {len(files)} files, {hands} hands, {events} events, every delta exact")
    print(f"engine with checking      {hands / r:9.0f} hands/s  ({events / r:,.0f} events/s)")
    print(f"engine, CPU time (best)   {hands / min(replay_cpu):9.0f} hands/s")
    print(f"mjlog parsing             {hands / p:9.0f} hands/s")
    print(f"end to end (parse+replay) {hands / (p + r):9.0f} hands/s")


if __name__ == "__main__":
    main()
