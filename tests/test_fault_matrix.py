"""The fault matrix (issue 11), bounded in time. (1) Over three seeds, a generated game is entered into a
real `tablesvc run` process while it is SIGKILLed at random points (commands in flight) and the broker is
stopped and started: the journal holds the game exactly (each event once, in order), a persistent
subscriber has received every journalled event, any duplicate identical to the first (consumers dedupe by
seq), and the final ranking is the game's. (2) A game played on devices on real ptys through unplug storms
while the wall clock jumps: results exact, every event published under its seq."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import threading
import time

import pytest

from hardware_sims.generator import generate_game
from hardware_sims.table import DeviceOutputs, TableSimulator
from tablesvc.config import parse_config
from tablesvc.engine.events import to_dict
from tablesvc.journal import Journal
from tablesvc.mqtt.link import IncomingMessage
from tablesvc.service import TableService
from tests.test_service_mqtt import _RUN, Subscriber, config_text, send_command


class Referee:
    """A referee's tool: sends the game event by event and, after the service comes back, goes on from the
    seq its retained state shows (a command whose reply was lost in a crash may or may not have been
    journalled: the state says which)."""

    def __init__(self, sub: Subscriber, events: list[dict]) -> None:
        self.sub = sub
        self.events = events
        self.sent = 0
        self._seen = 0  # messages of sub already scanned for replies
        self._replied: set[str] = set()

    def replied(self, transaction: str, timeout: float = 20.0) -> bool:
        deadline = time.monotonic() + timeout
        while transaction not in self._replied:
            with self.sub.lock:
                new, self._seen = self.sub.messages[self._seen:], len(self.sub.messages)
            self._replied.update(p.get("transaction") for t, p, _ in new if t.endswith("/cmd/reply") and p)
            if transaction in self._replied:
                break
            if time.monotonic() > deadline:
                return False
            time.sleep(0.002)
        return True

    def state_seq(self) -> int:
        states = self.sub.of("state")
        return states[-1]["seq"] if states else 0

    def online(self) -> bool:
        statuses = self.sub.of("status")
        return bool(statuses) and statuses[-1]["status"] == "online"

    def run(self, until: int) -> None:
        """Send events up to index ``until`` (exclusive), each waiting for its reply."""
        while self.sent < until:
            i = self.sent
            send_command(self.sub, {"command": "event", "event": self.events[i], "transaction": f"e{i}"})
            assert self.replied(f"e{i}"), f"no reply to event {i}"
            self.sent += 1

    def fire_and_forget(self, count: int) -> None:
        """Send the next ``count`` commands without waiting: a crash comes while they are in flight."""
        for i in range(self.sent, min(len(self.events), self.sent + count)):
            send_command(self.sub, {"command": "event", "event": self.events[i], "transaction": f"e{i}"})

    def resume(self) -> None:
        """After a restart: the service is online again; go on after what its journal holds."""
        assert self.sub.wait_for(self.online, 30)
        time.sleep(0.2)  # the resync sends the retained state before online; let it settle
        self.sent = self.state_seq()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sigkills_and_broker_restarts_keep_the_game_exact(mosquitto, tmp_path, seed):
    rng = random.Random(seed)
    record = generate_game(60 + seed)
    events = [to_dict(e) for e in record.events]
    path = tmp_path / "table.toml"
    data = tmp_path / "data"
    path.write_text(config_text(mosquitto.url, data))
    log = open(tmp_path / "service.log", "ab")  # noqa: SIM115 - the processes' log, closed below

    def start() -> subprocess.Popen:
        return subprocess.Popen([*_RUN, str(path)], stdout=log, stderr=log)

    sub = Subscriber(mosquitto.port, f"fault-matrix-{seed}", persistent=True)
    # a referee tool sending command after command sets TCP_NODELAY (docs/mqtt.md), on every reconnection
    sub.client.on_socket_open = lambda _c, _u, sock: sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sub.client.socket().setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    referee = Referee(sub, events)
    kills = sorted(rng.sample(range(20, len(events) - 20), 3))
    outage = rng.randrange(20, len(events) - 20)
    proc = start()
    try:
        referee.resume()
        for point in sorted([*kills, outage]):
            referee.run(point)
            if point == outage:  # the broker goes away and comes back; the service reconnects on its own
                mosquitto.stop()
                time.sleep(rng.uniform(0.5, 2.0))
                mosquitto.start()
                assert sub.wait_for(lambda: sub.client.is_connected(), 30)
                assert sub.wait_for(referee.online, 30)
                continue
            referee.fire_and_forget(rng.randrange(1, 4))
            time.sleep(rng.uniform(0.0, 0.03))
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
            assert sub.wait_for(lambda: not referee.online(), 30)  # the Last Will says offline
            proc = start()
            referee.resume()
        referee.run(len(events))
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
    with Journal(data / "t1.sqlite3") as journal:
        entries = list(journal.entries())
        assert journal.unpublished() == []
    assert [e.body for e in entries] == events  # each event once, in order, through every kill
    journalled = {e.seq: e.body for e in entries}
    assert sub.wait_for(lambda: {e["seq"] for e in sub.of("events")} >= set(journalled), 30)
    firsts: dict[int, dict] = {}
    for e in sub.of("events"):
        assert e["event"] == journalled[e["seq"]]  # a duplicate is the same event under the same seq
        firsts.setdefault(e["seq"], e)
    final = [r for r in sub.of("results") if r.get("type") == "game_result"]
    assert final and [x["points"] for x in sorted(final[-1]["ranking"], key=lambda x: x["seat"])] == list(
        record.final_scores)
    sub.close()


class JumpingClock:
    """A wall clock that an NTP correction or a dead RTC battery moves by up to an hour, either way."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.offset = 0.0
        self.jumps = 0

    def __call__(self) -> float:
        if self.rng.random() < 0.05:
            self.offset = self.rng.choice([-1, 1]) * self.rng.uniform(60, 3600)
            self.jumps += 1
        return time.time() + self.offset


def test_unplug_storms_and_clock_jumps_keep_the_game_exact(mosquitto, pty_device, game_record, tmp_path):
    """Devices on real ptys are pulled and plugged back in storms while a game is played on them, and the
    wall clock jumps: every device event is acknowledged once, the game's results are exact, every event
    published under its seq."""
    rng = random.Random(5)
    table = pty_device("table", "TBL1", max_resends=400)  # firmware that keeps repeating while unplugged
    panel = pty_device("panel", "PNL1", max_resends=400)
    config = parse_config(config_text(mosquitto.url, tmp_path / "data")
                          + f'[[serial]]\nname = "table"\nurl = "{table.link_path}"\nkind = "table"\nids = ["TBL1"]\n'
                          + f'[[serial]]\nname = "panel"\nurl = "{panel.link_path}"\nkind = "panel"\nids = ["PNL1"]\n')
    clock = JumpingClock(rng)
    service = TableService(config, wall_clock=clock)
    service.start()
    sub = Subscriber(mosquitto.port)
    done = threading.Event()
    unplugs = 0

    def storms() -> None:
        nonlocal unplugs
        while not done.wait(rng.uniform(0.1, 0.6)):
            device = rng.choice([table, panel])
            for _ in range(rng.randint(1, 4)):
                device.unplug()
                unplugs += 1
                time.sleep(rng.uniform(0.01, 0.2))
                device.replug()

    try:
        assert service.link.wait_ready(15)
        record = game_record(seed=11)

        def start(_event) -> None:  # the referee's start_game, queued before the device events that follow it
            command = {"command": "start_game", "players": list(record.players), "transaction": "go"}
            service.inbox.put(("cmd", IncomingMessage("cmd", json.dumps(command).encode())))

        outputs = DeviceOutputs(table, panel, service.observe, ack_timeout=60)
        storm = threading.Thread(target=storms, daemon=True)
        storm.start()
        TableSimulator(record, outputs, speed=40, start_game=start).run()  # about 25 moves a second
        done.set()
        storm.join(10)
        assert service.wait_idle(60)
        assert outputs.unacknowledged == 0
        state = service.table.state
        assert [r.deltas for r in state.results] == [h.deltas for h in record.hands if h.deltas is not None]
        assert state.final is not None and tuple(state.scores) == tuple(record.final_scores)
        last = service.journal.last_seq
        assert sub.wait_for(lambda: {e["seq"] for e in sub.of("events")} == set(range(1, last + 1)), 30)
        by_seq: dict[int, dict] = {}
        for e in sub.of("events"):
            assert by_seq.setdefault(e["seq"], e) == e  # a duplicate is the same event under the same seq
    finally:
        done.set()
        sub.close()
        service.stop()
    assert unplugs >= 5 and clock.jumps >= 3  # the faults happened
