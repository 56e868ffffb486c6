"""bench/records.py in its quick mode: it runs, keeps every game once and prints its figures."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason="the records extra is not installed (pip install -e '.[test]')")

ROOT = Path(__file__).resolve().parent.parent


def test_bench_records_quick():
    out = subprocess.run([sys.executable, "bench/records.py", "--quick"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, check=True).stdout
    assert re.search(r"games kept\s+20 games, \d+ hands, 12 players", out), out
    assert "standings unchanged: True" in out
    assert re.search(r"results written\s+\d+ messages/s", out)  # a figure; speed is the full run's to judge
    assert re.search(r"standings over every game\s+[\d.]+ ms", out)
