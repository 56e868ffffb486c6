"""Fuzzing the three importers: whatever the file holds, the only error is RecordError, with a reason.

Files are made by mutating real and hand-written records (a field replaced by
any JSON value or XML attribute text, lines or elements dropped, repeated or
swapped) and from scratch. Reading one either gives a record or raises
:class:`RecordError` naming the file; playing a record that was read either
plays or stops with :class:`Mismatch` (the engine's refusal or a difference
from the record) or :class:`RecordError` (red fives under rules without them).
No other exception escapes, and no refusal is without a message.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablesvc.formats.mjai import MJAI_TILES, export_mjai, parse_mjai
from tablesvc.formats.mjlog import parse_mjlog
from tablesvc.formats.record import RecordError
from tablesvc.formats.tenhou6 import parse_tenhou6
from tablesvc.replay import Mismatch, replay
from tests.conftest import MJLOG_DIR
from tests.test_formats_midgame import S4_HAND, S4_MJAI
from tests.test_tenhou6_calls import DOC as CALLS_DOC

FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                derandomize=True)

_LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 140), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8), st.sampled_from(sorted(MJAI_TILES)), st.sampled_from(["?", "60", "r60", "0m", "5z"]),
    st.sampled_from([0, 60, 11, 19, 29, 39, 47, 51, 52, 53, 10, 48, 99]),
    st.sampled_from(["c275226", "p474747", "12p1212", "3737p37", "m39393939", "26m262626", "131313m13",
                     "k16161616", "41k414141", "4646k4646", "424242a42", "r60", "r35", "pp", "c", "a", "k", "m"]),
    st.sampled_from(["和了", "流局", "全員聴牌", "全員不聴", "流し満貫", "九種九牌", "四風連打", "三家和了",
                     "四家立直"]),
)
_JSON = st.recursive(_LEAF, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(
    st.sampled_from(["type", "actor", "target", "pai", "consumed", "tsumogiri", "scores", "deltas", "kyoku",
                     "bakaze", "honba", "kyotaku", "oya", "tehais", "dora_marker", "names", "rules", "reason"]),
    inner, max_size=5), max_leaves=12)


def _mutate(data: st.DataObject, value):
    """``value`` with one random change somewhere inside it."""
    if isinstance(value, list) and value and data.draw(st.integers(0, 3)):
        i = data.draw(st.integers(0, len(value) - 1))
        how = data.draw(st.sampled_from(["deeper", "deeper", "drop", "repeat", "swap"]))
        out = list(value)
        if how == "deeper":
            out[i] = _mutate(data, out[i])
        elif how == "drop":
            del out[i]
        elif how == "repeat":
            out.insert(i, out[i])
        else:
            j = data.draw(st.integers(0, len(value) - 1))
            out[i], out[j] = out[j], out[i]
        return out
    if isinstance(value, dict) and value and data.draw(st.integers(0, 3)):
        key = data.draw(st.sampled_from(sorted(value)))
        out = dict(value)
        if data.draw(st.booleans()):
            out[key] = _mutate(data, out[key])
        else:
            del out[key]
        return out
    return data.draw(_JSON)


def _check(read, text: str, source: str) -> None:
    refusal = None
    try:
        record = read(text, source)
    except RecordError as exc:
        refusal = str(exc)
    if refusal is not None:
        assert refusal.startswith(f"{source}: ") and len(refusal) > len(source) + 8, refusal
        return
    stop = None
    try:
        replay(record)
    except (Mismatch, RecordError) as exc:
        stop = str(exc)
    assert stop is None or len(stop) > 8, stop


def _mutations(data: st.DataObject, value, times: int = 3):
    for _ in range(data.draw(st.integers(1, times))):
        value = _mutate(data, value)
    return value


# ---------------------------------------------------------------- tenhou.net/6


@FUZZ
@given(st.data())
def test_tenhou6_mutated_logs(data):
    base = data.draw(st.sampled_from([CALLS_DOC, S4_HAND]))
    doc = _mutations(data, json.loads(json.dumps(base)))
    _check(parse_tenhou6, json.dumps(doc, ensure_ascii=False), "fuzz.json")


@FUZZ
@given(_JSON)
def test_tenhou6_any_json(doc):
    _check(parse_tenhou6, json.dumps(doc, ensure_ascii=False), "fuzz.json")
    _check(parse_tenhou6, json.dumps({"log": doc}, ensure_ascii=False), "fuzz.json")


# ---------------------------------------------------------------- mjai


def _calls_mjai() -> list[dict]:
    game = parse_tenhou6(json.dumps(CALLS_DOC, ensure_ascii=False), "calls.json")
    return [json.loads(x) for x in export_mjai(game, replay(game)).splitlines()]


MJAI_BASES = [S4_MJAI, _calls_mjai()]


@FUZZ
@given(st.data())
def test_mjai_mutated_logs(data):
    lines = _mutations(data, json.loads(json.dumps(data.draw(st.sampled_from(MJAI_BASES)))), times=4)
    if not isinstance(lines, list):
        lines = [lines]
    text = "\n".join(json.dumps(x, ensure_ascii=False) for x in lines)
    _check(parse_mjai, text, "fuzz.mjai")


@FUZZ
@given(st.lists(_JSON, max_size=6), st.text(max_size=30))
def test_mjai_any_lines(lines, raw):
    _check(parse_mjai, "\n".join(json.dumps(x) for x in lines), "fuzz.mjai")
    _check(parse_mjai, raw, "fuzz.mjai")


# ---------------------------------------------------------------- mjlog

_TAGS = ["SHUFFLE", "GO", "UN", "TAIKYOKU", "INIT", "T12", "D12", "U40", "E40", "V7", "F7", "W135", "G135",
         "N", "REACH", "DORA", "AGARI", "RYUUKYOKU", "BYE", "T999", "Dx"]
_ATTRS = ["seed", "ten", "oya", "hai0", "hai1", "hai2", "hai3", "who", "m", "step", "hai", "sc", "owari",
          "fromWho", "machi", "doraHai", "doraHaiUra", "type", "n0", "n1", "n2", "n3", "ba", "ten"]
_ATTR_VALUES = st.one_of(
    st.text(max_size=10), st.integers(-5, 200).map(str), st.integers().map(str),
    st.lists(st.integers(-2, 140), max_size=14).map(lambda v: ",".join(map(str, v))),
    st.sampled_from(["0,0,0,3,1,52", "250,0,250,0,250,0,250,0", "0", "1", "2", "3", "yao9", "ron3", "nm",
                     "reach4", "kan4", "kaze4", "ron3", "%41", "1,2,3,4,5,6,7,8", "34567", "41513"]),
)


def _element(data: st.DataObject) -> ET.Element:
    el = ET.Element(data.draw(st.sampled_from(_TAGS)))
    for name in data.draw(st.lists(st.sampled_from(_ATTRS), max_size=5, unique=True)):
        el.set(name, data.draw(_ATTR_VALUES))
    return el


def _mutate_xml(data: st.DataObject, root: ET.Element) -> None:
    children = list(root)
    how = data.draw(st.sampled_from(["attr", "attr", "attr", "drop", "repeat", "swap", "insert"]))
    if not children or how == "insert":
        root.insert(data.draw(st.integers(0, len(children))), _element(data))
        return
    i = data.draw(st.integers(0, len(children) - 1))
    el = children[i]
    if how == "attr":
        name = data.draw(st.sampled_from(sorted(el.attrib) or _ATTRS))
        if el.attrib and data.draw(st.integers(0, 4)) == 0:
            el.attrib.pop(name, None)
        else:
            el.set(name, data.draw(_ATTR_VALUES))
    elif how == "drop":
        root.remove(el)
    elif how == "repeat":
        root.insert(i, ET.fromstring(ET.tostring(el)))
    else:
        j = data.draw(st.integers(0, len(children) - 1))
        root[i], root[j] = children[j], children[i]


@FUZZ
@given(st.data())
def test_mjlog_made_from_scratch(data):
    root = ET.Element("mjloggm", ver="2.3")
    for _ in range(data.draw(st.integers(0, 12))):
        root.append(_element(data))
    _check(parse_mjlog, ET.tostring(root, encoding="unicode"), "fuzz.mjlog")


@pytest.mark.data
@pytest.mark.skipif(not (MJLOG_DIR / "double-ron.mjlog").is_file(), reason="../shared/data/tenhou-mjlog not found")
@FUZZ
@given(st.data())
def test_mjlog_mutated_real_game(data):
    root = ET.fromstring((MJLOG_DIR / "double-ron.mjlog").read_text(encoding="utf-8"))
    for _ in range(data.draw(st.integers(1, 3))):
        _mutate_xml(data, root)
    _check(parse_mjlog, ET.tostring(root, encoding="unicode"), "fuzz.mjlog")


@FUZZ
@given(st.text(max_size=60))
def test_mjlog_any_text(text):
    _check(parse_mjlog, text, "fuzz.mjlog")
