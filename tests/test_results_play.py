"""A game played by its hand results alone (a score sheet, a table of phones): the engine settles each entered
hand exactly as a hand seen tile by tile, refuses what cannot be, and plays every shared recorded game from its
results with every hand's deltas and the final ranking as recorded."""

import json
import subprocess
import sys

import pytest

from tablesvc.engine.engine import Engine, Rejected, apply
from tablesvc.engine.events import (
    AbortEntry,
    ChomboEntry,
    ClockStart,
    DrawEntry,
    EnteredWin,
    EventFormatError,
    GameStart,
    ScoreSheet,
    SetScores,
    TimeUp,
    WinEntry,
    from_dict,
    to_dict,
)
from tablesvc.engine.results import GameResult, HandResult
from tablesvc.engine.state import Phase
from tablesvc.replay import Mismatch, load_record, replay, replay_results
from tablesvc.tiles import parse_tile, parse_tiles
from tests.conftest import mjlog_files

FILES = mjlog_files()
NO_DATA = "../shared/data/tenhou-mjlog not found beside the checkout"


def _game(rules: str = "ema2012", **start) -> Engine:
    engine = Engine()
    engine.apply(GameStart(players=("Ann", "Bo", "Cy", "Di"), rules=rules, **start))
    engine.apply(ScoreSheet())
    return engine


def _hand(outputs) -> HandResult:
    return next(o for o in outputs if isinstance(o, HandResult))


def _counted(seat: int, han: int, fu: int | None = None, **flags) -> EnteredWin:
    return EnteredWin(seat=seat, han=han, fu=fu, **flags)


# ---------------------------------------------------------------- the shared recorded games


@pytest.mark.skipif(not FILES, reason=NO_DATA)
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_recorded_game_plays_from_its_results_alone(path):
    record = load_record(path)
    report = replay_results(record, strict=True)
    played = [h for h in record.hands if h.deltas is not None]
    assert len(report.hands) == len(played)
    assert [h.deltas for h in report.hands] == [h.deltas for h in played]
    assert report.state.by_results
    if record.final_scores is not None:
        assert report.final is not None and report.final.scores == record.final_scores
        tiles = replay(record)
        assert [(s.seat, s.place, s.result) for s in report.final.standings] == \
            [(s.seat, s.place, s.result) for s in tiles.final.standings]
    else:
        assert report.final is None


@pytest.mark.skipif(not FILES, reason=NO_DATA)
def test_a_changed_delta_is_caught_from_the_results_too(mjlog_dir):
    record = load_record(mjlog_dir / "double-ron.mjlog")
    index = next(i for i, h in enumerate(record.hands) if h.deltas is not None and h.deltas[0])
    hand = record.hands[index]
    hand.deltas = (hand.deltas[0] + 100, hand.deltas[1] - 100, hand.deltas[2], hand.deltas[3])
    with pytest.raises(Mismatch, match=rf"hand {index + 1} .*deltas .* record says"):
        replay_results(record, strict=True)


@pytest.mark.skipif(not FILES, reason=NO_DATA)
def test_cli_results_only_json_matches_the_tile_replay(mjlog_dir):
    path = mjlog_dir / "double-ron.mjlog"

    def run(*extra):
        out = subprocess.run([sys.executable, "-m", "tablesvc", "replay", str(path), "--json", "--strict", *extra],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return [json.loads(line) for line in out.stdout.splitlines()]

    tiles, results = run(), run("--results-only")
    assert [h["deltas"] for h in results[1:-1]] == [h["deltas"] for h in tiles[1:-1]]
    assert any(len(h["wins"]) == 2 for h in results[1:-1])  # the double ron, entered as one hand
    assert results[-1]["ranking"] == tiles[-1]["ranking"]


# ---------------------------------------------------------------- entries settled


def test_counted_ron_and_tsumo_pay_as_the_table_does():
    engine = _game()
    hand = _hand(engine.apply(WinEntry(wins=(_counted(1, 3, 30),), from_seat=2)))
    assert hand.deltas == (0, 3900, -3900, 0) and hand.wins[0].points == 3900
    # a dealer's 2 han 30 fu tsumo at E2-0 (seat 1 deals): 1000 all; the deal stays, one counter
    hand = _hand(engine.apply(WinEntry(wins=(_counted(1, 2, 30),))))
    assert hand.deltas == (-1000, 3000, -1000, -1000)
    assert (engine.state.round, engine.state.honba, engine.state.dealer) == (1, 1, 1)
    # a non-dealer's mangan ron with a counter and a riichi stick put down by the winner
    hand = _hand(engine.apply(WinEntry(wins=(_counted(3, 5),), from_seat=0, riichi=(3,))))
    assert hand.deltas == (-8300, 0, 0, 8300 + 1000) and hand.deposits == (3,)
    start = 30000  # ema2012's starting points
    assert engine.state.scores == [start - 1000 - 8300, start + 3900 + 3000, start - 3900 - 1000,
                                   start - 1000 - 1000 + 9300]


def test_a_shown_hand_is_scored_with_what_the_tiles_cannot_show():
    engine = _game()
    hand = parse_tiles("234m22406p345678s")
    win = EnteredWin(seat=1, hand=tuple(hand), win_tile=parse_tile("8s"), ippatsu=True)
    out = _hand(engine.apply(WinEntry(wins=(win,), riichi=(1,), dora=(parse_tile("1p"),), ura=(parse_tile("9s"),))))
    names = {name for name, _ in out.wins[0].yaku}
    assert {"Riichi", "Ippatsu", "Menzen Tsumo", "Pinfu", "Tanyao"} <= names
    assert out.wins[0].hand == tuple(sorted(hand, key=lambda t: (t.kind, t.red)))
    # 8 han: baiman, 4000/8000 from the dealer; the riichi stick back to the winner
    assert out.wins[0].han == 8 and out.deltas == (-8000, 16000 + 1000, -4000, -4000)


def test_double_ron_pays_each_winner_and_the_first_takes_the_sticks():
    engine = _game(honba=1, sticks=1)
    out = _hand(engine.apply(WinEntry(wins=(_counted(3, 2, 30), _counted(1, 1, 30)), from_seat=0, riichi=(1,))))
    # from seat 0, seat 1 is first in turn order: the two sticks and (ema2012) each winner's counter
    assert out.deltas == (-(2000 + 300) - (1000 + 300), 1300 + 2000, 0, 2300)
    assert [w.seat for w in out.wins] == [1, 3]


def test_exhaustive_draw_nagashi_abort_and_chombo():
    engine = _game()
    out = _hand(engine.apply(DrawEntry(tenpai=(False, True, False, True), riichi=(1,))))
    assert out.deltas == (-1500, 1500, -1500, 1500) and engine.state.dealer == 1 and engine.state.honba == 1
    assert engine.state.sticks == 1
    out = _hand(engine.apply(DrawEntry(tenpai=(False, False, False, False), nagashi=(2,))))
    assert out.kind == "win" and out.draw == "nagashi" and out.deltas == (-2100, -4100, 8000 + 300 + 1000, -2100)
    assert engine.state.sticks == 0 and engine.state.honba == 0 and engine.state.round == 2
    out = _hand(engine.apply(AbortEntry(kind="nine_terminals", seat=3)))
    assert out.draw == "nine_terminals" and engine.state.honba == 1 and engine.state.dealer == 2
    scores = list(engine.state.scores)
    out = _hand(engine.apply(ChomboEntry(seat=0)))
    assert out.kind == "chombo" and out.deltas == (-8000, 2000, 4000, 2000)  # seat 2 deals
    assert engine.state.scores == [s + d for s, d in zip(scores, out.deltas, strict=True)]
    assert (engine.state.round, engine.state.honba, engine.state.dealer) == (2, 1, 2)  # the hand is replayed


def test_chombo_under_ema2016_is_a_final_penalty():
    engine = _game("ema2016")
    out = _hand(engine.apply(ChomboEntry(seat=2)))
    assert out.deltas == (0, 0, 0, 0) and engine.state.penalties == [0, 0, 20000, 0]


def test_south_4_dealer_keeps_the_deal_and_the_game_ends_by_the_rules():
    engine = _game(round="S4", scores=(40000, 25000, 30000, 25000))
    outputs = engine.apply(WinEntry(wins=(_counted(3, 1, 30),), from_seat=1))  # seat 3 deals S4: renchan
    assert not any(isinstance(o, GameResult) for o in outputs) and engine.state.round == 7
    outputs = engine.apply(WinEntry(wins=(_counted(0, 1, 30),), from_seat=1))
    final = next(o for o in outputs if isinstance(o, GameResult))
    assert final.ended == "rules" and final.standings[0].seat == 0 and engine.state.phase is Phase.GAME_OVER
    assert sum(s.result for s in final.standings) == 0


def test_busting_ends_a_tenhou_game():
    engine = _game("tenhou", scores=(30000, 3000, 35000, 32000))
    outputs = engine.apply(WinEntry(wins=(_counted(0, 3, 30),), from_seat=1))
    assert engine.state.scores[1] < 0
    assert next(o for o in outputs if isinstance(o, GameResult)).ended == "rules"


def test_time_up_between_entries_counts_the_hand_being_played():
    engine = _game()
    engine.apply(ClockStart(minutes=60, deadline="2026-11-27T12:00:00Z"))
    assert engine.apply(TimeUp()) == []  # EMA: the hand in play, then one more
    assert engine.state.clock.hands_left == 2
    assert not any(isinstance(o, GameResult) for o in engine.apply(DrawEntry(tenpai=(True,) * 4)))
    final = next(o for o in engine.apply(DrawEntry(tenpai=(True,) * 4)) if isinstance(o, GameResult))
    assert final.ended == "time"


def test_time_up_before_the_first_entry_of_a_game_started_without_a_score_sheet_counts_the_hand_entered():
    """A tournament's start-round starts a phone table's game with ``start_game`` alone: a time-up before its
    first entry counts the hand then entered as the hand in play (EMA: it and one more), as a hand seen tile by
    tile would be."""
    engine = Engine()
    engine.apply(GameStart(players=("A", "B", "C", "D"), rules="ema2012"))  # no score_sheet
    engine.apply(ClockStart(minutes=60, deadline="2026-11-27T12:00:00Z"))
    engine.apply(TimeUp())
    assert engine.state.clock.hands_left == 1  # between hands, how the table plays not yet known: one more
    assert not any(isinstance(o, GameResult) for o in engine.apply(DrawEntry(tenpai=(True,) * 4)))
    assert engine.state.clock.hands_left == 1  # the hand entered was the one in play: one more still
    final = next(o for o in engine.apply(DrawEntry(tenpai=(True,) * 4)) if isinstance(o, GameResult))
    assert final.ended == "time" and len(engine.state.results) == 2


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize(("event", "message"), [
    (WinEntry(wins=(EnteredWin(seat=1, hand=tuple(parse_tiles("123m456p789s11z235m")), win_tile=parse_tile("5m")),)),
     "seat 1's win is not valid .*the hand is not complete"),
    (WinEntry(wins=(EnteredWin(seat=1, hand=tuple(parse_tiles("123m456p789s11z234m")), win_tile=parse_tile("4m")),),
              from_seat=0), "seat 1's win is not valid .*no yaku"),
    (DrawEntry(tenpai=(False, True, False, False), riichi=(0,)), "seat 0 is in riichi and must show tenpai"),
    (DrawEntry(tenpai=(False, False, False, False), riichi=(2,)), "seat 2 has 500 points, fewer than the 1000"),
    (WinEntry(wins=(_counted(1, 1, 20),), from_seat=0), "a ron is never 20 fu"),
    (WinEntry(wins=(_counted(1, 1, 25),), from_seat=0), "25 fu is seven pairs"),
    (WinEntry(wins=(_counted(1, 2, 35),), from_seat=0), "fu are 25 or a multiple of 10"),
    (WinEntry(wins=(_counted(1, 2),), from_seat=0), "2 han needs its fu"),
    (WinEntry(wins=(_counted(1, 5, pao=2),), from_seat=0), "pao is for a yakuman"),
    (WinEntry(wins=(_counted(1, 3, 30), _counted(2, 3, 30))), "a tsumo has one winner"),
    (WinEntry(wins=(_counted(1, 3, 30),), from_seat=1), "none is the one who dealt in"),
    (WinEntry(wins=(_counted(1, 3, 30, double_riichi=True),), from_seat=0), "double riichi but put no riichi stick"),
    (DrawEntry(tenpai=(True, False, False, False), nagashi=(1,)), "nagashi mangan is not played under ema2016"),
    (AbortEntry(kind="four_riichi", riichi=(0, 1)), "all four players declare riichi"),
    (AbortEntry(kind="nine_terminals", seat=1), "no abortive draws under ema2016"),
])
def test_what_cannot_be_is_refused_and_changes_nothing(event, message):
    rules = "ema2016" if "ema2016" in message else "ema2012"
    engine = _game(rules)
    engine.apply(SetScores((40000, 25000, 500, 34500)))
    before = engine.state.clone()
    with pytest.raises(Rejected, match=message):
        engine.apply(event)
    assert engine.state.scores == before.scores and engine.state.hand_number == 0 and engine.state.sticks == 0


def test_entries_only_between_hands_and_not_after_the_game():
    engine = _game()
    engine.apply(TimeUp(rule="finish_hand"))
    engine.apply(DrawEntry(tenpai=(True,) * 4))
    with pytest.raises(Rejected, match="the game is over"):
        engine.apply(DrawEntry(tenpai=(True,) * 4))
    with pytest.raises(Rejected, match="the game has not started"):
        apply(Engine().state, WinEntry(wins=(_counted(0, 1, 30),), from_seat=1))


def test_entries_travel_as_json_and_bad_ones_name_the_field():
    event = WinEntry(wins=(EnteredWin(seat=1, hand=tuple(parse_tiles("234m22406p345678s")), win_tile=parse_tile("8s"),
                                      melds=(), ippatsu=True), _counted(3, 2, 40)),
                     from_seat=0, riichi=(1,), dora=(parse_tile("1p"),))
    data = json.loads(json.dumps(to_dict(event)))
    assert from_dict(data) == event
    data["wins"][1]["fu"] = 200
    with pytest.raises(EventFormatError, match=r"win_entry.wins\[1\].fu: 200 is out of range"):
        from_dict(data)
    with pytest.raises(EventFormatError, match="unknown field"):
        from_dict({"type": "win_entry", "wins": [{"seat": 1, "points": 8000}]})
    assert from_dict({"type": "chombo_entry", "seat": 2}) == ChomboEntry(seat=2)


def test_an_entry_for_a_hand_already_entered_is_refused():
    engine = _game()
    first = WinEntry(wins=(_counted(1, 3, 30),), from_seat=2, hand_number=0)
    engine.apply(first)
    with pytest.raises(Rejected, match=r"hand 1 is already entered \(Bo ron from Cy: 3 han 30 fu\); E2-0 is being"):
        engine.apply(DrawEntry(tenpai=(True,) * 4, hand_number=0))
    with pytest.raises(Rejected, match="hand 3 is not being played: hand 2 is"):
        engine.apply(DrawEntry(tenpai=(True,) * 4, hand_number=2))
    assert _hand(engine.apply(DrawEntry(tenpai=(True,) * 4, hand_number=1))).round == 1
