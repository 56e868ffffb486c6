"""The game generator: legal, complete, reproducible games with the variety a table shows."""

import collections

import pytest

from hardware_sims.generator import GeneratorOptions, generate_game
from tablesvc.engine.events import Call, ConcealedKan, Discard, Draw, Ron, Tsumo
from tablesvc.replay import replay


@pytest.fixture(scope="module")
def games():
    return [generate_game(seed) for seed in range(4)]


def test_games_are_complete_and_replay_exactly(games):
    for game in games:
        report = replay(game, strict=True)
        assert report.final is not None, "a generated game runs to its final ranking"
        assert report.final.scores == game.final_scores
        assert sum(report.final.scores) == 4 * 30000  # ema2012: no sticks lost at the end
        assert [h.deltas for h in report.hands] == [h.deltas for h in game.hands]


def test_same_seed_same_game_other_seed_other_game():
    a, b, c = generate_game(7), generate_game(7), generate_game(8)
    assert a.events == b.events
    assert a.events != c.events


def test_games_show_what_a_table_shows(games):
    kinds = collections.Counter(type(e) for g in games for e in g.events)
    assert kinds[Draw] > 300 and kinds[Discard] > 300
    assert kinds[Ron] + kinds[Tsumo] >= 8
    assert kinds[Call] >= 1
    riichi = sum(1 for g in games for e in g.events if isinstance(e, Discard) and e.riichi)
    assert riichi >= 4
    # a concealed kan: four tiles of one kind (the four seeded games hold one; replay checks it was legal)
    kans = [e for g in games for e in g.events if isinstance(e, ConcealedKan)]
    assert kans and all(len(k.tiles) == 4 and len({t.kind for t in k.tiles}) == 1 for k in kans), kans


def test_other_presets(games):
    game = generate_game(3, GeneratorOptions(rules="tenhou"))
    report = replay(game, strict=True)
    assert report.final is not None
    assert report.final.standings[0].oka == 20000


def test_a_rule_set_without_red_fives_is_dealt_none_and_its_games_replay():
    """ema2016 plays without red fives: a game generated for it holds none (a table simulator shows what a
    table dealt with that set would), and so its journal exports as the rule set says."""
    red_seen = []
    for seed in range(3):
        game = generate_game(seed, GeneratorOptions(rules="ema2016"))
        tiles = [t for e in game.events for t in [getattr(e, "tile", None), *(getattr(e, "tiles", None) or ())]
                 if t is not None]
        assert len(tiles) > 100
        red_seen += [t for t in tiles if t.red]
        assert replay(game, strict=True).final is not None
    assert red_seen == []
    assert any(t.red for e in generate_game(0).events for t in [getattr(e, "tile", None)] if t is not None)
