"""``tablesvc tournament rehearse``: every seated round not yet played, on simulated tables.

Everything but the tables is the real thing: a broker of its own (Mosquitto
where it is installed, else the embedded one), one table
service per hall table (its journal in a data directory of the rehearsal's),
the records collector writing into the tournament's own database, the web
server with the tournament's pages, and the same start-round the organiser
runs. Each table is played by the table simulator with a generated game of
the tournament's rule set (a set without red fives is dealt none), seated
with the names the round sent. Once every table of a round has its final
result in the standings the round is finished, as the organiser would, and
the next one starts. What the organiser then sees (standings, the EMA
report, the pages) is what the day will give.

A hall with phone tables rehearses them as phone tables (``phones``: the
first tables by number): the game the simulator would play is played
through in the engine, and each hand's result alone (the winners' hands,
the tenpai seats, the riichi declarations) is entered at the table as its
players' phones enter it, the ``event`` command of ``/play`` with the hand
it is for, on the game the round started.

The rehearsal writes into the database it is given: rehearse on a copy of
the tournament's database (a SQLite file copied, or a PostgreSQL database
made from a dump), never on the day's.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tablesvc.tournament.model import HallTable, RoundStatus, TournamentError
from tablesvc.tournament.tournament_db import TournamentStore

__all__ = ["Rehearsal", "RehearsalReport"]

log = logging.getLogger(__name__)


@dataclass
class RehearsalReport:
    rounds: list[int] = field(default_factory=list)  # the rounds played and finished
    games: int = 0
    not_seated: list[int] = field(default_factory=list)  # rounds of the tournament with no seating to play


class Rehearsal:
    """The hall on one machine: broker, table services, collector and web server, started and stopped
    together (a context manager)."""

    def __init__(self, store: TournamentStore, tid: int, db_url: str, data_dir: Path, *, speed: float = 0.0,
                 web_listen: tuple[str, int] | None = ("127.0.0.1", 0), seed: int = 0,
                 say: Callable[[str], None] = print, game_timeout: float = 300.0, phones: int = 0) -> None:
        self.store, self.tid, self.db_url, self.data_dir = store, tid, db_url, data_dir
        self.speed, self.web_listen, self.seed, self.say = speed, web_listen, seed, say
        self.game_timeout = game_timeout
        self.tournament = store.tournament(tid)
        self.hall = store.tables(tid)
        if not self.hall:
            raise TournamentError("the hall has no tables to rehearse on: tablesvc tournament tables --site SITE "
                                  "--count N")
        if not 0 <= phones <= len(self.hall):
            raise TournamentError(f"--phones {phones}: the hall has {len(self.hall)} table(s); 0 to {len(self.hall)} "
                                  "of them can be phone tables")
        self.phones = {h.number for h in sorted(self.hall, key=lambda h: h.number)[:phones]}
        self.broker: Any = None
        self.services: dict[int, Any] = {}
        self.collector: Any = None
        self.web: Any = None
        self.web_password: str | None = None

    # ------------------------------------------------------------ the hall up and down

    def __enter__(self) -> Rehearsal:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> None:
        from tablesvc.config import parse_config
        from tablesvc.records.collector import Collector
        from tablesvc.service import TableService

        self.broker = _broker(self.data_dir)
        self.broker.start()
        for h in self.hall:
            where = self.data_dir / h.site / h.table_id
            where.mkdir(parents=True, exist_ok=True)
            # simulated tables: a journal that survives a crash of the rehearsal is enough, not a power cut,
            # and an fsync per event would pace the rehearsal at the disk's speed instead of the tables'
            config = parse_config(f'[table]\nsite = "{h.site}"\nid = "{h.table_id}"\ndata_dir = "{where}"\n'
                                  f'journal_sync = "normal"\n[mqtt]\nurl = "{self.broker.url}"\n')
            service = TableService(config, new_game=True)
            service.start()
            self.services[h.number] = service
        for h in self.hall:
            if not self.services[h.number].link.wait_ready(15):
                raise TournamentError(f"table {h.number} ({h.site}/{h.table_id}): its simulated service did not "
                                      "reach the rehearsal's broker in 15 s")
        self.collector = Collector(self.store.records, self.broker.url, client_id="tablesvc-rehearsal-records")
        self.collector.start()
        if self.web_listen is not None:
            self._start_web()

    def _start_web(self) -> None:
        import secrets

        from tablesvc.cli.web import make_server
        from tablesvc.config import WebConfig
        from tablesvc.mqtt.url import BrokerURL
        from tablesvc.web.auth import hash_password

        password = secrets.token_urlsafe(6)
        web = make_server(BrokerURL.parse(self.broker.url), WebConfig(referee_password=hash_password(password)),
                          listen=self.web_listen, records_db=self.db_url, tournament=self.tournament.name)
        web.start()
        self.web, self.web_password = web, password

    def close(self) -> None:
        for part in (self.web, self.collector):
            if part is not None:
                try:
                    part.stop()
                except Exception as exc:  # stopping what is left: one failure stops nothing else
                    log.warning("rehearsal: stopping %s: %s", type(part).__name__, exc)
        for service in self.services.values():
            try:
                service.stop()
            except Exception as exc:
                log.warning("rehearsal: stopping a table: %s", exc)
        if self.broker is not None:
            self.broker.stop()
        self.web = self.collector = self.broker = None
        self.services = {}

    # ------------------------------------------------------------ the day

    def run(self) -> RehearsalReport:
        """Play every seated round not finished, in order; a round seated later than one not seated stops the
        rehearsal there (the standings of the round before decide it)."""
        report = RehearsalReport()
        rounds = {r.number: r for r in self.store.rounds(self.tid)}
        for number in range(1, self.tournament.rounds + 1):
            r = rounds.get(number)
            if r is None:
                report.not_seated = [n for n in range(number, self.tournament.rounds + 1) if n not in rounds or
                                     rounds[n].status is RoundStatus.SEATED]
                break
            if r.status is RoundStatus.FINISHED:
                continue
            self._play_round(number, r.status is RoundStatus.STARTED)
            report.rounds.append(number)
            report.games += len(r.seating.tables)
            rounds = {x.number: x for x in self.store.rounds(self.tid)}
        return report

    def _play_round(self, number: int, started: bool) -> None:
        from tablesvc.tournament.hall import MqttHall, start_round

        with MqttHall(self.broker.url, client_id=f"tablesvc-rehearsal-r{number}") as hall:
            report = start_round(self.store, self.tid, number, hall, retry=started)
        for line in report.lines(self.hall):
            self.say(line)
        if report.not_started:
            raise TournamentError(f"round {number}: {len(report.not_started)} table(s) did not start on the "
                                  "rehearsal's own broker; the rehearsal stops here")
        r = report.round
        by_number = {h.number: h for h in self.hall}
        failures: list[str] = []
        threads = [threading.Thread(target=self._play_table, args=(number, i, by_number[i], failures),
                                    name=f"rehearsal-t{i}", daemon=True) for i in range(1, len(r.seating.tables) + 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if failures:
            raise TournamentError(f"round {number}: " + "; ".join(failures))
        self._wait_for_results(number, len(r.seating.tables))
        self.store.finish_round(self.tid, number)
        self.say(f"round {number}: {len(r.seating.tables)} game(s) played, in the standings, round finished")

    def _play_table(self, number: int, table: int, h: HallTable, failures: list[str]) -> None:
        from hardware_sims.generator import GeneratorOptions, generate_game
        from hardware_sims.table import DirectOutputs, TableSimulator

        service = self.services[table]
        try:
            state = service.table.state
            record = generate_game(self.seed * 10007 + number * 101 + table,
                                   GeneratorOptions(rules=self.tournament.rules, players=tuple(state.players)))
            if table in self.phones:
                self._enter_results(service, record, f"r{number}-t{table}")
            else:
                TableSimulator(record, DirectOutputs(service.observe), speed=self.speed,
                               start_game=lambda _e: None).run()
            if not service.wait_idle(self.game_timeout) or service.table.state.final is None:
                failures.append(f"table {table} ({h.site}/{h.table_id}): the game did not reach its end")
        except Exception as exc:  # a table's failure is reported with the round, not a traceback
            log.exception("rehearsal: table %d", table)
            failures.append(f"table {table} ({h.site}/{h.table_id}): {exc}")

    def _enter_results(self, service: Any, record: Any, name: str) -> None:
        """A phone table's game: ``record`` played through in the engine, then each hand's result entered at the
        table as a phone enters it (each with its hand number and a key of its own), at the rehearsal's pace."""
        import dataclasses
        import json

        from tablesvc.engine.events import to_dict
        from tablesvc.mqtt.link import IncomingMessage
        from tablesvc.replay import replay, result_entries
        from tablesvc.web.play import ENTRY_TYPES, PHONE_SOURCE

        entries = [e for e in result_entries(record, replay(record, strict=True).hands) if e.type in ENTRY_TYPES]
        topic = f"{service.config.topics.base}/cmd"
        for number, entry in enumerate(entries):
            if self.speed > 0:
                time.sleep(60.0 / self.speed)  # about a minute a hand at a real table's pace
            command = {"command": "event", "transaction": f"rehearsal-{name}-{number}", "by": PHONE_SOURCE,
                       "event": to_dict(dataclasses.replace(entry, hand_number=number))}
            service.inbox.put(("cmd", IncomingMessage(topic, json.dumps(command).encode())))
            if not service.wait_idle(self.game_timeout):
                raise TournamentError(f"hand {number + 1}: the table did not take it in {self.game_timeout:.0f} s")
            if service.table.state.hand_number != number + 1 and service.table.state.final is None:
                raise TournamentError(f"hand {number + 1} ({entry.type}) was refused by the table")

    def _wait_for_results(self, number: int, tables: int) -> None:
        """Until the collector has every game of the round with its final result (the standings read them)."""
        from tablesvc.tournament.actions import current_standings

        deadline, seen = time.monotonic() + 60, -1
        while True:
            st = current_standings(self.store, self.tid)
            done = [tg for tg in st.tables if tg.round == number and tg.status == "finished"]
            if len(done) == tables:
                return
            if len(done) > seen:  # games still arriving: a busy machine is given the time, a stuck one is not
                deadline, seen = time.monotonic() + 60, len(done)
            if time.monotonic() > deadline:
                raise TournamentError(f"round {number}: {len(done)} of {tables} games reached the standings, none "
                                      "more in 60 s after the tables ended")
            time.sleep(0.1)


class _Mosquitto:
    """Mosquitto on a free loopback port, in the rehearsal's directory: the hall's own broker where it is
    installed (faster and nearer the day than the embedded one)."""

    def __init__(self, binary: str, workdir: Path) -> None:
        import getpass

        from tablesvc.broker import free_port

        self.binary, self.port = binary, free_port()
        workdir.mkdir(parents=True, exist_ok=True)
        self.conf = workdir / "mosquitto.conf"
        self.conf.write_text(f"user {getpass.getuser()}\nlistener {self.port} 127.0.0.1\nallow_anonymous true\n"
                             "max_queued_messages 0\nset_tcp_nodelay true\n", encoding="utf-8")
        self.log = workdir / "mosquitto.log"
        self.proc: Any = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> None:
        import socket
        import subprocess

        with self.log.open("ab") as log:
            self.proc = subprocess.Popen([self.binary, "-c", str(self.conf)], stdout=log, stderr=log)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise TournamentError(f"mosquitto did not start on port {self.port} (see {self.log})")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None


def _broker(workdir: Path) -> Any:
    """Mosquitto where it is installed, else the embedded broker."""
    import shutil

    binary = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if Path("/usr/sbin/mosquitto").exists() else None)
    if binary:
        return _Mosquitto(binary, workdir / "broker")
    from tablesvc.broker import EmbeddedBroker

    return EmbeddedBroker()
