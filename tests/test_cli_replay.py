"""`tablesvc replay`: lines per hand, --json, --strict, cut files, --export round trip."""

import json

import pytest

from tablesvc.cli import main
from tests.conftest import MJLOG_DIR

pytestmark = pytest.mark.skipif(not MJLOG_DIR.is_dir(), reason="../shared/data/tenhou-mjlog not found")
GAME = MJLOG_DIR / "double-ron.mjlog"


def run(capsys, *argv):
    code = main(["replay", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_has_one_object_per_hand_and_the_final(capsys):
    code, out, _ = run(capsys, GAME, "--json", "--strict")
    assert code == 0
    objects = [json.loads(line) for line in out.splitlines()]
    assert objects[0] == {"rules": "tenhou", "rules_from": "record"}  # an mjlog is Tenhou's
    hands, final = objects[1:-1], objects[-1]
    assert len(hands) == 4
    assert hands[3]["round"] == "E4" and len(hands[3]["wins"]) == 2  # the double ron
    assert hands[3]["deltas"] == [9700, 0, 8000, -15700]
    assert final["final_scores"] == [33400, 36000, 32000, -1400]
    assert [r["place"] for r in final["ranking"]] == [1, 2, 3, 4]


def test_text_names_players_and_results(capsys):
    code, out, _ = run(capsys, GAME)
    assert code == 0
    assert "E4-0" in out and "ron from" in out and "final ranking:" in out


def test_cut_file_stops_with_a_note_not_a_traceback(capsys):
    code, out, err = run(capsys, MJLOG_DIR / "2011020401gm-00a9-0000-f6eff225-no-round-end.mjlog", "--strict")
    assert code == 0
    assert out.count("deltas") == 7  # the seven hands before the cut
    assert "note: the record ends in the middle of hand 8 (S4-0)" in err
    assert "Traceback" not in err


def test_strict_mismatch_exits_3_naming_the_hand(capsys, tmp_path):
    text = GAME.read_text()
    broken = tmp_path / "broken.mjlog"
    broken.write_text(text.replace('sc="250,-60,240,130,250,-30,250,-30"', 'sc="250,-60,240,131,250,-30,250,-31"'))
    code, _, err = run(capsys, broken, "--strict")
    assert code == 3
    assert "hand 1 (E1-0): deltas [-6000, 13000, -3000, -3000], record says [-6000, 13100, -3000, -3100]" in err


def test_unreadable_file(capsys, tmp_path):
    code, _, err = run(capsys, tmp_path / "missing.mjlog")
    assert code == 1 and "cannot read" in err


# a double ron; a game into the West round; one whose last hand is S4-3 with a stick (every complete game:
# tests/test_formats_roundtrip.py, in-process)
ROUND_TRIP = [GAME.name, "2020060723gm-00a9-0000-58807e27.mjlog", "2016081523gm-00a9-0000-122c42dc.mjlog"]


@pytest.mark.parametrize("name", ROUND_TRIP)
@pytest.mark.parametrize("fmt", ["mjai", "tenhou6"])
def test_export_then_replay_the_export(capsys, tmp_path, fmt, name):
    out = tmp_path / f"game.{fmt}"
    code, first, _ = run(capsys, MJLOG_DIR / name, "--json", "--export", fmt, out)
    assert code == 0 and out.stat().st_size > 0
    code, again, _ = run(capsys, out, "--json", "--strict")  # the export carries the rules and the scores
    assert code == 0
    assert json.loads(again.splitlines()[0]) == {"rules": "tenhou", "rules_from": "record"}
    assert again.splitlines()[1:] == first.splitlines()[1:]  # every hand and the final ranking


def test_a_record_that_does_not_say_its_rules_is_played_under_the_default_and_says_so(capsys, tmp_path):
    mjai = tmp_path / "game.mjai"
    assert run(capsys, GAME, "--export", "mjai", mjai)[0] == 0
    lines = mjai.read_text().splitlines()
    start = json.loads(lines[0])
    assert start == {"type": "start_game", "names": start["names"], "rules": "tenhou"}
    del start["rules"]  # as other programs write it
    bare = tmp_path / "bare.mjai"
    bare.write_text("\n".join([json.dumps(start), *lines[1:]]) + "\n")
    code, out, _ = run(capsys, bare)
    assert code == 0
    assert out.splitlines()[0] == ("rules: ema2012 (the default: the record does not say which rules it was "
                                   "played under; --rules chooses)")
    code, out, _ = run(capsys, bare, "--rules", "tenhou", "--strict")
    assert code == 0 and out.splitlines()[0] == "rules: tenhou (--rules)"


def test_red_fives_under_rules_without_them_say_so_and_name_the_presets_that_have_them(capsys):
    code, out, err = run(capsys, GAME, "--rules", "ema2016")
    assert code == 1 and out == ""
    assert "the record uses red fives (5sr at hand 1, event 2 (hand_start)) and ema2016 plays without them" in err
    assert "(ema2012, tenhou; --rules chooses)" in err
    assert "rather than" not in err and "write 5, not 0" not in err  # the advice for typed hands
    # house rules that take red fives away are named as played
    code, _, err = run(capsys, GAME, "--rules", "tenhou; red_fives=no")
    assert code == 1 and "tenhou; red_fives=no plays without them" in err


@pytest.mark.parametrize("extra", [(), ("--json",), ("--export", "mjai", "out.mjai"),
                                   ("--export", "tenhou6", "out.json")])
def test_a_journal_holding_a_lone_surrogate_replays_and_exports_without_a_traceback(tmp_path, extra):
    """A journal written before names were checked may hold a name with a lone surrogate: the replay shows it
    as U+FFFD and the export is valid UTF-8, as games, records import and run cope with it. Run as a
    process, so that its output goes through a real UTF-8 stream."""
    import os
    import subprocess
    import sys

    from tablesvc.engine.events import to_dict
    from tablesvc.replay import load_record
    from tablesvc.storage.journal import Journal

    record = load_record(GAME)
    with Journal.for_table(tmp_path, "t1", site="club") as journal:
        for n, event in enumerate(record.events):
            body = to_dict(event)
            if n == 0:
                body["players"] = ["Ann", "B\ud800b", "Cat", "Dai"]
            journal.append(body["type"], body, source="cam", ts=1000.0 + n)
    proc = subprocess.run([sys.executable, "-m", "tablesvc", "replay", str(tmp_path / "t1.sqlite3"), *extra],
                          capture_output=True, cwd=tmp_path, timeout=120,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert proc.returncode == 0 and "Traceback" not in err, err[-2000:]
    if extra and extra[0] == "--export":
        written = (tmp_path / extra[2]).read_text(encoding="utf-8")
        assert "B\ufffdb" in written or "B\\ufffdb" in written
    elif not extra:
        assert "B\ufffdb" in out and "final ranking:" in out
