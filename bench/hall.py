"""A tournament hall under load: `python bench/hall.py [--quick]`

    python bench/hall.py [--tables 32] [--pages 100] [--annex 8] [--cut 30] [--records-db URL] [--quick]

Hall A: ``--tables`` simulated tables (table services fed by the table
simulator, a generated game each), one Mosquitto, the records collector
(``tablesvc records``, its own process) writing into PostgreSQL (the test
suite's throwaway server, or the empty database ``--records-db`` names;
SQLite where PostgreSQL is not installed), and the
web server (``tablesvc web --records-db``, its own process) with ``--pages``
open tournament pages (Server-Sent Events streams read as a browser reads
them). A tournament seats every player, ``start-round`` starts every table,
and every table plays its game to the end.

Hall B (the annex): ``--annex`` more tables on a Mosquitto of their own,
bridged to hall A's as a second room would be (``topic tablesvc/# out 1``,
the tables' ``cmd`` in), through a TCP link the bench cuts for ``--cut``
seconds while the round is in play.

Prints: every game in the standings exactly once (and each table's final
ranking in the records equal to the table's own), the time from a table
publishing its final result to the standings page showing it (p50, p99,
max over every page and table of hall A; the target is p99 under 1 s), hall
B's games after the cut (none lost, none doubled), and how often the web
server read the database for all its pages. ``--quick``: 4 tables, 10
pages, 2 annex tables, a 3 s cut, at 120 times a table's pace, six of the
shortest games the generator deals (the longest about 7 s of play, so the
cut still falls mid-round).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, not bench/, comes first

import argparse
import contextlib
import getpass
import http.client
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from bench.web import free_port, wait_port
from hardware_sims.generator import GeneratorOptions, generate_game
from hardware_sims.network import CuttableProxy
from hardware_sims.table import DirectOutputs, TableSimulator
from tablesvc.config import parse_config
from tablesvc.records.records_db import RecordsStore
from tablesvc.service import TableService
from tablesvc.tournament.hall import MqttHall, start_round
from tablesvc.tournament.model import SeatingMethod, Tournament
from tablesvc.tournament.seating import shuffled
from tablesvc.tournament.tournament_db import NewPlayer, TournamentStore

RULES = "ema2012"  # the simulator deals red fives
#: the quick run's six tables play among the shortest games the generator deals on these rules (626 to 806
#: events; a game averages 1,200): the quick run checks the hall's plumbing, not its load
QUICK_SEEDS = (73, 65, 74, 126, 97, 197)
REPO = Path(__file__).resolve().parents[1]


def mosquitto(work: Path, name: str, extra: str = "") -> tuple[subprocess.Popen, int]:
    binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    port = free_port()
    conf = work / f"{name}.conf"
    conf.write_text(f"user {getpass.getuser()}\nlistener {port} 127.0.0.1\nallow_anonymous true\n"
                    f"max_queued_messages 0\nset_tcp_nodelay true\n{extra}")
    proc = subprocess.Popen([binary, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    return proc, port


class Table:
    """One simulated table: its service on its room's broker, and the game it plays once started."""

    def __init__(self, site: str, table: str, port: int, data: Path) -> None:
        self.site, self.table = site, table
        config = parse_config(f'[table]\nsite = "{site}"\nid = "{table}"\ndata_dir = "{data / site / table}"\n'
                              f'journal_sync = "normal"\n[mqtt]\nurl = "mqtt://127.0.0.1:{port}"\n')
        self.service = TableService(config, new_game=True)

    def play(self, seed: int, speed: float) -> None:
        state = self.service.table.state
        record = generate_game(seed, GeneratorOptions(rules=RULES, players=state.players))
        sim = TableSimulator(record, DirectOutputs(self.service.observe), start_game=lambda _e: None, speed=speed)
        for event in record.events:
            sim.show(event)
        self.service.wait_idle(120)


class Page(threading.Thread):
    """One open tournament page: the SSE stream, and when it first showed each table's game finished."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.seen: dict[tuple[str, str], float] = {}
        self.ready = threading.Event()

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        conn.request("GET", "/sse/tournament", headers={"Accept": "text/event-stream"})
        response = conn.getresponse()
        kind = None
        while True:
            line = response.fp.readline()
            if not line:
                return
            text = line.decode().rstrip("\n")
            if text.startswith("event: "):
                kind = text[7:]
            elif text.startswith("data: ") and kind == "tournament":
                now = time.time()
                self.ready.set()
                for t in json.loads(text[6:])["tables"]:
                    if t["status"] == "finished":
                        self.seen.setdefault((t["site"], t["table_id"]), now)


def postgres() -> tuple[Any, str]:
    """The test suite's own throwaway PostgreSQL, or (None, a SQLite file) where it is not installed."""
    try:
        from tests.conftest import Postgres

        server = Postgres()
    except BaseException as exc:  # pytest's Skipped when PostgreSQL is missing
        print(f"(PostgreSQL not available: {exc}; the records go into SQLite)")
        return None, str(Path(tempfile.mkdtemp(prefix="bench-hall-")) / "records.sqlite3")
    server.start()
    return server, server.new_database()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=32)
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--annex", type=int, default=8, help="tables of the bridged second room (0: none)")
    parser.add_argument("--cut", type=float, default=30.0, help="seconds the bridge is cut mid-round")
    parser.add_argument("--speed", type=float, default=10.0, help="times a real table's pace (1: a discard a "
                        "second; default 10: a hanchan in about a minute, every table at once)")
    parser.add_argument("--records-db", help="the records in this empty database (a PostgreSQL URL, as a test "
                        "session's own server gives) instead of a throwaway PostgreSQL server started for the bench")
    parser.add_argument("--quick", action="store_true", help="4 tables, 10 pages, 2 annex tables, a 3 s cut, "
                        "120x a table's pace, short games")
    args = parser.parse_args()
    if args.quick:
        args.tables, args.pages, args.annex, args.cut, args.speed = 4, 10, 2, 3.0, 120.0
    work = Path(tempfile.mkdtemp(prefix="bench-hall-"))
    procs: list[subprocess.Popen] = []
    pg, db = (None, args.records_db) if args.records_db else postgres()
    tables: list[Table] = []
    link = None
    try:
        broker_a, port_a = mosquitto(work, "hall")
        procs.append(broker_a)
        port_b = None
        if args.annex:
            link = CuttableProxy(port_a)  # the line between the two rooms, cut as a pulled cable would be
            broker_b, port_b = mosquitto(work, "annex", (
                f"connection hall\naddress 127.0.0.1:{link.port}\ncleansession false\nrestart_timeout 1 2\n"
                "keepalive_interval 5\ntopic tablesvc/# out 1\ntopic tablesvc/+/+/cmd in 1\n"))
            procs.append(broker_b)
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        web_port = free_port()
        procs.append(subprocess.Popen([sys.executable, "-m", "tablesvc", "records", "--broker",
                                       f"mqtt://127.0.0.1:{port_a}", "--db", db, "--client-id", "bench-collector"],
                                      stdout=subprocess.DEVNULL, env=env))
        web = subprocess.Popen([sys.executable, "-m", "tablesvc", "web", "--broker", f"mqtt://127.0.0.1:{port_a}",
                                "--listen", f"127.0.0.1:{web_port}", "--records-db", db],
                               stdout=subprocess.DEVNULL, env=env)
        procs.append(web)

        # the tournament: every player seated in round 1
        records = RecordsStore(db)
        store = TournamentStore(records)
        tid = store.create(Tournament("Bench Open", RULES, 1))
        n = 4 * (args.tables + args.annex)
        store.add_players(tid, [NewPlayer(f"Player {i:03d}", f"{90000000 + i}") for i in range(1, n + 1)])
        hall = [("hall", f"t{i}") for i in range(1, args.tables + 1)] + \
            [("annex", f"t{i}") for i in range(1, args.annex + 1)]
        store.set_tables(tid, hall)
        store.save_seating(tid, 1, shuffled(list(range(1, n + 1))), SeatingMethod.SHUFFLED)
        tables = [Table(s, t, port_a if s == "hall" else port_b, work) for s, t in hall]  # type: ignore[arg-type]
        for t in tables:
            t.service.start()
        for t in tables:
            if not t.service.link.wait_ready(30):
                raise RuntimeError(f"{t.site}/{t.table} did not connect")
        wait_port(web_port)

        # the final results as hall A's broker passes them on
        published: dict[tuple[str, str], float] = {}
        watcher = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, client_id="bench-watcher")

        def on_message(_c: Any, _u: Any, msg: mqtt.MQTTMessage) -> None:
            data = json.loads(msg.payload)
            if data.get("type") == "game_result":
                parts = msg.topic.split("/")
                published.setdefault((parts[1], parts[2]), time.time())

        watcher.on_message = on_message
        watcher.connect("127.0.0.1", port_a)
        watcher.subscribe("tablesvc/+/+/results", qos=1)
        watcher.loop_start()

        pages = [Page(web_port) for _ in range(args.pages)]
        for p in pages:
            p.start()
        for p in pages:
            if not p.ready.wait(60):
                raise RuntimeError("a tournament page got nothing in 60 s")

        with MqttHall(f"mqtt://127.0.0.1:{port_a}") as hall_link:
            report = start_round(store, tid, 1, hall_link, timeout=30)
        if report.not_started:
            raise RuntimeError(f"tables not started: {report.not_started}")

        reads: list[float] = []
        reading = threading.Event()

        def sample() -> None:  # how long one read of the whole tournament takes on the loaded server
            while not reading.is_set():
                t0 = time.perf_counter()
                conn = http.client.HTTPConnection("127.0.0.1", web_port, timeout=30)
                conn.request("GET", "/api/tournament")
                conn.getresponse().read()
                conn.close()
                reads.append(1000 * (time.perf_counter() - t0))
                reading.wait(1.0)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        started = time.monotonic()
        seeds = QUICK_SEEDS if args.quick else range(1000, 1000 + len(tables))
        players = [threading.Thread(target=t.play, args=(seed, args.speed), daemon=True)
                   for seed, t in zip(seeds, tables, strict=False)]
        for th in players:
            th.start()
        cut_for = 0.0
        if link is not None and args.cut > 0:
            time.sleep(1.0)  # mid-round
            link.cut()
            t0 = time.monotonic()
            time.sleep(args.cut)
            link.restore()
            cut_for = time.monotonic() - t0
        for th in players:
            th.join(900)
        played = time.monotonic() - started
        reading.set()
        deadline = time.monotonic() + 120
        keys = set(hall)
        while time.monotonic() < deadline:
            if all(keys <= set(p.seen) for p in pages):
                break
            time.sleep(0.2)

        # ---- what the records and the standings hold
        from tablesvc.tournament.actions import current_standings

        kept = [g for g in records.games() if (g.site, g.table) in keys]
        per_table: dict[tuple[str, str], int] = {}
        for g in kept:
            per_table[(g.site, g.table)] = per_table.get((g.site, g.table), 0) + 1
        same = 0
        for t in tables:
            final = t.service.table.state.final
            g = next((g for g in kept if (g.site, g.table) == (t.site, t.table)), None)
            if final is not None and g is not None and sorted((s.seat, s.result) for s in g.seats) == sorted(
                    (s.seat, s.result) for s in final.standings):
                same += 1
        st = current_standings(store, tid)
        once = all(p.games == 1 for p in st.players)
        a_tables = [k for k in hall if k[0] == "hall"]
        b_tables = [k for k in hall if k[0] == "annex"]
        lat = sorted(1000 * (p.seen[k] - published[k]) for p in pages for k in a_tables
                     if k in p.seen and k in published)
        seen_all = sum(1 for p in pages for k in keys if k in p.seen)
        kind = "postgresql" if db.startswith("postgresql") else "sqlite"
        print(f"hall                     {args.tables} tables, {args.pages} pages, 1 collector into "
              f"{kind}, round played in {played:.1f} s at {args.speed:g}x a table's pace")
        print(f"games in the standings   {sum(1 for k in a_tables if per_table.get(k) == 1)}/{len(a_tables)} hall A, "
              f"{sum(1 for k in b_tables if per_table.get(k) == 1)}/{len(b_tables)} hall B; doubled "
              f"{sum(max(0, c - 1) for c in per_table.values())}; every player's games once: {once}; final rankings "
              f"as the tables' own: {same}/{len(tables)}")
        if lat:
            p99 = lat[min(len(lat) - 1, int(0.99 * len(lat)))]
            print(f"result -> standings page p50 {statistics.median(lat):.0f} ms, p99 {p99:.0f} ms, "
                  f"max {lat[-1]:.0f} ms over {len(lat)} page-table pairs (pages that showed every game: "
                  f"{seen_all}/{len(pages) * len(keys)})")
        else:
            print("result -> standings page no result reached the pages")
        if reads:
            print(f"GET /api/tournament      p50 {statistics.median(reads):.0f} ms, max {max(reads):.0f} ms while the "
                  f"round was played ({len(reads)} reads: the standings from the database, as the pages get them)")
        if link is not None:
            print(f"bridge cut               {cut_for:.0f} s mid-round; hall B games after it: "
                  f"{sum(1 for k in b_tables if per_table.get(k) == 1)}/{len(b_tables)}, lost "
                  f"{sum(1 for k in b_tables if k not in per_table)}, doubled "
                  f"{sum(max(0, per_table.get(k, 0) - 1) for k in b_tables)}")
        watcher.loop_stop()
        records.close()
    finally:
        for t in tables:
            with contextlib.suppress(Exception):  # a bench tears down what it can
                t.service.stop()
        if link is not None:
            link.close()
        for proc in reversed(procs):
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        if pg is not None:
            pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
