"""Shared fixtures: where the shared real data lives; a PostgreSQL server; one thread per xdist worker."""

import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    # A suite started in the background (`pytest &` in a script, CI, nohup) inherits Ctrl-C ignored, and so
    # would every program the tests start: the tests that stop the demo or the service with Ctrl-C (SIGINT)
    # would wait for it in vain. Ctrl-C as a terminal delivers it, for this process and those it starts.
    signal.signal(signal.SIGINT, signal.default_int_handler)

if os.environ.get("PYTEST_XDIST_WORKER"):
    # Four workers share CI's two cores: OpenCV's and BLAS's thread pools, sized for the whole machine in each
    # worker, would make them fight (the classifier's tests took four times as long in the suite as alone).
    # Set before numpy or OpenCV is loaded, which reads them once.
    # The variables reach the processes the tests start too (benches, the service): OpenCV's own pool reads
    # OPENCV_FOR_THREADS_NUM where cv2.setNumThreads is not called.
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OPENCV_FOR_THREADS_NUM"):
        os.environ.setdefault(_var, "1")
    import cv2

    cv2.setNumThreads(1)

# ---------------------------------------------------------------- the longest files start first
# xdist hands out whole files (--dist loadfile) in collection order (--no-loadscope-reorder): a file of one
# two-minute test handed out last would run alone at the end while the other workers wait. These files took
# longest in a whole run (seconds of test time under four workers on two cores, `pytest --durations=80`);
# they are collected first, longest first, the rest after them in their usual order. A rough order is enough:
# refresh it when a file grows much slower or faster.
SLOW_FILES: dict[str, float] = {
    "test_benches.py": 95, "test_bench_hands.py": 85, "test_cli_vision.py": 75, "test_tournament_day.py": 65,
    "test_demo.py": 65, "test_bench_vision.py": 60, "test_classifier.py": 55, "test_fault_matrix.py": 55,
    "test_tournament_pages.py": 50, "test_embedding.py": 50, "test_failures_speak.py": 45,
    "test_web_broadcast.py": 40, "test_sticks_service.py": 35, "test_service_devices.py": 30,
    "test_journal_trust.py": 30, "test_web_guard.py": 30, "test_web_referee.py": 30, "test_service_mqtt.py": 30,
    "test_bench_web.py": 30, "test_vision_pipeline.py": 30, "test_play_table.py": 30, "test_web_photo_load.py": 25,
    "test_service_start_holes.py": 25, "test_bench_hall.py": 25, "test_formats_roundtrip.py": 25,
    "test_web_overlay.py": 20, "test_service_holes.py": 20, "test_photo_sure.py": 20, "test_camera_snapshots.py": 20,
    "test_camera_feed.py": 20, "test_web_sticks.py": 20, "test_finder.py": 20, "test_tournament_rehearsal.py": 15,
    "test_seat_camera.py": 15, "test_web_accounts.py": 15, "test_pytest_plugin.py": 15,
    "test_bench_photo_reader.py": 15, "test_web_dashboard.py": 15, "test_deploy_acl.py": 15, "test_web_config.py": 15,
    "test_fuzz_inputs.py": 15, "test_analysis_seats.py": 15,
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Collect the files of :data:`SLOW_FILES` first, longest first (a stable sort: tests keep their order
    within a file). Every worker collects the same items, so every worker sorts them alike."""
    items.sort(key=lambda item: -SLOW_FILES.get(item.path.name, 0.0))


DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
MJLOG_DIR = DATA / "tenhou-mjlog"


def mjlog_files() -> list[Path]:
    return sorted(MJLOG_DIR.glob("*.mjlog")) if MJLOG_DIR.is_dir() else []


def comes_before(events: list, start: int, wanted: type, stops: tuple[type, ...]) -> bool:
    """Whether, from ``events[start]`` on, a ``wanted`` event comes before any ``stops`` one: the tests that
    replay recorded games keep a costly look at a state only where a later event will read it."""
    for event in events[start:]:
        if isinstance(event, wanted):
            return True
        if isinstance(event, stops):
            return False
    return False


@pytest.fixture
def mjlog_dir() -> Path:
    if not MJLOG_DIR.is_dir():
        pytest.skip(f"recorded games not found at {MJLOG_DIR} (../shared/data beside the checkout)")
    return MJLOG_DIR


# ---------------------------------------------------------------- a real Mosquitto for integration tests
# The `mosquitto` fixture and the other simulators come from the project's pytest plugin,
# hardware_sims/pytest_plugin.py (the pytest11 entry point 'tablesvc'); the class and the free port
# helper are named here too for the tests that build a broker of their own.

# ---------------------------------------------------------------- a real PostgreSQL for the records tests
import pwd  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import uuid  # noqa: E402

from hardware_sims.pytest_plugin import Mosquitto, eventually  # noqa: E402, F401
from hardware_sims.pytest_plugin import free_port as _free_port  # noqa: E402


def _postgres_bindir() -> Path | None:
    """Debian's postgresql package puts initdb and postgres in /usr/lib/postgresql/<major>/bin."""
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"),
                      key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0)
    if versions:
        return versions[-1].parent
    found = shutil.which("postgres")
    return Path(found).parent if found and (Path(found).parent / "initdb").exists() else None


class Postgres:
    """A PostgreSQL server of the test session's own: initdb in a temporary directory, trust authentication,
    listening on a free loopback port. PostgreSQL refuses to run as root: as root it runs as the user
    ``postgres`` (Debian's package creates it), else ``nobody``, through runuser."""

    def __init__(self) -> None:
        bindir = _postgres_bindir()
        if bindir is None or not (bindir / "postgres").exists():
            pytest.skip("PostgreSQL is not installed (.ci/run installs Debian's postgresql with apt-get)")
        self.bindir = bindir
        self.port = _free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="tablesvc-pg-"))
        self.data = self.dir / "data"
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            try:
                user = pwd.getpwnam("postgres")
            except KeyError:
                user = pwd.getpwnam("nobody")
            os.chown(self.dir, user.pw_uid, user.pw_gid)
            if shutil.which("runuser"):
                self.prefix = ["runuser", "-u", user.pw_name, "--"]
            else:
                self.prefix = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--"]
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        log = open(self.dir / "postgres.log", "ab")  # noqa: SIM115 - kept open for the process
        subprocess.run([*self.prefix, str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres",
                        "--auth=trust", "-E", "UTF8", "--no-sync"], check=True, stdout=log, stderr=log)
        self.proc = subprocess.Popen(
            [*self.prefix, str(self.bindir / "postgres"), "-D", str(self.data), "-p", str(self.port),
             "-k", str(self.dir), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"],
            stdout=log, stderr=log)
        import psycopg

        def accepting() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(f"postgres stopped at its start; see {self.dir / 'postgres.log'}")
            try:
                psycopg.connect(self.dsn("postgres"), connect_timeout=2).close()
                return True
            except psycopg.OperationalError:
                return False

        eventually(accepting, 30, what=f"postgres accepting connections; see {self.dir / 'postgres.log'}")

    def dsn(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database; its postgresql:// URL."""
        import psycopg

        name = f"records_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(self.dsn("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)

    def stop(self) -> None:
        if self.proc is not None:
            # pg_ctl, not a signal to self.proc: as root that is runuser, which need not pass a signal on, and
            # a postgres left running outlives the test session (its directory removed under it)
            stopped = subprocess.run([*self.prefix, str(self.bindir / "pg_ctl"), "stop", "-D", str(self.data),
                                      "-m", "fast", "-w", "-t", "20"], capture_output=True, timeout=30)
            if stopped.returncode != 0:
                self.proc.send_signal(signal.SIGINT)  # fast shutdown
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
            self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server():
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[test]')")
    server = Postgres()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """The URL of a fresh database on the session's own PostgreSQL."""
    return postgres_server.new_database()


@pytest.fixture
def refusing_port() -> Iterator[int]:
    """A loopback port held for the whole test, bound and never listening: every connection is refused, and no
    other test's server can take the port between the choice and the connection (a freed port can be)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]
