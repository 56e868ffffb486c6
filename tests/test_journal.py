"""The journal is the truth: durable, refolded after a crash, corrected by entries."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from tablesvc.engine.engine import Engine, Rejected
from tablesvc.engine.events import Discard, DoraRevealed, GameStart, HandStart, to_dict
from tablesvc.engine.state import Phase
from tablesvc.replay import load_record
from tablesvc.storage.journal import SCHEMA_VERSION, Journal, JournalError
from tablesvc.storage.table import Table
from tablesvc.tiles import parse_tile
from tests.conftest import MJLOG_DIR

GAME = MJLOG_DIR / "2020051716gm-00a9-0000-7f8226dd.mjlog"


def camera_game(journal: Journal) -> Table:
    """A table whose hands are not seen (a camera over the table): draws are inferred."""
    table = Table(journal)
    for event in (GameStart(players=("A", "B", "C", "D")), HandStart(), DoraRevealed(tile=parse_tile("3p"))):
        table.submit(event, source="test", ts=0.0)
    return table


def test_journal_is_wal_and_reopens_with_the_same_state(tmp_path):
    journal = Journal.for_table(tmp_path, "t1")
    assert journal._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    table = camera_game(journal)
    table.submit(Discard(seat=0, tile=parse_tile("1z")), source="cam", ts=1.5)
    table.submit(Discard(seat=1, tile=parse_tile("9m")), source="cam", ts=2.5)
    state = table.state
    journal.close()
    again = Table(Journal.for_table(tmp_path, "t1"))
    assert again.state == state
    assert again.state.hand.wall == 70 - 2
    assert [e.source for e in again.journal.entries()] == ["test"] * 3 + ["cam"] * 2


def test_rejected_event_is_not_journalled_and_changes_nothing(tmp_path):
    table = camera_game(Journal(tmp_path / "t.sqlite3"))
    before = table.state.clone()
    with pytest.raises(Rejected, match="cannot discard now"):
        table.submit(Discard(seat=2, tile=parse_tile("1m")), source="cam", ts=1.0)
    assert table.state == before
    assert table.journal.last_seq == 3


def test_undo_takes_back_events_and_is_itself_journalled(tmp_path):
    table = camera_game(Journal(tmp_path / "t.sqlite3"))
    table.submit(Discard(seat=0, tile=parse_tile("1z")), source="cam", ts=1.0)
    table.submit(Discard(seat=1, tile=parse_tile("2z")), source="cam", ts=2.0)
    table.undo(1, source="referee", ts=3.0)
    assert [p.tile.mjai for p in table.state.hand.seats[0].pond] == ["E"]
    assert table.state.hand.seats[1].pond == []
    assert [e.kind for e in table.journal.entries()][-1] == "undo"
    reopened = Table(table.journal)
    assert reopened.state == table.state
    with pytest.raises(Rejected, match="can be undone"):
        table.undo(10, source="referee", ts=4.0)


def test_amend_replaces_a_discard_and_refolds(tmp_path):
    table = camera_game(Journal(tmp_path / "t.sqlite3"))
    seq = table.submit(Discard(seat=0, tile=parse_tile("5p")), source="cam", ts=1.0).seq
    table.submit(Discard(seat=1, tile=parse_tile("2z")), source="cam", ts=2.0)
    table.amend(seq, Discard(seat=0, tile=parse_tile("6p")), source="referee", ts=3.0)
    assert [p.tile.mjai for p in table.state.hand.seats[0].pond] == ["6p"]
    assert Table(table.journal).state == table.state
    # a correction that makes the game impossible is refused and not journalled
    last = table.journal.last_seq
    with pytest.raises(Rejected, match="impossible"):
        table.amend(seq, Discard(seat=2, tile=parse_tile("6p")), source="referee", ts=4.0)
    assert table.journal.last_seq == last


def test_sync_policy(tmp_path):
    assert Journal(tmp_path / "a.sqlite3")._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert Journal(tmp_path / "b.sqlite3", sync="normal")._db.execute("PRAGMA synchronous").fetchone()[0] == 1
    with pytest.raises(JournalError, match="'full' or 'normal'"):
        Journal(tmp_path / "c.sqlite3", sync="off")


def test_a_journal_that_does_not_fold_names_the_entry(tmp_path):
    journal = Journal(tmp_path / "t.sqlite3")
    journal.append("start_game", {"type": "start_game"}, source="referee", ts=0.0)
    journal.append("discard", {"type": "discard", "seat": 2, "tile": "1m"}, source="cam", ts=1.0)
    journal.append("undo", {}, source="panel", ts=2.0)
    with pytest.raises(JournalError, match=r"journal entry 3 \(undo, from panel\) cannot be read"):
        Table(journal)
    bad = Journal(tmp_path / "u.sqlite3")
    bad.append("start_game", {"type": "start_game"}, source="referee", ts=0.0)
    bad.append("discard", {"type": "discard", "seat": 2, "tile": "1m"}, source="cam", ts=1.0)
    with pytest.raises(JournalError, match=r"does not fold into a game: journal entry 2 \(discard\) is impossible"):
        Table(bad)


def test_unusable_table_id_is_refused(tmp_path):
    with pytest.raises(JournalError, match="cannot name a file"):
        Journal.for_table(tmp_path, "../x")


def test_a_device_event_is_journalled_with_its_entry_all_or_nothing(tmp_path):
    path = tmp_path / "t.sqlite3"
    journal = Journal(path)
    journal.append("start_game", {"type": "start_game"}, source="referee", ts=100.0)
    with journal.from_device("T1", 7):
        journal.append("dice", {"type": "dice", "dice": [3, 4]}, source="T1", ts=101.0)
    with journal.from_device("P1", 7):  # another device's seq 7: a seat panel's undo
        journal.append("undo", {"count": 1}, source="P1", ts=102.0)
    journal.append("set_scores", {"type": "set_scores"}, source="referee", ts=103.0)  # after the block: no device
    known = [("T1", 7, 101.0), ("P1", 7, 102.0)]
    assert journal.device_events(90.0, 110.0) == known
    assert journal.device_events(101.5, 110.0) == known[1:]  # only those journalled within the bounds
    # the device event cannot be recorded (a fault inside SQLite): the entry is not written either
    probe = sqlite3.connect(path)
    probe.execute("CREATE TRIGGER full BEFORE INSERT ON device_events BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    probe.commit()
    with journal.from_device("T1", 8), pytest.raises(JournalError, match="disk full"):
        journal.append("hand_start", {"type": "hand_start"}, source="T1", ts=104.0)
    assert journal.last_seq == 4 and journal.device_events(90.0, 110.0) == known
    probe.execute("DROP TRIGGER full")
    probe.commit()
    probe.close()
    journal.close()
    with Journal(path) as again:  # what a restarted service reads
        assert again.device_events(90.0, 110.0) == known


# The schema of the journals tablesvc wrote before device events were recorded (schema 1), as it wrote them.
_SCHEMA_1 = """
PRAGMA journal_mode=WAL;
CREATE TABLE entries (seq INTEGER PRIMARY KEY, ts REAL NOT NULL, source TEXT NOT NULL, kind TEXT NOT NULL,
                      body TEXT NOT NULL, published INTEGER NOT NULL DEFAULT 0);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE commands (key TEXT PRIMARY KEY, digest TEXT NOT NULL, seq INTEGER, reply TEXT);
INSERT INTO meta VALUES ('schema', '1'), ('site', 'club'), ('table', 't1');
"""


def test_a_journal_of_schema_1_opens_replays_and_records_device_events_from_then_on(tmp_path):
    import json

    events = [GameStart(players=("A", "B", "C", "D")), HandStart(), DoraRevealed(tile=parse_tile("3p")),
              Discard(seat=0, tile=parse_tile("1z"))]
    old = sqlite3.connect(tmp_path / "t1.sqlite3")
    old.executescript(_SCHEMA_1)
    old.executemany("INSERT INTO entries (ts, source, kind, body, published) VALUES (?, ?, ?, ?, 1)",
                    [(float(i), "cam", e.type, json.dumps(to_dict(e))) for i, e in enumerate(events)])
    old.commit()
    old.close()
    with Journal.for_table(tmp_path, "t1", site="club") as journal:
        table = Table(journal)
        assert table.events == events and journal.unpublished() == []
        assert journal._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (str(SCHEMA_VERSION),)
        assert journal.device_events(0.0, 1e12) == []
        with journal.from_device("P1", 12):
            table.submit(Discard(seat=1, tile=parse_tile("9m")), source="P1", ts=10.0)
    with Journal.for_table(tmp_path, "t1", site="club") as journal:
        assert Table(journal).events == [*events, Discard(seat=1, tile=parse_tile("9m"))]
        assert journal.device_events(0.0, 1e12) == [("P1", 12, 10.0)]


def _wal_frames(probe: sqlite3.Connection) -> int:
    """Pages written to the WAL since it was emptied: every commit writes the pages it changed again."""
    return probe.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]


def test_a_batch_of_acknowledgements_is_one_transaction_all_or_nothing(tmp_path):
    path = tmp_path / "t.sqlite3"
    journal = Journal(path)
    for i in range(300):
        journal.append("dice", {"type": "dice", "dice": [1 + i % 6, 1]}, source="T1", ts=float(i))
    probe = sqlite3.connect(path)
    probe.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert _wal_frames(probe) == 0
    journal.mark_published(list(range(1, 201)))
    # one commit: each page that holds the 200 rows written once (a commit per row wrote 200 frames or more)
    assert _wal_frames(probe) <= 10
    assert [e.seq for e in journal.unpublished()] == list(range(201, 301))  # every one marked, none else
    # the disk fails in the middle of the next batch (a fault inside SQLite at row 250): nothing is marked,
    # so every one of them is sent again at the next connection; none is lost
    probe.execute("CREATE TRIGGER full BEFORE UPDATE OF published ON entries WHEN NEW.seq = 250 "
                  "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
    probe.commit()
    with pytest.raises(JournalError, match="disk is full"):
        journal.mark_published(list(range(201, 301)))
    assert [e.seq for e in journal.unpublished()] == list(range(201, 301))
    probe.execute("DROP TRIGGER full")
    probe.commit()
    journal.mark_published(list(range(201, 301)))
    journal.mark_unpublished([5, 250])  # the broker refused these after all: one transaction too
    journal.close()
    probe.close()
    with Journal(path) as again:
        assert [e.seq for e in again.unpublished()] == [5, 250]


_FEEDER = r"""
import sys, time
from tablesvc.storage.journal import Journal
from tablesvc.replay import load_record
from tablesvc.storage.table import Table
record = load_record(sys.argv[1])
table = Table(Journal(sys.argv[2]))
start = len(table.events)
for event in record.events[start:]:
    accepted = table.submit(event, source="feeder", ts=time.time())
    print(accepted.seq, flush=True)
    if len(sys.argv) > 3:
        time.sleep(float(sys.argv[3]))  # a table's pace, so that the kill lands mid-hand
"""


@pytest.mark.skipif(not GAME.exists(), reason="../shared/data/tenhou-mjlog not found beside the checkout")
def test_sigkill_mid_hand_loses_nothing_and_resumes(tmp_path):
    db = tmp_path / "table.sqlite3"
    feeder = [sys.executable, "-c", _FEEDER, str(GAME), str(db), "0.002"]
    proc = subprocess.Popen(feeder, stdout=subprocess.PIPE, text=True)
    acknowledged = 0
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while acknowledged < 150 and time.monotonic() < deadline:  # well inside the first hands
        line = proc.stdout.readline()
        if not line:
            break
        acknowledged = int(line)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert acknowledged >= 150

    record = load_record(GAME)
    table = Table(Journal(db))
    journalled = len(table.events)
    # everything acknowledged is there; at most the one being written when killed is extra
    assert acknowledged <= journalled <= acknowledged + 1
    assert table.events == record.events[:journalled]
    reference = Engine()
    for event in record.events[:journalled]:
        reference.apply(event)
    assert table.state == reference.state
    assert table.state.phase is Phase.PLAYING  # killed mid-hand

    # the restarted feeder resumes where the journal stands and the game ends exactly as recorded
    table.journal.close()
    subprocess.run([sys.executable, "-c", _FEEDER, str(GAME), str(db)], check=True, capture_output=True)
    final = Table(Journal(db))
    assert final.events == record.events
    assert final.state.final is not None and final.state.final.scores == record.final_scores
