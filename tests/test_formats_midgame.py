"""Records that start at any hand replay from the recorded situation, in all three formats.

A tenhou.net/6 log whose first hand is any hand of a game (review tools
share single hands this way), an mjai log starting at any ``start_kyoku``
and an mjlog cut at the front are taken up where their first hand stands
(round, counters, sticks, dealer, scores), and ``--strict`` compares every
hand and the end of the game as usual. Real games are cut in the test; the
hand-written single hands work without the data.
"""

from __future__ import annotations

import functools
import json
import xml.etree.ElementTree as ET
from collections import Counter

import pytest

from tablesvc.cli import main
from tablesvc.engine.events import GameStart
from tablesvc.formats.mjai import export_mjai, parse_mjai
from tablesvc.formats.mjlog import parse_mjlog
from tablesvc.formats.record import RecordError
from tablesvc.formats.tenhou6 import export_tenhou6, parse_tenhou6, tile_from_code
from tablesvc.replay import Mismatch, load_record, replay
from tests.conftest import MJLOG_DIR

NO_DATA = "../shared/data/tenhou-mjlog not found beside the checkout"
# 15 hands: S1-1 with a stick (hand 4), the West round (W3-1 with a stick, hand 13), W4 last
LONG_GAME = "2020060723gm-00a9-0000-58807e27.mjlog"
# its last hand is S4-3 with a stick on the table
S4_GAME = "2016081523gm-00a9-0000-122c42dc.mjlog"


@functools.cache
def _full(name: str):
    record = load_record(MJLOG_DIR / name)
    return record, replay(record, strict=True)


def _hands(report):
    return [(h.round, h.honba, h.sticks, h.kind, h.deltas) for h in report.hands]


def _check_taken_up(cut, name: str, k: int) -> None:
    """``cut`` (a record of the game from hand k on) starts where hand k did and plays the rest exactly."""
    record, report = _full(name)
    first = record.hands[k]
    start = next(e for e in cut.events if isinstance(e, GameStart))
    assert (start.honba, start.sticks, start.dealer, start.scores) == (first.honba, first.sticks, first.dealer,
                                                                       first.scores)
    again = replay(cut, strict=True)  # every hand's start and deltas, and the final scores, as recorded
    assert _hands(again) == _hands(report)[k:]
    assert again.final is not None and again.final.scores == report.final.scores
    assert [(s.seat, s.place, s.result) for s in again.final.standings] == [
        (s.seat, s.place, s.result) for s in report.final.standings]


needs_data = pytest.mark.skipif(not MJLOG_DIR.is_dir(), reason=NO_DATA)


@pytest.mark.data
@needs_data
@pytest.mark.parametrize(("name", "k"), [(LONG_GAME, 4), (LONG_GAME, 13), (S4_GAME, 14)])
def test_tenhou6_log_starting_at_any_hand(name, k):
    record, report = _full(name)
    doc = json.loads(export_tenhou6(record, report))
    doc["log"] = doc["log"][k:]
    cut = parse_tenhou6(json.dumps(doc, ensure_ascii=False), "cut.json")
    _check_taken_up(cut, name, k)


@pytest.mark.data
@needs_data
def test_tenhou6_single_hand_of_south_4_is_no_longer_refused(capsys, tmp_path):
    """A tenhou.net/6 record holding only its game's South 4 replays from South 4 with its honba, sticks and
    scores, instead of being refused with 'engine starts it at round E1 ...; record says S4'."""
    record, report = _full(S4_GAME)
    doc = json.loads(export_tenhou6(record, report))
    doc["log"] = doc["log"][-1:]
    hand = record.hands[-1]
    assert (hand.round, hand.honba, hand.sticks) == (7, 3, 1)
    path = tmp_path / "s4.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    assert main(["replay", str(path), "--strict", "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines[0] == {"rules": "tenhou", "rules_from": "record"}
    assert (lines[1]["round"], lines[1]["honba"], lines[1]["sticks"]) == ("S4", 3, 1)
    assert lines[1]["deltas"] == list(report.hands[-1].deltas)
    assert lines[-1]["final_scores"] == list(report.final.scores)  # the last hand ends the game, as it did


@pytest.mark.data
@needs_data
@pytest.mark.parametrize(("name", "k"), [(LONG_GAME, 4), (LONG_GAME, 13), (S4_GAME, 14)])
def test_mjai_log_starting_at_any_start_kyoku(name, k):
    record, report = _full(name)
    lines = export_mjai(record, report).splitlines()
    starts = [i for i, line in enumerate(lines) if json.loads(line)["type"] == "start_kyoku"]
    cut = parse_mjai("\n".join([lines[0], *lines[starts[k]:]]), "cut.mjai")
    _check_taken_up(cut, name, k)
    # without start_game at all (a log that begins with the hand)
    bare = parse_mjai("\n".join(lines[starts[k]:]), "bare.mjai")
    assert replay(bare, strict=True, rules="tenhou").final.scores == report.final.scores


def _cut_mjlog(text: str, k: int) -> str:
    """The mjlog without its first k hands: the header (players, rules) kept, INIT k onwards."""
    root = ET.fromstring(text)
    inits = [i for i, el in enumerate(root) if el.tag == "INIT"]
    for el in list(root)[inits[0]:inits[k]]:
        root.remove(el)
    return ET.tostring(root, encoding="unicode")


@pytest.mark.data
@needs_data
@pytest.mark.parametrize(("name", "k"), [(LONG_GAME, 4), (LONG_GAME, 13), (S4_GAME, 14)])
def test_mjlog_cut_at_the_front(name, k):
    cut = parse_mjlog(_cut_mjlog((MJLOG_DIR / name).read_text(encoding="utf-8"), k), "cut.mjlog")
    assert len(cut.hands) == len(_full(name)[0].hands) - k
    _check_taken_up(cut, name, k)


@pytest.mark.data
@needs_data
def test_a_cut_log_whose_later_hand_differs_is_still_caught():
    """Taking the game up at the first hand does not loosen the checks of the hands after it."""
    doc = json.loads(export_tenhou6(*_full(LONG_GAME)))
    doc["log"] = doc["log"][4:]
    doc["log"][1][1][0] += 100  # hand 2's start scores
    cut = parse_tenhou6(json.dumps(doc, ensure_ascii=False), "cut.json")
    with pytest.raises(Mismatch, match=r"hand S1-2: engine starts it at .* scores \[19500, .* record says .* "
                                       r"scores \[19600, "):
        replay(cut, strict=True)


# ====================================================================== hand-written single hands

# South 4, 1 counter, 1 stick; seat 3 deals. Scores 24000 30000 20000 25000 (99000 + 1000 on the table).
# Seat 0 holds 234m 567m 345p 88p 56s and rons the dealer's 4s: pinfu, tanyao, 2 han 30 fu = 2000,
# + 300 for the counter, + 1000 for the stick: seat 0 +3300, seat 3 -2300.
# The dealer lost South 4 and seat 1 has 30000 (Tenhou's return points): the game ends.
# Final 27300 30000 20000 22700; places seat 1, 0, 3, 2; Tenhou uma +20000/+10000/-10000/-20000 and the
# oka (4 x 5000) to first: seat 1 0 + 20000 + 20000 = 40000, seat 0 -2700 + 10000 = 7300,
# seat 3 -7300 - 10000 = -17300, seat 2 -10000 - 20000 = -30000.
HANDS = [
    [12, 13, 14, 15, 16, 17, 23, 24, 25, 28, 28, 35, 36],
    [11, 11, 11, 19, 19, 19, 21, 21, 21, 29, 29, 29, 41],
    [31, 31, 31, 32, 32, 32, 33, 33, 33, 37, 38, 39, 42],
    [43, 43, 43, 44, 44, 44, 45, 45, 45, 46, 46, 46, 47],
]
S4_HAND = {
    "title": ["", ""], "name": ["A", "B", "C", "D"], "rule": {"disp": "般南喰赤", "aka": 1},
    "log": [[[7, 1, 1], [24000, 30000, 20000, 25000], [41], [],
             HANDS[0], [], [], HANDS[1], [], [], HANDS[2], [], [], HANDS[3], [34], [60],
             ["和了", [3300, 0, 0, -2300], [0, 3, 0, "30符2飜2000点", "平和(1飜)", "断幺九(1飜)"]]]],
    "sc": [27300, 7.3, 30000, 40.0, 20000, -30.0, 22700, -17.3],
}
RESULTS = [(1, 1, 40000), (0, 2, 7300), (3, 3, -17300), (2, 4, -30000)]


def test_hand_written_tenhou6_south_4_hand_ends_the_game_with_the_right_uma():
    game = parse_tenhou6(json.dumps(S4_HAND, ensure_ascii=False), "s4.json")
    assert game.events[0] == GameStart(players=("A", "B", "C", "D"), rules="tenhou", round="S4", honba=1,
                                       sticks=1, scores=(24000, 30000, 20000, 25000), dealer=3)
    report = replay(game, strict=True)
    (hand,) = report.hands
    assert hand.deltas == (3300, 0, 0, -2300)
    assert report.final.scores == (27300, 30000, 20000, 22700)
    assert [(s.seat, s.place, s.result) for s in report.final.standings] == RESULTS
    assert json.loads(export_tenhou6(game, report))["log"] == S4_HAND["log"]


def _tiles(codes):
    return [tile_from_code(c).mjai for c in codes]


S4_MJAI = [
    {"type": "start_game", "names": ["A", "B", "C", "D"], "rules": "tenhou"},
    {"type": "start_kyoku", "bakaze": "S", "kyoku": 4, "honba": 1, "kyotaku": 1, "oya": 3, "dora_marker": "E",
     "scores": [24000, 30000, 20000, 25000], "tehais": [_tiles(h) for h in HANDS]},
    {"type": "tsumo", "actor": 3, "pai": "4s"},
    {"type": "dahai", "actor": 3, "pai": "4s", "tsumogiri": True},
    {"type": "hora", "actor": 0, "target": 3, "pai": "4s", "deltas": [3300, 0, 0, -2300]},
    {"type": "end_kyoku"},
    {"type": "end_game", "scores": [27300, 30000, 20000, 22700]},
]


def test_hand_written_mjai_south_4_hand_ends_the_game_with_the_right_uma():
    game = parse_mjai("\n".join(json.dumps(x) for x in S4_MJAI), "s4.mjai")
    assert game.rules == "tenhou"
    report = replay(game, strict=True)
    assert [h.deltas for h in report.hands] == [(3300, 0, 0, -2300)]
    assert [(s.seat, s.place, s.result) for s in report.final.standings] == RESULTS


def test_hand_written_mjai_east_3_hand_plays_on_after_it():
    """A single hand that is not the last: the game goes on (the replay stops with a note), the next dealer set."""
    lines = json.loads(json.dumps(S4_MJAI[:-1]))
    lines[1].update(bakaze="E", kyoku=3, oya=2)
    lines[2:4] = [{"type": "tsumo", "actor": 2, "pai": "4s"}, {"type": "dahai", "actor": 2, "pai": "4s",
                                                               "tsumogiri": True}]
    lines[4].update(target=2)
    lines[4]["deltas"] = [3300, 0, -2300, 0]
    report = replay(parse_mjai("\n".join(json.dumps(x) for x in lines), "e3.mjai"), strict=True)
    assert report.final is None and "before the end of the game" in report.stopped
    assert (report.state.round, report.state.dealer, report.state.honba, report.state.sticks) == (3, 3, 0, 0)
    assert report.state.scores == [27300, 30000, 17700, 25000]


def test_a_dealer_other_than_the_rounds_is_refused_by_tenhou6_and_kept_by_mjai(capsys, tmp_path):
    """tenhou.net/6 writes [round, honba, sticks] and a reader takes the dealer to be the round's (S1: seat 0).
    The South 4 hand above, written as South 1 still dealt by seat 3 (a game taken up so), cannot be written
    in it without a wrong dealer: the export refuses, naming both, and points to mjai, which keeps it."""
    lines = json.loads(json.dumps(S4_MJAI[:-1]))
    lines[1].update(kyoku=1)  # South 1, oya stays 3
    source = tmp_path / "s1.mjai"
    source.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    game = load_record(source)
    assert next(e for e in game.events if isinstance(e, GameStart)).dealer == 3
    report = replay(game, strict=True)
    assert [h.deltas for h in report.hands] == [(3300, 0, 0, -2300)]
    with pytest.raises(RecordError, match=r"hand S1-1 is dealt by seat 3 .* a reader takes the dealer of S1 to be "
                                          r"seat 0\. Write it as mjai"):
        export_tenhou6(game, report)
    # the same through the command line: exit 1, one line saying why, and no file
    out = tmp_path / "s1.json"
    assert main(["replay", str(source), "--export", "tenhou6", str(out)]) == 1
    err = capsys.readouterr().err
    assert "cannot export to tenhou6" in err and "--export mjai" in err and not out.exists()
    # the advice holds: the mjai export keeps the dealer and replays exactly
    again = tmp_path / "again.mjai"
    assert main(["replay", str(source), "--export", "mjai", str(again)]) == 0
    assert json.loads(again.read_text().splitlines()[1])["oya"] == 3
    assert main(["replay", str(again), "--strict"]) == 0
    # the round's own dealer (South 4, seat 3) is written as ever
    assert json.loads(export_tenhou6(*_replayed(S4_MJAI)))["log"] == S4_HAND["log"]


def _replayed(lines):
    game = parse_mjai("\n".join(json.dumps(x) for x in lines), "s4.mjai")
    return game, replay(game, strict=True)


def test_record_errors_for_a_first_hand_that_cannot_be_taken_up():
    doc = json.loads(json.dumps(S4_HAND))
    doc["log"][0][0][0] = 19  # no such round (seat 3 deals, as in S4)
    with pytest.raises(RecordError, match=r"s4\.json: the first hand's round 19 is none"):
        parse_tenhou6(json.dumps(doc, ensure_ascii=False), "s4.json")


def test_mjai_start_game_rules_are_checked():
    bad = [{**S4_MJAI[0], "rules": "tenhuo"}, *S4_MJAI[1:]]
    with pytest.raises(RecordError, match=r"line 1: start_game: rules: .*tenhuo"):
        parse_mjai("\n".join(json.dumps(x) for x in bad), "bad.mjai")




def _mjlog_ids(*groups: list[int]) -> list[list[int]]:
    """Tenhou 136 ids for tenhou.net/6 codes, one copy each time: id = kind x 4 + copy, copy 0 of a five red."""
    used: Counter = Counter()
    out = []
    for codes in groups:
        ids = []
        for code in codes:
            tile = tile_from_code(code)
            if tile.red:
                ids.append(tile.kind * 4)
                continue
            copy = used[tile.kind] + (1 if tile.kind in (4, 13, 22) else 0)
            used[tile.kind] += 1
            ids.append(tile.kind * 4 + copy)
        out.append(ids)
    return out


def _s4_mjlog() -> str:
    """The South 4 hand above as Tenhou's server writes it (scores in hundreds, ids for tiles)."""
    *hands, (draw,), (dora,) = _mjlog_ids(*HANDS, [34], [41])
    hai = {f"hai{s}": ",".join(map(str, hands[s])) for s in range(4)}
    shown = sorted([*hands[0], draw])
    return (
        '<mjloggm ver="2.3"><GO type="169" lobby="0"/>'
        '<UN n0="A" n1="B" n2="C" n3="D" dan="0,0,0,0" rate="1500,1500,1500,1500" sx="M,M,M,M"/>'
        '<TAIKYOKU oya="0"/>'
        f'<INIT seed="7,1,1,2,3,{dora}" ten="240,300,200,250" oya="3" hai0="{hai["hai0"]}" hai1="{hai["hai1"]}" '
        f'hai2="{hai["hai2"]}" hai3="{hai["hai3"]}"/>'
        f'<W{draw}/><G{draw}/>'
        f'<AGARI ba="1,1" hai="{",".join(map(str, shown))}" machi="{draw}" ten="30,2000,0" yaku="7,1,8,1" '
        f'doraHai="{dora}" who="0" fromWho="3" sc="240,33,300,0,200,0,250,-23" '
        'owari="273,7.3,300,40.0,200,-30.0,227,-17.3"/></mjloggm>'
    )


def test_hand_written_mjlog_south_4_hand_ends_the_game_with_the_right_uma():
    game = parse_mjlog(_s4_mjlog(), "s4.mjlog")
    assert game.events[0] == GameStart(players=("A", "B", "C", "D"), rules="tenhou", round="S4", honba=1,
                                       sticks=1, scores=(24000, 30000, 20000, 25000), dealer=3)
    report = replay(game, strict=True)
    assert [h.deltas for h in report.hands] == [(3300, 0, 0, -2300)]
    assert report.final.scores == (27300, 30000, 20000, 22700)
    assert [(s.seat, s.place, s.result) for s in report.final.standings] == RESULTS
