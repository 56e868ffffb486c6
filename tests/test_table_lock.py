"""One service per table: a second one refuses to start and names the first; a killed one leaves no stale lock."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import pytest

from tablesvc.config import parse_config
from tablesvc.service import TableService
from tablesvc.service.lock import TableLock, TableLocked
from tests.test_service_mqtt import Subscriber, config_text

_RUN = [sys.executable, "-m", "tablesvc", "run", "--config"]


def test_a_second_service_on_the_same_table_refuses_and_names_the_first(mosquitto, tmp_path):
    config = parse_config(config_text(mosquitto.url, tmp_path / "data"))
    first = TableService(config)
    try:
        with pytest.raises(TableLocked) as err:
            TableService(config)
        message = str(err.value)
        assert f"PID {os.getpid()} on {socket.gethostname()}, started 20" in message
        assert str(tmp_path / "data" / "t1.lock") in message
        # another table in the same data directory is not held by it
        other = TableService(parse_config(config_text(mosquitto.url, tmp_path / "data").replace('"t1"', '"t2"')))
        other.stop()
    finally:
        first.stop()
    again = TableService(config)  # released by a clean stop
    again.stop()


def test_the_lock_names_a_holder_that_has_not_written_yet_and_refuses_while_held(tmp_path):
    import fcntl

    (tmp_path / "t1.lock").write_text("")
    fd = os.open(tmp_path / "t1.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        with pytest.raises(TableLocked, match="a process that has not yet written its name"):
            TableLock(tmp_path, "t1").acquire()
    finally:
        os.close(fd)
    with TableLock(tmp_path, "t1") as lock:
        assert lock.path.read_text().startswith('{"pid": ')


def test_tablesvc_run_twice_refuses_and_a_killed_service_leaves_no_stale_lock(mosquitto, tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(config_text(mosquitto.url, tmp_path / "data"))
    sub = Subscriber(mosquitto.port)
    first = subprocess.Popen([*_RUN, str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert sub.wait_for(lambda: sub.of("status") and sub.of("status")[-1]["status"] == "online", 30)
        second = subprocess.run([*_RUN, str(path)], capture_output=True, text=True, timeout=60)
        assert second.returncode == 1
        assert f"another tablesvc already serves this table: PID {first.pid} on {socket.gethostname()}" in (
            second.stderr)
        assert first.poll() is None  # the first one was not disturbed
        os.kill(first.pid, signal.SIGKILL)
        first.wait(10)
        assert (tmp_path / "data" / "t1.lock").exists()  # the file stays, the lock died with the process
        assert sub.wait_for(lambda: sub.of("status")[-1]["status"] == "offline", 30)  # its Last Will
        third = subprocess.Popen([*_RUN, str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            assert sub.wait_for(lambda: sub.of("status")[-1]["status"] == "online", 30)
            assert third.poll() is None
        finally:
            third.send_signal(signal.SIGTERM)
            third.wait(15)
    finally:
        if first.poll() is None:
            first.kill()
        sub.close()
