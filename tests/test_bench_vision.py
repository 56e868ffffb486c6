"""bench/vision.py's quick mode runs and prints the real-pixel sections with figures in range."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


@pytest.mark.data
def test_vision_bench_quick_mode_prints_every_section() -> None:
    if not (DATA / "tiles-fluffystuff").is_dir() or not (DATA / "tiles-photos-camerash").is_dir():
        pytest.skip("../shared/data not found")
    out = subprocess.run(
        [sys.executable, "bench/vision.py", "--tiles", "40", "--skip", "loop,photos", "--real-quick",
         "--classifier", "embedding", "--real-methods", "embedding"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=True,
    ).stdout
    for section in ("(a) per-tile accuracy", "(b) FramePipeline.process", "(f) real photos", "(g) a colouring",
                    "(h) real photos of sets never enrolled"):
        assert section in out, out
    # every real-pixel line reports right / wrong / unknown
    lines = [ln for ln in out.splitlines() if "right " in ln and "wrong " in ln]
    assert len(lines) >= 2 + 4 + 4, out
    # both colourings the network never saw (ink hues turned; a dark face) are read nearly always right even in
    # the quick mode's few crops (a network that reads a third of the dark faces fails here)
    colouring = [ln for ln in lines if "4 orientations" in ln]
    assert len(colouring) == 4, out
    assert all(float(re.search(r"right ([\d.]+) %", ln).group(1)) >= 90.0 for ln in colouring), out
    # roboflow valid is read with labels as corrected and as published, enrolled two ways
    assert "(at random)" in out and "(most typical)" in out and "labels as published" in out, out
