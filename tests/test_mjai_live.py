"""The live mjai stream is the game an mjai reader reconstructs, hand by hand."""

import json

import pytest

from tablesvc.engine.engine import Engine
from tablesvc.formats.mjai import parse_mjai
from tablesvc.formats.mjai_live import MjaiStream, capture
from tablesvc.replay import load_record, replay
from tests.conftest import mjlog_files
from tests.feed_schemas import validate

FILES = [p for p in mjlog_files() if "owari" in p.read_text()][:12]


def live_stream(record):
    engine = Engine()
    stream = MjaiStream()
    lines = []
    for event in record.events:
        before = capture(engine.state, event)
        outputs = engine.apply(event)
        lines.extend(stream.messages(event, before, outputs))
    return lines


@pytest.mark.skipif(not FILES, reason="../shared/data/tenhou-mjlog not found")
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_live_stream_reads_back_as_the_same_game(path):
    record = load_record(path)
    lines = live_stream(record)
    assert lines[0]["type"] == "start_game" and lines[-1]["type"] == "end_game"
    assert [problem for line in lines for problem in validate("mjai", line)] == []  # docs/schemas/mjai.json
    again = parse_mjai("".join(json.dumps(x) + "\n" for x in lines), "live")
    report = replay(again, strict=True, rules="tenhou")
    assert [h.deltas for h in report.hands] == [h.deltas for h in record.hands if h.deltas is not None]
    assert report.final is not None and report.final.scores == record.final_scores


@pytest.mark.skipif(not FILES, reason="../shared/data/tenhou-mjlog not found")
def test_riichi_order_is_reach_dahai_then_reach_accepted():
    lines = live_stream(load_record(FILES[0]))
    for i, line in enumerate(lines):
        if line["type"] == "reach":
            assert lines[i + 1]["type"] == "dahai" and lines[i + 1]["actor"] == line["actor"]
            after = [x["type"] for x in lines[i + 2:i + 4]]
            assert "reach_accepted" in after or "hora" in after
