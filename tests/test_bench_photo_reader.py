"""bench/photo_reader.py's quick mode runs and prints the photo reader's figures, in range."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "tiles-photos-roboflow"


@pytest.mark.data
def test_photo_reader_bench_quick_mode() -> None:
    if not DATA.is_dir():
        pytest.skip(f"{DATA} not found")
    out = subprocess.run([sys.executable, "bench/photo_reader.py", "--quick"], cwd=ROOT, capture_output=True,
                         text=True, timeout=600, check=True).stdout
    right, wrong, _unknown = (float(x) for x in re.findall(r"(?:right|wrong|unknown) ([\d.]+) %", out)[:3])
    assert right >= 90 and wrong <= 1, out  # the naming of the packaged set on photos it never saw
    flowers_unknown, flowers = (int(x) for x in re.search(r"flowers and seasons\s+(\d+) of (\d+)", out).groups())
    assert flowers > 0 and flowers_unknown >= 0.95 * flowers, out
    exact, hands = (int(x) for x in re.search(r"hand photos\s+(\d+) of (\d+)", out).groups())
    assert hands >= 5 and exact >= hands - 2, out
    finder = re.search(r"with the finder\s+(\d+) of (\d+) valid hands scored exactly", out)
    assert finder or "with the finder        not measured" in out, out
    if finder:  # the whole read, boxes and all: at least half of the hands exact
        assert int(finder.group(2)) == hands and 2 * int(finder.group(1)) >= hands, out
    median = float(re.search(r"median ([\d.]+)", out).group(1))
    assert 0 < median < 10_000, out
