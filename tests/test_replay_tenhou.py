"""The engine on real games: every recorded Tenhou game replays with every hand's deltas exact."""

import pytest

from tablesvc.formats.mjlog import parse_mjlog
from tablesvc.replay import Mismatch, load_record, replay
from tests.conftest import mjlog_files

FILES = mjlog_files()


@pytest.mark.skipif(not FILES, reason="../shared/data/tenhou-mjlog not found beside the checkout")
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_recorded_game_replays_exactly(path):
    record = load_record(path)
    report = replay(record, strict=True)
    played = [h for h in record.hands if h.deltas is not None]
    assert len(report.hands) == len(played)
    assert [h.deltas for h in report.hands] == [h.deltas for h in played]
    if record.final_scores is not None:
        assert report.final is not None and report.final.scores == record.final_scores
        assert sum(s.result for s in report.final.standings) == 0
    else:
        assert report.final is None and report.stopped  # a file cut short stops with a message


@pytest.mark.skipif(not FILES, reason="../shared/data/tenhou-mjlog not found beside the checkout")
def test_cut_files_say_where_they_stop(mjlog_dir):
    report = replay(load_record(mjlog_dir / "2011020401gm-00a9-0000-f6eff225-no-round-end.mjlog"))
    assert report.stopped == "the record ends in the middle of hand 8 (S4-0), before its result"
    report = replay(load_record(mjlog_dir / "2011020401gm-00a9-0000-f6eff225-no-game-end.mjlog"))
    assert report.final is None and "before" in report.stopped


@pytest.mark.skipif(not FILES, reason="../shared/data/tenhou-mjlog not found beside the checkout")
def test_a_changed_delta_is_caught_naming_the_hand(mjlog_dir):
    record = load_record(mjlog_dir / "double-ron.mjlog")
    first = next(h for h in record.hands if h.deltas is not None)
    first.deltas = (first.deltas[0] + 100, first.deltas[1] - 100, first.deltas[2], first.deltas[3])
    with pytest.raises(Mismatch, match=r"hand 1 \(E1-0\): deltas .* record says"):
        replay(record, strict=True)


def test_not_xml_is_a_clear_error():
    with pytest.raises(ValueError, match="not Tenhou mjlog XML"):
        parse_mjlog("<mjloggm><INIT", "broken.mjlog")
