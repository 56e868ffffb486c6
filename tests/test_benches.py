"""Every bench runs in its quick mode, as the docs write it (`python bench/NAME.py --quick` from the
repository root), and prints figures that make sense: a bench can no longer rot unseen (issue 11, hole 9:
`bench/vision.py` shadowed the `vision` package and `python bench/pipeline.py` failed at import)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import DATA

ROOT = Path(__file__).resolve().parents[1]


def run_bench(name: str, *args: str, timeout: float = 300) -> str:
    """``python bench/<name>.py --quick`` from the repository root, as README and docs write it."""
    proc = subprocess.run([sys.executable, f"bench/{name}.py", "--quick", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, f"bench/{name}.py --quick exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def number(pattern: str, text: str) -> float:
    found = re.search(pattern, text)
    assert found, f"{pattern!r} not in:\n{text}"
    return float(found.group(1).replace(",", ""))


def check_score(out: str) -> None:
    assert number(r"hands scored\s+(\d+)", out) == 300
    assert number(r"tablesvc score --batch\s+(\d+) hands/s", out) > 0
    assert 0 < number(r"overhead vs prebuilt call\s+([\d.]+)x", out) < 50


def check_replay(out: str) -> None:
    assert "every delta exact" in out
    assert number(r"(\d+) hands, ", out) > 50
    assert number(r"engine with checking\s+(\d+) hands/s", out) > 0


def check_pipeline(out: str) -> None:
    for sync in ("full", "normal"):
        line = next(line for line in out.splitlines() if f"journal_sync={sync}" in line)
        assert "20/20 frames" in line, line
        assert 0 < number(r"p50 ([\d.]+) ms", line) < 1000
    assert number(r"pipeline throughput\s+(\d+) events/s", out) > 0


def check_commands(out: str) -> None:
    line = next(line for line in out.splitlines() if line.startswith("referee command"))
    assert "30 set_scores" in line and "0 refused" in line, line
    p50, p99 = number(r"p50 ([\d.]+) ms", line), number(r"p99 ([\d.]+) ms", line)
    assert 0 < p50 <= p99 < 5000, line
    frames = next(line for line in out.splitlines() if line.startswith("device frame"))
    assert "30/30 frames" in frames, frames


def check_vision(out: str) -> None:
    assert number(r"drawn\s+\d+ tiles in \d+ frames \(\d+ s\): top-1 ([\d.]+) %", out) >= 90
    changes = re.search(r"table changes read exactly (\d+)/(\d+)", out)
    assert changes and int(changes.group(2)) >= 24 and int(changes.group(1)) >= int(changes.group(2)) - 1, out
    assert number(r"(\d+) events the engine refused", out) == 0
    assert 0 < number(r"in play .*?: median ([\d.]+) ms", out) < 5000


def check_frame_crops(out: str) -> None:
    assert number(r"enrolled from art\s+\(.*?\): top-1 ([\d.]+) %", out) >= 95


def check_classifier_compare(out: str) -> None:
    rows = [line for line in out.splitlines() if "| template |" in line]
    assert len(rows) == 3, out
    for row in rows:
        top1 = float(row.split("|")[3])
        assert 40 <= top1 <= 100, row


def check_detector_compare(out: str) -> None:
    if "mahjong-detector is not installed" in out:
        assert "pip install mahjong-detector" in out  # it says how to run the comparison
    else:
        assert "ours (cold)" in out and "mahjong-detector" in out


def check_soak(out: str) -> None:
    assert number(r"events lost\s+(\d+)", out) == 0
    assert number(r"events doubled\s+(\d+)", out) == 0
    journalled = number(r"(\d+) events journalled", out)
    assert journalled > 20 and number(r"(\d+) received", out) == journalled
    assert number(r"events/s\s+([\d.]+)", out) > 0
    tables = re.findall(r"RSS ([\d.]+) MB at start, ([\d.]+) MB at the end; CPU ([\d.]+) %", out)
    assert len(tables) == 2, out
    for start, end, cpu in tables:
        assert 10 < float(start) < 1000 and 10 < float(end) < 1000 and 0 < float(cpu) < 200


CHECKS: dict[str, tuple[Callable[[str], None], bool]] = {  # bench -> (check, needs ../shared/data)
    "score": (check_score, False),
    "replay": (check_replay, True),
    "pipeline": (check_pipeline, False),
    "commands": (check_commands, False),
    "vision": (check_vision, False),
    "frame_crops": (check_frame_crops, False),
    "classifier_compare": (check_classifier_compare, True),
    "detector_compare": (check_detector_compare, False),
    "soak": (check_soak, False),
}


# benches with a test file of their own (vision_real: the real-pixel sections of bench/vision.py)
OWN_TESTS = {"web": "test_bench_web.py", "records": "test_bench_records.py", "vision_real": "test_bench_vision.py"}


def test_every_bench_is_run_here():
    assert {p.stem for p in (ROOT / "bench").glob("*.py")} == set(CHECKS) | set(OWN_TESTS)
    for test in OWN_TESTS.values():
        assert (ROOT / "tests" / test).is_file(), test


def test_no_bench_is_named_like_a_package():
    """A bench named like a top-level package shadows it for the others run beside it."""
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    shadowing = {p.stem for p in (ROOT / "bench").glob("*.py")} & packages
    assert shadowing == {"vision"}  # it keeps its documented name, so every bench puts the repository first
    for bench in (ROOT / "bench").glob("*.py"):
        assert "sys.path.insert(0, str(Path(__file__).resolve().parents[1]))" in bench.read_text(), bench


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_bench_quick_mode(name):
    check, needs_data = CHECKS[name]
    if needs_data and not DATA.is_dir():
        pytest.skip(f"bench/{name}.py needs {DATA}")
    check(run_bench(name))
