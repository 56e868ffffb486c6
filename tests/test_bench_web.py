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
    assert float(latency.group(3)) <= float(latency.group(4))
    # the memory was measured with every one of the ten tables taken in
    assert re.search(r"MiB with 10 more tables of \d+ events .*; 10 listed by /api/tables\)", proc.stdout), proc.stdout


def test_web_signin_bench_quick(tmp_path):
    """bench/web_signin.py --quick: 40 sign-ins at once all succeed while pages keep loading, and a 300 MB POST
    to /login is refused (413) both with its length and chunked, the server's memory not growing by it."""
    Mosquitto(tmp_path)  # skips where mosquitto is not installed
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "web_signin.py"), "--quick"], capture_output=True,
                          text=True, timeout=240, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    signins = re.search(r"(\d+)/40 sign-ins in ([\d.]+) s; .* during \((\d+) loads\): p50 ([\d.]+) ms", proc.stdout)
    assert signins and signins.group(1) == "40" and int(signins.group(3)) > 0, proc.stdout
    refusals = re.findall(r"300 MB POST to /login \(([^)]+)\): HTTP/1.1 413", proc.stdout)
    assert refusals == ["with Content-Length", "chunked"], proc.stdout
    memory = re.search(r"([\d.]+) MiB before the 300 MB POSTs, ([\d.]+) MiB after", proc.stdout)
    assert memory and float(memory.group(2)) - float(memory.group(1)) < 50, proc.stdout  # not 300 MB
    assert "then /api/tables: 200" in proc.stdout
