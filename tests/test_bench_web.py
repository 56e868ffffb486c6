"""bench/web.py --quick runs and prints its figures: every state reached every page, latency and memory."""

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import Mosquitto

ROOT = Path(__file__).resolve().parents[1]

def test_web_bench_quick(tmp_path):
    Mosquitto(tmp_path)  # skips where mosquitto is not installed
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "web.py"), "--quick"], capture_output=True,
                          text=True, timeout=240, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    latency = re.search(r"(\d+)/(\d+) received, p50 ([\d.]+) ms, p99 ([\d.]+) ms", proc.stdout)
    assert latency, proc.stdout
    assert latency.group(1) == latency.group(2) == "800"  # 4 tables x 40 states reached all 20 pages
    assert 0 < float(latency.group(3)) <= float(latency.group(4))
    memory = re.search(r"([\d.]+) MiB with 10 more tables", proc.stdout)
    assert memory and float(memory.group(1)) > 0, proc.stdout
