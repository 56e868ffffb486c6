"""The journal is checked at start and never silently replaced; a device event it cannot take is not acknowledged.

Against a real Mosquitto and, for the disk-full case, a simulated table on a
real pseudo-terminal; the full disk is injected at the boundary (SQLite
raising ``database or disk is full``).
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys

import pytest

from tablesvc.config import parse_config
from tablesvc.engine.events import DiceRolled
from tablesvc.service import JournalMissing, TableService
from tablesvc.storage.journal import Journal, JournalDamaged, JournalForeign
from tablesvc.storage.table import Table
from tests.test_service_mqtt import Subscriber, config_text, send_command

_RUN = [sys.executable, "-m", "tablesvc", "run", "--config"]


def _played(mosquitto, tmp_path, commands: int = 3) -> tuple[Subscriber, int]:
    """A table that played a little and stopped cleanly: its journal on disk, its state retained."""
    service = TableService(parse_config(config_text(mosquitto.url, tmp_path / "data")))
    service.start()
    sub = Subscriber(mosquitto.port)
    try:
        assert service.link.wait_ready(15)
        send_command(sub, {"command": "start_game", "transaction": "go"})
        for n in range(commands - 1):
            send_command(sub, {"command": "set_scores", "scores": [30000 + 100 * n, 30000, 30000, 30000 - 100 * n],
                               "transaction": n})
        assert sub.wait_for(lambda: len(sub.of("cmd/reply")) == commands)
        assert sub.wait_for(lambda: sub.of("state") and sub.of("state")[-1]["seq"] == commands)
    finally:
        service.stop()
    return sub, commands


def _retained_seq(mosquitto) -> int:
    later = Subscriber(mosquitto.port)
    try:
        assert later.wait_for(lambda: later.of("state"), 5)
        return later.of("state")[-1]["seq"]
    finally:
        later.close()


def _run(path, *extra, timeout=60) -> subprocess.CompletedProcess:
    return subprocess.run([*_RUN, str(path), *extra], capture_output=True, text=True, timeout=timeout)


def _run_until_online(path, sub, *extra) -> None:
    proc = subprocess.Popen([*_RUN, str(path), *extra], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert sub.wait_for(lambda: sub.of("status") and sub.of("status")[-1]["status"] == "online", 30), (
            proc.poll(), proc.stderr.read() if proc.poll() is not None else "")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)


@pytest.mark.parametrize("how", ["truncated", "deleted"])
def test_a_lost_journal_does_not_overwrite_the_game_the_broker_still_shows(mosquitto, tmp_path, how):
    sub, seq = _played(mosquitto, tmp_path)
    journal = tmp_path / "data" / "t1.sqlite3"
    assert not journal.with_name("t1.sqlite3-wal").exists()  # a clean stop leaves one file
    if how == "truncated":
        journal.write_bytes(b"")
    else:
        journal.unlink()
    service = TableService(parse_config(config_text(mosquitto.url, tmp_path / "data")))
    try:
        with pytest.raises(JournalMissing, match=rf"still shows a game of table club/t1 at seq {seq}.*--new-game"):
            service.start()
    finally:
        service.stop()
    assert _retained_seq(mosquitto) == seq  # nothing was published over it
    path = tmp_path / "table.toml"
    path.write_text(config_text(mosquitto.url, tmp_path / "data"))
    refused = _run(path)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert f"at seq {seq}" in refused.stderr and "--new-game" in refused.stderr
    # the operator's word: a new game, and the broker's state follows the new (empty) journal
    sub.messages.clear()
    _run_until_online(path, sub, "--new-game")
    assert _retained_seq(mosquitto) == 0
    sub.close()


def test_a_damaged_journal_is_refused_by_name_and_new_game_keeps_it_aside(mosquitto, tmp_path):
    sub, seq = _played(mosquitto, tmp_path, commands=40)
    journal = tmp_path / "data" / "t1.sqlite3"
    size = journal.stat().st_size
    page = 4096
    with journal.open("r+b") as f:  # random bytes over the last page
        f.seek(size - page)
        f.write(random.Random(7).randbytes(page))
    path = tmp_path / "table.toml"
    path.write_text(config_text(mosquitto.url, tmp_path / "data"))
    refused = _run(path)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr and "DatabaseError" not in refused.stderr
    assert f"the journal {journal} is damaged" in refused.stderr and "--new-game" in refused.stderr
    assert journal.stat().st_size == size  # left untouched
    assert _retained_seq(mosquitto) == seq
    sub.messages.clear()
    _run_until_online(path, sub, "--new-game")
    (aside,) = journal.parent.glob("t1.damaged-*.sqlite3")
    assert aside.stat().st_size == size  # kept, as it was
    assert _retained_seq(mosquitto) == 0
    sub.close()


@pytest.mark.parametrize("seed", range(4))
def test_random_bytes_anywhere_in_the_last_page_are_found(tmp_path, seed):
    """The journal itself, without a broker: damage is JournalDamaged, never a raw sqlite3 error."""
    from tablesvc.engine.events import SetScores, to_dict

    with Journal(tmp_path / "t1.sqlite3") as journal:
        for n in range(60):
            journal.append("set_scores", to_dict(SetScores(scores=(n * 100, 0, 0, 0))), source="referee", ts=1.0,
                           command=(f'"{n}"', "d"))
    data = bytearray((tmp_path / "t1.sqlite3").read_bytes())
    rng = random.Random(seed)
    start = len(data) - 4096 + rng.randrange(0, 64)
    data[start:] = rng.randbytes(len(data) - start)
    (tmp_path / "t1.sqlite3").write_bytes(bytes(data))
    with pytest.raises(JournalDamaged, match="is damaged"):
        Table(Journal(tmp_path / "t1.sqlite3"))


def test_a_file_that_is_no_database_and_a_journal_of_another_table(tmp_path):
    (tmp_path / "t1.sqlite3").write_bytes(b"this is not SQLite\n" * 300)
    with pytest.raises(JournalDamaged, match=r"is damaged \(file is not a database\)"):
        Journal(tmp_path / "t1.sqlite3")
    with Journal.for_table(tmp_path / "a", "t1", site="club") as journal:
        assert journal.fresh
    with Journal.for_table(tmp_path / "a", "t1", site="club") as journal:
        assert not journal.fresh
    with pytest.raises(JournalForeign, match=r"belongs to table club/t1, not other-club/t1"):
        Journal.for_table(tmp_path / "a", "t1", site="other-club")


@pytest.mark.parametrize("owner", [("other-club", "t1"), ("club", "t2")])
def test_run_over_a_journal_of_another_table_exits_saying_whose_it_is(tmp_path, owner):
    """End to end: `tablesvc run` over a journal another site's table, or another table of the site, wrote
    (a wrong data_dir, a copied file) exits 1 with the JournalForeign message and no traceback, before it
    connects anywhere, and leaves the file as it was."""
    from tablesvc.engine.events import SetScores, to_dict

    journal_path = tmp_path / "data" / "t1.sqlite3"
    with Journal(journal_path, owner=owner) as journal:
        journal.append("set_scores", to_dict(SetScores(scores=(30000, 20000, 25000, 25000))), source="referee", ts=1.0)
    before = journal_path.read_bytes()
    config = tmp_path / "table.toml"
    config.write_text(config_text("mqtt://127.0.0.1:1", tmp_path / "data"))  # nothing listens: never asked
    done = _run(config, timeout=60)
    assert done.returncode == 1, done.stderr
    assert (f"tablesvc run: the journal {journal_path} belongs to table {owner[0]}/{owner[1]}, not club/t1: "
            "check [table] site, id and data_dir in the configuration") in done.stderr
    assert "Traceback" not in done.stderr + done.stdout and "cannot connect" not in done.stderr
    assert journal_path.read_bytes() == before
    assert not journal_path.with_name("t1.sqlite3-wal").exists()


def test_an_empty_journal_and_no_broker_is_refused_in_time(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nobody listens there
    service = TableService(parse_config(config_text(f"mqtt://127.0.0.1:{port}", tmp_path / "data")))
    service.check_timeout = 1.0
    try:
        with pytest.raises(JournalMissing, match="could not be asked whether it still shows a game"):
            service.start()
    finally:
        service.stop()


def _table_link(device) -> str:
    """The ``[[serial]]`` block of the automatic table on ``device`` (a ``pty_device``)."""
    return f'[[serial]]\nname = "table"\nurl = "{device.link_path}"\nkind = "table"\nids = ["{device.device_id}"]\n'


class _FullDisk:
    """The journal's SQLite connection with a full disk: every new entry fails as SQLite reports it."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.full = True

    def execute(self, sql: str, *args):
        if self.full and sql.startswith("INSERT INTO entries"):
            raise sqlite3.OperationalError("database or disk is full")
        return self.db.execute(sql, *args)

    def __getattr__(self, name: str):
        return getattr(self.db, name)


def test_a_device_event_the_journal_cannot_take_is_not_acknowledged(mosquitto, pty_device, tmp_path, mocker):
    device = pty_device("table", "T1", heartbeat_interval=0.2, resend_interval=0.5, max_resends=40)
    config = parse_config(config_text(mosquitto.url, tmp_path / "data") + _table_link(device))
    service = TableService(config)
    service.start()
    sub = Subscriber(mosquitto.port)
    try:
        assert service.link.wait_ready(15)
        send_command(sub, {"command": "start_game", "transaction": "go"})
        assert sub.wait_for(lambda: sub.of("cmd/reply"))
        disk = _FullDisk(service.journal._db)
        mocker.patch.object(service.journal, "_db", disk)
        seq = device.roll_dice(3, 5)
        assert sub.wait_for(lambda: sub.of("errors"), 10)
        error = sub.of("errors")[0]
        assert error["source"] == "T1" and error["detail"] == {"reason": "journal"}
        assert "database or disk is full" in error["error"] and "not acknowledged" in error["error"]
        assert device.wait_for(lambda: device.resends >= 2, 10)  # it repeats: no ACK came
        assert seq not in device.acked and seq in device.pending()
        assert service.journal.last_seq == 1 and not any(isinstance(e, DiceRolled) for e in service.table.events)
        disk.full = False  # space again: the next repeat is journalled, then acknowledged
        assert device.wait_acked(seq, 10)
        assert service.wait_idle(10)
        dice = [e for e in service.journal.entries() if e.kind == "dice"]
        assert len(dice) == 1 and dice[0].body["dice"] == [3, 5]  # once, however often it was repeated
        # a referee command in the same state is answered with the failure, and changes nothing
        disk.full = True
        send_command(sub, {"command": "end_game", "transaction": "end"})
        assert sub.wait_for(lambda: any(r["transaction"] == "end" for r in sub.of("cmd/reply")), 10)
        reply = next(r for r in sub.of("cmd/reply") if r["transaction"] == "end")
        assert reply["status"] == "error" and "database or disk is full" in reply["error"]
        disk.full = False
        assert service.journal.last_seq == 2
    finally:
        sub.close()
        service.stop()


@pytest.fixture
def tiny_disk(tmp_path):
    """A 1 MiB tmpfs: a real disk that fills up (root and mount rights needed, else skipped)."""
    where = tmp_path / "disk"
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    yield where
    subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_really_full_disk_is_not_acknowledged_either(mosquitto, pty_device, tiny_disk):
    device = pty_device("table", "T1", heartbeat_interval=0.2, resend_interval=0.5, max_resends=40)
    config = parse_config(config_text(mosquitto.url, tiny_disk / "data") + _table_link(device))
    service = TableService(config)
    service.start()
    sub = Subscriber(mosquitto.port)
    filler = tiny_disk / "filler"
    try:
        assert service.link.wait_ready(15)
        send_command(sub, {"command": "start_game", "transaction": "go"})
        assert sub.wait_for(lambda: sub.of("cmd/reply"))
        assert service.wait_idle(10)
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)  # fill the disk to the last byte
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        seq = device.roll_dice(2, 6)
        assert sub.wait_for(lambda: any(e["detail"] == {"reason": "journal"} for e in sub.of("errors")), 10)
        assert "full" in next(e for e in sub.of("errors") if e["detail"] == {"reason": "journal"})["error"]
        assert device.wait_for(lambda: device.resends >= 2, 10) and seq not in device.acked
        filler.unlink()  # room again
        assert device.wait_acked(seq, 15)
        assert service.wait_idle(10)
        assert [e.body["dice"] for e in service.journal.entries() if e.kind == "dice"] == [[2, 6]]
    finally:
        sub.close()
        service.stop()


def test_run_with_an_empty_journal_waits_for_the_broker_to_answer(tmp_path, caplog):
    """A broker that cannot be reached and an empty journal together: a new table whose broker is not up yet
    (a club box that boots first) keeps asking, with backoff, whether the broker holds a game of it, and starts
    once it answers; without a stop event to wait on (anything but 'tablesvc run') it gives up at once, saying
    why."""
    import threading
    import time

    from hardware_sims.pytest_plugin import Mosquitto
    from tablesvc.service.startup import BrokerNotAsked

    broker = Mosquitto(tmp_path)  # its port is chosen, it is not started yet
    config = parse_config(config_text(broker.url, tmp_path / "data"))
    impatient = TableService(config)
    impatient.check_timeout = 0.5
    with pytest.raises(BrokerNotAsked, match="could not be asked"):
        impatient.start()
    impatient.stop()

    service = TableService(config)
    service.check_timeout = 0.5
    threading.Timer(2.5, broker.start).start()
    stop = threading.Event()
    began = time.monotonic()
    try:
        service.start(stop=stop)  # returns only once the broker has answered
        assert time.monotonic() - began >= 2.5
        assert service.link.wait_connected(10)
        assert "asking the broker again" in caplog.text
    finally:
        service.stop()
        broker.stop()
