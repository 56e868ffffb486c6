"""The fault matrix, bounded in time.

(1) A generated game is entered into a real `tablesvc run` process while it is SIGKILLed at nine random points
(commands in flight) and the broker is stopped and started at three others: the journal holds the game exactly
(each event once, in order), a persistent subscriber has received every journalled event, any duplicate
identical to the first (consumers dedupe by seq), and the final ranking is the game's. One whole game among the
shortest the generator deals (731 events, 8 hands, riichi, calls, rons, tsumo and an exhaustive draw among
them): the game is that many commands answered one by one, and the one-by-one round trip, not the game's
length, is what the kills hit; more games or longer ones would add commands between kill points of the same
kind, where (2) adds another kind.
(2) A `tablesvc run` process reading devices on real ptys is SIGKILLed at six points while they play, at
least two with an event in flight (sent while the service was frozen): the devices repeat what
was not acknowledged, and after the restart each device event is in the journal once, in order, and on
`events` under one seq. An event journalled whose ACK the device never got is known after the restart too
(the journal keeps its device and seq): its repeat is acknowledged, not journalled twice.
(3) A game played on devices on real ptys through unplug storms while the wall clock jumps: results exact,
every event published under its seq.
(4) The same with a disk that fills up under device events: nothing acknowledged that was not journalled,
each failure on `errors`, and once there is room the repeat journalled once: the journal equals the game."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from hardware_sims.generator import generate_game
from hardware_sims.pytest_plugin import eventually, subscribe
from hardware_sims.table import DeviceOutputs, TableSimulator
from tablesvc.config import parse_config
from tablesvc.engine.events import DiceRolled, to_dict
from tablesvc.mqtt.link import IncomingMessage
from tablesvc.service import TableService
from tablesvc.storage.journal import Journal
from tests.test_service_mqtt import _RUN, BASE, Subscriber, config_text, send_command


class FeedSubscriber(Subscriber):
    """A consumer of the topics a fault-matrix test reads (by default ``status``, ``state``, ``cmd/reply``,
    ``events``, ``results``), each payload checked against its schema as :class:`Subscriber` does; the rest of
    the table's tree (the mjai stream, ``broadcast/hands``, the commands the test sends itself) is left to the
    tests of those topics: it is half of the messages a move makes, and none of it is asserted here. A
    message wakes :meth:`wait_message` at once."""

    TOPICS = ("status", "state", "cmd/reply", "events", "results")

    def __init__(self, port: int, client_id: str = "", *, topics: tuple[str, ...] = TOPICS,
                 persistent: bool = True) -> None:
        self.arrived = threading.Condition()
        super().__init__(port, client_id, persistent=persistent)
        topics = [(f"{BASE}/{leaf}", 1) for leaf in topics]
        self.client.on_connect = lambda c, _u, _f, _r, _p: c.subscribe(topics)  # again after a broker restart
        for topic, qos in topics:
            subscribe(self.client, topic, qos)
        gone = threading.Event()
        self.client.on_unsubscribe = lambda *_: gone.set()
        self.client.unsubscribe(f"{BASE}/#")
        assert gone.wait(10), "no UNSUBACK from the broker"

    def _message(self, client, userdata, msg) -> None:
        super()._message(client, userdata, msg)
        with self.arrived:
            self.arrived.notify_all()

    def wait_message(self, predicate, timeout: float, what: str) -> bool:
        """Wait until ``predicate()`` holds, asked again as each message arrives; fails the test saying ``what``
        if it does not within ``timeout`` seconds."""
        with self.arrived:
            if not self.arrived.wait_for(predicate, timeout):
                raise AssertionError(f"not within {timeout:g} s: {what}")
        return True


class Referee:
    """A referee's tool: sends the game event by event and, after the service comes back, goes on from the
    seq its retained state shows (a command whose reply was lost in a crash may or may not have been
    journalled: the state says which)."""

    def __init__(self, sub: FeedSubscriber, events: list[dict]) -> None:
        self.sub = sub
        self.events = events
        self.sent = 0
        self._seen = 0  # messages of sub already scanned for replies
        self._replied: set[str] = set()

    def replied(self, transaction: str, timeout: float = 20.0) -> bool:
        """True once the reply to ``transaction`` has come; fails the test if it does not within ``timeout``."""
        def seen() -> bool:
            with self.sub.lock:
                new, self._seen = self.sub.messages[self._seen:], len(self.sub.messages)
            self._replied.update(p.get("transaction") for t, p, _ in new if t.endswith("/cmd/reply") and p)
            return transaction in self._replied

        return self.sub.wait_message(seen, timeout, f"the reply to {transaction}")

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
        assert self.sub.wait_for(self.online, 30)  # the resync sends the retained state before online
        self.sent = self.state_seq()


def _kill_and_restart(proc: subprocess.Popen, start, sub: Subscriber, referee: Referee) -> subprocess.Popen:
    """SIGKILL the service, see its Last Will say offline, start it again and let the referee go on after what
    the journal holds; returns the new process."""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    assert sub.wait_for(lambda: not referee.online(), 30)  # the Last Will says offline
    proc = start()
    referee.resume()
    return proc


# a whole game among the shortest of seeds 40 to 139 (731 events, 8 hands; a game averages 1,200) with riichi,
# calls, rons, tsumo and an exhaustive draw among them
SIGKILL_GAME = 65
KILLS, OUTAGES = 9, 3


def test_sigkills_and_broker_restarts_keep_the_game_exact(mosquitto, tmp_path):
    rng = random.Random(0)
    record = generate_game(SIGKILL_GAME)
    events = [to_dict(e) for e in record.events]
    path = tmp_path / "table.toml"
    data = tmp_path / "data"
    # journal_sync "normal": an entry survives a SIGKILL of the service once appended (SQLite's WAL, in the page
    # cache), which is every fault here; "full" adds an fsync per entry against a power cut, which none of them
    # is, and the game's hundreds of one-by-one round trips would wait on the disk for it
    path.write_text(config_text(mosquitto.url, data).replace("[mqtt]", 'journal_sync = "normal"\n[mqtt]'))
    log = open(tmp_path / "service.log", "ab")  # noqa: SIM115 - the processes' log, closed below

    def start() -> subprocess.Popen:
        return subprocess.Popen([*_RUN, str(path)], stdout=log, stderr=log)

    sub = FeedSubscriber(mosquitto.port, "fault-matrix")
    # a referee tool sending command after command sets TCP_NODELAY (docs/mqtt.md), on every reconnection
    sub.client.on_socket_open = lambda _c, _u, sock: sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sub.client.socket().setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    referee = Referee(sub, events)
    points = rng.sample(range(20, len(events) - 20), KILLS + OUTAGES)  # each fault at a point of its own
    outages = set(points[KILLS:])
    proc = start()
    try:
        referee.resume()
        for point in sorted(points):
            referee.run(point)
            if point in outages:  # the broker goes away and comes back; the service reconnects on its own
                mosquitto.stop()
                time.sleep(rng.uniform(0.5, 2.0))  # the outage, as long as the fault drawn says
                mosquitto.start()
                assert sub.wait_for(lambda: sub.client.is_connected(), 30)
                assert sub.wait_for(referee.online, 30)
                continue
            referee.fire_and_forget(rng.randrange(1, 4))
            time.sleep(rng.uniform(0.0, 0.03))  # the crash lands somewhere among the commands in flight
            proc = _kill_and_restart(proc, start, sub, referee)
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
    # firmware that keeps repeating while unplugged, five times a second
    table = pty_device("table", "TBL1", resend_interval=0.2, max_resends=400)
    panel = pty_device("panel", "PNL1", resend_interval=0.2, max_resends=400)
    config = parse_config(config_text(mosquitto.url, tmp_path / "data")
                          + f'[[serial]]\nname = "table"\nurl = "{table.link_path}"\nkind = "table"\nids = ["TBL1"]\n'
                          + f'[[serial]]\nname = "panel"\nurl = "{panel.link_path}"\nkind = "panel"\nids = ["PNL1"]\n')
    clock = JumpingClock(rng)
    service = TableService(config, wall_clock=clock)
    service.start()
    sub = FeedSubscriber(mosquitto.port, topics=("events",), persistent=False)
    done = threading.Event()
    unplugs = 0

    def storms() -> None:
        nonlocal unplugs
        while not done.wait(rng.uniform(0.1, 0.6)):
            device = rng.choice([table, panel])
            for _ in range(rng.randint(1, 4)):
                device.unplug()
                unplugs += 1
                time.sleep(rng.uniform(0.01, 0.2))  # unplugged for as long as the fault drawn says
                device.replug()

    try:
        assert service.link.wait_ready(15)
        record = game_record(seed=65)  # a short whole game (731 events, 8 hands): calls, rons and tsumo

        def start(_event) -> None:  # the referee's start_game, queued before the device events that follow it
            command = {"command": "start_game", "players": list(record.players), "transaction": "go"}
            service.inbox.put(("cmd", IncomingMessage("cmd", json.dumps(command).encode())))

        outputs = DeviceOutputs(table, panel, service.observe, ack_timeout=60)
        storm = threading.Thread(target=storms, daemon=True)
        storm.start()
        TableSimulator(record, outputs, speed=100, start_game=start).run()  # about 60 moves a second
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


# ---------------------------------------------------------------- SIGKILL while devices play


def _device_steps(count: int) -> list[tuple[str, tuple]]:
    """Device events the engine takes for ever without a camera: dice, a hand started, and the seat panel's
    undo taking them back; the dice differ from roll to roll, so each journal entry names its step."""
    cycle = [("dice",), ("hand",), ("undo", 0), ("undo", 1), ("dice",), ("undo", 2)]
    steps: list[tuple[str, tuple]] = []
    for i in range(count):
        kind, *args = cycle[i % len(cycle)]
        steps.append((kind, (1 + i % 6, 1 + i // 6 % 6) if kind == "dice" else tuple(args)))
    return steps


def _journalled(kind: str, args: tuple) -> tuple[str, str, dict]:
    """(source, kind, body) of the journal entry a device step makes."""
    if kind == "dice":
        return "TBL1", "dice", {"type": "dice", "dice": list(args)}
    if kind == "hand":
        return "TBL1", "hand_start", {"type": "hand_start", "hands": None}
    return "PNL1", "undo", {"count": 1}


def test_sigkills_while_devices_play_journal_each_device_event_once(mosquitto, pty_device, tmp_path):
    rng = random.Random(100)
    # firmware that keeps repeating an unacknowledged event while the service is down
    table = pty_device("table", "TBL1", heartbeat_interval=0.2, resend_interval=0.2, max_resends=1000)
    panel = pty_device("panel", "PNL1", heartbeat_interval=0.2, resend_interval=0.2, max_resends=1000)
    path = tmp_path / "table.toml"
    data = tmp_path / "data"
    path.write_text(config_text(mosquitto.url, data)
                    + f'[[serial]]\nname = "table"\nurl = "{table.link_path}"\nkind = "table"\nids = ["TBL1"]\n'
                    + f'[[serial]]\nname = "panel"\nurl = "{panel.link_path}"\nkind = "panel"\nids = ["PNL1"]\n')
    log = open(tmp_path / "service.log", "ab")  # noqa: SIM115 - the processes' log, closed below
    steps = _device_steps(60)
    # at each kill point the step's event is either in flight (sent while the service is frozen: neither
    # journalled nor acknowledged when it dies, so the device repeats it to the next one) or acknowledged
    modes = ["in flight", "in flight", *(rng.choice(["in flight", "between events"]) for _ in range(4))]
    rng.shuffle(modes)
    kills = dict(zip(sorted(rng.sample(range(2, len(steps) - 2), 6)), modes, strict=True))

    def start() -> subprocess.Popen:
        return subprocess.Popen([*_RUN, str(path)], stdout=log, stderr=log)

    sub = FeedSubscriber(mosquitto.port, "fault-matrix-devices")
    referee = Referee(sub, [])

    def send(kind: str, args: tuple) -> tuple[object, int]:
        if kind == "dice":
            return table, table.roll_dice(*args)
        if kind == "hand":
            return table, table.hand_started()
        return panel, panel.press(args[0], "undo")

    proc = start()
    try:
        referee.resume()
        send_command(sub, {"command": "start_game", "transaction": "go"})
        assert referee.replied("go")
        for i, (kind, args) in enumerate(steps):
            how = kills.get(i)
            if how == "in flight":
                os.kill(proc.pid, signal.SIGSTOP)  # the event goes out while the service cannot read it
                assert _stopped(proc.pid), "the service did not stop"
            device, seq = send(kind, args)
            if how is None:
                assert device.wait_acked(seq, 30), f"step {i} not acknowledged"
                continue
            if how == "between events":
                assert device.wait_acked(seq, 30), f"step {i} not acknowledged"
            time.sleep(rng.uniform(0.0, 0.05))  # the kill lands at a drawn moment after the event
            assert (seq in device.acked) == (how == "between events")
            proc = _kill_and_restart(proc, start, sub, referee)
            assert device.wait_acked(seq, 30), f"step {i}, {how}: not acknowledged after the restart"
        assert sub.wait_for(lambda: referee.state_seq() == len(steps) + 1, 30)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
    assert table.given_up == set() and panel.given_up == set()
    with Journal(data / "t1.sqlite3") as journal:
        entries = list(journal.entries())
        assert journal.unpublished() == []
    assert [(e.source, e.kind, e.body) for e in entries[1:]] == [_journalled(k, a) for k, a in steps]
    journalled = {e.seq: e for e in entries}
    assert sub.wait_for(lambda: {e["seq"] for e in sub.of("events")} >= set(journalled), 30)
    firsts: dict[int, dict] = {}
    for e in sub.of("events"):
        assert firsts.setdefault(e["seq"], e) == e  # a duplicate is the same event under the same seq
    sub.close()


def _stopped(pid: int, timeout: float = 10.0) -> bool:
    """Wait until every thread of ``pid`` has stopped. ``kill`` returns once SIGSTOP is pending, and Linux wakes
    one thread to take it, which then stops the others: on a busy machine the serial reader can still read
    and acknowledge an event before that thread gets the CPU (seen under four test workers on two cores)."""
    def stopped() -> bool:
        states = []
        for stat in (Path("/proc") / str(pid) / "task").glob("*/stat"):
            try:
                states.append(stat.read_text().rsplit(")", 1)[1].split()[0])
            except (OSError, IndexError):
                continue  # a thread that ended meanwhile
        return bool(states) and all(s in "tT" for s in states)

    return bool(eventually(stopped, timeout, what=f"every thread of {pid} stopped", interval=0.002))


def test_a_device_event_journalled_but_not_acknowledged_before_a_restart_is_journalled_once(mosquitto, pty_device,
                                                                                           tmp_path):
    """The narrow window a SIGKILL can hit: the event is on disk, its ACK never reached the device (the service
    died, or the ACK was lost on the wire); the device repeats it to the next service, which must know it."""
    table = pty_device("table", "TBL1", heartbeat_interval=0.2, resend_interval=3.0, max_resends=20)
    config = parse_config(config_text(mosquitto.url, tmp_path / "data")
                          + f'[[serial]]\nname = "table"\nurl = "{table.link_path}"\nkind = "table"\nids = ["TBL1"]\n')
    first = TableService(config)
    first.start()
    try:
        assert first.link.wait_ready(15)
        first.inbox.put(("cmd", IncomingMessage("cmd", b'{"command": "start_game", "transaction": "go"}')))
        assert first.wait_idle(10)
        table.drop_acks(1)  # its ACK is lost
        seq = table.roll_dice(3, 4)
        # journalled; the device repeats it only 3 s later
        eventually(lambda: first.journal.last_seq >= 2, 10, what="the dice journalled", interval=0.005)
    finally:
        first.stop()
    assert seq not in table.acked
    second = TableService(config)
    second.start()
    try:
        assert table.wait_acked(seq, 15)
        assert second.wait_idle(10)
        dice = [e for e in second.journal.entries() if e.kind == "dice"]
    finally:
        second.stop()
    assert len(dice) == 1, [e.body for e in dice]


# ---------------------------------------------------------------- a disk that fills up during play


def _first_hands(record, hands: int):
    """The record cut after its first ``hands`` hands (their results kept, no final)."""
    from dataclasses import replace

    kept = record.hands[:hands]
    return replace(record, events=record.events[:kept[-1].end_event + 1], hands=kept, final_scores=None)


def test_a_disk_that_fills_up_during_play_keeps_the_game_exact(mosquitto, pty_device, game_record, tmp_path,
                                                                mocker):
    """A game on devices on real ptys while the disk fills up under some of their events (the journal's inserts
    fail as SQLite reports it, injected at that boundary): such an event is not acknowledged, changes
    nothing and is reported on `errors`; once there is room the device's repeat is journalled once. The
    journal equals the game; nothing acknowledged was left out of it."""
    from tests.test_journal_trust import _FullDisk

    table = pty_device("table", "TBL1", resend_interval=0.2, max_resends=400)
    panel = pty_device("panel", "PNL1", resend_interval=0.2, max_resends=400)
    config = parse_config(config_text(mosquitto.url, tmp_path / "data")
                          + f'[[serial]]\nname = "table"\nurl = "{table.link_path}"\nkind = "table"\nids = ["TBL1"]\n'
                          + f'[[serial]]\nname = "panel"\nurl = "{panel.link_path}"\nkind = "panel"\nids = ["PNL1"]\n')
    service = TableService(config)
    disk = _FullDisk(service.journal._db)
    disk.full = False
    mocker.patch.object(service.journal, "_db", disk)
    service.start()
    sub = FeedSubscriber(mosquitto.port, topics=("errors", "events"), persistent=False)

    def journal_errors() -> list[dict]:
        return [e for e in sub.of("errors") if e["detail"] == {"reason": "journal"}]

    class FillingDisk(DeviceOutputs):
        """The table's dice and hand starts, always journalled, meet a full disk now and then."""

        fills = calls = 0

        def _filling(self, send) -> None:
            self.calls += 1
            if self.calls % 2 != 1:  # the 1st, 3rd, 5th...
                self._wait(self.table, send())
                return
            assert service.wait_idle(10)  # what came before (the camera's discards, a command) is journalled
            before, last, resends = len(journal_errors()), service.journal.last_seq, self.table.resends
            disk.full = True
            seq = send()
            try:
                assert sub.wait_for(lambda: len(journal_errors()) > before, 10)
                assert self.table.wait_for(lambda: self.table.resends > resends, 10)  # no ACK came: it repeats
                assert service.wait_idle(10)
                assert seq not in self.table.acked and service.journal.last_seq == last  # nothing changed
            finally:
                disk.full = False  # room again: the next repeat is journalled and acknowledged
            self.fills += 1
            self._wait(self.table, seq)

        def dice(self, d1: int, d2: int) -> None:
            self._filling(lambda: self.table.roll_dice(d1, d2))

        def hand_start(self) -> None:
            self._filling(self.table.hand_started)

    try:
        assert service.link.wait_ready(15)
        record = _first_hands(game_record(seed=23), 3)

        def start(_event) -> None:
            command = {"command": "start_game", "players": list(record.players), "transaction": "go"}
            service.inbox.put(("cmd", IncomingMessage("cmd", json.dumps(command).encode())))

        outputs = FillingDisk(table, panel, service.observe, ack_timeout=30)
        TableSimulator(record, outputs, start_game=start).run()
        assert service.wait_idle(30)
        assert outputs.unacknowledged == 0 and outputs.fills >= 3
        errors = journal_errors()
        assert len(errors) >= outputs.fills and all(e["source"] == "TBL1" for e in errors)
        assert all("database or disk is full" in e["error"] and "not acknowledged" in e["error"] for e in errors)
        # the journal is the game: every hand's result, each dice roll and hand start once
        state = service.table.state
        assert [r.deltas for r in state.results] == [h.deltas for h in record.hands]
        entries = list(service.journal.entries())
        assert [e.body["dice"] for e in entries if e.kind == "dice"] == [
            list(e.dice) for e in record.events if isinstance(e, DiceRolled)]
        assert sum(e.kind == "hand_start" for e in entries) == len(record.hands)
        last = service.journal.last_seq
        assert sub.wait_for(lambda: {e["seq"] for e in sub.of("events")} == set(range(1, last + 1)), 30)
        by_seq: dict[int, dict] = {}
        for e in sub.of("events"):
            assert by_seq.setdefault(e["seq"], e) == e
    finally:
        sub.close()
        service.stop()
