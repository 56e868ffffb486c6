"""Imports refuse text that is not valid Unicode, naming the field, instead of keeping a name that breaks later.

A lone surrogate (``"\\ud800"``) is what a JSON escape can hold and UTF-8
cannot: a name read with one is kept, then every export, publish and
listing of the game fails. mjlog names are UTF-8 behind %-escapes, decoded
strictly: bytes that are no UTF-8 are refused, not turned into replacement
characters. Each case is a real game of the shared data with one name
spoilt.
"""

from __future__ import annotations

import json

import pytest

from tablesvc.cli import main
from tablesvc.formats.mjai import export_mjai, parse_mjai
from tablesvc.formats.mjlog import parse_mjlog
from tablesvc.formats.record import RecordError
from tablesvc.formats.tenhou6 import export_tenhou6, parse_tenhou6
from tablesvc.replay import replay
from tests.conftest import mjlog_files

FILES = {p.name: p for p in mjlog_files()}
GAME = "2016052515gm-00a9-0000-c4d72066.mjlog"
NAME0 = "%E6%89%8B%E6%89%93%E3%81%A1%E3%81%8D%E3%81%97%E3%82%81%E3%82%93"  # its first player's name, as written

pytestmark = [pytest.mark.data, pytest.mark.skipif(GAME not in FILES, reason="../shared/data/tenhou-mjlog not found")]


def _mjlog() -> str:
    text = FILES[GAME].read_text(encoding="utf-8")
    assert f'n0="{NAME0}"' in text
    return text


def test_a_real_game_reads_its_names_as_written():
    record = parse_mjlog(_mjlog(), GAME)
    assert record.players[0] == "手打ちきしめん"


@pytest.mark.parametrize(("escaped", "why"), [
    ("%ED%A0%80", "a surrogate written as UTF-8 bytes"),
    ("%E6%89", "a character cut short"),
    ("Ann%FF", "a byte that starts no character"),
])
def test_mjlog_names_that_are_no_utf8_are_refused_naming_the_attribute(escaped, why):
    text = _mjlog().replace(f'n0="{NAME0}"', f'n0="{escaped}"')
    with pytest.raises(RecordError, match=r"<UN>: n0 .* is not UTF-8 text once its %-escapes are decoded"):
        parse_mjlog(text, GAME)


def test_mjlog_text_holding_a_lone_surrogate_is_refused_not_a_crash():
    text = _mjlog().replace(f'n0="{NAME0}"', 'n0="A\ud800nn"')
    with pytest.raises(RecordError, match="not valid Unicode text"):
        parse_mjlog(text, GAME)


def _exports() -> tuple[str, str]:
    record = parse_mjlog(_mjlog(), GAME)
    report = replay(record, strict=True)
    return export_mjai(record, report), export_tenhou6(record, report)


def test_mjai_and_tenhou6_names_with_a_lone_surrogate_are_refused_naming_the_field(tmp_path, capsys):
    mjai, tenhou6 = _exports()
    lines = mjai.splitlines()
    start = json.loads(lines[0])
    start["names"][1] = "B\ud800b"
    bad_mjai = "\n".join([json.dumps(start), *lines[1:]])  # the JSON escape \ud800, as a file holds it
    assert "\\ud800" in bad_mjai
    with pytest.raises(RecordError, match=r"bad\.mjai: line 1: names\[1\] is not valid Unicode text"):
        parse_mjai(bad_mjai, "bad.mjai")
    doc = json.loads(tenhou6)
    doc["name"][2] = "\udfffC"
    bad_tenhou6 = json.dumps(doc)
    with pytest.raises(RecordError, match=r"bad\.json: name\[2\] is not valid Unicode text"):
        parse_tenhou6(bad_tenhou6, "bad.json")
    # the same files read as they were are fine
    assert parse_mjai(mjai, "good.mjai").players == parse_tenhou6(tenhou6, "good.json").players
    # and `tablesvc replay` says which field, with no traceback
    path = tmp_path / "bad.json"
    path.write_text(bad_tenhou6, encoding="utf-8")
    assert main(["replay", str(path)]) != 0
    assert "name[2] is not valid Unicode text" in capsys.readouterr().err
