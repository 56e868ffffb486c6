"""The fault matrix (issue 11): over several seeds, a generated game is entered into a real `tablesvc run`
process while it is SIGKILLed at random points (commands in flight) and the broker is stopped and started;
at the end the journal holds the game exactly (each event once, in order), a persistent subscriber has
received every journalled event, any duplicate identical to the first (consumers dedupe by seq), and the
final ranking is the game's. Bounded: three seeds, a few faults each."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import time

import pytest

from hardware_sims.generator import generate_game
from tablesvc.engine.events import to_dict
from tablesvc.journal import Journal
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
