"""Every bench runs in its quick mode, as the docs write it (`python bench/NAME.py --quick` from the
repository root), and prints figures that make sense, so a bench cannot rot unseen (a bench module that
shadows a package, such as `bench/vision.py` the `vision` package, or one that fails at import, fails here)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hardware_sims.pytest_plugin import eventually
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
    # every hand answered, as a score or as an error; speed is the full run's figure, not a quick run's
    scored = re.search(r"hands scored\s+(\d+) \((\d+) not a win", out)
    assert scored and int(scored[1]) == 300 and int(scored[2]) < 300, out


def check_replay(out: str) -> None:
    # every game and every hand of the first ten recorded games replayed: in the mjlog, a hand is an INIT that
    # a win or a draw ends before the next
    files = sorted((DATA / "tenhou-mjlog").glob("*.mjlog"))[:10]
    hands = sum(1 for f in files for hand in f.read_text(encoding="utf-8").split("<INIT ")[1:]
                if "<AGARI " in hand or "<RYUUKYOKU " in hand)
    assert re.search(rf"games replayed\s+{len(files)} files, {hands} hands, \d+ events, every delta exact", out), out


def check_pipeline(out: str) -> None:
    for sync in ("full", "normal"):
        line = next(line for line in out.splitlines() if f"journal_sync={sync}" in line)
        assert "20/20 frames" in line, line
        assert 0 < number(r"p50 ([\d.]+) ms", line) < 1000
    # the one game played; its speed is the full run's figure, not a quick run's
    assert re.search(r"pipeline throughput\s+\d+ events/s \(\d+ events of 1 games", out), out


def check_commands(out: str) -> None:
    """A command's reply as fast as a device frame's. A Nagle / delayed-ACK stall adds about 40 ms per
    hop (48 ms with the broker's TCP_NODELAY off, 88 ms with it off everywhere: docs/service.md), which no
    p50 of a sound run comes near; a busy machine slows the frames of the same run too, hence the 3x."""
    line = next(line for line in out.splitlines() if line.startswith("referee command"))
    assert "30 set_scores" in line and "0 refused" in line, line
    p50, p99 = number(r"p50 ([\d.]+) ms", line), number(r"p99 ([\d.]+) ms", line)
    frames = next(line for line in out.splitlines() if line.startswith("device frame"))
    assert "30/30 frames" in frames, frames
    frame_p50 = number(r"p50 ([\d.]+) ms", frames)
    assert 0 < p50 <= p99, line
    assert p50 <= max(15.0, 3 * frame_p50), f"a command's reply is slower than a frame's:\n{line}\n{frames}"


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
    tables = re.findall(r"RSS ([\d.]+) MB at start, ([\d.]+) MB at the end; CPU ([\d.]+) %", out)
    assert len(tables) == 2, out
    for start, end, cpu in tables:
        assert 10 < float(start) < 1000 and 10 < float(end) < 1000 and 0 < float(cpu) < 200


def check_clock(out: str) -> None:
    """time_up arrives for every deadline, never before it (min >= 0), and within seconds, not a minute late."""
    line = next(line for line in out.splitlines() if line.startswith("time_up after the deadline"))
    assert "10/10 arrived" in line, line
    p50, p99 = number(r"p50 ([\d.]+) ms", line), number(r"p99 ([\d.]+) ms", line)
    assert number(r"min (-?[\d.]+) ms", line) >= 0, line
    assert p50 <= p99 < 5000, line


def check_analysis(out: str) -> None:
    assert number(r"states analysed\s+(\d+)", out) > 1000
    median = number(r"analysis per state\s+median\s+(\d+) us", out)
    assert 0 < median <= number(r"analysis per state.*p99\s+(\d+)", out)
    assert number(r"mahjong shanten, 4 hands\s+median\s+(\d+) us", out) > 0
    plain = number(r"replay, full checks\s+(\d+) hands/s", out)
    assert 0 < number(r"replay \+ every state\s+(\d+) hands/s", out) < plain
    line = next(line for line in out.splitlines() if line.startswith("discard -> broadcast/hands"))
    p50, p99 = number(r"p50\s+([\d.]+) ms", line), number(r"p99\s+([\d.]+) ms", line)
    assert "(40 discards" in line and 0 < p50 <= p99 < 5000


CHECKS: dict[str, tuple[Callable[[str], None], bool]] = {  # bench -> (check, needs ../shared/data)
    "analysis": (check_analysis, True),
    "score": (check_score, False),
    "replay": (check_replay, True),
    "pipeline": (check_pipeline, False),
    "commands": (check_commands, False),
    "vision": (check_vision, False),
    "frame_crops": (check_frame_crops, False),
    "classifier_compare": (check_classifier_compare, True),
    "detector_compare": (check_detector_compare, False),
    "soak": (check_soak, False),
    "clock": (check_clock, False),
}


# benches with a test file of their own (vision_real: the real-pixel sections of bench/vision.py)
OWN_TESTS = {"web": "test_bench_web.py", "records": "test_bench_records.py", "vision_real": "test_bench_vision.py",
             "photo_reader": "test_bench_photo_reader.py", "seating": "test_bench_seating.py",
             "hall": "test_bench_hall.py", "refusals": "test_service_holes.py",
             "web_signin": "test_bench_web.py", "sticks": "test_sticks.py", "photos": "test_finder.py",
             "phone_table": "test_play_table.py", "broadcast_scene": "test_bench_broadcast_scene.py",
             "score_load": "test_web_photo_load.py", "hands": "test_bench_hands.py",
             "hands_seat": "test_bench_hands.py", "hands_photos": "test_bench_hands_photos.py"}


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


# ---------------------------------------------------------------- the reply stall beyond the figures

# bench/commands.py --quick output, measured on the 2-core machine under load: a sound run, and one with
# Mosquitto's set_tcp_nodelay left out of its configuration (a Nagle / delayed-ACK stall on each reply)
SOUND_RUN = """broker                    mosquitto
referee command -> reply  30 set_scores, one at a time, journal_sync=full, MQTT 5 response topic: p50 11.8 ms, \
p99 114.9 ms, max 114.9 ms (target p50 < 10 ms); 0 refused
device frame -> subscriber 30/30 frames at 20/s, journal_sync=full: p50 7.6 ms, p99 76.9 ms, max 76.9 ms
"""
NAGLE_RUN = SOUND_RUN.replace("p50 11.8 ms", "p50 65.8 ms").replace("p50 7.6 ms", "p50 7.3 ms")


def test_the_commands_check_tolerates_a_busy_machine_and_catches_a_nagle_stall():
    check_commands(SOUND_RUN)
    with pytest.raises(AssertionError, match="slower than a frame"):
        check_commands(NAGLE_RUN)


def test_acknowledgements_are_journalled_in_batches_while_inputs_keep_coming(mosquitto, tmp_path):
    """The broker's acknowledgements are written to the journal (an fsync each time) when the worker is idle,
    or every ACK_FLUSH_S while it is busy, not after each input: a write after every command held up the next
    command of a referee sending one after another. None is lost: once idle, every event is marked published."""
    import time

    from tablesvc.config import parse_config
    from tablesvc.mqtt.link import IncomingMessage
    from tablesvc.service.table_service import ACK_FLUSH_S, TableService
    from tests.test_service_mqtt import config_text

    service = TableService(parse_config(config_text(mosquitto.url, tmp_path / "data")))
    service.start()
    writes: list[tuple[float, int]] = []  # (when, how many acknowledgements) of each journal write
    real = service.journal.mark_published

    def recording(seqs: list[int]) -> None:
        if seqs:
            writes.append((time.monotonic(), len(seqs)))
        real(seqs)

    service.journal.mark_published = recording  # type: ignore[method-assign]

    def command(payload: str) -> None:
        service.inbox.put(("cmd", IncomingMessage("tablesvc/club/t1/cmd", payload.encode())))

    try:
        assert service.link.wait_ready(15)
        command('{"command": "start_game", "transaction": "go"}')
        assert service.wait_idle(10)
        count = 0
        began = time.monotonic()
        while time.monotonic() - began < 3 * ACK_FLUSH_S:  # a command every 10 ms: the worker never idles long
            command(f'{{"command": "set_scores", "scores": [{25000 + count % 7 * 100}, 25000, 25000, '
                    f'{25000 - count % 7 * 100}], "transaction": "s{count}"}}')
            count += 1
            time.sleep(0.01)  # the pace of the commands is what is under test
        busy_until = time.monotonic()
        assert service.wait_idle(30)
        # every event reached the broker and, once the worker was idle, its acknowledgement reached the journal
        eventually(lambda: service.journal.unpublished() == [], 5, what="every event acknowledged in the journal")
        assert service.journal.last_seq == count + 1
        assert sum(n for _, n in writes) == count + 1
        # in batches: far fewer writes than commands (each write in a busy stretch covers many), and some while
        # the commands kept coming, not all left to the end
        assert len(writes) <= count / 4, (len(writes), count)
        assert any(when < busy_until for when, _ in writes)
    finally:
        service.stop()
