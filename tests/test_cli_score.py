"""`tablesvc score`: the card, --json, --batch, and errors that say why."""

import json
import shutil
import subprocess
import sys

import pytest

from tablesvc.cli import main


def run(capsys, *argv):
    code = main(["score", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_issue_example_tsumo_card(capsys):
    code, out, _ = run(capsys, "234m22406p345678s", "--win", "8s", "--tsumo", "--riichi", "--dora", "1p",
                       "--seat", "S", "--round", "E")
    assert code == 0
    # riichi 1, tsumo 1, pinfu 1 (234m 345s 678s 234p 06p wait? no: 22p pair, 406p run; 8s ryanmen), tanyao 1,
    # dora 2 (indicator 1p -> 2p, two of them), aka 1 = 7 han: haneman 3000 base; non-dealer tsumo 6000/3000/3000
    assert "7 han 20 fu, haneman" in out
    assert "East pays 6000, West pays 3000, North pays 3000" in out
    assert "Total 12000" in out


def test_json_output_has_the_documented_fields(capsys):
    code, out, _ = run(capsys, "234m22406p345678s", "--win", "8s", "--tsumo", "--riichi", "--dora", "1p",
                       "--honba", "2", "--sticks", "1", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) >= {"han", "fu", "yaku", "limit", "points", "honba_bonus", "sticks_bonus"}
    assert (data["han"], data["fu"], data["limit"]) == (7, 20, "haneman")
    assert {y["name"]: y["han"] for y in data["yaku"]}["Dora"] == 2
    # 2 counters: 100 x 2 from each of three payers = 600; one stick = 1000
    assert data["honba_bonus"] == 600 and data["sticks_bonus"] == 1000
    assert data["points"]["payments"] == {"E": 6200, "W": 3200, "N": 3200}
    assert data["points"]["total"] == 12000 + 600 + 1000


def test_ron_names_the_discarder_when_given(capsys):
    _, out, _ = run(capsys, "123m456p789s99s", "--meld", "pon:PPP", "--win", "9s", "--json")
    data = json.loads(out)
    # open: haku 1 han; fu 20 + 4 (open honour pon) + 2 (tanki on 9s is the better reading) = 26 -> 30: 1000
    assert data["points"]["payments"] == {"discarder": 1000}
    _, out, _ = run(capsys, "123m456p789s99s", "--meld", "pon:PPP", "--win", "9s", "--from", "N", "--json")
    assert json.loads(out)["points"]["payments"] == {"N": 1000}


def test_pao_option_splits_a_ron(capsys):
    _, out, _ = run(capsys, "123m55s", "--meld", "pon:PPP", "--meld", "pon:FFF", "--meld", "pon:CCC", "--win", "5s",
                    "--from", "W", "--pao", "N", "--json")
    data = json.loads(out)
    assert data["limit"] == "yakuman"
    assert data["points"]["payments"] == {"N": 16000, "W": 16000}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["123m456p78s", "--meld", "pon:PPP", "--meld", "chi:345s", "--win", "9s", "--rules", "ema2016"],
         "not among the concealed tiles"),
        (["1235m456p789s111z22z", "--win", "2z"], "15 concealed tiles"),
        (["11111m234p567s99s", "--win", "9s"], "5 x 1 man: a set has only four"),
        (["11112m234p567s99s", "--win", "2m", "--meld", "pon:1m11"], "numbers without a suit letter"),
        (["234m456p678s22p33s", "--win", "3s", "--meld", "pon:SSS"], "meld"),
        (["123m456p789s1z2z3z4z5z", "--win", "5z"], "not complete"),
        (["234m456p678s55s", "--meld", "chi:234p", "--win", "5s"], "no yaku under ema2012"),
        (["123x", "--win", "1m"], "'x' at position 3"),
        (["234m456p789s1122z", "--win", "2z", "--riichi", "--honba", "5", "--dora", "1z", "--seat", "W"],
         "two han from yaku"),
        (["11112m"], "no winning tile"),
    ],
)
def test_invalid_hands_exit_1_with_a_reason(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 1
    assert out == ""
    assert message in err


def test_batch_scores_each_line_and_reports_bad_ones(tmp_path, capsys):
    lines = [
        {"hand": "234m22406p345678s", "win": "8s", "tsumo": True, "riichi": True, "dora": ["1p"]},
        "not json",
        {"hand": "234m456p678s55s", "win": "5s", "meld": ["chi:234p"]},
        {"hand": "234m456p678s55s", "win": "5s", "meld": ["chi:234p"], "rules": "tenhou"},
        [1, 2],
        {"hand": "234m22406p345678s", "win": "8s", "double_riichi": "yes"},
        {"hand": "234m22406p345678s", "win": "8s", "bogus": 1},
    ]
    path = tmp_path / "hands.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n\n")
    code, out, _ = run(capsys, "--batch", str(path), "--rules", "ema2012")
    assert code == 0
    results = [json.loads(line) for line in out.splitlines()]
    assert len(results) == len(lines)
    assert results[0]["han"] == 7 and results[0]["limit"] == "haneman"
    assert results[1]["line"] == 2 and results[1]["error"].startswith("not JSON")
    assert "no yaku under ema2012" in results[2]["error"]
    assert results[3]["yaku"] == [{"name": "Tanyao", "key": "tanyao", "han": 1}]  # open tanyao under tenhou
    assert "JSON object" in results[4]["error"]
    assert "flag" in results[5]["error"]
    assert "unknown key(s) 'bogus'" in results[6]["error"]


def test_batch_missing_file(capsys):
    code, _, err = run(capsys, "--batch", "/nonexistent/hands.jsonl")
    assert code == 1 and "cannot read" in err


def test_unknown_rules_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["score", "123m", "--rules", "nope"])
    assert exit_.value.code == 2


@pytest.mark.skipif(shutil.which("tablesvc") is None, reason="console script not installed")
def test_console_script_reads_batch_from_stdin():
    line = json.dumps({"hand": "19m19p19s1234567z1m", "win": "1m", "tsumo": True, "seat": "E"})
    proc = subprocess.run(["tablesvc", "score", "--batch", "-"], input=line + "\n", capture_output=True, text=True,
                          check=True)
    data = json.loads(proc.stdout)
    # dealer tsumo kokushi: 16000 from each
    assert data["limit"] == "yakuman" and data["points"]["payments"] == {"S": 16000, "W": 16000, "N": 16000}


def test_module_entry_point_prints_help():
    proc = subprocess.run([sys.executable, "-m", "tablesvc", "score", "--help"], capture_output=True, text=True,
                          check=True)
    assert "--double-riichi" in proc.stdout and "--batch" in proc.stdout


def test_four_plain_fives_under_red_five_rules_must_name_the_red_one(capsys):
    code, _, err = run(capsys, "123m456p789s11z", "--meld", "ankan:5555m", "--win", "1z", "--tsumo")
    assert code == 1 and "write it as 0m" in err
    code, _, _ = run(capsys, "123m456p789s11z", "--meld", "ankan:0555m", "--win", "1z", "--tsumo", "--riichi")
    assert code == 0
    code, _, _ = run(capsys, "123m456p789s11z", "--meld", "ankan:5555m", "--win", "1z", "--tsumo", "--riichi",
                     "--rules", "ema2016")
    assert code == 0
