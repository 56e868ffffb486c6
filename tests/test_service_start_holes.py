"""What a start trusts, and what it refuses by name: the whole journal is checked (seq 1..N, times, JSON,
checksums, events, the fold) and `--new-game` sets a damaged one aside; the table's lock holds even when its
file is deleted; the demo over a directory in use says so in one line; and a broker connection that fails says
why (a TLS or HTTP port, a broker that refuses the account's writes)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hardware_sims.pytest_plugin import eventually
from tablesvc.engine.events import Discard, DoraRevealed, GameStart, HandStart, to_dict
from tablesvc.service.startup import open_journal
from tablesvc.storage.journal import SCHEMA_VERSION, Journal, JournalDamaged, JournalForeign, checksum
from tablesvc.storage.table import Table
from tablesvc.tiles import parse_tile
from tests.test_deploy_acl import deployed_broker  # noqa: F401  (a fixture)
from tests.test_failures_speak import tls_broker  # noqa: F401  (a fixture)
from tests.test_service_mqtt import Subscriber, config_text, run_logged

CLI = [sys.executable, "-m", "tablesvc"]
EVENTS = [GameStart(players=("A", "B", "C", "D")), HandStart(), DoraRevealed(tile=parse_tile("3p")),
          Discard(seat=0, tile=parse_tile("1z"))]


def _journal(data: Path, events=EVENTS) -> Path:
    with Journal.for_table(data, "t1", site="club") as journal:
        for n, event in enumerate(events):
            journal.append(event.type, to_dict(event), source="cam", ts=1000.0 + n)
        return journal.path


def _tamper(path: Path, sql: str, *args) -> None:
    db = sqlite3.connect(path)
    db.execute(sql, args)
    db.commit()
    db.close()


def _config(data: Path):
    from tablesvc.config import parse_config

    return parse_config(config_text("mqtt://127.0.0.1:1", data)).table


@pytest.mark.parametrize(("sql", "args", "named"), [
    ("DELETE FROM entries WHERE seq = 2", (), "entry 2 missing: seq jumps from 1 to 3"),
    ("UPDATE entries SET seq = 9 WHERE seq = 4", (), "entries 4 to 8 missing: seq jumps from 3 to 9"),
    ("UPDATE entries SET ts = 'soon' WHERE seq = 3", (), "entry 3: its time 'soon' is not a number"),
    ("UPDATE entries SET body = '{\"type\": \"discard\"' WHERE seq = 4", (), "entry 4 (discard): its body is not"),
    ("UPDATE entries SET body = replace(body, '\"E\"', '\"S\"') WHERE seq = 4", (),
     "entry 4 (discard) does not match its checksum"),
    ("UPDATE entries SET sum = NULL WHERE seq = 1", (), "entry 1 (start_game) has no checksum"),
    ("UPDATE meta SET value = 'three' WHERE key = 'schema'", (), "its schema version is 'three', not a number"),
])
def test_a_damaged_journal_is_named_with_its_entry(tmp_path, sql, args, named):
    path = _journal(tmp_path)
    _tamper(path, sql, *args)
    with pytest.raises(JournalDamaged) as err:
        open_journal(_config(tmp_path))
    assert str(path) in str(err.value) and named in str(err.value), err.value
    assert "--new-game" in str(err.value)
    # the operator's way forward: --new-game keeps it aside and starts a fresh game
    journal, table = open_journal(_config(tmp_path), new_game=True)
    try:
        assert journal.last_seq == 0 and table.events == []
        kept = list(tmp_path.glob("t1.damaged-*.sqlite3"))
        assert len(kept) == 1
    finally:
        journal.close()


@pytest.mark.parametrize(("header", "named"), [
    (["UPDATE meta SET value = '9' WHERE key = 'checked_from'"],
     "its header (schema, checked entries, table) does not match its checksum"),
    (["UPDATE meta SET value = '2' WHERE key = 'schema'"],
     "its header says schema 2, but it holds checksummed entries"),
    (["UPDATE meta SET value = '3' WHERE key = 'schema'"], "its header says schema 3, older than its header checksum"),
    (["DELETE FROM meta WHERE key = 'schema'"], "its header says schema (none), but it holds checksummed entries"),
    (["DELETE FROM meta WHERE key = 'header'"], "its header (schema, checked entries, table) has no checksum"),
    (["UPDATE meta SET value = '3' WHERE key = 'schema'", "DELETE FROM meta WHERE key = 'header'",
      "UPDATE meta SET value = '9' WHERE key = 'checked_from'"],
     "its header says entries are checked from 9, but entry 1 (start_game) before it carries a checksum"),
])
def test_the_journal_header_cannot_switch_its_checks_off_and_a_refused_file_is_left_as_it_was(tmp_path, header,
                                                                                             named):
    """A referee's name slipped into an entry, then the header edited so that the entry would not be checked:
    refused by name, and the file (schema 2 included: no migration first) left byte for byte as it was."""
    path = _journal(tmp_path)
    _tamper(path, "UPDATE entries SET source = 'referee:Mallory' WHERE seq = 2")
    for sql in header:
        _tamper(path, sql)
    before = path.read_bytes()
    with pytest.raises(JournalDamaged) as err:
        open_journal(_config(tmp_path))
    assert str(path) in str(err.value) and named in str(err.value), err.value
    assert "left untouched" in str(err.value)
    assert path.read_bytes() == before
    assert not path.with_name("t1.sqlite3-wal").exists() and not path.with_name("t1.sqlite3-shm").exists()


def _schema_2(path: Path, *, owner=("club", "t1"), rows=EVENTS[:3]) -> None:
    old = sqlite3.connect(path)
    old.executescript("""
        PRAGMA journal_mode=WAL;
        CREATE TABLE entries (seq INTEGER PRIMARY KEY, ts REAL NOT NULL, source TEXT NOT NULL, kind TEXT NOT NULL,
                              body TEXT NOT NULL, published INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE commands (key TEXT PRIMARY KEY, digest TEXT NOT NULL, seq INTEGER, reply TEXT);
        CREATE TABLE device_events (entry INTEGER PRIMARY KEY, device TEXT NOT NULL, seq INTEGER NOT NULL);
    """)
    old.executemany("INSERT INTO meta VALUES (?, ?)", [("schema", "2"), ("site", owner[0]), ("table", owner[1])])
    old.executemany("INSERT INTO entries (ts, source, kind, body) VALUES (?, ?, ?, ?)",
                    [(float(i), "cam", e.type, json.dumps(to_dict(e))) for i, e in enumerate(rows)])
    old.commit()
    old.close()


@pytest.mark.parametrize("why", ["a gap", "another table"])
def test_an_older_journal_that_is_refused_is_not_migrated_first(tmp_path, why):
    path = tmp_path / "t1.sqlite3"
    _schema_2(path, owner=("club", "t9") if why == "another table" else ("club", "t1"))
    if why == "a gap":
        _tamper(path, "DELETE FROM entries WHERE seq = 2")
    before = path.read_bytes()
    with pytest.raises(JournalDamaged if why == "a gap" else JournalForeign):
        open_journal(_config(tmp_path))
    assert path.read_bytes() == before
    db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == ("2",)
    assert "sum" not in [r[1] for r in db.execute("PRAGMA table_info(entries)")]
    db.close()


def test_an_entry_that_is_no_event_or_an_impossible_game_is_named_and_set_aside(tmp_path):
    path = _journal(tmp_path)
    body = json.dumps({"type": "teleport", "seat": 1}, separators=(",", ":"))
    # written with a right checksum: only the engine can tell
    _tamper(path, "UPDATE entries SET kind = 'teleport', body = ?, sum = ? WHERE seq = 3", body,
            checksum(3, 1002.0, "cam", "teleport", body))
    with pytest.raises(JournalDamaged, match=rf"{path}.*journal entry 3 \(teleport, from cam\) cannot be read"):
        open_journal(_config(tmp_path))
    journal, _ = open_journal(_config(tmp_path), new_game=True)
    journal.close()
    assert len(list(tmp_path.glob("t1.damaged-*.sqlite3"))) == 1


def test_a_journal_of_schema_2_still_loads_and_checks_what_is_written_after(tmp_path):
    path = tmp_path / "t1.sqlite3"
    old = sqlite3.connect(path)
    old.executescript("""
        PRAGMA journal_mode=WAL;
        CREATE TABLE entries (seq INTEGER PRIMARY KEY, ts REAL NOT NULL, source TEXT NOT NULL, kind TEXT NOT NULL,
                              body TEXT NOT NULL, published INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE commands (key TEXT PRIMARY KEY, digest TEXT NOT NULL, seq INTEGER, reply TEXT);
        CREATE TABLE device_events (entry INTEGER PRIMARY KEY, device TEXT NOT NULL, seq INTEGER NOT NULL);
        INSERT INTO meta VALUES ('schema', '2'), ('site', 'club'), ('table', 't1');
    """)
    old.executemany("INSERT INTO entries (ts, source, kind, body) VALUES (?, ?, ?, ?)",
                    [(float(i), "cam", e.type, json.dumps(to_dict(e))) for i, e in enumerate(EVENTS[:3])])
    old.commit()
    old.close()
    journal, table = open_journal(_config(tmp_path))
    try:
        assert table.events == EVENTS[:3]
        table.submit(EVENTS[3], source="cam", ts=10.0)
        assert journal._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (str(SCHEMA_VERSION),)
    finally:
        journal.close()
    journal, table = open_journal(_config(tmp_path))  # opens again: the old entries carry no checksum
    journal.close()
    assert table.events == EVENTS
    _tamper(path, "UPDATE entries SET body = replace(body, '\"E\"', '\"S\"') WHERE seq = 4")
    with pytest.raises(JournalDamaged, match="entry 4 \\(discard\\) does not match its checksum"):
        open_journal(_config(tmp_path))


def test_run_over_a_journal_with_a_gap_refuses_by_name_and_new_game_goes_on(mosquitto, tmp_path):
    data = tmp_path / "data"
    path = _journal(data)
    _tamper(path, "DELETE FROM entries WHERE seq = 3")
    config = tmp_path / "table.toml"
    config.write_text(config_text(mosquitto.url, data))
    proc = subprocess.run([*CLI, "run", "--config", str(config)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert f"the journal {path} is damaged (entry 3 missing: seq jumps from 2 to 4)" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    sub = Subscriber(mosquitto.port)
    run = subprocess.Popen([*CLI, "run", "--config", str(config), "--new-game"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    try:
        assert sub.wait_for(lambda: sub.of("status") and sub.of("status")[-1]["status"] == "online", 30)
        assert sub.of("state")[-1]["seq"] == 0
        assert len(list(data.glob("t1.damaged-*.sqlite3"))) == 1
    finally:
        run.terminate()
        run.wait(15)
        sub.close()


def test_a_table_folded_from_a_checked_journal_is_the_game(tmp_path):
    """The check costs nothing a sound journal notices: the game folds as written."""
    _journal(tmp_path)
    with Journal.for_table(tmp_path, "t1", site="club") as journal:
        assert Table(journal).events == EVENTS


# ---------------------------------------------------------------- the lock


def test_a_deleted_lock_file_still_refuses_a_second_service(tmp_path):
    from tablesvc.service.lock import TableLock, TableLocked

    first = TableLock(tmp_path, "t1")
    first.acquire()
    try:
        first.path.unlink()  # a clean-up script, a careless hand
        with pytest.raises(TableLocked, match="another tablesvc already serves this table"):
            TableLock(tmp_path, "t1").acquire()
        other = TableLock(tmp_path, "t2")  # another table of the directory is not held
        other.acquire()
        other.release()
    finally:
        first.release()
    again = TableLock(tmp_path, "t1")  # released: the table is free again
    again.acquire()
    again.release()


def test_a_second_run_after_the_lock_file_was_deleted_refuses(mosquitto, tmp_path):
    config = tmp_path / "table.toml"
    config.write_text(config_text(mosquitto.url, tmp_path / "data"))
    sub = Subscriber(mosquitto.port)
    first = subprocess.Popen([*CLI, "run", "--config", str(config)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        assert sub.wait_for(lambda: sub.of("status") and sub.of("status")[-1]["status"] == "online", 30)
        (tmp_path / "data" / "t1.lock").unlink()
        second = subprocess.run([*CLI, "run", "--config", str(config)], capture_output=True, text=True, timeout=60)
        assert second.returncode == 1 and "another tablesvc already serves this table" in second.stderr
        assert first.poll() is None
        assert sub.of("status")[-1]["status"] == "online"
    finally:
        first.terminate()
        first.wait(15)
        sub.close()


def test_demo_over_a_data_dir_in_use_says_so_in_one_line(tmp_path):
    from tablesvc.service.lock import TableLock

    held = TableLock(tmp_path / "data", "table-1")
    held.acquire()
    work = tmp_path / "tmp"
    work.mkdir()
    try:
        proc = subprocess.run([*CLI, "demo", "--data-dir", str(tmp_path / "data"), "--web", "off", "--seed", "1"],
                              capture_output=True, text=True, timeout=120, env=_env(work))
    finally:
        held.release()
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    said = [line for line in proc.stderr.splitlines() if line.startswith("tablesvc demo: ")]
    assert len(said) == 1 and "another tablesvc already serves this table" in said[0], proc.stderr
    assert list(work.iterdir()) == []  # its temporary directory is gone


def _env(tmp: Path) -> dict[str, str]:
    import os

    return {**os.environ, "TMPDIR": str(tmp)}


# ---------------------------------------------------------------- failures that speak


def test_demo_with_a_refused_password_removes_its_temporary_directory(deployed_broker, tmp_path):  # noqa: F811
    work = tmp_path / "tmp"
    work.mkdir()
    proc = subprocess.run([*CLI, "demo", "--broker", f"mqtt://viewer:wrong@127.0.0.1:{deployed_broker.port}",
                           "--web", "off", "--seed", "1"], capture_output=True, text=True, timeout=120,
                          env=_env(work))
    assert proc.returncode == 1 and "refused the connection" in proc.stderr, proc.stderr
    assert list(work.iterdir()) == []


def test_mqtt_to_a_tls_port_says_so_and_suggests_mqtts(tls_broker):  # noqa: F811
    from tablesvc.mqtt.probe import probe
    from tablesvc.mqtt.url import BrokerURL

    broker, _ = tls_broker
    started = time.monotonic()
    found = probe(BrokerURL.parse(f"mqtt://127.0.0.1:{broker.port}"))
    assert found is not None and time.monotonic() - started < 3.5
    kind, message = found
    assert kind == "tls" and "answered with TLS" in message and f"mqtts://127.0.0.1:{broker.port}" in message


def test_run_with_mqtt_to_a_tls_port_says_so_within_seconds(tls_broker, tmp_path):  # noqa: F811
    broker, _ = tls_broker
    proc, log = run_logged(f"mqtt://127.0.0.1:{broker.port}", tmp_path)
    try:
        # the interpreter's start, then about 3 s
        eventually(lambda: "answered with TLS" in log.read_text(), 8, what="'answered with TLS' in the log")
        assert "mqtts://" in log.read_text()
    finally:
        proc.terminate()
        proc.wait(15)


def test_mqtt_to_an_http_port_says_so(tmp_path):
    import http.server
    import threading

    from tablesvc.mqtt.probe import probe
    from tablesvc.mqtt.url import BrokerURL

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        found = probe(BrokerURL.parse(f"mqtt://127.0.0.1:{server.server_address[1]}"))
    finally:
        server.shutdown()
        server.server_close()
    assert found is not None and found[0] == "network" and "answered with HTTP" in found[1], found


def test_a_broker_that_answers_mqtt_probes_clean(mosquitto):
    from tablesvc.mqtt.probe import probe
    from tablesvc.mqtt.url import BrokerURL

    assert probe(BrokerURL.parse(mosquitto.url)) is None


def test_a_service_with_another_tables_account_says_the_broker_refused_its_writes_and_stops(
        deployed_broker, tmp_path):  # noqa: F811
    from tests.test_deploy_acl import PASSWORD

    config = tmp_path / "table.toml"
    config.write_text(f'[table]\nsite = "club-a"\nid = "table-1"\ndata_dir = "{tmp_path / "data"}"\n'
                      f'[mqtt]\nurl = "mqtt://club-a%2Ftable-2:{PASSWORD}@127.0.0.1:{deployed_broker.port}"\n')
    started = time.monotonic()
    proc = subprocess.run([*CLI, "run", "--config", str(config), "--new-game"], capture_output=True, text=True,
                          timeout=90)
    assert proc.returncode == 1, proc.stderr
    assert "refused the writes of the account club-a/table-2" in proc.stderr, proc.stderr
    assert proc.stderr.count("refused a message") <= 2  # it stopped, not reconnecting for ever
    assert "Traceback" not in proc.stderr
    assert time.monotonic() - started < 60


def test_a_refusal_lost_with_the_connection_still_stops_a_link_on_another_tables_account(
        deployed_broker):  # noqa: F811
    """Mosquitto closes the connection as it refuses a write, and on a busy machine the refusal can be lost with
    it (seen under four test workers: the service reconnected every second for ever). Here the network between
    the link and the broker loses every refusal after the first (an MQTT 5 PUBACK with a failure reason) with
    its connection; the connections closed after it, writes outstanding and none accepted, are refusals too."""
    import threading

    from hardware_sims.network import CuttableProxy
    from tablesvc.mqtt.link import WRITES_REFUSED, MqttLink
    from tablesvc.mqtt.url import BrokerURL
    from tests.test_deploy_acl import PASSWORD

    delivered: list[int] = []

    def first_refusal_only():
        """Reads the broker's packets as they come; every refusing PUBACK after the first is lost with the
        connection, as when the broker's reset overtakes it."""
        pending = bytearray()

        def passes(data: bytes) -> bytes:
            pending.extend(data)
            out = bytearray()
            while len(pending) >= 2:
                length, shift, at = 0, 0, 1
                while at < len(pending) and pending[at] & 0x80:
                    length |= (pending[at] & 0x7F) << shift
                    shift, at = shift + 7, at + 1
                if at >= len(pending):
                    break
                length |= pending[at] << shift
                end = at + 1 + length
                if len(pending) < end:
                    break
                packet = bytes(pending[:end])
                del pending[:end]
                refusal = packet[0] >> 4 == 4 and length > 2 and packet[at + 3] >= 0x80
                if refusal:
                    delivered.append(packet[at + 3])
                    if len(delivered) > 1:  # the broker's reset overtakes it: lost with the connection
                        raise ConnectionResetError("the refusal lost with the connection")
                out.extend(packet)
            return bytes(out)

        return passes

    proxy = CuttableProxy(deployed_broker.port, downstream=first_refusal_only)
    said: list[str] = []
    stopped = threading.Event()
    url = BrokerURL.parse(f"mqtt://club-a%2Ftable-2:{PASSWORD}@127.0.0.1:{proxy.port}")
    link: MqttLink | None = None

    def connected() -> None:
        assert link is not None
        for leaf in ("status", "state"):
            link.publish(f"tablesvc/club-a/table-1/{leaf}", b"{}", qos=1, retain=True)

    link = MqttLink(url, client_id="refusal-lost", on_connected=connected, protocol="5",
                    on_writes_refused=lambda message: (said.append(message), stopped.set()))
    link.start()
    try:
        assert stopped.wait(30), f"still reconnecting after {link.connects} connections"
        connects = link.connects
        # it stops for good: paho's loop, which would reconnect, has ended
        eventually(lambda: not any(t.name == "paho-mqtt-client-refusal-lost" for t in threading.enumerate()), 10,
                   what="paho's loop of the link ended")
        assert link.connects == connects
    finally:
        link.stop()
        proxy.close()
    assert len(delivered) >= 2, "the broker refused more than once, the link heard only the first"
    assert WRITES_REFUSED == 2
    assert "refused the writes of the account club-a/table-2" in said[0]
    assert "tablesvc/club-a/table-1/" in said[0]
