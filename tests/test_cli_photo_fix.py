"""``tablesvc score --photo`` corrected: on the command line (``--fix``, ``--add``, ``--remove``, ``--apart``) and
asked on a real terminal (a pseudo-terminal, the command run as its own process), on real shared photos whose
labelled boxes stand for the finder (``--boxes``)."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tablesvc.cli import main
from tablesvc.photo_fix import BadCorrection, Corrections, Tile

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tiles-photos-roboflow"
LABELS = DATA / "labels" / "valid"
needs_photos = pytest.mark.skipif(not DATA.is_dir(), reason=f"needs the shared photos in {DATA}")


def photo(stem: str) -> Path:
    return next((DATA / "images" / "valid").glob(f"{stem}_*"))


def typed(capsys, *args: str) -> dict:
    assert main(["score", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def same_score(got: dict, want: dict) -> None:
    assert (got["han"], got["fu"], got["points"]) == (want["han"], want["fu"], want["points"])
    assert [y["key"] for y in got["yaku"]] == [y["key"] for y in want["yaku"]]


# ---------------------------------------------------------------------------------------------- the corrections
def row(names: str) -> list[Tile]:
    return [Tile(None if n == "?" else n.rstrip("?"), True, not n.endswith("?"), ()) for n in names.split()]


def test_corrections_use_the_numbers_as_read_whatever_their_order():
    groups = [row("1m 2m 3m 4p? ? 6p"), row("E E E"), row("9s")]
    fixes = Corrections()
    for text in ("remove 2", "fix 5=5p", "add 2m@1", "apart 7-9", "5=5pr"):
        fixes.add(text)
    out = fixes.apply(groups)
    assert [[t.shown() for t in g] for g in out] == [["1m", "2m", "3m", "4p?", "5pr", "6p"], ["E", "E", "E"], ["9s"]]
    assert Corrections.numbered(out).startswith("1 1m  2 2m  3 3m  4 4p?  5 5pr  6 6p  |  7 E")
    moved = Corrections()
    moved.add("apart 4-6")
    assert [len(g) for g in moved.apply(groups)] == [3, 3, 3, 1]
    extra = Corrections()
    extra.add("add 7p")  # no place given: the concealed part, the largest group
    assert [t.tile for t in extra.apply(groups)[0]][-1] == "7p"


@pytest.mark.parametrize(("text", "says"), [("fix 12=1m", "no tile 12"), ("fix 3=zz", "not a tile"),
                                            ("remove x", "not a tile number"), ("apart 3-1", "from the first"),
                                            ("swap 1 2", "say fix N=TILE"), ("fix 2=1m2m", "names 2 tiles")])
def test_a_correction_that_cannot_apply_says_why(text, says):
    def apply() -> None:
        fixes = Corrections()
        fixes.add(text)
        fixes.apply([row("1m 2m 3m 4p? ? 6p"), row("E E E"), row("9s")])

    with pytest.raises(BadCorrection, match=says):
        apply()


# ---------------------------------------------------------------------------------------------- the command line
@needs_photos
def test_a_missed_tile_added_and_a_tile_removed_on_the_command_line(tmp_path, capsys):
    src = photo("hand_005")  # 888s 111s 345s 765s 99s on a rack
    lines = sorted(LABELS.joinpath(src.stem + ".txt").read_text().splitlines(), key=lambda ln: float(ln.split()[1]))
    boxes = tmp_path / "missed.txt"
    boxes.write_text("\n".join(lines[:6] + lines[7:]))  # the finder "missed" the 3s
    assert main(["score", "--photo", str(src), "--boxes", str(boxes), "--win", "9s", "--no-ask"]) == 2
    out = capsys.readouterr().out
    assert "numbered: 1 8s" in out and "13 9s" in out and "cannot score" in out
    want = typed(capsys, "11134556788899s", "--win", "9s")
    # the gap the missed tile left split the row in two (read as two pons set apart): joined, and the 3s added
    assert "|  7 4s" in out
    same_score(typed(capsys, "--photo", str(src), "--boxes", str(boxes), "--win", "9s", "--add", "3s@6", "--join", "7"),
               want)
    # a tile read that is not the hand's: removed by its number, then the missing one added
    same_score(typed(capsys, "--photo", str(src), "--boxes", str(LABELS), "--win", "9s", "--remove", "7",
                     "--add", "3s@6"), want)
    # a wrong tile fixed (two fixes in one option): 3s 4s 5s as 2s, then back
    same_score(typed(capsys, "--photo", str(src), "--boxes", str(LABELS), "--win", "9s", "--fix", "7=2s,7=3s"), want)


@needs_photos
def test_a_meld_and_the_winning_tile_set_apart_on_the_command_line(capsys):
    src = photo("hand_005")
    want = typed(capsys, "1113455679s", "--meld", "pon:888s", "--win", "9s", "--tsumo")
    got = typed(capsys, "--photo", str(src), "--boxes", str(LABELS), "--apart", "1-3", "--apart", "14", "--tsumo")
    same_score(got, want)
    assert "pon:8s8s8s" in got["hand"] and got["hand"].endswith("win 9s")


@needs_photos
def test_a_bad_correction_is_one_line_and_exit_2(capsys):
    code = main(["score", "--photo", str(photo("hand_005")), "--boxes", str(LABELS), "--fix", "20=1m"])
    assert code == 2
    err = capsys.readouterr().err
    assert "there is no tile 20" in err and "Traceback" not in err
    assert main(["score", "--photo", str(photo("hand_005")), "--boxes", str(LABELS), "--add", "9x"]) == 2
    assert "not a tile" in capsys.readouterr().err
    assert main(["score", "123m456p789s99s11z", "--win", "1z", "--remove", "3"]) == 2
    assert "give --photo PHOTO" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- asked on a terminal
class Terminal:
    """The command on a pseudo-terminal: what it prints, and answers typed to it."""

    def __init__(self, args: list[str]) -> None:
        self.master, slave = pty.openpty()
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        self.proc = subprocess.Popen([sys.executable, "-c", "import sys; from tablesvc.cli import main; "
                                      "sys.exit(main(sys.argv[1:]))", *args], stdin=slave, stdout=slave,
                                     stderr=slave, env=env, close_fds=True)  # fmt: skip
        os.close(slave)
        self.text = ""

    def wait_for(self, *endings: str, timeout: float = 60.0) -> str:
        """Output until it shows one of ``endings`` (returned), or fail saying what was printed."""
        deadline = time.monotonic() + timeout
        while True:
            for end in endings:
                if end in self.text:
                    return end
            left = deadline - time.monotonic()
            if left <= 0 or (self.proc.poll() is not None and not select.select([self.master], [], [], 0)[0]):
                raise AssertionError(f"waited for {endings}; the terminal shows:\n{self.text}")
            ready, _, _ = select.select([self.master], [], [], min(left, 0.5))
            if ready:
                with contextlib.suppress(OSError):  # the command ended and closed its side
                    self.text += os.read(self.master, 4096).decode(errors="replace")

    def type(self, line: str) -> None:
        self.text = ""
        os.write(self.master, (line + "\r").encode())

    def close(self) -> int:
        """The command's exit status (killed where it still waits for an answer: a test that failed midway)."""
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
        finally:
            os.close(self.master)


@needs_photos
def test_on_a_terminal_each_tile_not_sure_is_asked_for(tmp_path):
    """hand_005's labelled boxes and one box more, on the rack's wood to the right of the row: the reader is not
    sure of it; asked, the player says it is no tile ("-"), takes the best guess of every other tile not sure
    (the publisher squeezed this photo: its tiles are out of a tile's proportions, never shown sure), then
    corrects nothing else and the hand is scored."""
    src = photo("hand_005")
    lines = LABELS.joinpath(src.stem + ".txt").read_text().splitlines()
    cx = max(float(ln.split()[1]) + float(ln.split()[3]) / 2 for ln in lines) + 0.06
    boxes = tmp_path / "more.txt"
    boxes.write_text("\n".join([*lines, f"0 {cx:.4f} 0.80 0.04 0.10"]))
    term = Terminal(["score", "--photo", str(src), "--boxes", str(boxes), "--win", "9s"])
    try:
        seen = []
        while (got := term.wait_for("which tile is it?", "anything else?")) != "anything else?":
            number = int(re.findall(r"tile (\d+) is not sure", term.text)[-1])
            seen.append(number)
            term.type("-" if number == 15 else "")
        assert 15 in seen, term.text
        assert "now: 1 8s" in term.text and "15" not in term.text.split("now:")[1].split("anything")[0]
        term.type("")
        term.wait_for("Total")
        assert "Chinitsu" in term.text
    finally:
        code = term.close()
    assert code == 0, term.text
    del got
