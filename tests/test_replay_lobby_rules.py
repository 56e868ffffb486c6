"""Records played under other lobbies' rules: named by the replay, and replayed exactly with the switch.

Each record is made here by the engine itself, playing constructed hands under the lobby's rule, and written
out as mjai as a server of that lobby would have logged it. Replayed under the plain preset it differs (or is
refused); the replay names the one known rule that explains it, and under that rule it replays exactly.
A refused event never hides the hands played before it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tablesvc.formats.mjai import export_mjai, parse_mjai
from tablesvc.formats.record import RecordedGame
from tablesvc.replay import Mismatch, Refused, explain_by_lobby_rules, replay
from tests.scenario import Table

# 234m 567m 345p 88p 456s, won on 4s (two-sided): pinfu and tanyao; with the dora indicator 7p the 88p pair
# adds two dora: 4 han 30 fu, 7,700 for a non-dealer ron, 8,000 where it is rounded up to mangan
PINFU_TANYAO = "234m567m345p88p456s"


def _logged(tb: Table, rules: str, tmp_path: Path, name: str) -> Path:
    """The game ``tb`` played, as the lobby's server would log it (mjai), with the lobby's deltas."""
    record = RecordedGame(source=name, events=list(tb.events))
    text = export_mjai(record, replay(record, rules=rules))
    path = tmp_path / f"{name}.mjai"
    path.write_text(text, encoding="utf-8")
    return path


def _kiriage_game() -> Table:
    tb = Table("tenhou; kiriage=yes")
    tb.start_hand(dora="7p")
    tb.play("0:d9m 1:d1p 2:d4s")
    tb.ron(1, PINFU_TANYAO)
    assert tb.last_result.deltas == (0, 8000, -8000, 0)  # the lobby's value, rounded up
    return tb


def _deal_passing_game() -> Table:
    tb = Table("tenhou; dealer_keeps_deal=no")
    tb.start_hand(dora="7p")
    tb.play("0:d9m 1:d1p 2:d9p 3:d4s")
    tb.ron(0, PINFU_TANYAO)  # the dealer wins, and still the deal passes
    assert (tb.state.dealer, tb.state.honba, tb.state.round) == (1, 0, 1)
    tb.start_hand(dora="7p")
    tb.play("1:d9m 2:d1p 3:d4s")
    tb.ron(2, PINFU_TANYAO)
    return tb


def _no_all_last_stop_game() -> Table:
    tb = Table("tenhou; dealer_stops_when_top=no", round="S4", dealer=0, scores=(40000, 20000, 20000, 20000))
    tb.start_hand(dora="7p")
    tb.play("0:d9m 1:d1p 2:d9p 3:d4s")
    tb.ron(0, PINFU_TANYAO)  # the dealer wins in the last hand, first with 30,000 or more, and plays on
    assert tb.state.final is None and (tb.state.round, tb.state.honba) == (7, 1)
    tb.start_hand(dora="7p")
    tb.play("0:d9m 1:d1p 2:d4s")
    tb.ron(1, PINFU_TANYAO)
    assert tb.state.final is not None
    return tb


GAMES = {
    "kiriage": (_kiriage_game, "tenhou; kiriage=yes"),
    "deal_passes": (_deal_passing_game, "tenhou; dealer_keeps_deal=no"),
    "no_all_last_stop": (_no_all_last_stop_game, "tenhou; dealer_stops_when_top=no"),
}


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_lobby_rule_is_named_and_replays_the_record_exactly(name: str, tmp_path: Path) -> None:
    make, lobby = GAMES[name]
    path = _logged(make(), lobby, tmp_path, name)
    record = parse_mjai(path.read_text(encoding="utf-8"), str(path))
    with pytest.raises(Mismatch):
        replay(record, strict=True, rules="tenhou")  # the plain preset does not play it so
    found = explain_by_lobby_rules(record, "tenhou")
    assert found is not None
    assert found[0] == lobby
    report = replay(record, strict=True, rules=lobby)
    assert report.mismatches == []


@pytest.mark.parametrize("name", sorted(GAMES))
def test_the_replay_command_names_the_rule_and_plays_it(name: str, tmp_path: Path) -> None:
    make, lobby = GAMES[name]
    path = _logged(make(), lobby, tmp_path, name)
    plain = _run("replay", str(path), "--rules", "tenhou")
    assert f'--rules "{lobby}"' in plain.stderr
    exact = _run("replay", str(path), "--rules", lobby, "--strict")
    assert exact.returncode == 0, exact.stderr
    assert "differs" not in exact.stderr and "refused" not in exact.stderr


def test_a_record_that_differs_in_no_known_way_names_no_rule(tmp_path: Path) -> None:
    tb = _kiriage_game()
    path = _logged(tb, "tenhou; kiriage=yes", tmp_path, "kiriage")
    lines = path.read_text(encoding="utf-8").splitlines()
    # a server that paid the win 100 points more than any rule would
    hora = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "hora")
    event = json.loads(lines[hora])
    event["deltas"] = [0, 8100, -8100, 0]
    lines[hora] = json.dumps(event)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    record = parse_mjai(path.read_text(encoding="utf-8"), str(path))
    assert explain_by_lobby_rules(record, "tenhou") is None
    result = _run("replay", str(path), "--rules", "tenhou")
    assert "differs from the record" in result.stderr
    assert "replays exactly with" not in result.stderr


def test_a_refused_event_prints_every_hand_before_it_and_exits_1(tmp_path: Path) -> None:
    # under plain tenhou the dealer keeps the deal after the first hand, so the second hand's first discard
    # (seat 1's) is out of turn: refused, after the first hand was played and matched
    path = _logged(_deal_passing_game(), "tenhou; dealer_keeps_deal=no", tmp_path, "refused")
    record = parse_mjai(path.read_text(encoding="utf-8"), str(path))
    with pytest.raises(Refused) as caught:
        replay(record, rules="tenhou")
    assert caught.value.report is not None and len(caught.value.report.hands) == 1
    for extra in ((), ("--json",)):
        result = _run("replay", str(path), "--rules", "tenhou", *extra)
        assert result.returncode == 1, (extra, result.stderr)
        assert "refused" in result.stderr
        lines = result.stdout.splitlines()
        if "--json" in extra:
            hands = [json.loads(line) for line in lines[1:]]
            assert [(h["round"], h["honba"], h["deltas"]) for h in hands] == [("E1", 0, [11600, 0, 0, -11600])]
        else:
            assert any(line.startswith("E1-0") for line in lines)
            assert "final ranking" not in result.stdout
    # --strict stops at the first difference (the second hand's dealer), exit 3, the first hand printed
    result = _run("replay", str(path), "--rules", "tenhou", "--strict")
    assert result.returncode == 3, result.stderr
    assert "hand E2-0" in result.stderr and "dealer seat" in result.stderr
    assert any(line.startswith("E1-0") for line in result.stdout.splitlines())


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tablesvc", *args], capture_output=True, text=True, timeout=120,
                          check=False)
