"""Shared fixtures: where the shared real data lives."""

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
MJLOG_DIR = DATA / "tenhou-mjlog"


def mjlog_files() -> list[Path]:
    return sorted(MJLOG_DIR.glob("*.mjlog")) if MJLOG_DIR.is_dir() else []


@pytest.fixture
def mjlog_dir() -> Path:
    if not MJLOG_DIR.is_dir():
        pytest.skip(f"recorded games not found at {MJLOG_DIR} (../shared/data beside the checkout)")
    return MJLOG_DIR


# ---------------------------------------------------------------- a real Mosquitto for integration tests

import getpass  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Mosquitto:
    """A Mosquitto broker of the test's own, on a free loopback port; can be stopped and restarted."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if Path("/usr/sbin/mosquitto").exists() else None)
        if binary is None:
            pytest.skip("mosquitto is not installed (.ci/run installs it with apt-get)")
        self.binary = binary
        self.port = _free_port()
        self.workdir = workdir
        self.conf = workdir / "mosquitto.conf"
        self.conf.write_text(
            # as root, Mosquitto would drop to user 'mosquitto', who cannot write the test's directory
            f"user {getpass.getuser()}\n"
            f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence true\n"
            f"persistence_location {workdir}/\nautosave_interval 1\nmax_queued_messages 0\n"
        )
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> None:
        log = open(self.workdir / "mosquitto.log", "ab")  # noqa: SIM115 - kept open for the process
        self.proc = subprocess.Popen([self.binary, "-c", str(self.conf)], stdout=log, stderr=log)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"mosquitto did not start on port {self.port}")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()  # a clean stop: it saves its persistence file
            self.proc.wait(10)
            self.proc = None


@pytest.fixture
def mosquitto(tmp_path):
    broker = Mosquitto(tmp_path)
    broker.start()
    yield broker
    broker.stop()
