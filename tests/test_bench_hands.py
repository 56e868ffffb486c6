"""bench/hands.py in its quick mode prints the seat cameras' figures, and `tablesvc demo --hand-cams` prints each
seat's hand as read beside the truth: both run the rendered seat cameras end to end (render, read, consensus)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from bench.hands_seat import QUICK_STATES

ROOT = Path(__file__).resolve().parents[1]


def number(pattern: str, text: str) -> float:
    found = re.search(pattern, text)
    assert found, f"{pattern!r} not in:\n{text}"
    return float(found.group(1))


def test_the_seat_camera_bench_prints_states_exact_wrong_and_the_frame_cost():
    proc = subprocess.run([sys.executable, "bench/hands.py", "--quick", "--only", "seats"], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    # a hand of a generated game leaves dozens of seat states: the quick run reads the first of them
    assert f"the first {QUICK_STATES} hand states" in out, out
    assert number(r"drawn\s+all\s+(\d+)", out) == QUICK_STATES >= 40, out
    assert number(r"drawn\s+all\s+\d+\s+([\d.]+)%", out) >= 95.0, "steep cameras included (1280x720 from 50 degrees)"
    assert number(r"drawn\s+all\s+\d+\s+[\d.]+%\s+(\d+)", out) == 0, "no wrong tile is ever published"
    # each of the four cameras (degrees up, HD where steep) read its own seat's states
    game = next(line for line in out.splitlines() if re.match(r"drawn\s+1\s", line))
    assert len(re.findall(r"\b\d+(?: HD)?:\d+%", game)) == 4, game
    # the cost line adds up: four seat frames and the table camera's make one round, the rate is its inverse
    seat, table = number(r"4 x ([\d.]+) ms \(seat", out), number(r"\+ ([\d.]+) ms \(table camera", out)
    assert seat > 0 and table > 0
    rate = 1000 / (4 * seat + table)
    assert abs(number(r"-> ([\d.]+) frames/s each", out) - rate) <= 0.02 * rate + 0.05  # figures rounded to 0.1


def test_demo_hand_cams_prints_each_seat_read_beside_the_truth():
    # seed 43: a first hand of 31 seat states, the cameras 22-43 degrees up at 640x480 (the bench above reads the
    # steep 1280x720 ones)
    proc = subprocess.run([sys.executable, "-m", "tablesvc", "demo", "--hand-cams", "--hands", "1", "--seed", "43"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)  # fmt: skip
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert out.count(" read  ") == 4 and out.count(" truth ") == 4, out
    for seat in "ESWN":
        assert re.search(rf"^  {seat}  read  ", out, re.M), out
    assert re.search(r"hand states read: \d+ exact .* 0 tiles published wrong", out), out
