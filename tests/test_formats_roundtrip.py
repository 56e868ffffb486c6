"""mjai and tenhou.net/6: real games exported and read back play the same, and the files follow the formats.

Every complete recorded Tenhou game (and a few cut ones) goes mjlog -> engine
-> mjai -> engine and mjlog -> engine -> tenhou.net/6 -> engine: the same
hands (kind and deltas), the same final scores, the same moves; a second
export of the re-import is byte for byte the first. The mjai file of a known
game is checked line by line against the protocol (the order servers emit
riichi and kan dora in, the fields of each event). Unit tests cover the
readers' errors and the choices the formats leave open, without the data.
"""

from __future__ import annotations

import functools
import itertools
import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from tablesvc.engine.events import (
    AbortiveDraw,
    Call,
    DeadHand,
    DiceRolled,
    Discard,
    DoraRevealed,
    Draw,
    EndGame,
    ExhaustiveDraw,
    GameStart,
    HandStart,
    Ron,
    RonClaim,
    Tsumo,
)
from tablesvc.formats.mjai import MJAI_TILES, export_mjai, parse_mjai
from tablesvc.formats.record import RecordError
from tablesvc.formats.tenhou6 import export_tenhou6, parse_tenhou6, tile_code, tile_from_code
from tablesvc.replay import load_record, replay
from tablesvc.tiles import Tile, parse_tiles
from tests.conftest import mjlog_files

FILES = mjlog_files()
NO_DATA = "../shared/data/tenhou-mjlog not found beside the checkout"


@functools.cache
def _record(path: Path):
    """Each file read once per process: the complete games are picked at collection, and the same records
    are played and exported by every test of the file."""
    return load_record(path)


_COMPLETE = [p for p in FILES if _record(p).final_scores is not None]
# cut files that end on the special results: mid-hand, between hands, nagashi, triple ron, four riichi,
# four kans, nine terminals, a kan robbed twice
_CUT_NAMES = (
    "2011020401gm-00a9-0000-f6eff225-no-round-end.mjlog",
    "2011020401gm-00a9-0000-f6eff225-no-game-end.mjlog",
    "upd-aft-nm.mjlog",
    "upd-aft-ron3.mjlog",
    "upd-aft-reach4.mjlog",
    "upd-aft-kan4.mjlog",
    "obs-draw-kyuusyu.mjlog",
    "upd-bef-chankan-twice.mjlog",
)
_CUT = [p for p in FILES if p.name in _CUT_NAMES]
GAMES = _COMPLETE + _CUT
KNOWN_GAME = "2016052515gm-00a9-0000-c4d72066.mjlog"  # riichi, a concealed kan, two added kans in a row, 4 kans


@functools.cache
def _played(path: Path):
    record = _record(path)
    return record, replay(record, strict=True)


@functools.cache
def _mjai_text(path: Path) -> str:
    """The game's mjai export, made once and read by every test that checks it."""
    return export_mjai(*_played(path))


@functools.cache
def _tenhou6_text(path: Path) -> str:
    """The game's tenhou.net/6 export, made once and read by every test that checks it."""
    return export_tenhou6(*_played(path))


def _hands(report):
    return [(h.kind, h.deltas) for h in report.hands]


def _final(report):
    return report.final.scores if report.final is not None else None


def _moves(events):
    """The events a format can carry: no dice; winning hands shown and the rule name are not in the files."""
    out = []
    for e in events:
        if isinstance(e, DiceRolled):
            continue
        if isinstance(e, GameStart):
            e = replace(e, rules="-")
        elif isinstance(e, Ron):
            e = replace(e, claims=tuple(RonClaim(c.seat) for c in sorted(e.claims, key=lambda c: c.seat)))
        elif isinstance(e, Tsumo):
            e = replace(e, hand=None)
        out.append(e)
    return out


# ====================================================================== real games


@pytest.mark.data
@pytest.mark.skipif(not FILES, reason=NO_DATA)
@pytest.mark.parametrize("path", GAMES, ids=[p.name for p in GAMES])
def test_mjai_export_reads_back_and_plays_the_same(path):
    record, report = _played(path)
    text = _mjai_text(path)
    again = parse_mjai(text, f"{path.stem}.mjai")
    assert again.rules == record.rules == "tenhou"  # our start_game says
    report2 = replay(again, strict=True)  # strict: every hora/ryukyoku delta agrees
    assert _hands(report2) == _hands(report)
    assert _final(report2) == _final(report)
    assert [h.deltas for h in again.hands] == [h.deltas for h in record.hands]
    assert again.final_scores == (report.final.scores if report.final else None)
    assert again.players == record.players
    assert _moves(again.events) == _moves(record.events)
    assert export_mjai(again, report2) == text


@pytest.mark.data
@pytest.mark.skipif(not FILES, reason=NO_DATA)
@pytest.mark.parametrize("path", GAMES, ids=[p.name for p in GAMES])
def test_mjai_with_only_mortals_fields_plays_the_same(path):
    """Mortal's server writes less: hora without pai or scores, ryukyoku with deltas alone, bare end_game."""
    record, report = _played(path)
    keep = {"hora": ("type", "actor", "target", "deltas", "ura_markers"), "ryukyoku": ("type", "deltas"),
            "reach_accepted": ("type", "actor"), "end_game": ("type",)}
    lines = []
    for line in _mjai_text(path).splitlines():
        ev = json.loads(line)
        if ev["type"] in keep:
            ev = {k: ev[k] for k in keep[ev["type"]]}
        lines.append(json.dumps(ev))
    again = parse_mjai("\n".join(lines), f"{path.stem}.mjai")
    assert again.final_scores is None
    report2 = replay(again, rules=record.rules)
    assert not report2.mismatches
    assert [(h.kind, h.draw, h.deltas) for h in report2.hands] == [(h.kind, h.draw, h.deltas) for h in report.hands]
    assert _final(report2) == _final(report)


@pytest.mark.data
@pytest.mark.skipif(not FILES, reason=NO_DATA)
@pytest.mark.parametrize("path", GAMES, ids=[p.name for p in GAMES])
def test_tenhou6_export_reads_back_and_plays_the_same(path):
    record, report = _played(path)
    text = _tenhou6_text(path)
    again = parse_tenhou6(text, f"{path.stem}.json")
    assert again.rules == "tenhou"  # 般南喰赤
    report2 = replay(again, strict=True)
    assert _hands(report2) == _hands(report)
    assert _final(report2) == _final(report)
    assert [h.deltas for h in again.hands] == [h.deltas for h in record.hands]
    assert _moves(again.events) == _moves(record.events)
    assert export_tenhou6(again, report2) == text


@pytest.mark.data
@pytest.mark.skipif(not FILES, reason=NO_DATA)
def test_exported_files_are_recognised_by_load_record(mjlog_dir, tmp_path):
    report = _played(mjlog_dir / KNOWN_GAME)[1]
    (tmp_path / "game.mjai").write_text(_mjai_text(mjlog_dir / KNOWN_GAME), encoding="utf-8")
    (tmp_path / "game.json").write_text(_tenhou6_text(mjlog_dir / KNOWN_GAME), encoding="utf-8")
    for name, rules in (("game.mjai", "tenhou"), ("game.json", None)):
        again = load_record(tmp_path / name)
        assert _hands(replay(again, strict=True, rules=rules)) == _hands(report)


def _mjai_lines(mjlog_dir, name):
    record, report = _played(mjlog_dir / name)
    return record, report, [json.loads(line) for line in _mjai_text(mjlog_dir / name).splitlines()]


@pytest.mark.data
@pytest.mark.skipif(not FILES, reason=NO_DATA)
def test_mjai_export_follows_the_protocol(mjlog_dir):
    record, report, lines = _mjai_lines(mjlog_dir, KNOWN_GAME)
    assert lines[0] == {"type": "start_game", "names": list(record.players), "rules": "tenhou"}
    start = lines[1]
    assert list(start) == ["type", "bakaze", "dora_marker", "kyoku", "honba", "kyotaku", "oya", "scores", "tehais"]
    assert (start["bakaze"], start["kyoku"], start["honba"], start["kyotaku"], start["oya"]) == ("E", 1, 0, 0, 0)
    assert start["scores"] == [25000] * 4
    first_deal = next(e for e in record.events if isinstance(e, HandStart)).hands
    assert start["tehais"] == [[t.mjai for t in hand] for hand in first_deal]
    assert lines[2]["type"] == "tsumo" and lines[2]["actor"] == 0
    assert lines[-2] == {"type": "end_kyoku"}
    assert lines[-1] == {"type": "end_game", "scores": list(report.final.scores)}

    def tiles_of(ev):
        for key in ("pai", "dora_marker"):
            if key in ev:
                yield ev[key]
        for key in ("consumed", "ura_markers"):
            yield from ev.get(key, [])
        for hand in ev.get("tehais", []):
            yield from hand

    assert all(t in MJAI_TILES for ev in lines for t in tiles_of(ev) if t != "?")
    for ev in lines:
        if ev["type"] == "dahai":
            assert set(ev) == {"type", "actor", "pai", "tsumogiri"} and isinstance(ev["tsumogiri"], bool)
        if ev["type"] in ("chi", "pon", "daiminkan"):
            assert set(ev) == {"type", "actor", "target", "pai", "consumed"}
            assert len(ev["consumed"]) == (3 if ev["type"] == "daiminkan" else 2)
        if ev["type"] == "kakan":
            assert set(ev) == {"type", "actor", "pai", "consumed"} and len(ev["consumed"]) == 3
        if ev["type"] == "ankan":
            assert set(ev) == {"type", "actor", "consumed"} and len(ev["consumed"]) == 4


def _check_riichi_order(lines):
    """reach -> dahai -> reach_accepted, the stick placed just before the next draw or call."""
    seen = 0
    for i, ev in enumerate(lines):
        if ev["type"] == "reach":
            seen += 1
            actor = ev["actor"]
            assert lines[i + 1]["type"] == "dahai" and lines[i + 1]["actor"] == actor
            after = lines[i + 2]
            if after["type"] == "hora":  # the riichi discard was won on: no stick
                assert after["target"] == actor
                continue
            deltas = [0, 0, 0, 0]
            deltas[actor] = -1000
            assert after["type"] == "reach_accepted" and after["actor"] == actor
            assert after["deltas"] == deltas
            assert lines[i + 3]["type"] in ("tsumo", "chi", "pon", "daiminkan", "ryukyoku")
        if ev["type"] == "reach_accepted":
            assert lines[i - 2]["type"] == "reach" and lines[i - 2]["actor"] == ev["actor"]
    return seen


def _check_kan_dora(lines):
    """A concealed kan's dora follows it; an open or added kan's comes just before that player's next discard."""
    kans = 0
    for i, ev in enumerate(lines):
        if ev["type"] == "ankan":
            kans += 1
            assert lines[i + 1]["type"] == "dora"
            assert lines[i + 2]["type"] in ("tsumo", "hora", "dora")
        if ev["type"] in ("daiminkan", "kakan"):
            kans += 1
            actor = ev["actor"]
            assert lines[i + 1]["type"] in ("tsumo", "hora", "dora")
            j = i + 1
            while j < len(lines) and lines[j]["type"] not in ("dahai", "end_kyoku", "ankan"):
                j += 1
            if lines[j]["type"] in ("dahai", "ankan"):  # (reach), dora, dahai
                assert lines[j]["actor"] == actor
                assert lines[j - 1]["type"] == "dora", lines[i:j + 1]
    return kans


def _check_results(lines, report):
    """hora/ryukyoku carry the engine's deltas and scores; scores run on from hand to hand."""
    hands = iter(report.hands)
    scores = None
    for i, ev in enumerate(lines):
        if ev["type"] == "start_kyoku":
            if scores is not None:
                assert ev["scores"] == scores
            scores = list(ev["scores"])
            rows = []
        elif ev["type"] == "reach_accepted":
            scores = [s + d for s, d in zip(scores, ev["deltas"], strict=True)]
            assert ev["scores"] == scores
        elif ev["type"] in ("hora", "ryukyoku"):
            if ev["type"] == "hora":
                assert set(ev) == {"type", "actor", "target", "pai", "ura_markers", "deltas", "scores"}
                assert ev["pai"] in MJAI_TILES
            scores = [s + d for s, d in zip(scores, ev["deltas"], strict=True)]
            assert ev["scores"] == scores
            rows.append(ev["deltas"])
            if lines[i + 1]["type"] == "end_kyoku":
                hand = next(hands)
                assert [sum(col) for col in zip(*rows, strict=True)] == list(hand.deltas)
                assert scores == list(hand.scores)
    assert next(hands, None) is None


@pytest.mark.data
@pytest.mark.skipif(not FILES, reason=NO_DATA)
@pytest.mark.parametrize("name", [KNOWN_GAME, "double-ron.mjlog", "2011020415gm-00a9-0000-e037b629.mjlog",
                                  "upd-aft-reach4.mjlog", "upd-bef-chankan-twice.mjlog"])
def test_mjai_riichi_kan_dora_and_results_are_where_servers_put_them(mjlog_dir, name):
    if not (mjlog_dir / name).exists():
        pytest.skip(f"{name} not in the data")
    _, report, lines = _mjai_lines(mjlog_dir, name)
    riichi = _check_riichi_order(lines)
    kans = _check_kan_dora(lines)
    _check_results(lines, report)
    if name == KNOWN_GAME:
        assert riichi > 0 and kans >= 4
        # two added kans in a row: kakan, tsumo, kakan, dora (the first's, at the draw), tsumo, dora, dahai
        types = [ev["type"] for ev in lines]
        at = next(i for i in range(len(types)) if types[i:i + 3] == ["kakan", "tsumo", "kakan"])
        assert types[at:at + 7] == ["kakan", "tsumo", "kakan", "dora", "tsumo", "dora", "dahai"]


@pytest.mark.data
@pytest.mark.skipif(not FILES, reason=NO_DATA)
def test_double_ron_rows_are_split_as_tenhou_writes_them(mjlog_dir):
    """Each winner of a double ron gets its own deltas; Tenhou's own per-winner figures are the reference."""
    checked = 0
    for path in GAMES:
        root = ET.fromstring(path.read_text(encoding="utf-8"))
        tags = list(root)
        tenhou_rows = []
        for a, b in itertools.pairwise(tags):
            if a.tag == b.tag == "AGARI":
                tenhou_rows.append([_sc_deltas(a), _sc_deltas(b)])
        if not tenhou_rows:
            continue
        lines = [json.loads(line) for line in _mjai_text(path).splitlines()]
        ours = [[lines[i]["deltas"], lines[i + 1]["deltas"]] for i in range(len(lines) - 1)
                if lines[i]["type"] == lines[i + 1]["type"] == "hora"]
        assert ours == tenhou_rows
        t6 = json.loads(_tenhou6_text(path))
        assert [[k[16][1], k[16][3]] for k in t6["log"] if k[16] and len(k[16]) == 5] == tenhou_rows
        checked += len(ours)
    assert checked >= 1


def _sc_deltas(agari):
    v = [int(x) * 100 for x in agari.get("sc").split(",")]
    return v[1::2]


@pytest.mark.data
@pytest.mark.skipif(not FILES, reason=NO_DATA)
def test_tenhou6_export_writes_the_format(mjlog_dir):
    record, report = _played(mjlog_dir / "double-ron.mjlog")
    doc = json.loads(_tenhou6_text(mjlog_dir / "double-ron.mjlog"))
    assert list(doc) == ["title", "name", "rule", "log", "sc"]
    assert doc["rule"] == {"disp": "般南喰赤", "aka": 1}
    assert doc["name"] == list(record.players)
    assert doc["sc"][0::2] == list(report.final.scores)
    first = doc["log"][0]
    assert len(first) == 17 and first[0] == [0, 0, 0] and first[1] == [25000] * 4
    for seat in range(4):
        assert len(first[4 + 3 * seat]) == 13
        assert all(tile_from_code(c) is not None for c in first[4 + 3 * seat])
    win = first[16]
    assert win[0] == "和了" and win[1] == list(report.hands[0].deltas)
    who, source, pao, value, *yaku = win[2]
    assert who == source == pao == 1  # a tsumo, no pao
    assert value == "跳満3000-6000点" and "立直(1飜)" in yaku and "一発(1飜)" in yaku
    assert doc["log"][1][16] == ["流局", list(report.hands[1].deltas)]


# ====================================================================== mjai reading, without the data

DEAL = ["1m 9m 1p 9p 1s 9s E S W N P F 2m", "2m 3m 4m 2p 3p 4p 2s 3s 4s 5m 6m 7m 8p",
        "3m 4m 5m 3p 4p 5p 3s 4s 5s 6p 7p 8s 8s", "6m 7m 8m 6p 7p 8p 6s 7s 8s 2p 3p 4p C"]


def _start_kyoku(tehais=None, **extra):
    hands = tehais or [[t.mjai for t in parse_tiles(h)] for h in DEAL]
    return {"type": "start_kyoku", "bakaze": "E", "dora_marker": "1m", "kyoku": 1, "honba": 0, "kyotaku": 0,
            "oya": 0, "scores": [25000] * 4, "tehais": hands, **extra}


def _lines(*events):
    return "\n".join(json.dumps(e) for e in events) + "\n"


def _head(names=("A", "B", "C", "D")):
    return [{"type": "start_game", "names": list(names)}, _start_kyoku()]


def test_mjai_bad_json_names_the_line():
    text = _lines(*_head()) + '{"type": "tsumo", "actor": 0,\n'
    with pytest.raises(RecordError, match=r"game\.mjai: line 3: not JSON"):
        parse_mjai(text, "game.mjai")


def test_mjai_unknown_event_type_names_the_line_and_the_type():
    with pytest.raises(RecordError, match=r"line 2: unknown mjai event type 'shuffle'"):
        parse_mjai(_lines({"type": "start_game"}, {"type": "shuffle"}), "g")
    with pytest.raises(RecordError, match=r"line 1: an mjai event needs a \"type\""):
        parse_mjai(_lines({"actor": 0}), "g")


@pytest.mark.parametrize(("event", "message"), [
    ({"type": "tsumo", "actor": 0, "pai": "5x"}, r"line 3: tsumo: pai: '5x' is not an mjai tile"),
    ({"type": "tsumo", "actor": 0, "pai": "0m"}, r"'0m' is not an mjai tile"),  # compact notation, not mjai
    ({"type": "tsumo", "actor": 0, "pai": "1z"}, r"'1z' is not an mjai tile"),
    ({"type": "dahai", "actor": 0, "pai": "?", "tsumogiri": True}, r"dahai: pai: '\?' is not an mjai tile"),
    ({"type": "pon", "actor": 1, "target": 0, "pai": "E", "consumed": ["E"]}, r"consumed must be a list of 2"),
    ({"type": "dora", "dora_marker": 5}, r"dora: dora_marker: 5 is not an mjai tile"),
    ({"type": "tsumo", "actor": 4, "pai": "1m"}, r"tsumo: actor must be a seat 0\.\.3, not 4"),
    ({"type": "dahai", "actor": 0, "pai": "1m", "tsumogiri": "yes"}, r"tsumogiri must be true or false"),
    ({"type": "ryukyoku", "reason": "bored"}, r"ryukyoku: unknown reason 'bored'"),
])
def test_mjai_field_errors_name_line_event_and_field(event, message):
    with pytest.raises(RecordError, match=message):
        parse_mjai(_lines(*_head(), event), "g")


def test_mjai_hand_errors():
    bad = [[t.mjai for t in parse_tiles(h)] for h in DEAL]
    bad[2] = bad[2][:12]
    with pytest.raises(RecordError, match=r"start_kyoku: tehais\[2\] must be a list of 13 tiles"):
        parse_mjai(_lines({"type": "start_game"}, _start_kyoku(bad)), "g")
    with pytest.raises(RecordError, match=r"kyoku must be a whole number 1\.\.4"):
        parse_mjai(_lines({"type": "start_game"}, _start_kyoku(kyoku=0)), "g")
    with pytest.raises(RecordError, match="no mjai events"):
        parse_mjai("\n\n", "g")


def test_mjai_events_map_to_ours():
    text = _lines(
        *_head(),
        {"type": "tsumo", "actor": 0, "pai": "C"},
        {"type": "reach", "actor": 0},
        {"type": "dahai", "actor": 0, "pai": "2m", "tsumogiri": False},
        {"type": "hora", "actor": 1, "target": 0, "pai": "2m", "deltas": [-3900, 3900, 0, 0],
         "uradora_markers": ["5p"]},
        {"type": "hora", "actor": 2, "target": 0, "pai": "2m", "deltas": [-2000, 0, 2000, 0]},
        {"type": "end_kyoku"},
    )
    game = parse_mjai(text, "g")
    assert game.players == ("A", "B", "C", "D") and game.rules is None
    events = game.events
    # the default rules (mjai does not say), taken up where the first start_kyoku stands
    assert events[0] == GameStart(players=("A", "B", "C", "D"), scores=(25000, 25000, 25000, 25000), dealer=0)
    assert isinstance(events[1], HandStart) and events[1].hands[0] == tuple(parse_tiles(DEAL[0]))
    assert events[2] == DoraRevealed(tile=Tile.of(0))
    assert events[3] == Draw(seat=0, tile=parse_tiles("C")[0])
    assert events[4] == Discard(seat=0, tile=parse_tiles("2m")[0], riichi=True, tsumogiri=False)
    assert events[5] == Ron(from_seat=0, claims=(RonClaim(1), RonClaim(2)), ura=tuple(parse_tiles("5p")))
    hand = game.hands[0]
    assert (hand.round, hand.honba, hand.sticks, hand.dealer) == (0, 0, 0, 0)
    assert hand.deltas == (-5900, 3900, 2000, 0) and hand.end_event == 5


def test_mjai_gimite_tenhou_uri_tells_the_rules_and_arrays_are_read():
    text = json.dumps([{"type": "start_game", "names": ["a", "b", "c", "d"],
                        "uri": "http://tenhou.net/0/?log=2011020401gm-00a9-0000-f6eff225"}, {"type": "none"}])
    game = parse_mjai(text, "g")
    assert game.rules == "tenhou" and game.events == [GameStart(players=("a", "b", "c", "d"), rules="tenhou")]


def _draw_game(ryukyoku, *before):
    game = parse_mjai(_lines(*_head(), *before, ryukyoku), "g")
    return game.events[-1], game.hands[-1].deltas


def test_mjai_tenpai_at_a_draw_from_flags_hands_or_payments():
    flags = {"type": "ryukyoku", "reason": "fanpai", "tenpais": [True, False, True, False],
             "deltas": [1500, -1500, 1500, -1500]}
    assert _draw_game(flags) == (ExhaustiveDraw(tenpai=(True, False, True, False)), (1500, -1500, 1500, -1500))
    shown = {"type": "ryukyoku", "tehais": [["?"] * 13, ["1m"] * 13, ["?"] * 13, ["?"] * 10]}
    assert _draw_game(shown)[0].tenpai == (False, True, False, False)
    paid = {"type": "ryukyoku", "deltas": [-1000, -1000, 3000, -1000]}
    assert _draw_game(paid)[0].tenpai == (False, False, True, False)


def test_mjai_no_money_moved_means_all_tenpai_with_a_riichi_else_none():
    quiet = {"type": "ryukyoku", "reason": "fanpai", "deltas": [0, 0, 0, 0]}
    assert _draw_game(quiet)[0].tenpai == (False, False, False, False)
    riichi = [{"type": "tsumo", "actor": 0, "pai": "C"}, {"type": "reach", "actor": 0},
              {"type": "dahai", "actor": 0, "pai": "2m", "tsumogiri": False}]
    assert _draw_game(quiet, *riichi)[0].tenpai == (True, True, True, True)


def test_mjai_abortive_draws():
    nine = {"type": "ryukyoku", "reason": "kyushukyuhai", "actor": 0, "deltas": [0, 0, 0, 0]}
    assert _draw_game(nine, {"type": "tsumo", "actor": 0, "pai": "C"}) == (
        AbortiveDraw(kind="nine_terminals", seat=0), (0, 0, 0, 0))
    # Mortal gives no reason: right after a draw it is nine terminals, by the player who drew
    bare = {"type": "ryukyoku", "deltas": [0, 0, 0, 0]}
    assert _draw_game(bare, {"type": "tsumo", "actor": 0, "pai": "C"})[0] == AbortiveDraw("nine_terminals", 0)
    three = {"type": "ryukyoku", "reason": "sanchaho", "deltas": [0, 0, 0, 0]}
    moves = [{"type": "tsumo", "actor": 0, "pai": "C"}, {"type": "dahai", "actor": 0, "pai": "2m", "tsumogiri": False}]
    assert _draw_game(three, *moves)[0] == Ron(from_seat=0, claims=(RonClaim(1), RonClaim(2), RonClaim(3)))
    for reason, kind in (("sufonrenta", "four_winds"), ("suchareach", "four_riichi"), ("sukaikan", "four_kans")):
        assert _draw_game({"type": "ryukyoku", "reason": reason}, *moves)[0] == AbortiveDraw(kind)


# ====================================================================== a hand without the data

NINE_TERMINALS = {
    "title": ["", ""], "name": ["A", "B", "C", "D"], "rule": {"disp": "般南喰赤", "aka": 1},
    "log": [[[0, 0, 0], [25000] * 4, [22], [],
             [11, 19, 21, 29, 31, 39, 41, 42, 43, 44, 45, 12, 13], [46], [],
             [14, 15, 16, 22, 23, 24, 32, 33, 34, 17, 18, 26, 27], [], [],
             [14, 15, 16, 22, 23, 24, 32, 33, 34, 17, 18, 26, 27], [], [],
             [12, 13, 25, 28, 35, 36, 37, 38, 47, 47, 47, 28, 25], [], [],
             ["九種九牌"]]],
}


def test_tenhou6_nine_terminals_hand_plays_and_writes_back():
    game = parse_tenhou6(json.dumps(NINE_TERMINALS, ensure_ascii=False), "nine.json")
    assert game.rules == "tenhou" and game.players == ("A", "B", "C", "D")
    assert game.events[-2:] == [Draw(seat=0, tile=tile_from_code(46)), AbortiveDraw("nine_terminals", 0)]
    assert game.hands[0].deltas == (0, 0, 0, 0)
    report = replay(game, strict=True)
    assert report.hands[0].kind == "abortive_draw" and report.stopped
    text = export_tenhou6(game, report)
    assert json.loads(text)["log"] == NINE_TERMINALS["log"]
    assert export_tenhou6(parse_tenhou6(text, "again.json"), report) == text
    mjai = export_mjai(game, report)
    assert json.loads(mjai.splitlines()[-2]) == {"type": "ryukyoku", "reason": "kyushukyuhai", "actor": 0,
                                                 "deltas": [0, 0, 0, 0], "scores": [25000] * 4}
    assert _hands(replay(parse_mjai(mjai, "nine.mjai"), strict=True, rules="tenhou")) == _hands(report)


def _ambiguous_pon():
    """Seat 0 discards 9p twice; seat 3's pon is of the second (seat 0 pons seat 2's 5s in between)."""
    return {"name": ["A", "B", "C", "D"], "rule": {"disp": "般南喰赤", "aka": 1}, "log": [[
        [0, 0, 0], [25000] * 4, [11], [],
        [29, 29, 35, 35, 11, 12, 13, 14, 15, 16, 17, 18, 19], [41, "35p3535"], [29, 29],
        [21, 22, 23, 24, 25, 26, 27, 28, 31, 32, 33, 34, 36], [42], [60],
        [35, 37, 38, 39, 43, 43, 44, 44, 45, 45, 46, 46, 47], [47], [35],
        [29, 29, 11, 12, 13, 14, 15, 16, 17, 18, 21, 22, 23], ["2929p29"], [11],
        []]]}


def test_tenhou6_ambiguous_call_is_resolved_by_backtracking():
    game = parse_tenhou6(json.dumps(_ambiguous_pon()), "pon.json")
    moves = [(type(e).__name__, e.seat) for e in game.events if isinstance(e, Draw | Discard | Call)]
    assert moves == [("Draw", 0), ("Discard", 0), ("Draw", 1), ("Discard", 1), ("Draw", 2), ("Discard", 2),
                     ("Call", 0), ("Discard", 0), ("Call", 3), ("Discard", 3)]
    pon = [e for e in game.events if isinstance(e, Call)][1]
    assert (pon.seat, pon.from_seat, pon.called) == (3, 0, tile_from_code(29))
    report = replay(game, strict=True)
    assert report.stopped and game.hands[0].deltas is None  # the log stops in the hand
    text = export_tenhou6(game, report)
    assert json.loads(text)["log"][0] == _ambiguous_pon()["log"][0]


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["log"][0].__setitem__(4, [10, *d["log"][0][4][1:]]),
     r"bad\.json: log\[0\]: hand of seat 0\[0\]: 10 is not a tile"),
    (lambda d: d["log"][0].__setitem__(5, ["35x3535"]), r"take 0 of seat 0: '35x3535' is not a chi, pon or open kan"),
    (lambda d: d["log"][0].__setitem__(5, ["3535p35"]), r"do not make a hand: seat 0 calls 5s from seat 1"),
    (lambda d: d["log"][0].__setitem__(6, ["r7"]), r"discard 0 of seat 0: 'r7' is not a riichi discard"),
    (lambda d: d["log"][0].__setitem__(16, ["勝ち"]), r"unknown result '勝ち'"),
    (lambda d: d["log"][0].pop(), r"a hand is a list of 17 items"),
])
def test_tenhou6_errors_name_the_hand_and_the_item(change, message):
    doc = json.loads(json.dumps(NINE_TERMINALS))
    change(doc)
    with pytest.raises(RecordError, match=message):
        parse_tenhou6(json.dumps(doc, ensure_ascii=False), "bad.json")


def test_tenhou6_document_errors():
    with pytest.raises(RecordError, match=r"bad\.json: not JSON"):
        parse_tenhou6('{"log": [', "bad.json")
    with pytest.raises(RecordError, match=r"not a tenhou\.net/6 log"):
        parse_tenhou6('{"name": []}', "bad.json")


@pytest.mark.parametrize(("rule", "rules"), [
    ({"disp": "般南喰赤", "aka": 1}, "tenhou"),
    ({"disp": "鳳南喰赤"}, "tenhou"),
    ({"disp": "特南喰", "aka51": 1}, "tenhou"),
    ({"disp": "般東喰赤", "aka": 1}, None),  # an east-only game: the preset plays a hanchan
    ({"disp": "三般南喰赤", "aka": 1}, None),
    ({"disp": "般南", "aka": 0}, None),
    ({"disp": "ema2016", "aka": 0}, "ema2016"),
    ({}, None),
])
def test_tenhou6_rules_from_the_rule_line(rule, rules):
    doc = {**NINE_TERMINALS, "rule": rule}
    assert parse_tenhou6(json.dumps(doc, ensure_ascii=False), "r.json").rules == rules


def test_tenhou6_tile_codes():
    tiles = [*(Tile.of(k) for k in range(34)), *(Tile.of(k, True) for k in (4, 13, 22))]
    codes = [tile_code(t) for t in tiles]
    assert codes[:9] == list(range(11, 20)) and codes[27:34] == list(range(41, 48)) and codes[34:] == [51, 52, 53]
    assert [tile_from_code(c) for c in codes] == tiles
    assert [tile_from_code(c) for c in (0, 10, 20, 48, 54, 60, "11", True)] == [None] * 8


def test_exports_refuse_what_the_formats_cannot_hold():
    game = parse_tenhou6(json.dumps(NINE_TERMINALS, ensure_ascii=False), "nine.json")
    unseen = replace(game, events=[replace(e, tile=None) if isinstance(e, Draw) else e for e in game.events])
    report = replay(unseen)
    with pytest.raises(RecordError, match="the draw of seat 0 was not seen"):
        export_tenhou6(unseen, report)
    # mjai writes an unseen draw as '?'
    lines = [json.loads(x) for x in export_mjai(unseen, report).splitlines()]
    assert {"type": "tsumo", "actor": 0, "pai": "?"} in lines
    ruled = replace(game, events=[*game.events[:3], DeadHand(seat=1), *game.events[3:]])
    report = replay(ruled)
    with pytest.raises(RecordError, match="mjai has no event for a referee's dead hand"):
        export_mjai(ruled, report)
    with pytest.raises(RecordError, match="no place for a referee's dead hand"):
        export_tenhou6(ruled, report)


def test_mjai_referee_end_of_game_reads_back():
    game = parse_tenhou6(json.dumps(NINE_TERMINALS, ensure_ascii=False), "nine.json")
    ended = replace(game, events=[*game.events, EndGame(reason="time")])
    report = replay(ended)
    text = export_mjai(ended, report)
    last = json.loads(text.splitlines()[-1])
    assert last == {"type": "end_game", "reason": "time", "scores": list(report.final.scores)}
    again = parse_mjai(text, "ended.mjai")
    assert again.events[-1] == EndGame(reason="time")
    assert replay(again, rules="tenhou").final.scores == report.final.scores


def test_tenhou6_keeps_house_rules_through_export_and_import():
    """Our own rules go out in rule.disp and come back as the same rule set (a preset, house rules after it)."""
    from hardware_sims.generator import generate_game

    record = generate_game(5)
    report = replay(record, rules="ema2012; kiriage=yes")
    again = parse_tenhou6(export_tenhou6(record, report), "house.json")
    assert again.rules == "ema2012; kiriage=yes"
    assert [h.deltas for h in replay(again).hands] == [h.deltas for h in report.hands]
