"""Phone tables under load: `python bench/phone_table.py [--quick]`

    python bench/phone_table.py [--tables 40] [--hands 8] [--pace 15] [--quick]

``--tables`` phone tables (table services with no devices, journal_sync full as a club runs them) on one
Mosquitto, and the web server (``tablesvc web``, its own process). Each table's phone starts a game through
``/api/play`` and then enters a hand every ``--pace`` seconds (with a random spread of half that either way, the
tables out of step as in a hall), ``--hands`` hands in all: a ron valued in han and fu, each checked first
(``preview``: the payments the phone shows) and then entered (``enter``: sent to the table, answered once the
table has journalled it).

Prints the tap-to-confirmed time (the phone's ``enter`` until the table's answer reaches it: the entry
journalled and the hand on the feed) and the tap-to-payments time (``preview``), p50 and p99 over every entry
of every table, and that every table holds exactly the hands its phone entered. A real table plays a hand in
two to five minutes; the default pace is eight to twenty times that, so the load is well above a real hall's.
``--quick``: 4 tables, 4 hands, a 0.5 s pace.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, not bench/, comes first

import argparse
import http.client
import json
import random
import statistics
import subprocess
import tempfile
import threading
import time

from bench.hall import mosquitto
from bench.web import free_port, wait_port
from tablesvc.config import parse_config
from tablesvc.service import TableService
from tablesvc.web.play import play_token

SECRET = "bench-phone-secret-0123456789"
SITE = "hall"


def call(port: int, table: str, body: dict) -> tuple[int, dict, float]:
    """One phone request; (status, answer, seconds)."""
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    token = play_token(SECRET.encode(), SITE, table)
    conn.request("POST", f"/api/play/{SITE}/{table}", body=json.dumps(body),
                 headers={"Content-Type": "application/json", "X-Table-Token": token})
    response = conn.getresponse()
    answer = json.loads(response.read())
    conn.close()
    return response.status, answer, time.perf_counter() - started


class Phone(threading.Thread):
    """The phone of one table: starts the game, then enters a hand at the table's pace."""

    def __init__(self, port: int, table: str, hands: int, pace: float, seed: int) -> None:
        super().__init__(daemon=True)
        self.port, self.table, self.hands, self.pace = port, table, hands, pace
        self.random = random.Random(seed)
        self.confirmed: list[float] = []
        self.previewed: list[float] = []
        self.errors: list[str] = []

    def run(self) -> None:
        status, answer, _ = call(self.port, self.table, {"action": "start", "key": f"start-{self.table}-0000",
                                                         "players": ["Ann", "Bo", "Cy", "Di"]})
        if status != 200:
            self.errors.append(f"start: {answer}")
            return
        time.sleep(self.random.uniform(0, self.pace))  # the tables do not start in step
        for number in range(self.hands):
            winner = (number + 1) % 4  # a non-dealer's ron: the deal moves on every hand
            event = {"type": "win_entry", "from_seat": (winner + 1) % 4, "hand_number": number,
                     "wins": [{"seat": winner, "han": self.random.choice((1, 2, 3)), "fu": 30}]}
            for _ in range(50):  # until the feed shows the game started (or the last hand entered)
                status, answer, seconds = call(self.port, self.table, {"action": "preview", "event": event})
                if status == 200:
                    break
                time.sleep(0.05)
            else:
                self.errors.append(f"hand {number}: preview {answer}")
                return
            self.previewed.append(seconds)
            key = f"{self.table}-hand-{number:04d}"
            status, answer, seconds = call(self.port, self.table, {"action": "enter", "key": key,
                                                                   "event": answer["event"]})
            if status != 200:
                self.errors.append(f"hand {number}: enter {answer}")
                return
            self.confirmed.append(seconds)
            time.sleep(self.random.uniform(0.5 * self.pace, 1.5 * self.pace))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--hands", type=int, default=8)
    parser.add_argument("--pace", type=float, default=15.0, help="seconds between a table's hands (mean)")
    parser.add_argument("--quick", action="store_true", help="4 tables, 4 hands, a 0.5 s pace")
    args = parser.parse_args()
    if args.quick:
        args.tables, args.hands, args.pace = 4, 4, 0.5
    work = Path(tempfile.mkdtemp(prefix="bench-phones-"))
    broker, port = mosquitto(work, "broker")
    web_port = free_port()
    config = work / "web.toml"
    config.write_text(f'[web]\nsecret_key = "{SECRET}"\nsite = "{SITE}"\n')
    web = subprocess.Popen([sys.executable, "-m", "tablesvc", "web", "--broker", f"mqtt://127.0.0.1:{port}",
                            "--listen", f"127.0.0.1:{web_port}", "--config", str(config)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    services: list[TableService] = []
    try:
        wait_port(web_port, 30)
        for i in range(args.tables):
            cfg = parse_config(f'[table]\nsite = "{SITE}"\nid = "p{i + 1}"\ndata_dir = "{work / f"p{i + 1}"}"\n'
                               f'[mqtt]\nurl = "mqtt://127.0.0.1:{port}"\n')
            service = TableService(cfg, new_game=True)
            service.start()
            services.append(service)
        for service in services:
            assert service.link.wait_ready(30)
        phones = [Phone(web_port, f"p{i + 1}", args.hands, args.pace, seed=i) for i in range(args.tables)]
        started = time.monotonic()
        for phone in phones:
            phone.start()
        for phone in phones:
            phone.join(args.hands * args.pace * 3 + 120)
        took = time.monotonic() - started
        errors = [f"{p.table}: {e}" for p in phones for e in p.errors]
        confirmed = [s for p in phones for s in p.confirmed]
        previewed = [s for p in phones for s in p.previewed]
        held = [sum(1 for e in s.journal.entries() if e.kind == "win_entry") for s in services]
        exact = all(h == args.hands for h in held)
        print(f"phone tables              {args.tables}, {args.hands} hands each, one every {args.pace:g} s "
              f"(+-50 %), {took:.0f} s")
        print(f"entries                   {len(confirmed)} confirmed, {len(errors)} refused or lost")
        if confirmed:
            print(f"tap -> confirmed          p50 {pct(confirmed, 0.5):.1f} ms, p99 {pct(confirmed, 0.99):.1f} ms, "
                  f"max {max(confirmed) * 1000:.1f} ms (mean {statistics.mean(confirmed) * 1000:.1f} ms)")
            print(f"tap -> payments shown     p50 {pct(previewed, 0.5):.1f} ms, p99 {pct(previewed, 0.99):.1f} ms")
        print(f"journals                  {'every table holds exactly the hands entered' if exact else held}")
        for e in errors[:10]:
            print(f"  {e}")
        return 0 if exact and not errors else 1
    finally:
        for service in services:
            service.stop()
        web.terminate()
        web.wait(10)
        broker.terminate()
        broker.wait(10)


if __name__ == "__main__":
    sys.exit(main())
