"""Presets are data, documented switch by switch, and invalid ones are refused."""

import dataclasses
import re
from pathlib import Path

import pytest

from tablesvc.rules.ruleset import PRESETS, ChomboPenalty, Kazoe, Nagashi, Renhou, UnknownRuleSetError, get_ruleset

DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules.md"


def _doc_table() -> dict[str, list[str]]:
    rows = {}
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\|\s*`(\w+)`\s*\|(.*)\|\s*$", line)
        if m:
            rows[m.group(1)] = [cell.strip() for cell in m.group(2).split("|")]
    return rows


def test_docs_table_matches_every_switch_of_every_preset():
    table = _doc_table()
    header = next(line for line in DOCS.read_text().splitlines() if line.startswith("| switch |"))
    names = [c.strip() for c in header.strip("|").split("|")][1:-1]
    assert names == list(PRESETS)
    assert set(table) == set(PRESETS["ema2012"].switches())
    for switch, cells in table.items():
        for name, cell in zip(names, cells, strict=False):
            assert cell == PRESETS[name].switch_text(switch), f"docs/rules.md {switch} for {name}"


def test_ema2012_is_the_default_and_follows_rules_md():
    r = get_ruleset()
    assert r.name == "ema2012"
    assert (r.red_fives, r.open_tanyao, r.kuikae_forbidden, r.multiple_ron, r.abortive_draws, r.pao) == (
        True, False, True, True, True, True)
    assert r.two_han_minimum_honba == 5
    assert r.uma == (30000, 10000, -10000, -30000) and r.start_points == 30000 and r.oka == 0
    assert r.renhou is Renhou.YAKUMAN and r.double_yakuman == frozenset({"daisuushi"}) and not r.yakuman_stack
    assert r.kazoe is Kazoe.YAKUMAN and not r.kiriage and r.nagashi is Nagashi.WIN
    assert r.chombo is ChomboPenalty.MANGAN_PAYMENT


def test_ema2016_and_2025_differ_only_where_the_editions_do():
    a, b = get_ruleset("ema2016"), get_ruleset("ema2025")
    diff = {k for k, v in a.switches().items() if b.switches()[k] != v}
    assert diff == {"kiriage"}
    assert a.chombo is ChomboPenalty.FINAL_PENALTY and a.chombo_final_points == 20000
    assert a.uma == (15000, 5000, -5000, -15000)


def test_tenhou_preset_matches_the_recorded_games_readme():
    t = get_ruleset("TENHOU")
    assert t.start_points == 25000 and t.oka == 20000 and t.yakuman_stack and not t.double_yakuman
    assert t.triple_ron_aborts and t.nagashi is Nagashi.DRAW and t.renhou is Renhou.NONE


def test_unknown_preset_names_the_choices():
    with pytest.raises(UnknownRuleSetError, match="ema2012, ema2016, ema2025, tenhou"):
        get_ruleset("wrc")


def test_rulesets_are_frozen_and_checked():
    r = get_ruleset()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.open_tanyao = True  # type: ignore[misc]
    with pytest.raises(ValueError, match="sum to zero"):
        dataclasses.replace(r, uma=(10000, 0, 0, 0))
    house = dataclasses.replace(r, name="club", open_tanyao=True)
    assert house.open_tanyao and house.switch_text("open_tanyao") == "yes"


def test_house_rules_after_a_preset_read_back_to_the_same_rule_set():
    r = get_ruleset("EMA2016 ; uma=15000,5000,-5000,-15000; kiriage=yes; two_han_minimum_honba=never")
    assert (r.kiriage, r.uma, r.two_han_minimum_honba) == (True, (15000, 5000, -5000, -15000), None)
    assert r.renhou is get_ruleset("ema2016").renhou  # everything else is the preset's
    # the name is the text put in order: what a game journals and plays again
    assert r.name == "ema2016; kiriage=yes; two_han_minimum_honba=never; uma=15000,5000,-5000,-15000"
    assert get_ruleset(r.name) == r and get_ruleset(r.name).name == r.name
    assert "house rules: kiriage=yes" in r.title
    assert get_ruleset("ema2012; ") is get_ruleset("ema2012")


@pytest.mark.parametrize(("text", "message"), [
    ("ema2012; kiriage", "write switch=value"),
    ("ema2012; kiriage=maybe", "expected yes or no"),
    ("ema2012; open_tanyao=yes; ryanhan=yes", "unknown rule switch 'ryanhan': one of red_fives"),
    ("ema2012; renhou=big", "expected one of none, mangan, yakuman"),
    ("ema2012; uma=10000,0,0,-5000", "uma must sum to zero, not 5000"),
    ("ema2012; uma=1,2", "four whole numbers"),
    ("ema2012; double_yakuman=pinfu", "yakuman names"),
    ("ema2012; start_points=40000", "return_points below start_points"),
    ("club; kiriage=yes", "unknown rule set 'club'"),
])
def test_house_rules_that_cannot_be_played_say_why(text, message):
    with pytest.raises(UnknownRuleSetError, match=message):
        get_ruleset(text)
