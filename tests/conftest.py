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
# The `mosquitto` fixture and the other simulators come from the project's pytest plugin,
# hardware_sims/pytest_plugin.py (the pytest11 entry point 'tablesvc'); the class and the free port
# helper are named here too for the tests that build a broker of their own.

from hardware_sims.pytest_plugin import Mosquitto  # noqa: E402, F401
from hardware_sims.pytest_plugin import free_port as _free_port  # noqa: E402, F401
