"""``bench/hands.py --quick --only photos``: the photo reader's sections print figures that hold (held-out photos
per source, clutter, taps to score), on real shared photos and scikit-image's clutter photos."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "tiles-photos-roboflow"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"needs the shared photos in {DATA}")


def test_quick_photo_sections_print_their_figures():
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "hands.py"), "--quick", "--only", "photos"],
                         capture_output=True, text=True, timeout=600, cwd=ROOT).stdout  # fmt: skip
    rows = dict(re.findall(r"^(IMG|hand|Screenshot|numbered|all)\s+(\d+ .*)$", out, re.M))
    assert set(rows) == {"IMG", "hand", "Screenshot", "numbered", "all"}, out
    cells = re.findall(r"([\d.]+) %", rows["all"])
    found, right, wrong, unknown = (float(c) for c in cells[:4])
    assert found >= 95 and right >= 80 and wrong <= 2, out
    assert abs(right + wrong + unknown - found) < 0.3, out  # every tile found is named right, wrong or unknown
    sure = re.search(r"shown sure: (\d+) of (\d+) tiles found .*?, (\d+) of them wrong", out)
    assert sure and int(sure.group(1)) > 0 and int(sure.group(3)) <= 1, out
    clutter = re.search(r"reader's boxes kept\s+(\d+)", out)
    if "clutter photos         not measured" not in out:
        finder = int(re.search(r"finder's boxes\s+(\d+)", out).group(1))
        assert clutter and int(clutter.group(1)) <= finder, out
    taps = re.search(r"taps: median ([\d.]+), most (\d+), each \[([\d, ]+)\]", out)
    assert taps and all(int(t) >= 1 for t in taps.group(3).split(",")), out
    assert "mahjong-detector" in out
