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
